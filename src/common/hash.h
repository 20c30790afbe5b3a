/*
 * hash.h - small non-cryptographic hashes, for the recorder's tables and
 * the analyzer's (table.h, strtab.h).
 *
 * hp_hash_u64 is the 64-bit finalizer of MurmurHash3 (a bijection, so
 * distinct addresses never collide before the table masks them); hp_hash_words
 * folds a word array (a call stack) through it; hp_hash_str is FNV-1a over
 * a string. Allocation-free and async-signal-safe.
 */
#ifndef HP_COMMON_HASH_H
#define HP_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hp_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Four independent lanes, one multiply per word: a call stack is hashed on
 * every recorded allocation, and a single chain of multiplies (or the full
 * finalizer per word) would make the hash cost more than the table
 * lookup. The table compares whole keys, so the hash needs spread, not
 * strength; the finalizer mixes the lanes at the end. */
static inline uint64_t hp_hash_words(const uint64_t *w, size_t n, uint64_t seed)
{
	uint64_t a = seed ^ n, b = ~seed, c = seed * 3, d = seed * 5;
	size_t i = 0;

	for (; i + 3 < n; i += 4) {
		a = (a ^ w[i]) * 0x9e3779b97f4a7c15ULL;
		b = (b ^ w[i + 1]) * 0xc2b2ae3d27d4eb4fULL;
		c = (c ^ w[i + 2]) * 0x165667b19e3779f9ULL;
		d = (d ^ w[i + 3]) * 0xff51afd7ed558ccdULL;
	}
	for (; i < n; i++)
		a = (a ^ w[i] ^ (a >> 31)) * 0x9e3779b97f4a7c15ULL;
	a ^= (b >> 17) ^ (b << 47);
	c ^= (d >> 23) ^ (d << 41);
	return hp_hash_u64(a ^ (c * 0xc4ceb9fe1a85ec53ULL));
}

/* Where a string's hash starts. Not FNV's offset basis (14695981039346656037,
 * 0xcbf29ce484222325): the analyzer's copies of FNV-1a all began from this
 * number, a digit short of it, and the flame graph's colours come from it;
 * any odd seed serves a table as well. */
#define HP_HASH_STR_SEED 1469598103934665603ULL

/* FNV-1a (64-bit) over the bytes of s, continuing from h: HP_HASH_STR_SEED
 * for one string, the hash so far to chain several. FNV-1a's low bits mix
 * poorly: a table masks hp_hash_u64 of it. Outputs that derive something
 * visible from a string's hash (the flame graph's colours) depend on these
 * exact values: do not change the function or their seeds. */
static inline uint64_t hp_hash_str(uint64_t h, const char *s)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The hash of a call stack, one frame at a time, so that the unwinder can
 * fold each frame in as it reads it (two instructions a frame, next to
 * the walk's loads): h = hp_hash_stack_step(h, frame) from
 * HP_HASH_STACK_SEED, then hp_hash_stack_end(h, depth). A single chain:
 * each step is a bijection of h for a given frame, so two stacks that
 * differ in one frame always differ before the end; the finalizer spreads
 * the bits. The table compares whole keys, so this is for spread only. */
#define HP_HASH_STACK_SEED 0x68656170ull

static inline uint64_t hp_hash_stack_step(uint64_t h, uint64_t frame)
{
	return (h ^ frame) * 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t hp_hash_stack_end(uint64_t h, size_t depth)
{
	return hp_hash_u64(h ^ depth);
}

/* The same hash over frames[0..depth). */
static inline uint64_t hp_hash_stack(const uint64_t *frames, size_t depth)
{
	uint64_t h = HP_HASH_STACK_SEED;
	for (size_t i = 0; i < depth; i++)
		h = hp_hash_stack_step(h, frames[i]);
	return hp_hash_stack_end(h, depth);
}

#endif
