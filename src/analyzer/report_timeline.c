/*
 * report_timeline.c - `heapprof report --timeline [--by DIM]`: the bytes in
 * use over time of the top groups of a dimension (timeline.h,
 * hp_timeline_by), one line each in a terminal, series in JSON; under a
 * selection of the event log, from the blocks it keeps
 * (events_timeline.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"
#include "report.h"
#include "../common/text.h"
#include "timeline.h"
#include "events_timeline.h"

/* Darker is more: a cell's character for a value at share v of its line's
 * highest (any value above 0 shows). */
static const char ramp[] = " .:-=+*#%@";

/* The column of time t: floor(t * cols / span), the last for t >= span. */
static size_t column(uint64_t t, uint64_t span, size_t cols)
{
	double c = (double)t * (double)cols / (double)(span ? span : 1);
	return c >= (double)(cols - 1) ? cols - 1 : (size_t)c;
}

/* The group's name: a stack's innermost function and where, a type with
 * its source, "other (N groups)". */
static const char *name_of(const struct hp_model *m, const struct hp_tl_group *g, char *buf,
			   size_t cap)
{
	char where[512];

	if (g->other) {
		snprintf(buf, cap, "(%zu other%s)", g->members, g->members == 1 ? "" : "s");
	} else if (!*g->key && g->stack < m->nstacks && m->stacks[g->stack].depth) {
		const struct hp_location *l = &m->locations[hp_mstack_location(&m->stacks[g->stack], 0)];
		snprintf(buf, cap, "%s %s", l->syms[0].function,
			 hp_location_where(m, l, where, sizeof where));
	} else if (!*g->key) {
		snprintf(buf, cap, "(no stack)");
	} else {
		snprintf(buf, cap, "%s%s%s%s", g->key, g->source ? " [" : "",
			 g->source ? g->source : "", g->source ? "]" : "");
	}
	return buf;
}

#define NAME_BYTES 1024
#define MAX_CALLERS 8

/* Frame k of stack group g: its function and where ("" past the stack). */
static void frame_label(const struct hp_model *m, const struct hp_tl_group *g, uint32_t k,
			int with_where, char *buf, size_t cap)
{
	const struct hp_mstack *st = &m->stacks[g->stack];
	char where[512];

	if (k >= st->depth) {
		snprintf(buf, cap, "(end)");
		return;
	}
	const struct hp_location *l = &m->locations[hp_mstack_location(st, k)];
	if (with_where) {
		const char *w = hp_location_where(m, l, where, sizeof where), *base = strrchr(w, '/');
		snprintf(buf, cap, "%s %s", l->syms[0].function, base ? base + 1 : w);
	} else {
		snprintf(buf, cap, "%s", l->syms[0].function);
	}
}

static int is_stack_group(const struct hp_model *m, const struct hp_tl_group *g)
{
	return !g->other && !*g->key && g->stack < m->nstacks && m->stacks[g->stack].depth;
}

/* The groups' names, stacks whose innermost frames read alike told apart
 * as the page tells them (timeline.js stackLabels): "INNER <- CALLER",
 * the first caller where they part (its function, with its file:line
 * when the functions are the same), again deeper while some still read
 * alike (up to MAX_CALLERS), then " (2)", " (3)"... names[i] holds
 * NAME_BYTES. */
static void tell_apart(const struct hp_model *m, const struct hp_tl_groups *g, char (*names)[NAME_BYTES])
{
	uint32_t *depth = calloc(g->n ? g->n : 1, sizeof *depth);
	char a[NAME_BYTES], b[NAME_BYTES];

	for (size_t i = 0; i < g->n; i++)
		name_of(m, &g->groups[i], names[i], NAME_BYTES);
	if (!depth)
		return;
	for (unsigned round = 0; round <= MAX_CALLERS; round++) {
		int alike = 0;
		for (size_t i = 0; i < g->n; i++) {
			size_t same[64], n = 0;
			uint32_t d, most = 0;
			int part = 0, by_name = 0;
			if (!is_stack_group(m, &g->groups[i]))
				continue;
			for (size_t j = i; j < g->n && n < 64; j++)
				if (is_stack_group(m, &g->groups[j]) && strcmp(names[i], names[j]) == 0)
					same[n++] = j;
			if (n < 2)
				continue;
			alike = 1;
			if (round == MAX_CALLERS) { /* still alike: number them */
				for (size_t k = 1; k < n; k++) {
					size_t len = strlen(names[same[k]]);
					snprintf(names[same[k]] + len, NAME_BYTES - len, " (%zu)", k + 1);
				}
				continue;
			}
			for (size_t k = 0; k < n; k++) {
				uint32_t dd = m->stacks[g->groups[same[k]].stack].depth;
				most = dd > most ? dd : most;
			}
			/* the first frame past the last one shown where they part */
			for (d = depth[i] + 1; d < most && !part; d++) {
				frame_label(m, &g->groups[same[0]], d, 1, a, sizeof a);
				for (size_t k = 1; k < n && !part; k++) {
					frame_label(m, &g->groups[same[k]], d, 1, b, sizeof b);
					part = strcmp(a, b) != 0;
				}
				if (part) {
					by_name = 1;
					frame_label(m, &g->groups[same[0]], d, 0, a, sizeof a);
					for (size_t k = 1; k < n && by_name; k++) {
						frame_label(m, &g->groups[same[k]], d, 0, b, sizeof b);
						by_name = strcmp(a, b) == 0 ? 0 : by_name;
					}
					break;
				}
			}
			if (!part) { /* the same frames all the way: number them */
				for (size_t k = 1; k < n; k++) {
					size_t len = strlen(names[same[k]]);
					snprintf(names[same[k]] + len, NAME_BYTES - len, " (%zu)", k + 1);
				}
				continue;
			}
			for (size_t k = 0; k < n; k++) {
				size_t len;
				if (!depth[same[k]]) /* the first caller: the innermost by name */
					frame_label(m, &g->groups[same[k]], 0, 0, names[same[k]],
						    NAME_BYTES);
				len = strlen(names[same[k]]);
				frame_label(m, &g->groups[same[k]], d, !by_name, a, sizeof a);
				snprintf(names[same[k]] + len, NAME_BYTES - len, " <- %s", a);
				depth[same[k]] = d;
			}
		}
		if (!alike)
			break;
	}
	free(depth);
}

