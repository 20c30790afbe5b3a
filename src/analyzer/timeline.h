/*
 * timeline.h - the per-site timeline: each call stack's bytes in use over
 * time, from the capture's TIMELINE ticks (format.h, HP_REC_TIMELINE).
 *
 * Model. A tick lists the buckets that changed since the previous one,
 * each with what it holds in use then; a bucket not listed holds what its
 * last entry said. A stack's value at a tick is the sum of its buckets'
 * (unbiased in a sampled capture, each bucket by its size as the model
 * does). The sites shown are the stacks with the highest such value at
 * any tick up to the model's snapshot: what a site held at its own
 * highest, not at the snapshot, so that a phase freed before it shows.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_TIMELINE_H
#define HP_ANALYZER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* A site's value from a tick on (until its next point). */
struct hp_site_point {
	uint64_t time_ns;
	double inuse_bytes, inuse_objects;
};

/* One site: its stack (the capture's id, an index of m->stacks), its
 * highest bytes in use and when, and a point at each tick where its value
 * changed (the first where it first holds something). */
struct hp_site_series {
	uint32_t stack;
	double max_bytes;
	uint64_t max_time_ns;
	size_t npoints;
	struct hp_site_point *points;
};

/* The top (at most) sites of m's capture by their highest bytes in use,
 * from the ticks at or before m's snapshot, highest first (equal ones by
 * stack id); stacks the model does not keep (a filter) are left out.
 * *out (owned, free with hp_timeline_free) and *n; none (NULL, 0) when
 * the capture has no timeline. Returns 0 or -ENOMEM. */
int hp_timeline_sites(const struct hp_model *m, unsigned top, struct hp_site_series **out,
		      size_t *n);

void hp_timeline_free(struct hp_site_series *s, size_t n);

#endif
