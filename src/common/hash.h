/*
 * hash.h - small non-cryptographic hashes for the recorder's tables.
 *
 * hp_hash_u64 is the 64-bit finalizer of MurmurHash3 (a bijection, so
 * distinct addresses never collide before the table masks them); hp_hash_words
 * folds a word array (a call stack) through it. Allocation-free and
 * async-signal-safe.
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

/* One multiply per word on two independent lanes (a call stack is hashed
 * on every recorded allocation: the full finalizer per word cost more than
 * the table lookup), then the finalizer once. */
static inline uint64_t hp_hash_words(const uint64_t *w, size_t n, uint64_t seed)
{
	uint64_t a = seed ^ (n * 0x9e3779b97f4a7c15ULL), b = ~seed;
	size_t i = 0;

	for (; i + 1 < n; i += 2) {
		a = (a ^ w[i]) * 0x9e3779b97f4a7c15ULL;
		b = (b ^ w[i + 1]) * 0xc2b2ae3d27d4eb4fULL;
		a ^= a >> 29;
		b ^= b >> 31;
	}
	if (i < n)
		a = (a ^ w[i]) * 0x9e3779b97f4a7c15ULL;
	return hp_hash_u64(a ^ (b * 0x165667b19e3779f9ULL));
}

#endif
