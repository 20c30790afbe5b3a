/*
 * test_rec_live.c - the live register (src/recorder/live.h): insert and
 * remove against a reference model on one shard whose addresses all start
 * their probes in a few slots across the table's end, so that every
 * backward-shift delete moves entries, also cyclically; growth; the
 * sampled-mode filter; mmap failure through the os.c seam; 8 threads
 * inserting and removing each other's blocks, checked exactly; and
 * hp_live_remove from a signal handler. Runs under ThreadSanitizer with
 * `make check SAN=thread`.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/time.h>

#include "../../src/common/hash.h"
#include "../../src/format/records.h"
#include "../../src/recorder/live.h"
#include "../../src/recorder/os.h"
#include "../harness/harness.h"
#include "rec_seam.h"

static uint64_t live_blocks(void)
{
	uint64_t blocks, bytes;
	hp_live_usage(&blocks, &bytes);
	return blocks;
}

/* A fresh register (the old one is left mapped): full mode (0) or
 * sampled with a filter of 2^filter_shift-byte granules. */
static void fresh(unsigned filter_shift)
{
	expect_eq_u64(hp_live_init(filter_shift), 0, "init");
}

/* n addresses (16-byte aligned) in shard 7 whose home slot in a 256-slot
 * table is one of 252..255, 0..3: the cluster wraps around the end. */
static void clustered(uintptr_t *out, unsigned n)
{
	uintptr_t a = 0x10000;
	for (unsigned k = 0; k < n; a += 16) {
		uint64_t h = hp_live_hash(a);
		uint32_t home = hp_live_home(h, 256);
		if (h >> 56 == 7 && (home >= 252 || home < 4))
			out[k++] = a;
	}
}

/* Locks taken with a plain store while the process has one thread
 * (spin.h) are locks all the same: a signal handler's remove meets the
 * shard held and gets -EAGAIN; and after a thread was created they are
 * taken with the atomic exchange, with the same results. First in this
 * file: no test has created a thread yet when it runs. */
static void *nothing(void *arg)
{
	return arg;
}

static volatile sig_atomic_t st_result;

static void st_remove(int sig)
{
	struct hp_live_block b;
	(void)sig;
	st_result = hp_live_remove(0x4440, &b, 0);
}

static void single_threaded_round(const char *mode)
{
	struct hp_live_block b;

	expect_eq_u64(hp_live_insert(0x4440, 5, 50, &b), 0, mode);
	hp_live_lock_all();
	raise(SIGUSR1);
	hp_live_unlock_all();
	expect_eq_u64((uint64_t)(int64_t)st_result, (uint64_t)-EAGAIN, "held: -EAGAIN");
	raise(SIGUSR1);
	expect_eq_u64(st_result, 1, "released: removed");
	expect_eq_u64(live_blocks(), 0, "empty");
}