/* The group's line: in each column the highest value of its time slice
 * (or the level it held from before), as a character of ramp. */
static void draw(const struct hp_tl_group *g, uint64_t from, uint64_t span, size_t cols,
		 char *line)
{
	double level = 0;
	size_t k = 0;

	for (size_t c = 0; c < cols; c++) {
		double h = level;
		for (; k < g->npoints &&
		       column(g->points[k].time_ns > from ? g->points[k].time_ns - from : 0, span,
			      cols) == c;
		     k++) {
			level = g->points[k].inuse_bytes;
			h = level > h ? level : h;
		}
		if (h <= 0 || g->max_bytes <= 0) {
			line[c] = ' ';
		} else {
			size_t i = (size_t)(h / g->max_bytes * (double)(sizeof ramp - 2) + 0.999999);
			line[c] = ramp[i < 1 ? 1 : i > sizeof ramp - 2 ? sizeof ramp - 2 : i];
		}
	}
	line[cols] = '\0';
}

/* A group's value at time t: its last point at or before t. */
static double value_at(const struct hp_tl_group *g, uint64_t t)
{
	double v = 0;
	for (size_t i = 0; i < g->npoints && g->points[i].time_ns <= t; i++)
		v = g->points[i].inuse_bytes;
	return v;
}

/* The top groups of dim over time: from the event log's blocks sel keeps
 * (sel on: [from, to] the window, bucket its buckets' width), else from
 * the ticks up to the snapshot (from 0, bucket 0). */
static int groups_of(const struct hp_model *m, int dim, unsigned top,
		     const struct hp_events_select *sel, struct hp_tl_groups *g, uint64_t *from,
		     uint64_t *to, uint64_t *bucket)
{
	struct hp_events_tl *t;
	int ret;

	*from = 0;
	*to = m->snap->time_ns;
	*bucket = 0;
	if (!sel || !sel->on)
		return hp_timeline_by(m, (enum hp_dim)dim, top, g);
	memset(g, 0, sizeof *g);
	if ((ret = hp_events_tl_open(m, sel, &t)) != 0)
		return ret == -ENODATA ? 0 : ret;
	hp_events_tl_span(t, from, to, bucket);
	ret = hp_events_tl_by(t, dim, top, g);
	hp_events_tl_close(t);
	return ret;
}

