/*
 * test_rec_aggregate_hist.c - the buckets' sparse histograms
 * (src/recorder/aggregate.c, "Histograms"), exactly: a bucket of one size
 * class and one lifetime class keeps them inline (no side-table memory),
 * a bucket of many classes spills them to a side table with the first
 * classes' counts carried over, spills across the table's chunks, moves and
 * zeroes, many threads spilling one bucket while a reader copies it, and
 * a spill whose memory cannot be mapped (the counters stay exact). Its own
 * binary: the side table starts empty, so the first spill maps its first
 * chunk.
 */
#include <pthread.h>
#include <stdio.h>

#include "../../src/recorder/aggregate.h"
#include "../../src/recorder/stacks.h"
#include "../harness/harness.h"
#include "rec_seam.h"

static void setup(void)
{
	static int done;
	if (!done) {
		expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1), 0, "stacks");
		expect_eq_u64(hp_agg_init(), 0, "buckets");
		done = 1;
	}
	hp_agg_restart_peak();
}

/* A new default bucket (a stack of its own). */
static uint32_t bucket(uint64_t frame)
{
	uint32_t s = hp_stacks_intern(&frame, 1);
	return hp_agg_bucket(s, 0, 0, 0);
}

/* The smallest size of size class c (class 0: size 0). */
static uint64_t size_of_class(unsigned c)
{
	return c ? UINT64_C(1) << (c - 1) : 0;
}

/* Frees every block of the bucket's classes (as allocated by the tests:
 * counts[c] blocks of size_of_class(c)), so that nothing stays in use. */
static void free_all(uint32_t b, const uint32_t *counts)
{
	for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
		for (uint32_t i = 0; i < counts[c]; i++)
			hp_agg_free(b, size_of_class(c), 0, HP_AGG_LIFE_UNKNOWN);
}

/* Whether h's size classes are counts and its lifetime classes lives
 * (NULL: all 0), said class by class. */
static void expect_hist(const struct hp_rec_hist *h, const uint32_t *counts, const uint32_t *lives,
			const char *what)
{
	char why[128];

	for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++) {
		snprintf(why, sizeof why, "%s: size class %u", what, c);
		expect_eq_u64(h->size[c], counts ? counts[c] : 0, why);
	}
	for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++) {
		snprintf(why, sizeof why, "%s: lifetime class %u", what, c);
		expect_eq_u64(h->life[c], lives ? lives[c] : 0, why);
	}
}

/* First: the side tables' first chunk is not mapped yet. A second class
 * with no memory for a spill stays in the bucket's one class (its
 * histogram alone is off), and the counters are exact; memory back, the
 * next bucket spills. */
HP_TEST(hist_spill_without_memory)
{
	uint32_t counts[HP_HIST_SIZE_CLASSES] = {0}, want[HP_HIST_SIZE_CLASSES] = {0};
	struct hp_rec_bucket v;
	struct hp_rec_hist h;
	uint32_t b, b2;

	setup();
	b = bucket(0x9000);
	b2 = bucket(0x9001);
	hp_agg_alloc(b, 100); /* class 7 */
	seam_map_fail_after(0);
	hp_agg_alloc(b, 5000); /* class 13: no spill */
	hp_agg_free(b, 100, 0, 2);
	hp_agg_free(b, 5000, 0, 3); /* lifetime class 3: no spill */
	expect_eq_u64(seam_map_calls, 2, "each second class tried to map a spill");
	seam_restore();
	hp_agg_read(b, &v);
	expect_eq_u64(v.alloc_count * 1000000 + v.alloc_bytes, 2005100, "allocations exact");
	expect_eq_u64(v.free_count * 1000000 + v.free_bytes, 2005100, "frees exact");
	hp_agg_hist(b, &h);
	want[7] = 2;
	{
		uint32_t lives[HP_HIST_LIFE_CLASSES] = {0};
		lives[2] = 2;
		expect_hist(&h, want, lives, "no memory: one class counts all");
	}

	hp_agg_alloc(b2, 100);
	hp_agg_alloc(b2, 5000);
	hp_agg_hist(b2, &h);
	counts[7] = counts[13] = 1;
	expect_hist(&h, counts, NULL, "memory back: spilled");
	hp_agg_free(b2, 100, 0, HP_AGG_LIFE_UNKNOWN);
	hp_agg_free(b2, 5000, 0, HP_AGG_LIFE_UNKNOWN);
}

/* One size class and one lifetime class: inline, exact, and no byte of
 * the side tables. */
