/*
 * report_int.h - what report.c shares with report_site.c: a stack's frames
 * as the text report shows them, one frame's line, a heading, a line's
 * figures. Internal to the report; ordinary analyzer C (allocates, not
 * thread-safe).
 */
#ifndef HP_ANALYZER_REPORT_INT_H
#define HP_ANALYZER_REPORT_INT_H

#include <stdio.h>

#include "report.h"

/* A symbolic frame of a stack with its class (hp_model_frame_class). */
struct hp_report_frame {
	const struct hp_location *l;
	const struct hp_sym *s;
	enum hp_frame_class cls;
	int recursive; /* a call path's frame into which later calls of its
			* function were merged (report_site.c) */
};

/* The symbolic frames of stack, innermost first, as the text report
 * shows them: unless all, without the runtime's frames below main and a
 * thread's start (report.h). Returns a malloc'd array of *count frames
 * (possibly 0), or NULL when out of memory. */
struct hp_report_frame *hp_report_frames(const struct hp_model *m, uint32_t stack, int all,
					 size_t *count);

/* Prints f[0..n) one frame a line after indent: a run of library frames
 * folded into its outermost ("[+N library frames]") unless all_frames,
 * o->frames lines counted from the first frame of the program's own. */
void hp_report_print_frames(FILE *out, const struct hp_model *m, const struct hp_report_frame *f,
			    size_t n, const struct hp_report_options *o, const char *indent);

/* One frame's line: indent, "(inline) ", the name (hp_name_display unless
 * o->full_names), two spaces, file:line (or module+offset), note. Fitted
 * to o->width by cutting the name in the middle (never under 24 bytes);
 * the file:line and the note are never cut. */
void hp_report_print_frame(FILE *out, const struct hp_model *m, const struct hp_location *l,
			   const struct hp_sym *s, const char *note,
			   const struct hp_report_options *o, const char *indent);

/* "  N. text", broken after a "; " or before a " (" to fit width. */
void hp_report_print_heading(FILE *out, size_t rank, const char *text, unsigned width);

/* A line's figures by metric and its share of total; what names the unit
 * ("stack", "site") in the temporary line. Writes buf; returns it. */
const char *hp_report_metric_text(char *buf, size_t cap, const struct hp_values *v,
				  enum hp_metric m, double total, int at_exit, const char *what);

/* The sections by allocation site (report_site.c): for each metric of the
 * report, the top sites (the first frame of the program's own code, with
 * its line), each with its call paths beneath, recursion merged.
 * Returns 0 or -ENOMEM. */
int hp_report_site_sections(FILE *out, const struct hp_model *m, const struct hp_report_options *o);

/* A stack's frames as JSON, every one (the "stack" of report --json). */
void hp_report_json_stack(FILE *out, const struct hp_model *m, uint32_t stack);

/* The "top_sites" member of report --json. Returns 0 or -ENOMEM. */
int hp_report_site_json(FILE *out, const struct hp_model *m, unsigned top);

#endif
