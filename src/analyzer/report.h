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
 */
#ifndef HP_ANALYZER_REPORT_H
#define HP_ANALYZER_REPORT_H

#include <stdio.h>

#include "model.h"

struct hp_report_options {
	unsigned top;    /* stacks per section (default 10) */
	unsigned width;  /* columns to fit, 0 = no limit */
	unsigned frames; /* frames per stack shown (default 8 in text, all in JSON) */
};

/* Writes the report. Returns 0 or -errno (a failed write). */
int hp_report_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o);
int hp_report_json(FILE *out, const struct hp_model *m, const struct hp_report_options *o);

#endif
