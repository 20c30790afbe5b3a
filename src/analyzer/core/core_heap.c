/*
 * core_heap.c - glibc malloc's heap in a core: every chunk, allocated or
 * free (docs/core.md has the layouts and the heuristics).
 *
 * The model, glibc 2.26 and later on x86-64 (checked against 2.36's
 * debug information; the offsets below are those of struct malloc_state,
 * heap_info and tcache_perthread_struct):
 *
 * - main_arena (libc's .data) holds the top chunk of the brk heap, the
 *   fastbins and the bins, and links the other arenas through ->next;
 *   it is found by its symbol (libc's own table, else libc6-dbg's debug
 *   file by build-id), else by its signature: the empty bins of a
 *   malloc_state point to themselves, which nothing else in libc's data
 *   does 64 times over.
 * - The brk heap runs from mp_.sbrk_base (else the start of the segment
 *   holding the top chunk) to the top chunk; each chunk's size gives the
 *   next, and the next's PREV_INUSE bit says whether it is in use.
 * - Another arena lives in a heap of its own: heap_info (48 bytes since
 *   2.35, 32 before), the malloc_state, then chunks; its further heaps,
 *   64 MiB-aligned, chain through heap_info.prev and end in fenceposts.
 * - Chunks in tcache and fastbins look in use (their PREV_INUSE stays
 *   set): their lists say they are free. A list's next pointers are
 *   mangled since 2.32 ((address of the pointer >> 12) ^ next), which is
 *   undone, or taken as it is for an older glibc.
 * - The first chunk of each arena's first heap is the tcache of the first
 *   thread that used it: malloc's own, not the program's.
 * - mmapped chunks (large blocks) are in no list: they are found in the
 *   other writable segments by their header (prev_size 0, IS_MMAPPED, a
 *   size in whole pages that fits), page by page.
 *
 * - Damage (an overrun, a write after free, a double free) is reported in
 *   c->damage and walked past: a chunk whose size breaks glibc's
 *   invariants is followed by a scan for the next plausible chunk
 *   (resync), the bytes between taken as one damaged chunk; a free-list
 *   link that is not a chunk, or leads to one met before, ends its list.
 *
 * Invariants: c->blocks is sorted by address and chunks do not overlap;
 * every walk is bounded by the core's bytes (a chunk is at least 16 bytes
 * of the core), every list by the number of chunks (a cycle ends it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "../../common/sort.h"
#include "../../common/text.h"

/* struct malloc_state (glibc 2.27 and later, x86-64) */
#define MS_FASTBINS 16
#define MS_NFASTBINS 10
#define MS_TOP 96
#define MS_BINS 112
#define MS_NBINS 127 /* bin 1..127, two words each */
#define MS_NEXT 2160
#define MS_SIZE 2200
/* struct malloc_par: sbrk_base, 2.35 and later (80 before) */
#define MP_SBRK_BASE 96
#define MP_SBRK_BASE_OLD 80
#define MP_SIZE 136
#define HEAP_MAX_BYTES (64ULL << 20) /* 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#define HI_PREV 8
#define HI_SIZE 16
#define MINSIZE 32
#define TCACHE_CHUNK 0x290 /* 64 uint16 counts + 64 entries + header */
#define TCACHE_BINS 64
#define PAGE 4096ULL

#define PREV_INUSE 1ULL
#define IS_MMAPPED 2ULL
#define NON_MAIN_ARENA 4ULL

struct walk {
	struct hp_core *c;
	size_t cap;
	int nomem;
	size_t damage_cap;   /* c->damage's room */
	size_t damage_noted; /* damage lines noted (the first DAMAGE_NOTES) */
};

/* Damage lines on stderr: the first ones, then one line pointing to
 * --damage (a heap of random bytes would give one per 16 bytes). */
#define DAMAGE_NOTES 16

static uint64_t word(const struct hp_core *c, uint64_t addr, int *ok)
{
	return hp_core_word(c, addr, ok);
}

static struct hp_core_block *add_block(struct walk *w)
{
	struct hp_core *c = w->c;

