/*
 * timeline_by.c - the per-site timeline by dimension (see timeline.h).
 *
 * Two replays of the ticks, as timeline.c's. The first gives each
 * timeline bucket (a recorder id, through a u64 map) its group when it is
 * first met, and keeps each group's sum as it goes (minus the bucket's
 * old value, plus its new one) and its highest sum at the end of a tick
 * (the entries of a tick are one moment: a bucket that grew and another
 * that shrank in it make no false high in between). The top groups are
 * chosen; the second replay keeps, at the end of each tick, a point for
 * each shown group it changed, and one for "other" (the rest, summed).
 *
 * A bucket's type is the model's type of the snapshot's bucket with the
 * same key (stack, type tag, origin tag, size: a recorder bucket has one
 * key for life), found through a hash index of the model's buckets; so a
 * type is named as report --by type names it. A snapshot leaves out a
 * stack's default bucket once it is empty: such a bucket is named as
 * attr.c would (type_of).
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#include "timeline.h"

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

/* A bucket of the timeline: its group (NONE: left out) and what it holds. */
struct tbucket {
	uint32_t group;
	double bytes, objects;
};

/* A group while the ticks are replayed. */
struct tgroup {
	const char *source;
	uint32_t stack;
	double bytes, objects; /* its sum now */
	double max_bytes;
	uint64_t max_time_ns;
	double peak_bytes, peak_objects; /* its sum at the peak (the model's) */
	uint32_t slot;         /* its series in the output: index, or NONE */
	int touched;           /* changed in the current tick */
};

struct by {
	const struct hp_model *m;
	enum hp_dim dim;
	struct hp_hindex mindex;  /* the model's buckets by key hash */
	struct hp_u64map types;   /* type tag -> a model bucket of that tag */
	struct hp_u64map ids;     /* recorder bucket id -> index in buckets */
	struct tbucket *buckets;
	size_t nbuckets, alloc_buckets;
	struct hp_strtab keys;    /* "key\tsource" per group, indexes groups */
	struct tgroup *groups;
	size_t alloc_groups;
	uint32_t *touched;        /* the groups changed in the current tick */
	size_t ntouched, alloc_touched;
	size_t nticks;            /* the ticks at or before the snapshot */
};

static uint64_t key_hash(uint64_t stack, uint64_t type, uint64_t origin, uint64_t size)
{
	const uint64_t w[4] = {stack, type, origin, size};
	return hp_hash_words(w, 4, 0x74696d656c696e65ull);
}

static int index_model(struct by *r)
{
	for (size_t i = 0; i < r->m->nbuckets; i++) {
		const struct hp_rec_bucket *b = r->m->buckets[i].raw;
		uint32_t any;
		if (hp_hindex_add(&r->mindex,
				  key_hash(b->stack_id, b->type_tag, b->origin_tag, b->size),
				  (uint32_t)i))
			return -ENOMEM;
		if (b->type_tag && !hp_u64map_get(&r->types, b->type_tag, &any) &&
		    hp_u64map_put(&r->types, b->type_tag, (uint32_t)i))
			return -ENOMEM;
	}
	return 0;
}

/* The model's bucket of e's key, or NULL. */
static const struct hp_mbucket *model_bucket(const struct by *r, const struct hp_rec_site *e)
{
	struct hp_hindex_probe it;
	uint32_t i;

	hp_hindex_probe(&r->mindex, key_hash(e->stack_id, e->type_tag, e->origin_tag, e->size),
			&it);
	while ((i = hp_hindex_next(&r->mindex, &it)) != HP_HINDEX_NONE) {
		const struct hp_rec_bucket *b = r->m->buckets[i].raw;
		if (b->stack_id == e->stack_id && b->type_tag == e->type_tag &&
		    b->origin_tag == e->origin_tag && b->size == e->size)
			return &r->m->buckets[i];
	}
	return NULL;
}

/* The type of a timeline bucket the snapshot does not list (a default
 * bucket all of whose blocks were typed later, by a vtable or
 * heapprof_set_type, is left out of a snapshot once empty): the model's
 * type of its type tag, else its stack's inferred type (attr.h), else unknown
 * by the mean size of the blocks it held when first seen, as attr.c names
 * it. */
