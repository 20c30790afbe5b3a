/*
 * histo.h - size and lifetime histograms per call stack, from a snapshot's
 * HISTOGRAMS record (format.h): allocations by size class, frees by
 * lifetime class (allocations recorded in between, counted in units of
 * 64: docs/internals/lifetimes.md), so that "small and short-lived" and
 * "large and long-lived" show per site, as DHAT shows them.
 *
 * A stack's histograms are the sums of its buckets' (malloc's and custom
 * heaps' alike), each unbiased in a sampled capture as the model unbiases
 * the bucket (hp_model_unbias_scale). Ordinary analyzer C: allocates with
 * malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_HISTO_H
#define HP_ANALYZER_HISTO_H

#include "model/model.h"

struct hp_stack_hist {
	uint32_t stack;       /* the capture's id, an index of m->stacks */
	double allocs, frees; /* its buckets' figures (unbiased) */
	double size[HP_HIST_SIZE_CLASSES];
	double life[HP_HIST_LIFE_CLASSES];
};

/* The histograms of the stacks of m's snapshot that allocated, the most
 * allocations first (equal ones by stack id): *out (owned, free()) and
 * *n; none (NULL, 0) when the snapshot has no HISTOGRAMS. Returns 0 or
 * -ENOMEM. */
int hp_histo_by_stack(const struct hp_model *m, struct hp_stack_hist **out, size_t *n);

/* The bounds of a class: [*lo, *hi] (hi UINT64_MAX for the last, which
 * takes all above). */
void hp_histo_size_range(unsigned cls, uint64_t *lo, uint64_t *hi);
void hp_histo_life_range(unsigned cls, uint64_t *lo, uint64_t *hi);

#endif