	if (c->nblocks == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct hp_core_block *b;
		/* A chunk takes at least 16 bytes of the core. */
		if (cap > c->map_bytes / 16 + 1024)
			cap = c->map_bytes / 16 + 1024;
		if (c->nblocks >= cap)
			return NULL;
		b = realloc(c->blocks, cap * sizeof *b);
		if (!b) {
			w->nomem = 1;
			return NULL;
		}
		c->blocks = b;
		w->cap = cap;
	}
	memset(&c->blocks[c->nblocks], 0, sizeof *c->blocks);
	c->blocks[c->nblocks].type = UINT32_MAX;
	return &c->blocks[c->nblocks++];
}

static void add_internal(struct hp_core *c, uint64_t lo, uint64_t hi)
{
	struct hp_core_range *r = realloc(c->internal, (c->ninternal + 1) * sizeof *r);

	if (!r)
		return;
	c->internal = r;
	r[c->ninternal].lo = lo;
	r[c->ninternal++].hi = hi;
}

/* Adds a damage entry (core.h); a full table (a small multiple of the
 * chunks) or no memory drops it, and the note says the rest. */
static struct hp_core_damage *add_damage(struct walk *w, const char *what, uint64_t addr,
					 uint64_t value, uint64_t chunk, int arena)
{
	struct hp_core *c = w->c;
	struct hp_core_damage *d;

	if (c->ndamage >= c->map_bytes / 16 + 64)
		return NULL;
	if (c->ndamage == w->damage_cap) {
		size_t cap = w->damage_cap ? w->damage_cap * 2 : 16;
		d = realloc(c->damage, cap * sizeof *d);
		if (!d) {
			w->nomem = 1;
			return NULL;
		}
		c->damage = d;
		w->damage_cap = cap;
	}
	d = &c->damage[c->ndamage++];
	memset(d, 0, sizeof *d);
	d->what = what;
	d->addr = addr;
	d->value = value;
	d->chunk = chunk;
	d->arena = arena;
	return d;
}

