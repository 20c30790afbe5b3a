/*
 * attr.c - attribution: contexts, threads, explicit and vtable types, the
 * reset of a custom heap (see attr.h for the model; the tables are in
 * tags.c, the maths of moving a block in docs/internals/recorder.md).
 *
 * Lock order, everywhere: the module table's, a live shard's, then a
 * bucket's or a table's (tags, bucket keys), one at a time. Nothing takes a
 * shard lock while it holds a bucket or table lock.
 */
#include "attr.h"

#include <errno.h>
#include <string.h>

#include "../format/format.h"
#include "aggregate.h"
#include "events.h"
#include "modules.h"
#include "os.h"
#include "tags.h"

__thread struct hp_attr hp_attr_self __attribute__((tls_model("initial-exec")));

void hp_attr_thread_start(struct hp_attr *a)
{
	hp_os_thread_name(a->name);
	a->thread = hp_tags_thread_new((uint32_t)hp_os_gettid(), a->name);
}

void hp_attr_thread_refresh(struct hp_attr *a, int new_tid)
{
	char name[16];

	if (!a->thread)
		return;
	memcpy(name, a->name, sizeof name); /* kept when it cannot be read */
	hp_os_thread_name(name);
	if (!new_tid && memcmp(name, a->name, sizeof name) == 0)
		return;
	memcpy(a->name, name, sizeof name);
	hp_tags_thread_set(a->thread, (uint32_t)hp_os_gettid(), a->name);
}

