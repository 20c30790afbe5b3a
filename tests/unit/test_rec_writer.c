/*
 * test_rec_writer.c - the capture writer (src/recorder/writer.h) driven
 * directly, its file read back by the analyzer's reader
 * (src/format/capture.c): exact figures; a disk that fills at every
 * offset of a snapshot, through the os.c seam (the record cut short is cut
 * off again, so the file stays whole, and the lost snapshots are counted);
 * mmap failing while a snapshot needs a larger buffer; and the regions of
 * the memory map (MAPS) of blocks this test allocates itself; and more new
 * stacks than one STACKS record holds, and more than 1 MiB of buckets,
 * written with mmap failing and the record buffers at their size at open.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../src/format/capture.h"
#include "../../src/format/decode.h"
#include "../../src/format/format.h"
#include "../../src/recorder/aggregate.h"
#include "../../src/recorder/live.h"
#include "../../src/recorder/modules.h"
#include "../../src/recorder/stacks.h"
#include "../../src/recorder/writer.h"
#include "../harness/harness.h"
#include "rec_seam.h"

static struct hp_config config;
static uint64_t allocs, alloc_bytes;

/* The recorder's tables, once, and a capture of the given name. */
static void open_capture(const char *name)
{
	static int done;

	if (!done) {
		config.start_ns = hp_os_now_ns();
		expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1) | hp_agg_init() | hp_live_init(0) |
				      hp_modules_init(&config),
			      0, "tables");
		done = 1;
	}
	memset(&config, 0, sizeof config);
	config.start_ns = hp_os_now_ns();
	config.sample_rate_bytes = 1;
	config.max_depth = 64;
	snprintf(config.output, sizeof config.output, "%s/%s", hp_test_tmp(), name);
	expect_eq_u64(hp_writer_open(&config, HP_ROLE_ROOT), 0, "open");
}

/* An allocation of size bytes at a stack of its own (frames f, f + 1). */
static void record(uint64_t f, uint64_t size)
{
	uint64_t frames[2] = {f, f + 1};
	uint32_t bucket = hp_agg_bucket(hp_stacks_intern(frames, 2), 0, 0, 0);
	hp_agg_alloc(bucket, size);
	allocs++;
	alloc_bytes += size;
}

static uint64_t file_size(void)
{
	struct stat st;
	return stat(config.output, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Loads the capture: 0 when it reads whole, without damage. */
static int load(struct hp_capture *cap)
{
	char err[256];
	memset(cap, 0, sizeof *cap);
	if (hp_capture_load(config.output, cap, err, sizeof err) < 0) {
		printf("  %s\n", err);
		return -1;
	}
	if (cap->ndamage)
		printf("  %s\n", cap->damage[0]);
	return cap->ndamage ? -1 : 0;
}

HP_TEST(writer_round_trip)
{
	struct hp_capture cap;
	const struct hp_cap_snapshot *s;

	open_capture("round.hpf");
	record(0x1000, 100);
	record(0x1000, 28);
	record(0x2000, 4000);
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "snapshot");
	if (load(&cap) < 0) {
		expect_true(0, "the reader reads it");
		return;
	}
	s = hp_capture_last(&cap);
	expect_eq_u64(cap.nsnapshots, 1, "one snapshot");
	expect_eq_u64(s->reason, HP_SNAP_API, "its reason");
	expect_eq_u64(s->alloc_count, allocs, "allocations");
	expect_eq_u64(s->alloc_bytes, alloc_bytes, "bytes");
	expect_eq_u64(s->peak_bytes, alloc_bytes, "the peak: nothing freed");
	expect_eq_u64(cap.nstacks, hp_stacks_count(), "every stack");
	expect_eq_u64(cap.stacks[1].frames[1], 0x1001, "frames");
	expect_eq_u64(cap.pid, (uint64_t)hp_os_getpid(), "META");
	expect_eq_u64(cap.file_bytes, file_size(), "read to the end");
	hp_capture_free(&cap);
	hp_writer_close();
}

/* The disk fills after k more bytes, for every k across a snapshot of
 * new stacks: each failed snapshot leaves the file whole (the reader sees
 * no damage), and the next full one counts the lost ones. */
HP_TEST(writer_disk_full_every_offset)
{
	struct hp_capture cap;
	uint64_t failures = 0, bad = 0, before;

	open_capture("full.hpf");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "a first snapshot");
	for (int64_t k = 0; k < 400; k += 3) {
		record(0x100000 + (uint64_t)k * 16, 10); /* a new stack each time */
		before = file_size();
		seam_disk_full_after(k);
		if (hp_writer_snapshot(HP_SNAP_API, 0, 0) != 0) {
			failures++;
			bad += file_size() > before + (uint64_t)k; /* never more than whole records */
		}
		seam_restore();
		if (load(&cap) < 0 || cap.file_bytes != file_size())
			bad++;
		hp_capture_free(&cap);
	}
	expect_true(failures > 100, "the disk was full for most budgets");
	expect_eq_u64(bad, 0, "after every failure the file reads whole, without damage");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "room again");
	if (load(&cap) == 0) {
		const struct hp_cap_snapshot *s = hp_capture_last(&cap);
		expect_eq_u64(s->lost_count[HP_LOST_WRITE_FAILED], failures,
			      "each lost snapshot counted");
		expect_eq_u64(s->alloc_count, allocs, "every allocation in the last one");
		expect_eq_u64(cap.nstacks, hp_stacks_count(), "every stack written once");
	} else {
		expect_true(0, "the final file reads");
	}
	hp_capture_free(&cap);
	hp_writer_close();
}

