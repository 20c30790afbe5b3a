/*
 * report.c - the text and JSON reports (see report.h).
 */
#include "report.h"
#include "report_int.h"
#include "frames.h"
#include "heapview.h"
#include "timeline.h"
#include "events_timeline.h"

#include "../common/hash.h"
#include "../common/sort.h"
#include "../common/units.h"
#include "../common/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A section of the report: which figure ranks the stacks. */
struct section {
	const char *title, *json;
	enum hp_metric metric;
};

static const struct section sections[] = {
	{"peak heap consumers (in use at the peak)", "peak", HP_METRIC_PEAK},
	{"leaks (in use at the snapshot)", "leaked", HP_METRIC_LEAKED},
	{"most allocations", "allocations", HP_METRIC_ALLOCATIONS},
	{"most temporary allocations", "temporary", HP_METRIC_TEMPORARY},
	{"most bytes allocated", "allocated", HP_METRIC_ALLOCATED},
};

/* The figures of a line of the report: a stack's (v points to its
 * hp_mstack.v), or those of the stacks that read the same summed (v points
 * into the merged array, sum_by_stack's, after the lines): a million lines
 * hold no copy of their stacks' figures. */
struct per_stack {
	uint32_t stack;
	const struct hp_values *v;
};

/* A stack's symbolic identity: a 64-bit hash of its frames' text.
 * Stacks whose return addresses differ but read the same (a call site
 * reached from two unrolled iterations, say) are one line of the report.
 * (Two different stacks share a hash with odds of about n^2 / 2^65: one in
 * ten million for a million stacks.) */
static uint64_t stack_key(const struct hp_model *m, const uint64_t *loc_hash, uint32_t stack)
{
	const struct hp_mstack *st = &m->stacks[stack];
	uint64_t h = HP_HASH_STR_SEED ^ st->depth;

	for (uint32_t i = 0; i < st->depth; i++)
		h = hp_hash_u64(h ^ loc_hash[hp_mstack_location(st, i)]) + i;
	return h;
}

struct keyed {
	uint64_t key;
	uint32_t stack;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* A string's hash in a location's: FNV-1a, multiplied to spread it. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	return hp_hash_str(h, s) * 0x9e3779b97f4a7c15ULL;
}

/* The report's lines: the stacks with allocations, those that read the
 * same merged. */
static struct per_stack *sum_by_stack(const struct hp_model *m, size_t *n)
{
	struct per_stack *out = NULL;
	struct hp_values *merged;
	struct keyed *keys = calloc(m->nstacks ? m->nstacks : 1, sizeof *keys);
	uint64_t *loc_hash = calloc(m->nlocations ? m->nlocations : 1, sizeof *loc_hash);
	size_t k = 0, nk = 0, nmerged = 0, nm = 0;

	if (!keys || !loc_hash)
		goto out;
	for (size_t i = 0; i < m->nlocations; i++) {
		const struct hp_location *l = &m->locations[i];
		uint64_t h = l->nsyms;
		for (uint32_t j = 0; j < l->nsyms; j++)
			h = hash_str(hash_str(h, l->syms[j].function), l->syms[j].file) ^
			    l->syms[j].line;
		loc_hash[i] = h;
	}
	for (size_t i = 0; i < m->nstacks; i++)
		if (m->stacks[i].v.alloc_objects > 0)
			keys[nk++] = (struct keyed){stack_key(m, loc_hash, (uint32_t)i), (uint32_t)i};
	hp_sort(keys, nk, sizeof *keys, by_key);
	/* The lines, then the sums of the lines of several stacks, in one
	 * block (freed with the lines). */
	for (size_t i = 1; i < nk; i++)
		if (keys[i].key == keys[i - 1].key && (i < 2 || keys[i - 1].key != keys[i - 2].key))
			nmerged++;
	out = calloc(1, (nk ? nk : 1) * sizeof *out + nmerged * sizeof *merged);
	if (!out)
		goto out;
	merged = (struct hp_values *)(out + (nk ? nk : 1));
	/* Merge stacks that read the same into the first of them. */
	for (size_t i = 0; i < nk; i++) {
		const struct hp_values *v = &m->stacks[keys[i].stack].v;
		if (i && keys[i].key == keys[i - 1].key) {
			/* the line's first merge: its sum starts from its stack's */
			if (!nm || out[k - 1].v != &merged[nm - 1]) {
				merged[nm++] = *out[k - 1].v;
				out[k - 1].v = &merged[nm - 1];
			}
			hp_values_add(&merged[nm - 1], v);
			continue;
		}
		out[k++] = (struct per_stack){keys[i].stack, v};
	}
	*n = k;
out:
	free(keys);
	free(loc_hash);
	return out;
}

/* The stacks are merged by how they read: a suppressed one is merged
 * with others only if they read the same, so all are suppressed alike
 * (suppressions match what they read). */

/* Whether a ranks before b: larger first, then lower stack id. */
static int ranks_before(const struct per_stack *a, const struct per_stack *b, enum hp_metric m)
{
	double x = hp_values_metric(a->v, m), y = hp_values_metric(b->v, m);
	return x != y ? x > y : a->stack < b->stack;
}

/* The metric by_rank sorts by: set just before hp_sort. */
static enum hp_metric rank_metric;

static int by_rank(const void *a, const void *b)
{
	const struct per_stack *x = *(const struct per_stack *const *)a,
			       *y = *(const struct per_stack *const *)b;
	return ranks_before(x, y, rank_metric) ? -1 : ranks_before(y, x, rank_metric);
}

/* Whether ps[i] is ranked at all: it has a value, and for the leaks it is
 * not a runtime allocation (counted apart). */
static int ranked(const struct hp_model *model, const struct per_stack *ps, enum hp_metric m)
{
	if (hp_values_metric(ps->v, m) <= 0.5)
		return 0;
	return !(m == HP_METRIC_LEAKED && model->stacks[ps->stack].suppressed);
}

/* Past this many wanted, top_of sorts them all rather than inserting
 * each into its list. */
