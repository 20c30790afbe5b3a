/*
 * report_by.c - `heapprof report --by DIM`: the figures by function, line,
 * module, type, context, thread or heap (see report.h, group.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/units.h"
#include "group.h"
#include "report.h"
#include "../common/text.h"

/* The columns of a row's six figures: two spaces, then six of 10 with a
 * space between ("  %10s %10s %10s %10s %10s %10s"). */
#define FIGURES_COLS (2 + 6 * 10 + 5)

/* A row's key as the text shows it: a function's name as the report's
 * frames read (hp_name_display, unless --full-names); a line's too, with
 * its file's base name and line ("build rtree.cpp:53"). Other keys as
 * they are. Returns buf or key. */
static const char *display_key(char *buf, size_t cap, const char *key, int dim,
			       const struct hp_report_options *o)
{
	const char *sp, *file, *slash;
	char *name;

	if (dim != HP_BY_FUNCTION && dim != HP_BY_LINE)
		return key;
	if (dim == HP_BY_FUNCTION) {
		if (o && o->full_names)
			return key;
		return hp_name_display(buf, cap, key);
	}
	/* "function /path/file.c:LINE": the file's path has no space in a
	 * key the model built, the function may (operators, return types) */
	sp = strrchr(key, ' ');
	if (!sp)
		return key;
	file = sp + 1;
	slash = strrchr(file, '/');
	name = strndup(key, (size_t)(sp - key));
	if (!name)
		return key;
	if (o && o->full_names)
		snprintf(buf, cap, "%s", name);
	else
		hp_name_display(buf, cap, name);
	snprintf(buf + strlen(buf), cap - strlen(buf), " %s", slash ? slash + 1 : file);
	free(name);
	return buf;
}

