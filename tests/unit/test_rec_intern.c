/*
 * test_rec_intern.c - the recorder's interning table (src/recorder/intern.h):
 * dense ids, limits, the chunked entries and keys, the index's growth, and
 * mmap failures through the os.c seam; then 8 threads interning the same
 * keys in different orders while readers look them up, checked exactly.
 * Runs under ThreadSanitizer with `make check SAN=thread`.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/hash.h"
#include "../../src/recorder/intern.h"
#include "../harness/harness.h"
#include "rec_seam.h"

/* Key i: (i + 1) words, up to 7, whose contents name i. */
static uint32_t key_of(uint32_t i, uint64_t *key)
{
	uint32_t len = 1 + i % 7;
	for (uint32_t w = 0; w < len; w++)
		key[w] = (uint64_t)i * 0x9e3779b97f4a7c15ULL + w;
	return len;
}

static int key_is(const struct hp_intern *t, uint32_t id, uint32_t i)
{
	uint64_t want[8];
	uint32_t len, wlen = key_of(i, want);
	const uint64_t *k = hp_intern_key(t, id, &len);
	return len == wlen && memcmp(k, want, len * sizeof *k) == 0;
}

/* A hash given by the caller (the stack table's, computed by the unwinder
 * as it walks): keys whose hashes are all equal still get distinct ids,
 * since the table compares whole keys; equal keys get one id whether the
 * hash comes from hp_hash_stack or a step-by-step fold. */
HP_TEST(intern_given_hash)
{
	struct hp_intern t;
	uint64_t key[8], h;
	uint32_t len, bad = 0;

	expect_eq_u64(hp_intern_init(&t, 1u << 12, 1u << 16), 0, "init");
	for (uint32_t i = 0; i < 500; i++) {
		len = key_of(i, key);
		bad += hp_intern_put_hashed(&t, key, len, 42) != i + 1;
	}
	expect_eq_u64(bad, 0, "500 keys of one hash: 500 ids");
	for (uint32_t i = 0; i < 500; i++) {
		len = key_of(i, key);
		bad += hp_intern_put_hashed(&t, key, len, 42) != i + 1 || !key_is(&t, i + 1, i);
	}
	expect_eq_u64(bad, 0, "each found again, its key intact");

	expect_eq_u64(hp_intern_init(&t, 1u << 12, 1u << 16), 0, "init");
	len = key_of(5, key);
	h = HP_HASH_STACK_SEED;
	for (uint32_t w = 0; w < len; w++)
		h = hp_hash_stack_step(h, key[w]);
	expect_eq_u64(hp_hash_stack_end(h, len), hp_hash_stack(key, len), "the fold is the hash");
	expect_eq_u64(hp_intern_put_hashed(&t, key, len, hp_hash_stack(key, len)), 1, "id 1");
	expect_eq_u64(hp_intern_put_hashed(&t, key, len, hp_hash_stack_end(h, len)), 1,
		      "the same id from the folded hash");
	/* One frame changed, anywhere: a different hash (each step is a
	 * bijection of the state for a given frame). */
	for (uint32_t w = 0; w < len; w++) {
		uint64_t k2[8];
		memcpy(k2, key, sizeof k2);
		for (uint64_t d = 1; d < 1000; d++) {
			k2[w] = key[w] + d * 0x1000;
			bad += hp_hash_stack(k2, len) == hp_hash_stack(key, len);
		}
	}
	expect_eq_u64(bad, 0, "stacks one frame apart never share a hash");
}

HP_TEST(intern_dense_ids)
{
	struct hp_intern t;
	uint64_t key[8], empty = 0;
	uint32_t len, bad = 0;

	expect_eq_u64(hp_intern_init(&t, 1u << 20, 1u << 24), 0, "init");
	expect_eq_u64(hp_intern_count(&t), 1, "no ids yet: count 1");
	/* 20000 keys: the index grows 4096 -> 8192 -> 16384 -> 32768 slots, the
	 * entries fill 5 chunks and the keys 2 word chunks. */
	for (uint32_t i = 0; i < 20000; i++) {
		len = key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1;
	}
	expect_eq_u64(bad, 0, "ids are dense from 1, in order");
	expect_eq_u64(hp_intern_count(&t), 20001, "count");
	for (uint32_t i = 0; i < 20000; i++) {
		len = key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1 || !key_is(&t, i + 1, i);
	}
	expect_eq_u64(bad, 0, "a key seen again gets its old id, and reads back whole");
	expect_eq_u64(hp_intern_count(&t), 20001, "nothing added twice");
	expect_eq_u64(hp_intern_put(&t, &empty, 0), 20001, "an empty key has an id too");
	expect_eq_u64(hp_intern_put(&t, key, 0), 20001, "one empty key");
	hp_intern_key(&t, 20001, &len);
	expect_eq_u64(len, 0, "of length 0");
}