#define TOP_BY_INSERTION 64

/* The top entries of ps by metric, into best[0..top), in order; returns
 * how many (only those with a value). A short list (the report's 10) in
 * one pass with insertion: a million stacks need no full sort. A long
 * one (--top 0: every stack) by sorting the ranked entries, n log n,
 * where insertion took n^2 / 2 steps (a million stacks: hours); when
 * their array cannot be had, by insertion still. */
static size_t top_of(const struct hp_model *model, const struct per_stack *ps, size_t n,
		     enum hp_metric m, size_t top, const struct per_stack **best)
{
	size_t k = 0;

	if (top > TOP_BY_INSERTION) {
		const struct per_stack **all = malloc((n ? n : 1) * sizeof *all);
		if (all) {
			for (size_t i = 0; i < n; i++)
				if (ranked(model, &ps[i], m))
					all[k++] = &ps[i];
			rank_metric = m;
			hp_sort(all, k, sizeof *all, by_rank);
			if (k > top)
				k = top;
			memcpy(best, all, k * sizeof *best);
			free(all);
			return k;
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t j;
		if (!ranked(model, &ps[i], m))
			continue;
		if (k == top && !ranks_before(&ps[i], best[k - 1], m))
			continue;
		j = k < top ? k++ : top - 1;
		while (j > 0 && ranks_before(&ps[i], best[j - 1], m)) {
			best[j] = best[j - 1];
			j--;
		}
		best[j] = &ps[i];
	}
	return k;
}

/* "1 block", "2 blocks" (a count rounded as hp_units_count rounds). */
static const char *plural(char *buf, size_t cap, double n, const char *one, const char *many)
{
	char c[32];
	snprintf(buf, cap, "%s %s", hp_units_count(c, sizeof c, n), hp_estimate_i64(n) == 1 ? one : many);
	return buf;
}

static double share(double part, double whole)
{
	return whole > 0 ? 100 * part / whole : 0;
}

/* Whether a share would round to 0% although something is there. */
static int small_share(double part, double whole)
{
	return part > 0 && share(part, whole) < 1;
}

/* A line's figures and what its percentage is a share of. */
const char *hp_report_metric_text(char *buf, size_t cap, const struct hp_values *v,
				  enum hp_metric m, double total, int at_exit, const char *what)
{
	char a[32], b[48];
	switch (m) {
	case HP_METRIC_PEAK:
		snprintf(buf, cap, "%s in %s (%.1f%% of the peak)",
			 hp_units_bytes(a, sizeof a, v->peak_bytes),
			 plural(b, sizeof b, v->peak_objects, "block", "blocks"),
			 share(v->peak_bytes, total));
		break;
	case HP_METRIC_LEAKED:
		snprintf(buf, cap, "%s in %s (%.1f%% of the bytes %s)",
			 hp_units_bytes(a, sizeof a, v->inuse_bytes),
			 plural(b, sizeof b, v->inuse_objects, "block", "blocks"),
			 share(v->inuse_bytes, total), at_exit ? "leaked" : "in use");
		break;
	case HP_METRIC_ALLOCATIONS:
		snprintf(buf, cap, "%s, %s (%.1f%% of all allocations)",
			 plural(b, sizeof b, v->alloc_objects, "allocation", "allocations"),
			 hp_units_bytes(a, sizeof a, v->alloc_bytes), share(v->alloc_objects, total));
		break;
	case HP_METRIC_TEMPORARY:
		snprintf(buf, cap,
			 "%s temporary (%.1f%% of all temporary; %s%.0f%% of this %s's "
			 "allocations were temporary)",
			 hp_units_count(b, sizeof b, v->temp_objects),
			 share(v->temp_objects, total),
			 small_share(v->temp_objects, v->alloc_objects) ? "under " : "",
			 small_share(v->temp_objects, v->alloc_objects)
				 ? 1
				 : share(v->temp_objects, v->alloc_objects),
			 what);
		break;
	default:
		snprintf(buf, cap, "%s in %s (%.1f%% of all bytes allocated)",
			 hp_units_bytes(a, sizeof a, v->alloc_bytes),
			 plural(b, sizeof b, v->alloc_objects, "allocation", "allocations"),
			 share(v->alloc_bytes, total));
	}
	return buf;
}

void hp_report_print_frame(FILE *out, const struct hp_model *m, const struct hp_location *l,
			   const struct hp_sym *s, const char *note, const struct hp_report_options *o,
			   const char *indent)
{
	char where[512], name[1024], cut_name[1024];
	const char *inl = s->inlined ? "(inline) " : "";
	size_t width = o ? o->width : 0, fixed;

	if (s->file[0] && s->line) {
		const char *base = strrchr(s->file, '/');
		snprintf(where, sizeof where, "%s:%u", base ? base + 1 : s->file, s->line);
	} else if (l->module >= 0) {
		snprintf(where, sizeof where, "%s+0x%" PRIx64, m->modules[l->module].name,
			 l->module_offset);
	} else if (l->address == HP_FRAME_GAP) { /* its name says it all */
		where[0] = 0;
	} else {
		snprintf(where, sizeof where, "0x%" PRIx64, l->address);
	}
	if (o && o->full_names)
		snprintf(name, sizeof name, "%s", s->function);
	else
		hp_name_display(name, sizeof name, s->function);
	/* Only the name gives way, down to 24 bytes: the file:line and the
	 * note (a folded run's marker) are what a reader looks up, and a
	 * line that cannot fit them runs past the width rather than lose
	 * them. */
	fixed = strlen(indent) + strlen(inl) + 2 + strlen(where) + strlen(note);
	size_t room = width > fixed + 24 ? width - fixed : 24;
	if (width && fixed + strlen(name) > width && strlen(name) >= room + 4) {
		/* (a cut of under 4 bytes would save nothing: "..." takes 3) */
		hp_text_cut_middle(cut_name, sizeof cut_name, name, room);
		fprintf(out, "%s%s%s%s%s%s\n", indent, inl, cut_name, where[0] ? "  " : "", where,
			note);
		return;
	}
	fprintf(out, "%s%s%s%s%s%s\n", indent, inl, name, where[0] ? "  " : "", where, note);
}

/* A stack's heading, "  N. text": when longer than width, broken after
 * its last "; " or before its last " (" that fits, the rest on a line
 * indented under it. */
void hp_report_print_heading(FILE *out, size_t rank, const char *text, unsigned width)
{
	size_t lead = 6, len = strlen(text), cut = 0;

	if (width && lead + len > width) {
		for (size_t i = 1; i + 2 < len && lead + i + 1 <= width; i++)
			if ((text[i] == ';' && text[i + 1] == ' ') || (text[i] == ' ' && text[i + 1] == '('))
				cut = text[i] == ';' ? i + 1 : i;
	}
	if (!cut) {
		fprintf(out, "  %2zu. %s\n", rank, text);
		return;
	}
	fprintf(out, "  %2zu. %.*s\n        %s\n", rank, (int)cut, text, text + cut + 1);
}

struct hp_report_frame *hp_report_frames(const struct hp_model *m, uint32_t stack, int all,
					 size_t *count)
{
	const struct hp_mstack *st = &m->stacks[stack];
	size_t n = hp_frames_count(m, st);
	struct hp_shown_frame *shown = malloc((n ? n : 1) * sizeof *shown);
	struct hp_report_frame *f = malloc((n ? n : 1) * sizeof *f);

	if (!shown || !f) {
		free(shown);
		free(f);
		return NULL;
	}
	n = hp_frames_shown(m, st, all, shown); /* frames.h: the one rule */
	for (size_t i = 0; i < n; i++) {
		const struct hp_location *l = &m->locations[shown[i].loc];
		f[i] = (struct hp_report_frame){l, &l->syms[shown[i].sym], shown[i].cls, 0};
	}
	free(shown);
	*count = n;
	return f;
}

void hp_report_print_frames(FILE *out, const struct hp_model *m, const struct hp_report_frame *f,
			    size_t n, const struct hp_report_options *o, const char *indent)
{
	unsigned frames = o ? o->frames : 8; /* 0: all */
	int all = o && o->all_frames;
	size_t first_own, shown = 0;
	int no_own;

	for (first_own = 0; first_own < n && f[first_own].cls != HP_FRAME_OWN; first_own++)
		;
	no_own = first_own == n;
	if (no_own)
		first_own = 0; /* no frame of the program's own: count from the first */
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		char note[64] = "";
		/* A stack without a frame of the program's own keeps its
		 * allocation site on a line of its own. */
		if (!all && f[i].cls == HP_FRAME_LIBRARY && !(no_own && i == 0)) {
			while (j + 1 < n && f[j + 1].cls == HP_FRAME_LIBRARY)
				j++;
			if (j > i)
				snprintf(note, sizeof note, "  [+%zu library frame%s]", j - i,
					 j - i == 1 ? "" : "s");
		}
		if (f[j].recursive)
			snprintf(note + strlen(note), sizeof note - strlen(note), "  [recursive]");
		if (frames && i >= first_own && shown == frames) {
			fprintf(out, "%s...\n", indent);
			break;
		}
		hp_report_print_frame(out, m, f[j].l, f[j].s, note, o, indent);
		if (j >= first_own)
			shown++;
		i = j;
	}
}

