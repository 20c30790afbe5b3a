/*
 * capture.c - loading a capture file (see capture.h).
 *
 * Memory: every allocation made for the content is charged first against
 * cap->mem_limit_bytes (HP_CAP_MEM_FACTOR x the file's size +
 * HP_CAP_MEM_BASE_BYTES), counted as glibc's chunk, never its request: a
 * hostile record of a million tiny items is refused before it is
 * allocated. Charges are never given back, so mem_bytes is at least the
 * peak of what the reader held.
 */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/sort.h"
#include "../common/table.h"
#include "../common/vec.h"
#include "records.h"
#include "events.h"
#include "../common/infile.h"

static void note_damage(struct hp_capture *cap, const char *fmt, ...)
{
	va_list ap;
	char buf[320];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (cap->ndamage < HP_CAP_MAX_DAMAGE)
		cap->damage[cap->ndamage] = strdup(buf);
	cap->ndamage++;
}

/* What malloc(n) costs: glibc's chunk, at least 32 bytes, 16-aligned with
 * an 8-byte header. Charged rather than n, so that a million 1-byte
 * strings cost what they really take. */
static size_t heap_bytes(size_t n)
{
	return n < 24 ? 32 : (n + 8 + 15) & ~(size_t)15;
}

/* Counts bytes against the capture's memory bound (capture.h). Returns 0,
 * or -E2BIG when they would go past it: nothing is allocated then, and the
 * record being read is refused as damage. */
static int charge(struct hp_capture *cap, size_t bytes)
{
	if (bytes > cap->mem_limit_bytes - cap->mem_bytes) {
		cap->mem_refused = 1;
		return -E2BIG;
	}
	cap->mem_bytes += bytes;
	return 0;
}

/* A copy of a str field as a string, or NULL (over the bound, or out of
 * memory: either way the record is not read). */
static char *copy_str(struct hp_capture *cap, struct hp_rec_str str)
{
	char *s = charge(cap, heap_bytes(str.len + 1)) ? NULL : malloc(str.len + 1);

	if (!s)
		return NULL;
	memcpy(s, str.p, str.len);
	s[str.len] = '\0';
	return s;
}

/* The next str field, copied; NULL with c->err set when it cannot be. */
static char *cursor_str(struct hp_capture *cap, struct hp_cursor *c)
{
	struct hp_rec_str str;
	char *s = hp_rec_str_get(c, &str) ? NULL : copy_str(cap, str);

	if (!s)
		c->err = 1;
	return s;
}

/* Grows an array to hold at least n elements of elem bytes, charging
 * charged bytes an element, the new room zeroed when zero; returns 0,
 * -E2BIG (over the memory bound) or -ENOMEM. */
static int grow_charged(struct hp_capture *cap, void **arr, size_t *alloc, size_t n, size_t elem,
			size_t charged, int zero)
{
	size_t c = *alloc ? *alloc : 16;
	void *p;

	if (n <= *alloc)
		return 0;
	while (c < n)
		c *= 2;
	if (c > SIZE_MAX / elem || charge(cap, (c - *alloc) * charged))
		return -E2BIG;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	if (zero)
		memset((char *)p + *alloc * elem, 0, (c - *alloc) * elem);
	*arr = p;
	*alloc = c;
	return 0;
}

/* grow_charged, the new room zeroed. */
static int reserve_charged(struct hp_capture *cap, void **arr, size_t *alloc, size_t n,
			   size_t elem, size_t charged)
{
	return grow_charged(cap, arr, alloc, n, elem, charged, 1);
}

/* Grows an array to hold at least n elements; returns 0, -E2BIG (over the
 * memory bound) or -ENOMEM. */
static int reserve(struct hp_capture *cap, void **arr, size_t *alloc, size_t n, size_t elem)
{
	return reserve_charged(cap, arr, alloc, n, elem, elem);
}

/* reserve for an array whose elements are each set before they are read:
 * the same charges, the room not zeroed (its pages stay untouched). */
static int reserve_lazy(struct hp_capture *cap, void **arr, size_t *alloc, size_t n, size_t elem)
{
	return grow_charged(cap, arr, alloc, n, elem, elem, 0);
}

/* Gives back the room of an array grown by reserve past its n elements
 * (nothing when n is 0, or when realloc fails: the array stays as it is). */
static void shrink(void **arr, size_t *alloc, size_t n, size_t elem)
{
	void *p;

	if (!n || n >= *alloc)
		return;
	p = realloc(*arr, n * elem);
	if (p) {
		*arr = p;
		*alloc = n;
	}
}

/* What reserve charges to grow an array counted by *alloc to n elements,
 * charged and counted without the array (a part the load does not keep).
 * Returns 0 or -E2BIG. */
static int charge_reserve(struct hp_capture *cap, size_t *alloc, size_t n, size_t elem)
{
	size_t c = *alloc ? *alloc : 16;

	if (n <= *alloc)
		return 0;
	while (c < n)
		c *= 2;
	if (c > SIZE_MAX / elem || charge(cap, (c - *alloc) * elem))
		return -E2BIG;
	*alloc = c;
	return 0;
}

static void free_meta(struct hp_cap_image *img)
{
	free(img->program);
	for (size_t i = 0; img->argv && i < img->argc; i++)
		free(img->argv[i]);
	free(img->argv);
	free(img->recorder_version);
	img->program = img->recorder_version = NULL;
	img->argv = NULL;
	img->argc = 0;
}

static int parse_meta(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	struct hp_rec_meta m;
	struct hp_rec_meta_options o;
	uint64_t argc;

	free_meta(img); /* only when a damaged META was half read */
	if (hp_rec_meta_get(c, &m) || hp_rec_count_get(c, 1, &argc))
		goto bad;
	{
		const struct hp_rec_meta *from = &m;
		struct hp_cap_image *to = img;
		HP_REC_META_PROCESS(HP_REC_ASSIGN)
	}
	img->program = copy_str(cap, m.program);
	img->argc = argc;
	if (!img->program || charge(cap, heap_bytes((img->argc + 1) * sizeof *img->argv)))
		goto bad;
	img->argv = calloc(img->argc + 1, sizeof *img->argv);
	if (!img->argv)
		return -ENOMEM;
	for (size_t i = 0; i < img->argc && !c->err; i++)
		img->argv[i] = cursor_str(cap, c);
	if (c->err || hp_rec_meta_options_get(c, &o))
		goto bad;
	img->recorder_version = copy_str(cap, o.recorder_version);
	if (!img->recorder_version)
		goto bad;
	{
		const struct hp_rec_meta_options *from = &o;
		struct hp_cap_image *to = img;
		HP_REC_META_OPTIONS(HP_REC_ASSIGN)
	}
	img->has_meta = 1;
	return 0;
bad: /* nothing half read is kept: program, argv and version all or none */
	free_meta(img);
	return -EINVAL;
}

static int parse_modules(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	uint64_t n;

	hp_rec_count_get(c, HP_REC_MODULE_EVENT_MIN_BYTES, &n);
	for (uint64_t i = 0; i < n && !c->err; i++) {
		struct hp_rec_module_event ev;
		struct hp_cap_module *m = NULL;

		if (hp_rec_module_event_get(c, &ev))
			break;
		if (ev.kind == HP_MOD_UNLOAD) {
			for (size_t k = img->nmodules; k-- > 0;) {
				if (img->modules[k].id == ev.module_id && !img->modules[k].unloaded) {
					img->modules[k].unloaded = 1;
					img->modules[k].unload_ns = ev.time_ns;
					break;
				}
			}
			continue;
		}
		int err = reserve(cap, (void **)&img->modules, &img->alloc_modules, img->nmodules + 1,
				  sizeof *m);
		if (err)
			return err;
		m = &img->modules[img->nmodules++];
		m->id = (uint32_t)ev.module_id;
		m->load_ns = ev.time_ns;
		m->path = copy_str(cap, ev.path);
		if (!m->path)
			c->err = 1;
		m->build_id_len = ev.build_id.len < sizeof m->build_id ? ev.build_id.len
								      : sizeof m->build_id;
		memcpy(m->build_id, ev.build_id.p, m->build_id_len);
		m->bias = ev.bias;
		for (uint64_t s = 0; s < ev.segment_count && !c->err; s++) {
			struct hp_rec_segment seg;
			if (!hp_rec_segment_get(c, &seg) && m->nseg < HP_CAP_MAX_SEGMENTS)
				m->seg[m->nseg++] = seg;
		}
		if (c->err) { /* drop the half-read module */
			free(m->path);
			memset(m, 0, sizeof *m);
			img->nmodules--;
		}
	}
	return c->err ? -EINVAL : 0;
}

/* The stacks' frames as address indexes (HP_CAP_LOAD_INTERN), cut from
 * blocks of ARENA_BLOCK indexes (a million stacks: no malloc and no
 * header each); end[b] is the first stack id after block b's. */
