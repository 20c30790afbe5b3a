/*
 * histo.c - size and lifetime histograms per call stack (see histo.h).
 */
#include "histo.h"
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/units.h"

static int by_allocs(const void *a, const void *b)
{
	const struct hp_stack_hist *x = a, *y = b;

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int hp_histo_by_stack(const struct hp_model *m, struct hp_stack_hist **out, size_t *n)
{
	const struct hp_cap_snapshot *s = m->snap;
	struct hp_stack_hist *h;
	int32_t *slot;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (!s->hist_first || !m->nstacks)
		return 0;
	h = calloc(m->nstacks, sizeof *h);
	slot = malloc(m->nstacks * sizeof *slot);
	if (!h || !slot) {
		free(h);
		free(slot);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nstacks; i++)
		slot[i] = -1;
	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		struct hp_rec_hist r;
		struct hp_stack_hist *t;
		struct hp_values bv;
		double scale;
		if (b->stack >= m->nstacks ||
		    !hp_capture_hist(s, (size_t)(b->raw - s->buckets), &r))
			continue;
		if (slot[b->stack] < 0) {
			slot[b->stack] = (int32_t)k;
			h[k++].stack = b->stack;
		}
		t = &h[slot[b->stack]];
		scale = m->sampled ? hp_model_unbias_scale(b->raw, m->sample_rate_bytes) : 1;
		hp_mbucket_values(m, b, &bv);
		t->allocs += bv.alloc_objects;
		t->frees += bv.free_objects;
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			t->size[c] += (double)r.size[c] * scale;
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			t->life[c] += (double)r.life[c] * scale;
	}
	free(slot);
	hp_sort(h, k, sizeof *h, by_allocs);
	*out = h;
	*n = k;
	return 0;
}

void hp_histo_size_range(unsigned cls, uint64_t *lo, uint64_t *hi)
{
	*lo = cls ? UINT64_C(1) << (cls - 1) : 0;
	*hi = cls + 1 >= HP_HIST_SIZE_CLASSES ? UINT64_MAX : cls ? (UINT64_C(1) << cls) - 1 : 0;
}

void hp_histo_life_range(unsigned cls, uint64_t *lo, uint64_t *hi)
{
	*lo = cls ? UINT64_C(1) << (cls + 5) : 0;
	*hi = cls + 1 >= HP_HIST_LIFE_CLASSES ? UINT64_MAX : (UINT64_C(1) << (cls + 6)) - 1;
}

/* The innermost frame of stack id: function, file (its base name) and
 * line. */
static void frame_of(const struct hp_model *m, uint32_t id, const char **fn, const char **file,
		     unsigned *line)
{
	const struct hp_mstack *st = &m->stacks[id];

	*fn = "??";
	*file = "";
	*line = 0;
	if (st->depth) {
		const struct hp_location *l = &m->locations[hp_mstack_location(st, 0)];
		const char *slash;
		*fn = l->syms[0].function ? l->syms[0].function : "??";
		*file = l->syms[0].file ? l->syms[0].file : "";
		slash = strrchr(*file, '/');
		if (slash)
			*file = slash + 1;
		*line = l->syms[0].line;
	}
}

/* "[16 B, 32 B)", "[4.0 KiB, 8.0 KiB)": a size class's bounds. */
static const char *size_label(char *buf, size_t cap, unsigned cls)
{
	uint64_t lo, hi;
	char a[32], b[32];

	hp_histo_size_range(cls, &lo, &hi);
	if (hi == UINT64_MAX)
		snprintf(buf, cap, ">= %s", hp_units_bytes(a, sizeof a, (double)lo));
	else if (lo == hi)
		snprintf(buf, cap, "%s", hp_units_bytes(a, sizeof a, (double)lo));
	else
		snprintf(buf, cap, "[%s, %s)", hp_units_bytes(a, sizeof a, (double)lo),
			 hp_units_bytes(b, sizeof b, (double)hi + 1));
	return buf;
}

/* "< 64", "1,024-2,047": a lifetime class in allocations. */
static const char *life_label(char *buf, size_t cap, unsigned cls)
{
	uint64_t lo, hi;
	char a[32], b[32];

	hp_histo_life_range(cls, &lo, &hi);
	if (!cls)
		snprintf(buf, cap, "< 64");
	else if (hi == UINT64_MAX)
		snprintf(buf, cap, ">= %s", hp_units_count(a, sizeof a, (double)lo));
	else
		snprintf(buf, cap, "%s-%s", hp_units_count(a, sizeof a, (double)lo),
			 hp_units_count(b, sizeof b, (double)hi));
	return buf;
}

