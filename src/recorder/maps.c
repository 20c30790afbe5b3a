/*
 * maps.c - the regions of the address space that hold the heap (see
 * maps.h).
 *
 * Model. /proc/self/maps lists the kernel's mappings (VMAs), which are not
 * glibc's: the kernel merges adjacent anonymous mappings of the same
 * protection, so two mmap'd chunks, or a chunk and the heap of an arena,
 * may read as one line. Each anonymous read-write mapping is therefore
 * cut into the parts glibc made of it, from glibc's own headers:
 *
 *   - an arena's heap starts at a multiple of HEAP_MAX_BYTES (64 MiB) with
 *     a heap_info {ar_ptr, prev, size, mprotect_size, ...}: its
 *     read-write part is [start, start + mprotect_size), the rest of the
 *     64 MiB is reserved (PROT_NONE, another line);
 *   - an mmap'd chunk starts at its mapping's start with {prev_size 0,
 *     size | IS_MMAPPED}, size a multiple of the page: [start, start +
 *     size); the next chunk of a merged run starts where it ends.
 *
 * What is neither is "other", listed only when a live block lies in it.
 * A header is read only from a page that is resident (mincore): a page
 * glibc wrote its header in always is, and reading an untouched page
 * would map the zero page into the program. Reads go through
 * process_vm_readv (hp_os_read_self), which fails instead of faulting on
 * memory unmapped by a racing thread.
 *
 * The table of parts and their names live in memory mapped here, kept
 * from one call to the next, written only under the writer's lock.
 */
#include "maps.h"

#include <errno.h>
#include <string.h>

#include "../format/format.h"
#include "../format/records.h"
#include "os.h"

/* glibc's HEAP_MAX_SIZE on 64-bit: 2 * DEFAULT_MMAP_THRESHOLD_MAX. */
#define HEAP_MAX_BYTES ((uint64_t)(8u << 20) * sizeof(long))
#define IS_MMAPPED 2u
#define SIZE_BITS 7u
/* A mapping larger than this (a sanitizer's shadow, a runtime's
 * reservation) is not probed every 64 MiB for heaps: a run of merged
 * heaps that large would be 16,384 of them. */
#define PROBE_MAX_BYTES (1ull << 40)
#define TABLE_INITIAL_BYTES (128u << 10) /* ~3,000 mappings */
#define NAMES_INITIAL_BYTES (64u << 10)

struct part {
	uint64_t lo, hi;
	uint32_t kind, perms;        /* HP_MAP_*, HP_MAP_PERM_* */
	uint32_t name_off, name_len; /* into names */
	uint32_t marked, pad;        /* a live block lies in it */
};

/* Guarded by the writer's lock (the only caller). */
static struct hp_buf table, names;
static char scratch[4096]; /* the lines of /proc/self/maps being read */

/* Grows a buffer with mmap, as the writer's do (writer.c). */
static int grow_mapped(struct hp_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : (need > 1u << 16 ? need : 1u << 16);
	uint8_t *p;

	while (cap < need)
		cap *= 2;
	p = hp_os_map(cap);
	if (!p)
		return -ENOMEM;
	if (b->len)
		memcpy(p, b->data, b->len);
	hp_os_unmap(b->data, b->cap);
	b->data = p;
	b->cap = cap;
	return 0;
}

static int resident(uint64_t addr)
{
	return hp_os_resident_bytes((uintptr_t)addr, (uintptr_t)addr + 1) != 0;
}

/* Whether an arena's heap starts at pos, in a mapping that ends at hi;
 * *end: the end of its read-write part. */
static int arena_at(uint64_t pos, uint64_t hi, uint64_t *end)
{
	uint64_t h[4], page = hp_os_page_size(), ar, prev, size, mprot;

	if (pos % HEAP_MAX_BYTES || !resident(pos) || hp_os_read_self(h, (void *)pos, sizeof h))
		return 0;
	ar = h[0], prev = h[1], size = h[2], mprot = h[3];
	if (!size || size % page || mprot % page || size > mprot || mprot > HEAP_MAX_BYTES ||
	    size > hi - pos)
		return 0;
	/* The arena's malloc_state follows the first heap's heap_info (32
	 * or 48 bytes by glibc's version); a later heap points back to the
	 * first's. */
	if (!prev ? ar < pos + 32 || ar > pos + 64
		  : prev % HEAP_MAX_BYTES || ar % HEAP_MAX_BYTES < 32 || ar % HEAP_MAX_BYTES > 64)
		return 0;
	*end = mprot < hi - pos ? pos + mprot : hi;
	return 1;
}

/* Whether an mmap'd chunk starts at pos (a page), before hi; *end: its
 * end. */
static int chunk_at(uint64_t pos, uint64_t hi, uint64_t *end)
{
	uint64_t h[2], page = hp_os_page_size(), size;

	if (!resident(pos) || hp_os_read_self(h, (void *)pos, sizeof h))
		return 0;
	size = h[1] & ~(uint64_t)SIZE_BITS;
	if (h[0] || (h[1] & SIZE_BITS) != IS_MMAPPED || !size || size % page || size > hi - pos)
		return 0;
	*end = pos + size;
	return 1;
}