struct hp_cap_arena {
	uint32_t **blocks;
	size_t *end;
	size_t n, alloc, released; /* blocks[released .. n) are held */
	size_t dropped; /* bytes of the stack table given back (hp_capture_release_stacks) */
	uintptr_t page; /* the page size, asked there once (not a call a stack); 0 before */
	uint32_t *next;            /* the last block's room */
	size_t left;
};

#define ARENA_BLOCK (256u << 10) /* indexes: 1 MiB */

/* The loader's index of an image's addresses (HP_CAP_LOAD_INTERN): the
 * addresses met last by a hash of the address (RECENT of them: a million
 * stacks are made of far fewer addresses), before the map of them all;
 * and a stack's frames as read. Freed once the file is read. */
#define RECENT 4096u
struct hp_cap_intern {
	struct hp_u64map ids; /* address -> index in addrs */
	size_t alloc_addrs;
	uint64_t *frames;
	size_t alloc_frames;
	struct {
		uint64_t addr;
		uint32_t idx; /* + 1; 0: none */
	} recent[RECENT];
};

static void free_arena(struct hp_cap_image *img)
{
	struct hp_cap_arena *a = img->lean.arena;

	if (!a)
		return;
	for (size_t b = a->released; b < a->n; b++)
		free(a->blocks[b]);
	free(a->blocks);
	free(a->end);
	free(a);
	img->lean.arena = NULL;
}

static void free_intern(struct hp_cap_image *img)
{
	if (!img->lean.intern)
		return;
	hp_u64map_free(&img->lean.intern->ids);
	free(img->lean.intern->frames);
	free(img->lean.intern);
	img->lean.intern = NULL;
}

/* Room for the n indexes of stack id, in the image's blocks; NULL when out
 * of memory. */
static uint32_t *arena_slice(struct hp_cap_image *img, size_t n, size_t id)
{
	struct hp_cap_arena *a = img->lean.arena;
	uint32_t *s;

	if (!a && !(a = img->lean.arena = calloc(1, sizeof *a)))
		return NULL;
	if (n > a->left) {
		size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		size_t was = a->alloc;
		uint32_t *b;
		if (hp_vec_grow(&a->blocks, &a->alloc, a->n + 1))
			return NULL;
		if (a->alloc != was) { /* end[] grows with blocks[] */
			size_t *e = realloc(a->end, a->alloc * sizeof *e);
			if (!e)
				return NULL;
			a->end = e;
		}
		if (!(b = malloc(size * sizeof *b)))
			return NULL;
		a->blocks[a->n++] = b;
		a->next = b;
		a->left = size;
	}
	s = a->next;
	a->next += n;
	a->left -= n;
	a->end[a->n - 1] = id + 1;
	return s;
}

/* The index in img->lean.addrs of addr, added when new. Returns 0 or -ENOMEM. */
static int intern_addr(struct hp_cap_image *img, uint64_t addr, uint32_t *out)
{
	struct hp_cap_intern *in = img->lean.intern;
	size_t h = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 52); /* RECENT */

	if (in->recent[h].idx && in->recent[h].addr == addr) {
		*out = in->recent[h].idx - 1;
		return 0;
	}
	if (!hp_u64map_get(&in->ids, addr, out)) {
		if (img->lean.naddrs >= UINT32_MAX - 1 ||
		    hp_vec_grow(&img->lean.addrs, &in->alloc_addrs, img->lean.naddrs + 1) ||
		    hp_u64map_put(&in->ids, addr, (uint32_t)img->lean.naddrs))
			return -ENOMEM;
		*out = (uint32_t)img->lean.naddrs;
		img->lean.addrs[img->lean.naddrs++] = addr;
	}
	in->recent[h].addr = addr;
	in->recent[h].idx = *out + 1;
	return 0;
}

/* Stack s's depth frames, read from c: into a malloc of its own, or
 * (HP_CAP_LOAD_INTERN) as indexes into the image's addresses, interned
 * once the stack is read whole. The memory charged is the same either
 * way: a malloc of 8 bytes a frame (the interned lists take 4, and the
 * index of distinct addresses comes on top, uncharged: the address, 8
 * bytes, in an array grown by doubling, and a hash map's slots, about 70
 * bytes an address in all, each at least a byte of the file). Returns 0,
 * -EINVAL (cut short: s left empty), -E2BIG or -ENOMEM. */
static int read_frames(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c,
		       struct hp_cap_stack *s, uint64_t depth, size_t id)
{
	uint64_t *frames;

	if (charge(cap, heap_bytes(depth * sizeof *s->frames)))
		return -E2BIG;
	if (!(cap->load_flags & HP_CAP_LOAD_INTERN)) {
		s->frames = malloc(depth * sizeof *s->frames);
		if (!s->frames)
			return -ENOMEM;
		s->depth = (uint32_t)depth;
		if (hp_rec_stack_frames_get(c, s->frames, depth)) { /* cut short: empty */
			free(s->frames);
			s->frames = NULL;
			s->depth = 0;
			return -EINVAL;
		}
		return 0;
	}
	if (!img->lean.intern && !(img->lean.intern = calloc(1, sizeof *img->lean.intern)))
		return -ENOMEM;
	if (hp_vec_grow(&img->lean.intern->frames, &img->lean.intern->alloc_frames, depth))
		return -ENOMEM;
	frames = img->lean.intern->frames;
	if (hp_rec_stack_frames_get(c, frames, depth))
		return -EINVAL; /* cut short: its id kept, empty */
	s->addr_index = arena_slice(img, depth, id);
	if (!s->addr_index)
		return -ENOMEM;
	for (uint64_t k = 0; k < depth; k++)
		if (intern_addr(img, frames[k], &s->addr_index[k]))
			return -ENOMEM;
	s->depth = (uint32_t)depth;
	return 0;
}

/* The image's stack table grown to hold ids below n: charged as reserve
 * charges an array of 16-byte stacks grown by doubling (the table's size
 * without addr_index: the bound refuses what it refused then), allocated
 * as large, and set to zero only up to n (the room past it is never read:
 * its pages are not touched). Returns 0, -E2BIG or -ENOMEM. */
static int reserve_stacks(struct hp_capture *cap, struct hp_cap_image *img, size_t n)
{
	const size_t charged = sizeof *img->stacks - sizeof img->stacks->addr_index;
	size_t c = img->alloc_stacks ? img->alloc_stacks : 16;
	size_t was = img->nstacks;
	struct hp_cap_stack *p;

	if (n > img->alloc_stacks) {
		while (c < n)
			c *= 2;
		if (c > SIZE_MAX / sizeof *p || charge(cap, (c - img->alloc_stacks) * charged))
			return -E2BIG;
		p = realloc(img->stacks, c * sizeof *p);
		if (!p)
			return -ENOMEM;
		img->stacks = p;
		img->alloc_stacks = c;
	}
	if (n > was)
		memset(img->stacks + was, 0, (n - was) * sizeof *img->stacks);
	return 0;
}

static int parse_stacks(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	struct hp_rec_stacks h;
	uint64_t first, n;
	int err;

	if (hp_rec_stacks_get(c, &h))
		return -EINVAL;
	first = h.first_id;
	n = h.count;
	/* Stacks come in order, once each. A gap is a STACKS record lost to
	 * damage: its ids stay as empty stacks (depth 0), so that later records
	 * and the snapshots that use them still load. */
	if (first < (img->nstacks ? img->nstacks : 1) || first > UINT32_MAX - n)
		return -EINVAL;
	/* A lost record cannot have held more stacks than the file has room
	 * for (two bytes each, however well compressed, is generous): a bigger
	 * gap is a corrupt id, which must not make us allocate gigabytes. */
	if (first - (img->nstacks ? img->nstacks : 1) > 64 * (uint64_t)cap->file_bytes + (1u << 16))
		return -EINVAL;
	err = reserve_stacks(cap, img, first + n);
	if (err)
		return err;
	if (img->nstacks < first)
		img->nstacks = first;
	for (uint64_t i = 0; i < n; i++) {
		struct hp_cap_stack *s = &img->stacks[first + i];
		uint64_t depth;
		if (hp_rec_stack_depth_get(c, &depth))
			return -EINVAL;
		err = read_frames(cap, img, c, s, depth, first + i);
		if (err != -E2BIG)
			img->nstacks = first + i + 1; /* counted now: freed with the capture */
		if (err)
			return err;
	}
	return 0;
}