static const char *type_of(const struct by *r, const struct hp_rec_site *e, char *buf,
			   size_t cap, const char **source)
{
	const struct hp_model *m = r->m;
	uint64_t elem, cookie;
	const char *inferred = hp_mstack_inferred(m, &m->stacks[e->stack_id], &elem, &cookie);
	uint32_t i;
	char bytes[32];

	if (e->type_tag && hp_u64map_get(&r->types, e->type_tag, &i))
		return hp_group_key(m, &m->buckets[i], HP_BY_TYPE, buf, cap, source);
	if (inferred) {
		*source = hp_type_origin_name((enum hp_type_origin)m->stacks[e->stack_id].inferred_source);
		return inferred;
	}
	*source = hp_type_origin_name(HP_TYPESRC_UNKNOWN);
	hp_units_bytes(bytes, sizeof bytes,
		       e->size ? (double)e->size
		       : e->in_use_count
			       ? (double)((e->in_use_bytes + e->in_use_count / 2) / e->in_use_count)
			       : 0);
	snprintf(buf, cap, e->size ? "unknown (%s)" : "unknown (avg %s)", bytes);
	return buf;
}

/* The group of key (and source, stack), added on first sight. */
static int group_named(struct by *r, const char *key, const char *source, uint32_t stack,
		       uint32_t *out)
{
	char k[2048];
	size_t before = r->keys.count;
	uint32_t i;

	/* A type's source is part of its key, as in group.c. */
	snprintf(k, sizeof k, "%s%s%s", key, source ? "\t" : "", source ? source : "");
	if (hp_vec_grow(&r->groups, &r->alloc_groups, before + 1) ||
	    hp_strtab_intern(&r->keys, k, &i))
		return -ENOMEM;
	if (i == before)
		r->groups[i] = (struct tgroup){.source = source, .stack = stack, .slot = NONE};
	*out = i;
	return 0;
}

/* The group of the bucket of entry e (of a tick tagged or not), or NONE
 * for one the view leaves out. */
static int group_of(struct by *r, const struct hp_rec_site *e, int tagged, uint32_t *out)
{
	const struct hp_model *m = r->m;
	const struct hp_cap_tag *o =
		tagged ? hp_capture_tag(m->cap, HP_TAG_ORIGIN, e->origin_tag) : NULL;
	struct hp_mbucket fake = {.stack = e->stack_id};
	const char *key, *source = NULL;
	char buf[2048];

	*out = NONE;
	/* A stack a filter left out (hp_model_filter: its figures zeroed; a
	 * stack of custom heaps' buckets only has none, filter or not). */
	if (e->stack_id >= m->nstacks || (m->filter_stacks && !m->stacks[e->stack_id].nbuckets))
		return 0;
	if (o) {
		fake.context = o->a;
		fake.thread = o->b;
		fake.heap = o->c;
	}
	if (r->dim != HP_BY_HEAP && fake.heap != m->view_heap)
		return 0;
	if (r->dim != HP_BY_STACK && m->stacks[e->stack_id].suppressed)
		return 0;
	switch (r->dim) {
	case HP_BY_STACK:
		snprintf(buf, sizeof buf, "%" PRIu32, e->stack_id);
		return group_named(r, buf, NULL, e->stack_id, out);
	case HP_BY_TYPE: {
		const struct hp_mbucket *b = tagged ? model_bucket(r, e) : NULL;
		if (!tagged)
			key = HP_TIMELINE_UNTAGGED;
		else if (b)
			key = hp_group_key(m, b, HP_BY_TYPE, buf, sizeof buf, &source);
		else
			key = type_of(r, e, buf, sizeof buf, &source);
		break;
	}
	case HP_BY_CONTEXT:
	case HP_BY_THREAD:
	case HP_BY_HEAP:
		key = tagged ? hp_group_key(m, &fake, r->dim, buf, sizeof buf, NULL)
			     : HP_TIMELINE_UNTAGGED;
		break;
	default:
		key = hp_group_key(m, &fake, r->dim, buf, sizeof buf, NULL);
		break;
	}
	return group_named(r, key, source, 0, out);
}