HP_TEST(hist_one_class_is_inline)
{
	uint32_t counts[HP_HIST_SIZE_CLASSES] = {0}, lives[HP_HIST_LIFE_CLASSES] = {0};
	struct hp_rec_hist h;
	uint32_t b;
	uint64_t bytes;

	setup();
	b = bucket(0x1000);
	hp_agg_hist(b, &h);
	expect_hist(&h, NULL, NULL, "a new bucket");
	bytes = hp_agg_bytes();
	for (uint64_t i = 0; i < 1000; i++)
		hp_agg_alloc(b, 48); /* class 6: [32, 64) */
	for (int i = 0; i < 700; i++)
		hp_agg_free(b, 48, 0, 4);
	for (int i = 0; i < 50; i++)
		hp_agg_free(b, 48, 0, HP_AGG_LIFE_UNKNOWN);
	hp_agg_hist(b, &h);
	counts[6] = 1000;
	lives[4] = 700;
	expect_hist(&h, counts, lives, "one class each");
	expect_eq_u64(hp_agg_bytes(), bytes, "no side-table memory");
	for (int i = 0; i < 250; i++)
		hp_agg_free(b, 48, 0, HP_AGG_LIFE_UNKNOWN);
}

/* Every size class and every lifetime class, each a different count,
 * the first class counted a long time before the second: spilled, with
 * the first class's count carried into the spill. */
HP_TEST(hist_many_classes_spill)
{
	uint32_t counts[HP_HIST_SIZE_CLASSES], lives[HP_HIST_LIFE_CLASSES];
	struct hp_rec_hist h;
	uint32_t b;
	uint64_t bytes;

	setup();
	b = bucket(0x2000);
	bytes = hp_agg_bytes();
	for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
		counts[c] = c == 9 ? 5000 : 3 * c + 1;
	for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
		lives[c] = c == 5 ? 900 : 2 * c + 1;
	/* size class 9 and lifetime class 5 first (both inline), then the
	 * other size classes (a spill carrying both), then class 9 again,
	 * then the other lifetime classes */
	for (uint32_t i = 0; i < 4000; i++)
		hp_agg_alloc(b, size_of_class(9));
	for (uint32_t i = 0; i < 800; i++)
		hp_agg_free(b, size_of_class(9), 0, 5);
	expect_eq_u64(hp_agg_bytes(), bytes, "one class of each: no spill");
	for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
		for (uint32_t i = 0; i < (c == 9 ? 1000 : counts[c]); i++)
			hp_agg_alloc(b, size_of_class(c) + (c > 1 ? i % (1u << (c - 1)) : 0));
	for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
		for (uint32_t i = 0; i < (c == 5 ? 100 : lives[c]); i++)
			hp_agg_free(b, 0, 0, (int)c);
	hp_agg_hist(b, &h);
	expect_hist(&h, counts, lives, "every class");
	expect_eq_u64(hp_agg_bytes() - bytes, (HP_HIST_SIZE_CLASSES + HP_HIST_LIFE_CLASSES + 1) * 4,
		      "one spill: both histograms' classes, 8-byte aligned");
	/* the frees above were of 800 blocks of class 9 and the rest of
	 * size 0: take the figures back to nothing in use */
	{
		struct hp_rec_bucket v;
		hp_agg_read(b, &v);
		hp_agg_free(b, v.alloc_bytes - v.free_bytes, 0, HP_AGG_LIFE_UNKNOWN);
		for (uint64_t n = v.alloc_count - v.free_count; n > 1; n--)
			hp_agg_free(b, 0, 0, HP_AGG_LIFE_UNKNOWN);
	}
}

/* More spills than a chunk of them holds (1024): each bucket's classes
 * its own. */
HP_TEST(hist_spills_across_chunks)
{
	enum { N = 5000 };
	static uint32_t ids[N];
	struct hp_rec_hist h;
	int bad = 0;

	setup();
	for (uint32_t i = 0; i < N; i++) {
		ids[i] = bucket(0x100000 + i);
		hp_agg_alloc(ids[i], 1);                   /* class 1 */
		hp_agg_alloc(ids[i], size_of_class(2 + i % 20)); /* a second class */
		hp_agg_alloc(ids[i], size_of_class(2 + i % 20));
		hp_agg_free(ids[i], 1, 0, (int)(i % 16));
		hp_agg_free(ids[i], 0, 0, (int)(1 + i % 16)); /* a second class */
	}
	for (uint32_t i = 0; i < N; i++) {
		hp_agg_hist(ids[i], &h);
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			bad += h.size[c] != (c == 1 ? 1u : c == 2 + i % 20 ? 2u : 0u);
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			bad += h.life[c] != (c == i % 16 ? 1u : 0u) + (c == 1 + i % 16 ? 1u : 0u);
	}
	expect_eq_u64(bad, 0, "classes wrong over 5,000 spilled buckets");
	for (uint32_t i = 0; i < N; i++)
		hp_agg_free(ids[i], 2 * size_of_class(2 + i % 20), 0, HP_AGG_LIFE_UNKNOWN);
}

