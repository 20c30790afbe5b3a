/*
 * timeline.c - the per-site timeline (see timeline.h).
 *
 * Two passes over the ticks: the first replays every bucket's value to
 * find each stack's highest sum, from which the top sites are chosen; the
 * second replays the top sites' entries alone and keeps a point for each
 * at each tick that changed it. A stack's sum is kept as it goes (minus
 * the bucket's old value, plus its new one), so a pass costs one step per
 * entry. A bucket's old value is its last entry's, read again from that
 * entry: per bucket the replay holds that entry's index alone, in an
 * array indexed by the recorder's bucket id (numbered from 1: dense), or
 * through a u64map when the ids are sparse (a hostile capture's).
 * (2^20 stacks: 20 bytes a stack, the stacks' sums and highest sums and
 * the buckets' entries; the sites are chosen by a heap of the top ones,
 * not a sort of every stack.)
 *
 * A bucket keeps the stack of its first entry; the points of a site are
 * counted by the entries that name its stack. The two agree because a
 * bucket id names one stack through the image's timeline, which the
 * loader guarantees (capture.h, hp_cap_tick: it drops an entry that
 * contradicts its bucket's first): an entry's stack is its bucket's.
 */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/table.h"

struct replay {
	const struct hp_model *m;
	const struct hp_rec_site *sites; /* the capture's entries */
	size_t nentries;                 /* of the ticks at or before the snapshot */
	size_t nticks;                   /* the ticks at or before the snapshot */
	/* last[k]: the index + 1 in sites of bucket k's last entry, 0 before
	 * its first; k is the bucket id (dense), else its index in ids. */
	uint32_t *last;
	size_t nlast, alloc_last;
	int dense;
	struct hp_u64map ids; /* sparse: recorder bucket id -> k */
};

static int kept(const struct hp_model *m, uint64_t stack)
{
	return stack < m->nstacks && m->stacks[stack].v.alloc_objects > 0;
}

/* What entry e says its bucket holds, unbiased (each entry by its own
 * size, as the model's buckets). */
static void entry_value(const struct hp_model *m, const struct hp_rec_site *e, double *bytes,
			double *objects)
{
	struct hp_rec_bucket raw = {.size = e->size,
				    .alloc_count = e->in_use_count,
				    .alloc_bytes = e->in_use_bytes};
	double scale = m->sampled ? hp_model_unbias_scale(&raw, m->sample_rate_bytes) : 1;

	*bytes = (double)e->in_use_bytes * scale;
	*objects = (double)e->in_use_count * scale;
}

/* The slot of e's bucket in r->last, added on first sight; NULL when out
 * of memory. */
static uint32_t *last_of(struct replay *r, const struct hp_rec_site *e)
{
	uint32_t k;

	if (r->dense)
		return &r->last[e->bucket];
	if (!hp_u64map_get(&r->ids, e->bucket, &k)) {
		if (r->nlast == r->alloc_last) {
			size_t cap = r->alloc_last ? 2 * r->alloc_last : 64;
			uint32_t *p = realloc(r->last, cap * sizeof *p);
			if (!p)
				return NULL;
			r->last = p;
			r->alloc_last = cap;
		}
		k = (uint32_t)r->nlast;
		if (hp_u64map_put(&r->ids, e->bucket, k))
			return NULL;
		r->last[r->nlast++] = 0;
	}
	return &r->last[k];
}

/* Applies entry i: *bytes and *objects (unless NULL), its stack's sums,
 * move by its bucket's change (as the replay of every entry before it
 * left them).
 * Returns 0 or -ENOMEM. */
static int apply(struct replay *r, size_t i, double *bytes, double *objects)
{
	const struct hp_rec_site *e = &r->sites[i];
	uint32_t *last = last_of(r, e);
	double nb, no, ob = 0, oo = 0;

	if (!last)
		return -ENOMEM;
	if (*last)
		entry_value(r->m, &r->sites[*last - 1], &ob, &oo);
	entry_value(r->m, e, &nb, &no);
	*bytes += nb - ob;
	if (objects)
		*objects += no - oo;
	*last = (uint32_t)i + 1;
	return 0;
}

