/*
 * timeline.c - the per-site timeline (see timeline.h).
 *
 * Two passes over the ticks: the first replays every bucket's value to
 * find each stack's highest sum, from which the top sites are chosen; the
 * second replays them again and keeps a point for each top site at each
 * tick that changed it. Buckets are found by their recorder id through a
 * u64 map; a stack's sum is kept as it goes (minus the bucket's old value,
 * plus its new one), so a pass costs one step per entry.
 *
 * A bucket keeps the stack of its first entry; the points of a site are
 * counted by the entries that name its stack. The two agree because a
 * bucket id names one stack through the image's timeline, which the
 * loader guarantees (capture.h, hp_cap_tick: it drops an entry that
 * contradicts its bucket's first).
 */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/table.h"

/* A bucket of the timeline: its stack and what it holds now. */
struct tbucket {
	uint32_t stack;
	double bytes, objects;
};

struct replay {
	const struct hp_model *m;
	struct hp_u64map ids; /* recorder bucket id -> index in buckets */
	struct tbucket *buckets;
	size_t nbuckets, alloc_buckets;
	double *stack_bytes, *stack_objects; /* per stack id, below m->nstacks */
	size_t nticks;                       /* the ticks at or before the snapshot */
};

static int kept(const struct hp_model *m, uint64_t stack)
{
	return stack < m->nstacks && m->stacks[stack].v.alloc_objects > 0;
}

/* Applies entry e: the stack's sums move by the bucket's change. Returns
 * the stack, or UINT32_MAX for one the model does not keep; -ENOMEM in
 * *err. */
static uint32_t apply(struct replay *r, const struct hp_rec_site *e, int *err)
{
	struct hp_rec_bucket raw = {.size = e->size,
				    .alloc_count = e->in_use_count,
				    .alloc_bytes = e->in_use_bytes};
	double scale = r->m->sampled ? hp_model_unbias_scale(&raw, r->m->sample_rate_bytes) : 1;
	struct tbucket *b;
	uint32_t i;

	if (!kept(r->m, e->stack_id))
		return UINT32_MAX;
	if (!hp_u64map_get(&r->ids, e->bucket, &i)) {
		if (r->nbuckets == r->alloc_buckets) {
			size_t cap = r->alloc_buckets ? 2 * r->alloc_buckets : 64;
			struct tbucket *p = realloc(r->buckets, cap * sizeof *p);
			if (!p) {
				*err = -ENOMEM;
				return UINT32_MAX;
			}
			r->buckets = p;
			r->alloc_buckets = cap;
		}
		i = (uint32_t)r->nbuckets;
		if (hp_u64map_put(&r->ids, e->bucket, i)) {
			*err = -ENOMEM;
			return UINT32_MAX;
		}
		r->buckets[r->nbuckets++] = (struct tbucket){e->stack_id, 0, 0};
	}
	b = &r->buckets[i];
	/* A bucket keeps its stack (the recorder's id names one key). */
	r->stack_bytes[b->stack] += (double)e->in_use_bytes * scale - b->bytes;
	r->stack_objects[b->stack] += (double)e->in_use_count * scale - b->objects;
	b->bytes = (double)e->in_use_bytes * scale;
	b->objects = (double)e->in_use_count * scale;
	return b->stack;
}

static void reset(struct replay *r)
{
	hp_u64map_free(&r->ids);
	memset(&r->ids, 0, sizeof r->ids);
	r->nbuckets = 0;
	memset(r->stack_bytes, 0, r->m->nstacks * sizeof *r->stack_bytes);
	memset(r->stack_objects, 0, r->m->nstacks * sizeof *r->stack_objects);
}

struct ranked {
	uint32_t stack;
	double max_bytes;
	uint64_t max_time_ns;
};

static int by_max(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->max_bytes != y->max_bytes)
		return x->max_bytes > y->max_bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

void hp_timeline_free(struct hp_site_series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].points);
	free(s);
}

/* A point at the peak for each site: what its stack held then (the
 * snapshot's at-peak figures), unless its last point already says so. */
static void peak_point(const struct hp_model *m, struct hp_site_series *sites, size_t n,
		       uint64_t peak_ns)
{
	for (size_t i = 0; i < n; i++) {
		const struct hp_values *v = &m->stacks[sites[i].stack].v;
		struct hp_site_point *last =
			sites[i].npoints ? &sites[i].points[sites[i].npoints - 1] : NULL;
		if (last && last->time_ns == peak_ns) {
			last->inuse_bytes = v->peak_bytes;
			last->inuse_objects = v->peak_objects;
		} else if (!last || last->inuse_bytes != v->peak_bytes ||
			   last->inuse_objects != v->peak_objects) {
			sites[i].points[sites[i].npoints++] =
				(struct hp_site_point){peak_ns, v->peak_bytes, v->peak_objects};
		}
	}
}

