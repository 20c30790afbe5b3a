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
 *
 * The peak: tests/programs/peaks.c runs three workloads whose exact peak
 * the test computes by running the same code (peaks.h) on a counting
 * allocator. A full recording must find exactly that peak, with at-peak
 * buckets that add up to it; sampled recordings at seeds 1 to 8 must find
 * it within 5% on average (docs/internals/sampling.md, "The peak"). Before
 * the peak was found on the estimated bytes in use, grow and parse came
 * out at 0.66 and 0.73 of it: the raw sampled bytes picked the moment of
 * their biggest block.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/craft.h"
#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../harness/query.h"
#include "../programs/peaks.h"
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
		const struct hp_rec_bucket *b = &s->buckets[i];
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

/* A counting allocator for peaks.h: the exact peak without a recording. */
static uint64_t count_in_use, count_peak;

static void *count_resize(void *old, size_t size)
{
	uint64_t *h = old ? (uint64_t *)old - 2 : NULL;

	if (h)
		count_in_use -= h[0];
	h = realloc(h, size + 2 * sizeof *h);
	if (!h)
		abort();
	h[0] = size;
	count_in_use += size;
	if (count_in_use > count_peak)
		count_peak = count_in_use;
	return h + 2;
}

static void *count_alloc(size_t size)
{
	return count_resize(NULL, size);
}

static void count_release(void *p)
{
	uint64_t *h = (uint64_t *)p - 2;

	count_in_use -= h[0];
	free(h);
}

static uint64_t exact_peak(const char *workload)
{
	static const struct peaks_ops ops = {count_alloc, count_resize, count_release};

	count_in_use = count_peak = 0;
	peaks_workload(workload)(&ops);
	return count_peak;
}

#define PEAK_RATE 16384
#define PEAK_SEEDS 8

/* The analyzer's estimate of the bytes in use at the peak (the unbiasing
 * of model.c, per size), and its variance, sum of s^2 (1 - p) / p^2 over
 * the samples in use then. */
static double peak_estimate(const struct hp_cap_snapshot *s, uint64_t rate, double *var)
{
	double est = 0;

	*var = 0;
	for (size_t i = 0; i < s->nbuckets; i++) {
		const struct hp_rec_bucket *b = &s->buckets[i];
		double size = (double)b->size, p = 1 - exp(-size / (double)rate);
		if (!b->size || !b->peak_count)
			continue;
		est += (double)b->peak_count * size / p;
		*var += (double)b->peak_count * size * size * (1 - p) / (p * p);
	}
	return est;
}

static struct hp_capture *run_peaks(const char *workload, uint64_t rate, unsigned seed)
{
	char out[512];

	snprintf(out, sizeof out, "%s/peaks-%s-%llu-%u.hpf", hp_test_tmp(), workload,
		 (unsigned long long)rate, seed);
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols --timeseries 0 "
				      "--sample-rate %llu --seed %u -o %s -- %s/tests/programs/peaks %s",
				      hp_test_build(), (unsigned long long)rate, seed, out,
				      hp_test_build(), workload),
			   0, "exit status"))
		return NULL;
	return hpq_load(out);
}

/* The peak that `heapprof run` prints after a sampled run: the estimate,
 * as "peak heap ~12.3 MiB". Returns bytes, or -1. */
static double summary_peak(const char *workload, unsigned seed)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
	char path[512], line[1024], unit[8];
	const char *at;
	double v = -1, figure;
	FILE *f;

	snprintf(path, sizeof path, "%s/peaks-summary.txt", hp_test_tmp());
	if (hp_test_sh("%s/heapprof run --no-symbols --timeseries 0 --sample-rate %d --seed %u "
		       "-o %s/peaks-summary.hpf -- %s/tests/programs/peaks %s 2>%s",
		       hp_test_build(), PEAK_RATE, seed, hp_test_tmp(), hp_test_build(), workload,
		       path) != 0 ||
	    !(f = fopen(path, "r")))
		return -1;
	if (fgets(line, sizeof line, f) && (at = strstr(line, "peak heap ~")) &&
	    sscanf(at, "peak heap ~%lf %7s", &figure, unit) == 2)
		for (int i = 0; i < 4; i++)
			if (strcmp(unit, units[i]) == 0)
				v = figure * (double)(1ull << (10 * i));
	fclose(f);
	return v;
}