/* hp_agg_move takes a block's size class out of one bucket and into
 * another: inline to inline, spilled to inline (a second class there). */
HP_TEST(hist_move)
{
	uint32_t ca[HP_HIST_SIZE_CLASSES] = {0}, cb[HP_HIST_SIZE_CLASSES] = {0};
	struct hp_rec_hist h;
	uint32_t a, b;

	setup();
	a = bucket(0x3000);
	b = bucket(0x3001);
	hp_agg_alloc(a, 32);   /* 6 */
	hp_agg_alloc(a, 32);   /* 6 */
	hp_agg_alloc(a, 2048); /* 12: a spills */
	hp_agg_move(a, b, 32);
	hp_agg_hist(a, &h);
	ca[6] = 1;
	ca[12] = 1;
	expect_hist(&h, ca, NULL, "moved from: spilled");
	hp_agg_hist(b, &h);
	cb[6] = 1;
	expect_hist(&h, cb, NULL, "moved to: inline");
	hp_agg_move(a, b, 2048);
	hp_agg_hist(a, &h);
	ca[12] = 0;
	expect_hist(&h, ca, NULL, "moved from again");
	hp_agg_hist(b, &h);
	cb[12] = 1;
	expect_hist(&h, cb, NULL, "moved to: a second class, spilled");
	free_all(a, ca);
	free_all(b, cb);
}

/* Threads counting one bucket in different classes, so that it spills
 * while others count and a reader copies its histograms; the classes add
 * up exactly at the end, and no copy ever reads more than was counted. */
enum { THREADS = 4, PER_THREAD = 20000 };
static uint32_t shared_bucket;
static int done_counting;

static void *hist_counter(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < PER_THREAD; i++) {
		hp_agg_alloc(shared_bucket, size_of_class(3 + t));
		hp_agg_free(shared_bucket, size_of_class(3 + t), 0, (int)t);
	}
	return NULL;
}

static void *hist_reader(void *arg)
{
	long *over = arg;

	while (!__atomic_load_n(&done_counting, __ATOMIC_ACQUIRE)) {
		struct hp_rec_hist h;
		uint64_t sum = 0;
		hp_agg_hist(shared_bucket, &h);
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			sum += h.size[c];
		*over += sum > (uint64_t)THREADS * PER_THREAD;
	}
	return NULL;
}

HP_TEST(hist_threads)
{
	uint32_t counts[HP_HIST_SIZE_CLASSES] = {0}, lives[HP_HIST_LIFE_CLASSES] = {0};
	pthread_t t[THREADS], r;
	struct hp_rec_hist h;
	long over = 0;

	setup();
	shared_bucket = bucket(0x4000);
	pthread_create(&r, NULL, hist_reader, &over);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, hist_counter, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&done_counting, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	hp_agg_hist(shared_bucket, &h);
	for (unsigned i = 0; i < THREADS; i++) {
		counts[3 + i] = PER_THREAD;
		lives[i] = PER_THREAD;
	}
	expect_hist(&h, counts, lives, "four threads' classes");
	expect_eq_u64(over, 0, "copies that read more than was counted");
}

/* hp_agg_zero: an inline class and a spill both read 0 after, and count
 * afresh. Last: it zeroes every bucket. */
HP_TEST(hist_zero)
{
	uint32_t counts[HP_HIST_SIZE_CLASSES] = {0}, lives[HP_HIST_LIFE_CLASSES] = {0};
	struct hp_rec_hist h;
	uint32_t one, many;

	setup();
	one = bucket(0x5000);
	many = bucket(0x5001);
	hp_agg_alloc(one, 8);
	hp_agg_free(one, 8, 0, 1);
	hp_agg_alloc(one, 8);
	hp_agg_alloc(many, 8);
	hp_agg_alloc(many, 800);
	hp_agg_free(many, 8, 0, 1);
	hp_agg_free(many, 800, 0, 2);
	hp_agg_zero();
	hp_agg_hist(one, &h);
	expect_hist(&h, NULL, NULL, "zeroed inline");
	hp_agg_hist(many, &h);
	expect_hist(&h, NULL, NULL, "zeroed spill");
	hp_agg_alloc(one, 3000);
	hp_agg_free(one, 3000, 0, 6);
	hp_agg_alloc(many, 3000);
	hp_agg_free(many, 3000, 0, 6);
	counts[12] = 1;
	lives[6] = 1;
	hp_agg_hist(one, &h);
	expect_hist(&h, counts, lives, "inline after zero");
	hp_agg_hist(many, &h);
	expect_hist(&h, counts, lives, "spill after zero");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