static void print_stack(FILE *out, const struct hp_model *m, uint32_t stack,
			const struct hp_report_options *o)
{
	struct hp_report_frame *f;
	size_t n;

	if (!m->stacks[stack].depth) {
		fprintf(out, "      (no stack: unwinding failed or the stack table was full)\n");
		return;
	}
	f = hp_report_frames(m, stack, o && o->all_frames, &n);
	if (!f)
		return; /* out of memory: the stack is left out, the report goes on */
	hp_report_print_frames(out, m, f, n, o, "      ");
	free(f);
}

/* The highest RSS sampled up to the snapshot's time: a report of an early
 * snapshot must not show a peak the program reached after it. The recorder
 * takes a sample just before it writes each snapshot, so that sample's time
 * is at most the snapshot's (both are nanoseconds since the capture's start). */
static double peak_rss(const struct hp_capture *cap, const struct hp_cap_snapshot *s)
{
	uint64_t r = 0;
	for (size_t i = 0; i < cap->nsamples; i++)
		if (cap->samples[i].time_ns <= s->time_ns && cap->samples[i].rss_bytes > r)
			r = cap->samples[i].rss_bytes;
	return (double)r;
}

/* Whether path's base name is name. */
static int same_name(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	return strcmp(slash ? slash + 1 : path, name) == 0;
}

/* --- the timeline ------------------------------------------------------ */

/* The samples of the time series a report of snapshot s shows: those taken
 * up to its time (a report of an early snapshot shows nothing after it, as
 * peak_rss). The recorder appends them in time order. */
static size_t series_len(const struct hp_capture *cap, const struct hp_cap_snapshot *s)
{
	size_t n = 0;
	while (n < cap->nsamples && cap->samples[n].time_ns <= s->time_ns)
		n++;
	return n;
}

/* The chart's column of time t: floor(t * cols / span), the last column
 * for t >= span. Doubles: a hostile capture's times must not overflow. */
static size_t chart_column(uint64_t t, uint64_t span, size_t cols)
{
	double c = (double)t * (double)cols / (double)(span ? span : 1);
	return c >= (double)(cols - 1) ? cols - 1 : (size_t)c;
}

/* Heap in use ('#') and RSS (':') over time, like ms_print's graph, from
 * the time series up to the snapshot: HP_REPORT_CHART_ROWS rows high, as
 * wide as the report (width columns; 100 when 0, no limit). Each column is
 * an equal slice of [0, the snapshot's time]: its height is the highest
 * sample in the slice, or the last sample before it (the level holds
 * between samples), rounded to the nearest row; the peak's column at least
 * the peak's bytes (known exactly, between samples). Under the axis, '^' marks
 * the peak's column and '|' each snapshot's (the peak wins a shared
 * column). Nothing when the capture has no sample (or all are zero). */
