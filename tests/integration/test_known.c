/*
 * test_known.c - heapprof run on tests/programs/known.c: per-stack figures,
 * exactly, with the right call paths, in both unwinding modes; the
 * recorder's memory at a million live blocks and at a million stacks, and
 * the analyzer's at a million stacks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/decode.h"
#include "../../src/format/format.h"
#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"
#include "known_expect.h"
#include "../programs/millionstacks.h"
#include "../../src/common/version.h"

static struct hp_capture *run_known(const char *mode)
{
	char out[512];
	snprintf(out, sizeof out, "%s/known-%s.hpf", hp_test_tmp(), mode);
	int st = hp_test_sh("%s/heapprof run -q --unwind %s -o %s -- %s/tests/programs/known",
			    hp_test_build(), mode, out, hp_test_build());
	if (!expect_eq_u64(st, 0, "known exits 0 under heapprof (the allocator's answers kept)"))
		return NULL;
	return hpq_load(out);
}

HP_TEST(known_dwarf)
{
	struct hp_capture *cap = run_known("dwarf");
	check_known(cap);
	if (cap)
		expect_str(cap->recorder_version, HP_VERSION, "the recorder says heapprof's version");
	hpq_free(cap);
}

HP_TEST(known_fp)
{
	struct hp_capture *cap = run_known("fp");
	check_known(cap);
	hpq_free(cap);
}

HP_TEST(recorder_memory_budget)
{
	/* The budget: at most 32 bytes per live recorded block, all
	 * of the recorder's memory included, checked with a million blocks
	 * live (the figure is the recorder's own account of its tables and
	 * buffers; 27.6 bytes with 16-byte register entries, 52.8 with the
	 * 24-byte ones). */
	char out[8192];
	struct hp_capture *cap;

	snprintf(out, sizeof out, "%s/manylive.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/tests/programs/manylive",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	if (expect_true(cap->nsnapshots >= 2, "the dump's snapshot and the exit's")) {
		const struct hp_cap_snapshot *s = &cap->snapshots[0];
		uint64_t live = s->alloc_count - s->free_count;
		expect_true(live >= 1000000, "a million blocks live at the dump");
		expect_true(s->recorder_bytes > 0, "the recorder reports its memory");
		expect_true(s->recorder_bytes <= 32 * live,
			    "recorder memory <= 32 bytes per live block");
		printf("  recorder: %.1f MiB for %llu live blocks (%.1f bytes each)\n",
		       s->recorder_bytes / 1048576.0, (unsigned long long)live,
		       (double)s->recorder_bytes / (double)live);
	}
	hpq_free(cap);
}

/* The STACKS records of the capture at path: how many, and the largest
 * payload. */
static void stacks_records(const char *path, size_t *count, size_t *largest)
{
	struct hp_reader r;
	struct hp_record rec;
	size_t size = 0;
	uint8_t *data = NULL;
	FILE *f = fopen(path, "rb");
	int got;

	*count = *largest = 0;
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = (size_t)ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (data = malloc(size)) && fread(data, 1, size, f) == size &&
	    hp_reader_open(&r, data, size) == 0) {
		while ((got = hp_reader_next(&r, &rec)) != HP_READ_END) {
			if (got == HP_READ_OK && rec.type == HP_REC_STACKS) {
				(*count)++;
				if (rec.len > *largest)
					*largest = rec.len;
			}
		}
		hp_reader_close(&r);
	}
	if (f)
		fclose(f);
	free(data);
}

/* 2^20 distinct stacks, a block on each (tests/programs/millionstacks.c):
 * the capture is intact and exact (every stack in the table, which holds
 * 2^21 - 1: with 2^20 - 1, one block was counted under no stack and said
 * lost), its new stacks in STACKS records of at most 1 MiB, and the
 * recorder's memory beyond the stacks' frames under 256 bytes a stack,
 * issue 25's goal (196 with buckets of 96 bytes; 348 with buckets of
 * 256; 517 when the stacks went in one record, the index kept its old
 * copies and the snapshot's buckets were copied into the payload). */