static double percent(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

int hp_report_by_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o,
		      int dim)
{
	struct hp_values total;
	const struct hp_values *t = &total;
	char heap[256];
	unsigned top = o && o->top ? o->top : 10;
	struct hp_groups g;
	double typed_inuse, typed_peak;
	char a[64], b[64], c[64], d[64], e[64], f[64];
	int ret;

	ret = hp_groups_build(&g, m, (enum hp_dim)dim);
	if (ret)
		return ret;
	hp_group_heap_total(m, &total);
	hp_group_typed(m, &typed_inuse, &typed_peak);
	fputs("heapprof report: ", out);
	hp_text_fputs(hp_model_program_name(m->cap), out);
	fprintf(out, ", by %s\n", hp_dim_name((enum hp_dim)dim));
	fprintf(out, "  snapshot %" PRIu64 " of %zu (%s)%s\n", m->snap->seq, m->cap->nsnapshots,
		hp_capture_reason_name(m->snap->reason),
		m->sampled ? ", sampled: figures are estimates" : "");
	if (m->view_heap) {
		fputs("  heap ", out);
		hp_text_fputs(hp_model_heap_name(m, m->view_heap, heap, sizeof heap), out);
		fprintf(out, ": %s allocated, %s in use, %s at its own peak\n",
			hp_units_bytes(a, sizeof a, t->alloc_bytes),
			hp_units_bytes(b, sizeof b, t->inuse_bytes),
			hp_units_bytes(c, sizeof c, t->peak_bytes));
	} else {
		fprintf(out, "  malloc's heap: %s allocated, %s in use, %s at the peak\n",
			hp_units_bytes(a, sizeof a, t->alloc_bytes),
			hp_units_bytes(b, sizeof b, t->inuse_bytes),
			hp_units_bytes(c, sizeof c, t->peak_bytes));
	}
	if (!m->view_heap && m->suppressed.alloc_objects > 0.5)
		fprintf(out, "  left out: %s in %s runtime block%s "
			     "(--no-default-suppressions)\n",
			hp_units_bytes(a, sizeof a, m->suppressed.alloc_bytes),
			hp_units_count(b, sizeof b, m->suppressed.alloc_objects),
			m->suppressed.alloc_objects == 1 ? "" : "s");
	fprintf(out, "  known type: %.1f%% of the heap in use (%s), %.1f%% at the peak (%s)\n",
		percent(typed_inuse, t->inuse_bytes), hp_units_bytes(a, sizeof a, typed_inuse),
		percent(typed_peak, t->peak_bytes), hp_units_bytes(b, sizeof b, typed_peak));
	{
		/* Each source's share of the heap in use, then at the peak,
		 * every source that types something: a line each (five
		 * sources fit 80 columns). */
		double src[2][HP_TYPESRC_COUNT], all[2] = {t->inuse_bytes, t->peak_bytes};
		hp_group_typed_by_source(m, src[0], src[1]);
		for (int w = 0; w < 2; w++) {
			int any = 0;
			for (int k = 1; k < HP_TYPESRC_COUNT; k++) {
				if (!(src[w][k] > 0))
					continue;
				fprintf(out, "%s %s %.1f%%",
					any ? "," : w ? "    at the peak:" : "    in use:",
					hp_type_origin_name((enum hp_type_origin)k),
					percent(src[w][k], all[w]));
				any = 1;
			}
			if (any)
				fputc('\n', out);
		}
	}
	fprintf(out, "\n  %10s %10s %10s %10s %10s %10s  %s\n", "peak", "objects", "in use",
		"objects", "allocated", "objects", hp_dim_name((enum hp_dim)dim));
	for (size_t i = 0; i < g.n && i < top; i++) {
		const struct hp_group_row *r = &g.rows[i];
		char shown[2048];
		const char *key = display_key(shown, sizeof shown, r->key, dim, o);
		const char *tail = dim == HP_BY_LINE ? strrchr(key, ' ') : NULL;
		size_t len = strlen(key) + (r->source ? strlen(r->source) + 3 : 0);
		unsigned width = o ? o->width : 0;

		/* A key too long for the rest of the line has a line of its own,
		 * above its figures, cut in the middle to the width: its name,
		 * never a line's file:line nor a type's source. The figures
		 * take FIGURES_COLS columns, then two spaces and the key. */
		/* An array type's elements (issue 26): at the peak, in use and
		 * allocated, as the figures. After the key, or on a line of
		 * their own, indented, when they would pass the width. */
		char note[160] = "";
		if (r->has_elems) {
			char na[32], nb[32], nc[32];
			snprintf(note, sizeof note, "(elements: %s at the peak, %s in use, %s allocated)",
				 hp_units_count(na, sizeof na, r->elems.peak_objects),
				 hp_units_count(nb, sizeof nb, r->elems.inuse_objects),
				 hp_units_count(nc, sizeof nc, r->elems.alloc_objects));
		}
		if (width && FIGURES_COLS + 2 + len > width) {
			char cut[2048];
			size_t fixed = len - strlen(key) + (tail ? strlen(tail) : 0);
			size_t room = width > 4 + fixed + 24 ? width - 4 - fixed : 24;
			char *name = strndup(key, tail ? (size_t)(tail - key) : strlen(key));
			hp_text_cut_middle(cut, sizeof cut, name ? name : key, room);
			free(name);
			if (tail)
				snprintf(cut + strlen(cut), sizeof cut - strlen(cut), "%s", tail);
			fputs("  ", out);
			hp_text_fputs(cut, out);
			if (r->source)
				fprintf(out, " [%s]", r->source);
			if (note[0])
				fprintf(out, "%s%s",
					2 + strlen(cut) + (r->source ? strlen(r->source) + 3 : 0) +
							1 + strlen(note) >
						width
						? "\n      "
						: " ",
					note);
			note[0] = '\0';
			fputs("\n", out);
		}
		fprintf(out, "  %10s %10s %10s %10s %10s %10s",
			hp_units_bytes(a, sizeof a, r->v.peak_bytes),
			hp_units_count(b, sizeof b, r->v.peak_objects),
			hp_units_bytes(c, sizeof c, r->v.inuse_bytes),
			hp_units_count(d, sizeof d, r->v.inuse_objects),
			hp_units_bytes(e, sizeof e, r->v.alloc_bytes),
			hp_units_count(f, sizeof f, r->v.alloc_objects));
		if (!(width && FIGURES_COLS + 2 + len > width)) {
			fputs("  ", out);
			hp_text_fputs(key, out);
			if (r->source)
				fprintf(out, " [%s]", r->source);
		}
		if (note[0])
			fprintf(out, "%s%s",
				width && FIGURES_COLS + 2 + len + 1 + strlen(note) > width ? "\n      "
											    : " ",
				note);
		if (r->has_heap_peak) {
			fprintf(out, "%sown peak %s in %s block%s, %" PRIu64 " reset%s",
				width && FIGURES_COLS + 2 + len + 50 > width ? "\n      " : " (",
				hp_units_bytes(a, sizeof a, (double)r->heap_peak_bytes),
				hp_units_count(b, sizeof b, (double)r->heap_peak_count),
				r->heap_peak_count == 1 ? "" : "s", r->heap_resets,
				r->heap_resets == 1 ? "" : "s");
			if (!(width && FIGURES_COLS + 2 + len + 50 > width))
				fputc(')', out);
		}
		fputc('\n', out);
	}
	if (g.n > top)
		fprintf(out, "  ... %zu more (--top)\n", g.n - top);
	if (!g.n)
		fprintf(out, "  none\n");
	hp_groups_free(&g);
	return ferror(out) ? -EIO : 0;
}