HP_TEST(intern_limits)
{
	static uint64_t big[HP_INTERN_MAX_KEY_WORDS + 1];
	struct hp_intern t;
	uint64_t key[8];

	expect_eq_u64(hp_intern_init(&t, HP_INTERN_MAX_IDS + 1, 100), (uint64_t)-EINVAL,
		      "more ids than a table can hold");
	expect_eq_u64(hp_intern_init(&t, 4, 10), 0, "3 ids, 10 words");
	expect_eq_u64(hp_intern_put(&t, big, HP_INTERN_MAX_KEY_WORDS + 1), 0, "too long a key");
	big[0] = 1;
	expect_eq_u64(hp_intern_put(&t, big, 6), 1, "6 words");
	expect_eq_u64(hp_intern_put(&t, key, key_of(4, key)), 0, "5 more words do not fit in 10");
	expect_eq_u64(hp_intern_put(&t, key, key_of(3, key)), 2, "4 more do");
	expect_eq_u64(hp_intern_put(&t, key, 0), 3, "and an empty key");
	expect_eq_u64(hp_intern_put(&t, key, key_of(7, key)), 0, "the table is full at max_ids - 1");
	expect_eq_u64(hp_intern_put(&t, big, 6), 1, "a known key still has its id when full");
	expect_eq_u64(hp_intern_count(&t), 4, "count");
}

/* Keys as long as HP_INTERN_MAX_KEY_WORDS: a word chunk (64 Ki words) holds
 * 64 of them, and the 65th starts a new chunk, none straddling two. */
HP_TEST(intern_long_keys_across_word_chunks)
{
	static uint64_t key[HP_INTERN_MAX_KEY_WORDS];
	struct hp_intern t;
	uint32_t bad = 0, len;

	expect_eq_u64(hp_intern_init(&t, 1000, 1u << 20), 0, "init");
	for (uint32_t i = 0; i < 200; i++) {
		for (uint32_t w = 0; w < HP_INTERN_MAX_KEY_WORDS; w++)
			key[w] = i * 100000ull + w;
		key[0] = i;
		bad += hp_intern_put(&t, key, HP_INTERN_MAX_KEY_WORDS - (i & 1)) != i + 1;
	}
	expect_eq_u64(bad, 0, "ids");
	for (uint32_t i = 0; i < 200; i++) {
		const uint64_t *k = hp_intern_key(&t, i + 1, &len);
		bad += len != HP_INTERN_MAX_KEY_WORDS - (i & 1) || k[0] != i ||
		       k[len - 1] != i * 100000ull + len - 1;
	}
	expect_eq_u64(bad, 0, "every key whole");
	expect_eq_u64(t.used_words, 200 * HP_INTERN_MAX_KEY_WORDS - 100, "words counted");
}

/* mmap failing: an insert that needs memory returns 0 and publishes
 * nothing; the table works again when memory comes back. */
HP_TEST(intern_mmap_failure)
{
	struct hp_intern t;
	uint64_t key[8];
	uint32_t len, bad = 0;

	expect_eq_u64(hp_intern_init(&t, 1u << 20, 1u << 24), 0, "init");
	seam_map_fail_after(0);
	len = key_of(0, key);
	expect_eq_u64(hp_intern_put(&t, key, len), 0, "no memory for the first key's chunks");
	expect_eq_u64(hp_intern_count(&t), 1, "nothing published");
	seam_map_fail_after(1); /* the word chunk, not the entry chunk */
	expect_eq_u64(hp_intern_put(&t, key, len), 0, "no memory for the entry chunk");
	expect_eq_u64(hp_intern_count(&t), 1, "still nothing");
	seam_map_fail_after(-1);
	expect_eq_u64(hp_intern_put(&t, key, len), 1, "memory back: id 1");
	expect_eq_u64(seam_map_calls, 1, "the entry chunk: the word chunk of the last try is kept");
	/* Up to the index's first growth (count * 4 >= 4095 * 3) with growth
	 * failing: inserts go on into the old index. */
	seam_map_fail_after(-1);
	for (uint32_t i = 1; i < 3071; i++) {
		len = key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1;
	}
	expect_eq_u64(bad, 0, "3071 keys");
	seam_map_fail_after(0);
	for (uint32_t i = 3071; i < 4000; i++) {
		len = key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1;
	}
	expect_eq_u64(bad, 0, "the index cannot grow: the old one takes the keys");
	expect_eq_u64(t.index->mask, 4095, "not grown");
	seam_map_fail_after(-1);
	len = key_of(4000, key);
	expect_eq_u64(hp_intern_put(&t, key, len), 4001, "memory back");
	expect_eq_u64(t.index->mask, 8191, "grown");
	for (uint32_t i = 0; i <= 4000; i++)
		bad += !key_is(&t, i + 1, i);
	expect_eq_u64(bad, 0, "every key after the growth");
	seam_restore();
}