static void print_timeline(FILE *out, const struct hp_model *m, unsigned width,
			   const struct hp_events_select *sel)
{
	const struct hp_capture *cap = m->cap;
	const struct hp_cap_snapshot *s = m->snap;
	size_t n = series_len(cap, s), cols, k = 0, nsnaps = 0;
	uint64_t span = s->time_ns, heap = 0, rss = 0, bucket = 0;
	double ymax = 0;
	uint64_t *col_heap = NULL, *col_rss = NULL;
	char *line = NULL, a[32], b[32];
	struct hp_tl_groups ev = {0};
	const struct hp_site_point *pts = NULL;

	if (sel && sel->on) {
		/* The selected blocks' bytes in use, from the event log: no
		 * RSS (a process's, not a block's). */
		struct hp_events_tl *t;
		uint64_t from, to;
		if (hp_events_tl_open(m, sel, &t))
			return;
		hp_events_tl_span(t, &from, &to, &bucket);
		if (hp_events_tl_by(t, HP_EVENTS_TL_TOTAL, 1, &ev) || !ev.n) {
			hp_events_tl_close(t);
			hp_timeline_by_free(&ev);
			return;
		}
		hp_events_tl_close(t);
		pts = ev.groups[0].points;
		n = ev.groups[0].npoints;
	}
	if (!n)
		return;
	width = width ? width : 100;
	cols = width > HP_REPORT_CHART_LABEL + 1 + 10 ? width - HP_REPORT_CHART_LABEL - 1 : 10;
	col_heap = calloc(cols, sizeof *col_heap);
	col_rss = calloc(cols, sizeof *col_rss);
	line = malloc(cols + 1);
	if (!col_heap || !col_rss || !line)
		goto out; /* out of memory: the chart is left out, the report goes on */
	for (size_t c = 0; c < cols; c++) {
		uint64_t h = heap, r = rss; /* the level before this slice */
		for (; k < n && chart_column(pts ? pts[k].time_ns : cap->samples[k].time_ns, span,
					     cols) == c;
		     k++) {
			heap = pts ? (uint64_t)pts[k].inuse_bytes : cap->samples[k].heap_bytes;
			rss = pts ? 0 : cap->samples[k].rss_bytes;
			h = heap > h ? heap : h;
			r = rss > r ? rss : r;
		}
		col_heap[c] = h;
		col_rss[c] = r;
	}
	/* The peak is known exactly (its bytes and time), samples are not: a
	 * peak between two samples (a program that allocates seldom samples
	 * seldom) would be marked '^' under a column far lower. Its column
	 * reaches it. */
	if (s->peak_time_ns <= span && m->total.peak_bytes > 0) {
		size_t c = chart_column(s->peak_time_ns, span, cols);
		if (m->total.peak_bytes > (double)col_heap[c])
			col_heap[c] = (uint64_t)m->total.peak_bytes;
	}
	for (size_t c = 0; c < cols; c++) {
		ymax = (double)col_heap[c] > ymax ? (double)col_heap[c] : ymax;
		ymax = (double)col_rss[c] > ymax ? (double)col_rss[c] : ymax;
	}
	if (ymax <= 0)
		goto out;
	if (pts)
		fprintf(out, "\nheap in use (#) over time: the selected blocks, from the event log "
			     "per %g ms%s\n",
			(double)bucket / 1e6, m->sampled ? " (estimated)" : "");
	else
		fprintf(out, "\nheap in use (#) and RSS (:) over time%s\n",
			m->sampled ? " (the heap estimated)" : "");
	for (unsigned row = HP_REPORT_CHART_ROWS; row >= 1; row--) {
		/* A cell is filled when its value reaches the middle of its row. */
		double level = ((double)row - 0.5) * ymax / HP_REPORT_CHART_ROWS;
		size_t end = 0;
		for (size_t c = 0; c < cols; c++) {
			line[c] = (double)col_heap[c] >= level  ? '#'
				  : (double)col_rss[c] >= level ? ':'
								: ' ';
			if (line[c] != ' ')
				end = c + 1;
		}
		line[end] = '\0';
		if (row == HP_REPORT_CHART_ROWS)
			hp_units_bytes(a, sizeof a, ymax);
		else if (row == HP_REPORT_CHART_ROWS / 2)
			hp_units_bytes(a, sizeof a, ymax * row / HP_REPORT_CHART_ROWS);
		else
			a[0] = '\0';
		fprintf(out, "%*s |%s\n", HP_REPORT_CHART_LABEL - 1, a, line);
	}
	memset(line, '-', cols);
	line[cols] = '\0';
	fprintf(out, "%*s +%s\n", HP_REPORT_CHART_LABEL - 1, "0", line);
	memset(line, ' ', cols);
	for (size_t i = 0; i < cap->nsnapshots && &cap->snapshots[i] <= s; i++) {
		line[chart_column(cap->snapshots[i].time_ns, span, cols)] = '|';
		nsnaps++;
	}
	if (s->peak_time_ns <= span)
		line[chart_column(s->peak_time_ns, span, cols)] = '^';
	for (k = cols; k > 0 && line[k - 1] == ' '; k--)
		;
	line[k] = '\0';
	fprintf(out, "%*s  %s\n", HP_REPORT_CHART_LABEL - 1, "", line);
	snprintf(b, sizeof b, "%.3f s", (double)span / 1e9);
	fprintf(out, "%*s  0 s%*s\n", HP_REPORT_CHART_LABEL - 1, "",
		cols > 3 + strlen(b) ? (int)(cols - 3) : (int)strlen(b) + 1, b);
	fprintf(out, "%*s  ^ the peak, %s at %.3f s; | %zu snapshot%s; %zu%s\n",
		HP_REPORT_CHART_LABEL - 1, "", hp_units_bytes(a, sizeof a, m->total.peak_bytes),
		(double)s->peak_time_ns / 1e9, nsnaps, nsnaps == 1 ? "" : "s", n,
		pts ? (n == 1 ? " point" : " points") : (n == 1 ? " sample" : " samples"));
out:
	hp_timeline_by_free(&ev);
	free(col_heap);
	free(col_rss);
	free(line);
}