/* hp_writer_put (the event log's chunks): the payload framed where it
 * lies and written whole, its CRC the reader's; a disk that fills at every
 * offset of the record leaves the file whole, the record cut off again. */
HP_TEST(writer_put_frames_in_place)
{
	static uint8_t rec[HP_FORMAT_FRAME_BYTES + 5000];
	struct hp_capture cap;
	uint64_t before, bad = 0, failures = 0;

	open_capture("put.hpf");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "a snapshot first");
	for (size_t i = 0; i < 5000; i++)
		rec[HP_FORMAT_FRAME_BYTES + i] = (uint8_t)(i * 7 + i / 251);
	before = file_size();
	expect_eq_u64(hp_writer_put(200, rec, 5000, 0), 0, "put"); /* a type readers skip */
	expect_eq_u64(file_size(), before + HP_FORMAT_FRAME_BYTES + 5000, "frame and payload");
	expect_true(memcmp(rec, HP_FORMAT_RECORD_TAG, 4) == 0, "framed in place");
	if (load(&cap) < 0 || cap.file_bytes != file_size())
		expect_true(0, "the reader reads it without damage (its CRC)");
	hp_capture_free(&cap);
	for (int64_t k = 0; k < HP_FORMAT_FRAME_BYTES + 5000; k += 97) {
		before = file_size();
		seam_disk_full_after(k);
		if (hp_writer_put(200, rec, 5000, 0) != 0) {
			failures++;
			bad += file_size() != before;
		}
		seam_restore();
		if (load(&cap) < 0 || cap.file_bytes != file_size())
			bad++;
		hp_capture_free(&cap);
	}
	expect_eq_u64(failures, (HP_FORMAT_FRAME_BYTES + 5000 + 96) / 97,
		      "every budget short of the record fails");
	expect_eq_u64(bad, 0, "and leaves the file as it was, without damage");
	hp_writer_close();
}

/* 30000 buckets need more than the 256 KiB bucket buffer mapped at open:
 * with mmap failing the snapshot is lost (counted as a failed write), the
 * file stays whole, and with memory back the next one is written. */
HP_TEST(writer_mmap_failure)
{
	struct hp_capture cap;
	struct hp_totals t0, t1;
	uint64_t size;

	open_capture("nomem.hpf");
	for (uint64_t i = 0; i < 30000; i++)
		record(0x10000000 + i * 16, 1);
	hp_agg_totals(&t0);
	size = file_size();
	seam_map_fail_after(0);
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), (uint64_t)-ENOMEM,
		      "no memory for the buckets");
	seam_restore();
	hp_agg_totals(&t1);
	expect_eq_u64(t1.lost_count[HP_LOST_WRITE_FAILED] - t0.lost_count[HP_LOST_WRITE_FAILED], 1,
		      "counted");
	expect_true(load(&cap) == 0, "the file reads whole");
	expect_eq_u64(cap.nsnapshots, 0, "no snapshot in it");
	expect_true(file_size() > size, "the records before it (the stacks) were written");
	hp_capture_free(&cap);
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "memory back");
	expect_true(load(&cap) == 0, "reads");
	expect_eq_u64(cap.nsnapshots, 1, "the snapshot");
	expect_eq_u64(hp_capture_last(&cap)->alloc_count, allocs, "every allocation");
	hp_capture_free(&cap);
	hp_writer_close();
}

