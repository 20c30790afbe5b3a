/*
 * test_sampling.c - Poisson sampling: on 256 MiB of mixed sizes sampled
 * every 64 KiB on average, the estimates unbiased per allocation size
 * (count / (1 - exp(-size / rate)), docs/internals/sampling.md) are within
 * 3% of the truth for bytes. The seeds are fixed, so runs are
 * reproducible.
 *
 * Objects are checked against their own statistical error instead: the
 * count is dominated by the 2 million 16-byte blocks, which about 500
 * samples represent, so its standard deviation is itself about 3% and a
 * fixed 3% bound would pass or fail by luck. The test estimates that
 * deviation from the samples (each sample of probability p adds
 * (1 - p) / p^2 to the variance) and allows three of them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../programs/sampling.h"

#define RATE 65536

static void check(unsigned seed)
{
	static const struct sampling_class classes[] = SAMPLING_CLASSES;
	char out[512];
	struct hp_capture *cap;
	const struct hp_cap_snapshot *s;
	double true_n = 0, true_b = 0, est_n = 0, est_b = 0, var_n = 0;
	uint64_t raw = 0;

	for (unsigned c = 0; c < sizeof classes / sizeof *classes; c++) {
		true_n += classes[c].count;
		true_b += (double)classes[c].count * classes[c].size;
	}
	snprintf(out, sizeof out, "%s/sampling-%u.hpf", hp_test_tmp(), seed);
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --sample-rate %d --seed %u -o %s -- "
				 "%s/tests/programs/sampling",
				 hp_test_build(), RATE, seed, out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)) || !(s = hp_capture_last(cap))) {
		hpq_free(cap);
		return;
	}
	expect_eq_u64(cap->sample_rate_bytes, RATE, "the capture records the rate");
	for (size_t i = 0; i < s->nbuckets; i++) {
		const struct hp_cap_bucket *b = &s->buckets[i];
		const char *f = b->stack_id ? hpq_symbol(cap, cap->stacks[b->stack_id].frames[0]) : "";
		if (strcmp(f, "sampled_alloc") != 0)
			continue;
		double p = 1 - exp(-(double)b->size / RATE);
		est_n += b->alloc_count / p;
		var_n += b->alloc_count * (1 - p) / (p * p);
		est_b += b->alloc_count / p * (double)b->size;
		raw += b->alloc_count;
		expect_eq_u64(b->alloc_bytes, b->alloc_count * b->size, "a bucket holds one size");
	}
	printf("  seed %u: %llu samples; objects %.0f (true %.0f, %+.2f%%, sigma %.2f%%), bytes %.0f "
	       "(true %.0f, %+.2f%%)\n",
	       seed, (unsigned long long)raw, est_n, true_n, (est_n - true_n) / true_n * 100,
	       sqrt(var_n) / true_n * 100, est_b, true_b, (est_b - true_b) / true_b * 100);
	expect_near(est_b, true_b, 0.03, "unbiased bytes");
	expect_near(est_n, true_n, 3 * sqrt(var_n) / true_n, "unbiased objects, within 3 sigma");
	hpq_free(cap);
}

HP_TEST(sampling_unbiased_seed_1) { check(1); }
HP_TEST(sampling_unbiased_seed_2) { check(2); }
HP_TEST(sampling_unbiased_seed_3) { check(3); }

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
