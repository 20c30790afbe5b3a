/*
 * diff_by.c - `heapprof diff --by DIM`: what grew by type (or any
 * dimension of group.h), NEW minus BASE (see diff.h).
 *
 * Each side's figures are summed by key (group.h, a type with its source),
 * keys are matched by their text, and the keys whose figure of the metric
 * changed are ranked by the absolute change, then by key.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/strtab.h"
#include "../common/units.h"
#include "../common/vec.h"
#include "diff.h"
#include "group.h"
#include "report.h"
#include "../common/text.h"

struct by_row {
	const char *key, *source;
	struct hp_values base, new;
	double change;
};

struct by_diff {
	struct hp_groups g[2];
	struct hp_strtab keys;
	struct by_row *rows;
	size_t n, cap;
};

static int by_change(const void *pa, const void *pb)
{
	const struct by_row *a = pa, *b = pb;

	if (fabs(a->change) != fabs(b->change))
		return fabs(a->change) > fabs(b->change) ? -1 : 1;
	if (a->change != b->change)
		return a->change > b->change ? -1 : 1;
	return strcmp(a->key, b->key);
}

static void by_diff_free(struct by_diff *d)
{
	hp_groups_free(&d->g[0]);
	hp_groups_free(&d->g[1]);
	hp_strtab_free(&d->keys);
	free(d->rows);
}

static struct hp_values side_values(const struct hp_values *v, int at_peak);

/* A side's totals as its rows sum them (hp_group_heap_total: the
 * runtime's suppressed stacks left out, as report --by counts them). */
static struct hp_values side_total(const struct hp_model *m, int at_peak)
{
	struct hp_values t;

	hp_group_heap_total(m, &t);
	return side_values(&t, at_peak);
}

/* v as a side at its peak sees it (at_peak): in use, what was in use at
 * the peak; else v. */
static struct hp_values side_values(const struct hp_values *v, int at_peak)
{
	struct hp_values r = *v;

	if (at_peak) {
		r.inuse_bytes = v->peak_bytes;
		r.inuse_objects = v->peak_objects;
	}
	return r;
}

static int by_diff_build(struct by_diff *d, const struct hp_model *base,
			 const struct hp_model *new, int dim, enum hp_metric metric, unsigned at_peak)
{
	memset(d, 0, sizeof *d);
	if (hp_groups_build(&d->g[0], base, (enum hp_dim)dim) ||
	    hp_groups_build(&d->g[1], new, (enum hp_dim)dim))
		goto nomem;
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < d->g[side].n; i++) {
			const struct hp_group_row *r = &d->g[side].rows[i];
			char k[2400];
			uint32_t idx;
			snprintf(k, sizeof k, "%s\t%s", r->key, r->source ? r->source : "");
			if (hp_strtab_intern(&d->keys, k, &idx))
				goto nomem;
			if (idx == d->n) {
				if (hp_vec_grow(&d->rows, &d->cap, d->n + 1))
					goto nomem;
				memset(&d->rows[d->n], 0, sizeof *d->rows);
				d->rows[d->n].key = r->key;
				d->rows[d->n].source = r->source;
				d->n++;
			}
			struct hp_values v = side_values(&r->v, at_peak & (side ? HP_DIFF_NEW_AT_PEAK
									       : HP_DIFF_BASE_AT_PEAK));
			hp_values_add(side ? &d->rows[idx].new : &d->rows[idx].base, &v);
		}
	}
	for (size_t i = 0; i < d->n; i++)
		d->rows[i].change = hp_values_metric(&d->rows[i].new, metric) -
				    hp_values_metric(&d->rows[i].base, metric);
	hp_sort(d->rows, d->n, sizeof *d->rows, by_change);
	return 0;
nomem:
	by_diff_free(d);
	return -ENOMEM;
}

/* A figure of the metric's unit. */
static const char *figure(char *buf, size_t cap, double v, enum hp_metric metric)
{
	return hp_metric_is_bytes(metric) ? hp_units_bytes(buf, cap, v)
					  : hp_units_count(buf, cap, v);
}

/* A signed figure of the metric's unit. */
static const char *signed_figure(char *buf, size_t cap, double v, enum hp_metric metric)
{
	if (cap < 2)
		return "";
	buf[0] = v < 0 ? '-' : '+';
	figure(buf + (v != 0), cap - 1, fabs(v), metric);
	return buf;
}

