/*
 * events_timeline.c - the bytes in use over time from the event log
 * (events_timeline.h).
 *
 * hp_events_tl_open reads the log once in time order (events_int.h) and
 * keeps the steps of the selection's blocks (+size at the allocation,
 * -size at the free) as varints: the time's delta, the block's key
 * (stack, type tag, origin tag; size too when sampled), its size (when
 * not); within one moment (one ns) frees first, each half in the blocks'
 * order (allocation time, address), as a sum of doubles wants them. Each
 * timeline then gives every key its group (group_named_of), and sweeps
 * the steps twice, bucket by bucket: the first sweep finds each group's
 * highest point, which ranks the groups; the second writes the points of
 * the top ones, the rest summed in "other". A bucket is swept in two
 * halves: its steps up to the moment their total was highest, a point at
 * the bucket's start for each group they changed; the steps after, a
 * point at its end. Unsampled, each half's steps are summed per key once
 * (struct agg, for one set of keys left out: the page's groupings share
 * it) and the sweeps add the sums: the same integers.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#include "events_timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/sort.h"
#include "../common/table.h"
#include "../common/units.h"
#include "../common/varint.h"
#include "../common/vec.h"
#include "events_int.h"

#define NONE UINT32_MAX

/* A key of the kept blocks (stack, type tag, origin tag; size too in a
 * sampled capture): its first block in the blocks' order (allocation
 * time, address, tick, event), whose size names it, and the bytes a
 * block of it counts (sampled: unbiased, the key's size). */
struct kblock {
	uint32_t stack_id, type_tag, origin_tag;
	uint64_t size;
	double bytes;
	uint64_t first_ns, first_addr, first_tick;
	uint32_t first_i;
};

/* The steps of a bucket summed per key, for one set of keys left out:
 * half 0, the steps up to the bucket's highest moment, half 1 the rest
 * (struct agg). */
struct agg_entry {
	uint32_t key;
	int64_t bytes, objects;
};

struct agg_bucket {
	uint64_t start, end;
	size_t first, mid; /* entries [first, mid): half 0; [mid, next first): half 1 */
};

struct agg {
	uint8_t *out; /* the keys left out (their group NONE) it is for, per key */
	struct agg_bucket *b;
	size_t nb, alloc_b;
	struct agg_entry *e;
	size_t ne, alloc_e;
	int built;
};

struct hp_events_tl {
	const struct hp_model *m;
	struct kblock *keys; /* by first block, in the blocks' order */
	size_t nkeys, alloc_keys;
	struct hp_hindex kindex;
	uint8_t *steps; /* the steps, varints: t's delta, key << 1 | freed, size (unsampled) */
	size_t nbytes, alloc_bytes, nsteps;
	uint64_t from_ns, to_ns, bucket_ns;
	uint64_t sum_bytes; /* the kept blocks' sizes summed, UINT64_MAX past it */
	struct agg agg;
};

uint64_t hp_events_tl_bucket_ns(uint64_t span_ns)
{
	static const uint64_t mant[] = {1, 2, 5};
	uint64_t w = 1000000; /* 1 ms */

	for (unsigned k = 0;; k++) {
		uint64_t x = w * mant[k % 3];
		/* buckets 0 .. span / x: a step at the span's end opens the last */
		if (span_ns / x < HP_EVENTS_TL_MAX_BUCKETS || x > UINT64_MAX / 100)
			return x;
		if (k % 3 == 2)
			w *= 10;
	}
}

/* A step of one moment while the log is read: the block's allocation
 * (time, address, tick, event: the blocks' order) and key. */
struct mstep {
	uint64_t alloc_ns, addr, tick, size;
	uint32_t i, key;
	int freed;
};

static int by_mstep(const void *a, const void *b)
{
	const struct mstep *x = a, *y = b;

	if (x->freed != y->freed)
		return x->freed ? -1 : 1; /* frees first: one moment anyway */
	if (x->alloc_ns != y->alloc_ns)
		return x->alloc_ns < y->alloc_ns ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->tick != y->tick)
		return x->tick < y->tick ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static uint64_t key_hash(uint64_t stack, uint64_t type, uint64_t origin);