/* A write that is a cancellation point, as write(2) is: the cancel
 * pending on the writing thread would act right here, inside the writer's
 * lock, if cancellation were enabled. */
static int (*cancel_real)(int, const void *, size_t, uint64_t);

static int pwrite_cancellation_point(int fd, const void *p, size_t n, uint64_t off)
{
	pthread_testcancel();
	return cancel_real(fd, p, n, off);
}

static void *snapshot_then_cancelled(void *arg)
{
	(void)arg;
	pthread_cancel(pthread_self()); /* pending: acts at the next cancellation point */
	hp_writer_snapshot(HP_SNAP_API, 0, 0);
	pthread_testcancel(); /* the writer is done: cancelled here */
	return (void *)1;
}

static void *snapshot_after(void *arg)
{
	*(int *)arg = hp_writer_snapshot(HP_SNAP_API, 0, 0);
	return NULL;
}

HP_TEST(writer_cancelled_thread_leaves_no_lock_held)
{
	/* A thread cancelled while it writes a snapshot must not die holding
	 * the writer's lock: cancellation is off while the lock is held. The
	 * next snapshot, on another thread, then completes (bounded: a held
	 * lock would spin for ever, so the second thread is joined with a
	 * timeout). */
	pthread_t t;
	void *ret = NULL;
	int after = -1;
	struct timespec until;

	open_capture("cancel.hpf");
	cancel_real = hp_os_pwrite_all;
	hp_os_pwrite_all = pwrite_cancellation_point;
	pthread_create(&t, NULL, snapshot_then_cancelled, NULL);
	pthread_join(t, &ret);
	hp_os_pwrite_all = cancel_real;
	expect_true(ret == PTHREAD_CANCELED, "the thread was cancelled, after the writer");
	pthread_create(&t, NULL, snapshot_after, &after);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	if (!expect_eq_u64(pthread_timedjoin_np(t, NULL, &until), 0,
			   "the next snapshot completes: no lock left held"))
		return; /* the thread spins on a lock no one holds any more */
	expect_eq_u64(after, 0, "and is written");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}

#define BIG_BYTES (16u << 20)

static const struct hp_cap_map *region_of(const struct hp_cap_snapshot *snap, uint64_t addr);

/* The regions of s holding the blocks small (100 bytes) and big
 * (BIG_BYTES, its first 3 pages written). */
static void check_regions(const struct hp_cap_snapshot *s, const char *small, const char *big)
{
	const struct hp_cap_map *m = region_of(s, (uintptr_t)small);
	size_t page = hp_os_page_size();

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* ASan's or TSan's malloc, not glibc's: no brk heap, no chunk
	 * headers; the blocks lie in mappings of its own, "other". */
	(void)page;
	expect_true(m && m->kind == HP_MAP_OTHER, "the small block: in a mapping");
	m = region_of(s, (uintptr_t)big);
	expect_true(m && m->kind == HP_MAP_OTHER, "the large block: in a mapping");
#else
	expect_true(m && m->kind == HP_MAP_BRK && !strcmp(m->name, "[heap]") &&
			    m->rss_bytes >= page && m->rss_bytes <= m->size,
		    "the small block: the brk heap, resident");
	m = region_of(s, (uintptr_t)big);
	expect_true(m && m->kind == HP_MAP_CHUNK, "the large block: an mmap'd chunk");
	expect_eq_u64(m ? m->start : 0, (uintptr_t)big - 16, "from its header");
	expect_eq_u64(m ? m->size : 0, (BIG_BYTES + 16 + page - 1) / page * page,
		      "to the end of its pages");
	expect_true(m && m->rss_bytes >= 3 * page && m->rss_bytes <= 4 * page,
		    "its RSS: the pages written");
#endif
}

/* The region of snap holding addr, or NULL. */
static const struct hp_cap_map *region_of(const struct hp_cap_snapshot *snap, uint64_t addr)
{
	for (size_t i = 0; i < snap->nmaps; i++)
		if (snap->maps[i].start <= addr && addr - snap->maps[i].start < snap->maps[i].size)
			return &snap->maps[i];
	return NULL;
}

static int (*maps_each_real)(char *, size_t, int (*)(const struct hp_os_mapping *, void *), void *);

static int maps_fail(char *scratch, size_t cap, int (*fn)(const struct hp_os_mapping *, void *),
		     void *arg)
{
	(void)scratch, (void)cap, (void)fn, (void)arg;
	return -EMFILE;
}