/* Adds each model bucket's figures at the peak to its group (the group
 * of its key as group_of finds an entry's, made when no tick named it),
 * and raises the groups' highest to them: every line then has a point at
 * the peak, known exactly where the ticks fall on either side of it. */
static int peak_groups(struct by *r, uint64_t peak_ns)
{
	const struct hp_model *m = r->m;
	char buf[2048];

	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		const char *key, *source = NULL;
		struct hp_values bv;
		uint32_t gi;
		int err;
		hp_mbucket_values(m, b, &bv);
		if (!(bv.peak_bytes > 0) || b->stack >= m->nstacks ||
		    (m->filter_stacks && !m->stacks[b->stack].nbuckets) ||
		    (r->dim != HP_BY_HEAP && b->heap != m->view_heap) ||
		    (r->dim != HP_BY_STACK && m->stacks[b->stack].suppressed))
			continue;
		if (r->dim == HP_BY_STACK) {
			snprintf(buf, sizeof buf, "%" PRIu32, b->stack);
			err = group_named(r, buf, NULL, b->stack, &gi);
		} else {
			key = hp_group_key(m, b, r->dim, buf, sizeof buf,
					   r->dim == HP_BY_TYPE ? &source : NULL);
			err = group_named(r, key, source, 0, &gi);
		}
		if (err)
			return err;
		r->groups[gi].peak_bytes += bv.peak_bytes;
		r->groups[gi].peak_objects += bv.peak_objects;
	}
	for (size_t i = 0; i < r->keys.count; i++)
		if (r->groups[i].peak_bytes > r->groups[i].max_bytes) {
			r->groups[i].max_bytes = r->groups[i].peak_bytes;
			r->groups[i].max_time_ns = peak_ns;
		}
	return 0;
}

/* Applies entry e of tick k: its group's sum moves by the bucket's
 * change, and the group is marked touched in this tick. */
static int apply(struct by *r, const struct hp_cap_tick *k, const struct hp_rec_site *e)
{
	struct hp_rec_bucket raw = {.size = e->size,
				    .alloc_count = e->in_use_count,
				    .alloc_bytes = e->in_use_bytes};
	double scale = r->m->sampled ? hp_model_unbias_scale(&raw, r->m->sample_rate_bytes) : 1;
	struct tbucket *b;
	struct tgroup *g;
	uint32_t i;
	int err;

	if (!hp_u64map_get(&r->ids, e->bucket, &i)) {
		uint32_t group;
		if ((err = group_of(r, e, k->tagged, &group)) != 0)
			return err;
		if (hp_vec_grow(&r->buckets, &r->alloc_buckets, r->nbuckets + 1))
			return -ENOMEM;
		i = (uint32_t)r->nbuckets;
		if (hp_u64map_put(&r->ids, e->bucket, i))
			return -ENOMEM;
		r->buckets[r->nbuckets++] = (struct tbucket){group, 0, 0};
	}
	b = &r->buckets[i];
	if (b->group == NONE)
		return 0;
	g = &r->groups[b->group];
	g->bytes += (double)e->in_use_bytes * scale - b->bytes;
	g->objects += (double)e->in_use_count * scale - b->objects;
	b->bytes = (double)e->in_use_bytes * scale;
	b->objects = (double)e->in_use_count * scale;
	if (!g->touched) {
		if (hp_vec_grow(&r->touched, &r->alloc_touched, r->ntouched + 1))
			return -ENOMEM;
		r->touched[r->ntouched++] = b->group;
		g->touched = 1;
	}
	return 0;
}

/* Replays the ticks; after each, calls end(r, tick, arg) with the groups
 * it touched in r->touched. */
static int replay(struct by *r, int (*end)(struct by *, const struct hp_cap_tick *, void *),
		  void *arg)
{
	const struct hp_capture *cap = r->m->cap;
	int err = 0;

	for (size_t t = 0; t < r->nticks && !err; t++) {
		const struct hp_cap_tick *k = &cap->ticks[t];
		r->ntouched = 0;
		for (size_t e = 0; e < k->count && !err; e++)
			err = apply(r, k, &cap->sites[k->first + e]);
		if (!err)
			err = end(r, k, arg);
		for (size_t i = 0; i < r->ntouched; i++)
			r->groups[r->touched[i]].touched = 0;
	}
	return err;
}

