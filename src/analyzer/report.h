/*
 * report.h - `heapprof report`: the answers to a heap profiler's questions,
 * for a terminal or, as JSON, for scripts.
 *
 * A summary (program, duration, allocations and their rate, bytes, temporary
 * allocations, the peak and when, peak RSS, in use at the snapshot, the
 * sampling rate, what the recorder lost), then the top call stacks for the
 * peak, leaks, allocations, temporary allocations and bytes allocated. Call
 * stacks are merged by capture stack (a sampled capture's per-size buckets
 * add up); each is shown innermost first as function and file:line.
 *
 * Between the summary and the stacks, a chart of heap in use and RSS over
 * time from the capture's time series, up to the snapshot, with the peak
 * and the snapshots marked (report.c, print_timeline); JSON carries that
 * series ("series": time_ns, heap_bytes, rss_bytes), the snapshots'
 * times ("snapshots": seq, reason, time_ns), the top sites' timelines
 * with their stacks ("sites") and the same by stack with "other"
 * ("timeline", hp_report_timeline_json). In a sampled capture the
 * series' heap is already an estimate (docs/format.md, TIMESERIES).
 */
#ifndef HP_ANALYZER_REPORT_H
#define HP_ANALYZER_REPORT_H

#include <stdio.h>

#include "events.h"
#include "model/model.h"

struct hp_report_options {
	unsigned top;    /* stacks per section (default 10) */
	unsigned width;  /* columns to fit, 0 = no limit */
	unsigned frames; /* frames per stack shown, counted from the program's own
			    first frame (default 8 in text, all in JSON) */
	int all_frames;  /* text: show the runtime's frames below main and a thread's
			    start, and every library frame on a line of its own */
	int full_names;  /* text: names as they are: template arguments and
			    parameter lists (default: hp_name_display) */
	int by_stack;    /* text: the sections by call stack (report --by stack),
			    not by allocation site (report_site.c) */
	/* The event log's selection the model's snapshot was built from
	 * (events.h, hp_events_apply): when given and on, the heap chart and
	 * --timeline are drawn from the log's blocks it keeps
	 * (events_timeline.h); NULL: from the time series and the ticks. */
	const struct hp_events_select *events;
};

/* How a text report shows a stack (innermost first), unless all_frames:
 *   - the frames outside main (the runtime's: hp_model_frame_class ENTRY,
 *     and any frame past "main") are left out;
 *   - a run of two or more library frames (HP_FRAME_LIBRARY: std::
 *     internals, libc) is one line, the outermost of the run (the call the
 *     program made), marked "[+N library frames]";
 *   - frames counts lines from the first of the program's own frames.
 * Names are shortened (hp_name_shorten) unless full_names, and a line
 * longer than width is cut in the middle of the name (then of the
 * file:line), never at its end.
 *
 * Leaks: stacks marked suppressed (hp_model_suppress) are not listed and
 * their blocks are not in the in-use line, which says how many were
 * suppressed. */


/* The timeline chart (text): its height in rows, and the width of its
 * left column (the scale's labels and the axis), so that its plot is
 * width - HP_REPORT_CHART_LABEL - 1 columns wide. */
#define HP_REPORT_CHART_ROWS 10
#define HP_REPORT_CHART_LABEL 10

/* Writes the report. Returns 0 or -errno (a failed write). */
int hp_report_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o);
int hp_report_json(FILE *out, const struct hp_model *m, const struct hp_report_options *o);

/* --by (report_by.c): the summary's figures, then one row per key of
 * dim (group.h; not HP_BY_STACK): objects and bytes allocated, in use and
 * at the peak, top rows (all in JSON). A type says its source, a custom
 * heap its own peak. Returns 0 or -errno. */
int hp_report_by_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o,
		      int dim);
int hp_report_by_json(FILE *out, const struct hp_model *m, const struct hp_report_options *o,
		      int dim);

/* --timeline (report_timeline.c): the bytes in use over time of the top
 * groups of dim (timeline.h, hp_timeline_by; HP_BY_STACK included), then
 * "other". Text: one line per group, each column the highest of its time
 * slice up to the snapshot, scaled to the group's own highest. JSON: an
 * array, the groups highest first, each {"key", "source" (type only),
 * "stack_id" and "where" (stack only; key is the innermost function),
 * "max_inuse_bytes", "max_time_ns", "series": [[time_ns, inuse_bytes,
 * inuse_objects], ...] (a point at each tick where it changed: the value
 * holds until the next; none before its first)}, the last, when other
 * groups held memory, {"key": "other", "other": true, "groups": N, ...}.
 * With a selection of the event log that is on (text: o->events; JSON:
 * sel, may be NULL), the groups' bytes over time come from the log's
 * blocks it keeps, a point per millisecond or coarser (events_timeline.h),
 * from the window's start to its end (a capture without a log: none).
 * Returns 0 or -errno. */
int hp_report_timeline_text(FILE *out, const struct hp_model *m,
			    const struct hp_report_options *o, int dim);
int hp_report_timeline_json(FILE *out, const struct hp_model *m, unsigned top, int dim,
			    const struct hp_events_select *sel);

/* report --blocks --json (report.c): the blocks of the event log that
 * report --blocks lists (events.h, hp_events_listed), by allocation time,
 * as one object: {"program", "window": {"from_ns", "to_ns"}, "listed": N
 * (all the selection lists), "shown": the first limit of them (0: all),
 * "blocks": [{"address": "0x...", "size", "type", "thread", "alloc_ns",
 * "free_ns" and "lifetime_ns" (null: never freed), "stack_id"}...],
 * "stacks": {"ID": [frames as report --json's "stack"]...} for the
 * stacks of the blocks shown}. m: a model of the capture (its frames).
 * Returns 0 or -errno. */
int hp_report_blocks_json(FILE *out, const struct hp_model *m,
			  const struct hp_events_select *sel, size_t limit);

/* --histograms (histo.c; the histograms per stack: histo.h). */
/* report --histograms (text): for the top o->top stacks by allocations,
 * their innermost frame, then a line of sizes and a line of lifetimes,
 * each nonzero class with its count and share. Returns 0 or -errno. */
int hp_report_hist_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o);

/* The "histograms" member of report --json: [{stack_id, function, file,
 * line, allocations, frees, sizes: [[lo, hi, count]...], lifetimes:
 * [[lo, hi, count]...]}] for the top top stacks (hi -1 for the last
 * class). Returns 0 or -errno. */
int hp_report_hist_json(FILE *out, const struct hp_model *m, unsigned top);

/* A JSON string (escaped for display first, text.h) and the figures as
 * a JSON object, as the report writes them. */
void hp_report_json_str(FILE *out, const char *raw);
void hp_report_json_values(FILE *out, const struct hp_values *v);

#endif