/* Whether the capture has a clock up to snapshot s. A capture converted
 * from a core (src/analyzer/core/core_cap.c) has none: its root carries no
 * time, so its snapshot's time and its peak's are 0 and it has no time
 * series. A recorder's snapshot is always taken some nanoseconds after
 * its start (times count from it), so all three at 0 mean no clock, and
 * rates and times are left out (text) or null (JSON) rather than shown
 * as "0/s" and "at 0.000 s". */
/* The interval snapshots (run --interval) of the capture's image: their
 * number and mean spacing in ns (0 when fewer than two). The recorder
 * spaces them out beyond the interval asked when writing them would take
 * more than 5% of the run (trigger.c, INTERVAL_SHARE). */
static size_t interval_spacing(const struct hp_capture *cap, double *mean_ns)
{
	uint64_t first = 0, last = 0;
	size_t n = 0;

	for (size_t i = 0; i < cap->nsnapshots; i++) {
		if (cap->snapshots[i].reason != HP_SNAP_INTERVAL)
			continue;
		if (!n++)
			first = cap->snapshots[i].time_ns;
		last = cap->snapshots[i].time_ns;
	}
	*mean_ns = n >= 2 && last > first ? (double)(last - first) / (double)(n - 1) : 0;
	return n;
}

static int has_times(const struct hp_capture *cap, const struct hp_cap_snapshot *s)
{
	if (s->time_ns || s->peak_time_ns || cap->nsamples)
		return 1;
	for (size_t i = 0; i < cap->nsnapshots && &cap->snapshots[i] <= s; i++)
		if (cap->snapshots[i].time_ns)
			return 1;
	return 0;
}

