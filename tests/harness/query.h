/*
 * query.h - questions the tests ask of a capture: "what did the stacks that
 * start main -> leak_path -> leak_leaf allocate?"
 *
 * Frames are named with the ELF symbol table of the module they fall in
 * (read with libelf from the module's file), not with heapprof's
 * symbolizer, so the recorder is checked independently of the analyzer.
 */
#ifndef HP_TEST_QUERY_H
#define HP_TEST_QUERY_H

#include <stdint.h>

#include "../../src/format/capture.h"

struct hpq_sum {
	uint64_t buckets;
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
	uint64_t peak_count, peak_bytes, temp_count, temp_bytes;
};

/* Loads a capture; NULL (and a message on stdout) on failure. */
struct hp_capture *hpq_load(const char *path);
void hpq_free(struct hp_capture *cap);

/* The function containing a frame's call (return address - 1), or "?". */
const char *hpq_symbol(const struct hp_capture *cap, uint64_t addr);

/* Sums the buckets of the last snapshot whose stack starts with the named
 * functions, innermost first: {"leak_leaf", "leak_path", "main", NULL}. */
struct hpq_sum hpq_match(const struct hp_capture *cap, const char *const *frames);

/* Sums every bucket of the last snapshot. */
struct hpq_sum hpq_total(const struct hp_capture *cap);

/* Prints every bucket with symbolized frames (for a failing test). */
void hpq_dump(const struct hp_capture *cap);

#endif