int hp_report_by_json(FILE *out, const struct hp_model *m, const struct hp_report_options *o,
		      int dim)
{
	struct hp_groups g;
	struct hp_values total;
	double typed_inuse, typed_peak;
	char heap[256];
	int ret;

	ret = hp_groups_build(&g, m, (enum hp_dim)dim);
	if (ret)
		return ret;
	hp_group_heap_total(m, &total);
	hp_group_typed(m, &typed_inuse, &typed_peak);
	fprintf(out, "{\n  \"program\": ");
	hp_report_json_str(out, m->cap->program ? m->cap->program : "");
	fprintf(out, ",\n  \"by\": \"%s\",\n", hp_dim_name((enum hp_dim)dim));
	fprintf(out, "  \"snapshot\": {\"seq\": %" PRIu64 ", \"of\": %zu},\n", m->snap->seq,
		m->cap->nsnapshots);
	fprintf(out, "  \"heap\": ");
	hp_report_json_str(out, hp_model_heap_name(m, m->view_heap, heap, sizeof heap));
	fprintf(out, ",\n  \"sampled\": %s,\n  \"totals\": ", m->sampled ? "true" : "false");
	hp_report_json_values(out, &total);
	fprintf(out, ",\n  \"known_type\": {\"inuse_bytes\": %.0f, \"peak_bytes\": %.0f},\n",
		typed_inuse, typed_peak);
	{
		double src_inuse[HP_TYPESRC_COUNT], src_peak[HP_TYPESRC_COUNT];
		hp_group_typed_by_source(m, src_inuse, src_peak);
		fprintf(out, "  \"known_type_by_source\": {");
		for (int k = 1; k < HP_TYPESRC_COUNT; k++)
			fprintf(out, "%s\"%s\": {\"inuse_bytes\": %.0f, \"peak_bytes\": %.0f}",
				k > 1 ? ", " : "", hp_type_origin_name((enum hp_type_origin)k),
				src_inuse[k], src_peak[k]);
		fprintf(out, "},\n");
	}
	fprintf(out, "  \"rows\": [");
	for (size_t i = 0; i < g.n; i++) {
		const struct hp_group_row *r = &g.rows[i];
		fprintf(out, "%s\n    {\"key\": ", i ? "," : "");
		hp_report_json_str(out, r->key);
		if (r->source) {
			fprintf(out, ", \"source\": ");
			hp_report_json_str(out, r->source);
		}
		fprintf(out, ", \"values\": ");
		hp_report_json_values(out, &r->v);
		if (r->has_elems)
			fprintf(out,
				", \"elements\": {\"alloc\": %.0f, \"free\": %.0f, \"inuse\": %.0f, "
				"\"peak\": %.0f, \"temp\": %.0f}",
				r->elems.alloc_objects, r->elems.free_objects, r->elems.inuse_objects,
				r->elems.peak_objects, r->elems.temp_objects);
		if (dim == HP_BY_CONTEXT) {
			fprintf(out, ", \"self\": ");
			hp_report_json_values(out, &r->self);
		}
		if (r->has_heap_peak)
			fprintf(out,
				", \"heap_peak\": {\"bytes\": %" PRIu64 ", \"objects\": %" PRIu64
				", \"time_ns\": %" PRIu64 ", \"resets\": %" PRIu64 "}",
				r->heap_peak_bytes, r->heap_peak_count, r->heap_peak_time_ns,
				r->heap_resets);
		fputc('}', out);
	}
	fprintf(out, "%s],\n  \"timeline\": ", g.n ? "\n  " : "");
	hp_groups_free(&g);
	/* The top groups over time, as many as a text report's rows. */
	ret = hp_report_timeline_json(out, m, o && o->top ? o->top : 10, dim, o ? o->events : NULL);
	if (ret)
		return ret;
	fprintf(out, "\n}\n");
	return ferror(out) ? -EIO : 0;
}