int hp_report_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o)
{
	const struct hp_capture *cap = m->cap;
	const struct hp_cap_snapshot *s = m->snap;
	const struct hp_values *t = &m->total;
	unsigned top = o && o->top ? o->top : 10;
	struct hp_report_options def = {.top = 10, .frames = 8};
	double secs = (double)s->time_ns / 1e9;
	int timed = has_times(cap, s);
	char a[64], b[64], c[64];
	size_t n;
	struct per_stack *ps;
	uint64_t lost = 0;

	fputs("heapprof report: ", out);
	hp_text_fputs(hp_model_program_name(cap), out);
	{
		/* Up to 7 arguments, as many as fit the width with " ..." after
		 * them when some are left out (a long command line, gcc's cc1,
		 * must not run past the terminal's edge). */
		size_t col = strlen("heapprof report: ") + strlen(hp_model_program_name(cap)), i;
		unsigned width = o && o->width ? o->width : 0;
		for (i = 1; i < cap->argc && i < 8; i++) {
			size_t len = 1 + strlen(cap->argv[i]);
			if (width && col + len + (i + 1 < cap->argc ? 4 : 0) > width)
				break;
			fputc(' ', out);
			hp_text_fputs(cap->argv[i], out);
			col += len;
		}
		fprintf(out, "%s\n", i < cap->argc ? " ..." : "");
	}
	if (cap->program && !same_name(cap->program, hp_model_program_name(cap))) {
		fputs("  executable ", out);
		hp_text_fputs(cap->program, out);
		fputc('\n', out);
	}
	fprintf(out, "  pid %" PRIu64 ", snapshot %" PRIu64 " of %zu (%s)", cap->pid, s->seq,
		cap->nsnapshots, hp_capture_reason_name(s->reason));
	if (timed)
		fprintf(out, " at %.3f s", secs);
	fputc('\n', out);
	if (m->view_heap) { /* --heap: a custom heap's blocks (heapview.h) */
		char name[256];
		fputs("  heap ", out);
		hp_text_fputs(hp_model_heap_name(m, m->view_heap, name, sizeof name), out);
		fputs(" alone (--heap): its blocks, its own peak; the chart is malloc's heap\n", out);
	}
	double spacing_ns;
	size_t nintervals = interval_spacing(cap, &spacing_ns);
	if (timed && cap->interval_ms && spacing_ns > 0) {
		fprintf(out, "  %zu interval snapshots, %.3f s apart on average (asked: %" PRIu64 " ms)\n",
			nintervals, spacing_ns / 1e9, cap->interval_ms);
		if (spacing_ns > 1.5e6 * (double)cap->interval_ms)
			fprintf(out, "  spaced out by the recorder: writing them takes at most 5%% of "
				     "the run\n");
	}
	if (m->sampled) {
		uint64_t samples = 0, live = 0;
		for (size_t i = 0; i < s->nbuckets; i++) {
			samples += s->buckets[i].alloc_count;
			live += s->buckets[i].alloc_count - s->buckets[i].free_count;
		}
		fprintf(out, "  sampled every %s on average: figures are estimates (unbiased)\n",
			hp_units_bytes(a, sizeof a, (double)m->sample_rate_bytes));
		/* An estimate rests on its samples: with few, say so. */
		fprintf(out, "  from %" PRIu64 " sampled allocation%s, %" PRIu64 " of them live%s\n",
			samples, samples == 1 ? "" : "s", live,
			live < 100 ? ": too few for\n  close figures (a lower --sample-rate, or a longer "
				     "run, gives more)"
				   : "");
	}
	if (cap->flags & HP_META_SHADOWED)
		fprintf(out, "  nothing recorded: another library's malloc came before heapprof's in\n"
			     "  LD_PRELOAD; put libheapprof.so first\n");
	fprintf(out, "\n");
	fprintf(out, "  allocations     %s", hp_units_count(a, sizeof a, t->alloc_objects));
	if (timed)
		fprintf(out, " (%s/s)", hp_units_count(b, sizeof b, secs > 0 ? t->alloc_objects / secs : 0));
	fputc('\n', out);
	fprintf(out, "  allocated       %s\n", hp_units_bytes(a, sizeof a, t->alloc_bytes));
	fprintf(out, "  temporary       %s (%.1f%% of all allocations were temporary)\n",
		hp_units_count(a, sizeof a, t->temp_objects), share(t->temp_objects, t->alloc_objects));
	fprintf(out, "  peak heap       %s in %s", hp_units_bytes(a, sizeof a, t->peak_bytes),
		plural(b, sizeof b, t->peak_objects, "block", "blocks"));
	if (timed) { /* --heap: a custom heap's own peak, at its own time */
		uint64_t peak_ns = s->peak_time_ns;
		if (!m->view_heap || hp_heapview_peak_time(m, &peak_ns))
			fprintf(out, " at %.3f s", (double)peak_ns / 1e9);
	}
	fputc('\n', out);
	if (peak_rss(cap, s) > 0) /* no sample yet: nothing to say */
		fprintf(out, "  peak RSS        %s\n",
			hp_units_bytes(a, sizeof a, peak_rss(cap, s)));
	if (s->recorder_bytes)
		fprintf(out, "  recorder        %s (heapprof's own tables and buffers, mapped)\n",
			hp_units_bytes(a, sizeof a, (double)s->recorder_bytes));
	fprintf(out, "  in use          %s in %s%s\n",
		hp_units_bytes(a, sizeof a, t->inuse_bytes - m->suppressed.inuse_bytes),
		plural(b, sizeof b, t->inuse_objects - m->suppressed.inuse_objects, "block", "blocks"),
		s->reason == HP_SNAP_EXIT ? " (leaked at exit)" : "");
	if (m->suppressed.inuse_objects > 0.5)
		fprintf(out, "  suppressed      %s of runtime allocations suppressed (%s)\n",
			plural(b, sizeof b, m->suppressed.inuse_objects, "block", "blocks"),
			hp_units_bytes(a, sizeof a, m->suppressed.inuse_bytes));
	if (m->filter_stacks)
		fprintf(out, "  filtered        %s of %s stacks kept (--focus, --ignore)\n",
			hp_units_count(a, sizeof a, (double)m->filter_kept),
			hp_units_count(b, sizeof b, (double)m->filter_stacks));
	if (m->cut_stacks) /* (the rest: report --by stack --frames 0) */
		fprintf(out, "  deep stacks     %s past --max-depth %" PRIu64 " (%.1f%% of the peak): "
			     "[frames cut]\n",
			hp_units_count(a, sizeof a, (double)m->cut_stacks), cap->max_depth,
			share(m->cut.peak_bytes, t->peak_bytes));
	for (int k = 1; k < HP_LOST_KINDS; k++) {
		if (!s->lost_count[k] || k == HP_LOST_UNKNOWN_FREE)
			continue;
		lost += s->lost_count[k];
		fprintf(out, "  not recorded    %s: %s\n",
			hp_units_count(c, sizeof c, (double)s->lost_count[k]),
			hp_capture_lost_name((unsigned)k));
	}
	(void)lost;
	print_timeline(out, m, o ? o->width : 0, o ? o->events : NULL);

	if (!(o && o->by_stack)) { /* by allocation site (report_site.c) */
		if (hp_report_site_sections(out, m, o ? o : &def))
			return -ENOMEM;
		return ferror(out) ? -EIO : 0;
	}
	/* By stack: the lines, merged as they read (the sections by site
	 * merge by site, report_site.c). */
	ps = sum_by_stack(m, &n);
	const struct per_stack **best = ps ? calloc(top, sizeof *best) : NULL;
	if (!best) {
		free(ps);
		return -ENOMEM;
	}
	for (size_t sec = 0; sec < sizeof sections / sizeof *sections; sec++) {
		enum hp_metric metric = sections[sec].metric;
		double total = hp_values_metric(t, metric);
		size_t shown = top_of(m, ps, n, metric, top, best);
		char line[256];

		if (metric == HP_METRIC_LEAKED)
			total -= m->suppressed.inuse_bytes;
		fprintf(out, "\n%s\n", sections[sec].title);
		for (size_t i = 0; i < shown; i++) {
			hp_report_print_heading(out, i + 1,
				      hp_report_metric_text(line, sizeof line, best[i]->v, metric, total,
							  s->reason == HP_SNAP_EXIT, "stack"),
				      o ? o->width : 0);
			print_stack(out, m, best[i]->stack, o ? o : &def);
		}
		if (!shown)
			fprintf(out, "  none\n");
	}
	free(best);
	free(ps);
	return ferror(out) ? -EIO : 0;
}

/* JSON string escaping. */
/* A JSON string of s escaped (text.h) first: well-formed UTF-8 whatever
 * the capture holds, and what a reader shows of it is harmless. */
static void json_str(FILE *out, const char *raw)
{
	char buf[4096];
	char *dup = NULL;
	const char *s = raw;

	if (!hp_text_is_clean(raw)) {
		size_t n = hp_text_escaped_len(raw) + 1;
		dup = n > sizeof buf ? malloc(n) : NULL;
		s = hp_text_escape(dup ? dup : buf, dup ? n : sizeof buf, raw);
	}
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
	free(dup);
}

void hp_report_json_str(FILE *out, const char *raw)
{
	json_str(out, raw);
}

static void json_values(FILE *out, const struct hp_values *v);

void hp_report_json_values(FILE *out, const struct hp_values *v)
{
	json_values(out, v);
}

static void json_values(FILE *out, const struct hp_values *v)
{
	fprintf(out,
		"{\"alloc_objects\": %.0f, \"alloc_bytes\": %.0f, \"free_objects\": %.0f, "
		"\"free_bytes\": %.0f, \"inuse_objects\": %.0f, \"inuse_bytes\": %.0f, "
		"\"peak_objects\": %.0f, \"peak_bytes\": %.0f, \"temp_objects\": %.0f, "
		"\"temp_bytes\": %.0f}",
		v->alloc_objects, v->alloc_bytes, v->free_objects, v->free_bytes, v->inuse_objects,
		v->inuse_bytes, v->peak_objects, v->peak_bytes, v->temp_objects, v->temp_bytes);
}