/* Live blocks of this process's own malloc, recorded: the MAPS record
 * lists the brk heap holding a small one and the mmap'd chunk of a large
 * one (from its header, 16 bytes before it, to the end of its pages),
 * with the chunk's RSS the pages written. When /proc/self/maps cannot be
 * read, the MAPS record alone is lost and counted; BLOCKS is written. */
HP_TEST(writer_maps_of_live_blocks)
{
	struct hp_capture cap;
	const struct hp_cap_snapshot *s;
	size_t page = hp_os_page_size();
	uint64_t lost = 0, frames[2] = {0x3000, 0x3001};
	uint32_t bucket;
	struct hp_live_block gone;
	char *small, *big;

	/* glibc mmaps a block over its threshold (128 KiB until a freed
	 * mmap'd chunk raises it: fixed here) that its top chunk cannot
	 * serve: 16 MiB, more than the earlier tests left in the heap. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	small = malloc(100);
	big = malloc(BIG_BYTES);

	if (!expect_true(small && big, "malloc"))
		return;
	memset(big, 1, 3 * page); /* with its header's page: 4 pages (or 3) */
	open_capture("maps.hpf"); /* the tables, the first time */
	config.live_blocks = 1;
	bucket = hp_agg_bucket(hp_stacks_intern(frames, 2), 0, 0, 0);
	expect_eq_u64(hp_live_insert((uintptr_t)small, bucket, 100, NULL) |
			      hp_live_insert((uintptr_t)big, bucket, BIG_BYTES, NULL),
		      0, "recorded");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "snapshot");
	if (load(&cap) == 0 && (s = hp_capture_last(&cap)) && expect_true(s->has_maps, "MAPS")) {
		lost = s->lost_count[HP_LOST_WRITE_FAILED]; /* the tests before this one's */
		check_regions(s, small, big);
	}
	hp_capture_free(&cap);
	maps_each_real = hp_os_maps_each;
	hp_os_maps_each = maps_fail;
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "a snapshot without maps");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "and the next");
	hp_os_maps_each = maps_each_real;
	if (load(&cap) == 0 && expect_eq_u64(cap.nsnapshots, 3, "three snapshots")) {
		s = &cap.snapshots[1];
		expect_true(s->has_blocks && !s->has_maps, "the second: blocks, no regions");
		expect_eq_u64(cap.snapshots[2].lost_count[HP_LOST_WRITE_FAILED], lost + 1,
			      "the third counts the MAPS lost");
	}
	hp_capture_free(&cap);
	hp_live_remove((uintptr_t)small, &gone, 1);
	hp_live_remove((uintptr_t)big, &gone, 1);
	config.live_blocks = 0;
	hp_writer_close();
	free(small);
	free(big);
}

/* The STACKS records in the capture: how many, and the largest payload. */
static void stacks_records(size_t *count, size_t *largest)
{
	struct hp_reader r;
	struct hp_record rec;
	uint8_t *data = NULL;
	size_t size = (size_t)file_size();
	FILE *f = fopen(config.output, "rb");

	*count = *largest = 0;
	if (f && (data = malloc(size ? size : 1)) && fread(data, 1, size, f) == size &&
	    hp_reader_open(&r, data, size) == 0) {
		int got;
		while ((got = hp_reader_next(&r, &rec)) != HP_READ_END) {
			if (got != HP_READ_OK || rec.type != HP_REC_STACKS)
				continue;
			(*count)++;
			if (rec.len > *largest)
				*largest = rec.len;
		}
		hp_reader_close(&r);
	}
	if (f)
		fclose(f);
	free(data);
}

#define TREE_STACKS 8192u
#define TREE_PATHS 64u

static uint64_t mix64(uint64_t h)
{
	h *= 0x9e3779b97f4a7c15ull; /* splitmix64's mix */
	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ h >> 27) * 0x94d049bb133111ebull;
	return h ^ h >> 31;
}

/* Stack i of a program's call tree: 9 + i % 36 frames (26.5 on average,
 * cmake's are 37), the innermost 8 its own, those outer to them one of 64
 * paths from main, numbered from the outermost frame (the same callers
 * whatever the depth below them). Return addresses within 1 MiB of an
 * executable's base. Fills frames[] and returns the depth. */
