/*
 * html.h - one self-contained HTML page for a capture: the summary, the
 * heap and RSS timeline with the snapshots, the flame graph of a selected
 * snapshot by metric, tables by stack, function, file:line and module,
 * the sizes and lifetimes of a selected site, the memory map.
 *
 * The page carries its data as JSON (in a <script type="application/json">
 * element) and its code and style embedded at build time (assets.h:
 * report.js, joined from assets/report/, report.css and the vendored
 * uPlot); it fetches nothing
 * and a Content-Security-Policy forbids it to. docs/html.md describes the
 * page and its data.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_HTML_H
#define HP_ANALYZER_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "../format/capture.h"
#include "model/model.h"

/* The default of hp_html_options.top_stacks. */
#define HP_HTML_TOP_DEFAULT 1000

struct hp_html_options {
	/* Stacks kept per snapshot: the top_stacks with the largest share of
	 * any metric; the rest are summed into one "other" row. 0 = the
	 * default. */
	size_t top_stacks;
	const char *title;     /* the page's title, or NULL: "heapprof: PROGRAM" */
	const char *debug_dir; /* as hp_model_options.debug_dir */
	int embedded_only;     /* as hp_model_options.embedded_only */
	int all_frames;        /* every frame of each stack (frames.h); 0: the
				  runtime's below main left out, as report */
	const char *heap;      /* a heap's name: its blocks alone in every view by
				  stack (heapview.h); NULL: malloc's */
	/* The suppressions applied to each snapshot's model (hp_model_suppress),
	 * as heapprof report applies them: the tables by type, context, thread
	 * and heap and their timelines leave the suppressed stacks out, the
	 * summary's in use or leaked figure too (each snapshot's "suppressed").
	 * NULL: none. Not owned. */
	const struct hp_suppressions *suppressions;
	/* The model of the capture's last snapshot, built by the caller with
	 * debug_dir and embedded_only as here, or NULL: the page takes it for
	 * that snapshot instead of building it again (applies the
	 * suppressions and the heap to it) and frees it, whatever it returns. */
	struct hp_model *last_model;
	/* The capture being written, for a caller that reads none of its
	 * frames after: the last model the page builds frees them as it makes
	 * them locations (hp_model_options.release_frames). NULL: the
	 * capture is left as it is. */
	struct hp_capture *release_frames;
	/* The event log's selection (--lived-under, --lived-over, --between,
	 * --thread) the caller applied to the capture (hp_events_apply: its
	 * blocks are the last snapshot), which the log's chart follows too;
	 * NULL or off: every block. Not owned. */
	const struct hp_events_select *events;
};

/* Writes the page for cap's selected image (hp_capture_select) to f: one
 * model per snapshot (hp_model_build), symbolized as hp_model_build does.
 * Returns 0, or -errno with err set to one line (the capture has no
 * snapshot, out of memory, a failed write: -EIO). f is not closed. */
int hp_html_write(FILE *f, const struct hp_capture *cap, const struct hp_html_options *opts,
		  char *err, size_t errlen);

#endif