void hp_report_json_stack(FILE *out, const struct hp_model *m, uint32_t stack)
{
	const struct hp_mstack *st = &m->stacks[stack];
	int first = 1;

	fputc('[', out);
	for (uint32_t i = 0; i < st->depth; i++) {
		const struct hp_location *l = &m->locations[hp_mstack_location(st, i)];
		for (uint32_t k = 0; k < l->nsyms; k++) {
			fprintf(out, "%s{\"function\": ", first ? "" : ", ");
			json_str(out, l->syms[k].function);
			fprintf(out, ", \"file\": ");
			json_str(out, l->syms[k].file);
			fprintf(out, ", \"line\": %u, \"inlined\": %s, \"module\": ", l->syms[k].line,
				l->syms[k].inlined ? "true" : "false");
			json_str(out, l->module >= 0 ? m->modules[l->module].cap->path : "");
			fprintf(out, ", \"address\": \"0x%" PRIx64 "\"}", l->address);
			first = 0;
		}
	}
	fputc(']', out);
}

/* A time in nanoseconds, or null in a capture without a clock. */
static void json_time(FILE *out, int timed, uint64_t ns)
{
	if (timed)
		fprintf(out, "%" PRIu64, ns);
	else
		fputs("null", out);
}

int hp_report_json(FILE *out, const struct hp_model *m, const struct hp_report_options *o)
{
	const struct hp_capture *cap = m->cap;
	const struct hp_cap_snapshot *s = m->snap;
	unsigned top = o && o->top ? o->top : 10;
	size_t n;
	struct per_stack *ps = sum_by_stack(m, &n);
	int first, timed = has_times(cap, s);

	if (!ps)
		return -ENOMEM;
	fprintf(out, "{\n  \"program\": ");
	json_str(out, cap->program ? cap->program : "");
	fprintf(out, ",\n  \"argv\": [");
	for (size_t i = 0; i < cap->argc; i++) {
		fprintf(out, "%s", i ? ", " : "");
		json_str(out, cap->argv[i]);
	}
	fprintf(out, "],\n  \"pid\": %" PRIu64 ",\n  \"heap\": ", cap->pid);
	{ /* the heap shown: malloc's, or --heap's */
		char heap[256];
		json_str(out, hp_model_heap_name(m, m->view_heap, heap, sizeof heap));
	}
	fprintf(out, ",\n  \"snapshot\": {\"seq\": %" PRIu64 ", \"of\": %zu, \"reason\": ", s->seq,
		cap->nsnapshots);
	json_str(out, hp_capture_reason_name(s->reason));
	fprintf(out, ", \"time_ns\": ");
	json_time(out, timed, s->time_ns);
	fprintf(out, "},\n");
	if (cap->interval_ms) {
		double spacing_ns;
		size_t n = interval_spacing(cap, &spacing_ns);
		fprintf(out,
			"  \"interval\": {\"asked_ms\": %" PRIu64 ", \"snapshots\": %zu, "
			"\"mean_spacing_ns\": %.0f},\n",
			cap->interval_ms, n, timed ? spacing_ns : 0);
	}
	fprintf(out, "  \"sampled\": %s,\n  \"sample_rate_bytes\": %" PRIu64 ",\n",
		m->sampled ? "true" : "false", m->sample_rate_bytes);
	fprintf(out, "  \"malloc_shadowed\": %s,\n", cap->flags & HP_META_SHADOWED ? "true" : "false");
	fprintf(out, "  \"peak_time_ns\": ");
	json_time(out, timed, s->peak_time_ns);
	fprintf(out, ",\n  \"peak_rss_bytes\": %.0f,\n", peak_rss(cap, s));
	fprintf(out, "  \"totals\": ");
	json_values(out, &m->total);
	fprintf(out, ",\n  \"suppressed\": ");
	json_values(out, &m->suppressed);
	/* Stacks deeper than max_depth: their middle frames are not kept */
	fprintf(out, ",\n  \"max_depth\": %" PRIu64 ",\n  \"cut_stacks\": {\"count\": %zu, \"values\": ",
		cap->max_depth, m->cut_stacks);
	json_values(out, &m->cut);
	fprintf(out, "},\n  \"lost\": {");
	first = 1;
	for (int k = 1; k < HP_LOST_KINDS; k++) {
		if (!s->lost_count[k])
			continue;
		fprintf(out, "%s\"%d\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"why\": ",
			first ? "" : ", ", k, s->lost_count[k], s->lost_bytes[k]);
		json_str(out, hp_capture_lost_name((unsigned)k));
		fputc('}', out);
		first = 0;
	}
	const struct per_stack **best = calloc(top, sizeof *best);
	/* The top sites' timelines: as many as the top stacks. */
	struct hp_site_series *sites = NULL;
	size_t nsites = 0;
	if (!best || hp_timeline_sites(m, top, &sites, &nsites)) {
		free(best);
		free(ps);
		return -ENOMEM;
	}
	fprintf(out, "},\n  \"top\": {");
	for (size_t sec = 0; sec < sizeof sections / sizeof *sections; sec++) {
		size_t shown = top_of(m, ps, n, sections[sec].metric, top, best);

		fprintf(out, "%s\n    \"%s\": [", sec ? "," : "", sections[sec].json);
		for (size_t i = 0; i < shown; i++) {
			fprintf(out, "%s\n      {\"values\": ", i ? "," : "");
			json_values(out, best[i]->v);
			fprintf(out, ", \"stack\": ");
			hp_report_json_stack(out, m, best[i]->stack);
			fputc('}', out);
		}
		fprintf(out, "%s]", shown ? "\n    " : "");
	}
	fprintf(out, "\n  },\n  \"top_sites\": ");
	if (hp_report_site_json(out, m, top)) {
		hp_timeline_free(sites, nsites);
		free(best);
		free(ps);
		return -ENOMEM;
	}
	fprintf(out, ",\n  \"series\": [");
	for (size_t i = 0, ns = series_len(cap, s); i < ns; i++)
		fprintf(out,
			"%s\n    {\"time_ns\": %" PRIu64 ", \"heap_bytes\": %" PRIu64
			", \"rss_bytes\": %" PRIu64 "}",
			i ? "," : "", cap->samples[i].time_ns, cap->samples[i].heap_bytes,
			cap->samples[i].rss_bytes);
	fprintf(out, "%s],\n  \"sites\": [", series_len(cap, s) ? "\n  " : "");
	for (size_t i = 0; i < nsites; i++) {
		fprintf(out,
			"%s\n    {\"stack_id\": %" PRIu32 ", \"max_inuse_bytes\": %.0f, "
			"\"max_time_ns\": %" PRIu64 ", \"stack\": ",
			i ? "," : "", sites[i].stack, sites[i].max_bytes, sites[i].max_time_ns);
		hp_report_json_stack(out, m, sites[i].stack);
		fprintf(out, ",\n     \"series\": [");
		for (size_t k = 0; k < sites[i].npoints; k++)
			fprintf(out, "%s[%" PRIu64 ", %.0f, %.0f]", k ? ", " : "",
				sites[i].points[k].time_ns, sites[i].points[k].inuse_bytes,
				sites[i].points[k].inuse_objects);
		fprintf(out, "]}");
	}
	/* The same by stack with "other", as report --by X's "timeline". */
	fprintf(out, "%s],\n  \"timeline\": ", nsites ? "\n  " : "");
	if (hp_report_timeline_json(out, m, top, HP_BY_STACK, o ? o->events : NULL)) {
		hp_timeline_free(sites, nsites);
		free(best);
		free(ps);
		return -ENOMEM;
	}
	fprintf(out, ",\n  \"histograms\": ");
	if (hp_report_hist_json(out, m, top)) {
		hp_timeline_free(sites, nsites);
		free(best);
		free(ps);
		return -ENOMEM;
	}
	fprintf(out, ",\n  \"snapshots\": [");
	for (size_t i = 0; i < cap->nsnapshots && &cap->snapshots[i] <= s; i++) {
		fprintf(out, "%s\n    {\"seq\": %" PRIu64 ", \"reason\": ", i ? "," : "",
			cap->snapshots[i].seq);
		json_str(out, hp_capture_reason_name(cap->snapshots[i].reason));
		fprintf(out, ", \"time_ns\": ");
		json_time(out, timed, cap->snapshots[i].time_ns);
		fputc('}', out);
	}
	fprintf(out, "\n  ]\n}\n"); /* the model has a snapshot: s */
	hp_timeline_free(sites, nsites);
	free(best);
	free(ps);
	return ferror(out) ? -EIO : 0;
}