static int parse_snapshot(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	struct hp_cap_snapshot s = {0};
	struct hp_rec_snapshot head;
	struct hp_rec_snapshot_tail tail;
	uint64_t kinds, nbuckets;
	int err;

	hp_rec_snapshot_get(c, &head);
	{
		const struct hp_rec_snapshot *from = &head;
		struct hp_cap_snapshot *to = &s;
		HP_REC_SNAPSHOT(HP_REC_ASSIGN)
	}
	hp_rec_count_get(c, HP_REC_LOST_MIN_BYTES, &kinds);
	for (uint64_t i = 0; i < kinds && !c->err; i++) {
		struct hp_rec_lost l;
		if (!hp_rec_lost_get(c, &l) && l.reason < HP_LOST_KINDS) {
			s.lost_count[l.reason] += l.count;
			s.lost_bytes[l.reason] += l.bytes;
		}
	}
	hp_rec_count_get(c, HP_REC_BUCKET_MIN_BYTES, &nbuckets);
	if (c->err)
		return -EINVAL;
	s.nbuckets = (size_t)nbuckets;
	if (charge(cap, heap_bytes((s.nbuckets ? s.nbuckets : 1) * sizeof *s.buckets)))
		return -E2BIG;
	if (cap->load_flags & HP_CAP_LOAD_BUCKETS_ENCODED) {
		/* Each read and checked, then the bytes kept. */
		const uint8_t *from = c->p;
		struct hp_rec_bucket b;
		for (size_t i = 0; i < s.nbuckets && !c->err; i++) {
			hp_rec_bucket_get(c, &b);
			if (b.stack_id >= img->nstacks && b.stack_id != 0)
				c->err = 1; /* a stack not defined (yet) */
		}
		if (!c->err) {
			s.buckets_enc_len = (size_t)(c->p - from);
			if (!(s.buckets_enc = malloc(s.buckets_enc_len ? s.buckets_enc_len : 1)))
				return -ENOMEM;
			memcpy(s.buckets_enc, from, s.buckets_enc_len);
		}
	} else {
		s.buckets = calloc(s.nbuckets ? s.nbuckets : 1, sizeof *s.buckets);
		if (!s.buckets)
			return -ENOMEM;
		for (size_t i = 0; i < s.nbuckets && !c->err; i++) {
			hp_rec_bucket_get(c, &s.buckets[i]);
			if (s.buckets[i].stack_id >= img->nstacks && s.buckets[i].stack_id != 0)
				c->err = 1; /* a stack not defined (yet) */
		}
	}
	hp_rec_snapshot_tail_get(c, &tail);
	s.recorder_bytes = tail.recorder_bytes;
	if (!c->err && c->p < c->end) { /* minor 3: the custom heaps' peaks */
		uint64_t nheaps;
		hp_rec_count_get(c, HP_REC_HEAP_PEAK_MIN_BYTES, &nheaps);
		if (!c->err && nheaps) {
			if (charge(cap, heap_bytes(nheaps * sizeof *s.heaps))) {
				free(s.buckets);
				free(s.buckets_enc);
				return -E2BIG;
			}
			s.heaps = calloc(nheaps, sizeof *s.heaps);
			if (!s.heaps) {
				free(s.buckets);
				free(s.buckets_enc);
				return -ENOMEM;
			}
			for (uint64_t i = 0; i < nheaps && !c->err; i++)
				if (!hp_rec_heap_peak_get(c, &s.heaps[s.nheaps]))
					s.nheaps++;
		}
	}
	err = c->err ? -EINVAL
		     : reserve(cap, (void **)&img->snapshots, &img->alloc_snapshots,
			       img->nsnapshots + 1, sizeof s);
	if (err) {
		free(s.buckets);
		free(s.buckets_enc);
		free(s.heaps);
		return err;
	}
	img->snapshots[img->nsnapshots++] = s;
	return 0;
}

static int parse_timeseries(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	uint64_t n, t = 0; /* each record's first time is absolute: a lost record shifts nothing */
	int err = hp_rec_count_get(c, HP_REC_SAMPLE_MIN_BYTES, &n);

	if (!err)
		err = reserve(cap, (void **)&img->samples, &img->alloc_samples, img->nsamples + n,
			      sizeof *img->samples);
	if (err)
		return err;
	for (uint64_t i = 0; i < n && !c->err; i++) {
		if (!hp_rec_sample_get(c, &img->samples[img->nsamples], &t))
			img->nsamples++;
	}
	return c->err ? -EINVAL : 0;
}

/* The key of a timeline bucket: its first entry's in the file. */
struct tl_key {
	uint64_t size;
	uint32_t stack_id, type_tag, origin_tag;
	int tagged;
};

/* An image's timeline buckets met so far, while the file is read: each
 * bucket id and the key of its first entry (hp_cap_tick); freed once the
 * file is read. The ids are numbered from 1 by the recorder: they index
 * an array (dense), and only those far past the keys' count (a hostile
 * file's) go to a hash map. Charged against the memory bound as a hash
 * index of every id would be (charged: its size, no slot), more than the
 * array and the map hold. */
struct hp_cap_tl_keys {
	uint32_t *dense; /* bucket id -> index in keys + 1 (0: none), ids below ndense */
	size_t ndense;
	struct hp_u64map far; /* the other ids -> index in keys */
	struct hp_hindex charged;
	struct tl_key *keys;
	size_t n, alloc;
};

/* What the loader charges for a struct hp_cap_tl_keys: the hash map's,
 * the keys' array and its counts (the bound is the same as when the ids
 * were all in a hash map). */
#define TL_KEYS_CHARGED (sizeof(struct hp_u64map) + sizeof(struct tl_key *) + 2 * sizeof(size_t))

static void free_tl_keys(struct hp_cap_image *img)
{
	if (!img->tl_keys)
		return;
	free(img->tl_keys->dense);
	hp_u64map_free(&img->tl_keys->far);
	free(img->tl_keys->keys);
	free(img->tl_keys);
	img->tl_keys = NULL;
}

/* Whether bucket id has a key; its index in *i then. */
static int find_key(const struct hp_cap_tl_keys *tk, uint32_t id, uint32_t *i)
{
	if (id < tk->ndense && tk->dense[id]) {
		*i = tk->dense[id] - 1;
		return 1;
	}
	return hp_u64map_count(&tk->far) && hp_u64map_get(&tk->far, id, i);
}

/* Maps bucket id (without a key) to i: in the array when id is below
 * twice the keys' count plus 64 Ki (it grows to hold it), else in the map.
 * Returns 0 or -ENOMEM. */
static int put_key(struct hp_cap_tl_keys *tk, uint32_t id, uint32_t i)
{
	if (id >= tk->ndense && id < 2 * (tk->n + 1) + (1u << 16)) {
		size_t n = tk->ndense ? tk->ndense : 1024;
		uint32_t *d;
		while (n <= id)
			n *= 2;
		d = realloc(tk->dense, n * sizeof *d);
		if (!d)
			return -ENOMEM;
		memset(d + tk->ndense, 0, (n - tk->ndense) * sizeof *d);
		tk->dense = d;
		tk->ndense = n;
	}
	if (id < tk->ndense) {
		tk->dense[id] = i + 1;
		return 0;
	}
	return hp_u64map_put(&tk->far, id, i) ? -ENOMEM : 0;
}

/* Whether entry s (in a tagged tick or not) agrees with key k; a key first
 * met untagged takes the tags of the first tagged entry. */
static int same_key(struct tl_key *k, const struct hp_rec_site *s, int tagged)
{
	if (s->stack_id != k->stack_id || s->size != k->size)
		return 0;
	if (tagged && !k->tagged) {
		k->type_tag = s->type_tag;
		k->origin_tag = s->origin_tag;
		k->tagged = 1;
	}
	return !tagged || (s->type_tag == k->type_tag && s->origin_tag == k->origin_tag);
}

/* Remembers the key of bucket s->bucket, met for the first time. Returns
 * 0, -E2BIG (over the memory bound) or -ENOMEM. */
static int add_key(struct hp_capture *cap, struct hp_cap_tl_keys *tk, const struct hp_rec_site *s,
		   int tagged)
{
	size_t grow = hp_hindex_grow_bytes(&tk->charged);
	/* The keys are set as they are added: their room is not zeroed (2^20
	 * buckets: 25 MB of pages untouched). */
	int err = reserve_lazy(cap, (void **)&tk->keys, &tk->alloc, tk->n + 1, sizeof *tk->keys);

	/* Two arrays, hashes and items: a chunk each. */
	if (!err && grow && charge(cap, heap_bytes(grow) + 16))
		err = -E2BIG;
	if (!err && tk->n >= UINT32_MAX)
		err = -E2BIG;
	if (!err)
		err = put_key(tk, s->bucket, (uint32_t)tk->n);
	if (!err) {
		if (grow) /* the hash index it is charged as: slots of 8 + 4 bytes */
			tk->charged.mask = grow / (sizeof(uint64_t) + sizeof(uint32_t)) - 1;
		tk->charged.count++;
		tk->keys[tk->n++] = (struct tl_key){s->size, s->stack_id, s->type_tag,
						    s->origin_tag, tagged};
	}
	return err;
}

/* Checks entry s of a timeline (check_timeline) against its bucket's key:
 * 1 when it agrees, or its bucket is new (its key then), 0 when it does
 * not (it is dropped: *dropped counts them, *bad and *was keep the first
 * one and its key), or -E2BIG or -ENOMEM (the key could not be stored). */