/* Notes a line about damage, the first DAMAGE_NOTES of them. */
__attribute__((format(printf, 2, 3))) static void damage_note(struct walk *w, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (w->damage_noted++ >= DAMAGE_NOTES) {
		if (w->damage_noted == DAMAGE_NOTES + 1)
			hp_core_note(w->c, "%s: more damage in the heap: `heapprof core %s --damage` "
				     "lists all of it", w->c->path, w->c->path);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	hp_core_note(w->c, "%s", buf);
}

/* Whether size word sw can head a chunk at p of a heap ending at end, by
 * glibc's invariants: at least MINSIZE, a multiple of 16, within the
 * heap, not IS_MMAPPED (a heap's chunk never is), NON_MAIN_ARENA set
 * exactly in another arena's heap (strict: the flags also; the main walk
 * leaves NON_MAIN_ARENA unchecked, as glibc's free does not look at it). */
static int plausible(uint64_t sw, uint64_t p, uint64_t end, int arena, int strict)
{
	uint64_t sz = sw & ~7ULL;

	if (sz < MINSIZE || (sz & 15) || sz > end - p || (sw & IS_MMAPPED))
		return 0;
	return !strict || !!(sw & NON_MAIN_ARENA) == (arena != 0);
}

/* The next plausible chunk after the damaged one at p: the first
 * 16-aligned q > p that is top, or whose size is plausible and whose next
 * chunks (three, or up to top, a fencepost or the end) are too, each
 * prev_size agreeing where PREV_INUSE is clear. Returns end when none
 * (or when the bytes are not in the core). Reads at most 4 words per
 * 16 bytes of [p, end). */
static uint64_t resync(struct hp_core *c, uint64_t p, uint64_t end, uint64_t top, int arena)
{
	int ok;

	for (uint64_t q = p + 16; q < end; q += 16) {
		uint64_t r = q, sw;
		int good = 1;
		if (q == top)
			return q;
		sw = word(c, q + 8, &ok);
		if (!ok)
			return end;
		if (!plausible(sw, q, end, arena, 1))
			continue;
		for (int k = 0; k < 3 && good; k++) {
			uint64_t sz = word(c, r + 8, &ok) & ~7ULL, n = r + sz, nsw;
			if (n == top || n == end)
				break;
			nsw = word(c, n + 8, &ok);
			if (!ok || (!top && (nsw & ~7ULL) == 16))
				break; /* the core's end, or a fencepost */
			if (!plausible(nsw, n, end, arena, 1) ||
			    (!(nsw & PREV_INUSE) && word(c, n, &ok) != sz))
				good = 0;
			r = n;
		}
		if (good)
			return q;
	}
	return end;
}

/* Walks the chunks from first up to top (when top is in [first, end)) or
 * to end or a fencepost. A chunk whose size is not plausible is damage:
 * it is reported (c->damage, a note), the walk resumes at the next
 * plausible chunk (resync) and the bytes between are taken as one chunk
 * (damaged) when a chunk follows, else left unwalked. A free chunk's
 * size that its next chunk's prev_size does not repeat is reported too.
 * Returns the index of the first chunk walked, or -1 when none. */
static long walk_chunks(struct walk *w, uint64_t first, uint64_t end, uint64_t top, int arena)
{
	struct hp_core *c = w->c;
	long first_index = -1;
	uint64_t p = first, before = 0;
	/* chunks before top end at top at the latest */
	uint64_t lim = top >= first && top < end ? top : end;
	int ok;
	while (p < end) {
		uint64_t sz_word, sz, next_word;
		struct hp_core_block *b;

		sz_word = word(c, p + 8, &ok);
		if (!ok) {
			hp_core_note(c, "heap of arena %d: the chunk at 0x%llx is not in the core: "
				     "the walk stops there", arena, (unsigned long long)p);
			return first_index;
		}
		sz = sz_word & ~7ULL;
		if (p == top) {
			if (!(b = add_block(w)))
				return first_index;
			b->addr = p + 16;
			b->size = sz >= 16 ? sz - 16 : 0;
			b->state = HP_CORE_TOP;
			b->arena = (uint8_t)(arena > 255 ? 255 : arena);
			return first_index;
		}
		if (sz == 16 && !top)
			return first_index; /* a fencepost: the end of a heap that is not the last */
		if (!plausible(sz_word, p, lim, arena, 0)) {
			uint64_t q = p < lim ? resync(c, p, lim, top, arena) : end, nw;
			struct hp_core_damage *d = add_damage(w, "bad chunk size", p + 8, sz_word, p,
							      arena);
			if (d) {
				d->before = before;
				d->skip_lo = p;
				d->skip_hi = q;
			}
			c->unwalked_bytes += q - p;
			if (q >= lim && q != top) {
				damage_note(w, "heap of arena %d: bad chunk size 0x%llx at 0x%llx "
					    "(damaged heap, or another malloc): no plausible chunk "
					    "after it: %llu bytes not walked", arena,
					    (unsigned long long)sz_word, (unsigned long long)p,
					    (unsigned long long)(q - p));
				return first_index;
			}
			damage_note(w, "heap of arena %d: bad chunk size 0x%llx at 0x%llx (damaged "
				    "heap): %llu bytes not walked, taken as one damaged chunk; the "
				    "walk resumes at 0x%llx", arena, (unsigned long long)sz_word,
				    (unsigned long long)p, (unsigned long long)(q - p),
				    (unsigned long long)q);
			nw = word(c, q + 8, &ok);
			if (!(b = add_block(w)))
				return first_index;
			if (first_index < 0)
				first_index = (long)(c->nblocks - 1);
			b->addr = p + 16;
			b->size = q - p - 8;
			b->state = (!ok || (nw & PREV_INUSE)) ? HP_CORE_ALLOCATED : HP_CORE_FREE_BIN;
			b->arena = (uint8_t)(arena > 255 ? 255 : arena);
			b->damaged = 1;
			if (d)
				d->block = b->addr;
			before = b->addr;
			p = q;
			continue;
		}
		next_word = word(c, p + sz + 8, &ok);
		if (ok && !(next_word & PREV_INUSE) && p + sz != top) {
			int pok;
			uint64_t ps = word(c, p + sz, &pok);
			if (pok && ps != sz) {
				struct hp_core_damage *d = add_damage(
					w, "prev_size disagrees with the free chunk before it", p + sz,
					ps, p + sz, arena);
				if (d) {
					d->before = p + 16;
					d->block = p + sz + 16;
				}
				damage_note(w, "heap of arena %d: the chunk at 0x%llx has prev_size "
					    "0x%llx, its free neighbour before it is 0x%llx bytes "
					    "(damaged heap)", arena, (unsigned long long)(p + sz),
					    (unsigned long long)ps, (unsigned long long)sz);
			}
		}
		if (!(b = add_block(w)))
			return first_index;
		if (first_index < 0)
			first_index = (long)(c->nblocks - 1);
		b->addr = p + 16;
		b->size = sz - 8;
		b->state = (!ok || (next_word & PREV_INUSE)) ? HP_CORE_ALLOCATED : HP_CORE_FREE_BIN;
		b->arena = (uint8_t)(arena > 255 ? 255 : arena);
		before = b->addr;
		p += sz;
	}
	return first_index;
}

long hp_core_damage_at(const struct hp_core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->ndamage; i++) {
		const struct hp_core_damage *d = &c->damage[i];
		if ((addr >= d->addr && addr - d->addr < 8) ||
		    (addr >= d->chunk && addr - d->chunk < 16))
			return (long)i;
	}
	return -1;
}