/* The key of block b (allocated by event i, its key stack, type,
 * origin), added when new; b made its first block when it comes before
 * it in the blocks' order. Returns 0, or -ENOMEM. */
static int key_of(struct hp_events_tl *t, const struct ev_open *b, uint32_t stack,
		  uint32_t type, uint32_t origin, uint32_t *out)
{
	int sampled = t->m->sampled;
	uint64_t h = key_hash(stack, type, origin) ^ (sampled ? hp_hash_u64(b->size) : 0);
	struct hp_hindex_probe it;
	struct hp_rec_bucket raw = {.size = b->size, .alloc_count = 1, .alloc_bytes = b->size};
	struct kblock *y;
	uint32_t k;

	hp_hindex_probe(&t->kindex, h, &it);
	while ((k = hp_hindex_next(&t->kindex, &it)) != HP_HINDEX_NONE) {
		y = &t->keys[k];
		if (y->stack_id == stack && y->type_tag == type && y->origin_tag == origin &&
		    (!sampled || y->size == b->size)) {
			struct mstep first = {y->first_ns, y->first_addr, y->first_tick, 0,
					      y->first_i, 0, 0};
			struct mstep me = {b->alloc_ns, b->addr, b->alloc_tick, 0, b->i, 0, 0};
			if (by_mstep(&me, &first) < 0) {
				y->size = b->size;
				y->first_ns = b->alloc_ns;
				y->first_addr = b->addr;
				y->first_tick = b->alloc_tick;
				y->first_i = b->i;
			}
			*out = k;
			return 0;
		}
	}
	if (t->nkeys >= NONE / 2 || hp_vec_grow(&t->keys, &t->alloc_keys, t->nkeys + 1) ||
	    hp_hindex_add(&t->kindex, h, (uint32_t)t->nkeys))
		return -ENOMEM;
	t->keys[t->nkeys] = (struct kblock){
		stack,
		type,
		origin,
		b->size,
		(double)b->size * (sampled ? hp_model_unbias_scale(&raw, t->m->sample_rate_bytes) : 1),
		b->alloc_ns,
		b->addr,
		b->alloc_tick,
		b->i};
	*out = (uint32_t)t->nkeys++;
	return 0;
}

/* Appends a moment's steps: frees first, each half in the blocks' order
 * (the order of a sum of unbiased bytes). */
static int flush_moment(struct hp_events_tl *t, struct mstep *ms, size_t n, uint64_t ns,
			uint64_t *last_t)
{
	if (n > 1)
		hp_sort(ms, n, sizeof *ms, by_mstep);
	if (hp_vec_grow(&t->steps, &t->alloc_bytes, t->nbytes + n * 3 * HP_VARINT_MAX_BYTES))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		t->nbytes += hp_varint_put(t->steps + t->nbytes, ns - *last_t);
		t->nbytes += hp_varint_put(t->steps + t->nbytes,
					   (uint64_t)ms[i].key << 1 | (ms[i].freed != 0));
		if (!t->m->sampled)
			t->nbytes += hp_varint_put(t->steps + t->nbytes, ms[i].size);
		*last_t = ns;
		t->nsteps++;
	}
	return 0;
}

int hp_events_tl_open(const struct hp_model *m, const struct hp_events_select *sel,
		      struct hp_events_tl **out)
{
	static const struct hp_events_select all = {0};
	const struct hp_capture *cap = m->cap;
	struct hp_events_tl *t;
	struct ev_order o;
	struct ev_future f;
	struct ev_match mt;
	struct ev_item it;
	struct mstep *ms = NULL;
	size_t nms = 0, alloc_ms = 0;
	uint64_t moment = 0, last_t = 0;
	int ret, r;