/* The index doubles at three quarters full, and the old one's slots are
 * given back to the kernel at once: past its first page (the header a
 * late reader reads) it reads as empty slots, costs no memory, and every
 * key is still found through the new index. */
HP_TEST(intern_old_index_released)
{
	struct hp_intern t;
	const struct hp_intern_index *old;
	uint64_t key[8];
	uint32_t len, bad = 0, before = 0, after = 0;
	size_t first_page_slots = (hp_os_page_size() - sizeof *old) / sizeof *old->slots;

	expect_eq_u64(hp_intern_init(&t, 1u << 20, 1u << 24), 0, "init");
	old = t.index;
	for (uint32_t i = 0; i < 3071; i++) {
		len = key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1;
	}
	for (uint32_t i = first_page_slots; i <= old->mask; i++)
		before += old->slots[i] != 0;
	expect_true(t.index == old && before > 2000, "3071 keys in the first index, most past its first page");
	len = key_of(3071, key);
	bad += hp_intern_put(&t, key, len) != 3072;
	expect_true(t.index != old && t.index->mask == 8191, "the next one doubles it");
	expect_eq_u64(old->mask, 4095, "the old header still reads");
	for (uint32_t i = first_page_slots; i <= old->mask; i++)
		after += old->slots[i] != 0;
	expect_eq_u64(after, 0, "the old slots past the first page read empty");
	for (uint32_t i = 0; i < 3072; i++) {
		len = key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1 || !key_is(&t, i + 1, i);
	}
	expect_eq_u64(bad, 0, "every key keeps its id");
	expect_eq_u64(hp_intern_count(&t), 3073, "nothing added twice");
	expect_eq_u64(hp_intern_bytes(&t),
		      sizeof *old + 8192 * sizeof *old->slots + hp_os_page_size() +
			      3073 * sizeof(struct hp_intern_entry) + /* ids 0 .. 3072 */
			      t.used_words * sizeof(uint64_t),
		      "its bytes: the new index, the old one's first page, entries, keys");
}

/* The minor faults of one write over every byte of fresh memory of
 * bytes: a fault a page in a plain build; under ThreadSanitizer also those
 * of the shadow pages its writes touch (some 9 a page), which the growth
 * below takes as well. */
static uint64_t faults_to_fill(size_t bytes)
{
	struct rusage ru;
	uint64_t before;
	void *p = hp_os_map(bytes);

	if (!p)
		return 0;
	getrusage(RUSAGE_SELF, &ru);
	before = (uint64_t)ru.ru_minflt;
	memset(p, 1, bytes);
	getrusage(RUSAGE_SELF, &ru);
	hp_os_unmap(p, bytes);
	return (uint64_t)ru.ru_minflt - before;
}

/* The index's growth: the rehash reads each slot of the new index before it
 * writes it, which in fresh anonymous memory takes two faults a page (the
 * zero page, then its copy) unless the pages are backed first
 * (hp_os_populate): the growth to 2^20 slots (4 MiB, 1,024 pages) takes
 * about one fault a page, 2,048 and more without; against the faults of
 * filling as many fresh pages once (faults_to_fill: 1,024 in a plain
 * build, ~9,200 under ThreadSanitizer, where a bound of pages alone
 * failed for the sanitizer's shadow pages). */