int hp_report_blocks_json(FILE *out, const struct hp_model *m,
			  const struct hp_events_select *sel, size_t limit)
{
	const struct hp_capture *cap = m->cap;
	struct hp_events_blocks *it;
	struct hp_ev_block blk, *x = &blk;
	size_t listed = 0, shown = 0;
	uint64_t end;
	unsigned char *used = calloc(m->nstacks + 1, 1); /* the stacks of the blocks shown */
	int first = 1, ret;

	if (!used || hp_events_blocks_open(cap, &it, &end)) {
		free(used);
		return -ENOMEM;
	}
	/* The log read twice: the count first, then the blocks. */
	while ((ret = hp_events_blocks_next(it, x)) > 0)
		listed += hp_events_listed(cap, sel, x, end) != 0;
	if (ret < 0) {
		hp_events_blocks_close(it);
		free(used);
		return ret;
	}
	hp_events_blocks_rewind(it);
	fprintf(out, "{\n  \"program\": ");
	json_str(out, cap->program ? cap->program : "");
	fprintf(out,
		",\n  \"window\": {\"from_ns\": %" PRIu64 ", \"to_ns\": %" PRIu64
		"},\n  \"listed\": %zu, \"shown\": %zu,\n  \"blocks\": [",
		sel->between ? sel->from_ns : 0, sel->between ? sel->to_ns : end, listed,
		limit && limit < listed ? limit : listed);
	while ((!limit || shown < limit) && (ret = hp_events_blocks_next(it, x)) > 0) {
		char buf[64];
		if (!hp_events_listed(cap, sel, x, end))
			continue;
		fprintf(out, "%s\n    {\"address\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 ", \"type\": ",
			shown++ ? "," : "", x->addr, x->size);
		json_str(out, hp_events_type_name(cap, x->type_tag, buf, sizeof buf));
		fprintf(out, ", \"thread\": ");
		json_str(out, hp_events_thread_name(cap, x->thread, buf, sizeof buf));
		fprintf(out, ", \"alloc_ns\": %" PRIu64, x->alloc_ns);
		if (x->free_ns != UINT64_MAX)
			fprintf(out, ", \"free_ns\": %" PRIu64 ", \"lifetime_ns\": %" PRIu64,
				x->free_ns, x->free_ns - x->alloc_ns);
		else
			fprintf(out, ", \"free_ns\": null, \"lifetime_ns\": null");
		fprintf(out, ", \"stack_id\": %" PRIu32 "}", x->stack_id);
		if (x->stack_id < m->nstacks)
			used[x->stack_id] = 1;
	}
	fprintf(out, "%s],\n  \"stacks\": {", shown ? "\n  " : "");
	for (size_t i = 0; i < m->nstacks; i++) {
		if (!used[i])
			continue;
		fprintf(out, "%s\n    \"%zu\": ", first ? "" : ",", i);
		hp_report_json_stack(out, m, (uint32_t)i);
		first = 0;
	}
	fprintf(out, "%s}\n}\n", first ? "" : "\n  ");
	free(used);
	hp_events_blocks_close(it);
	if (ret < 0)
		return ret;
	return ferror(out) ? -EIO : 0;
}