static void print_classes(FILE *out, const char *title, const double *v, unsigned n, double total,
			  const char *(*label)(char *, size_t, unsigned))
{
	char l[64], c[32];
	int any = 0;

	fprintf(out, "      %-10s", title);
	for (unsigned k = 0; k < n; k++) {
		if (v[k] <= 0)
			continue;
		fprintf(out, "%s%s: %s (%.0f%%)", any ? ", " : "", label(l, sizeof l, k),
			hp_units_count(c, sizeof c, v[k]), total > 0 ? 100 * v[k] / total : 0);
		any = 1;
	}
	fprintf(out, "%s\n", any ? "" : "none");
}

int hp_report_hist_text(FILE *out, const struct hp_model *m, const struct hp_report_options *o)
{
	unsigned top = o && o->top ? o->top : 10;
	struct hp_stack_hist *h;
	size_t n;
	int ret = hp_histo_by_stack(m, &h, &n);

	if (ret)
		return ret;
	fprintf(out, "\nSizes and lifetimes (allocations by size; frees by allocations lived "
		     "through, in units of 64)\n");
	if (!m->snap->hist_first)
		fprintf(out, "  none recorded (a capture from before format 1.4)\n");
	for (size_t i = 0; i < n && i < top; i++) {
		const char *fn, *file;
		unsigned line;
		char a[32], f[32], live[32];
		frame_of(m, h[i].stack, &fn, &file, &line);
		fprintf(out, "  #%zu %s (%s:%u): %s allocations, %s freed, %s live\n", i + 1, fn,
			file, line, hp_units_count(a, sizeof a, h[i].allocs),
			hp_units_count(f, sizeof f, h[i].frees),
			hp_units_count(live, sizeof live, h[i].allocs - h[i].frees));
		print_classes(out, "sizes", h[i].size, HP_HIST_SIZE_CLASSES, h[i].allocs,
			      size_label);
		print_classes(out, "lifetimes", h[i].life, HP_HIST_LIFE_CLASSES, h[i].frees,
			      life_label);
	}
	free(h);
	return ferror(out) ? -EIO : 0;
}

static void json_classes(FILE *out, const double *v, unsigned n,
			 void (*range)(unsigned, uint64_t *, uint64_t *))
{
	int any = 0;

	fputc('[', out);
	for (unsigned k = 0; k < n; k++) {
		uint64_t lo, hi;
		if (v[k] <= 0)
			continue;
		range(k, &lo, &hi);
		if (hi == UINT64_MAX)
			fprintf(out, "%s[%" PRIu64 ", -1, %.0f]", any ? ", " : "", lo, v[k]);
		else
			fprintf(out, "%s[%" PRIu64 ", %" PRIu64 ", %.0f]", any ? ", " : "", lo, hi,
				v[k]);
		any = 1;
	}
	fputc(']', out);
}

int hp_report_hist_json(FILE *out, const struct hp_model *m, unsigned top)
{
	struct hp_stack_hist *h;
	size_t n;
	int ret = hp_histo_by_stack(m, &h, &n);

	if (ret)
		return ret;
	fputc('[', out);
	for (size_t i = 0; i < n && i < top; i++) {
		const char *fn, *file;
		unsigned line;
		frame_of(m, h[i].stack, &fn, &file, &line);
		fprintf(out, "%s\n    {\"stack_id\": %" PRIu32 ", \"function\": ", i ? "," : "",
			h[i].stack);
		hp_report_json_str(out, fn);
		fprintf(out, ", \"file\": ");
		hp_report_json_str(out, file);
		fprintf(out,
			", \"line\": %u, \"allocations\": %.0f, \"frees\": %.0f,\n     \"sizes\": ",
			line, h[i].allocs, h[i].frees);
		json_classes(out, h[i].size, HP_HIST_SIZE_CLASSES, hp_histo_size_range);
		fprintf(out, ",\n     \"lifetimes\": ");
		json_classes(out, h[i].life, HP_HIST_LIFE_CLASSES, hp_histo_life_range);
		fputc('}', out);
	}
	fprintf(out, "%s]", n ? "\n  " : "");
	free(h);
	return ferror(out) ? -EIO : 0;
}
