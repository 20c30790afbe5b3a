/*
 * test_rec_aggregate.c - the bucket counters and the at-peak epochs
 * (src/recorder/aggregate.h, docs/internals/at-peak.md): each bucket's
 * value at the global peak, exactly, through a sequence whose peak moves;
 * the sampled estimate that finds the peak (docs/internals/sampling.md)
 * where the raw bytes would find another; keyed buckets; lost counts;
 * mmap failure through the os.c seam; and 8 threads counting into shared
 * buckets while a reader copies them, checked exactly. Runs under
 * ThreadSanitizer with `make check SAN=thread`.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "../../src/recorder/aggregate.h"
#include "../../src/recorder/sampler.h"
#include "../../src/recorder/stacks.h"
#include "../harness/harness.h"
#include "rec_seam.h"

/* The tables are process-wide: set up once, and every test leaves no
 * bytes in use, so that hp_agg_restart_peak starts the next one at 0. */
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

static uint32_t stack(uint64_t frame)
{
	return hp_stacks_intern(&frame, 1);
}

static struct hp_rec_bucket view(uint32_t id)
{
	struct hp_rec_bucket v;
	hp_agg_read(id, &v);
	return v;
}

/* Keyed buckets first: this test needs their first chunk still unmapped. */
HP_TEST(agg_keyed_mmap_failure)
{
	uint32_t s, id;

	setup();
	s = stack(0x1000);
	seam_map_fail_after(2); /* the key's word and entry chunks, not the buckets' */
	expect_eq_u64(hp_agg_bucket(s, 7, 0, 0), 0, "no memory for the bucket's chunk: 0");
	seam_map_fail_after(-1);
	id = hp_agg_bucket(s, 7, 0, 0);
	expect_eq_u64(id, HP_AGG_KEYED_FIRST, "memory back: the first keyed id");
	expect_eq_u64(seam_map_calls, 1, "just the chunk");
	seam_restore();
	expect_eq_u64(view(id).type_tag, 7, "its key");
	expect_eq_u64(view(id).stack_id, s, "its stack");
}

HP_TEST(agg_keyed_buckets)
{
	uint32_t s, a, b, c;
	struct hp_rec_bucket v;
	int found = 0;

	setup();
	s = stack(0x2000);
	a = hp_agg_bucket(s, 1, 2, 0);
	b = hp_agg_bucket(s, 0, 0, 48);
	c = hp_agg_bucket(s, 0, 0, 0);
	expect_true(a >= HP_AGG_KEYED_FIRST && b > a, "tags and sizes are keyed");
	expect_eq_u64(c, s + 1, "no tags, size 0: the stack's default bucket");
	expect_eq_u64(hp_agg_bucket(s, 1, 2, 0), a, "same key, same id");
	hp_agg_alloc(b, 48);
	v = view(b);
	expect_eq_u64(v.size, 48, "size");
	expect_eq_u64(v.origin_tag, 0, "context");
	for (uint32_t id = hp_agg_next(0); id; id = hp_agg_next(id))
		found += id == a || id == b;
	expect_eq_u64(found, 2, "hp_agg_next visits keyed buckets");
	hp_agg_free(b, 48, 0, HP_AGG_LIFE_UNKNOWN);
}

/* The timeline's walk (hp_agg_next_tick): a default bucket whose blocks
 * all moved to a typed one holds no allocation, so hp_agg_next (the
 * snapshots') skips it, but its fall to nothing must reach the timeline
 * once, with its key and tags. */