static uint32_t tree_stack(uint32_t i, uint64_t *frames)
{
	uint32_t depth = 9 + i % 36;

	for (uint32_t d = 0; d < depth; d++)
		frames[d] = 0x55d0e4a00000ull +
			    (mix64(d < HP_INTERN_HEAD_WORDS ? (uint64_t)i << 8 | d
							     : (uint64_t)(i % TREE_PATHS) << 40 |
								       (depth - 1 - d) << 8 | 0xff) &
			     0xfffff);
	return depth;
}

/* The stack table keeps a stack's innermost frames and shares the outer
 * ones with the stacks that have them (stacks.h): 8,192 stacks of a call
 * tree (217,088 frames, 1.66 MiB as words, 1.78 MiB of table with their
 * entries and index when each stack kept all its frames) take at most
 * 1 MiB of the table's memory; each compares equal to its frames only,
 * reads back exactly (hp_stacks_frames) and from a capture. */
HP_TEST(stacks_share_outer_frames)
{
	static uint64_t frames[64], back[HP_STACKS_MAX_DEPTH];
	uint64_t before, bad = 0, wrong = 0;
	uint32_t first, depth;
	struct hp_capture cap;

	open_capture("tree.hpf");
	before = hp_stacks_bytes();
	first = hp_stacks_count();
	for (uint32_t i = 0; i < TREE_STACKS; i++) {
		depth = tree_stack(i, frames);
		bad += hp_stacks_intern(frames, depth) != first + i;
	}
	expect_eq_u64(bad, 0, "8192 new stacks");
	printf("  %llu bytes of the table for %u stacks\n",
	       (unsigned long long)(hp_stacks_bytes() - before), TREE_STACKS);
	expect_true(hp_stacks_bytes() - before <= 1u << 20, "at most 1 MiB");
	for (uint32_t i = 0; i < TREE_STACKS; i++) {
		depth = tree_stack(i, frames);
		bad += !hp_stacks_equal(first + i, frames, depth) ||
		       hp_stacks_frames(first + i, back) != depth ||
		       memcmp(back, frames, depth * sizeof *frames) != 0 ||
		       hp_stacks_intern(frames, depth) != first + i;
		wrong += hp_stacks_equal(first + i, frames, depth - 1);
		for (uint32_t d = 0; d < depth; d++) {
			frames[d] += 1;
			wrong += hp_stacks_equal(first + i, frames, depth);
			frames[d] -= 1;
		}
	}
	expect_eq_u64(bad, 0, "each equal to its own frames, read back exactly");
	expect_eq_u64(wrong, 0, "and to no other depth or frames");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "a snapshot");
	if (!expect_true(load(&cap) == 0, "the file reads whole"))
		return;
	for (uint32_t i = 0; i < TREE_STACKS && first + i < cap.nstacks; i++) {
		depth = tree_stack(i, frames);
		bad += cap.stacks[first + i].depth != depth ||
		       memcmp(cap.stacks[first + i].frames, frames, depth * sizeof *frames) != 0;
	}
	expect_eq_u64(cap.nstacks, hp_stacks_count(), "every stack in the capture");
	expect_eq_u64(bad, 0, "each with its own frames, exactly");
	hp_capture_free(&cap);
	hp_writer_close();
}

#define DEEP_STACKS 3000u
#define DEEP_DEPTH HP_CONFIG_MAX_DEPTH_LIMIT

/* More new stacks at one snapshot than a STACKS record holds (256 KiB of
 * payload: the payload buffer as mapped at open): 3,000 stacks of 256
 * random frames, whose deltas take 10 bytes each (2.5 KB a stack, 7.7 MB
 * in all). With mmap failing the snapshot is still written, in STACKS
 * records of at most 256 KiB (the writer's buffers keep their size however
 * many stacks come), and every stack reads back exactly. */