/* Sets r's bucket slots up for the entries of its ticks: dense when the
 * ids are (at most twice the entries, and 1024), else sparse. Returns 0
 * or -ENOMEM. */
static int replay_init(struct replay *r)
{
	const struct hp_capture *cap = r->m->cap;
	uint64_t max_id = 0;

	for (size_t t = 0; t < r->nticks; t++) {
		const struct hp_cap_tick *k = &cap->ticks[t];
		for (size_t e = 0; e < k->count; e++)
			if (cap->sites[k->first + e].bucket > max_id)
				max_id = cap->sites[k->first + e].bucket;
		if (k->first + k->count > r->nentries)
			r->nentries = k->first + k->count;
	}
	if (r->nentries >= UINT32_MAX) /* 160 GB of entries: cannot be loaded */
		return -ENOMEM;
	r->dense = max_id <= 2 * (uint64_t)r->nentries + 1024;
	if (!r->dense)
		return 0;
	r->nlast = r->alloc_last = (size_t)max_id + 1;
	r->last = calloc(r->nlast, sizeof *r->last);
	return r->last ? 0 : -ENOMEM;
}

/* Back to before the first tick: every bucket holds nothing. (last is
 * NULL while no sparse id was seen: memset's pointer must not be.) */
static void replay_reset(struct replay *r)
{
	if (r->nlast)
		memset(r->last, 0, r->nlast * sizeof *r->last);
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

/* The top n of the stacks by their highest bytes (max[s] > 0), as a
 * heap whose root is the lowest in by_max's order. */
static void heap_down(struct ranked *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1, low = i;
		if (c < n && by_max(&h[c], &h[low]) > 0)
			low = c;
		if (c + 1 < n && by_max(&h[c + 1], &h[low]) > 0)
			low = c + 1;
		if (low == i)
			return;
		struct ranked t = h[i];
		h[i] = h[low];
		h[low] = t;
		i = low;
	}
}