HP_TEST(agg_next_tick_sees_an_emptied_bucket)
{
	struct hp_rec_site site;
	uint32_t s, plain, typed;
	int seen_next = 0, seen_tick = 0, again = 0;

	setup();
	s = stack(0x3001);
	plain = hp_agg_bucket(s, 0, 0, 0);
	typed = hp_agg_bucket(s, 5, 0, 0);
	hp_agg_alloc(plain, 16);
	hp_agg_alloc(plain, 16);
	for (uint32_t id = hp_agg_next_tick(0); id; id = hp_agg_next_tick(id))
		hp_agg_take_change(id, 0, &site); /* the timeline is up to date */
	hp_agg_move(plain, typed, 16);
	hp_agg_move(plain, typed, 16);
	for (uint32_t id = hp_agg_next(0); id; id = hp_agg_next(id))
		seen_next += id == plain;
	expect_eq_u64(seen_next, 0, "hp_agg_next skips the emptied default bucket");
	for (uint32_t id = hp_agg_next_tick(0); id; id = hp_agg_next_tick(id)) {
		if (!hp_agg_take_change(id, 0, &site))
			continue;
		if (id == plain) {
			seen_tick++;
			expect_eq_u64(site.in_use_bytes + site.in_use_count, 0, "it holds nothing");
		} else if (id == typed) {
			seen_tick += 10;
			expect_eq_u64(site.in_use_bytes, 32, "the typed bucket holds both");
			expect_eq_u64(site.type_tag, 5, "with its type tag");
			expect_eq_u64(site.stack_id, s, "and its stack");
		}
	}
	expect_eq_u64(seen_tick, 11, "the timeline's walk lists both buckets' change");
	for (uint32_t id = hp_agg_next_tick(0); id; id = hp_agg_next_tick(id))
		again += id == plain;
	expect_eq_u64(again, 0, "once: then the emptied bucket is left out again");
	hp_agg_free(typed, 16, 0, HP_AGG_LIFE_UNKNOWN);
	hp_agg_free(typed, 16, 0, HP_AGG_LIFE_UNKNOWN);
}

HP_TEST(agg_histograms)
{
	struct hp_rec_hist h;
	uint32_t b;

	setup();
	b = hp_agg_bucket(stack(0x3101), 0, 0, 0);
	hp_agg_alloc(b, 0);                          /* size class 0 */
	hp_agg_alloc(b, 1);                          /* 1: [1, 2) */
	hp_agg_alloc(b, 24);                         /* 5: [16, 32) */
	hp_agg_alloc(b, 31);                         /* 5 */
	hp_agg_alloc(b, 4096);                       /* 13: [4096, 8192) */
	hp_agg_alloc(b, 1ull << 40);                 /* the last class: 4 MiB and more */
	hp_agg_free(b, 24, 0, (int)hp_hist_life_class(0));         /* lifetime class 0: < 64 */
	hp_agg_free(b, 31, 0, (int)hp_hist_life_class(64));        /* 1: [64, 128) */
	hp_agg_free(b, 1, 0, (int)hp_hist_life_class(1536));       /* 5: [1024, 2048) */
	hp_agg_free(b, 0, 0, (int)hp_hist_life_class(1ull << 30)); /* the last: 2 Mi and more */
	hp_agg_free(b, 4096, 0, HP_AGG_LIFE_UNKNOWN);              /* in no class */
	hp_agg_hist(b, &h);
	expect_eq_u64(h.size[0] * 100000 + h.size[1] * 10000 + h.size[5] * 1000 + h.size[13] * 100 +
			      h.size[HP_HIST_SIZE_CLASSES - 1],
		      112101, "sizes by class");
	expect_eq_u64(h.life[0] * 1000 + h.life[1] * 100 + h.life[5] * 10 +
			      h.life[HP_HIST_LIFE_CLASSES - 1],
		      1111, "lifetimes by class");
	{
		uint64_t n = 0;
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			n += h.life[c];
		expect_eq_u64(n, 4, "an unknown lifetime is in no class");
	}
	hp_agg_free(b, 1ull << 40, 0, HP_AGG_LIFE_UNKNOWN);
}