static int check_site(struct hp_capture *cap, struct hp_cap_tl_keys *tk, const struct hp_rec_site *s,
		      int tagged, size_t *dropped, struct hp_rec_site *bad, struct tl_key *was)
{
	uint32_t i;
	int err;

	if (find_key(tk, s->bucket, &i)) {
		if (same_key(&tk->keys[i], s, tagged))
			return 1;
		if (!(*dropped)++) {
			*bad = *s;
			*was = tk->keys[i];
		}
		return 0;
	}
	err = add_key(cap, tk, s, tagged);
	return err ? err : 1;
}

/* Says in cap->left_out how many entries check_site dropped, and the
 * first (bad, against its key was). */
static void note_dropped(struct hp_capture *cap, size_t dropped, const struct hp_rec_site *bad,
			 const struct tl_key *was)
{
	char what[96];

	if (!dropped)
		return;
	if (bad->stack_id != was->stack_id)
		snprintf(what, sizeof what, "stack %u at its first entry, stack %u", was->stack_id,
			 bad->stack_id);
	else if (bad->size != was->size)
		snprintf(what, sizeof what, "size %llu at its first entry, size %llu",
			 (unsigned long long)was->size, (unsigned long long)bad->size);
	else
		snprintf(what, sizeof what, "tags %u/%u at its first entry, tags %u/%u",
			 was->type_tag, was->origin_tag, bad->type_tag, bad->origin_tag);
	snprintf(cap->left_out, sizeof cap->left_out,
		 "bucket %u has %s at a later one: %zu such entr%s left out", bad->bucket, what,
		 dropped, dropped == 1 ? "y" : "ies");
}

/* The image's keys, made (and charged) on first use: 0, -E2BIG (over the
 * bound: *out NULL) or -ENOMEM. */
static int tl_keys(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cap_tl_keys **out)
{
	*out = img->tl_keys;
	if (*out)
		return 0;
	if (charge(cap, heap_bytes(TL_KEYS_CHARGED)))
		return -E2BIG;
	*out = img->tl_keys = calloc(1, sizeof **out);
	return *out ? 0 : -ENOMEM;
}

/* Keeps the invariant of hp_cap_tick over the ticks [first_tick, nticks)
 * just read: an entry whose bucket had another key at its first entry is
 * dropped (its tick keeps the others), and cap->left_out says how many
 * and the first. The entries are moved down over the dropped ones, so the
 * sites stay those of the ticks, in order. Returns 0, or -E2BIG or
 * -ENOMEM when a key could not be stored: the ticks from the one at hand
 * on are dropped then (unchecked, they could break the invariant). */
static int check_timeline(struct hp_capture *cap, struct hp_cap_image *img, size_t first_tick)
{
	struct hp_cap_tl_keys *tk;
	struct hp_rec_site bad = {0};
	struct tl_key was = {0};
	size_t w, dropped = 0;
	int err = 0;

	if (first_tick >= img->nticks)
		return 0;
	err = tl_keys(cap, img, &tk);
	if (err == -ENOMEM)
		return err;
	w = img->ticks[first_tick].first;
	if (!tk) { /* over the bound: none of them can be checked */
		img->nticks = first_tick;
		img->nsites = w;
		return -E2BIG;
	}
	for (size_t t = first_tick; t < img->nticks && !err; t++) {
		struct hp_cap_tick *k = &img->ticks[t];
		size_t from = k->first, n = k->count;
		k->first = w;
		k->count = 0;
		for (size_t e = from; e < from + n; e++) {
			struct hp_rec_site s = img->sites[e];
			int ok = check_site(cap, tk, &s, k->tagged, &dropped, &bad, &was);
			if (ok < 0) {
				/* This tick and the rest go, as a tick cut short. */
				err = ok;
				img->nticks = t;
				w = k->first;
				break;
			}
			if (ok) {
				img->sites[w++] = s;
				k->count++;
			}
		}
	}
	img->nsites = w;
	note_dropped(cap, dropped, &bad, &was);
	return err;
}

/* The ticks of a TIMELINE record and their tags, as parse_timeline reads
 * them, unchecked. */
static int parse_ticks(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	uint64_t n, ntags, t = 0; /* each record's first time is absolute, as TIMESERIES' */
	size_t first_site = img->nsites, first_tick = img->nticks;
	int err = hp_rec_count_get(c, HP_REC_TICK_MIN_BYTES, &n);

	if (!err)
		err = reserve(cap, (void **)&img->ticks, &img->alloc_ticks, img->nticks + n,
			      sizeof *img->ticks);
	for (uint64_t i = 0; i < n && !err && !c->err; i++) {
		struct hp_rec_tick tick;
		struct hp_cap_tick *k = &img->ticks[img->nticks];
		if (hp_rec_tick_get(c, &tick, &t))
			break;
		err = reserve(cap, (void **)&img->sites, &img->alloc_sites,
			      img->nsites + tick.entry_count, sizeof *img->sites);
		if (err)
			break;
		*k = (struct hp_cap_tick){tick.time_ns, img->nsites, 0, 0};
		for (uint64_t e = 0; e < tick.entry_count && !c->err; e++) {
			struct hp_rec_site *site = &img->sites[k->first + k->count];
			memset(site, 0, sizeof *site);
			if (!hp_rec_site_get(c, site))
				k->count++;
		}
		/* A tick cut short by damage is dropped whole: a partial one
		 * would read as buckets unchanged. */
		if (!c->err) {
			img->nsites += k->count;
			img->nticks++;
		}
	}
	if (err || c->err || c->p >= c->end)
		return err ? err : c->err ? -EINVAL : 0;
	if (hp_rec_count_get(c, HP_REC_SITE_TAGS_MIN_BYTES, &ntags) ||
	    ntags != img->nsites - first_site)
		return -EINVAL;
	for (size_t i = first_site; i < img->nsites && !c->err; i++)
		hp_rec_site_tags_get(c, &img->sites[i]);
	if (c->err) { /* no tags rather than some */
		for (size_t i = first_site; i < img->nsites; i++)
			img->sites[i].type_tag = img->sites[i].origin_tag = 0;
		return -EINVAL;
	}
	for (size_t i = first_tick; i < img->nticks; i++)
		img->ticks[i].tagged = 1;
	return 0;
}

/* A TIMELINE record: its ticks, then (minor 5) its sites' tags, one pair
 * per site of the record in their order. A record without them (minor 4)
 * leaves the sites with no type and no origin; a count that is not the
 * record's sites makes the record malformed (its ticks are kept, their
 * tags 0). The ticks kept are then checked (check_timeline). */
static int parse_timeline(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	size_t first_tick = img->nticks;
	int err = parse_ticks(cap, img, c);
	int cerr = check_timeline(cap, img, first_tick);

	return err ? err : cerr;
}

/* parse_timeline for a capture loaded with HP_CAP_LOAD_NO_TIMELINE: the
 * record read, charged and checked as parse_timeline reads, charges and
 * checks it, its entries held nowhere: read once to count them and find
 * their tags, then again beside their tags to check them. nticks and
 * nsites count what parse_timeline would hold (the next records' charges
 * follow from them); the load ends with none. */
static int parse_timeline_lean(struct hp_capture *cap, struct hp_cap_image *img,
			       struct hp_cursor *c)
{
	struct hp_cursor start, tags = {0};
	struct hp_cap_tl_keys *tk;
	struct hp_rec_site bad = {0};
	struct tl_key was = {0};
	uint64_t n, ntags, t = 0;
	size_t kept = 0, nsites = 0, w = 0, dropped = 0;
	int err = hp_rec_count_get(c, HP_REC_TICK_MIN_BYTES, &n), tagged = 0, perr, cerr;

	start = *c;
	if (!err)
		err = charge_reserve(cap, &img->alloc_ticks, img->nticks + n, sizeof *img->ticks);
	for (uint64_t i = 0; i < n && !err && !c->err; i++) {
		struct hp_rec_tick tick;
		if (hp_rec_tick_get(c, &tick, &t))
			break;
		err = charge_reserve(cap, &img->alloc_sites, img->nsites + nsites + tick.entry_count,
				     sizeof *img->sites);
		for (uint64_t e = 0; e < tick.entry_count && !err && !c->err; e++) {
			struct hp_rec_site site = {0};
			hp_rec_site_get(c, &site);
		}
		/* A tick cut short by damage is dropped whole (parse_ticks). */
		if (!err && !c->err) {
			nsites += tick.entry_count;
			kept++;
		}
	}
	if (err || c->err || c->p >= c->end) {
		perr = err ? err : c->err ? -EINVAL : 0;
	} else if (hp_rec_count_get(c, HP_REC_SITE_TAGS_MIN_BYTES, &ntags) || ntags != nsites) {
		perr = -EINVAL;
	} else { /* all of the tags or none */
		tags = *c;
		for (size_t i = 0; i < nsites && !c->err; i++) {
			struct hp_rec_site site = {0};
			hp_rec_site_tags_get(c, &site);
		}
		tagged = !c->err;
		perr = c->err ? -EINVAL : 0;
	}
	if (!kept)
		return perr;
	/* check_timeline's, the entries read again */
	cerr = tl_keys(cap, img, &tk);
	if (cerr == -ENOMEM)
		return perr ? perr : cerr;
	t = 0;
	for (size_t k = 0; k < kept && tk && !cerr; k++) {
		struct hp_rec_tick tick;
		size_t first = w;
		hp_rec_tick_get(&start, &tick, &t);
		for (uint64_t e = 0; e < tick.entry_count; e++) {
			struct hp_rec_site s = {0};
			int ok;
			hp_rec_site_get(&start, &s);
			if (tagged)
				hp_rec_site_tags_get(&tags, &s);
			ok = check_site(cap, tk, &s, tagged, &dropped, &bad, &was);
			if (ok < 0) { /* this tick and the rest go */
				cerr = ok;
				kept = k;
				w = first;
				break;
			}
			w += (size_t)ok;
		}
	}
	if (!tk) { /* over the bound: none of them can be checked */
		kept = 0;
		cerr = -E2BIG;
	}
	note_dropped(cap, dropped, &bad, &was);
	img->nticks += kept;
	img->nsites += w;
	return perr ? perr : cerr;
}