static int note_max(struct by *r, const struct hp_cap_tick *k, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < r->ntouched; i++) {
		struct tgroup *g = &r->groups[r->touched[i]];
		if (g->bytes > g->max_bytes) {
			g->max_bytes = g->bytes;
			g->max_time_ns = k->time_ns;
		}
	}
	return 0;
}

/* A point at the tick's time for series s with value (bytes, objects),
 * unless s's last point already says so. */
static int add_point(struct hp_tl_group *s, uint64_t t, double bytes, double objects)
{
	struct hp_site_point *last = s->npoints ? &s->points[s->npoints - 1] : NULL;

	if (last && last->inuse_bytes == bytes && last->inuse_objects == objects)
		return 0;
	if (last && last->time_ns == t) {
		last->inuse_bytes = bytes;
		last->inuse_objects = objects;
		return 0;
	}
	if (hp_vec_grow(&s->points, &s->cap, s->npoints + 1))
		return -ENOMEM;
	s->points[s->npoints++] = (struct hp_site_point){t, bytes, objects};
	return 0;
}

struct collect {
	struct hp_tl_groups *out;
	struct hp_tl_group *other; /* NULL when every group is shown */
	double other_bytes, other_objects;
	double *last_bytes, *last_objects; /* per group: its sum at the last tick */
	uint64_t peak_ns;
	int peak_due; /* the peak's points are still to be taken */
};

/* The points at the peak: each shown group's sum then, and other's. The
 * tick after the peak lists every bucket whose value at the peak differs
 * from its value then (it changed between), so the lines come back. */
static int take_peak(struct by *r, struct collect *c)
{
	double ob = 0, oo = 0;
	int err = 0;

	c->peak_due = 0;
	for (size_t i = 0; i < r->keys.count && !err; i++) {
		const struct tgroup *g = &r->groups[i];
		if (g->slot != NONE) {
			err = add_point(&c->out->groups[g->slot], c->peak_ns, g->peak_bytes,
					g->peak_objects);
		} else {
			ob += g->peak_bytes;
			oo += g->peak_objects;
		}
	}
	if (!err && c->other)
		err = add_point(c->other, c->peak_ns, ob, oo);
	return err;
}

static int take_points(struct by *r, const struct hp_cap_tick *k, void *arg)
{
	struct collect *c = arg;
	int other_moved = 0, err = 0;

	if (c->peak_due && k->time_ns > c->peak_ns && (err = take_peak(r, c)) != 0)
		return err;

	for (size_t i = 0; i < r->ntouched && !err; i++) {
		uint32_t gi = r->touched[i];
		struct tgroup *g = &r->groups[gi];
		if (g->slot != NONE) {
			err = add_point(&c->out->groups[g->slot], k->time_ns, g->bytes, g->objects);
		} else if (c->other) {
			c->other_bytes += g->bytes - c->last_bytes[gi];
			c->other_objects += g->objects - c->last_objects[gi];
			other_moved = 1;
		}
		c->last_bytes[gi] = g->bytes;
		c->last_objects[gi] = g->objects;
	}
	if (!err && other_moved)
		err = add_point(c->other, k->time_ns, c->other_bytes, c->other_objects);
	return err;
}

struct ranked {
	uint32_t group;
	double max_bytes;
	const char *key;
};

static int by_max(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->max_bytes != y->max_bytes)
		return x->max_bytes > y->max_bytes ? -1 : 1;
	return strcmp(x->key, y->key);
}

void hp_timeline_by_free(struct hp_tl_groups *g)
{
	for (size_t i = 0; g->groups && i < g->n; i++)
		free(g->groups[i].points);
	free(g->groups);
	hp_strtab_free(&g->keys);
	memset(g, 0, sizeof *g);
}

static void reset(struct by *r)
{
	hp_u64map_free(&r->ids);
	memset(&r->ids, 0, sizeof r->ids);
	r->nbuckets = 0;
	for (size_t i = 0; i < r->keys.count; i++) {
		r->groups[i].bytes = r->groups[i].objects = 0;
		r->groups[i].touched = 0;
	}
}