HP_TEST(agg_at_peak)
{
	uint32_t b1, b2;
	struct hp_totals t;
	struct hp_rec_bucket v;

	setup();
	b1 = hp_agg_bucket(stack(0x3001), 0, 0, 0);
	b2 = hp_agg_bucket(stack(0x3002), 0, 0, 0);
	hp_agg_alloc(b1, 100);
	hp_agg_alloc(b2, 50); /* peak 150: b1 100, b2 50 */
	hp_agg_free(b1, 100, 1, HP_AGG_LIFE_UNKNOWN);
	hp_agg_alloc(b2, 20); /* 70 in use, the peak stays */
	v = view(b1);
	expect_eq_u64(v.peak_bytes, 100, "b1 at the peak");
	expect_eq_u64(v.peak_count, 1, "b1 blocks at the peak");
	expect_eq_u64(v.temp_count * 1000 + v.temp_bytes, 1100, "a temporary");
	v = view(b2);
	expect_eq_u64(v.peak_bytes, 50, "b2 at the peak, not now");
	expect_eq_u64(v.alloc_bytes - v.free_bytes, 70, "b2 now");
	hp_agg_totals(&t);
	expect_eq_u64(t.peak_bytes, 150, "the peak");
	expect_eq_u64(t.in_use_bytes, 70, "in use");
	expect_eq_u64(t.peak_estimate_bytes, 150, "full mode: the estimate is the raw value");

	hp_agg_alloc(b1, 200); /* a new peak, 270: b1 200, b2 70 (unchanged since) */
	hp_agg_free(b2, 50, 0, HP_AGG_LIFE_UNKNOWN);
	hp_agg_free(b2, 20, 0, HP_AGG_LIFE_UNKNOWN);
	hp_agg_free(b1, 200, 0, HP_AGG_LIFE_UNKNOWN);
	v = view(b1);
	expect_eq_u64(v.peak_bytes * 10 + v.peak_count, 2001, "b1 at the new peak");
	v = view(b2);
	expect_eq_u64(v.peak_bytes * 10 + v.peak_count, 702, "b2 at the new peak");
	hp_agg_totals(&t);
	expect_eq_u64(t.peak_bytes, 270, "the new peak");
	expect_eq_u64(t.in_use_bytes, 0, "nothing in use");
	expect_true(t.peak_time_ns > 0, "its time");
}

/* Sampled: the peak is the largest estimate (each block at its weight),
 * and peak_bytes the raw bytes in use at that moment. One 1 MiB block
 * (weight 1 MiB) is the raw peak; 300 blocks of 100 bytes (weight about
 * 4146 each at rate 4096) are the estimated one. */
HP_TEST(agg_sampled_peak)
{
	const uint64_t rate = 4096, w100 = hp_sampler_weight(100, rate);
	uint32_t big, small;
	struct hp_totals t;
	struct hp_rec_bucket v;

	setup();
	hp_agg_set_sample_rate(rate);
	hp_agg_restart_peak();
	big = hp_agg_bucket(stack(0x4001), 0, 0, 1 << 20);
	small = hp_agg_bucket(stack(0x4002), 0, 0, 100);
	hp_agg_alloc(big, 1 << 20);
	hp_agg_free(big, 1 << 20, 0, HP_AGG_LIFE_UNKNOWN);
	for (int i = 0; i < 300; i++)
		hp_agg_alloc(small, 100);
	hp_agg_totals(&t);
	expect_eq_u64(w100, 4146, "the weight of 100 bytes at rate 4096");
	expect_eq_u64(t.peak_estimate_bytes, 300 * w100, "the estimated peak");
	expect_eq_u64(t.peak_bytes, 30000, "raw bytes in use at that moment, not 1 MiB");
	expect_eq_u64(t.in_use_estimate_bytes, 300 * w100, "the estimate now");
	v = view(big);
	expect_eq_u64(v.peak_bytes, 0, "the big block was gone at the peak");
	v = view(small);
	expect_eq_u64(v.peak_count, 300, "every small block at the peak");
	for (int i = 0; i < 300; i++)
		hp_agg_free(small, 100, 0, HP_AGG_LIFE_UNKNOWN);
	hp_agg_totals(&t);
	expect_eq_u64(t.in_use_estimate_bytes, 0, "a free takes back exactly its weight");
	hp_agg_set_sample_rate(1);
}

HP_TEST(agg_lost)
{
	struct hp_totals before, after;

	setup();
	hp_agg_totals(&before);
	hp_agg_lost(HP_LOST_NO_MEMORY, 2, 300);
	hp_agg_lost(HP_LOST_KINDS, 1, 1); /* out of range: ignored */
	hp_agg_totals(&after);
	expect_eq_u64(after.lost_count[HP_LOST_NO_MEMORY] - before.lost_count[HP_LOST_NO_MEMORY],
		      2, "count");
	expect_eq_u64(after.lost_bytes[HP_LOST_NO_MEMORY] - before.lost_bytes[HP_LOST_NO_MEMORY],
		      300, "bytes");
}

/* 8 threads count into 4 shared buckets and keyed buckets of their own
 * while a reader copies buckets and totals, lock-free. */
#define THREADS 8
#define ROUNDS 20000u

static uint32_t shared_bucket[4];
static int stop_reading;