HP_TEST(million_stacks_intact)
{
	char out[512];
	struct hp_capture *cap;
	const struct hp_cap_snapshot *s;
	uint64_t bytes = 0, nostack = 0, shallow = 0, wrong = 0, frames = 0;
	size_t records, largest;
	double beyond;

	snprintf(out, sizeof out, "%s/millionstacks.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- "
				 "%s/tests/programs/millionstacks",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	expect_eq_u64(cap->ndamage, 0, "every record intact");
	s = hp_capture_last(cap);
	if (expect_true(s != NULL, "a snapshot")) {
		expect_eq_u64(s->alloc_count, MILLIONSTACKS_PATHS, "every block");
		expect_eq_u64(s->alloc_bytes, MILLIONSTACKS_BYTES, "their bytes");
		expect_eq_u64(cap->nstacks, (1u << 20) + 1, "ids 1 .. 2^20 in the file");
		for (size_t i = 0; i < s->nbuckets; i++) {
			const struct hp_rec_bucket *b = &s->buckets[i];
			bytes += b->alloc_bytes;
			if (!b->stack_id) {
				nostack += b->alloc_count;
				continue;
			}
			if (b->stack_id >= cap->nstacks) {
				wrong++;
				continue;
			}
			shallow += cap->stacks[b->stack_id].depth < MILLIONSTACKS_LEVELS + 2;
			if (b->stack_id % 4096 == 0 &&
			    strcmp(hpq_symbol(cap, cap->stacks[b->stack_id].frames[0]), "leaf") != 0)
				wrong++;
		}
		expect_eq_u64(bytes, MILLIONSTACKS_BYTES, "the buckets' bytes");
		expect_eq_u64(nostack, 0, "every block under its stack");
		expect_eq_u64(s->lost_count[HP_LOST_STACK_TABLE_FULL], 0, "none lost");
		expect_eq_u64(shallow + wrong, 0, "each stack whole, from leaf");
		for (size_t id = 1; id < cap->nstacks; id++)
			frames += cap->stacks[id].depth;
		beyond = (double)(s->recorder_bytes - frames * 8) / (double)MILLIONSTACKS_PATHS;
		expect_true(beyond <= 256, "recorder memory <= 256 bytes a stack beyond its frames");
		printf("  recorder: %.1f MiB for %lu stacks: %.1f bytes each beyond %.1f of frames\n",
		       s->recorder_bytes / 1048576.0, MILLIONSTACKS_PATHS, beyond,
		       8.0 * (double)frames / (double)MILLIONSTACKS_PATHS);
	}
	hpq_free(cap);
	stacks_records(out, &records, &largest);
	expect_true(records > 1 && largest <= 1u << 20, "STACKS records of at most 1 MiB");
}

/* The peak resident set of `heapprof ARGS`, in KiB, or 0: measured by GNU
 * time, a small process (a child of this test would start from the
 * test's own peak, which survives the exec). */
static long peak_rss_kib(const char *args)
{
	char out[600];
	long kib = 0;
	FILE *f;

	snprintf(out, sizeof out, "%s/rss.txt", hp_test_tmp());
	if (hp_test_sh("timeout 120 /usr/bin/time -f %%M -o %s %s/heapprof %s > /dev/null 2>&1",
		       out, hp_test_build(), args))
		return 0;
	if ((f = fopen(out, "r"))) {
		if (fscanf(f, "%ld", &kib) != 1)
			kib = 0;
		fclose(f);
	}
	return kib;
}

/* Issue 25's goal for the analyzer on the benchmark's capture of 2^20
 * stacks (bench/analyzer/manystacks.c 10, tests/programs/analyzerstacks):
 * report, export --format pprof, html and diff (the capture against
 * itself) each within 500 MB of peak RSS. They took 503, 503, 503 and
 * 703 MiB when the loader kept each stack's frames in a malloc of its
 * own, the timeline and the histograms whole, and the timeline's bucket
 * ids in a hash table (345, 314, 437, 423 MiB without). */
HP_TEST(million_stacks_analyzer_memory)
{
	const long goal_kib = 500000000 / 1024; /* 500 MB */
	static const char *const cmds[] = {
		"report %s", "export --format pprof -o %s.pb.gz %s", "html -o %s.html %s",
		"diff %s %s"};
	char cap[512], args[1600];

	if (!hp_test_need("/usr/bin/time", "time"))
		return;
	snprintf(cap, sizeof cap, "%s/analyzerstacks.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/analyzerstacks "
				      "10 > /dev/null",
				      hp_test_build(), cap, hp_test_build()),
			   0, "exit status"))
		return;
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		long kib;
		snprintf(args, sizeof args, cmds[i], cap, cap);
		kib = peak_rss_kib(args);
		printf("  heapprof %s: peak RSS %.1f MiB\n", args, kib / 1024.0);
		expect_true(kib > 0 && kib <= goal_kib, "within 500 MB");
	}
}

