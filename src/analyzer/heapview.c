/*
 * heapview.c - the views by call stack of one custom heap (heapview.h).
 */
#include "heapview.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void hp_heapview_select(struct hp_model *m, uint64_t heap)
{
	if (heap == m->view_heap && heap == 0)
		return; /* malloc's, as built (a sampled model's stacks rounded once) */
	m->view_heap = heap;
	memset(&m->total, 0, sizeof m->total);
	memset(&m->suppressed, 0, sizeof m->suppressed);
	for (size_t s = 0; s < m->nstacks; s++) {
		memset(&m->stacks[s].v, 0, sizeof m->stacks[s].v);
		m->stacks[s].nbuckets = 0;
	}
	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		struct hp_mstack *st = &m->stacks[b->stack];
		struct hp_values bv;
		if (b->heap != heap)
			continue;
		hp_mbucket_values(m, b, &bv);
		hp_values_add(&m->total, &bv);
		st->nbuckets++;
		hp_values_add(&st->v, &bv);
	}
	/* The runtime's suppressed stacks (hp_model_suppress, malloc's blocks)
	 * count only with the heap they hold blocks of. */
	for (size_t s = 0; s < m->nstacks; s++)
		if (m->stacks[s].suppressed && m->stacks[s].nbuckets)
			hp_values_add(&m->suppressed, &m->stacks[s].v);
}

int hp_heapview_select_named(struct hp_model *m, const char *name, const char *file, char *err,
			     size_t errlen)
{
	int64_t h = hp_model_find_heap(m, name);

	if (h < 0) {
		snprintf(err, errlen, "%s has no heap named '%s' (report --by heap lists its heaps)",
			 file, name);
		return -ENOENT;
	}
	hp_heapview_select(m, (uint64_t)h);
	return 0;
}

int hp_heapview_peak_time(const struct hp_model *m, uint64_t *ns)
{
	if (!m->view_heap)
		return 0;
	for (size_t h = 0; h < m->snap->nheaps; h++)
		if (m->snap->heaps[h].heap == m->view_heap) {
			*ns = m->snap->heaps[h].peak_time_ns;
			return 1;
		}
	return 0;
}