static void *counter(void *arg)
{
	uintptr_t n = (uintptr_t)arg;
	uint64_t bad = 0;

	for (uint32_t i = 0; i < ROUNDS; i++) {
		uint32_t b = shared_bucket[(i + n) % 4];
		hp_agg_alloc(b, 16 + n);
		hp_agg_free(b, 16 + n, i & 1, HP_AGG_LIFE_UNKNOWN);
		if (i % 64 == 0) { /* a keyed bucket: created by this thread, then found */
			uint32_t k = hp_agg_bucket(1, (uint32_t)n + 100, 0, i);
			bad += !k || hp_agg_bucket(1, (uint32_t)n + 100, 0, i) != k;
			hp_agg_alloc(k, 1);
			hp_agg_free(k, 1, 0, HP_AGG_LIFE_UNKNOWN);
		}
	}
	return (void *)(uintptr_t)bad;
}

static void *reader(void *arg)
{
	struct hp_rec_bucket v;
	struct hp_totals t;
	uint64_t bad = 0;
	(void)arg;

	while (!__atomic_load_n(&stop_reading, __ATOMIC_ACQUIRE)) {
		for (uint32_t id = hp_agg_next(0); id; id = hp_agg_next(id)) {
			hp_agg_read(id, &v);
			bad += v.free_count > v.alloc_count + THREADS;
		}
		hp_agg_totals(&t);
	}
	return (void *)(uintptr_t)bad;
}

HP_TEST(agg_threads)
{
	pthread_t th[THREADS], rd;
	uint64_t bad = 0, allocs = 0, bytes = 0, temps = 0;
	struct hp_totals t;
	void *r;

	setup();
	for (int i = 0; i < 4; i++)
		shared_bucket[i] = hp_agg_bucket(stack(0x5000 + (uint64_t)i), 0, 0, 0);
	pthread_create(&rd, NULL, reader, NULL);
	for (uintptr_t n = 0; n < THREADS; n++)
		pthread_create(&th[n], NULL, counter, (void *)n);
	for (uintptr_t n = 0; n < THREADS; n++) {
		pthread_join(th[n], &r);
		bad += (uintptr_t)r;
	}
	__atomic_store_n(&stop_reading, 1, __ATOMIC_RELEASE);
	pthread_join(rd, &r);
	bad += (uintptr_t)r;
	expect_eq_u64(bad, 0, "keyed ids stable, copies consistent");
	for (int i = 0; i < 4; i++) {
		struct hp_rec_bucket v = view(shared_bucket[i]);
		allocs += v.alloc_count;
		bytes += v.alloc_bytes;
		temps += v.temp_count;
		bad += v.alloc_count != v.free_count || v.alloc_bytes != v.free_bytes;
	}
	expect_eq_u64(bad, 0, "every bucket balanced");
	expect_eq_u64(allocs, THREADS * ROUNDS, "every allocation counted once");
	expect_eq_u64(bytes, ROUNDS * (16 * THREADS + THREADS * (THREADS - 1) / 2), "bytes");
	expect_eq_u64(temps, THREADS * ROUNDS / 2, "temporaries");
	hp_agg_totals(&t);
	expect_eq_u64(t.in_use_bytes, 0, "nothing in use");
	expect_true(t.peak_bytes <= 16 * THREADS + THREADS * THREADS + THREADS,
		    "the peak: at most one block per thread at once");
}

/* Credit (aggregate.c): far below the peak, threads count from their own
 * credit; the bytes in use stay exact (less the credit held), and a peak
 * reached while they hold still is bytes allocated, to the byte. */
#define HOLD 40u
static uint32_t credit_bucket, hold_bucket;
static int holding, release_holds;

static void *credit_counter(void *arg)
{
	uintptr_t n = (uintptr_t)arg;

	for (uint32_t i = 0; i < ROUNDS; i++) {
		hp_agg_alloc(credit_bucket, 16 + n + i % 64);
		hp_agg_alloc(credit_bucket, 200);
		hp_agg_free(credit_bucket, 16 + n + i % 64, 0, HP_AGG_LIFE_UNKNOWN);
		hp_agg_free(credit_bucket, 200, 0, HP_AGG_LIFE_UNKNOWN);
	}
	for (uint32_t i = 0; i < HOLD; i++)
		hp_agg_alloc(hold_bucket, 1000);
	__atomic_add_fetch(&holding, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&release_holds, __ATOMIC_ACQUIRE))
		sched_yield();
	for (uint32_t i = 0; i < HOLD; i++)
		hp_agg_free(hold_bucket, 1000, 0, HP_AGG_LIFE_UNKNOWN);
	return NULL;
}