HP_TEST(intern_growth_faults_once_a_page)
{
	struct hp_intern t;
	struct rusage ru;
	uint64_t key[1], before, faults, once;
	uint32_t n = (1u << 19) / 4 * 3 - 1, bad = 0;
	size_t pages = ((size_t)1 << 20) * sizeof(uint32_t) / hp_os_page_size();

	if (!expect_eq_u64(hp_intern_init(&t, 1u << 21, 1u << 24), 0, "init"))
		return;
	for (uint32_t i = 0; i < n; i++) {
		key[0] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
		bad += hp_intern_put(&t, key, 1) != i + 1;
	}
	expect_eq_u64(t.index->mask, (1u << 19) - 1, "2^19 slots, three quarters full");
	getrusage(RUSAGE_SELF, &ru);
	before = (uint64_t)ru.ru_minflt;
	key[0] = (uint64_t)n * 0x9e3779b97f4a7c15ULL;
	bad += hp_intern_put(&t, key, 1) != n + 1;
	getrusage(RUSAGE_SELF, &ru);
	faults = (uint64_t)ru.ru_minflt - before;
	expect_eq_u64(t.index->mask, (1u << 20) - 1, "the next key doubles it");
	expect_eq_u64(bad, 0, "every key its id");
	once = faults_to_fill(pages * hp_os_page_size());
	printf("  growth to 2^20 slots: %llu faults for %zu pages (filling them once: %llu)\n",
	       (unsigned long long)faults, pages, (unsigned long long)once);
	expect_true(once >= pages, "filling the pages faults each at least once");
	expect_true(faults <= once + once / 8, "about one fault a page of the new index");
}

/* Many threads: each interns the same NKEYS keys, starting at its own
 * offset, so that every key is raced for; each checks every key it got
 * against hp_intern_key, lock-free, while others insert and the index grows. */
/* Chained key i (a stack-like key): 1 + i % 40 words; the first
 * HP_INTERN_HEAD_WORDS name i, the rest are one of five "outer" runs,
 * numbered from the key's end (as the outer frames of stacks of different
 * depths are), so that keys share their segments. */
static uint32_t chained_key_of(uint32_t i, uint64_t *key)
{
	uint32_t len = 1 + i % 40;
	for (uint32_t w = 0; w < len; w++)
		key[w] = w < HP_INTERN_HEAD_WORDS ? (uint64_t)i * 0x9e3779b97f4a7c15ULL + w
						  : 0x55d0e4a00000ULL + (i % 5) * 4096 + (len - 1 - w);
	return len;
}

static int chained_key_is(const struct hp_intern *t, uint32_t id, uint32_t i)
{
	uint64_t want[40], got_key[HP_INTERN_MAX_KEY_WORDS];
	uint32_t wlen = chained_key_of(i, want);
	return hp_intern_copy(t, id, got_key) == wlen &&
	       memcmp(got_key, want, wlen * sizeof *want) == 0 && hp_intern_equal(t, id, want, wlen);
}

/* A table of chained keys (intern.h): keys of 1 to 40 words, the head
 * and segment boundaries among them, read back exactly (hp_intern_copy)
 * and equal to themselves only: not to a key one word shorter, nor to one
 * with any single word changed, inner or outer; the words past the heads
 * stored once per distinct tail: a key's length fixes its run (i % 40
 * fixes i % 5), so the 2,000 keys have at most 40 distinct tails, each a
 * first segment and at most two full ones, 120 segments at most. */
HP_TEST(intern_chained_keys)
{
	static struct hp_intern t, tails;
	uint64_t key[40];
	uint32_t bad = 0, wrong = 0, len;

	expect_eq_u64(hp_intern_init(&tails, 1u << 12, 1u << 16), 0, "init tails");
	expect_eq_u64(hp_intern_init_chained(&t, 1u << 12, 1u << 16, &tails), 0, "init");
	for (uint32_t i = 0; i < 2000; i++) {
		len = chained_key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1;
	}
	expect_eq_u64(bad, 0, "2000 keys: 2000 ids");
	for (uint32_t i = 0; i < 2000; i++) {
		len = chained_key_of(i, key);
		bad += hp_intern_put(&t, key, len) != i + 1 || !chained_key_is(&t, i + 1, i);
		wrong += len > 1 && hp_intern_equal(&t, i + 1, key, len - 1);
		for (uint32_t w = 0; w < len; w++) {
			key[w] ^= 1;
			wrong += hp_intern_equal(&t, i + 1, key, len);
			key[w] ^= 1;
		}
	}
	expect_eq_u64(bad, 0, "each found again, read back exactly");
	expect_eq_u64(wrong, 0, "equal to no other key");
	printf("  %u segments for 2000 keys\n", hp_intern_count(&tails) - 1);
	expect_true(hp_intern_count(&tails) - 1 <= 120, "tails shared across keys");
	expect_true(hp_intern_bytes(&t) <= 2000 * (16 + 8 * (HP_INTERN_HEAD_WORDS + 1)) + (16u << 10),
		    "a key keeps its head and one word");
}