static int block_cmp(const void *a, const void *b)
{
	const struct hp_core_block *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

long hp_core_block_at(const struct hp_core *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct hp_core_block *b = &c->blocks[mid];
		if (addr < b->addr)
			hi = mid;
		else if (addr - b->addr >= b->size)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

/* The block whose user address is exactly mem, or NULL. */
static struct hp_core_block *block_exact(struct hp_core *c, uint64_t mem)
{
	long i = hp_core_block_at(c, mem);
	return i >= 0 && c->blocks[i].addr == mem ? &c->blocks[i] : NULL;
}

/* The next element of a tcache or fastbin list whose link lives at pos:
 * safe-linking undone, or the raw pointer for a glibc before 2.32.
 * want_mem: the elements are user addresses (tcache), else chunks. */
static uint64_t list_next(struct hp_core *c, uint64_t pos, int want_mem, int *ok)
{
	uint64_t v = word(c, pos, ok), demangled;

	if (!*ok || !v)
		return 0;
	demangled = (pos >> 12) ^ v;
	if (!demangled)
		return 0;
	if (block_exact(c, want_mem ? demangled : demangled + 16))
		return demangled;
	if (block_exact(c, want_mem ? v : v + 16))
		return v;
	*ok = 0;
	return 0;
}

/* The block before block b's chunk (the likely overrunner of its
 * header), as a user address, or 0. */
static uint64_t block_before(const struct hp_core *c, const struct hp_core_block *b)
{
	size_t i = (size_t)(b - c->blocks);
	return i > 0 && c->blocks[i - 1].addr + c->blocks[i - 1].size + 8 == b->addr
		       ? c->blocks[i - 1].addr : 0;
}

/* Marks the chunks of a tcache (the elements are user addresses) or
 * fastbin list (chunks) from head, whose own link is at slot (in the
 * tcache or the arena), each of chunk size csize (the bin's): an element
 * that is not a chunk of the heap, a chunk of another size, a link that
 * does not demangle to one, or an element met twice (a loop, or a double
 * free) is damage, and the list is not followed further. Each tcache
 * element's key word (glibc 2.29 and later: the same for every element of
 * a process) is kept in *key, or ~0 once two differ. Returns the list's
 * length, or -1 when damage ended it. */
static long mark_list(struct walk *w, uint64_t head, uint64_t slot, int tcache, uint64_t csize,
		      uint64_t *key, const char *what)
{
	struct hp_core *c = w->c;
	uint64_t e = head, pos = slot, raw = head;
	int ok = 1;
	uint8_t mark = tcache ? HP_CORE_FREE_TCACHE : HP_CORE_FREE_FASTBIN;
	long n = 0;

	for (size_t steps = 0; e && steps <= c->nblocks; steps++) {
		struct hp_core_block *b = block_exact(c, tcache ? e : e + 16);
		struct hp_core_damage *d;
		int wrong = b && b->state == HP_CORE_ALLOCATED && b->size + 8 != csize;
		if (!b || b->state == mark || b->state != HP_CORE_ALLOCATED || wrong) {
			long h = hp_core_block_at(c, pos);
			d = add_damage(w, !b ? (tcache ? "a tcache link that is not a chunk"
						     : "a fastbin link that is not a chunk")
					     : b->state == mark ? "a chunk listed twice (a double "
								  "free, or a loop)"
					     : wrong ? "a free list's chunk of another size than its bin's"
						     : "a free list's chunk that is not in use",
				       pos, raw, h >= 0 ? c->blocks[h].addr - 16 : pos, 0);
			if (d && h >= 0 && pos != slot) {
				d->block = c->blocks[h].addr;
				d->before = block_before(c, &c->blocks[h]);
			}
			if (d && b)
				d->target = b->addr;
			if (wrong)
				damage_note(w, "%s: 0x%llx (at 0x%llx) is a chunk of %llu bytes in "
					    "the list of %llu-byte chunks: the list is not followed "
					    "further", what, (unsigned long long)e,
					    (unsigned long long)pos, (unsigned long long)(b->size + 8),
					    (unsigned long long)csize);
			else
				damage_note(w, "%s: 0x%llx (at 0x%llx) is %s: the list is not "
					    "followed further", what, (unsigned long long)e,
					    (unsigned long long)pos,
					    !b ? "not a chunk of the heap"
					    : b->state == mark ? "met twice (a double free, or a loop)"
							       : "not a chunk in use");
			return -1;
		}
		b->state = mark;
		n++;
		if (tcache && key) {
			int kok = 1;
			uint64_t k = word(c, e + 8, &kok);
			if (!kok || (*key && *key != k))
				*key = ~0ULL;
			else
				*key = k;
		}
		pos = tcache ? e : e + 16;
		raw = word(c, pos, &ok);
		e = list_next(c, pos, tcache, &ok);
		if (!ok) {
			d = add_damage(w, tcache ? "a damaged tcache link" : "a damaged fastbin link",
				       pos, raw, b->addr - 16, 0);
			if (d) {
				d->block = b->addr;
				d->before = block_before(c, b);
			}
			damage_note(w, "%s: a damaged link 0x%llx at 0x%llx (in the free chunk "
				    "0x%llx): the list is not followed further", what,
				    (unsigned long long)raw, (unsigned long long)pos,
				    (unsigned long long)b->addr);
			return -1;
		}
	}
	return e ? -1 : n;
}

static void mark_tcache(struct walk *w, long first)
{
	struct hp_core *c = w->c;
	struct hp_core_block *b;
	const unsigned char *t;

	if (first < 0)
		return;
	b = &c->blocks[first];
	if (b->size != TCACHE_CHUNK - 8 || b->state != HP_CORE_ALLOCATED)
		return;
	b->state = HP_CORE_INTERNAL;
	t = hp_core_mem(c, b->addr, TCACHE_CHUNK - 16);
	if (!t)
		return;
	uint64_t key = 0, tc = b->addr;
	long len[TCACHE_BINS];
	uint16_t count[TCACHE_BINS];
	for (int i = 0; i < TCACHE_BINS; i++) {
		uint64_t e;
		memcpy(&e, t + 2 * TCACHE_BINS + 8 * i, 8);
		memcpy(&count[i], t + 2 * i, 2);
		len[i] = e ? mark_list(w, e, tc + 2 * TCACHE_BINS + 8 * (uint64_t)i, 1,
				       MINSIZE + 16 * (uint64_t)i, &key, "tcache")
			   : 0;
	}
	/* A bin holds as many chunks as its count says (glibc keeps both in
	 * step). A list that ends early lost its rest to a write over a link
	 * (a write after free of zeros): the rest still carry the key every
	 * element of the process carries, and are free, not in use. */
	for (int i = 0; i < TCACHE_BINS; i++) {
		uint64_t csize = MINSIZE + 16 * (uint64_t)i;
		long found = 0, missing;
		if (len[i] < 0 || len[i] == count[i])
			continue;
		if (len[i] < count[i] && key && key != ~0ULL) {
			missing = count[i] - len[i];
			for (size_t k = 0; k < c->nblocks && found < missing; k++) {
				struct hp_core_block *o = &c->blocks[k];
				int kok = 1;
				if (o->state != HP_CORE_ALLOCATED || o->size + 8 != csize ||
				    word(c, o->addr + 8, &kok) != key || !kok)
					continue;
				o->state = HP_CORE_FREE_TCACHE;
				found++;
			}
		}
		struct hp_core_damage *d = add_damage(w, "a tcache bin whose count is not its "
						      "list's length", tc + 2 * (uint64_t)i,
						      count[i], tc - 16, 0);
		if (d)
			d->block = tc;
		if (found)
			damage_note(w, "tcache: the bin of %llu-byte chunks counts %u but its list "
				    "holds %ld (a link written over?): %ld more found free by the "
				    "tcache key 0x%llx", (unsigned long long)csize, count[i],
				    len[i], found, (unsigned long long)key);
		else
			damage_note(w, "tcache: the bin of %llu-byte chunks counts %u but its list "
				    "holds %ld (a link written over?)", (unsigned long long)csize,
				    count[i], len[i]);
	}
}

/* Under heapprof (c->rec.found), the live register knows each block's
 * requested size: a recorded block whose chunk the walk found smaller
 * than that (its size field overwritten with a plausible one) is damage,
 * and so is one the walk found no chunk for, inside bytes it could not
 * walk. Blocks the walk did not reach otherwise (not in the core, an
 * mmapped chunk's page not dumped) are left to the recorder's listing. */
static void check_recorded(struct walk *w)
{
	struct hp_core *c = w->c;
	size_t rest[64], nrest = 0;

	if (!c->rec.found)
		return;
	for (size_t k = 0; k < c->ndamage && nrest < 64; k++)
		if (!c->damage[k].block && c->damage[k].skip_hi > c->damage[k].skip_lo)
			rest[nrest++] = k;
	for (size_t i = 0; i < c->rec.nblocks; i++) {
		const struct hp_core_rec_block *r = &c->rec.blocks[i];
		struct hp_core_block *b = block_exact(c, r->addr);
		struct hp_core_damage *d;
		int ok;
		if (b && !b->damaged && !b->mmapped && b->size < r->size) {
			uint64_t sw = word(c, r->addr - 8, &ok);
			d = add_damage(w, "a chunk smaller than the block the recorder holds there",
				       r->addr - 8, sw, r->addr - 16, b->arena);
			if (d) {
				d->block = b->addr;
				d->before = block_before(c, b);
			}
			damage_note(w, "the chunk of recorded block 0x%llx (%llu bytes) is %llu bytes "
				    "(damaged heap)", (unsigned long long)r->addr,
				    (unsigned long long)r->size, (unsigned long long)b->size);
		} else if (!b) {
			/* the heaps' tails not walked: at most one entry per heap */
			for (size_t k = 0; k < nrest; k++) {
				struct hp_core_damage *e = &c->damage[rest[k]];
				if (r->addr > e->skip_lo && r->addr < e->skip_hi) {
					damage_note(w, "recorded block 0x%llx (%llu bytes) lies in "
						    "bytes not walked (0x%llx-0x%llx)",
						    (unsigned long long)r->addr,
						    (unsigned long long)r->size,
						    (unsigned long long)e->skip_lo,
						    (unsigned long long)e->skip_hi);
					break;
				}
			}
		}
	}
}

/* Whether the arenas' ->next list from a comes back to a. */
static int arena_ring(const struct hp_core *c, uint64_t a)
{
	int ok = 1;
	uint64_t ar = word(c, a + MS_NEXT, &ok);

	for (int i = 0; ok && i < 256; i++) {
		if (ar == a)
			return 1;
		ar = word(c, ar + MS_NEXT, &ok);
	}
	return 0;
}

/* The main_arena by its signature, in libc's writable ranges: the most
 * empty bins pointing to themselves (a malloc_state shifted by 16 bytes
 * matches too, one bin fewer), a top chunk outside libc, and a ring of
 * arenas through ->next that comes back to it. */
static uint64_t arena_by_signature(const struct hp_core *c, const struct hp_core_module *libc)
{
	uint64_t best = 0;
	int best_empty = 0;

	for (int r = 0; r < libc->nrw; r++) {
		for (uint64_t a = libc->rw_lo[r] & ~7ULL; a + MS_SIZE <= libc->rw_hi[r]; a += 8) {
			const unsigned char *p = hp_core_mem(c, a, MS_SIZE);
			int empty = 0;
			uint64_t v;
			if (!p)
				continue;
			/* the largest bin is nearly always empty: a cheap first test */
			memcpy(&v, p + MS_BINS + 16 * (MS_NBINS - 1), 8);
			if (v != a + MS_TOP + 16 * (MS_NBINS - 1))
				continue;
			for (int i = 0; i < MS_NBINS; i++) {
				uint64_t fd, bk, self = a + MS_TOP + 16 * (uint64_t)i;
				memcpy(&fd, p + MS_BINS + 16 * i, 8);
				memcpy(&bk, p + MS_BINS + 16 * i + 8, 8);
				empty += fd == self && bk == self;
			}
			memcpy(&v, p + MS_TOP, 8);
			if (empty < 64 || empty <= best_empty || !hp_core_mem(c, v, 16) ||
			    (v >= libc->lo && v < libc->hi) || hp_core_module_at(c, v) == libc ||
			    !arena_ring(c, a))
				continue;
			best = a;
			best_empty = empty;
		}
	}
	return best;
}

static int is_libc(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-2.", 7) == 0;
}

static int in_ranges(const struct hp_core_range *r, size_t n, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < n; i++)
		if (lo < r[i].hi && hi > r[i].lo)
			return 1;
	return 0;
}

/* mmapped chunks: in writable segments outside the arenas' heaps, the
 * modules and the stacks, page by page. */
static void find_mmapped(struct walk *w, const struct hp_core_range *heaps, size_t nheaps)
{
	struct hp_core *c = w->c;

	for (size_t s = 0; s < c->nsegs; s++) {
		const struct hp_core_seg *seg = &c->segs[s];
		uint64_t end = seg->vaddr + seg->memsz;
		int stack = 0;
		if (!(seg->flags & 2) || in_ranges(heaps, nheaps, seg->vaddr, end))
			continue;
		if (hp_core_module_at(c, seg->vaddr))
			continue;
		for (size_t t = 0; t < c->nthreads; t++) {
			uint64_t sp = c->threads[t].regs[HP_CORE_REG_RSP];
			stack |= sp >= seg->vaddr && sp < end;
		}
		if (stack)
			continue;
		/* Only the pages dumped can hold a header: the walk ends with
		 * them, whatever the segment's size says. */
		for (uint64_t p = seg->vaddr; p + PAGE <= end && p - seg->vaddr < seg->present;) {
			const uint64_t *h = hp_core_mem(c, p, 16);
			uint64_t sz;
			struct hp_core_block *b;
			if (!h || h[0] != 0 || (h[1] & 7) != IS_MMAPPED) {
				p += PAGE;
				continue;
			}
			sz = h[1] & ~7ULL;
			if (sz < PAGE || sz % PAGE || sz > end - p) {
				p += PAGE;
				continue;
			}
			if (!(b = add_block(w)))
				return;
			b->addr = p + 16;
			b->size = sz - 16;
			b->state = HP_CORE_ALLOCATED;
			b->mmapped = 1;
			c->nmmapped++;
			p += sz;
		}
	}
}

int hp_core_heap(struct hp_core *c, const char *debug_dir)
{
	struct walk w = {.c = c};
	const struct hp_core_module *libc = NULL, *holder = NULL;
	struct hp_core_range heaps[1024];
	size_t nheaps = 0;
	uint64_t a, top, start;
	long first;
	int ok;

	for (size_t i = 0; i < c->nmods && !libc; i++)
		if (is_libc(c->mods[i].path))
			libc = &c->mods[i];
	/* A static program carries malloc in itself: main_arena in its symbols. */
	holder = libc;
	if (!getenv("HEAPPROF_CORE_HEURISTIC")) {
		for (size_t i = 0; i < c->nmods && !c->main_arena; i++) {
			if (libc && &c->mods[i] != libc)
				continue;
			if ((c->main_arena = hp_core_symbol_addr(c, &c->mods[i], "main_arena",
								 debug_dir)))
				holder = &c->mods[i];
		}
	}
	if (!c->main_arena && libc) {
		c->main_arena = arena_by_signature(c, libc);
		c->arena_by_heuristic = c->main_arena != 0;
	}
	if (!c->main_arena) {
		hp_core_note(c, "%s: %s: the heap is not walked", c->path,
			     libc ? "glibc's main_arena was not found (no symbol, no signature)"
				  : "no glibc in the core (a static program without symbols, or "
				    "another C library)");
		return 0;
	}
	if (holder && !getenv("HEAPPROF_CORE_HEURISTIC"))
		c->mp = hp_core_symbol_addr(c, holder, "mp_", debug_dir);
	a = c->main_arena;
	add_internal(c, a, a + MS_SIZE);
	if (c->mp)
		add_internal(c, c->mp, c->mp + MP_SIZE);

	/* The main arena's brk heap. */
	top = word(c, a + MS_TOP, &ok);
	if (!ok) {
		hp_core_note(c, "%s: main_arena (0x%llx) is not in the core: the heap is not "
			     "walked", c->path, (unsigned long long)a);
		return 0;
	}
	const struct hp_core_seg *seg = hp_core_seg_at(c, top);
	if (!seg) {
		hp_core_note(c, "%s: main_arena's top chunk (0x%llx) is not in the core: the heap "
			     "is not walked", c->path, (unsigned long long)top);
		return 0;
	}
	start = seg->vaddr;
	if (c->mp) {
		uint64_t sb = word(c, c->mp + MP_SBRK_BASE, &ok);
		if (!(ok && sb >= seg->vaddr && sb <= top))
			sb = word(c, c->mp + MP_SBRK_BASE_OLD, &ok);
		if (ok && sb >= seg->vaddr && sb <= top)
			start = sb;
	}
	start = (start + 15) & ~15ULL;
	c->narenas = 1;
	c->nheaps = 1;
	first = walk_chunks(&w, start, seg->vaddr + seg->memsz, top, 0);
	heaps[nheaps].lo = start;
	heaps[nheaps++].hi = seg->vaddr + seg->memsz;
	uint64_t tcache_first[256]; /* the first chunk of each arena's first heap */
	size_t ntcache = 0;
	if (first >= 0)
		tcache_first[ntcache++] = c->blocks[first].addr;

	/* The other arenas. */
	uint64_t arenas[256];
	size_t narenas = 0;
	uint64_t hinfo = 48;
	for (uint64_t ar = word(c, a + MS_NEXT, &ok); ok && ar && ar != a && narenas < 255;
	     ar = word(c, ar + MS_NEXT, &ok)) {
		uint64_t h, atop = word(c, ar + MS_TOP, &ok);
		int arena = (int)narenas + 1;
		int steps = 0;
		arenas[narenas++] = ar;
		c->narenas++;
		if (!ok)
			break;
		for (h = atop & ~(HEAP_MAX_BYTES - 1); h && steps < 4096; steps++) {
			uint64_t hsize = word(c, h + HI_SIZE, &ok), firstc;
			uint64_t prev = word(c, h + HI_PREV, &ok);
			if (!ok || word(c, h, &ok) != ar || hsize > HEAP_MAX_BYTES) {
				hp_core_note(c, "arena %d: the heap at 0x%llx is not readable or not "
					     "its own: not walked", arena, (unsigned long long)h);
				break;
			}
			if (ar == h + 32 || ar == h + 48) {
				hinfo = ar - h;
				firstc = ar + MS_SIZE;
				if ((firstc + 16) & 15)
					firstc += 16 - ((firstc + 16) & 15);
			} else {
				firstc = h + hinfo;
			}
			add_internal(c, h, firstc);
			heaps[nheaps].lo = h;
			heaps[nheaps++].hi = h + hsize;
			c->nheaps++;
			first = walk_chunks(&w, firstc, h + hsize,
					    atop >= h && atop < h + hsize ? atop : 0, arena);
			if (firstc != h + hinfo && ntcache < 256 && first >= 0)
				tcache_first[ntcache++] = c->blocks[first].addr;
			h = prev;
			if (nheaps == 1024)
				break;
		}
	}

	find_mmapped(&w, heaps, nheaps);
	if (w.nomem)
		return -ENOMEM;
	hp_sort(c->blocks, c->nblocks, sizeof *c->blocks, block_cmp);

	for (size_t i = 0; i < ntcache; i++)
		mark_tcache(&w, hp_core_block_at(c, tcache_first[i]));
	for (size_t i = 0; i <= narenas; i++) {
		uint64_t ar = i ? arenas[i - 1] : a;
		for (int f = 0; f < MS_NFASTBINS; f++) {
			uint64_t head = word(c, ar + MS_FASTBINS + 8 * (uint64_t)f, &ok);
			if (ok && head)
				mark_list(&w, head, ar + MS_FASTBINS + 8 * (uint64_t)f, 0,
					  MINSIZE + 16 * (uint64_t)f, NULL, "fastbin");
		}
	}
	check_recorded(&w);
	if (w.nomem)
		return -ENOMEM;
	c->heap_ok = 1;
	return 0;
}