static void *in_use_reader(void *arg)
{
	struct hp_totals t;
	uint64_t bad = 0;
	(void)arg;

	while (!__atomic_load_n(&stop_reading, __ATOMIC_ACQUIRE)) {
		hp_agg_totals(&t);
		/* at most every thread's two blocks and its hold, and the top */
		bad += t.in_use_bytes > (uint64_t)THREADS * (300 + HOLD * 1000) + (1u << 20);
	}
	return (void *)(uintptr_t)bad;
}

HP_TEST(agg_threads_credit_exact)
{
	pthread_t th[THREADS], rd;
	uint32_t top;
	struct hp_totals t;
	void *r;

	setup();
	credit_bucket = hp_agg_bucket(stack(0x6000), 0, 0, 0);
	hold_bucket = hp_agg_bucket(stack(0x6001), 0, 0, 0);
	top = hp_agg_bucket(stack(0x6002), 0, 0, 0);
	/* A peak of 1 MiB, then nothing in use: far below it. */
	hp_agg_alloc(top, 1u << 20);
	hp_agg_free(top, 1u << 20, 0, HP_AGG_LIFE_UNKNOWN);
	__atomic_store_n(&stop_reading, 0, __ATOMIC_RELEASE);
	pthread_create(&rd, NULL, in_use_reader, NULL);
	for (uintptr_t n = 0; n < THREADS; n++)
		pthread_create(&th[n], NULL, credit_counter, (void *)n);
	while (__atomic_load_n(&holding, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
	hp_agg_totals(&t);
	expect_eq_u64(t.in_use_bytes, THREADS * HOLD * 1000, "the holds in use, no credit");
	expect_eq_u64(t.peak_bytes, 1u << 20, "below the first peak: it stays");
	/* On top of the holds, 1 MiB again: a new peak, exactly. */
	hp_agg_alloc(top, 1u << 20);
	hp_agg_totals(&t);
	expect_eq_u64(t.peak_bytes, (1u << 20) + THREADS * HOLD * 1000,
		      "the new peak: the holds and the top, not a byte of credit");
	expect_eq_u64(view(hold_bucket).peak_bytes + view(top).peak_bytes +
			      view(credit_bucket).peak_bytes,
		      t.peak_bytes, "the buckets at the peak add up to it");
	hp_agg_free(top, 1u << 20, 0, HP_AGG_LIFE_UNKNOWN);
	__atomic_store_n(&release_holds, 1, __ATOMIC_RELEASE);
	for (uintptr_t n = 0; n < THREADS; n++)
		pthread_join(th[n], NULL);
	__atomic_store_n(&stop_reading, 1, __ATOMIC_RELEASE);
	pthread_join(rd, &r);
	expect_eq_u64((uintptr_t)r, 0, "the bytes in use never read past what is allocated");
	hp_agg_totals(&t);
	expect_eq_u64(t.in_use_bytes, 0, "nothing in use: every thread's credit back at its exit");
	expect_eq_u64(view(credit_bucket).alloc_count, 2 * THREADS * ROUNDS, "every count");
	expect_eq_u64(view(credit_bucket).peak_count, 0, "the churn held nothing at the peak");
}

/* The credit's races played out step by step: actor threads count on
 * command, and one is paused in a race window (hp_agg_pause) while others
 * act. Both interleavings broke the peak before they were fixed. */
struct actor {
	pthread_t thread;
	int cmd, is_free, pause_at, paused, go, done; /* atomics */
	uint64_t size;
};
static __thread struct actor *actor_self;
static uint32_t race_bucket;

static void pause_here(int window)
{
	struct actor *a = actor_self;

	if (a && __atomic_load_n(&a->pause_at, __ATOMIC_SEQ_CST) == window) {
		__atomic_store_n(&a->pause_at, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&a->paused, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&a->go, __ATOMIC_SEQ_CST))
			sched_yield();
		__atomic_store_n(&a->go, 0, __ATOMIC_SEQ_CST);
	}
}

static void *actor_main(void *arg)
{
	actor_self = arg;
	for (;;) {
		int cmd;
		while (!(cmd = __atomic_load_n(&actor_self->cmd, __ATOMIC_SEQ_CST)))
			sched_yield();
		if (cmd < 0)
			return NULL;
		if (actor_self->is_free)
			hp_agg_free(race_bucket, actor_self->size, 0, HP_AGG_LIFE_UNKNOWN);
		else
			hp_agg_alloc(race_bucket, actor_self->size);
		__atomic_store_n(&actor_self->cmd, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&actor_self->done, 1, __ATOMIC_SEQ_CST);
	}
}

/* a counts size (freed when is_free), paused in window pause_at (0: none). */
static void act(struct actor *a, int is_free, uint64_t size, int pause_at)
{
	a->is_free = is_free;
	a->size = size;
	__atomic_store_n(&a->pause_at, pause_at, __ATOMIC_SEQ_CST);
	__atomic_store_n(&a->done, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&a->paused, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&a->cmd, 1, __ATOMIC_SEQ_CST);
}

static void await(int *flag)
{
	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void act_now(struct actor *a, int is_free, uint64_t size)
{
	act(a, is_free, size, 0);
	await(&a->done);
}

static uint64_t peak_now(void)
{
	struct hp_totals t;
	hp_agg_totals(&t);
	return t.peak_bytes;
}

HP_TEST(agg_credit_races)
{
	static struct actor a, b, c, h;
	struct actor *all[] = {&a, &b, &c, &h};

	setup();
	race_bucket = hp_agg_bucket(stack(0x7000), 0, 0, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&all[i]->thread, NULL, actor_main, all[i]);
	hp_agg_pause = pause_here;

	/* 1. A peak found while a turn near takes the credit back: a peak
	 * of 100,000; c and h hold credit, h 90,000 in use; b turns near and
	 * is paused before the take-back; a allocates 6,000 then (it waits
	 * for the turn, or it counted credit: 101,096 was recorded). */
	hp_agg_alloc(race_bucket, 100000);
	hp_agg_free(race_bucket, 100000, 0, HP_AGG_LIFE_UNKNOWN);
	act_now(&c, 0, 1000);
	act_now(&c, 1, 1000);
	act_now(&h, 0, 90000);
	act(&b, 0, 3000, HP_AGG_PAUSE_TURNING);
	await(&b.paused);
	act(&a, 0, 6000, 0);
	for (int i = 0; i < 2000; i++)
		sched_yield(); /* a into the window, or waiting for the lock */
	__atomic_store_n(&b.go, 1, __ATOMIC_SEQ_CST);
	await(&b.done);
	await(&a.done);
	expect_eq_u64(peak_now(), 100000, "99,000 in use under a peak of 100,000: no new peak");
	act_now(&a, 1, 6000);
	act_now(&b, 1, 3000);
	act_now(&h, 1, 90000);

	/* 2. A grant made across a straggler's add: a peak of 200,000 in
	 * use; a reads near and is paused before its add of 16,000; the
	 * 200,000 are freed (the process turns far); h takes 180,000; b's
	 * grant for 10,000 passes its test and is paused before its add;
	 * then a adds, then b: 206,000 in use, a new peak (it was missed:
	 * the peak stayed 200,000). */
	hp_agg_alloc(race_bucket, 200000);
	act(&a, 0, 16000, HP_AGG_PAUSE_ADDING);
	await(&a.paused);
	hp_agg_free(race_bucket, 200000, 0, HP_AGG_LIFE_UNKNOWN);
	act_now(&h, 0, 180000);
	act(&b, 0, 10000, HP_AGG_PAUSE_GRANTING);
	await(&b.paused);
	__atomic_store_n(&a.go, 1, __ATOMIC_SEQ_CST);
	await(&a.done);
	__atomic_store_n(&b.go, 1, __ATOMIC_SEQ_CST);
	await(&b.done);
	expect_eq_u64(peak_now(), 206000, "180,000 + 16,000 + 10,000 in use: the new peak");
	act_now(&h, 1, 180000);
	act_now(&a, 1, 16000);
	act_now(&b, 1, 10000);

	hp_agg_pause = NULL;
	for (int i = 0; i < 4; i++) {
		__atomic_store_n(&all[i]->cmd, -1, __ATOMIC_SEQ_CST);
		pthread_join(all[i]->thread, NULL);
	}
	{
		struct hp_totals t;
		hp_agg_totals(&t);
		expect_eq_u64(t.in_use_bytes, 0, "nothing in use after the races");
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
