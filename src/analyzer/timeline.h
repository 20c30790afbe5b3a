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

#include "../common/strtab.h"
#include "group.h"
#include "model/model.h"

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

/* --- by dimension (timeline_by.c) -------------------------------------
 *
 * The same ticks summed by a dimension of report --by (group.h): each
 * timeline bucket falls in one group, found once, from its stack (stack,
 * function, line, module), its type (the type the model gives the
 * snapshot's bucket of the same stack, tags and size: the report's) or its
 * origin (context, thread, heap: from its origin tag). A context is its
 * path, "outer > inner", and holds its own blocks only (unlike report --by
 * context, whose parents include their children): the groups add up to
 * the heap, as a stacked chart wants. As report --by: malloc's buckets
 * only (m->view_heap's) except by heap, which shows each heap; the
 * runtime's suppressed stacks are left out except by stack; stacks the
 * model does not keep (a filter) are left out.
 *
 * A tick read from a capture before format 1.5 has no tags: by type,
 * context, thread or heap its buckets fall in the group
 * HP_TIMELINE_UNTAGGED. A C++ object typed by its vtable is read so at
 * the recorder's snapshots: until the first snapshot after its
 * allocation it is in its stack's "unknown" type. */
#define HP_TIMELINE_UNTAGGED "(not recorded: a capture before format 1.5)"

struct hp_tl_group {
	const char *key;    /* raw (escape to show it); by stack, "" (see stack) */
	const char *source; /* by type: its source (hp_type_origin_name); else NULL */
	uint32_t stack;     /* by stack: the stack id; else 0 */
	int other;          /* the sum of the groups not shown (key "other") */
	size_t members;     /* other: how many groups it sums; else 1 */
	double max_bytes;   /* its highest bytes in use at a tick, and when */
	uint64_t max_time_ns;
	size_t npoints, cap; /* a point at each tick that changed its value */
	struct hp_site_point *points;
};

struct hp_tl_groups {
	enum hp_dim dim;
	size_t n;                  /* the shown groups, highest first, then other */
	struct hp_tl_group *groups;
	struct hp_strtab keys;     /* owns the keys */
};

/* The top (at most) groups of m's timeline in dim by their highest bytes
 * in use at a tick up to m's snapshot (equal ones by key), then, when
 * other groups held anything, one "other" group summing them. A group's
 * value at a tick is the sum of its buckets' (unbiased in a sampled
 * capture, as the sites'). Empty (n 0) when the capture has no timeline.
 * Returns 0 or -ENOMEM (g empty). Free with hp_timeline_by_free. */
int hp_timeline_by(const struct hp_model *m, enum hp_dim dim, unsigned top,
		   struct hp_tl_groups *g);
void hp_timeline_by_free(struct hp_tl_groups *g);

#endif
