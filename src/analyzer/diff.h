/*
 * diff.h - what changed between two profiles, per call stack.
 *
 * Two runs of a program load their modules at different addresses (ASLR)
 * and may even be different builds, so stacks are matched by their
 * symbolized function chain: the function names of every symbolic frame,
 * inlined ones included, innermost first. (A frame without a symbol reads
 * as its offset in its module, "0x...", which is stable across runs of
 * one build.) Buckets whose stacks read the
 * same are summed on each side (a sampled capture's per-size buckets, and
 * stacks that differ only by return address), then each chain gets the
 * figures of both sides; a chain found on one side only has zeros on the
 * other.
 *
 * The metric (model.h) ranks the chains by the absolute change of its
 * figure; each metric is shown with its companion figure: bytes and
 * objects in use for leaked, at the peak for peak, allocated for allocated
 * and allocations, temporary for temporary.
 *
 * The diff points into both models, which must outlive it. Not
 * thread-safe.
 */
#ifndef HP_ANALYZER_DIFF_H
#define HP_ANALYZER_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/* (40 bytes: a million chains.) */
struct hp_diff_entry {
	const struct hp_model *model; /* whose stack shows the chain: NEW's if present there */
	uint32_t stack;               /* index into model->stacks */
	uint8_t own;                  /* the diff's: which of base, new are its sums */
	/* Summed over the chain's buckets, zeros if absent: a stack's own
	 * figures (hp_mstack.v) when the chain is one stack of that side
	 * read as it is, else a sum the diff holds. */
	const struct hp_values *base, *new;
	double change;                /* new - base, of the metric */
};

struct hp_diff {
	const struct hp_model *base, *new;
	enum hp_metric metric;
	size_t nentries;
	struct hp_diff_entry *entries; /* by |change| descending, then by first seen */
	struct hp_values base_total, new_total;
	/* The sums the entries point to, in blocks (the diff's own). */
	struct hp_values **sums;
	size_t nsums, sums_left;
};

struct hp_diff_text_options {
	unsigned top;    /* chains shown; 0 = every chain that changed */
	unsigned frames; /* frames shown per chain; 0 = all */
	unsigned width;  /* columns the text fits (a name too long is cut in its
			  * middle, a header's file name goes on a line of its
			  * own); 0 = no limit */
	const char *base_name, *new_name; /* for the header */
};

/* Matches the stacks of base and new. Returns 0 or -ENOMEM. On 0, free
 * with hp_diff_free. */
int hp_diff_build(struct hp_diff *d, const struct hp_model *base, const struct hp_model *new,
		  enum hp_metric metric);

/* The same, with a side taken at its peak (base_at_peak, new_at_peak):
 * that side's figures in use are those at the peak of its snapshot (its
 * peak_bytes and peak_objects), for `diff FILE@peak`. Only the in-use
 * figures change, so use it with the leaked metric (the peak metric reads
 * the peak figures anyway; the others do not depend on the moment). */
int hp_diff_build_at(struct hp_diff *d, const struct hp_model *base, int base_at_peak,
		     const struct hp_model *new, int new_at_peak, enum hp_metric metric);

void hp_diff_free(struct hp_diff *d);

/* The metric's figure and its companion (objects for a bytes metric, bytes
 * for an objects metric). */
void hp_diff_figures(const struct hp_values *v, enum hp_metric metric, double *figure,
		     double *companion);

/* Prints the totals of both sides and their change, then the chains whose
 * figure changed, most changed first, with signs. Returns 0 or -EIO. */
int hp_diff_text(FILE *out, const struct hp_diff *d, const struct hp_diff_text_options *o);

/* The chains whose figure changed (top of them, 0 = all), most changed
 * first, as JSON: {"by": "stack", "metric", "base", "new" (the sides'
 * names), "base_totals", "new_totals" (in use without the runtime's
 * suppressed blocks), "stacks": [{"change" (of the metric), "only_in"
 * ("base", "new" or null), "base", "new" (the figures), "stack" (every
 * frame, as report --json)}]}. Returns 0 or -EIO. */
int hp_diff_json(FILE *out, const struct hp_diff *d, unsigned top, const char *base_name,
		 const char *new_name);

/* --by (diff_by.c): the figures of each side summed by a dimension of
 * group.h (a type with its source), matched by key, NEW minus BASE: the
 * keys whose metric changed, by absolute change (top of them, 0 = all;
 * JSON: every key, changed or not). at_peak: HP_DIFF_BASE_AT_PEAK and/or
 * HP_DIFF_NEW_AT_PEAK, a side taken at its peak as hp_diff_build_at takes
 * it (its in-use figures, totals and rows, those at the peak). Returns 0
 * or -errno. */
#define HP_DIFF_BASE_AT_PEAK 1u
#define HP_DIFF_NEW_AT_PEAK 2u
int hp_diff_by_text(FILE *out, const struct hp_model *base, const struct hp_model *new, int dim,
		    enum hp_metric metric, unsigned at_peak, const struct hp_diff_text_options *o);
int hp_diff_by_json(FILE *out, const struct hp_model *base, const struct hp_model *new, int dim,
		    enum hp_metric metric, unsigned at_peak);

#endif