uint32_t hp_attr_origin(struct hp_attr *a, uint32_t heap)
{
	uint32_t gen, depth, ctx = 0, origin;

	if (!heap) {
		/* Lowered first: a push or pop from here on (a signal
		 * handler's) raises it again. */
		__atomic_store_n(&hp_self.origin_moved, 0, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	gen = __atomic_load_n(&a->gen, __ATOMIC_RELAXED);
	if (!heap && a->origin && a->origin_gen == gen)
		return a->origin;
	depth = a->depth < HP_ATTR_MAX_DEPTH ? a->depth : HP_ATTR_MAX_DEPTH;
	for (uint32_t i = 0; i < depth; i++) {
		uint32_t id = hp_tags_context(ctx, a->ctx_name[i]);
		if (!id)
			break; /* the table is full: the outer scope stands */
		ctx = id;
	}
	origin = hp_tags_origin(ctx, a->thread, heap);
	if (!heap && gen == __atomic_load_n(&a->gen, __ATOMIC_RELAXED)) {
		a->origin = origin;
		a->origin_gen = gen;
	}
	if (!heap && !a->origin)
		hp_attr_origin_moves(); /* a table full: ask again next time */
	return origin;
}

void hp_attr_reset_caches(struct hp_attr *a)
{
	hp_attr_origin_moves();
	a->origin = 0;
	a->type_name = NULL;
	a->type_id = 0;
}

/* The bucket of blk's key with type type, and the block moved into it:
 * fn's answer for hp_live_*. Under the block's shard lock. */
static int retype(uintptr_t addr, uint32_t type, struct hp_live_block *blk)
{
	uint32_t stack, old_type, origin, to;
	uint64_t size;

	hp_agg_key(blk->bucket, &stack, &old_type, &origin, &size);
	if (old_type == type)
		return HP_LIVE_KEEP;
	to = hp_agg_bucket(stack, type, origin, size);
	if (!to)
		return HP_LIVE_KEEP; /* the table is full: the block stays untyped */
	hp_agg_move(blk->bucket, to, blk->size);
	blk->bucket = to;
	if (!(addr & ~HP_ATTR_ADDR_MASK)) /* malloc's blocks: the event log's */
		HP_EVENTS_RETYPE(addr, to);
	return HP_LIVE_RETAG;
}

/* What set_type_fn names a block: its type, and for an array type the
 * element and cookie bytes its size must fit (elem_bytes 0: any size);
 * fits says whether the block found did. */
struct retype_arg {
	uint32_t type;
	uint64_t elem_bytes, cookie_bytes;
	int fits;
};

static int set_type_fn(void *arg, uintptr_t addr, struct hp_live_block *blk)
{
	struct retype_arg *r = arg;

	/* An array of T is its cookie and a whole number of T: a block of
	 * another size holds something else (a pool's chunk with an object
	 * placed at its start), and keeps its type. */
	if (r->elem_bytes && (blk->size < r->cookie_bytes + r->elem_bytes ||
			      (blk->size - r->cookie_bytes) % r->elem_bytes))
		return HP_LIVE_KEEP;
	r->fits = 1;
	return retype(addr, r->type, blk);
}

/* The id of the explicit type (name, shape), the thread's cached one when
 * it asked for the same last time; 0 when the table is full. */
static uint32_t explicit_type(struct hp_attr *a, const char *name, uint64_t shape)
{
	uint32_t type;

	if (a->type_name == name && a->type_id && a->type_shape == shape &&
	    hp_tags_type_is_shaped(a->type_id, name, shape))
		return a->type_id;
	type = hp_tags_type(HP_TYPE_EXPLICIT, shape, name);
	if (type) {
		a->type_name = name;
		a->type_id = type;
		a->type_shape = shape;
	}
	return type;
}

/* Names the live block at p, a custom heap's first: an arena's first
 * object starts where its chunk from malloc does, and the object is what a
 * program names (the chunk is the arena's own). 0, -ENOENT (no block at
 * p) or -EINVAL (one that r's array does not fit). */
static int set_at(uintptr_t p, struct retype_arg *r)
{
	uint32_t heaps = hp_tags_heap_count();

	r->fits = 0;
	for (uint32_t h = heaps; h >= 1; h--)
		if (hp_live_update(hp_attr_key((const void *)p, h), set_type_fn, r))
			return r->fits ? 0 : -EINVAL;
	if (hp_live_update(p, set_type_fn, r))
		return r->fits ? 0 : -EINVAL;
	return -ENOENT;
}

int hp_attr_set_type(struct hp_attr *a, const void *p, const char *name)
{
	return hp_attr_set_type_array(a, p, name, 0, 0);
}

int hp_attr_set_type_array(struct hp_attr *a, const void *first, const char *name,
			   uint64_t elem_bytes, uint64_t cookie_bytes)
{
	uint64_t shape = hp_tags_shape(elem_bytes, 0);
	struct retype_arg r = {0, shape ? elem_bytes : 0, 0, 0};
	int err;

	/* The block starts at the first element (new T, malloc, new T[n] of
	 * a T with no cookie): its type has no cookie. */
	if (!(r.type = explicit_type(a, name, shape)))
		return -ENOSPC;
	err = set_at((uintptr_t)first, &r);
	if (err != -ENOENT || !shape || !cookie_bytes || (uintptr_t)first < cookie_bytes)
		return err;
	/* Else new T[n] of a T with a cookie: the block starts before it. */
	if (!(shape = hp_tags_shape(elem_bytes, cookie_bytes)))
		return -ENOENT;
	if (!(r.type = explicit_type(a, name, shape)))
		return -ENOSPC;
	r.cookie_bytes = cookie_bytes;
	return set_at((uintptr_t)first - cookie_bytes, &r);
}

static int reset_fn(void *arg, uintptr_t addr, struct hp_live_block *blk)
{
	uint32_t heap = *(const uint32_t *)arg;

	if (addr >> 48 != heap)
		return HP_LIVE_KEEP;
	hp_agg_heap_free(blk->bucket, blk->size, heap);
	return HP_LIVE_DROP;
}

void hp_attr_heap_reset(uint32_t heap)
{
	hp_agg_heap_reset_counted(heap);
	hp_live_walk(reset_fn, &heap);
}

/* --- vtable types ------------------------------------------------------ */

/* The mapped segments of the loaded modules, sorted by start: filled and
 * read under the module table's lock, which also makes scans one at a
 * time. */
#define MAX_RANGES 8192
static struct hp_modules_range ranges[MAX_RANGES];
static uint32_t nranges;

/* The range holding a, or NULL. */
static const struct hp_modules_range *range_of(uintptr_t a)
{
	uint32_t lo = 0, hi = nranges;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (a < ranges[mid].lo)
			hi = mid;
		else if (a >= ranges[mid].hi)
			lo = mid + 1;
		else
			return &ranges[mid];
	}
	return NULL;
}

struct scan {
	uint64_t read_count;
	/* Blocks older than this many birth units (live.h) were in the
	 * previous scan and are not read again; UINT32_MAX: every block. */
	uint32_t max_age_units;
};

/* The births counted (hp_live_clock) when the last scan started, and
 * whether one did; under the module table's lock, as scans are. A block
 * is read by the first scan after its birth and not again: a C++
 * object's constructor stores its vtable pointer right after operator new
 * returns, so one look finds it, and a snapshot costs in proportion to
 * the blocks allocated since the last one, not to all those live (2 Mi
 * live blocks made each snapshot read 2 Mi words, at a cache miss each).
 * A block's birth stamp is the clock when it was inserted, so every block
 * inserted after a scan started is younger than that scan; a margin of
 * SCAN_MARGIN_UNITS more units is read again, for the stamps' rounding
 * and an object whose constructor was still running on another thread
 * during the last scan. Ages wrap every 2^16 units: after that many, or
 * on a wrap, a block may be read again, never skipped unread. */
static uint64_t last_scan_births;
static int scanned_before;
#define SCAN_MARGIN_UNITS 16u

/* The Itanium C++ ABI: an object's first word points at its vtable's
 * address point, 16 bytes into the vtable, after the offset-to-top (0 in
 * a complete object) and the typeinfo pointer. */
static int vtable_fn(void *arg, uintptr_t addr, struct hp_live_block *blk)
{
	struct scan *sc = arg;
	const struct hp_modules_range *r;
	uint32_t type;
	uint64_t w;

	if (addr >> 48 || blk->size < 8)
		return HP_LIVE_KEEP; /* a custom heap's block: its arena may be gone */
	if (hp_live_age_units(blk->born) > sc->max_age_units)
		return HP_LIVE_KEEP; /* read by an earlier scan */
	if (hp_agg_type(blk->bucket)) /* 0 for a default bucket, not read */
		return HP_LIVE_KEEP;
	sc->read_count++;
	/* Live while its shard lock is held: a free takes it out of the
	 * register before the real free. */
	w = __atomic_load_n((const uint64_t *)addr, __ATOMIC_RELAXED);
	if (w & 7 || w < 16 || !(r = range_of(w)) || w - 16 < r->lo)
		return HP_LIVE_KEEP;
	if (((const uint64_t *)w)[-2] != 0 || !range_of(((const uint64_t *)w)[-1]))
		return HP_LIVE_KEEP;
	type = hp_tags_type(HP_TYPE_VTABLE, w, NULL);
	return type ? retype(addr, type, blk) : HP_LIVE_KEEP;
}

uint64_t hp_attr_vtable_scan(void)
{
	struct scan sc = {0, UINT32_MAX};
	uint64_t births, since;

	/* Not waiting: the caller may hold the loader's lock (a dump from a
	 * dl_iterate_phdr callback) that a refreshing thread, holding the
	 * table lock, waits for. The next snapshot reads the types then. */
	if (!hp_modules_trylock())
		return 0;
	births = __atomic_load_n(&hp_live_clock.births, __ATOMIC_RELAXED);
	since = (births - last_scan_births) >> HP_LIVE_AGE_SHIFT;
	if (scanned_before && since + SCAN_MARGIN_UNITS < UINT16_MAX)
		sc.max_age_units = (uint32_t)since + SCAN_MARGIN_UNITS;
	last_scan_births = births;
	scanned_before = 1;
	nranges = hp_modules_ranges(ranges, MAX_RANGES);
	hp_live_walk_reading(vtable_fn, &sc);
	hp_modules_unlock();
	return sc.read_count;
}
