/*
 * events_timeline.c - the bytes in use over time from the event log
 * (events_timeline.h).
 *
 * hp_events_tl_open keeps the selection's blocks and puts their steps
 * (+size at the allocation, -size at the free) in time order once: the
 * allocations come sorted (hp_events_blocks), the frees are sorted and
 * merged in. Each
 * timeline then gives every block its group (group_of), and sweeps the
 * steps twice, bucket by bucket: the first sweep finds each group's
 * highest point, which ranks the groups; the second writes the points of
 * the top ones, the rest summed in "other". A bucket is swept in two
 * halves: its steps up to the moment their total was highest, a point at
 * the bucket's start for each group they changed; the steps after, a
 * point at its end.
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
#include "../common/vec.h"

#define NONE UINT32_MAX

/* A change of the bytes in use: block's +bytes at t (or -bytes). */
struct step {
	uint64_t t;
	uint32_t block;
	int freed;
};

/* A kept block: its key and its bytes (unbiased). */
struct kblock {
	uint32_t stack_id, type_tag, origin_tag;
	uint64_t size, alloc_ns;
	double bytes;
};

struct hp_events_tl {
	const struct hp_model *m;
	struct kblock *blocks;
	size_t nblocks;
	struct step *steps;
	size_t nsteps;
	uint64_t from_ns, to_ns, bucket_ns;
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

static int by_step(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->freed != y->freed)
		return x->freed ? -1 : 1; /* frees first: one moment anyway */
	return x->block < y->block ? -1 : x->block > y->block;
}

int hp_events_tl_open(const struct hp_model *m, const struct hp_events_select *sel,
		      struct hp_events_tl **out)
{
	static const struct hp_events_select all = {0};
	const struct hp_capture *cap = m->cap;
	struct hp_events_tl *t;
	struct hp_ev_block *b = NULL;
	struct step *frees = NULL;
	size_t nb = 0, nfrees = 0;
	uint64_t end;

	*out = NULL;
	if (!hp_events_has_log(cap))
		return -ENODATA;
	if (!sel)
		sel = &all;
	if (!(t = calloc(1, sizeof *t)))
		return -ENOMEM;
	t->m = m;
	if (hp_events_blocks(cap, &b, &nb, &end))
		goto nomem;
	t->from_ns = sel->between ? sel->from_ns : 0;
	t->to_ns = sel->between ? sel->to_ns : end;
	t->bucket_ns = hp_events_tl_bucket_ns(t->to_ns - t->from_ns);
	t->blocks = malloc((nb ? nb : 1) * sizeof *t->blocks);
	t->steps = malloc((2 * nb + 1) * sizeof *t->steps);
	frees = malloc((nb ? nb : 1) * sizeof *frees);
	if (!t->blocks || !t->steps || !frees)
		goto nomem;
	for (size_t i = 0; i < nb; i++) {
		const struct hp_ev_block *x = &b[i];
		struct hp_rec_bucket raw = {.size = x->size, .alloc_count = 1, .alloc_bytes = x->size};
		uint32_t k = (uint32_t)t->nblocks;
		if (x->alloc_ns < t->from_ns || x->alloc_ns > t->to_ns ||
		    !hp_events_keep(cap, sel, x, end))
			continue;
		t->blocks[t->nblocks++] = (struct kblock){
			x->stack_id, x->type_tag, x->origin_tag, x->size, x->alloc_ns,
			(double)x->size *
				(m->sampled ? hp_model_unbias_scale(&raw, m->sample_rate_bytes) : 1)};
		if (x->free_ns != UINT64_MAX && x->free_ns <= t->to_ns)
			frees[nfrees++] = (struct step){x->free_ns, k, 1};
	}
	/* The allocations come in time order (the blocks' order); the frees
	 * are sorted, then merged in, first at equal times. */
	hp_sort(frees, nfrees, sizeof *frees, by_step);
	for (size_t a = 0, f = 0; a < t->nblocks || f < nfrees;) {
		if (f < nfrees && (a == t->nblocks || frees[f].t <= t->blocks[a].alloc_ns)) {
			t->steps[t->nsteps++] = frees[f++];
		} else {
			t->steps[t->nsteps++] = (struct step){t->blocks[a].alloc_ns, (uint32_t)a, 0};
			a++;
		}
	}
	free(frees);
	free(b);
	*out = t;
	return 0;
nomem:
	free(frees);
	free(b);
	hp_events_tl_close(t);
	return -ENOMEM;
}