int hp_report_timeline_text(FILE *out, const struct hp_model *m,
			    const struct hp_report_options *o, int dim)
{
	unsigned top = o && o->top ? o->top : 10;
	unsigned width = o && o->width ? o->width : 100;
	const struct hp_events_select *sel = o && o->events && o->events->on ? o->events : NULL;
	uint64_t from, to, bucket, span;
	struct hp_tl_groups g;
	size_t cols;
	char *line, a[32], b[32], cut[NAME_BYTES], (*names)[NAME_BYTES];
	int ret = groups_of(m, dim, top, sel, &g, &from, &to, &bucket);

	if (ret)
		return ret;
	span = to - from;
	if (!(names = calloc(g.n ? g.n : 1, sizeof *names))) {
		hp_timeline_by_free(&g);
		return -ENOMEM;
	}
	tell_apart(m, &g, names);
	/* "  highest  at time |chart| name": 22 columns before the chart, 3
	 * around it, 40 for the name after it, the chart 20 to 60. */
	cols = width > 22 + 3 + 40 + 20 ? width - 22 - 3 - 40 : 20;
	cols = cols > 60 ? 60 : cols;
	if (!(line = malloc(cols + 1))) {
		free(names);
		hp_timeline_by_free(&g);
		return -ENOMEM;
	}
	if (sel)
		fprintf(out, "\nbytes in use over time, by %s%s (the selected blocks, from the event\n"
			     "log per %g ms; each line scaled to its own highest, '%c'; a column\n"
			     "holds the highest of its slice)\n",
			hp_dim_name((enum hp_dim)dim), m->sampled ? ", estimated" : "",
			(double)bucket / 1e6, ramp[sizeof ramp - 2]);
	else
		fprintf(out, "\nbytes in use over time, by %s%s (the per-site timeline; each line\n"
			     "scaled to its own highest, '%c'; a column holds the highest of its slice)\n",
			hp_dim_name((enum hp_dim)dim), m->sampled ? ", estimated" : "",
			ramp[sizeof ramp - 2]);
	if (!g.n && sel) {
		fprintf(out, "  none: the selection keeps no block\n");
		goto out;
	}
	if (!g.n) {
		fprintf(out, "  none: the capture has no timeline (run --timeline MS) up to this "
			     "snapshot\n");
		goto out;
	}
	snprintf(a, sizeof a, "%.3f s", (double)from / 1e9);
	snprintf(b, sizeof b, "%.3f s", (double)to / 1e9);
	fprintf(out, "  %9s %8s  %s%*s\n", "highest", "at", from ? a : "0 s",
		(int)(cols - strlen(from ? a : "0 s")), b);
	for (size_t i = 0; i < g.n; i++) {
		const struct hp_tl_group *s = &g.groups[i];
		size_t room = width > 22 + 3 + cols + 24 ? width - 22 - 3 - cols : 24;
		draw(s, from, span, cols, line);
		hp_text_cut_middle(cut, sizeof cut, names[i], room > 5 ? room : 5);
		fprintf(out, "  %9s %6.3f s |%s| ", hp_units_bytes(a, sizeof a, s->max_bytes),
			(double)s->max_time_ns / 1e9, line);
		hp_text_fputs(cut, out);
		fputc('\n', out);
	}
	fprintf(out, "  %s (%.3f s):", sel ? "at the end" : "at the snapshot", (double)to / 1e9);
	for (size_t i = 0; i < g.n && i < 3; i++)
		fprintf(out, "%s %s", i ? "," : "",
			hp_units_bytes(a, sizeof a, value_at(&g.groups[i], to)));
	fprintf(out, "%s\n", g.n > 3 ? ", ..." : "");
out:
	free(line);
	free(names);
	hp_timeline_by_free(&g);
	return ferror(out) ? -EIO : 0;
}

int hp_report_timeline_json(FILE *out, const struct hp_model *m, unsigned top, int dim,
			    const struct hp_events_select *sel)
{
	struct hp_tl_groups g;
	uint64_t from, to, bucket;
	char where[512];
	int ret = groups_of(m, dim, top ? top : 10, sel, &g, &from, &to, &bucket);

	if (ret)
		return ret;
	fputc('[', out);
	for (size_t i = 0; i < g.n; i++) {
		const struct hp_tl_group *s = &g.groups[i];
		fprintf(out, "%s\n    {\"key\": ", i ? "," : "");
		if (s->other) {
			fprintf(out, "\"other\", \"other\": true, \"groups\": %zu", s->members);
		} else if (dim == HP_BY_STACK) {
			const struct hp_mstack *st = s->stack < m->nstacks ? &m->stacks[s->stack] : NULL;
			const struct hp_location *l =
				st && st->depth ? &m->locations[hp_mstack_location(st, 0)] : NULL;
			hp_report_json_str(out, l ? l->syms[0].function : "(no stack)");
			fprintf(out, ", \"stack_id\": %" PRIu32 ", \"where\": ", s->stack);
			hp_report_json_str(out, l ? hp_location_where(m, l, where, sizeof where) : "");
		} else {
			hp_report_json_str(out, s->key);
			if (s->source) {
				fprintf(out, ", \"source\": ");
				hp_report_json_str(out, s->source);
			}
		}
		fprintf(out, ", \"max_inuse_bytes\": %.0f, \"max_time_ns\": %" PRIu64 ",\n"
			     "     \"series\": [", s->max_bytes, s->max_time_ns);
		for (size_t k = 0; k < s->npoints; k++)
			fprintf(out, "%s[%" PRIu64 ", %.0f, %.0f]", k ? ", " : "",
				s->points[k].time_ns, s->points[k].inuse_bytes,
				s->points[k].inuse_objects);
		fputs("]}", out);
	}
	fprintf(out, "%s]", g.n ? "\n  " : "");
	hp_timeline_by_free(&g);
	return ferror(out) ? -EIO : 0;
}