int hp_timeline_sites(const struct hp_model *m, unsigned top, struct hp_site_series **out,
		      size_t *n)
{
	const struct hp_capture *cap = m->cap;
	struct replay r = {.m = m};
	struct ranked *rank = NULL;
	struct hp_site_series *sites = NULL;
	uint32_t *slot = NULL; /* per stack: its index in sites + 1, 0 if not shown */
	size_t nranked = 0, nsites = 0;
	int err = 0;

	/* The peak, a moment the ticks may fall on either side of: each
	 * site's bytes then are known exactly (the snapshot's at-peak values),
	 * and every site gets a point there. */
	uint64_t peak_ns = m->snap->peak_time_ns;
	int has_peak = m->snap->peak_bytes > 0 && peak_ns <= m->snap->time_ns;

	*out = NULL;
	*n = 0;
	while (r.nticks < cap->nticks && cap->ticks[r.nticks].time_ns <= m->snap->time_ns)
		r.nticks++;
	/* no timeline at all (--timeline 0): no sites, the peak's alone
	 * would be one point */
	if (!cap->nticks || (!r.nticks && !has_peak) || !m->nstacks || !top)
		return 0;
	r.stack_bytes = calloc(m->nstacks, sizeof *r.stack_bytes);
	r.stack_objects = calloc(m->nstacks, sizeof *r.stack_objects);
	rank = calloc(m->nstacks, sizeof *rank);
	slot = calloc(m->nstacks, sizeof *slot);
	if (!r.stack_bytes || !r.stack_objects || !rank || !slot) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t s = 0; s < m->nstacks; s++)
		rank[s].stack = (uint32_t)s;
	for (size_t t = 0; t < r.nticks && !err; t++) {
		const struct hp_cap_tick *k = &cap->ticks[t];
		for (size_t e = 0; e < k->count && !err; e++) {
			uint32_t s = apply(&r, &cap->sites[k->first + e], &err);
			if (s != UINT32_MAX && r.stack_bytes[s] > rank[s].max_bytes) {
				rank[s].max_bytes = r.stack_bytes[s];
				rank[s].max_time_ns = k->time_ns;
			}
		}
	}
	if (err)
		goto err;
	for (size_t st = 0; has_peak && st < m->nstacks; st++)
		if (kept(m, st) && m->stacks[st].v.peak_bytes > rank[st].max_bytes) {
			rank[st].max_bytes = m->stacks[st].v.peak_bytes;
			rank[st].max_time_ns = peak_ns;
		}
	hp_sort(rank, m->nstacks, sizeof *rank, by_max);
	while (nranked < m->nstacks && nranked < top && rank[nranked].max_bytes > 0)
		nranked++;
	if (!nranked)
		goto out;
	sites = calloc(nranked, sizeof *sites);
	if (!sites) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < nranked; i++) {
		sites[i] = (struct hp_site_series){rank[i].stack, rank[i].max_bytes,
						   rank[i].max_time_ns, 0, NULL};
		slot[rank[i].stack] = (uint32_t)i + 1;
	}
	nsites = nranked;
	/* Second pass: a point per changed top site per tick. Points are at
	 * most the entries of the ticks, so one array each is sized for them
	 * by a count first. */
	{
		size_t *count = calloc(nsites, sizeof *count);
		if (!count) {
			err = -ENOMEM;
			goto err;
		}
		for (size_t t = 0; t < r.nticks; t++) {
			const struct hp_cap_tick *k = &cap->ticks[t];
			for (size_t e = 0; e < k->count; e++) {
				uint64_t s = cap->sites[k->first + e].stack_id;
				if (s < m->nstacks && slot[s])
					count[slot[s] - 1]++;
			}
		}
		for (size_t i = 0; i < nsites && !err; i++) /* and the peak's */
			if (!(sites[i].points = malloc((count[i] + 1) * sizeof *sites[i].points)))
				err = -ENOMEM;
		free(count);
	}
	if (err)
		goto err;
	reset(&r);
	for (size_t t = 0; t <= r.nticks && !err; t++) {
		const struct hp_cap_tick *k = t < r.nticks ? &cap->ticks[t] : NULL;
		if (has_peak && (!k || k->time_ns > peak_ns)) {
			peak_point(m, sites, nsites, peak_ns);
			has_peak = 0;
		}
		for (size_t e = 0; k && e < k->count && !err; e++) {
			uint32_t s = apply(&r, &cap->sites[k->first + e], &err);
			struct hp_site_series *site;
			struct hp_site_point *last;
			if (s == UINT32_MAX || !slot[s])
				continue;
			site = &sites[slot[s] - 1];
			last = site->npoints ? &site->points[site->npoints - 1] : NULL;
			if (last && last->time_ns == k->time_ns) { /* another bucket, same tick */
				last->inuse_bytes = r.stack_bytes[s];
				last->inuse_objects = r.stack_objects[s];
			} else if (!last || last->inuse_bytes != r.stack_bytes[s] ||
				   last->inuse_objects != r.stack_objects[s]) {
				site->points[site->npoints++] =
					(struct hp_site_point){k->time_ns, r.stack_bytes[s],
							       r.stack_objects[s]};
			}
		}
	}
	if (err)
		goto err;
out:
	*out = sites;
	*n = nsites;
	sites = NULL;
	nsites = 0;
err:
	hp_timeline_free(sites, nsites);
	hp_u64map_free(&r.ids);
	free(r.buckets);
	free(r.stack_bytes);
	free(r.stack_objects);
	free(rank);
	free(slot);
	return err;
}