static void add(uint64_t lo, uint64_t hi, uint32_t kind, const struct hp_os_mapping *e)
{
	struct part *p = (struct part *)hp_buf_reserve(&table, sizeof *p);

	if (!p)
		return; /* table.err is set */
	*p = (struct part){lo, hi, kind, e->perms, (uint32_t)names.len, 0, 0, 0};
	if (e->path_len && e->path_len < UINT32_MAX && names.len < UINT32_MAX - e->path_len) {
		hp_buf_put_bytes(&names, e->path, e->path_len);
		if (!names.err)
			p->name_len = (uint32_t)e->path_len;
	}
	table.len += sizeof *p;
}

/* An anonymous read-write mapping, cut into arenas' heaps, mmap'd chunks
 * and the rest (see the model above). A chunk can start only where the
 * mapping starts or another part ends; a heap at any multiple of 64 MiB. */
static void split(const struct hp_os_mapping *e)
{
	uint64_t pos = e->lo, run = e->lo, end = 0;
	int boundary = 1;

	while (pos < e->hi) {
		uint32_t kind = 0;
		if (arena_at(pos, e->hi, &end))
			kind = HP_MAP_ARENA;
		else if (boundary && chunk_at(pos, e->hi, &end))
			kind = HP_MAP_CHUNK;
		if (kind) {
			if (run < pos)
				add(run, pos, HP_MAP_OTHER, e);
			add(pos, end, kind, e);
			pos = run = end;
			boundary = 1;
			continue;
		}
		boundary = 0;
		end = (pos / HEAP_MAX_BYTES + 1) * HEAP_MAX_BYTES;
		pos = end < e->hi && end > pos && e->hi - e->lo <= PROBE_MAX_BYTES ? end : e->hi;
	}
	if (run < e->hi)
		add(run, e->hi, HP_MAP_OTHER, e);
}

static int on_mapping(const struct hp_os_mapping *e, void *arg)
{
	(void)arg;
	if (e->hi <= e->lo)
		return 0;
	if (e->path_len == 6 && memcmp(e->path, "[heap]", 6) == 0)
		add(e->lo, e->hi, HP_MAP_BRK, e);
	else if (!e->path_len &&
		 (e->perms & (HP_OS_MAP_READ | HP_OS_MAP_WRITE | HP_OS_MAP_SHARED)) ==
			 (HP_OS_MAP_READ | HP_OS_MAP_WRITE))
		split(e);
	else
		add(e->lo, e->hi, HP_MAP_OTHER, e);
	return 0;
}

/* The part holding addr, or NULL: a binary search of the table, which is
 * in address order (as /proc/self/maps is). */
static struct part *part_of(uint64_t addr)
{
	struct part *p = (struct part *)table.data;
	size_t lo = 0, hi = table.len / sizeof *p;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < p[mid].lo)
			hi = mid;
		else if (addr >= p[mid].hi)
			lo = mid + 1;
		else
			return &p[mid];
	}
	return NULL;
}

static int listed(const struct part *p)
{
	return p->kind != HP_MAP_OTHER || p->marked;
}

/* Guarded by the writer's lock: the result of the last hp_maps_read. */
static int read_err = -ENOENT;

int hp_maps_read(void)
{
	int err;

	table.grow = names.grow = grow_mapped;
	if (!table.cap)
		grow_mapped(&table, TABLE_INITIAL_BYTES);
	if (!names.cap)
		grow_mapped(&names, NAMES_INITIAL_BYTES);
	table.len = names.len = 0;
	table.err = names.err = 0;
	err = hp_os_maps_each(scratch, sizeof scratch, on_mapping, NULL);
	read_err = err < 0 ? err : table.err;
	return read_err;
}

void hp_maps_mark(uint64_t address)
{
	struct part *in = read_err ? NULL : part_of(address);

	if (in)
		in->marked = 1;
}

int hp_maps_encode(struct hp_buf *out, uint64_t seq)
{
	struct part *p = (struct part *)table.data;
	size_t n = table.len / sizeof *p, count = 0;

	if (read_err)
		return read_err;
	for (size_t i = 0; i < n; i++)
		count += listed(&p[i]);
	hp_rec_hists_put(out, &(struct hp_rec_hists){.seq = seq, .count = count});
	for (size_t i = 0; i < n; i++) {
		uint64_t rss;
		if (!listed(&p[i]))
			continue;
		rss = hp_os_resident_bytes((uintptr_t)p[i].lo, (uintptr_t)p[i].hi);
		if (rss > p[i].hi - p[i].lo)
			rss = p[i].hi - p[i].lo;
		hp_rec_map_put(out, &(struct hp_rec_map){
					    .start = p[i].lo,
					    .size = p[i].hi - p[i].lo,
					    .kind = p[i].kind,
					    .perms = p[i].perms,
					    .rss_bytes = rss,
					    .name = {p[i].name_len ? (const char *)names.data +
									     p[i].name_off
								   : "",
						     p[i].name_len},
				    });
	}
	return out->err;
}

uint64_t hp_maps_bytes(void)
{
	return table.cap + names.cap;
}
