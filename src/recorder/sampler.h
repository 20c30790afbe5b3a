/*
 * sampler.h - Poisson sampling of allocated bytes.
 *
 * Each byte allocated is sampled with probability 1/rate, independently;
 * an allocation is recorded when one of its bytes is, so an allocation of
 * size s is recorded with probability 1 - exp(-s/rate). The distance to the
 * next sampled byte is exponential with mean rate, drawn per thread, and
 * the fast path only subtracts. docs/internals/sampling.md derives the
 * unbiasing the analyzer applies, and hp_sampler_weight is the same rule
 * for the recorder's estimate of the bytes in use (which finds the peak).
 *
 * Allocation-free, lock-free, async-signal-safe (per-thread state only).
 */
#ifndef HP_RECORDER_SAMPLER_H
#define HP_RECORDER_SAMPLER_H

#include <math.h>
#include <stdint.h>

/* xorshift64*: state must be non-zero. Pure on *state: async-signal-safe,
 * no allocation, no lock. */
static inline uint64_t hp_sampler_next_u64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A draw from the exponential distribution with the given mean, in bytes,
 * at least 1. Calls log (libm, pure): async-signal-safe, no allocation,
 * no lock. */
static inline int64_t hp_sampler_draw(uint64_t *state, uint64_t mean_bytes)
{
	/* u in (0, 1]: 53 random bits, never 0 so the log is finite. */
	double u = (double)((hp_sampler_next_u64(state) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double d = -log(u) * (double)mean_bytes;
	if (d < 1)
		return 1;
	if (d > 4.0e18)
		return (int64_t)4.0e18;
	return (int64_t)d;
}

/* The bytes a sampled allocation of size bytes stands for, unbiased:
 * size / (1 - exp(-size / rate)), rounded to a whole byte (the error is at
 * most half a byte in at least rate bytes); size itself when every
 * allocation is recorded (rate <= 1), and 0 for size 0. The same size and
 * rate always give the same value, so what an allocation adds to a sum its
 * free takes away exactly. Calls expm1: slow paths only. Pure:
 * async-signal-safe, no allocation, no lock. */
static inline uint64_t hp_sampler_weight(uint64_t size, uint64_t rate_bytes)
{
	double w;

	if (rate_bytes <= 1 || !size)
		return size;
	w = (double)size / -expm1(-(double)size / (double)rate_bytes);
	return w < 4.0e18 ? (uint64_t)(w + 0.5) : (uint64_t)4.0e18;
}

#endif
