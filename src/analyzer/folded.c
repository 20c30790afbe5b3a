/*
 * folded.c - the folded stacks writer (see folded.h).
 *
 * Each bucket's stack is spelled out once as text (root first), the
 * (text, value) pairs are sorted by text, and equal neighbours are summed
 * before rounding: a sampled capture's per-size buckets and stacks that
 * differ only by return address make one line.
 */
#include "folded.h"
#include "frames.h"
#include "group.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/vec.h"

struct folded_line {
	char *text;
	double value;
};

struct text {
	char *p;
	size_t len, cap;
};

/* Appends s; a frame's name (name set) has its ';' and newlines replaced. */
static int text_add(struct text *t, const char *s, int name)
{
	size_t n = strlen(s);

	if (hp_vec_grow(&t->p, &t->cap, t->len + n + 1))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (name && c == ';')
			c = ':';
		else if (name && c == '\n')
			c = ' ';
		t->p[t->len++] = c;
	}
	t->p[t->len] = '\0';
	return 0;
}

/* The text of a stack: its frames as a reader is shown them (frames.h:
 * the runtime's below main left out unless all), outermost first and,
 * inside a location, the containing function before the functions inlined
 * into it, each named as names says (frames.h). */
static char *stack_text(const struct hp_model *m, uint32_t stack, struct hp_frame_names *names,
			int all)
{
	const struct hp_mstack *st = &m->stacks[stack];
	struct hp_shown_frame *fr = malloc((hp_frames_count(m, st) + 1) * sizeof *fr);
	struct text t = {0};
	size_t n;

	if (!fr)
		return NULL;
	n = hp_frames_shown(m, st, all, fr);
	if (!n && text_add(&t, "[no stack]", 0))
		goto err;
	for (size_t i = n; i-- > 0;) {
		const struct hp_location *l = &m->locations[fr[i].loc];
		if (t.len && text_add(&t, ";", 0))
			goto err;
		if (text_add(&t, hp_frame_names_get(names, l->syms[fr[i].sym].function), 1))
			goto err;
	}
	free(fr);
	return t.p;

err:
	free(fr);
	free(t.p);
	return NULL;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int hp_folded_write(FILE *out, const struct hp_model *m, enum hp_metric metric)
{
	return hp_folded_write_by(out, m, metric, HP_BY_STACK);
}

/* The stack's text under its root frames: the bucket's heap ("[heap
 * arena]") when heap is set, then its key of dim unless dim is
 * HP_BY_STACK; by context, every enclosing context's path first, so that
 * contexts nest as frames ("frame;frame > layout;main;..."). */
static char *keyed_text(const struct hp_model *m, const struct hp_mbucket *b, int dim, int heap,
			struct hp_frame_names *names, int all)
{
	char buf[2048];
	struct text t = {0};
	char *st = stack_text(m, b->stack, names, all);
	uint64_t chain[HP_GROUP_MAX_CONTEXT_DEPTH];
	int n = dim == HP_BY_CONTEXT ? hp_group_context_chain(m, b->context, chain,
							       HP_GROUP_MAX_CONTEXT_DEPTH)
				     : 0;

	if (!st)
		return NULL;
	if (heap && (text_add(&t, hp_model_heap_frame(m, b->heap, buf, sizeof buf), 1) ||
		     text_add(&t, ";", 0)))
		goto fail;
	for (int i = 0; i + 1 < n; i++)
		if (text_add(&t, hp_model_context_path(m, chain[i], buf, sizeof buf), 1) ||
		    text_add(&t, ";", 0))
			goto fail;
	if ((dim != HP_BY_STACK &&
	     (text_add(&t, hp_group_key(m, b, (enum hp_dim)dim, buf, sizeof buf, NULL), 1) ||
	      text_add(&t, ";", 0))) ||
	    text_add(&t, st, 0))
		goto fail;
	free(st);
	return t.p;
fail:
	free(t.p);
	free(st);
	return NULL;
}

int hp_folded_write_by(FILE *out, const struct hp_model *m, enum hp_metric metric, int dim)
{
	return hp_folded_write_heap(out, m, metric, dim, 0, 0, 0);
}

int hp_folded_write_heap(FILE *out, const struct hp_model *m, enum hp_metric metric, int dim,
			 int64_t heap, int full_names, int all_frames)
{
	struct folded_line *lines;
	struct hp_frame_names names;
	size_t n = 0;
	int ret = 0, marked = hp_model_heap_marked(m, heap);

	lines = calloc(m->nbuckets ? m->nbuckets : 1, sizeof *lines);
	if (!lines || hp_frame_names_build(&names, m, full_names)) {
		free(lines);
		hp_frame_names_free(&names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hp_values bv;
		double v;

		hp_mbucket_values(m, &m->buckets[i], &bv);
		v = hp_values_metric(&bv, metric);
		if (v == 0 || !hp_heap_selected(heap, m->buckets[i].heap))
			continue;
		lines[n].value = v;
		lines[n].text = dim == HP_BY_STACK && !marked
					? stack_text(m, m->buckets[i].stack, &names, all_frames)
					: keyed_text(m, &m->buckets[i], dim, marked, &names,
						     all_frames);
		if (!lines[n].text) {
			ret = -ENOMEM;
			goto err;
		}
		n++;
	}
	hp_sort(lines, n, sizeof *lines, by_text);
	for (size_t i = 0; i < n;) {
		double sum = 0;
		size_t j = i;
		for (; j < n && strcmp(lines[j].text, lines[i].text) == 0; j++)
			sum += lines[j].value;
		if (hp_estimate_i64(sum) != 0)
			fprintf(out, "%s %lld\n", lines[i].text, (long long)hp_estimate_i64(sum));
		i = j;
	}
	if (ferror(out))
		ret = -EIO;

err:
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	hp_frame_names_free(&names);
	return ret;
}