static void check_peak(const char *workload)
{
	uint64_t exact = exact_peak(workload);
	struct hp_capture *cap = run_peaks(workload, 1, 0);
	const struct hp_cap_snapshot *s = cap ? hp_capture_last(cap) : NULL;
	double sum = 0, sum2 = 0, lo = INFINITY, hi = 0;

	/* Full mode: the peak is exact, and so is every bucket at it. */
	if (!expect_true(s != NULL, "a full capture with a snapshot"))
		goto out;
	expect_eq_u64(s->peak_bytes, exact, "full recording: the exact peak");
	expect_eq_u64(hpq_total(cap).peak_bytes, exact, "full recording: buckets at the peak");
	hpq_free(cap);

	for (unsigned seed = 1; seed <= PEAK_SEEDS; seed++) {
		double var, est, r;
		cap = run_peaks(workload, PEAK_RATE, seed);
		if (!(s = cap ? hp_capture_last(cap) : NULL))
			goto out;
		est = peak_estimate(s, PEAK_RATE, &var);
		r = est / (double)exact;
		printf("  %s seed %u: peak %.0f, exact %llu, %.3f (sigma %.1f%%)\n", workload, seed, est,
		       (unsigned long long)exact, r, sqrt(var) / (double)exact * 100);
		/* The snapshot's peak is raw: the sampled bytes in use at the
		 * moment the estimate peaked, which its buckets hold. */
		expect_eq_u64(hpq_total(cap).peak_bytes, s->peak_bytes,
			      "sampled: the raw peak is the buckets' at the estimated peak");
		if (seed == 1)
			expect_near(summary_peak(workload, seed), est, 0.005,
				    "heapprof run's summary prints the estimated peak");
		sum += r;
		sum2 += r * r;
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
		hpq_free(cap);
	}
	cap = NULL;
	printf("  %s: mean %.3f of the exact peak, sd %.3f, %.3f to %.3f over %d seeds at rate %d\n",
	       workload, sum / PEAK_SEEDS,
	       sqrt((sum2 - sum * sum / PEAK_SEEDS) / (PEAK_SEEDS - 1)), lo, hi, PEAK_SEEDS,
	       PEAK_RATE);
	expect_near(sum / PEAK_SEEDS, 1.0, 0.05, "sampled peak, mean over the seeds");
out:
	hpq_free(cap);
}

/* A vector doubled by realloc is the biggest block, but not at the peak. */
HP_TEST(sampled_peak_grow) { check_peak("grow"); }
/* A big input buffer, freed before the parse reaches its peak (like jq). */
HP_TEST(sampled_peak_parse) { check_peak("parse"); }
/* A flat peak over two turnovers of the working set. */
HP_TEST(sampled_peak_churn) { check_peak("churn"); }

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}

/* The report's figures add up (issue 23, item 12): a crafted capture
 * sampled every 4096 bytes with three stacks of one 4096-byte sample each
 * (each stands for 1 / (1 - e^-1) = 1.582 allocations, 6,479.8 bytes).
 * Each stack reads 2 objects and 6,480 bytes, and the total is their sum,
 * 6 and 19,440: rounded apart from them, it read 5 and 19,439 (the sum of
 * the unrounded figures, 4.746 and 19,439.3) under stacks that add up to
 * 6 and 19,440. */
static const char sum_py[] =
	"import json,sys\n"
	"d = json.load(sys.stdin)\n"
	"t = d[\"totals\"]\n"
	"for k in (\"peak\", \"allocated\"):\n"
	"    s = d[\"top\"][k]\n"
	"    print(\"%s: total %d/%d, stacks %d/%d\" % (k, t[\"peak_objects\"], t[\"peak_bytes\"],\n"
	"          sum(e[\"values\"][\"peak_objects\"] for e in s),\n"
	"          sum(e[\"values\"][\"peak_bytes\"] for e in s)))\n";

HP_TEST(sampled_totals_are_the_sum_of_the_stacks)
{
	struct hp_craft c;
	const uint64_t frames[] = {0x401000, 0x402000, 0x403000};
	/* stack, type, origin, size, alloc, free, peak, temp */
	const struct hp_rec_bucket b[] = {
		{1, 0, 0, 4096, 1, 4096, 0, 0, 1, 4096, 0, 0},
		{2, 0, 0, 4096, 1, 4096, 0, 0, 1, 4096, 0, 0},
		{3, 0, 0, 4096, 1, 4096, 0, 0, 1, 4096, 0, 0},
	};
	char path[600];
	char *out;

	snprintf(path, sizeof path, "%s/sampled-sums.hpf", hp_test_tmp());
	hp_craft_begin(&c);
	hp_craft_meta_as(&c, 100, "/bin/prog", "--flag", 4096);
	hp_craft_stacks(&c, 1, frames, 3);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXIT, b, 3);
	if (!expect_eq_u64(hp_craft_write(&c, path), 0, "capture written"))
		return;
	out = hp_test_sh_out("%s/heapprof report --json --top 100 %s | python3 -c '%s'",
			     hp_test_build(), path, sum_py);
	expect_str(out,
		   "peak: total 6/19440, stacks 6/19440\n"
		   "allocated: total 6/19440, stacks 6/19440\n",
		   "the total of the JSON is the sum of its stacks, rounded once");
	free(out);
}