/* The histograms of the image's snapshot of seq (the last of that seq,
 * which the recorder wrote just before), sparse (hp_cap_snapshot). */
static int parse_histograms(struct hp_capture *cap, struct hp_cap_image *img,
			    struct hp_cursor *c)
{
	struct hp_rec_hists h;
	struct hp_cap_snapshot *s = NULL;
	uint32_t *first = NULL;
	struct hp_cap_hclass *cls = NULL;
	size_t n = 0, alloc = 0;
	int keep = !(cap->load_flags & HP_CAP_LOAD_NO_HISTOGRAMS);
	int err = hp_rec_hists_get(c, &h);

	if (err)
		return -EINVAL;
	for (size_t i = img->nsnapshots; i-- > 0 && !s;)
		if (img->snapshots[i].seq == h.seq)
			s = &img->snapshots[i];
	if (!s || s->nbuckets != h.count || s->hists_read)
		return -EINVAL; /* not the snapshot's: malformed */
	if (charge(cap, (h.count + 1) * sizeof *first))
		return -E2BIG;
	/* Without HP_CAP_LOAD_NO_HISTOGRAMS, read and charged, not kept. */
	first = keep ? malloc((h.count + 1) * sizeof *first) : NULL;
	if (keep && !first)
		return -ENOMEM;
	for (uint64_t i = 0; i < h.count && !err; i++) {
		struct hp_rec_hist v;
		unsigned nsize, nlife;
		if (first)
			first[i] = (uint32_t)n;
		if (hp_rec_hist_get_n(c, &v, &nsize, &nlife)) {
			err = -EINVAL;
			break;
		}
		for (unsigned w = 0; w < 2 && !err; w++) {
			const uint64_t *k = w ? v.life : v.size;
			unsigned nk = w ? nlife : nsize; /* the rest are 0 */
			for (unsigned j = 0; j < nk && !err; j++) {
				if (!k[j])
					continue;
				err = keep ? reserve(cap, (void **)&cls, &alloc, n + 1, sizeof *cls)
					   : charge_reserve(cap, &alloc, n + 1, sizeof *cls);
				if (!err && cls)
					cls[n] = (struct hp_cap_hclass){(uint8_t)w, (uint8_t)j, k[j]};
				n += !err;
			}
		}
	}
	if (err) {
		free(first);
		free(cls);
		return err;
	}
	if (first)
		first[h.count] = (uint32_t)n;
	s->hist_first = first;
	s->hist = cls;
	s->hists_read = 1;
	return 0;
}

