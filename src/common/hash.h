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

static inline uint64_t hp_hash_words(const uint64_t *w, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
	for (size_t i = 0; i < n; i++)
		h = hp_hash_u64(h ^ w[i]) + 0x9e3779b97f4a7c15ULL;
	return hp_hash_u64(h);
}

#endif