static void heap_up(struct ranked *h, size_t i)
{
	while (i && by_max(&h[i], &h[(i - 1) / 2]) > 0) {
		struct ranked t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
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
	struct replay r = {.m = m, .sites = cap->sites};
	double *sum = NULL, *max = NULL; /* per stack: its bytes now, its highest */
	double *site_bytes = NULL, *site_objects = NULL, *site_max = NULL; /* per site */
	struct ranked *rank = NULL;
	struct hp_site_series *sites = NULL;
	uint32_t *slot = NULL; /* per stack: its index in sites + 1, 0 if not shown */
	size_t nranked = 0, nsites = 0, ntop;
	int err = 0;

	/* The peak, a moment the ticks may fall on either side of: each
	 * site's bytes then are known exactly (the snapshot's at-peak values),
	 * and every site gets a point there. */
	uint64_t peak_ns = m->snap->peak_time_ns;
	int has_peak = m->snap->peak_bytes > 0 && peak_ns <= m->snap->time_ns;
	int peak_point_due = has_peak;

	*out = NULL;
	*n = 0;
	while (r.nticks < cap->nticks && cap->ticks[r.nticks].time_ns <= m->snap->time_ns)
		r.nticks++;
	/* no timeline at all (--timeline 0): no sites, the peak's alone
	 * would be one point */
	if (!cap->nticks || (!r.nticks && !has_peak) || !m->nstacks || !top)
		return 0;
	if ((err = replay_init(&r)) != 0)
		goto err;
	sum = calloc(m->nstacks, sizeof *sum);
	max = calloc(m->nstacks, sizeof *max);
	if (!sum || !max) {
		err = -ENOMEM;
		goto err;
	}
	/* First pass: each stack's highest bytes at a tick. */
	for (size_t t = 0; t < r.nticks; t++) {
		const struct hp_cap_tick *k = &cap->ticks[t];
		for (size_t e = 0; e < k->count; e++) {
			uint32_t s = cap->sites[k->first + e].stack_id;
			if (!kept(m, s))
				continue;
			if ((err = apply(&r, k->first + e, &sum[s], NULL)) != 0)
				goto err;
			if (sum[s] > max[s])
				max[s] = sum[s];
		}
	}
	for (size_t st = 0; has_peak && st < m->nstacks; st++)
		if (kept(m, st) && m->stacks[st].v.peak_bytes > max[st])
			max[st] = m->stacks[st].v.peak_bytes;
	free(sum);
	sum = NULL;
	/* The top ones, highest first (equal ones by stack id). */
	ntop = top < m->nstacks ? top : m->nstacks;
	if (!(rank = malloc(ntop * sizeof *rank))) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t st = 0; st < m->nstacks; st++) {
		struct ranked c = {(uint32_t)st, max[st], 0};
		if (!(max[st] > 0))
			continue;
		if (nranked < ntop) {
			rank[nranked] = c;
			heap_up(rank, nranked++);
		} else if (by_max(&c, &rank[0]) < 0) {
			rank[0] = c;
			heap_down(rank, nranked, 0);
		}
	}
	free(max);
	max = NULL;
	if (!nranked)
		goto out;
	hp_sort(rank, nranked, sizeof *rank, by_max);
	sites = calloc(nranked, sizeof *sites);
	slot = calloc(m->nstacks, sizeof *slot);
	site_bytes = calloc(nranked, sizeof *site_bytes);
	site_objects = calloc(nranked, sizeof *site_objects);
	site_max = calloc(nranked, sizeof *site_max);
	if (!sites || !slot || !site_bytes || !site_objects || !site_max) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < nranked; i++) {
		sites[i] = (struct hp_site_series){rank[i].stack, rank[i].max_bytes, 0, 0, NULL};
		slot[rank[i].stack] = (uint32_t)i + 1;
	}
	nsites = nranked;
	/* Second pass, of the top sites' entries: a point per changed site
	 * per tick, and when each was at its highest. Points are at most the
	 * entries of the ticks, so one array each is sized for them by a
	 * count first. */
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
	replay_reset(&r);
	for (size_t t = 0; t <= r.nticks && !err; t++) {
		const struct hp_cap_tick *k = t < r.nticks ? &cap->ticks[t] : NULL;
		if (peak_point_due && (!k || k->time_ns > peak_ns)) {
			peak_point(m, sites, nsites, peak_ns);
			peak_point_due = 0;
		}
		for (size_t e = 0; k && e < k->count && !err; e++) {
			uint32_t s = cap->sites[k->first + e].stack_id, j;
			struct hp_site_series *site;
			struct hp_site_point *last;
			if (s >= m->nstacks || !slot[s])
				continue;
			j = slot[s] - 1;
			site = &sites[j];
			if ((err = apply(&r, k->first + e, &site_bytes[j], &site_objects[j])) != 0)
				break;
			if (site_bytes[j] > site_max[j]) {
				site_max[j] = site_bytes[j];
				site->max_time_ns = k->time_ns;
			}
			last = site->npoints ? &site->points[site->npoints - 1] : NULL;
			if (last && last->time_ns == k->time_ns) { /* another bucket, same tick */
				last->inuse_bytes = site_bytes[j];
				last->inuse_objects = site_objects[j];
			} else if (!last || last->inuse_bytes != site_bytes[j] ||
				   last->inuse_objects != site_objects[j]) {
				site->points[site->npoints++] = (struct hp_site_point){
					k->time_ns, site_bytes[j], site_objects[j]};
			}
		}
	}
	if (err)
		goto err;
	/* Its highest was the peak's when the peak held more than any tick. */
	for (size_t i = 0; has_peak && i < nsites; i++)
		if (m->stacks[sites[i].stack].v.peak_bytes > site_max[i])
			sites[i].max_time_ns = peak_ns;
out:
	*out = sites;
	*n = nsites;
	sites = NULL;
	nsites = 0;
err:
	hp_timeline_free(sites, nsites);
	hp_u64map_free(&r.ids);
	free(r.last);
	free(sum);
	free(max);
	free(site_bytes);
	free(site_objects);
	free(site_max);
	free(rank);
	free(slot);
	return err;
}