/* The same commands on tests/programs/millionstacks: 2^20 stacks of
 * about 26 frames, deeper than analyzerstacks' 13 to 23, so that each
 * model's location lists take 2 bytes a frame more. All four meet issue
 * 25's 500 MB (report 337, export 306, html 397, diff 373 MiB), and each
 * is held to its figure with about 2% of room: report 389 MiB and export
 * 358 with 4-byte location lists, html 449 (792 while its flame graph was
 * built a node a distinct path), diff 511 (533 with its chains indexed 12
 * bytes a slot; 434 while each side's buckets were held as structs, 88
 * bytes each, until its model was built, not as the record encodes
 * them). */
HP_TEST(million_deep_stacks_analyzer_memory)
{
	static const struct {
		const char *cmd;
		long kib;
	} cmds[] = {
		{"report %s", 344 * 1024},
		{"export --format pprof -o %s.pb.gz %s", 313 * 1024},
		{"html -o %s.html %s", 406 * 1024},
		{"diff %s %s", 381 * 1024},
	};
	char cap[512], args[1600];

	if (!hp_test_need("/usr/bin/time", "time"))
		return;
	snprintf(cap, sizeof cap, "%s/deepstacks.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/millionstacks "
				      "> /dev/null",
				      hp_test_build(), cap, hp_test_build()),
			   0, "exit status"))
		return;
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		long kib;
		snprintf(args, sizeof args, cmds[i].cmd, cap, cap);
		kib = peak_rss_kib(args);
		printf("  heapprof %s: peak RSS %.1f MiB (bound %.1f)\n", args, kib / 1024.0,
		       cmds[i].kib / 1024.0);
		expect_true(kib > 0 && kib <= cmds[i].kib, "within its bound");
	}
}

/* --max-stacks 1000 on the same program: the table holds the first 1,000
 * stacks; every other block is counted (the totals exact) under no stack,
 * said lost, and the report's summary says so. */
HP_TEST(max_stacks_bounds_the_table)
{
	char out[512];
	struct hp_capture *cap;
	const struct hp_cap_snapshot *s;
	uint64_t nostack = 0, under = 0;
	char *text;

	snprintf(out, sizeof out, "%s/maxstacks.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols --max-stacks 1000 -o %s -- "
				 "%s/tests/programs/millionstacks",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	expect_eq_u64(cap->ndamage, 0, "every record intact");
	s = hp_capture_last(cap);
	if (expect_true(s != NULL, "a snapshot")) {
		expect_eq_u64(cap->nstacks, 1001, "ids 1 .. 1000 in the file");
		expect_eq_u64(s->alloc_count, MILLIONSTACKS_PATHS, "every block counted");
		expect_eq_u64(s->alloc_bytes, MILLIONSTACKS_BYTES, "their bytes");
		for (size_t i = 0; i < s->nbuckets; i++) {
			if (s->buckets[i].stack_id)
				under += s->buckets[i].alloc_count;
			else
				nostack += s->buckets[i].alloc_count;
		}
		expect_eq_u64(under, 1000, "one block under each of the 1,000 stacks");
		expect_eq_u64(nostack, MILLIONSTACKS_PATHS - 1000, "the rest under none");
		expect_eq_u64(s->lost_count[HP_LOST_STACK_TABLE_FULL], MILLIONSTACKS_PATHS - 1000,
			      "and said lost");
	}
	hpq_free(cap);
	text = hp_test_sh_out("%s/heapprof report %s", hp_test_build(), out);
	expect_true(text && strstr(text, "stack table full (--max-stacks)"), "the report says why");
	free(text);
	expect_true(hp_test_sh("%s/heapprof run -q --max-stacks 0 -- true 2>/dev/null",
			       hp_test_build()) != 0,
		    "--max-stacks 0 refused");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