HP_TEST(writer_stacks_in_bounded_records)
{
	static uint64_t frames[DEEP_DEPTH];
	struct hp_capture cap;
	uint64_t x = 0x9e3779b97f4a7c15ull, bad = 0;
	size_t records, largest;
	uint32_t first;

	open_capture("deep.hpf");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "a first snapshot");
	first = hp_stacks_count();
	for (uint32_t i = 0; i < DEEP_STACKS; i++) {
		for (uint32_t d = 0; d < DEEP_DEPTH; d++) {
			x ^= x << 13; /* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			frames[d] = x;
		}
		bad += hp_stacks_intern(frames, DEEP_DEPTH) != first + i;
	}
	expect_eq_u64(bad, 0, "3000 new stacks");
	seam_map_fail_after(0);
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0,
		      "written without mapping more memory");
	seam_restore();
	if (!expect_true(load(&cap) == 0, "the file reads whole"))
		return;
	expect_eq_u64(cap.nsnapshots, 2, "both snapshots");
	expect_eq_u64(cap.nstacks, hp_stacks_count(), "every stack");
	for (uint32_t id = 1; id < cap.nstacks && id < hp_stacks_count(); id++) {
		static uint64_t f[HP_STACKS_MAX_DEPTH];
		uint32_t depth = hp_stacks_frames(id, f);
		bad += cap.stacks[id].depth != depth ||
		       memcmp(cap.stacks[id].frames, f, depth * sizeof *f) != 0;
	}
	expect_eq_u64(bad, 0, "each with its own frames, exactly");
	hp_capture_free(&cap);
	stacks_records(&records, &largest);
	expect_true(records >= 1 + (DEEP_STACKS * (DEEP_DEPTH * 10 + 2) >> 18),
		    "the new stacks in several records");
	expect_true(largest > 0 && largest <= 1u << 18, "none past 256 KiB");
	expect_eq_u64(hp_writer_record_bytes(), (512u << 10) + (16u << 10),
		      "the record buffers at their size at open");
	hp_writer_close();
}

/* A snapshot whose buckets and histograms pass 1 MiB (100,000 buckets):
 * written from their buffers in pieces, compressed as one zstd frame each
 * (emit_parts), not copied into the payload, which keeps its size at open,
 * as the compressed record's buffer does; with mmap failing a second
 * snapshot is written too; both read back whole, with every bucket. */
HP_TEST(writer_large_snapshot_in_pieces)
{
	struct hp_capture cap;
	const struct hp_cap_snapshot *s;
	uint64_t sum = 0;

	open_capture("large.hpf");
	for (uint64_t i = 0; i < 100000; i++)
		record(0x20000000 + i * 16, 1 + (i & 1023));
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "a first snapshot");
	seam_map_fail_after(0);
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0,
		      "a second, without mapping more memory");
	seam_restore();
	if (!expect_true(load(&cap) == 0, "the file reads whole"))
		return;
	expect_eq_u64(cap.nsnapshots, 2, "both snapshots");
	s = hp_capture_last(&cap);
	expect_true(s->nbuckets > 100000, "every bucket");
	for (size_t i = 0; i < s->nbuckets; i++)
		sum += s->buckets[i].alloc_bytes;
	expect_eq_u64(s->alloc_count, allocs, "every allocation");
	expect_eq_u64(sum, alloc_bytes, "the buckets' bytes, each read back");
	expect_eq_u64(s->alloc_bytes, alloc_bytes, "the totals");
	expect_eq_u64(hp_writer_record_bytes(), (512u << 10) + (16u << 10),
		      "the record buffers at their size at open");
	hp_capture_free(&cap);
	hp_writer_close();
}

/* The disk filling up inside a snapshot whose large records are written
 * in pieces (the 100,000 buckets above: a streamed SNAPSHOT and
 * HISTOGRAMS), at budgets from the first byte to past the whole snapshot:
 * a record cut short is cut off again, so the file always reads whole,
 * and the next full snapshot counts the lost ones. */
HP_TEST(writer_large_snapshot_disk_full)
{
	static const int64_t budgets[] = {0,     1,      23,     24,     100,     4096,
					  65536, 200000, 400000, 800000, 1500000, 3000000};
	struct hp_capture cap;
	uint64_t failures = 0, bad = 0;

	open_capture("largefull.hpf");
	for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
		record(0x30000000 + i * 16, 10);
		seam_disk_full_after(budgets[i]);
		failures += hp_writer_snapshot(HP_SNAP_API, 0, 0) != 0;
		seam_restore();
		if (load(&cap) < 0 || cap.file_bytes != file_size())
			bad++;
		hp_capture_free(&cap);
	}
	expect_true(failures >= 8, "the disk was full for most budgets");
	expect_eq_u64(bad, 0, "after every failure the file reads whole, without damage");
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_API, 0, 0), 0, "room again");
	if (load(&cap) == 0) {
		const struct hp_cap_snapshot *s = hp_capture_last(&cap);
		expect_eq_u64(s->alloc_count, allocs, "every allocation in the last one");
		expect_eq_u64(cap.nstacks, hp_stacks_count(), "every stack written once");
	} else {
		expect_true(0, "the final file reads");
	}
	hp_capture_free(&cap);
	hp_writer_close();
}