static int block_by_address(const void *a, const void *b)
{
	const struct hp_rec_block *x = a, *y = b;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* The live blocks of the image's snapshot of seq, sorted by address, a
 * block seen twice by the recorder's walk kept once. */
static int parse_blocks(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	struct hp_rec_hists h;
	struct hp_cap_snapshot *s = NULL;
	struct hp_rec_block *v;
	size_t n = 0;

	if (hp_rec_hists_get(c, &h))
		return -EINVAL;
	for (size_t i = img->nsnapshots; i-- > 0 && !s;)
		if (img->snapshots[i].seq == h.seq)
			s = &img->snapshots[i];
	if (!s || s->has_blocks || h.count > (uint64_t)(c->end - c->p) / HP_REC_BLOCK_MIN_BYTES)
		return -EINVAL;
	if (charge(cap, (h.count ? h.count : 1) * sizeof *v))
		return -E2BIG;
	v = malloc((h.count ? h.count : 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (uint64_t i = 0; i < h.count; i++)
		if (hp_rec_block_get(c, &v[i])) {
			free(v);
			return -EINVAL;
		}
	hp_sort(v, h.count, sizeof *v, block_by_address);
	for (size_t i = 0; i < h.count; i++)
		if (!n || v[i].address != v[n - 1].address)
			v[n++] = v[i];
	s->has_blocks = 1;
	s->nblocks = n;
	s->blocks = v;
	return 0;
}

/* A chunk of the event log (EVENTS): its events appended to the image's,
 * each allocation with its bucket's key; the clock moved to the chunk
 * flushed last. A chunk that does not decode whole is refused whole. */
/* One chunk of an EVENTS record (bits 0: its four columns) or of an
 * EVENTS_BITS record (bits 1: its bit stream), its events appended. */
static int parse_chunk(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c,
		       int bits)
{
	struct hp_ev_bucket *b = NULL;
	struct hp_ev_read *ev = NULL;
	uint8_t *scratch = NULL;
	struct hp_ev_head h;
	int err = -EINVAL;

	if (hp_ev_decode_head(c, &h))
		return -EINVAL;
	if (h.tick_at < h.tick_origin || h.ns_at < h.ns_origin) {
		cap->why = "its clock goes backwards";
		return -EINVAL;
	}
	/* Scratch for the chunk, bounded by HP_EV_CHUNK_MAX and the payload
	 * (hp_ev_decode_head): charged, then given back. */
	size_t scratch_bytes = bits ? 1 : HP_EV_COL_MAX_BYTES(h.count) + 1;
	struct hp_ev_reuse reuse;
	if (charge(cap, (h.nbuckets + 1) * sizeof *b + (h.count + 1) * sizeof *ev + scratch_bytes))
		return -E2BIG;
	b = malloc((h.nbuckets + 1) * sizeof *b);
	ev = malloc((h.count + 1) * sizeof *ev);
	scratch = malloc(scratch_bytes);
	if (!b || !ev || !scratch) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < h.nbuckets; i++)
		if (hp_ev_decode_bucket(c, &b[i]))
			goto out;
	if (bits ? hp_ev_decode_bits(c, &h, ev) : hp_ev_decode_columns(c, &h, ev, scratch, &reuse))
		goto out;
	err = reserve(cap, (void **)&img->events, &img->alloc_events, img->nevents + h.count,
		      sizeof *img->events);
	if (err)
		goto out;
	for (uint64_t i = 0; i < h.count; i++) {
		struct hp_cap_event *e = &img->events[img->nevents++];
		const struct hp_ev_bucket *k = &b[ev[i].slot];
		uint64_t base = h.tick_origin >> h.shift;
		*e = (struct hp_cap_event){.tick = (base + ev[i].units) << h.shift,
					   .addr = ev[i].addr,
					   .size = ev[i].size,
					   .thread = h.thread > UINT32_MAX ? 0 : (uint32_t)h.thread,
					   .kind = ev[i].kind};
		if (ev[i].kind != HP_EV_FREE) {
			e->stack_id = (uint32_t)k->stack_id;
			e->type_tag = (uint32_t)k->type_tag;
			e->origin_tag = (uint32_t)k->origin_tag;
		}
	}
	if (h.tick_at >= img->evclock.tick_at) {
		img->evclock = (struct hp_cap_evclock){h.tick_origin, h.ns_origin, h.tick_at,
						       h.ns_at};
	}
	err = 0;
out:
	cap->mem_bytes -= (h.nbuckets + 1) * sizeof *b + (h.count + 1) * sizeof *ev + scratch_bytes;
	free(b);
	free(ev);
	free(scratch);
	return err;
}

/* An EVENTS record (one chunk) or an EVENTS_BITS record (chunks to the
 * end of its payload, at least one): a record refused leaves none of its
 * events. */
static int parse_events(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c,
			int bits)
{
	size_t n0 = img->nevents;
	struct hp_cap_evclock clock0 = img->evclock;
	int err;

	do
		err = parse_chunk(cap, img, c, bits);
	while (!err && bits && c->p < c->end);
	if (err) {
		img->nevents = n0;
		img->evclock = clock0;
	}
	return err;
}

uint64_t hp_capture_event_ns(const struct hp_capture *cap, uint64_t tick)
{
	const struct hp_cap_evclock *k = &cap->evclock;
	long double rate;

	if (tick <= k->tick_origin)
		return k->ns_origin;
	if (k->tick_at <= k->tick_origin)
		return k->ns_origin + (tick - k->tick_origin); /* one point: ns ticks */
	rate = (long double)(k->ns_at - k->ns_origin) / (long double)(k->tick_at - k->tick_origin);
	return k->ns_origin + (uint64_t)((long double)(tick - k->tick_origin) * rate + 0.5L);
}

/* The regions of the image's snapshot of seq that hold the heap (MAPS).
 * A region the recorder cannot have written (size 0, past 2^64, before
 * the end of the one before, more resident than its size, an unknown
 * kind) refuses the record, saying which (cap->why). */
static int parse_maps(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	struct hp_rec_hists h;
	struct hp_cap_snapshot *s = NULL;
	struct hp_cap_map *v;
	uint64_t end = 0;
	int err = 0;

	if (hp_rec_hists_get(c, &h))
		return -EINVAL;
	for (size_t i = img->nsnapshots; i-- > 0 && !s;)
		if (img->snapshots[i].seq == h.seq)
			s = &img->snapshots[i];
	if (!s) {
		cap->why = "its snapshot is not in the file";
		return -EINVAL;
	}
	if (s->has_maps) {
		cap->why = "a second one for the same snapshot";
		return -EINVAL;
	}
	if (h.count > (uint64_t)(c->end - c->p) / HP_REC_MAP_MIN_BYTES)
		return -EINVAL;
	if (charge(cap, (h.count ? h.count : 1) * sizeof *v))
		return -E2BIG;
	v = calloc(h.count ? h.count : 1, sizeof *v);
	if (!v)
		return -ENOMEM;
	for (uint64_t i = 0; !err && i < h.count; i++) {
		struct hp_rec_map m;
		if (hp_rec_map_get(c, &m)) {
			err = -EINVAL;
			break;
		}
		if (!m.size || m.start + m.size < m.start)
			cap->why = "a region of size 0, or past the end of the address space";
		else if (m.start < end)
			cap->why = "regions out of address order, or overlapping";
		else if (m.rss_bytes > m.size)
			cap->why = "a region with more resident bytes than its size";
		else if (!m.kind || m.kind >= HP_MAP_KINDS)
			cap->why = "a region of an unknown kind";
		if (cap->why) {
			err = -EINVAL;
			break;
		}
#define HP_MAP_FIELD(kind, type, name) v[i].name = m.name;
		HP_REC_MAP(HP_MAP_FIELD)
#undef HP_MAP_FIELD
		v[i].name = copy_str(cap, m.name);
		if (!v[i].name)
			err = cap->mem_refused ? -E2BIG : -ENOMEM;
		end = m.start + m.size;
	}
	if (err) {
		for (uint64_t i = 0; i < h.count; i++)
			free(v[i].name);
		free(v);
		return err;
	}
	s->has_maps = 1;
	s->nmaps = h.count;
	s->maps = v;
	return 0;
}

int hp_capture_hist(const struct hp_cap_snapshot *s, size_t i, struct hp_rec_hist *out)
{
	memset(out, 0, sizeof *out);
	if (!s->hist_first || i >= s->nbuckets)
		return 0;
	for (uint32_t k = s->hist_first[i]; k < s->hist_first[i + 1]; k++) {
		const struct hp_cap_hclass *h = &s->hist[k];
		if (h->which == HP_CAP_HIST_SIZE)
			out->size[h->cls] = h->count;
		else
			out->life[h->cls] = h->count;
	}
	return 1;
}

static int parse_tags(struct hp_capture *cap, struct hp_cap_image *img, struct hp_cursor *c)
{
	uint64_t n;

	hp_rec_count_get(c, HP_REC_TAG_MIN_BYTES, &n);
	for (uint64_t i = 0; i < n && !c->err; i++) {
		struct hp_rec_tag t;
		struct hp_cap_tag *e;
		char *name;
		int err;

		if (hp_rec_tag_get(c, &t))
			break;
		/* A kind of a later minor version is skipped; an id past the
		 * bound is damage (it would make us allocate for it). */
		if (!t.kind || t.kind >= HP_TAG_KINDS)
			continue;
		if (!t.id || t.id > HP_CAP_MAX_TAG_ID)
			return -EINVAL;
		err = reserve(cap, (void **)&img->tags[t.kind], &img->alloc_tags[t.kind], t.id + 1,
			      sizeof *e);
		if (err)
			return err;
		if (img->ntags[t.kind] <= t.id)
			img->ntags[t.kind] = t.id + 1;
		name = copy_str(cap, t.name);
		if (!name)
			return cap->mem_refused ? -E2BIG : -ENOMEM;
		e = &img->tags[t.kind][t.id];
		free(e->name);
		*e = (struct hp_cap_tag){.a = t.a, .b = t.b, .c = t.c, .name = name, .defined = 1};
	}
	return c->err ? -EINVAL : 0;
}

const struct hp_cap_tag *hp_capture_tag(const struct hp_capture *cap, unsigned kind, uint64_t id)
{
	if (kind >= HP_TAG_KINDS || id >= cap->ntags[kind] || !cap->tags[kind][id].defined)
		return NULL;
	return &cap->tags[kind][id];
}

static void free_symbols(struct hp_cap_symbols *s)
{
	for (size_t i = 0; s->strings && i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->status);
	free(s->addrs);
	free(s->frames);
	memset(s, 0, sizeof *s);
}

static int by_address(const void *a, const void *b)
{
	uint64_t x = ((const struct hp_cap_symaddr *)a)->address;
	uint64_t y = ((const struct hp_cap_symaddr *)b)->address;
	return x < y ? -1 : x > y;
}

static int parse_symbols(struct hp_capture *cap, struct hp_cursor *c)
{
	struct hp_cap_symbols s = {0};
	struct hp_rec_symbols_tail tail;
	size_t cap_frames = 0;
	struct hp_cap_image *img;
	uint64_t n;

	if (hp_rec_count_get(c, 1, &n)) /* strings */
		goto bad;
	s.nstrings = (size_t)n;
	if (charge(cap, heap_bytes((s.nstrings + 1) * sizeof *s.strings)))
		goto bad;
	s.strings = calloc(s.nstrings + 1, sizeof *s.strings);
	if (!s.strings)
		return -ENOMEM;
	for (size_t i = 0; i < s.nstrings && !c->err; i++)
		s.strings[i] = cursor_str(cap, c);
	if (hp_rec_count_get(c, 1, &n)) /* module status */
		goto bad;
	s.nstatus = (size_t)n;
	if (charge(cap, heap_bytes((s.nstatus + 1) * sizeof *s.status)))
		goto bad;
	s.status = calloc(s.nstatus + 1, sizeof *s.status);
	if (!s.status)
		goto nomem;
	for (size_t i = 0; i < s.nstatus; i++)
		s.status[i] = hp_cursor_u(c);
	if (hp_rec_count_get(c, HP_REC_SYMADDR_MIN_BYTES, &n))
		goto bad;
	s.naddrs = (size_t)n;
	if (charge(cap, heap_bytes((s.naddrs + 1) * sizeof *s.addrs)))
		goto bad;
	s.addrs = calloc(s.naddrs + 1, sizeof *s.addrs);
	if (!s.addrs)
		goto nomem;
	for (size_t i = 0; i < s.naddrs && !c->err; i++) {
		struct hp_cap_symaddr *a = &s.addrs[i];
		struct hp_rec_symaddr ra;
		int err;
		hp_rec_symaddr_get(c, &ra);
		a->address = ra.address;
		a->count = (uint32_t)ra.frame_count;
		a->first = (uint32_t)s.nframes;
		err = reserve(cap, (void **)&s.frames, &cap_frames, s.nframes + a->count,
			      sizeof *s.frames);
		if (err == -ENOMEM)
			goto nomem;
		if (err)
			goto bad;
		for (uint32_t k = 0; k < a->count; k++) {
			struct hp_rec_symframe *f = &s.frames[s.nframes++];
			hp_rec_symframe_get(c, f);
			if (f->function >= s.nstrings || f->file >= s.nstrings)
				c->err = 1;
		}
	}
	/* (minor 2) the image whose frames these are; before, image 0. */
	hp_rec_symbols_tail_get(c, &tail);
	if (c->err || tail.image >= cap->nimages)
		goto bad;
	hp_sort(s.addrs, s.naddrs, sizeof *s.addrs, by_address);
	img = &cap->images[tail.image];
	free_symbols(&img->symbols); /* the image's last SYMBOLS record wins */
	img->symbols = s;
	img->has_symbols = 1;
	return 0;
bad:
	free_symbols(&s);
	return cap->mem_refused ? -E2BIG : -EINVAL;
nomem:
	free_symbols(&s);
	return -ENOMEM;
}

const struct hp_cap_symaddr *hp_capture_symbols_of(const struct hp_capture *cap, uint64_t addr)
{
	struct hp_cap_symaddr key = {.address = addr};
	if (!cap->has_symbols)
		return NULL;
	return hp_bsearch(&key, cap->symbols.addrs, cap->symbols.naddrs, sizeof key, by_address);
}

static const char *type_name(unsigned type)
{
	switch (type) {
	case HP_REC_META: return "META";
	case HP_REC_MODULES: return "MODULES";
	case HP_REC_STACKS: return "STACKS";
	case HP_REC_SNAPSHOT: return "SNAPSHOT";
	case HP_REC_TIMESERIES: return "TIMESERIES";
	case HP_REC_TIMELINE: return "TIMELINE";
	case HP_REC_HISTOGRAMS: return "HISTOGRAMS";
	case HP_REC_BLOCKS: return "BLOCKS";
	case HP_REC_MAPS: return "MAPS";
	case HP_REC_EVENTS: return "EVENTS";
	case HP_REC_EVENTS_BITS: return "EVENTS_BITS";
	case HP_REC_SYMBOLS: return "SYMBOLS";
	case HP_REC_TAGS: return "TAGS";
	default: return "unknown";
	}
}

/* Reads a regular file whole. Anything else is refused with a reason of
 * its own: a directory, a device, and a FIFO (hp_infile_open keeps it from
 * hanging the open). */
static int read_all(const char *path, uint8_t **data, size_t *size, const char **why)
{
	int fd = hp_infile_open(path, why);
	struct stat st;
	size_t len = 0, cap;
	uint8_t *buf;

	if (fd < 0)
		return fd == -EISDIR ? -EINVAL : fd;
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			close(fd);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len == cap) { /* the file grew while we read */
			uint8_t *p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
	}
	close(fd);
	*data = buf;
	*size = len;
	return 0;
}

/* The image a record of this type goes to: the current one, or a new one
 * for a META that is not the first record of the current image. Returns 0,
 * -E2BIG or -ENOMEM. */
static int image_for(struct hp_capture *cap, unsigned type, size_t *alloc,
		     struct hp_cap_image **out)
{
	struct hp_cap_image *img = cap->nimages ? &cap->images[cap->nimages - 1] : NULL;
	int err;

	*out = img;
	if (img && (type != HP_REC_META || (!img->has_meta && !img->nrecords)))
		return 0;
	/* Charged as an image without its lean part (capture.h). */
	err = reserve_charged(cap, (void **)&cap->images, alloc, cap->nimages + 1, sizeof *img,
			      sizeof *img - sizeof img->lean);
	if (!err)
		*out = &cap->images[cap->nimages++];
	return err;
}

int hp_capture_load_mem(const uint8_t *data, size_t size, struct hp_capture *cap, char *err,
			size_t errlen)
{
	return hp_capture_load_mem_flags(data, size, 0, cap, err, errlen);
}

int hp_capture_load_mem_flags(const uint8_t *data, size_t size, unsigned flags,
			      struct hp_capture *cap, char *err, size_t errlen)
{
	struct hp_reader r;
	struct hp_record rec;
	size_t alloc_images = 0;
	int ret = 0, st;

	memset(cap, 0, sizeof *cap);
	cap->file_bytes = size;
	cap->load_flags = flags;
	cap->mem_limit_bytes = size > (SIZE_MAX - HP_CAP_MEM_BASE_BYTES) / HP_CAP_MEM_FACTOR
				       ? SIZE_MAX
				       : HP_CAP_MEM_FACTOR * size + HP_CAP_MEM_BASE_BYTES;
	if (hp_reader_open(&r, data, size) < 0) {
		snprintf(err, errlen, "%s", r.msg);
		return -EINVAL;
	}
	while ((st = hp_reader_next(&r, &rec)) != HP_READ_END) {
		struct hp_cap_image *img = NULL;
		struct hp_cursor c;
		int perr = 0;

		if (st == HP_READ_DAMAGED) { /* rec is not filled in then */
			note_damage(cap, "%s", r.msg);
			continue;
		}
		c = (struct hp_cursor){rec.payload, rec.payload + rec.len, 0};
		cap->nrecords++;
		cap->mem_refused = 0;
		cap->why = NULL;
		cap->left_out[0] = '\0';
		/* SYMBOLS records come after every image and name theirs. */
		if (rec.type != HP_REC_SYMBOLS)
			perr = image_for(cap, rec.type, &alloc_images, &img);
		if (!perr) {
			switch (rec.type) {
			case HP_REC_META: perr = parse_meta(cap, img, &c); break;
			case HP_REC_MODULES: perr = parse_modules(cap, img, &c); break;
			case HP_REC_STACKS: perr = parse_stacks(cap, img, &c); break;
			case HP_REC_SNAPSHOT: perr = parse_snapshot(cap, img, &c); break;
			case HP_REC_TIMESERIES: perr = parse_timeseries(cap, img, &c); break;
			case HP_REC_SYMBOLS: perr = parse_symbols(cap, &c); break;
			case HP_REC_TAGS: perr = parse_tags(cap, img, &c); break;
			case HP_REC_TIMELINE:
				perr = cap->load_flags & HP_CAP_LOAD_NO_TIMELINE
					       ? parse_timeline_lean(cap, img, &c)
					       : parse_timeline(cap, img, &c);
				break;
			case HP_REC_HISTOGRAMS: perr = parse_histograms(cap, img, &c); break;
			case HP_REC_BLOCKS: perr = parse_blocks(cap, img, &c); break;
			case HP_REC_MAPS: perr = parse_maps(cap, img, &c); break;
			case HP_REC_EVENTS: perr = parse_events(cap, img, &c, 0); break;
			case HP_REC_EVENTS_BITS: perr = parse_events(cap, img, &c, 1); break;
			default: break; /* a later minor version's record: skip it */
			}
			if (img)
				img->nrecords++;
		}
		if (perr == -ENOMEM) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			break;
		}
		if (perr && cap->mem_refused)
			note_damage(cap, "offset %zu: %s record would take the reader past %d times "
				    "the file's size in memory, skipped", rec.offset,
				    type_name(rec.type), HP_CAP_MEM_FACTOR);
		else if (perr && cap->why)
			note_damage(cap, "offset %zu: %s record is malformed (%s), skipped",
				    rec.offset, type_name(rec.type), cap->why);
		else if (perr)
			note_damage(cap, "offset %zu: %s record is malformed, skipped", rec.offset,
				    type_name(rec.type));
		if (cap->left_out[0])
			note_damage(cap, "offset %zu: %s record: %s", rec.offset, type_name(rec.type),
				    cap->left_out);
	}
	hp_reader_close(&r);
	/* The loader's own state goes (its charges stay: mem_bytes is a peak),
	 * and the arrays grown by doubling give back what they do not use
	 * (a capture of a million stacks: a quarter of its memory). */
	for (size_t i = 0; i < cap->nimages; i++) {
		struct hp_cap_image *img = &cap->images[i];
		free_tl_keys(img);
		if (img->lean.intern)
			shrink((void **)&img->lean.addrs, &img->lean.intern->alloc_addrs, img->lean.naddrs,
			       sizeof *img->lean.addrs);
		free_intern(img);
		if (flags & HP_CAP_LOAD_NO_TIMELINE) { /* counted, never held */
			img->nticks = img->nsites = img->alloc_ticks = img->alloc_sites = 0;
		}
		shrink((void **)&img->stacks, &img->alloc_stacks, img->nstacks, sizeof *img->stacks);
		shrink((void **)&img->ticks, &img->alloc_ticks, img->nticks, sizeof *img->ticks);
		shrink((void **)&img->sites, &img->alloc_sites, img->nsites, sizeof *img->sites);
		shrink((void **)&img->events, &img->alloc_events, img->nevents,
		       sizeof *img->events);
	}
	if (!ret && (!cap->nimages || !cap->images[0].has_meta))
		note_damage(cap, "no META record: program and options are unknown");
	if (ret) {
		hp_capture_free(cap);
		return ret;
	}
	hp_capture_select(cap, hp_capture_default_image(cap));
	return 0;
}

