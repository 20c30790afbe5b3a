/*
 * events_timeline.h - the bytes in use over time from the event log
 * (events.h): each block +size at its allocation, -size at its free,
 * bucketed per millisecond (or coarser for a long run), summed by a
 * dimension of report --by (group.h), for the page's stacked chart
 * (html.c) and for report --timeline under a selection (--between,
 * --thread, --lived-*), whose ticks (timeline.h) know nothing of it.
 *
 * Buckets. The log's span S (the window of --between, else the run: 0 to
 * the end of the log) is cut into buckets of W ns from its start: W is the
 * smallest of 1, 2, 5, 10, 20, 50... ms that makes at most
 * HP_EVENTS_TL_MAX_BUCKETS buckets (floor(S / W) < 2000: 1 ms for a span
 * under 2 s, 2 ms under 4 s, 5 ms under 10 s, 10 ms under 20 s...).
 * A bucket with events gives a point at its start holding each group's
 * bytes at the moment in the bucket when their sum was highest (its
 * first such moment; the level before the bucket's first event counts),
 * so a stack of the groups reaches the true highest of that millisecond
 * and no peak is lost; and, when anything happened after that moment, a
 * point at its end holding the bucket's last state. So at most
 * 2 x HP_EVENTS_TL_MAX_BUCKETS + 1 times; a line holds its value until
 * its next point. Events at the same nanosecond are one moment.
 *
 * Blocks. Those the selection keeps (hp_events_keep: thread, lifetime)
 * that were allocated in its window, as hp_events_apply's snapshot counts
 * them (so the highest point of all groups together is that snapshot's
 * peak); freed when their free is in the window. The groups are named
 * as the model names its buckets (hp_group_key: the model's bucket of the
 * block's stack, type tag and origin tag), with timeline_by's rules:
 * stacks a filter left out are left out; the runtime's suppressed
 * stacks too, but by stack; the log covers malloc's blocks only. A
 * sampled capture's blocks count unbiased (hp_model_unbias_scale).
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_EVENTS_TIMELINE_H
#define HP_ANALYZER_EVENTS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "timeline.h"

#define HP_EVENTS_TL_MAX_BUCKETS 2000

/* A dimension of hp_events_timeline that is none of group.h's: every
 * block in one group, keyed "in use" (the heap chart's line). */
#define HP_EVENTS_TL_TOTAL (-1)

/* The width of the buckets for a span of span_ns (see above). */
uint64_t hp_events_tl_bucket_ns(uint64_t span_ns);

/* The steps of the log's blocks the selection keeps, in time order, read
 * once for one timeline or several (the page's, one per dimension): about
 * 4 bytes a step, two steps a block, and the blocks open at once while
 * the log is read. */
struct hp_events_tl;

/* Reads m's capture's log (cap: m->cap) with sel (NULL: every block, the
 * whole run) into *out. Returns 0, -ENODATA (no event log), or -ENOMEM. */
int hp_events_tl_open(const struct hp_model *m, const struct hp_events_select *sel,
		      struct hp_events_tl **out);
void hp_events_tl_close(struct hp_events_tl *t);

/* The span and the buckets' width: [from_ns, to_ns], bucket_ns. */
void hp_events_tl_span(const struct hp_events_tl *t, uint64_t *from_ns, uint64_t *to_ns,
		       uint64_t *bucket_ns);

/* The top (at most; 0: all) groups of dim (group.h's, or
 * HP_EVENTS_TL_TOTAL) by their highest point, highest first (equal ones
 * by key), then one "other" group summing the rest when any of them held
 * bytes; points as above (inuse_objects counts blocks). Free with
 * hp_timeline_by_free. Returns 0 or -ENOMEM (g empty). */
int hp_events_tl_by(struct hp_events_tl *t, int dim, unsigned top, struct hp_tl_groups *g);

#endif
