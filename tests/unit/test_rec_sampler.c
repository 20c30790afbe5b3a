/*
 * test_rec_sampler.c - the recorder's sampler (src/recorder/sampler.h):
 * the draws' distribution (mean, median, tail, the floor of 1), the
 * unbiased weight, exact at a few points, and the weights of a simulated
 * sampled run adding up to the bytes allocated
 * (docs/internals/sampling.md).
 */
#include <math.h>

#include "../../src/recorder/sampler.h"
#include "../harness/harness.h"

HP_TEST(sampler_draw_distribution)
{
	enum { N = 1000000 };
	const uint64_t mean = 4096;
	uint64_t state = 0x853c49e6748fea9bULL, above_mean = 0, below_median = 0, min = UINT64_MAX;
	double sum = 0;

	for (int i = 0; i < N; i++) {
		int64_t d = hp_sampler_draw(&state, mean);
		sum += (double)d;
		above_mean += (uint64_t)d > mean;
		below_median += (double)d < mean * M_LN2;
		if ((uint64_t)d < min)
			min = (uint64_t)d;
	}
	/* The standard error of the mean is mean / sqrt(N) = 0.1%. */
	expect_near(sum / N, mean, 0.005, "the draws' mean is the rate");
	expect_near((double)above_mean / N, exp(-1), 0.01, "P(d > mean) = 1/e");
	expect_near((double)below_median / N, 0.5, 0.01, "the median is mean ln 2");
	expect_eq_u64(min, 1, "at least 1, and small draws happen");
	state = 1;
	expect_eq_u64(hp_sampler_draw(&state, 1), 1, "mean 1: every byte");
}

HP_TEST(sampler_weight)
{
	expect_eq_u64(hp_sampler_weight(0, 4096), 0, "size 0");
	expect_eq_u64(hp_sampler_weight(100, 1), 100, "full recording: the size");
	expect_eq_u64(hp_sampler_weight(4096, 4096), 6480, "4096 / (1 - 1/e) = 6479.98");
	expect_eq_u64(hp_sampler_weight(100, 4096), 4146, "100 / (1 - exp(-100/4096)) = 4146.1");
	expect_eq_u64(hp_sampler_weight(1, 524288), 524289, "one byte stands for rate + 1/2");
	expect_eq_u64(hp_sampler_weight(1 << 30, 4096), 1 << 30, "a huge block is itself");
	expect_eq_u64(hp_sampler_weight(UINT64_MAX / 2, 2), 4000000000000000000ull, "clamped");
}

/* A sampled run: allocations of mixed sizes through the countdown, as the
 * interposer does it; the sum of the sampled blocks' weights estimates the
 * bytes allocated, within a few standard deviations. */
HP_TEST(sampler_unbiased_sum)
{
	const uint64_t rate = 512 * 1024;
	uint64_t state = 42, total = 0;
	int64_t countdown = hp_sampler_draw(&state, rate);
	double estimate = 0;

	for (uint64_t i = 0; i < 4000000; i++) {
		uint64_t size = 16 + (i * 7919) % 4000 + (i % 1000 == 0 ? 1 << 20 : 0);
		total += size;
		if ((countdown -= (int64_t)size) < 0) {
			estimate += (double)hp_sampler_weight(size, rate);
			countdown = hp_sampler_draw(&state, rate);
		}
	}
	/* about 15 000 samples of ~rate each: a relative error near 1%. */
	expect_near(estimate, (double)total, 0.04, "the weights add up to the bytes allocated");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