#define THREADS 8
#define NKEYS 30000u

static struct hp_intern shared;
static uint32_t got[THREADS][NKEYS];

static void *interner(void *arg)
{
	uintptr_t n = (uintptr_t)arg;
	uint64_t key[8];
	uint32_t bad = 0;

	for (uint32_t j = 0; j < NKEYS; j++) {
		uint32_t i = (uint32_t)((j + n * (NKEYS / THREADS)) % NKEYS);
		uint32_t len = key_of(i, key), id = hp_intern_put(&shared, key, len);
		got[n][i] = id;
		bad += !id || id >= hp_intern_count(&shared) || !key_is(&shared, id, i);
	}
	return (void *)(uintptr_t)bad;
}

/* The same with chained keys: 8 threads adding keys that share their
 * segments, each id's key read back whole (hp_intern_copy, through the
 * chain of segments another thread may have just added) and equal. */
static struct hp_intern shared_tails;

static void *chained_interner(void *arg)
{
	uintptr_t n = (uintptr_t)arg;
	uint64_t key[40];
	uint32_t bad = 0;

	for (uint32_t j = 0; j < NKEYS; j++) {
		uint32_t i = (uint32_t)((j + n * (NKEYS / THREADS)) % NKEYS);
		uint32_t len = chained_key_of(i, key), id = hp_intern_put(&shared, key, len);
		got[n][i] = id;
		bad += !id || id >= hp_intern_count(&shared) || !chained_key_is(&shared, id, i);
	}
	return (void *)(uintptr_t)bad;
}

HP_TEST(intern_chained_threads)
{
	pthread_t th[THREADS];
	uint64_t bad = 0;
	uint8_t *seen = calloc(NKEYS + 1, 1);

	expect_eq_u64(hp_intern_init(&shared_tails, 1u << 20, 1u << 24), 0, "init tails");
	expect_eq_u64(hp_intern_init_chained(&shared, 1u << 20, 1u << 24, &shared_tails), 0,
		      "init");
	for (uintptr_t n = 0; n < THREADS; n++)
		pthread_create(&th[n], NULL, chained_interner, (void *)n);
	for (uintptr_t n = 0; n < THREADS; n++) {
		void *r;
		pthread_join(th[n], &r);
		bad += (uintptr_t)r;
	}
	expect_eq_u64(bad, 0, "every id read back its key while others inserted");
	expect_eq_u64(hp_intern_count(&shared), NKEYS + 1, "each key added exactly once");
	for (uint32_t i = 0; i < NKEYS; i++) {
		for (int n = 1; n < THREADS; n++)
			bad += got[n][i] != got[0][i];
		bad += seen[got[0][i]]++ != 0;
	}
	expect_eq_u64(bad, 0, "every thread got the same id for a key, no id twice");
	free(seen);
}

HP_TEST(intern_threads)
{
	pthread_t th[THREADS];
	uint64_t bad = 0;
	uint8_t *seen = calloc(NKEYS + 1, 1);

	expect_eq_u64(hp_intern_init(&shared, 1u << 20, 1u << 24), 0, "init");
	for (uintptr_t n = 0; n < THREADS; n++)
		pthread_create(&th[n], NULL, interner, (void *)n);
	for (uintptr_t n = 0; n < THREADS; n++) {
		void *r;
		pthread_join(th[n], &r);
		bad += (uintptr_t)r;
	}
	expect_eq_u64(bad, 0, "every id read back its key while others inserted");
	expect_eq_u64(hp_intern_count(&shared), NKEYS + 1, "each key added exactly once");
	for (uint32_t i = 0; i < NKEYS; i++) {
		for (int n = 1; n < THREADS; n++)
			bad += got[n][i] != got[0][i];
		bad += seen[got[0][i]]++ != 0;
	}
	expect_eq_u64(bad, 0, "every thread got the same id for a key, no id twice");
	free(seen);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