int hp_diff_by_text(FILE *out, const struct hp_model *base, const struct hp_model *new, int dim,
		    enum hp_metric metric, unsigned at_peak, const struct hp_diff_text_options *o)
{
	struct by_diff d;
	unsigned top = o ? o->top : 10;
	char a[64], b[64], c[64];
	size_t shown = 0;
	int ret = by_diff_build(&d, base, new, dim, metric, at_peak);
	struct hp_values bt = side_total(base, at_peak & HP_DIFF_BASE_AT_PEAK);
	struct hp_values nt = side_total(new, at_peak & HP_DIFF_NEW_AT_PEAK);

	if (ret)
		return ret;
	{
		/* "heapprof diff by DIM, METRIC: BASE -> NEW", each side on a
		 * line of its own when that would pass the width. */
		const char *bn = o && o->base_name ? o->base_name : "BASE";
		const char *nn = o && o->new_name ? o->new_name : "NEW";
		int n = fprintf(out, "heapprof diff by %s, %s:", hp_dim_name((enum hp_dim)dim),
				hp_metric_name(metric));
		int split = o && o->width && (size_t)n + 1 + strlen(bn) + 4 + strlen(nn) > o->width;
		fputs(split ? "\n  " : " ", out);
		hp_text_fputs(bn, out);
		fputs(split ? "\n  -> " : " -> ", out);
		hp_text_fputs(nn, out);
	}
	fprintf(out, "\n  total %s -> %s (%s)\n\n",
		figure(a, sizeof a, hp_values_metric(&bt, metric), metric),
		figure(b, sizeof b, hp_values_metric(&nt, metric), metric),
		signed_figure(c, sizeof c, hp_values_metric(&nt, metric) - hp_values_metric(&bt, metric),
			      metric));
	for (size_t i = 0; i < d.n && (!top || shown < top); i++) {
		const struct by_row *r = &d.rows[i];
		if (r->change == 0)
			continue;
		char name[2048], cut[2048];
		const char *key = r->key;
		size_t fixed = 16 + (r->source ? strlen(r->source) + 3 : 0);
		/* a function's name as report shows it; cut in its middle to
		 * the width (never under 24 bytes), its source kept whole */
		if (dim == HP_BY_FUNCTION)
			key = hp_name_display(name, sizeof name, r->key);
		if (o && o->width && fixed + strlen(key) > o->width &&
		    strlen(key) >= (o->width > fixed + 24 ? o->width - fixed : 24) + 4) {
			hp_text_cut_middle(cut, sizeof cut, key,
					   o->width > fixed + 24 ? o->width - fixed : 24);
			key = cut;
		}
		fprintf(out, "  %12s  ", signed_figure(a, sizeof a, r->change, metric));
		hp_text_fputs(key, out);
		if (r->source)
			fprintf(out, " [%s]", r->source);
		fputc('\n', out);
		shown++;
	}
	if (!shown)
		fprintf(out, "  no change\n");
	by_diff_free(&d);
	return ferror(out) ? -EIO : 0;
}

int hp_diff_by_json(FILE *out, const struct hp_model *base, const struct hp_model *new, int dim,
		    enum hp_metric metric, unsigned at_peak)
{
	struct by_diff d;
	int ret = by_diff_build(&d, base, new, dim, metric, at_peak);
	struct hp_values bt = side_total(base, at_peak & HP_DIFF_BASE_AT_PEAK);
	struct hp_values nt = side_total(new, at_peak & HP_DIFF_NEW_AT_PEAK);

	if (ret)
		return ret;
	fprintf(out, "{\n  \"by\": \"%s\",\n  \"metric\": \"%s\",\n  \"heap\": ",
		hp_dim_name((enum hp_dim)dim), hp_metric_name(metric));
	{ /* the heap compared: malloc's, or --heap's */
		char heap[256];
		hp_report_json_str(out, hp_model_heap_name(new, new->view_heap, heap, sizeof heap));
	}
	fprintf(out, ",\n  \"base_totals\": ");
	hp_report_json_values(out, &bt);
	fprintf(out, ",\n  \"new_totals\": ");
	hp_report_json_values(out, &nt);
	fprintf(out, ",\n  \"rows\": [");
	for (size_t i = 0; i < d.n; i++) {
		const struct by_row *r = &d.rows[i];
		fprintf(out, "%s\n    {\"key\": ", i ? "," : "");
		hp_report_json_str(out, r->key);
		if (r->source) {
			fprintf(out, ", \"source\": ");
			hp_report_json_str(out, r->source);
		}
		fprintf(out, ", \"change\": %.0f, \"base\": ", r->change);
		hp_report_json_values(out, &r->base);
		fprintf(out, ", \"new\": ");
		hp_report_json_values(out, &r->new);
		fputc('}', out);
	}
	fprintf(out, "%s]\n}\n", d.n ? "\n  " : "");
	by_diff_free(&d);
	return ferror(out) ? -EIO : 0;
}