HP_TEST(live_single_threaded_locks)
{
	struct sigaction sa, old;
	pthread_t th;

	fresh(0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = st_remove;
	sigaction(SIGUSR1, &sa, &old);
	if (__libc_single_threaded) {
		expect_eq_u64(hp_os_single_threaded(), 1, "one thread: plain-store locks");
		single_threaded_round("one thread");
	}
	pthread_create(&th, NULL, nothing, NULL);
	pthread_join(th, NULL);
	expect_eq_u64(hp_os_single_threaded(), 0, "a thread was created: atomic locks");
	single_threaded_round("threads");
	sigaction(SIGUSR1, &old, NULL);
}

HP_TEST(live_backward_shift_model)
{
	enum { N = 48 };
	uintptr_t addr[N];
	uint64_t size[N];
	int in[N] = {0};
	uint64_t rng = 88172645463325252ull, bad = 0, count = 0;

	fresh(0);
	clustered(addr, N);
	for (int op = 0; op < 50000; op++) {
		struct hp_live_block b = {0, 0, 0};
		unsigned k;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		k = (unsigned)(rng % N);
		if (in[k]) {
			bad += hp_live_remove(addr[k], &b, 1) != 1 || b.size != size[k] ||
			       b.bucket != k + 1;
			in[k] = 0;
			count--;
		} else {
			size[k] = rng >> 40;
			bad += hp_live_insert(addr[k], k + 1, size[k], &b) != 0;
			in[k] = 1;
			count++;
		}
		if (op % 97 == 0) { /* every member present with its values, others absent */
			for (unsigned j = 0; j < N; j++) {
				if (in[j]) {
					bad += hp_live_insert(addr[j], j + 1, size[j], &b) != 1 ||
					       b.size != size[j] || b.bucket != j + 1;
				} else {
					bad += hp_live_remove(addr[j], &b, 1) != 0;
				}
			}
			bad += live_blocks() != count;
		}
	}
	expect_eq_u64(bad, 0, "the register agrees with the model after every delete");
	for (unsigned j = 0; j < N; j++) {
		struct hp_live_block b;
		if (in[j])
			bad += hp_live_remove(addr[j], &b, 1) != 1;
	}
	expect_eq_u64(bad, 0, "all removed");
	expect_eq_u64(live_blocks(), 0, "empty");
}

/* The probes of linear probing when n addresses of one region go into
 * the 16 shards of their group (the top 4 bits of the hash) at their home
 * slots (hp_live_home) in tables 3/4 full, inserted in order: what each
 * insert pays in the register. */
static double mean_probes(const uintptr_t *addr, unsigned n)
{
	enum { SHARDS = 16 };
	uint32_t count[SHARDS] = {0}, slots[SHARDS];
	uintptr_t *table[SHARDS];
	uint64_t probes = 0;

	for (unsigned i = 0; i < n; i++)
		count[hp_live_hash(addr[i]) >> 60]++;
	for (unsigned s = 0; s < SHARDS; s++) {
		slots[s] = count[s] / 3 * 4 + 4;
		table[s] = calloc(slots[s], sizeof *table[s]);
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t h = hp_live_hash(addr[i]);
		unsigned s = (unsigned)(h >> 60);
		uint32_t j = hp_live_home(h, slots[s]);
		while (table[s][j]) {
			j = j + 1 == slots[s] ? 0 : j + 1;
			probes++;
		}
		table[s][j] = addr[i];
	}
	for (unsigned s = 0; s < SHARDS; s++)
		free(table[s]);
	return (double)probes / n;
}

/* A program that allocates blocks one after another fills the register
 * with an arithmetic-like run of addresses: the hash spreads them as it
 * spreads addresses at random. glibc's chunks of 32 to 96 bytes (sizes 16
 * to 79, as bench/analyzer/manystacks makes them) took 200 probes an
 * insert with the address times the golden ratio (its 16-aligned
 * addresses made the multiplier 16 times it); strides of 16, 32, 48 and
 * 4,112 bytes (glibc), of 4,096 (page-aligned blocks), of 8 and 24
 * (8-aligned allocators) and random addresses each take a few at 3/4
 * full. (A hash that kept a page's blocks in neighbouring slots, the
 * page's hash plus (addr >> 4) & 255, took 56 probes at a stride of 16,
 * 232 at 8 and 6.5 for the runs of 32 to 96 bytes, in this model.) */
HP_TEST(live_hash_spreads_allocation_runs)
{
	enum { N = 1 << 16 };
	static uintptr_t addr[N];
	static const unsigned strides[] = {16, 32, 48, 4112, 4096, 8, 24};
	uintptr_t a = 0x5555555a0010;
	char what[80];
	double p;

	for (unsigned i = 0; i < N; i++) {
		size_t chunk = (16 + (i & 63) + 8 + 15) / 16 * 16;
		addr[i] = a;
		a += chunk < 32 ? 32 : chunk;
	}
	p = mean_probes(addr, N);
	snprintf(what, sizeof what, "chunks of 32 to 96 bytes in a row: %.1f probes an insert", p);
	expect_true(p < 4, what);
	for (unsigned k = 0; k < sizeof strides / sizeof *strides; k++) {
		for (unsigned i = 0; i < N; i++)
			addr[i] = 0x7f0000000000 + (uintptr_t)strides[k] * i;
		p = mean_probes(addr, N);
		snprintf(what, sizeof what, "a stride of %u bytes: %.1f probes an insert", strides[k],
			 p);
		expect_true(p < 4, what);
	}
	for (unsigned i = 0; i < N; i++) /* distinct: 16 times an odd-multiplied index */
		addr[i] = 0x555555000000 + ((uintptr_t)i * 0x9e3779b1u % (1u << 24)) * 16;
	p = mean_probes(addr, N);
	snprintf(what, sizeof what, "scattered addresses: %.1f probes an insert", p);
	expect_true(p < 4, what);
}

HP_TEST(live_stale_and_growth)
{
	struct hp_live_block b;
	uint64_t bad = 0, bytes, blocks;

	fresh(0);
	expect_eq_u64(hp_live_insert(0x1000, 3, 100, &b), 0, "new");
	expect_eq_u64(hp_live_insert(0x1000, 4, 200, &b), 1, "again: its free was not seen");
	expect_eq_u64(b.bucket * 1000 + b.size, 3100, "the stale block comes back");
	expect_eq_u64(hp_live_remove(0x1000, &b, 1), 1, "removed");
	expect_eq_u64(b.bucket * 1000 + b.size, 4200, "the new values");
	expect_eq_u64(hp_live_remove(0x1000, &b, 1), 0, "gone");
	/* 100000 blocks: every shard grows several times. */
	for (uintptr_t a = 0; a < 100000; a++)
		bad += hp_live_insert(0x100000 + a * 32, (uint32_t)a, a, &b) != 0;
	hp_live_usage(&blocks, &bytes);
	expect_eq_u64(blocks, 100000, "blocks");
	expect_true(bytes >= 100000 * 16 * 4 / 3 && bytes <= 100000 * 16 * 8 / 3 + 256 * 64,
		    "16-byte entries, tables between 3/8 and 3/4 full");
	for (uintptr_t a = 0; a < 100000; a++)
		bad += hp_live_remove(0x100000 + a * 32, &b, 1) != 1 || b.size != a ||
		       b.bucket != (uint32_t)a;
	expect_eq_u64(bad, 0, "each found once with its values");
	expect_eq_u64(live_blocks(), 0, "empty");
}

/* hp_live_walk_reading's fn: reads the block's first word (as attr.c's
 * scan for vtables), counts it by the word, drops every block whose word
 * is a multiple of 3 and retags the others with bucket word + 1. */
struct reading {
	uint64_t seen, sum, bad;
};

static int read_block(void *arg, uintptr_t addr, struct hp_live_block *blk)
{
	struct reading *r = arg;
	uint64_t w = *(const uint64_t *)addr;

	r->seen++;
	r->sum += w;
	r->bad += blk->bucket != (uint32_t)w && blk->bucket != (uint32_t)w + 1;
	if (w % 3 == 0)
		return HP_LIVE_DROP;
	blk->bucket = (uint32_t)w + 1;
	return HP_LIVE_RETAG;
}

static int count_block(void *arg, uintptr_t addr, struct hp_live_block *blk)
{
	struct reading *r = arg;
	uint64_t w = *(const uint64_t *)addr;

	r->seen++;
	r->bad += w % 3 == 0 || blk->bucket != (uint32_t)w + 1;
	return HP_LIVE_KEEP;
}

/* hp_live_walk_reading (which prefetches the blocks ahead of fn) calls
 * fn on every block, whose memory it may read, and applies its answers
 * as hp_live_walk does: 20000 blocks, a third dropped, the rest retagged. */
HP_TEST(live_walk_reading_visits_every_block)
{
	enum { N = 20000 };
	uint64_t *mem = calloc(N, 64);
	struct hp_live_block b;
	struct reading r = {0}, after = {0};
	uint64_t bad = 0, kept = 0;

	fresh(0);
	for (uint64_t i = 0; i < N; i++) {
		mem[8 * i] = i;
		bad += hp_live_insert((uintptr_t)&mem[8 * i], (uint32_t)i, 64, &b) != 0;
		kept += i % 3 != 0;
	}
	expect_eq_u64(bad, 0, "inserted");
	hp_live_walk_reading(read_block, &r);
	/* (a block may be seen twice: a wrapped entry, live.h) */
	expect_true(r.seen >= N && r.seen <= N + 64, "every block seen, a few twice at most");
	expect_eq_u64(r.bad, 0, "each with its bucket");
	expect_eq_u64(live_blocks(), kept, "the dropped ones are gone");
	hp_live_walk(count_block, &after);
	expect_eq_u64(after.seen, kept, "the rest are there");
	expect_eq_u64(after.bad, 0, "retagged, none dropped left");
	for (uint64_t i = 0; i < N; i++)
		if (i % 3)
			bad += hp_live_remove((uintptr_t)&mem[8 * i], &b, 1) != 1;
	expect_eq_u64(bad, 0, "removed");
	free(mem);
}

/* The budget: with a million blocks live the register takes at
 * most 32 bytes per block (16-byte entries, tables grown by a quarter at
 * 3/4 full: at least 3/5 full once large). Doubling 24-byte entries took
 * 50 bytes here (tables just past a doubling, under half full). */
HP_TEST(live_million_blocks_bytes)
{
	enum { N = 1000000 };
	struct hp_live_block b;
	uint64_t bad = 0, bytes, blocks;

	fresh(0);
	for (uintptr_t a = 0; a < N; a++)
		bad += hp_live_insert(0x7f0000000000 + a * 48, (uint32_t)(a & 0x3fffff), a, &b) != 0;
	hp_live_usage(&blocks, &bytes);
	expect_eq_u64(blocks, N, "blocks");
	printf("  register: %.1f bytes per live block\n", (double)bytes / N);
	expect_true(bytes <= 27ull * N + 256 * 64, "at most 27 bytes per live block, shards included");
	expect_true(bytes >= 16ull * N * 4 / 3, "tables at most 3/4 full");
	for (uintptr_t a = 0; a < N; a++)
		bad += hp_live_remove(0x7f0000000000 + a * 48, &b, 1) != 1 || b.size != a ||
		       b.bucket != (uint32_t)(a & 0x3fffff);
	expect_eq_u64(bad, 0, "each found once with its values");
	expect_eq_u64(live_blocks(), 0, "empty");
}

/* Sizes too large for an entry's size field (64 MiB less 1,024 bytes and
 * up, since the birth stamp took 16 of its bits) come back exact from the
 * big-block table, also as stale blocks; HP_LIVE_BIG_BLOCKS of them can
 * be live at once, the next is refused and nothing changes. */
/* A block's birth stamp: the inserts since, in units of
 * 2^HP_LIVE_AGE_SHIFT, within one unit; a RETAG keeps it. */
HP_TEST(live_ages)
{
	const uint64_t unit = UINT64_C(1) << HP_LIVE_AGE_SHIFT;
	struct hp_live_block b;

	fresh(0);
	expect_eq_u64(hp_live_insert(0x5000, 3, 40, &b), 0, "a block");
	for (uintptr_t a = 0; a < 10 * unit; a++)
		hp_live_insert(0x600000 + a * 16, 4, 8, &b);
	expect_eq_u64(hp_live_remove(0x5000, &b, 1), 1, "found");
	expect_true(hp_live_age(b.born) == 10 * unit || hp_live_age(b.born) == 11 * unit,
		    "it lived through 10 units of inserts (11 when it was born late in one)");
	expect_eq_u64(b.size * 100 + b.bucket, 4003, "its size and bucket beside the stamp");
	expect_eq_u64(hp_live_life_class(b.born), hp_hist_life_class(hp_live_age(b.born)),
		      "its lifetime class, from the units, is the format's");
	expect_eq_u64(hp_live_insert(0x5000, 3, 40, &b), 0, "again");
	expect_eq_u64(hp_live_remove(0x5000, &b, 1), 1, "freed at once");
	expect_eq_u64(hp_live_age(b.born), 0, "no insert in between: age 0");
	for (uintptr_t a = 0; a < 10 * unit; a++)
		hp_live_remove(0x600000 + a * 16, &b, 1);
}

HP_TEST(live_big_sizes)
{
	const uint64_t field_max = (UINT64_C(1) << HP_LIVE_SIZE_BITS) - 1;
	const uint64_t nbig = HP_LIVE_BIG_BLOCKS;
	struct hp_live_block b;
	uint64_t bad = 0;

	fresh(0);
	expect_eq_u64(hp_live_insert(0x1000, 7, field_max - nbig, &b), 0, "the largest packed size");
	expect_eq_u64(hp_live_insert(0x2000, 8, field_max - nbig + 1, &b), 0, "the smallest big size");
	expect_eq_u64(hp_live_insert(0x3000, 9, UINT64_MAX, &b), 0, "the largest size");
	expect_eq_u64(hp_live_insert(0x2000, 10, 5, &b), 1, "a big block's free unseen");
	expect_eq_u64(b.size, field_max - nbig + 1, "its size comes back exact");
	expect_eq_u64(b.bucket, 8, "and its bucket");
	expect_eq_u64(hp_live_insert(0x2000, 11, UINT64_MAX - 1, &b), 1, "small, then big again");
	expect_eq_u64(b.size, 5, "the small one's size");
	for (uintptr_t a = 0; a < nbig - 2; a++)
		bad += hp_live_insert(0x100000 + a * 16, (uint32_t)a, (UINT64_C(1) << 50) + a, &b) != 0;
	expect_eq_u64(bad, 0, "HP_LIVE_BIG_BLOCKS big blocks live");
	expect_eq_u64(hp_live_insert(0x9000, 1, UINT64_MAX, &b), (uint64_t)-ENOMEM,
		      "one more is refused");
	expect_eq_u64(hp_live_insert(0x1000, 1, UINT64_MAX, &b), (uint64_t)-ENOMEM,
		      "also over a small stale block");
	expect_eq_u64(hp_live_remove(0x9000, &b, 1), 0, "nothing added");
	expect_eq_u64(hp_live_remove(0x1000, &b, 1), 1, "the small block stayed");
	expect_eq_u64(b.size * 100 + b.bucket, (field_max - nbig) * 100 + 7, "unchanged");
	expect_eq_u64(hp_live_remove(0x3000, &b, 1), 1, "a big block freed");
	expect_eq_u64(b.size, UINT64_MAX, "its size");
	expect_eq_u64(hp_live_insert(0x9000, 12, UINT64_MAX - 2, &b), 0, "its slot taken again");
	expect_eq_u64(hp_live_remove(0x2000, &b, 1), 1, "removed");
	expect_eq_u64(b.size * 100 + b.bucket, (UINT64_MAX - 1) * 100 + 11, "big, exact");
	expect_eq_u64(hp_live_remove(0x9000, &b, 1), 1, "removed");
	expect_eq_u64(b.size, UINT64_MAX - 2, "big, exact");
	for (uintptr_t a = 0; a < nbig - 2; a++)
		bad += hp_live_remove(0x100000 + a * 16, &b, 1) != 1 ||
		       b.size != (UINT64_C(1) << 50) + a || b.bucket != a;
	expect_eq_u64(bad, 0, "each big block with its size and bucket");
	expect_eq_u64(live_blocks(), 0, "empty");
}

HP_TEST(live_filter)
{
	struct hp_live_block b;

	fresh(0);
	expect_eq_u64(hp_live_maybe(0x5550), 1, "full mode: every address maybe");
	expect_eq_u64(hp_live_maybe(0x123456789ab0), 1, "full mode: every address maybe");
	fresh(4);
	expect_eq_u64(hp_live_filter_geom.mask, (1u << HP_LIVE_FILTER_BITS) - 1,
		      "sampled mode: the whole filter");
	hp_live_filter_pin(0x9990, 0x9990 + 64);
	expect_eq_u64(hp_live_maybe(0x9990) && hp_live_maybe(0x99c0), 1, "pinned: maybe");
	expect_eq_u64(hp_live_maybe(0x99d0), 0, "past the pinned range");
	expect_eq_u64(*hp_live_filter_cell(0x99c0), 255, "pinned cells saturated");
	expect_eq_u64(hp_live_maybe(0x5550), 0, "nothing there");
	hp_live_insert(0x5550, 1, 8, &b);
	expect_eq_u64(hp_live_maybe(0x5550), 1, "maybe there");
	expect_eq_u64(hp_live_maybe(0x5550 + (4u << 20)), 1, "its alias 4 MiB on");
	expect_eq_u64(hp_live_maybe(0x5560), 0, "not the next granule");
	hp_live_remove(0x5550, &b, 1);
	expect_eq_u64(hp_live_maybe(0x5550), 0, "removed");
	for (int i = 0; i < 300; i++) /* 300 blocks in one cell: saturates at 255 */
		hp_live_insert(0x7770 + ((uintptr_t)i << 22), 1, 8, &b);
	for (int i = 0; i < 300; i++)
		hp_live_remove(0x7770 + ((uintptr_t)i << 22), &b, 1);
	expect_eq_u64(*hp_live_filter_cell(0x7770), 255, "a saturated cell stays set");
	expect_eq_u64(live_blocks(), 0, "empty");

	/* Page granules: a block makes its whole page "maybe" (a false
	 * positive costs a lookup that finds nothing), not the next page;
	 * aliases 2^30 on; two blocks in one page count twice. */
	fresh(12);
	expect_eq_u64(hp_live_maybe(0x20010), 0, "page granule: nothing there");
	hp_live_insert(0x20010, 1, 8, &b);
	hp_live_insert(0x20ff0, 1, 8, &b);
	expect_eq_u64(hp_live_maybe(0x20010) && hp_live_maybe(0x20ff0) && hp_live_maybe(0x20800), 1,
		      "the page's every address maybe");
	expect_eq_u64(hp_live_maybe(0x21000) || hp_live_maybe(0x1fff0), 0, "not the pages beside");
	expect_eq_u64(hp_live_maybe(0x20010 + (1ull << 30)), 1, "its alias 1 GiB on");
	expect_eq_u64(hp_live_remove(0x20800, &b, 1), 0, "a false positive: the register has nothing");
	hp_live_remove(0x20010, &b, 1);
	expect_eq_u64(hp_live_maybe(0x20800), 1, "one block left in the page");
	hp_live_remove(0x20ff0, &b, 1);
	expect_eq_u64(hp_live_maybe(0x20800), 0, "both removed");
	hp_live_filter_pin(0x30010, 0x30010 + 8192);
	expect_eq_u64(hp_live_maybe(0x30000) && hp_live_maybe(0x32000) && !hp_live_maybe(0x33000), 1,
		      "pinned: the pages the range touches");
	fresh(0);

	/* The granule follows the rate: rate/128, 16 B..4 KiB. */
	expect_eq_u64(hp_live_filter_shift_for(1), 0, "full mode: no filter");
	expect_eq_u64(hp_live_filter_shift_for(512), 4, "small rates: 16 B");
	expect_eq_u64(hp_live_filter_shift_for(4096), 5, "4 KiB: 32 B");
	expect_eq_u64(hp_live_filter_shift_for(65536), 9, "64 KiB: 512 B");
	expect_eq_u64(hp_live_filter_shift_for(524288), 12, "512 KiB: a page");
	expect_eq_u64(hp_live_filter_shift_for(1ull << 30), 12, "at most a page");
}

HP_TEST(live_mmap_failure)
{
	struct hp_live_block b;
	uintptr_t addr[200];

	fresh(0);
	seam_map_fail_after(0);
	expect_eq_u64(hp_live_insert(0x1000, 1, 1, &b), (uint64_t)-ENOMEM,
		      "a shard's first table cannot be mapped");
	expect_eq_u64(live_blocks(), 0, "nothing added");
	seam_map_fail_after(1);
	clustered(addr, 200);
	for (int i = 0; i < 192; i++) /* grows at the 193rd of 256 slots */
		expect_eq_u64(hp_live_insert(addr[i], 1, 1, &b), 0, "under 3/4 full");
	expect_eq_u64(hp_live_insert(addr[192], 1, 1, &b), 0,
		      "cannot grow, but there is room: added");
	seam_map_fail_after(-1);
	expect_eq_u64(hp_live_insert(addr[193], 1, 1, &b), 0, "grown");
	for (int i = 0; i < 194; i++)
		expect_eq_u64(hp_live_remove(addr[i], &b, 1), 1, "every block after the growth");
	seam_restore();
}

/* 8 threads: each inserts its own blocks, removes half, then removes the
 * other half of its neighbour's while the neighbour does the same to its
 * own neighbour; and pairs hand blocks over (one inserts, another spins
 * until its remove finds it). */
#define THREADS 8
#define PER_THREAD 20000u

static pthread_barrier_t barrier;

static uintptr_t block_addr(uintptr_t thread, uintptr_t i)
{
	return (thread + 1) << 36 | i << 4;
}

static void *churner(void *arg)
{
	uintptr_t n = (uintptr_t)arg, next = (n + 1) % THREADS;
	struct hp_live_block b;
	uint64_t bad = 0;

	for (uintptr_t i = 0; i < PER_THREAD; i++)
		bad += hp_live_insert(block_addr(n, i), (uint32_t)n, i, &b) != 0;
	for (uintptr_t i = 1; i < PER_THREAD; i += 2)
		bad += hp_live_remove(block_addr(n, i), &b, 1) != 1 || b.size != i;
	pthread_barrier_wait(&barrier);
	for (uintptr_t i = 0; i < PER_THREAD; i += 2)
		bad += hp_live_remove(block_addr(next, i), &b, 1) != 1 || b.size != i ||
		       b.bucket != next;
	pthread_barrier_wait(&barrier);
	/* Hand-over: even threads insert, odd ones take. */
	for (uintptr_t i = 0; i < 2000; i++) {
		uintptr_t a = block_addr(n & ~(uintptr_t)1, PER_THREAD + i);
		if (n & 1) {
			while (hp_live_remove(a, &b, 1) == 0)
				;
			bad += b.size != i;
		} else {
			bad += hp_live_insert(a, 9, i, &b) != 0;
		}
	}
	return (void *)(uintptr_t)bad;
}

/* The writer reads the register's usage while others insert (its
 * snapshot's recorder_bytes). */
static int stop_usage;

static void *usage_reader(void *arg)
{
	uint64_t blocks, bytes, bad = 0;
	(void)arg;
	while (!__atomic_load_n(&stop_usage, __ATOMIC_ACQUIRE)) {
		hp_live_usage(&blocks, &bytes);
		bad += blocks > THREADS * (PER_THREAD + 2000);
	}
	return (void *)(uintptr_t)bad;
}

HP_TEST(live_threads)
{
	pthread_t th[THREADS], rd;
	uint64_t bad = 0;
	void *r;

	fresh(0);
	pthread_barrier_init(&barrier, NULL, THREADS);
	pthread_create(&rd, NULL, usage_reader, NULL);
	for (uintptr_t n = 0; n < THREADS; n++)
		pthread_create(&th[n], NULL, churner, (void *)n);
	for (uintptr_t n = 0; n < THREADS; n++) {
		pthread_join(th[n], &r);
		bad += (uintptr_t)r;
	}
	__atomic_store_n(&stop_usage, 1, __ATOMIC_RELEASE);
	pthread_join(rd, &r);
	bad += (uintptr_t)r;
	pthread_barrier_destroy(&barrier);
	expect_eq_u64(bad, 0, "every insert new, every remove found its block once");
	expect_eq_u64(live_blocks(), 0, "nothing left, nothing lost");
}

/* A signal handler removes blocks with may_block 0. */
static volatile sig_atomic_t handler_result;
static uintptr_t handler_addr;

static void remove_in_handler(int sig)
{
	struct hp_live_block b;
	(void)sig;
	handler_result = hp_live_remove(handler_addr, &b, 0);
}

HP_TEST(live_remove_in_signal_handler)
{
	struct sigaction sa, old;
	struct hp_live_block b;

	fresh(0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = remove_in_handler;
	sigaction(SIGUSR1, &sa, &old);
	handler_addr = 0x4440;
	hp_live_insert(handler_addr, 5, 50, &b);

	/* The shard is held (as by the code the signal interrupted): the
	 * handler does not wait. */
	hp_live_lock_all();
	raise(SIGUSR1);
	hp_live_unlock_all();
	expect_eq_u64((uint64_t)(int64_t)handler_result, (uint64_t)-EAGAIN,
		      "with the shard held: -EAGAIN at once");
	expect_eq_u64(live_blocks(), 1, "the block stays");
	raise(SIGUSR1);
	expect_eq_u64(handler_result, 1, "free shard: removed");
	expect_eq_u64(live_blocks(), 0, "gone");
	sigaction(SIGUSR1, &old, NULL);
}

/* A timer signal lands in the middle of inserts and removes on the same
 * thread: the handler's remove either takes its block (1) or, when the
 * interrupted code holds that block's shard, returns -EAGAIN and the
 * block is taken later. Every block is taken exactly once. */
#define TIMED 4000u
static uintptr_t timed_addr[TIMED];
static unsigned timed_next;
static int timed_state[TIMED]; /* 1 taken by the handler, -1 deferred */
static unsigned handled, deferred;

static void on_timer(int sig)
{
	struct hp_live_block b;
	unsigned k = timed_next;
	(void)sig;
	if (k >= TIMED)
		return;
	int r = hp_live_remove(timed_addr[k], &b, 0);
	timed_state[k] = r == 1 ? 1 : r == -EAGAIN ? -1 : 99;
	timed_next = k + 1;
}

HP_TEST(live_remove_in_timer_handler)
{
	struct sigaction sa, old;
	struct itimerval tv = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
	struct hp_live_block b;
	uint64_t bad = 0;
	sigset_t alrm;

	fresh(0);
	for (unsigned k = 0; k < TIMED; k++) {
		timed_addr[k] = 0x7000000 + k * 16;
		hp_live_insert(timed_addr[k], 1, k, &b);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_timer;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, &old);
	setitimer(ITIMER_REAL, &tv, NULL);
	for (uintptr_t i = 0; __atomic_load_n(&timed_next, __ATOMIC_RELAXED) < TIMED; i++) {
		uintptr_t a = 0x9000000 + (i % 4096) * 16;
		bad += hp_live_insert(a, 2, i, &b) != 0;
		bad += hp_live_remove(a, &b, 1) != 1;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, NULL); /* a pending one: after the checks */
	for (unsigned k = 0; k < TIMED; k++) {
		if (timed_state[k] == 1) {
			handled++;
			bad += hp_live_remove(timed_addr[k], &b, 1) != 0;
		} else if (timed_state[k] == -1) {
			deferred++;
			bad += hp_live_remove(timed_addr[k], &b, 1) != 1 || b.size != k;
		} else {
			bad++;
		}
	}
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	sigaction(SIGALRM, &old, NULL);
	expect_eq_u64(bad, 0, "each block taken exactly once, by the handler or after -EAGAIN");
	expect_eq_u64(handled + deferred, TIMED, "every signal accounted for");
	expect_eq_u64(live_blocks(), 0, "nothing left");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
