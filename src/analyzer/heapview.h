/*
 * heapview.h - the views by call stack of one custom heap (--heap NAME for
 * report's sections, diff and html).
 *
 * A model holds every heap's buckets, but its stacks' figures and its
 * total are malloc's (model.h): a custom heap's blocks live in chunks
 * malloc counts already. Selecting a heap makes them that heap's instead,
 * so that every view by stack (the report's sections by site and by
 * stack, the diff, the page) shows its blocks with no change of its own.
 * A custom heap's at-peak figures are at its own peak (the recorder keeps
 * one per heap), so its stacks' peaks add up to the heap's.
 *
 * Ordinary analyzer C: allocates nothing.
 */
#ifndef HP_ANALYZER_HEAPVIEW_H
#define HP_ANALYZER_HEAPVIEW_H

#include <stdint.h>

#include "model/model.h"

/* Makes heap (0: malloc's, or a custom heap's id, hp_model_find_heap) the
 * one m's stacks and total show: each stack's figures and bucket count,
 * the total and the suppressed stacks' figures (hp_model.suppressed),
 * summed again over that heap's buckets; view_heap set (the views by
 * dimension show it too). Malloc's on a model that shows it already: no
 * change. Call it after the model's filters and suppressions. */
void hp_heapview_select(struct hp_model *m, uint64_t heap);

/* The heap named name in m (as --heap takes it: "malloc" or a custom
 * heap's name) selected, or -ENOENT when m has none of that name (err
 * then says so, naming file, in one line). */
int hp_heapview_select_named(struct hp_model *m, const char *name, const char *file, char *err,
			     size_t errlen);

/* When m shows a custom heap (view_heap) whose own peak the snapshot
 * records: that peak's time into *ns, and 1; else 0 (malloc's peak time
 * is the snapshot's peak_time_ns). */
int hp_heapview_peak_time(const struct hp_model *m, uint64_t *ns);

#endif