int hp_timeline_by(const struct hp_model *m, enum hp_dim dim, unsigned top,
		   struct hp_tl_groups *out)
{
	const struct hp_capture *cap = m->cap;
	struct by r = {.m = m, .dim = dim};
	struct ranked *rank = NULL;
	struct collect c = {.out = out};
	size_t ngroups, shown = 0, rest = 0;
	int err;

	memset(out, 0, sizeof *out);
	out->dim = dim;
	while (r.nticks < cap->nticks && cap->ticks[r.nticks].time_ns <= m->snap->time_ns)
		r.nticks++;
	if (!r.nticks || !top)
		return 0;
	if ((err = index_model(&r)) != 0 || (err = replay(&r, note_max, NULL)) != 0)
		goto out;
	c.peak_ns = m->snap->peak_time_ns;
	c.peak_due = m->snap->peak_bytes > 0 && c.peak_ns <= m->snap->time_ns;
	if (c.peak_due && (err = peak_groups(&r, c.peak_ns)) != 0)
		goto out;
	ngroups = r.keys.count;
	if (!ngroups)
		goto out;
	rank = calloc(ngroups, sizeof *rank);
	c.last_bytes = calloc(ngroups, sizeof *c.last_bytes);
	c.last_objects = calloc(ngroups, sizeof *c.last_objects);
	if (!rank || !c.last_bytes || !c.last_objects) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ngroups; i++)
		rank[i] = (struct ranked){(uint32_t)i, r.groups[i].max_bytes,
					  hp_strtab_get(&r.keys, (uint32_t)i)};
	hp_sort(rank, ngroups, sizeof *rank, by_max);
	while (shown < ngroups && shown < top && rank[shown].max_bytes > 0)
		shown++;
	for (size_t i = shown; i < ngroups; i++)
		rest += rank[i].max_bytes > 0;
	if (!shown)
		goto out;
	out->groups = calloc(shown + (rest > 0), sizeof *out->groups);
	if (!out->groups) {
		err = -ENOMEM;
		goto out;
	}
	out->n = shown + (rest > 0);
	for (size_t i = 0; i < shown; i++) {
		struct tgroup *g = &r.groups[rank[i].group];
		struct hp_tl_group *s = &out->groups[i];
		g->slot = (uint32_t)i;
		s->source = g->source;
		s->stack = g->stack;
		s->members = 1;
		s->max_bytes = g->max_bytes;
		s->max_time_ns = g->max_time_ns;
	}
	if (rest) {
		c.other = &out->groups[shown];
		c.other->other = 1;
		c.other->key = "other";
		c.other->members = rest;
	}
	reset(&r);
	if ((err = replay(&r, take_points, &c)) != 0 || (c.peak_due && (err = take_peak(&r, &c)) != 0))
		goto out;
	if (c.other) /* its highest: of its own sum, not of its members' */
		for (size_t i = 0; i < c.other->npoints; i++)
			if (c.other->points[i].inuse_bytes > c.other->max_bytes) {
				c.other->max_bytes = c.other->points[i].inuse_bytes;
				c.other->max_time_ns = c.other->points[i].time_ns;
			}
	/* The keys move to the output: the shown groups' without their
	 * source (a type's "name\tsource"). */
	out->keys = r.keys;
	memset(&r.keys, 0, sizeof r.keys);
	for (size_t i = 0; i < shown; i++) {
		char *k = (char *)hp_strtab_get(&out->keys, rank[i].group), *tab;
		if (out->groups[i].source && (tab = strrchr(k, '\t')) != NULL)
			*tab = '\0';
		out->groups[i].key = dim == HP_BY_STACK ? "" : k;
	}
out:
	if (err)
		hp_timeline_by_free(out);
	hp_hindex_free(&r.mindex);
	hp_u64map_free(&r.types);
	hp_u64map_free(&r.ids);
	hp_strtab_free(&r.keys);
	free(r.buckets);
	free(r.groups);
	free(r.touched);
	free(rank);
	free(c.last_bytes);
	free(c.last_objects);
	return err;
}