void hp_events_tl_close(struct hp_events_tl *t)
{
	if (!t)
		return;
	free(t->blocks);
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
	uint32_t *of;             /* per kept block: its group, or NONE */
	struct hp_hindex seen;    /* a block of each key met (stack, type tag,
				   * origin tag; size too when sampled): the
				   * blocks of one key are of one group */
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

/* Block x's group in g's dimension, NONE for one the view leaves out. */
static int group_named_of(struct groups *g, const struct kblock *x, uint32_t *out);

/* Block i's group: that of the first block of its key, or named. */
static int group_of(struct groups *g, size_t i)
{
	const struct kblock *x = &g->t->blocks[i];
	int sampled = g->t->m->sampled;
	uint64_t h = key_hash(x->stack_id, x->type_tag, x->origin_tag) ^
		     (sampled ? hp_hash_u64(x->size) : 0);
	struct hp_hindex_probe it;
	uint32_t k;
	int err;

	hp_hindex_probe(&g->seen, h, &it);
	while ((k = hp_hindex_next(&g->seen, &it)) != HP_HINDEX_NONE) {
		const struct kblock *y = &g->t->blocks[k];
		if (y->stack_id == x->stack_id && y->type_tag == x->type_tag &&
		    y->origin_tag == x->origin_tag && (!sampled || y->size == x->size)) {
			g->of[i] = g->of[k];
			return 0;
		}
	}
	if ((err = group_named_of(g, x, &g->of[i])) != 0)
		return err;
	return hp_hindex_add(&g->seen, h, (uint32_t)i);
}

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

/* Applies steps [a, b) to slots (slot_of: per kept block). */
static void apply(struct sweep *w, const struct hp_events_tl *t, const uint32_t *slot_of,
		  size_t a, size_t b)
{
	for (size_t i = a; i < b; i++) {
		const struct step *s = &t->steps[i];
		uint32_t k = slot_of[s->block];
		if (k == NONE)
			continue;
		w->bytes[k] += s->freed ? -t->blocks[s->block].bytes : t->blocks[s->block].bytes;
		w->objects[k] += s->freed ? -1 : 1;
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

static int sweep(const struct hp_events_tl *t, const uint32_t *slot_of, struct sweep *w)
{
	size_t i = 0;
	double total = 0;
	int err = 0;

	while (i < t->nsteps && !err) {
		uint64_t k = (t->steps[i].t - t->from_ns) / t->bucket_ns;
		uint64_t start = t->from_ns + k * t->bucket_ns;
		uint64_t end = start > UINT64_MAX - t->bucket_ns ? UINT64_MAX : start + t->bucket_ns;
		size_t j = i, best = i;
		double best_total = total;
		/* The moment of the bucket when the total was highest: after
		 * steps [i, best). Its first moment at least (a time at the
		 * clock's end, in a hostile capture, is in no bucket's span). */
		while (j < t->nsteps && (j == i || t->steps[j].t < end)) {
			uint64_t now = t->steps[j].t;
			for (; j < t->nsteps && t->steps[j].t == now; j++) {
				const struct step *s = &t->steps[j];
				if (slot_of[s->block] != NONE)
					total += s->freed ? -t->blocks[s->block].bytes
							  : t->blocks[s->block].bytes;
			}
			if (total > best_total) {
				best_total = total;
				best = j;
			}
		}
		apply(w, t, slot_of, i, best);
		err = take(w, start);
		apply(w, t, slot_of, best, j);
		if (!err)
			err = take(w, end < t->to_ns ? end : t->to_ns);
		i = j;
	}
	return err;
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
	if (!(g.of = malloc((t->nblocks ? t->nblocks : 1) * sizeof *g.of)))
		goto out;
	if ((err = index_model(&g)) != 0)
		goto out;
	for (size_t i = 0; i < t->nblocks; i++)
		if ((err = group_of(&g, i)) != 0)
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
	slot_of = malloc((t->nblocks ? t->nblocks : 1) * sizeof *slot_of);
	if (!w.bytes || !w.objects || !w.touched || !w.list || !w.max || !w.max_t || !rank ||
	    !slot_of)
		goto out;
	/* The first sweep: each group's highest point. */
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
		for (size_t i = 0; i < t->nblocks; i++)
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
	hp_hindex_free(&g.seen);
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