int hp_capture_load(const char *path, struct hp_capture *cap, char *err, size_t errlen)
{
	return hp_capture_load_flags(path, 0, cap, err, errlen);
}

int hp_capture_load_flags(const char *path, unsigned flags, struct hp_capture *cap, char *err,
			  size_t errlen)
{
	uint8_t *data = NULL;
	size_t size = 0;
	const char *why;
	char msg[256]; /* the longest: a reader's message (struct hp_reader.msg) */
	int ret;

	memset(cap, 0, sizeof *cap);
	ret = read_all(path, &data, &size, &why);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, why ? why : strerror(-ret));
		return ret;
	}
	ret = hp_capture_load_mem_flags(data, size, flags, cap, msg, sizeof msg);
	if (ret)
		snprintf(err, errlen, "%s: %s", path, msg);
	free(data);
	return ret;
}

void hp_capture_release(struct hp_capture *cap, unsigned parts)
{
	struct hp_cap_image *img;

	if (cap->image >= cap->nimages)
		return;
	img = &cap->images[cap->image];
	if (parts & HP_CAP_PART_TIMELINE) {
		free(img->ticks);
		free(img->sites);
		img->ticks = NULL;
		img->sites = NULL;
		img->nticks = img->nsites = img->alloc_ticks = img->alloc_sites = 0;
		cap->ticks = NULL;
		cap->sites = NULL;
		cap->nticks = cap->nsites = 0;
	}
	if (parts & HP_CAP_PART_BUCKETS) {
		for (size_t i = 0; i < img->nsnapshots; i++) {
			free(img->snapshots[i].buckets);
			free(img->snapshots[i].buckets_enc);
			img->snapshots[i].buckets = NULL;
			img->snapshots[i].buckets_enc = NULL;
			img->snapshots[i].buckets_enc_len = 0;
			img->snapshots[i].nbuckets = 0;
		}
		parts |= HP_CAP_PART_HISTOGRAMS; /* indexed by bucket */
	}
	if (parts & HP_CAP_PART_HISTOGRAMS) {
		/* cap->snapshots is img->snapshots (hp_capture_select) */
		for (size_t i = 0; i < img->nsnapshots; i++) {
			free(img->snapshots[i].hist_first);
			free(img->snapshots[i].hist);
			img->snapshots[i].hist_first = NULL;
			img->snapshots[i].hist = NULL;
		}
	}
}