	*out = NULL;
	if (!hp_events_has_log(cap))
		return -ENODATA;
	if (!sel)
		sel = &all;
	if (!(t = calloc(1, sizeof *t)))
		return -ENOMEM;
	t->m = m;
	if (hp_ev_order_init(&o, cap)) {
		free(t);
		return -ENOMEM;
	}
	if (hp_ev_future_read(&f, &o, sel, 0)) {
		hp_ev_order_free(&o);
		free(t);
		return -ENOMEM;
	}
	t->from_ns = sel->between ? sel->from_ns : 0;
	t->to_ns = sel->between ? sel->to_ns : o.end_ns;
	t->bucket_ns = hp_events_tl_bucket_ns(t->to_ns - t->from_ns);
	/* The steps in time order as the matching meets them, a moment (one
	 * ns) at a time: a kept block's allocation in the span, and its free
	 * when in it too. flag: the block is kept. */
	ret = hp_ev_match_init(&mt, &o);
	while (!ret && (r = hp_ev_match_next(&mt, &it)) != 0) {
		struct ev_open *b = it.b;
		struct mstep x;
		if (r < 0) {
			ret = r;
			break;
		}
		if (it.kind == HP_EV_IT_LEFT)
			continue;
		if (it.kind == HP_EV_IT_OPEN) {
			b->flag = b->alloc_ns >= t->from_ns && b->alloc_ns <= t->to_ns &&
				  hp_ev_future_keeps(&f, cap, sel, b->i);
			if (!b->flag)
				continue;
		} else if (!b->flag || it.ns > t->to_ns) {
			continue;
		}
		if (it.kind == HP_EV_IT_OPEN) {
			uint32_t st, ty, or;
			hp_ev_future_key(&f, cap, b->i, &st, &ty, &or);
			if ((ret = key_of(t, b, st, ty, or, &b->key)) != 0)
				break;
			t->sum_bytes = t->sum_bytes > UINT64_MAX - b->size ? UINT64_MAX
									 : t->sum_bytes + b->size;
		}
		x = (struct mstep){b->alloc_ns, b->addr, b->alloc_tick, b->size, b->i, b->key,
				   it.kind == HP_EV_IT_CLOSE};
		if (nms && it.ns != moment) {
			if ((ret = flush_moment(t, ms, nms, moment, &last_t)) != 0)
				break;
			nms = 0;
		}
		moment = it.ns;
		if (hp_vec_grow(&ms, &alloc_ms, nms + 1)) {
			ret = -ENOMEM;
			break;
		}
		ms[nms++] = x;
	}
	if (!ret && nms)
		ret = flush_moment(t, ms, nms, moment, &last_t);
	hp_ev_match_free(&mt);
	hp_ev_future_free(&f);
	hp_ev_order_free(&o);
	free(ms);
	if (ret) {
		hp_events_tl_close(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void hp_events_tl_close(struct hp_events_tl *t)
{
	if (!t)
		return;
	free(t->keys);
	hp_hindex_free(&t->kindex);
	free(t->agg.out);
	free(t->agg.b);
	free(t->agg.e);
	free(t->steps);
	free(t);
}

void hp_events_tl_span(const struct hp_events_tl *t, uint64_t *from_ns, uint64_t *to_ns,
		       uint64_t *bucket_ns)
{
	*from_ns = t->from_ns;
	*to_ns = t->to_ns;
	*bucket_ns = t->bucket_ns;
}

/* --- groups -------------------------------------------------------------- */

/* The groups of one timeline while it is built. */
struct groups {
	struct hp_events_tl *t;
	int dim;
	struct hp_hindex mindex;  /* the model's buckets by (stack, type, origin) */
	struct hp_u64map types;   /* type tag -> a model bucket of that tag */
	struct hp_strtab keys;    /* "key\tsource" per group */
	const char **sources;     /* per group */
	uint32_t *stacks;         /* per group: by stack, its stack */
	size_t alloc_sources, alloc_stacks;
	uint32_t *of;             /* per key: its group, or NONE */
};

static uint64_t key_hash(uint64_t stack, uint64_t type, uint64_t origin)
{
	const uint64_t w[3] = {stack, type, origin};
	return hp_hash_words(w, 3, 0x65766c6f67746cull);
}

static int index_model(struct groups *g)
{
	const struct hp_model *m = g->t->m;

	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_rec_bucket *b = m->buckets[i].raw;
		uint32_t any;
		if (!b)
			continue;
		if (hp_hindex_add(&g->mindex, key_hash(b->stack_id, b->type_tag, b->origin_tag),
				  (uint32_t)i))
			return -ENOMEM;
		if (b->type_tag && !hp_u64map_get(&g->types, b->type_tag, &any) &&
		    hp_u64map_put(&g->types, b->type_tag, (uint32_t)i))
			return -ENOMEM;
	}
	return 0;
}

/* The model's bucket of block x's key (its size too in a sampled
 * capture, whose buckets are per size), or NULL. */
static const struct hp_mbucket *model_bucket(const struct groups *g, const struct kblock *x)
{
	const struct hp_model *m = g->t->m;
	struct hp_hindex_probe it;
	uint32_t i;

	hp_hindex_probe(&g->mindex, key_hash(x->stack_id, x->type_tag, x->origin_tag), &it);
	while ((i = hp_hindex_next(&g->mindex, &it)) != HP_HINDEX_NONE) {
		const struct hp_rec_bucket *b = m->buckets[i].raw;
		if (b->stack_id == x->stack_id && b->type_tag == x->type_tag &&
		    b->origin_tag == x->origin_tag && (!b->size || b->size == x->size))
			return &m->buckets[i];
	}
	return NULL;
}

/* The type of a block whose key the model has no bucket of (the model is
 * of a snapshot before the block, or its bucket was left out once empty):
 * the model's type of its type tag, else its stack's inferred type (attr.h),
 * else unknown by its size, as timeline_by.c names it. */
static const char *type_of(const struct groups *g, const struct kblock *x, char *buf,
			   size_t cap, const char **source)
{
	const struct hp_model *m = g->t->m;
	uint64_t elem, cookie;
	const char *inferred = hp_mstack_inferred(m, &m->stacks[x->stack_id], &elem, &cookie);
	char bytes[32];
	uint32_t i;

	if (x->type_tag && hp_u64map_get(&g->types, x->type_tag, &i))
		return hp_group_key(m, &m->buckets[i], HP_BY_TYPE, buf, cap, source);
	if (inferred) {
		*source = hp_type_origin_name(
			(enum hp_type_origin)m->stacks[x->stack_id].inferred_source);
		return inferred;
	}
	*source = hp_type_origin_name(HP_TYPESRC_UNKNOWN);
	if (!m->sampled)
		return "unknown"; /* the blocks of a key have many sizes */
	snprintf(buf, cap, "unknown (%s)", hp_units_bytes(bytes, sizeof bytes, (double)x->size));
	return buf;
}

/* The group of key (and source, stack), added on first sight. */
static int group_named(struct groups *g, const char *key, const char *source, uint32_t stack,
		       uint32_t *out)
{
	char k[2048];
	size_t before = g->keys.count;
	uint32_t i;

	snprintf(k, sizeof k, "%s%s%s", key, source ? "\t" : "", source ? source : "");
	if (hp_vec_grow(&g->sources, &g->alloc_sources, before + 1) ||
	    hp_vec_grow(&g->stacks, &g->alloc_stacks, before + 1) ||
	    hp_strtab_intern(&g->keys, k, &i))
		return -ENOMEM;
	if (i == before) {
		g->sources[i] = source;
		g->stacks[i] = stack;
	}
	*out = i;
	return 0;
}

/* Key x's group in g's dimension (the blocks of one key are of one
 * group), NONE for one the view leaves out. */
static int group_named_of(struct groups *g, const struct kblock *x, uint32_t *out)
{
	const struct hp_model *m = g->t->m;
	const struct hp_cap_tag *o = hp_capture_tag(m->cap, HP_TAG_ORIGIN, x->origin_tag);
	struct hp_mbucket fake = {.stack = x->stack_id};
	const char *key, *source = NULL;
	char buf[2048];

	*out = NONE;
	if (x->stack_id >= m->nstacks || (m->filter_stacks && !m->stacks[x->stack_id].nbuckets))
		return 0;
	if (o) {
		fake.context = o->a;
		fake.thread = o->b;
		fake.heap = o->c;
	}
	if (g->dim != HP_BY_HEAP && fake.heap != m->view_heap)
		return 0;
	if (g->dim != HP_BY_STACK && m->stacks[x->stack_id].suppressed)
		return 0;
	switch (g->dim) {
	case HP_EVENTS_TL_TOTAL:
		return group_named(g, "in use", NULL, 0, out);
	case HP_BY_STACK:
		snprintf(buf, sizeof buf, "%" PRIu32, x->stack_id);
		return group_named(g, buf, NULL, x->stack_id, out);
	case HP_BY_TYPE: {
		const struct hp_mbucket *b = model_bucket(g, x);
		key = b ? hp_group_key(m, b, HP_BY_TYPE, buf, sizeof buf, &source)
			: type_of(g, x, buf, sizeof buf, &source);
		break;
	}
	default: {
		const struct hp_mbucket *b = model_bucket(g, x);
		key = hp_group_key(m, b ? b : &fake, (enum hp_dim)g->dim, buf, sizeof buf, NULL);
		break;
	}
	}
	return group_named(g, key, source, 0, out);
}

/* --- the sweep ----------------------------------------------------------- */

/* One sweep's state: per slot its bytes and blocks now, whether the
 * current half-bucket changed it, and where its points go (out, or only
 * its highest: max). */
struct sweep {
	size_t nslots;
	double *bytes, *objects;
	char *touched;
	uint32_t *list;
	size_t nlist;
	struct hp_tl_group *out; /* NULL: the first sweep */
	double *max;
	uint64_t *max_t;
};

static int add_point(struct hp_tl_group *s, uint64_t t, double bytes, double objects)
{
	struct hp_site_point *last = s->npoints ? &s->points[s->npoints - 1] : NULL;

	if (last && last->time_ns == t) {
		last->inuse_bytes = bytes;
		last->inuse_objects = objects;
		return 0;
	}
	if (last && last->inuse_bytes == bytes && last->inuse_objects == objects)
		return 0;
	if (!last && bytes == 0 && objects == 0)
		return 0;
	if (hp_vec_grow(&s->points, &s->cap, s->npoints + 1))
		return -ENOMEM;
	s->points[s->npoints++] = (struct hp_site_point){t, bytes, objects};
	return 0;
}

/* Where a reading of the steps is: the next step's index and byte, the
 * last step's time. */
struct cur {
	size_t i, off;
	uint64_t t;
};

/* A step: key's block +bytes at t (or -bytes, freed). */
struct tstep {
	uint64_t t;
	uint32_t key;
	int freed;
	double bytes;
};

static inline uint64_t get_varint(const uint8_t *p, size_t *off)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = p[(*off)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

/* The step at c, c moved past it. */
static inline void step_at(const struct hp_events_tl *t, struct cur *c, struct tstep *s)
{
	uint64_t kv;

	c->t += get_varint(t->steps, &c->off);
	kv = get_varint(t->steps, &c->off);
	s->t = c->t;
	s->key = (uint32_t)(kv >> 1);
	s->freed = (int)(kv & 1);
	s->bytes = t->m->sampled ? t->keys[s->key].bytes : (double)get_varint(t->steps, &c->off);
	c->i++;
}

/* Applies the steps from c to b (b->i) to slots (slot_of: per key). */
static void apply(struct sweep *w, const struct hp_events_tl *t, const uint32_t *slot_of,
		  struct cur c, const struct cur *b)
{
	struct tstep s;

	while (c.i < b->i) {
		uint32_t k;
		step_at(t, &c, &s);
		k = slot_of[s.key];
		if (k == NONE)
			continue;
		w->bytes[k] += s.freed ? -s.bytes : s.bytes;
		w->objects[k] += s.freed ? -1 : 1;
		if (!w->touched[k]) {
			w->touched[k] = 1;
			w->list[w->nlist++] = k;
		}
	}
}

/* A point at time at for each slot the last half changed. */
static int take(struct sweep *w, uint64_t at)
{
	int err = 0;

	for (size_t i = 0; i < w->nlist; i++) {
		uint32_t k = w->list[i];
		w->touched[k] = 0;
		if (err)
			continue;
		if (w->out) {
			err = add_point(&w->out[k], at, w->bytes[k], w->objects[k]);
		} else if (w->bytes[k] > w->max[k]) {
			w->max[k] = w->bytes[k];
			w->max_t[k] = at;
		}
	}
	w->nlist = 0;
	return err;
}

/* The bucket of the step at c: its start and end, best: after the steps
 * up to its moment when the total (of the keys of slot_of not NONE) was
 * highest, its first such moment at least, j: after its last step;
 * *total carried from the bucket before (a time at the clock's end, in
 * a hostile capture, is in no bucket's span: its step makes a bucket). */
static void bucket_scan(const struct hp_events_tl *t, const uint32_t *slot_of, struct cur c,
			double *total, uint64_t *start, uint64_t *end, struct cur *best,
			struct cur *j)
{
	struct cur first = c, next;
	struct tstep s;
	uint64_t k, now = 0;
	double best_total = *total;

	step_at(t, &first, &s);
	k = (s.t - t->from_ns) / t->bucket_ns;
	*start = t->from_ns + k * t->bucket_ns;
	*end = *start > UINT64_MAX - t->bucket_ns ? UINT64_MAX : *start + t->bucket_ns;
	*j = *best = c;
	while (j->i < t->nsteps) {
		next = *j;
		step_at(t, &next, &s);
		if (j->i == c.i || s.t != now) { /* a moment starts */
			if (j->i != c.i && *total > best_total) {
				best_total = *total;
				*best = *j;
			}
			if (j->i != c.i && s.t >= *end)
				return;
			now = s.t;
		}
		if (slot_of[s.key] != NONE)
			*total += s.freed ? -s.bytes : s.bytes;
		*j = next;
	}
	if (*total > best_total)
		*best = *j;
}

/* The sweep step by step: a sampled capture's unbiased bytes summed in
 * the steps' order. */
static int sweep_steps(const struct hp_events_tl *t, const uint32_t *slot_of, struct sweep *w)
{
	struct cur c = {0};
	double total = 0;
	int err = 0;

	while (c.i < t->nsteps && !err) {
		struct cur best, j;
		uint64_t start, end;
		bucket_scan(t, slot_of, c, &total, &start, &end, &best, &j);
		apply(w, t, slot_of, c, &best);
		err = take(w, start);
		apply(w, t, slot_of, best, &j);
		if (!err)
			err = take(w, end < t->to_ns ? end : t->to_ns);
		c = j;
	}
	return err;
}

/* Sums the steps from c to b per key (of: not NONE) into t->agg's
 * entries, in the order the keys first come. */
static int agg_half(struct hp_events_tl *t, const uint32_t *of, struct cur c, const struct cur *b,
		    int64_t *bytes, int64_t *objects, uint32_t *list, uint8_t *touched)
{
	struct agg *a = &t->agg;
	struct tstep s;
	size_t nlist = 0;

	while (c.i < b->i) {
		step_at(t, &c, &s);
		if (of[s.key] == NONE)
			continue;
		bytes[s.key] += s.freed ? -(int64_t)s.bytes : (int64_t)s.bytes;
		objects[s.key] += s.freed ? -1 : 1;
		if (!touched[s.key]) {
			touched[s.key] = 1;
			list[nlist++] = s.key;
		}
	}
	if (hp_vec_grow(&a->e, &a->alloc_e, a->ne + nlist))
		return -ENOMEM;
	for (size_t i = 0; i < nlist; i++) {
		uint32_t k = list[i];
		a->e[a->ne++] = (struct agg_entry){k, bytes[k], objects[k]};
		bytes[k] = objects[k] = 0;
		touched[k] = 0;
	}
	return 0;
}

/* t->agg for the keys of (their groups) of, built unless it is. */
static int agg_for(struct hp_events_tl *t, const uint32_t *of)
{
	struct agg *a = &t->agg;
	struct cur c = {0};
	double total = 0;
	int64_t *bytes = NULL, *objects = NULL;
	uint32_t *list = NULL;
	uint8_t *touched = NULL, *out = malloc(t->nkeys ? t->nkeys : 1);
	int err = -ENOMEM;

	if (!out)
		return -ENOMEM;
	for (size_t k = 0; k < t->nkeys; k++)
		out[k] = of[k] == NONE;
	if (a->built && memcmp(a->out, out, t->nkeys) == 0) {
		free(out);
		return 0;
	}
	free(a->out);
	a->out = out;
	a->built = 0;
	a->nb = a->ne = 0;
	bytes = calloc(t->nkeys + 1, sizeof *bytes);
	objects = calloc(t->nkeys + 1, sizeof *objects);
	list = calloc(t->nkeys + 1, sizeof *list);
	touched = calloc(t->nkeys + 1, 1);
	if (!bytes || !objects || !list || !touched)
		goto out;
	while (c.i < t->nsteps) {
		struct cur best, j;
		struct agg_bucket *x;
		if (hp_vec_grow(&a->b, &a->alloc_b, a->nb + 1))
			goto out;
		x = &a->b[a->nb++];
		bucket_scan(t, of, c, &total, &x->start, &x->end, &best, &j);
		x->first = a->ne;
		if (agg_half(t, of, c, &best, bytes, objects, list, touched))
			goto out;
		a->b[a->nb - 1].mid = a->ne;
		if (agg_half(t, of, best, &j, bytes, objects, list, touched))
			goto out;
		c = j;
	}
	a->built = 1;
	err = 0;
out:
	free(bytes);
	free(objects);
	free(list);
	free(touched);
	return err;
}

/* Adds entries [a, b) of t->agg to slots. */
static void agg_apply(struct sweep *w, const struct hp_events_tl *t, const uint32_t *slot_of,
		      size_t a, size_t b)
{
	for (size_t i = a; i < b; i++) {
		const struct agg_entry *e = &t->agg.e[i];
		uint32_t k = slot_of[e->key];
		w->bytes[k] += (double)e->bytes;
		w->objects[k] += (double)e->objects;
		if (!w->touched[k]) {
			w->touched[k] = 1;
			w->list[w->nlist++] = k;
		}
	}
}

/* The sweep of the sums per bucket and key (t->agg, built for slot_of's
 * keys left out): the same points as sweep_steps when every sum is an
 * integer a double holds exactly. */
static int sweep_agg(const struct hp_events_tl *t, const uint32_t *slot_of, struct sweep *w)
{
	const struct agg *a = &t->agg;
	int err = 0;

	for (size_t i = 0; i < a->nb && !err; i++) {
		const struct agg_bucket *x = &a->b[i];
		agg_apply(w, t, slot_of, x->first, x->mid);
		err = take(w, x->start);
		agg_apply(w, t, slot_of, x->mid, i + 1 < a->nb ? a->b[i + 1].first : a->ne);
		if (!err)
			err = take(w, x->end < t->to_ns ? x->end : t->to_ns);
	}
	return err;
}

/* Unsampled sizes that sum below 2^53: every partial sum of bytes in
 * use is an integer a double holds, in any order. */
static int summable(const struct hp_events_tl *t)
{
	return !t->m->sampled && t->sum_bytes < (1ull << 53);
}

static int sweep(struct hp_events_tl *t, const uint32_t *slot_of, struct sweep *w)
{
	return summable(t) ? sweep_agg(t, slot_of, w) : sweep_steps(t, slot_of, w);
}

struct ranked {
	uint32_t group;
	double max;
	const char *key;
};

static int by_max(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->max != y->max)
		return x->max > y->max ? -1 : 1;
	return strcmp(x->key, y->key);
}

int hp_events_tl_by(struct hp_events_tl *t, int dim, unsigned top, struct hp_tl_groups *out)
{
	struct groups g = {.t = t, .dim = dim};
	struct sweep w = {0};
	struct ranked *rank = NULL;
	uint32_t *slot_of = NULL;
	size_t ngroups, shown = 0, rest = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof *out);
	out->dim = dim < 0 ? HP_BY_HEAP : (enum hp_dim)dim;
	if (!(g.of = malloc((t->nkeys ? t->nkeys : 1) * sizeof *g.of)))
		goto out;
	if ((err = index_model(&g)) != 0)
		goto out;
	for (size_t i = 0; i < t->nkeys; i++)
		if ((err = group_named_of(&g, &t->keys[i], &g.of[i])) != 0)
			goto out;
	err = -ENOMEM;
	ngroups = g.keys.count;
	w.nslots = ngroups + 1;
	w.bytes = calloc(w.nslots, sizeof *w.bytes);
	w.objects = calloc(w.nslots, sizeof *w.objects);
	w.touched = calloc(w.nslots, 1);
	w.list = calloc(w.nslots, sizeof *w.list);
	w.max = calloc(w.nslots, sizeof *w.max);
	w.max_t = calloc(w.nslots, sizeof *w.max_t);
	rank = calloc(ngroups + 1, sizeof *rank);
	slot_of = malloc((t->nkeys ? t->nkeys : 1) * sizeof *slot_of);
	if (!w.bytes || !w.objects || !w.touched || !w.list || !w.max || !w.max_t || !rank ||
	    !slot_of)
		goto out;
	/* The first sweep: each group's highest point. */
	if (summable(t) && (err = agg_for(t, g.of)) != 0)
		goto out;
	if ((err = sweep(t, g.of, &w)) != 0)
		goto out;
	for (size_t i = 0; i < ngroups; i++)
		rank[i] = (struct ranked){(uint32_t)i, w.max[i], hp_strtab_get(&g.keys, (uint32_t)i)};
	hp_sort(rank, ngroups, sizeof *rank, by_max);
	while (shown < ngroups && (!top || shown < top) && rank[shown].max > 0)
		shown++;
	for (size_t i = shown; i < ngroups; i++)
		rest += rank[i].max > 0;
	err = 0;
	if (!shown)
		goto out;
	err = -ENOMEM;
	if (!(out->groups = calloc(shown + 1, sizeof *out->groups)))
		goto out;
	out->n = shown + (rest > 0);
	{
		/* group -> slot: its rank when shown, else other's (shown) */
		uint32_t *slot = malloc(ngroups * sizeof *slot);
		if (!slot)
			goto out;
		for (size_t i = 0; i < ngroups; i++)
			slot[rank[i].group] = i < shown ? (uint32_t)i : (uint32_t)shown;
		for (size_t i = 0; i < t->nkeys; i++)
			slot_of[i] = g.of[i] == NONE ? NONE : slot[g.of[i]];
		free(slot);
	}
	for (size_t i = 0; i < shown; i++) {
		struct hp_tl_group *s = &out->groups[i];
		s->source = g.sources[rank[i].group];
		s->stack = g.stacks[rank[i].group];
		s->members = 1;
		s->max_bytes = rank[i].max;
		s->max_time_ns = w.max_t[rank[i].group];
	}
	out->groups[shown].other = 1;
	out->groups[shown].key = "other";
	out->groups[shown].members = rest;
	memset(w.bytes, 0, w.nslots * sizeof *w.bytes);
	memset(w.objects, 0, w.nslots * sizeof *w.objects);
	w.out = out->groups;
	if ((err = sweep(t, slot_of, &w)) != 0)
		goto out;
	if (rest) { /* other's highest: of its own sum */
		struct hp_tl_group *o = &out->groups[shown];
		for (size_t i = 0; i < o->npoints; i++)
			if (o->points[i].inuse_bytes > o->max_bytes) {
				o->max_bytes = o->points[i].inuse_bytes;
				o->max_time_ns = o->points[i].time_ns;
			}
	} else {
		free(out->groups[shown].points);
		out->groups[shown] = (struct hp_tl_group){0};
	}
	/* The keys move to the output, the shown ones without their source. */
	out->keys = g.keys;
	memset(&g.keys, 0, sizeof g.keys);
	for (size_t i = 0; i < shown; i++) {
		char *k = (char *)hp_strtab_get(&out->keys, rank[i].group), *tab;
		if (out->groups[i].source && (tab = strrchr(k, '\t')) != NULL)
			*tab = '\0';
		out->groups[i].key = dim == HP_BY_STACK ? "" : k;
	}
	err = 0;
out:
	if (err)
		hp_timeline_by_free(out);
	hp_hindex_free(&g.mindex);
	hp_u64map_free(&g.types);
	hp_strtab_free(&g.keys);
	free(g.sources);
	free(g.stacks);
	free(g.of);
	free(w.bytes);
	free(w.objects);
	free(w.touched);
	free(w.list);
	free(w.max);
	free(w.max_t);
	free(rank);
	free(slot_of);
	return err;
}
