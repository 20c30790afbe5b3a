/*
 * peaks.h - the workloads of peaks.c, whose peaks the sampled estimate is
 * checked against (tests/integration/test_sampling.c). Each is written
 * once, against an allocator given as three functions, so that the test
 * can run the same sequence on a counting allocator and know the exact
 * peak without a recording. Sizes come from a fixed sequence; nothing is
 * random.
 *
 *   grow   records in a vector grown by realloc (doubling, then shrunk to
 *          fit), each with a small name; then more names. The doubled
 *          vector is the biggest block of the run, but the peak is at the
 *          end, when it is smaller and the names many.
 *   parse  an input buffer grown by realloc in 64 KiB reads, tokens (small
 *          blocks) made from it, the input freed, then a tree of small nodes
 *          under a realloc-grown child array: the peak is at the end of the
 *          parse, without the big buffer (like jq on a big file).
 *   churn  a working set of small blocks, replaced an eighth at a time
 *          while a 4 MiB scratch buffer is held, two full turnovers: a flat
 *          peak reached many times over.
 */
#ifndef HP_TEST_PEAKS_H
#define HP_TEST_PEAKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct peaks_ops {
	void *(*alloc)(size_t size);
	void *(*resize)(void *p, size_t size);
	void (*release)(void *p);
};

/* 32..480 bytes, about 256 on average. */
static inline size_t peaks_small(uint32_t i)
{
	return 32 + ((i * 2654435761u) >> 16) % 449;
}

#define PEAKS_GROW_RECORDS 65537 /* one past a power of two: the vector doubles once more */
#define PEAKS_GROW_RECORD_BYTES 192
#define PEAKS_GROW_MORE 131072

static inline void peaks_grow(const struct peaks_ops *o)
{
	uint32_t n = PEAKS_GROW_RECORDS + PEAKS_GROW_MORE, cap = 0;
	void **names = o->alloc(n * sizeof *names);
	char *vec = NULL;

	for (uint32_t i = 0; i < PEAKS_GROW_RECORDS; i++) {
		if (i == cap) {
			cap = cap ? 2 * cap : 1024;
			vec = o->resize(vec, (size_t)cap * PEAKS_GROW_RECORD_BYTES);
		}
		names[i] = o->alloc(peaks_small(i));
	}
	vec = o->resize(vec, (size_t)PEAKS_GROW_RECORDS * PEAKS_GROW_RECORD_BYTES);
	for (uint32_t i = PEAKS_GROW_RECORDS; i < n; i++)
		names[i] = o->alloc(peaks_small(i));
	for (uint32_t i = 0; i < n; i++)
		o->release(names[i]);
	o->release(vec);
	o->release(names);
}

#define PEAKS_PARSE_INPUT_BYTES (12u << 20)
#define PEAKS_PARSE_READ_BYTES 65536u
#define PEAKS_PARSE_TOKENS 131072
#define PEAKS_PARSE_NODES 65536

static inline void peaks_parse(const struct peaks_ops *o)
{
	void **tokens, **kids = NULL;
	char *input = NULL;
	size_t len, cap = 0, nkids = 0, kcap = 0;

	for (len = 0; len < PEAKS_PARSE_INPUT_BYTES; len += PEAKS_PARSE_READ_BYTES) {
		if (len + PEAKS_PARSE_READ_BYTES > cap) {
			cap = cap ? 2 * cap : PEAKS_PARSE_READ_BYTES;
			input = o->resize(input, cap);
		}
		memset(input + len, 'x', PEAKS_PARSE_READ_BYTES);
	}
	tokens = o->alloc(PEAKS_PARSE_TOKENS * sizeof *tokens);
	for (uint32_t i = 0; i < PEAKS_PARSE_TOKENS; i++)
		tokens[i] = o->alloc(peaks_small(i));
	o->release(input);
	for (uint32_t i = 0; i < PEAKS_PARSE_NODES; i++) {
		if (nkids == kcap) {
			kcap = kcap ? 2 * kcap : 16;
			kids = o->resize(kids, kcap * sizeof *kids);
		}
		kids[nkids++] = o->alloc(2 * peaks_small(PEAKS_PARSE_TOKENS + i));
	}
	for (size_t i = 0; i < nkids; i++)
		o->release(kids[i]);
	o->release(kids);
	for (uint32_t i = 0; i < PEAKS_PARSE_TOKENS; i++)
		o->release(tokens[i]);
	o->release(tokens);
}

#define PEAKS_CHURN_SLOTS 65536
#define PEAKS_CHURN_ROUNDS 16 /* each replaces SLOTS / 8 */
#define PEAKS_CHURN_SCRATCH_BYTES (4u << 20)

static inline void peaks_churn(const struct peaks_ops *o)
{
	void **slots = o->alloc(PEAKS_CHURN_SLOTS * sizeof *slots);
	uint32_t seq = 0, per_round = PEAKS_CHURN_SLOTS / 8;

	for (uint32_t i = 0; i < PEAKS_CHURN_SLOTS; i++)
		slots[i] = o->alloc(peaks_small(seq++));
	for (uint32_t r = 0; r < PEAKS_CHURN_ROUNDS; r++) {
		void *scratch = o->alloc(PEAKS_CHURN_SCRATCH_BYTES);
		for (uint32_t j = 0; j < per_round; j++) {
			uint32_t k = (r * per_round + j) % PEAKS_CHURN_SLOTS;
			o->release(slots[k]);
			slots[k] = o->alloc(peaks_small(seq++));
		}
		o->release(scratch);
	}
	for (uint32_t i = 0; i < PEAKS_CHURN_SLOTS; i++)
		o->release(slots[i]);
	o->release(slots);
}

/* The workload called name, or NULL. */
static inline void (*peaks_workload(const char *name))(const struct peaks_ops *)
{
	if (strcmp(name, "grow") == 0)
		return peaks_grow;
	if (strcmp(name, "parse") == 0)
		return peaks_parse;
	if (strcmp(name, "churn") == 0)
		return peaks_churn;
	return NULL;
}

#endif