void hp_capture_release_stacks(struct hp_capture *cap, size_t upto)
{
	struct hp_cap_image *img;
	struct hp_cap_arena *a;

	if (cap->image >= cap->nimages || !(a = cap->images[cap->image].lean.arena))
		return;
	img = &cap->images[cap->image];
	if (img->stacks && upto <= img->nstacks) {
		/* The stacks below upto are empty, zero bytes: the table's pages
		 * that hold only them are given back a MiB at a time (they read
		 * zero again; 2^20 stacks: 24 MB off the build's peak). */
		uintptr_t page = a->page ? a->page : (a->page = (uintptr_t)sysconf(_SC_PAGESIZE));
		uintptr_t from = ((uintptr_t)img->stacks + page - 1) & ~(page - 1);
		uintptr_t to = (uintptr_t)(img->stacks + upto) & ~(page - 1);
		from += a->dropped;
		if (to > from && to - from >= (1u << 20)) {
			madvise((void *)from, to - from, MADV_DONTNEED);
			a->dropped += to - from;
		}
	}
	while (a->released < a->n && a->end[a->released] <= upto) {
		free(a->blocks[a->released]);
		a->blocks[a->released++] = NULL;
		if (a->released == a->n) { /* the last block: nothing more is cut from it */
			a->next = NULL;
			a->left = 0;
		}
	}
	if (a->released == a->n && upto >= img->nstacks && img->stacks) {
		/* Every stack read: the table of empty stacks goes too (2^20
		 * stacks: 24 MB); nstacks stays the ids' count. */
		free(img->stacks);
		img->stacks = cap->stacks = NULL;
		img->alloc_stacks = 0;
	}
}

static void free_image(struct hp_cap_image *img)
{
	free_meta(img);
	for (size_t i = 0; i < img->nmodules; i++)
		free(img->modules[i].path);
	free(img->modules);
	free(img->events);
	for (size_t i = 0; img->stacks && i < img->nstacks; i++)
		free(img->stacks[i].frames);
	free(img->stacks);
	for (size_t i = 0; i < img->nsnapshots; i++) {
		free(img->snapshots[i].buckets);
		free(img->snapshots[i].buckets_enc);
		free(img->snapshots[i].heaps);
		free(img->snapshots[i].hist_first);
		free(img->snapshots[i].hist);
		free(img->snapshots[i].blocks);
		for (size_t k = 0; k < img->snapshots[i].nmaps; k++)
			free(img->snapshots[i].maps[k].name);
		free(img->snapshots[i].maps);
	}
	free(img->snapshots);
	free(img->samples);
	free(img->ticks);
	free(img->sites);
	for (unsigned k = 0; k < HP_TAG_KINDS; k++) {
		for (size_t i = 0; i < img->ntags[k]; i++)
			free(img->tags[k][i].name);
		free(img->tags[k]);
	}
	free_symbols(&img->symbols);
	free_tl_keys(img);
	free_intern(img);
	free_arena(img);
	free(img->lean.addrs);
}

void hp_capture_free(struct hp_capture *cap)
{
	for (size_t i = 0; i < cap->nimages; i++)
		free_image(&cap->images[i]);
	free(cap->images);
	for (size_t i = 0; i < cap->ndamage && i < HP_CAP_MAX_DAMAGE; i++)
		free(cap->damage[i]);
	memset(cap, 0, sizeof *cap);
}

int hp_capture_select(struct hp_capture *cap, size_t image)
{
	static const struct hp_cap_image none;
	const struct hp_cap_image *img = image < cap->nimages ? &cap->images[image] : &none;

	if (image >= cap->nimages && !(image == 0 && cap->nimages == 0))
		return -EINVAL;
	cap->image = image;
	cap->has_meta = img->has_meta;
	{
		const struct hp_cap_image *from = img;
		struct hp_capture *to = cap;
		HP_REC_META_PROCESS(HP_REC_ASSIGN)
		HP_REC_META_OPTIONS(HP_REC_ASSIGN)
	}
	cap->program = img->program;
	cap->argc = img->argc;
	cap->argv = img->argv;
	cap->recorder_version = img->recorder_version;
	cap->nmodules = img->nmodules;
	cap->modules = img->modules;
	cap->nstacks = img->nstacks;
	cap->stacks = img->stacks;
	cap->nsnapshots = img->nsnapshots;
	cap->snapshots = img->snapshots;
	cap->nsamples = img->nsamples;
	cap->samples = img->samples;
	cap->nticks = img->nticks;
	cap->ticks = img->ticks;
	cap->nsites = img->nsites;
	cap->sites = img->sites;
	for (unsigned k = 0; k < HP_TAG_KINDS; k++) {
		cap->ntags[k] = img->ntags[k];
		cap->tags[k] = img->tags[k];
	}
	cap->has_symbols = img->has_symbols;
	cap->symbols = img->symbols;
	cap->naddrs = img->lean.naddrs;
	cap->addrs = img->lean.addrs;
	cap->nevents = img->nevents;
	cap->events = img->events;
	cap->evclock = img->evclock;
	return 0;
}

size_t hp_capture_default_image(const struct hp_capture *cap)
{
	for (size_t i = cap->nimages; i-- > 0;)
		if (cap->images[i].nsnapshots)
			return i;
	return cap->nimages ? cap->nimages - 1 : 0;
}

const struct hp_cap_snapshot *hp_capture_last(const struct hp_capture *cap)
{
	return cap->nsnapshots ? &cap->snapshots[cap->nsnapshots - 1] : NULL;
}

const struct hp_cap_module *hp_capture_module_of(const struct hp_capture *cap, uint64_t addr)
{
	for (size_t i = cap->nmodules; i-- > 0;) {
		const struct hp_cap_module *m = &cap->modules[i];
		for (uint32_t s = 0; s < m->nseg; s++) {
			uint64_t lo = m->bias + m->seg[s].vaddr;
			if (addr >= lo && addr < lo + m->seg[s].memsz)
				return m;
		}
	}
	return NULL;
}

const char *hp_capture_reason_name(uint64_t reason)
{
	switch (reason) {
	case HP_SNAP_EXIT: return "exit";
	case HP_SNAP_SIGNAL: return "signal";
	case HP_SNAP_FATAL: return "fatal signal";
	case HP_SNAP_INTERVAL: return "interval";
	case HP_SNAP_BYTES: return "bytes allocated";
	case HP_SNAP_HIGH_WATER: return "high-water mark";
	case HP_SNAP_API: return "heapprof_dump()";
	case HP_SNAP_EXEC: return "exec";
	case HP_SNAP_DETACH: return "detach";
	case HP_CAP_SNAP_EVENTS: return "the event log's blocks";
	default: return "unknown";
	}
}

const char *hp_capture_lost_name(unsigned reason)
{
	switch (reason) {
	case HP_LOST_REENTRANT: return "allocated inside the recorder (signal handler): not recorded";
	case HP_LOST_NO_MEMORY: return "recorder out of memory";
	case HP_LOST_STACK_TABLE_FULL: return "stack table full (--max-stacks)";
	case HP_LOST_UNWIND_FAILED: return "unwinding failed (recorded without a stack)";
	case HP_LOST_UNKNOWN_FREE: return "free of a block not recorded (allocated before start)";
	case HP_LOST_WRITE_FAILED: return "records that could not be written";
	case HP_LOST_REENTRANT_FREE: return "freed inside the recorder (signal handler): still counted in use";
	case HP_LOST_STACK_ROOM: return "allocated with too little stack left for the recorder (small thread or signal stack)";
	case HP_LOST_EVENTS_NO_MEMORY: return "events the log had no buffer for (event log only: the blocks are counted)";
	case HP_LOST_EVENTS_WRITE: return "events whose chunk could not be written (event log only: the blocks are counted)";
	default: return "unknown";
	}
}
