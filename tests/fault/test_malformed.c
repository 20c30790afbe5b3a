/*
 * test_malformed.c - captures whose every checksum is right but whose
 * content is odd: what a buggy or a newer writer could produce.
 *
 * test_corrupt.c covers damage to a real capture, which the checksums
 * catch before any payload is parsed. This file covers the next layer:
 * well-framed records built by hand with hp_format_put_record, loaded with
 * hp_capture_load. A newer minor version's additions must read as intact;
 * content that cannot be right (a stack id never defined, stacks out of
 * order, a stack shorter than its depth) must be reported as a malformed
 * record and skipped, without crashing and without leaking (run under
 * SAN=address for the latter).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/format/capture.h"
#include "../../src/analyzer/memmap.h"
#include "../../src/format/encode.h"
#include "../../src/format/format.h"
#include "../harness/craft.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

static const char *tmp_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof path, "%s/%s", hp_test_tmp(), name);
	return path;
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* Writes the crafted file and loads it; returns the load's result. */
static int craft_load(struct hp_craft *c, const char *name, struct hp_capture *cap)
{
	const char *path = tmp_path(name);
	char err[512];
	int ret;

	hp_craft_write(c, path);
	ret = hp_capture_load(path, cap, err, sizeof err);
	expect_eq_u64((uint64_t)ret, 0, "a well-framed capture loads");
	if (ret)
		printf("  %s: %s\n", name, err);
	return ret;
}

HP_TEST(crafted_newer_minor_is_read)
{
	/* A later minor: extra META fields and an unknown record type. None
	 * of it is damage. (A longer file header is test_format's.) */
	struct hp_craft c;
	struct hp_capture cap;
	static const uint64_t f0[] = {0x401000};
	static const uint64_t ids[] = {1};

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 1);
	hp_buf_put_str(&c.payload, "whatever record 42 holds");
	hp_craft_emit(&c, 42);
	hp_craft_stacks(&c, 1, f0, 1);
	hp_craft_snapshot(&c, ids, 1);
	c.file.data[10] = 3; /* minor 3, CRC recomputed */
	uint32_t v = crc(c.file.data, 28);
	for (int i = 0; i < 4; i++)
		c.file.data[28 + i] = (uint8_t)(v >> (8 * i));
	if (craft_load(&c, "minor3.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 0, "extra fields and unknown records are not damage");
	expect_eq_u64(cap.nrecords, 4, "the unknown record is counted and skipped");
	expect_true(cap.has_meta, "META is read");
	expect_str(cap.program, "/bin/prog", "its program");
	expect_eq_u64(cap.argc, 2, "its argc");
	expect_str(cap.argc == 2 ? cap.argv[1] : "", "--flag", "its argv");
	expect_str(cap.recorder_version, "0.1.0", "its recorder version");
	expect_eq_u64(cap.unwind, HP_UNWIND_FP, "its unwind mode");
	expect_eq_u64(cap.dump_signal, 12, "its dump signal");
	expect_eq_u64(cap.nstacks, 2, "ids 0 and 1");
	expect_eq_u64(cap.nstacks == 2 ? cap.stacks[1].frames[1] : 0, 0x401000 - 16,
		      "frames rebuilt from deltas");
	if (expect_eq_u64(cap.nsnapshots, 1, "the snapshot is read")) {
		const struct hp_cap_snapshot *s = &cap.snapshots[0];
		expect_eq_u64(s->reason, HP_SNAP_EXIT, "reason");
		expect_eq_u64(s->alloc_count, 10, "alloc_count, the first total");
		expect_eq_u64(s->free_bytes, 13, "free_bytes, the fourth");
		expect_eq_u64(s->peak_bytes, 14, "then peak_bytes");
		expect_eq_u64(s->peak_count, 15, "then peak_count");
		expect_eq_u64(s->peak_time_ns, 16, "then peak_time");
		expect_eq_u64(s->stack_count, 2, "then stack_count");
		if (expect_eq_u64(s->nbuckets, 1, "one bucket")) {
			const struct hp_rec_bucket *b = &s->buckets[0];
			expect_eq_u64(b->stack_id, 1, "bucket stack id");
			expect_eq_u64(b->type_tag, 2, "type_tag");
			expect_eq_u64(b->origin_tag, 3, "origin_tag");
			expect_eq_u64(b->size, 4, "size");
			expect_eq_u64(b->alloc_count, 5, "alloc_count");
			expect_eq_u64(b->peak_count, 9, "peak_count");
			expect_eq_u64(b->temp_bytes, 12, "temp_bytes, the last");
		}
	}
	hp_capture_free(&cap);
}

HP_TEST(crafted_module_segments_in_order)
{
	/* Segment fields must come back in the order written: vaddr, memsz,
	 * offset, flags. */
	struct hp_craft c;
	struct hp_capture cap;
	struct hp_buf *p = &c.payload;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_buf_put_u(p, 2);             /* two events */
	hp_buf_put_u(p, HP_MOD_LOAD);
	hp_buf_put_u(p, 7);             /* time */
	hp_buf_put_u(p, 0);             /* module id */
	hp_buf_put_str(p, "/lib/libx.so");
	hp_buf_put_blob(p, "\x01\x02\x03\x04", 4);
	hp_buf_put_u(p, 0x7f0000000000);
	hp_buf_put_u(p, 2);             /* segments */
	hp_buf_put_u(p, 0x1000);        /* vaddr */
	hp_buf_put_u(p, 0x2000);        /* memsz */
	hp_buf_put_u(p, 0x300);         /* file offset */
	hp_buf_put_u(p, 5);             /* flags */
	hp_buf_put_u(p, 0x4000);
	hp_buf_put_u(p, 0x100);
	hp_buf_put_u(p, 0x3000);
	hp_buf_put_u(p, 6);
	hp_buf_put_u(p, HP_MOD_UNLOAD);
	hp_buf_put_u(p, 9);
	hp_buf_put_u(p, 0);
	hp_craft_emit(&c, HP_REC_MODULES);
	if (craft_load(&c, "modules.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 0, "no damage");
	if (!expect_eq_u64(cap.nmodules, 1, "one module"))
		goto out;
	const struct hp_cap_module *m = &cap.modules[0];
	expect_str(m->path, "/lib/libx.so", "path");
	expect_eq_u64(m->build_id_len, 4, "build id length");
	expect_eq_u64(m->build_id[3], 4, "build id bytes");
	expect_eq_u64(m->bias, 0x7f0000000000, "bias");
	expect_eq_u64(m->nseg, 2, "segments");
	expect_eq_u64(m->seg[0].vaddr, 0x1000, "vaddr first");
	expect_eq_u64(m->seg[0].memsz, 0x2000, "memsz second");
	expect_eq_u64(m->seg[0].offset, 0x300, "file offset third");
	expect_eq_u64(m->seg[0].flags, 5, "flags fourth");
	expect_eq_u64(m->seg[1].offset, 0x3000, "second segment's file offset");
	expect_true(hp_capture_module_of(&cap, 0x7f0000001000) == m, "first byte of segment 0");
	expect_true(hp_capture_module_of(&cap, 0x7f0000002fff) == m, "last byte of segment 0");
	expect_true(hp_capture_module_of(&cap, 0x7f0000003000) == NULL, "between segments");
	expect_eq_u64(m->load_ns, 7, "load time");
	expect_true(m->unloaded, "the UNLOAD event is applied");
	expect_eq_u64(m->unload_ns, 9, "unload time");
out:
	hp_capture_free(&cap);
}

HP_TEST(crafted_timeseries_deltas_chain_across_records)
{
	/* The first delta of every record is from 0 (an absolute time), so a
	 * TIMESERIES record lost to damage shifts nothing after it. */
	struct hp_craft c;
	struct hp_capture cap;
	struct hp_buf *p = &c.payload;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_buf_put_u(p, 2);
	hp_buf_put_s(p, 10);
	hp_buf_put_u(p, 100);
	hp_buf_put_u(p, 4096);
	hp_buf_put_s(p, 5);
	hp_buf_put_u(p, 200);
	hp_buf_put_u(p, 8192);
	hp_craft_emit(&c, HP_REC_TIMESERIES);
	hp_buf_put_u(p, 1);
	hp_buf_put_s(p, 7);
	hp_buf_put_u(p, 50);
	hp_buf_put_u(p, 8192);
	hp_craft_emit(&c, HP_REC_TIMESERIES);
	if (craft_load(&c, "timeseries.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 0, "no damage");
	if (expect_eq_u64(cap.nsamples, 3, "three samples")) {
		expect_eq_u64(cap.samples[0].time_ns, 10, "first from 0");
		expect_eq_u64(cap.samples[1].time_ns, 15, "second from the first");
		expect_eq_u64(cap.samples[2].time_ns, 7, "a new record's first is absolute");
		expect_eq_u64(cap.samples[2].heap_bytes, 50, "heap bytes");
		expect_eq_u64(cap.samples[1].rss_bytes, 8192, "RSS bytes");
	}
	hp_capture_free(&cap);
}

/* A TIMELINE record of n ticks at times 10, 20, ...: tick i lists sites
 * i*2 and i*2+1 of s; with tags, the tail of format 1.5 (ntags pairs,
 * which should be 2n), without, a 1.4 record. */
static void timeline_record(struct hp_craft *c, const struct hp_rec_site *s, size_t n,
			    int tags, uint64_t ntags)
{
	uint64_t prev = 0;

	hp_rec_count_put(&c->payload, n);
	for (size_t i = 0; i < n; i++) {
		hp_rec_tick_put(&c->payload, &(struct hp_rec_tick){10 * (i + 1), 2}, &prev);
		hp_rec_site_put(&c->payload, &s[2 * i]);
		hp_rec_site_put(&c->payload, &s[2 * i + 1]);
	}
	if (tags) {
		hp_rec_count_put(&c->payload, ntags);
		for (size_t i = 0; i < ntags && i < 2 * n; i++)
			hp_rec_site_tags_put(&c->payload, &s[i]);
	}
	hp_craft_emit(c, HP_REC_TIMELINE);
}

HP_TEST(crafted_timeline_site_tags)
{
	/* Format 1.5 puts each site's type and origin tags after the ticks;
	 * a 1.4 record has none (0 and 0); a count that is not the record's
	 * sites is malformed, its ticks kept without tags. */
	static const struct hp_rec_site s[4] = {
		{1, 1, 0, 2, 32, 3, 7},
		{2, 1, 0, 1, 16, 0, 8},
		{1, 1, 0, 1, 16, 3, 7},
		{3, 2, 0, 5, 500, 4, 9},
	};
	struct hp_craft c;
	struct hp_capture cap;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	timeline_record(&c, s, 2, 1, 4);
	timeline_record(&c, s, 2, 0, 0);
	timeline_record(&c, s, 1, 1, 3);
	if (craft_load(&c, "timeline-tags.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 1, "the third record's count is wrong: malformed");
	if (expect_eq_u64(cap.nticks, 5, "every tick is kept") &&
	    expect_eq_u64(cap.nsites, 10, "and every site")) {
		for (size_t i = 0; i < 4; i++) {
			expect_eq_u64(cap.sites[i].bucket, s[i].bucket, "1.5: the bucket");
			expect_eq_u64(cap.sites[i].type_tag, s[i].type_tag, "1.5: its type tag");
			expect_eq_u64(cap.sites[i].origin_tag, s[i].origin_tag,
				      "1.5: its origin tag");
			expect_eq_u64(cap.sites[4 + i].in_use_bytes, s[i].in_use_bytes,
				      "1.4: the figures");
			expect_eq_u64(cap.sites[4 + i].type_tag + cap.sites[4 + i].origin_tag, 0,
				      "1.4: no tags");
		}
		expect_eq_u64(cap.sites[8].origin_tag + cap.sites[9].type_tag, 0,
			      "a wrong count: no tags");
		expect_eq_u64(cap.ticks[1].time_ns, 20, "times as before");
		expect_eq_u64(cap.ticks[0].tagged + cap.ticks[1].tagged, 2, "1.5: tagged ticks");
		expect_eq_u64(cap.ticks[2].tagged + cap.ticks[3].tagged + cap.ticks[4].tagged, 0,
			      "1.4, and a wrong count: untagged ticks");
	}
	hp_capture_free(&cap);
}

HP_TEST(crafted_timeline_bucket_keeps_its_key)
{
	/* A bucket id names one key (stack, size, tags) for the image's
	 * timeline (capture.h, hp_cap_tick): timeline.c sized a site's points
	 * by the entries that name its stack and filled them by the stack its
	 * bucket was first met with, so a bucket that changed its stack wrote
	 * past the points (issue 22 item 15, a heap overflow at timeline.c:207
	 * under report --json and html). The loader drops the entries that
	 * contradict their bucket's first, one line per record, and keeps the
	 * rest; report --json, --timeline and html then show them. */
	static const struct hp_rec_site s[6] = {
		{1, 1, 0, 1, 100, 0, 0}, {2, 2, 0, 1, 50, 0, 0},  /* tick 10 */
		{1, 2, 0, 2, 200, 0, 0}, {2, 2, 0, 2, 100, 0, 0}, /* 20: bucket 1 on stack 2 */
		{1, 1, 0, 3, 300, 0, 0}, {1, 1, 0, 4, 400, 5, 0}, /* 30: then other tags */
	};
	static const struct hp_rec_site s2[2] = {
		{1, 1, 8, 5, 500, 0, 0}, {2, 2, 0, 3, 150, 0, 0}, /* 1.4, tick 10: size 8 */
	};
	static const uint64_t f0[] = {0x401000, 0x402000};
	static const uint64_t ids[] = {1, 2};
	static const uint64_t want_bytes[] = {100, 50, 100, 300, 150};
	const char *path = tmp_path("timeline-key.hpf");
	struct hp_craft c;
	struct hp_capture cap;
	char *err, *json;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, f0, 2);
	timeline_record(&c, s, 3, 1, 6);
	timeline_record(&c, s2, 1, 0, 0);
	hp_craft_snapshot(&c, ids, 2);
	if (craft_load(&c, "timeline-key.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 2, "one line per TIMELINE record that lost entries");
	expect_true(cap.ndamage > 0 && strstr(cap.damage[0], "TIMELINE record: bucket 1 has "
					      "stack 1 at its first entry, stack 2 at a later "
					      "one: 2 such entries left out"),
		    "the first says the bucket, both stacks and how many");
	expect_true(cap.ndamage > 1 && strstr(cap.damage[1], "size 0 at its first entry, size 8") &&
			    strstr(cap.damage[1], "1 such entry left out"),
		    "the second, a size");
	for (size_t i = 0; i < cap.ndamage && i < 2; i++)
		printf("  damage: %s\n", cap.damage[i]);
	if (expect_eq_u64(cap.nticks, 4, "every tick is kept") &&
	    expect_eq_u64(cap.nsites, 5, "and every entry but three")) {
		expect_eq_u64(cap.ticks[1].first, 2, "the entries move down");
		expect_eq_u64(cap.ticks[1].count + cap.ticks[2].count + cap.ticks[3].count, 3,
			      "a tick keeps its other entries");
		for (size_t i = 0; i < 5; i++)
			expect_eq_u64(cap.sites[i].in_use_bytes, want_bytes[i], "the entries kept");
		for (size_t i = 0; i < 5; i++)
			expect_eq_u64(cap.sites[i].stack_id, cap.sites[i].bucket,
				      "each bucket on its own stack");
	}
	hp_capture_free(&cap);

	/* The views: each exits 0, with one line on stderr. */
	static const char *const views[] = {"report --json", "report --timeline",
					    "report --timeline --by type", "html -o /dev/null"};
	for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
		char cmd[64];
		snprintf(cmd, sizeof cmd, "%s", views[i]);
		err = hp_test_sh_out("%s/heapprof %s %s 2>&1 >/dev/null; echo \"rc=$?\"",
				     hp_test_build(), cmd, path);
		expect_true(err && strstr(err, "left out\nrc=0\n") &&
				    strchr(err, '\n') == strstr(err, "\nrc=0"),
			    "exit 0, one line on stderr");
		printf("  heapprof %s: %s", cmd, err ? err : "(no output)\n");
		free(err);
	}
	json = hp_test_sh_out("%s/heapprof report --json %s 2>/dev/null", hp_test_build(), path);
	/* Stack 1 holds 100, then 300 (bucket 1 only): two points; between
	 * them the peak's (at 16 ns, the snapshot's at-peak figures for the
	 * stack as crafted: 10 B in 9 blocks), which every line has. */
	expect_true(json && strstr(json, "\"series\": [[10, 100, 1], [16, 10, 9], [30, 300, 3]]"),
		    "the site keeps its kept entries' points, and the peak's");
	free(json);
}

HP_TEST(crafted_duplicate_meta)
{
	/* Two META records in a row (a buggy writer, or a process that exec'd
	 * before anything else was written): each META starts an image, so
	 * this is two images, the first with nothing but its META. Loaded
	 * without damage, without a crash, and without leaking the first
	 * image (run under SAN=address to check the latter); the second is
	 * shown (none has a snapshot: the last). */
	struct hp_craft c;
	struct hp_capture cap;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_meta(&c, 101, "/bin/prog2", 0);
	if (craft_load(&c, "meta2.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 0, "an image per META: not damage");
	expect_eq_u64(cap.nimages, 2, "two images");
	expect_true(cap.has_meta, "META is read");
	expect_str(cap.program, "/bin/prog2", "the last image's program");
	expect_eq_u64(cap.pid, 101, "its pid");
	expect_eq_u64(cap.argc, 2, "its argc");
	expect_str(cap.nimages == 2 ? cap.images[0].program : "", "/bin/prog",
		   "the first image keeps its own");
	hp_capture_free(&cap);
}

HP_TEST(crafted_stacks_malformed_midway)
{
	/* A STACKS record whose second stack claims more frames than it has:
	 * the record is damage; the first stack is kept, the broken one keeps
	 * its id with no frames (so later records still line up), and nothing
	 * leaks (SAN=address). */
	struct hp_craft c;
	struct hp_capture cap;
	struct hp_buf *p = &c.payload;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_buf_put_u(p, 1);      /* first id */
	hp_buf_put_u(p, 2);      /* two stacks */
	hp_buf_put_u(p, 1);      /* depth 1 */
	hp_buf_put_u(p, 0x1000);
	hp_buf_put_u(p, 3);      /* depth 3 ... */
	hp_buf_put_u(p, 0x2000); /* ... two bytes ... */
	hp_buf_put_s(p, -8);     /* ... and one delta: the third is missing */
	hp_craft_emit(&c, HP_REC_STACKS);
	if (craft_load(&c, "stacks-bad.hpf", &cap))
		return;
	expect_eq_u64(cap.ndamage, 1, "the malformed STACKS record is damage");
	expect_true(cap.ndamage && strstr(cap.damage[0], "STACKS"), "named as STACKS");
	expect_eq_u64(cap.nstacks, 3, "ids 1 and 2 exist");
	if (cap.nstacks == 3) {
		expect_eq_u64(cap.stacks[1].depth, 1, "the first stack is kept");
		expect_eq_u64(cap.stacks[2].depth, 0, "the broken stack is empty");
	}
	hp_capture_free(&cap);
}

HP_TEST(crafted_stack_id_out_of_range)
{
	/* A bucket naming a stack id the file never defined is malformed,
	 * including ids that do not fit in 32 bits: 2^32 + 1 must not be
	 * taken for stack 1. */
	struct hp_craft c;
	struct hp_capture cap;
	static const uint64_t f0[] = {0x401000};
	static const uint64_t bad_small[] = {2};
	static const uint64_t bad_wide[] = {((uint64_t)1 << 32) + 1};

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, f0, 1);
	hp_craft_snapshot(&c, bad_small, 1);
	hp_craft_snapshot(&c, bad_wide, 1);
	if (craft_load(&c, "stack-id.hpf", &cap))
		return;
	expect_eq_u64(cap.nsnapshots, 0, "both snapshots are rejected");
	expect_eq_u64(cap.ndamage, 2, "as two malformed records");
	if (cap.nsnapshots)
		printf("  bucket 0 of the kept snapshot has stack id %u\n",
		       cap.snapshots[0].buckets[0].stack_id);
	hp_capture_free(&cap);
}

HP_TEST(crafted_stacks_out_of_order)
{
	struct hp_craft c;
	struct hp_capture cap;
	static const uint64_t f0[] = {0x401000, 0x402000};

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, f0, 2);
	hp_craft_stacks(&c, 1, f0, 1); /* ids 1.. again */
	hp_craft_stacks(&c, 5, f0, 1); /* a gap */
	hp_craft_stacks(&c, 3, f0, 1); /* the right next id */
	if (craft_load(&c, "stacks-order.hpf", &cap))
		return;
	/* A gap is a record lost to damage: its ids are kept empty, so the
	 * stacks after it (and the snapshots using them) still load. An id
	 * range that goes back is damage. */
	expect_eq_u64(cap.ndamage, 2, "a repeated and a backward id range are damage");
	expect_eq_u64(cap.nstacks, 6, "ids 1..5 exist");
	if (cap.nstacks == 6) {
		expect_eq_u64(cap.stacks[3].depth + cap.stacks[4].depth, 0, "the gap is empty");
		expect_eq_u64(cap.stacks[5].depth, 2, "the stack after the gap is kept");
	}
	hp_capture_free(&cap);
}

HP_TEST(crafted_zstd_empty_payload)
{
	/* A record flagged zstd whose raw size is 0: a valid zstd frame of
	 * nothing. Legal, if odd; it must not trip the decoder. */
	struct hp_craft c;
	struct hp_capture cap;
	uint8_t z[64], frame[24];
	size_t zn = ZSTD_compress(z, sizeof z, "", 0, 1);

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	if (!expect_true(!ZSTD_isError(zn), "zstd makes an empty frame"))
		return;
	memcpy(frame, "HPRC", 4);
	frame[4] = HP_REC_TIMESERIES;
	frame[5] = 0;
	frame[6] = HP_FORMAT_FLAG_ZSTD;
	frame[7] = 0;
	for (int i = 0; i < 4; i++) {
		frame[8 + i] = (uint8_t)(zn >> (8 * i));
		frame[12 + i] = 0;
		frame[16 + i] = (uint8_t)(crc(z, zn) >> (8 * i));
	}
	uint32_t fc = crc(frame, 20);
	for (int i = 0; i < 4; i++)
		frame[20 + i] = (uint8_t)(fc >> (8 * i));
	hp_buf_put_bytes(&c.file, frame, sizeof frame);
	hp_buf_put_bytes(&c.file, z, zn);
	if (craft_load(&c, "zstd-empty.hpf", &cap))
		return;
	expect_eq_u64(cap.nrecords, 2, "both records are read");
	expect_eq_u64(cap.ndamage, 1, "an empty TIMESERIES payload is malformed (no count)");
	hp_capture_free(&cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}

/* ---- MAPS (format 1.5): the regions that hold the heap ------------------- */

/* A capture whose snapshot has these blocks and, unless nmaps is
 * (size_t)-1, a MAPS record of these regions for snapshot maps_seq
 * (written twice when twice). Stacks 1 and 2. */
static void craft_maps(const char *path, const struct hp_rec_block *blocks, size_t nblocks,
		       const struct hp_rec_map *maps, size_t nmaps, uint64_t maps_seq, int twice)
{
	static const uint64_t f0[] = {0x401000, 0x402000};
	static const struct hp_rec_bucket b[] = {
		{.stack_id = 1, .alloc_count = 3, .alloc_bytes = 1300},
		{.stack_id = 2, .alloc_count = 2, .alloc_bytes = 600},
	};
	struct hp_craft c;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, f0, 2);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXIT, b, 2);
	hp_rec_hists_put(&c.payload, &(struct hp_rec_hists){.seq = 1, .count = nblocks});
	for (size_t i = 0; i < nblocks; i++)
		hp_rec_block_put(&c.payload, &blocks[i]);
	hp_craft_emit(&c, HP_REC_BLOCKS);
	for (int k = 0; nmaps != (size_t)-1 && k < 1 + twice; k++) {
		hp_rec_hists_put(&c.payload,
				 &(struct hp_rec_hists){.seq = maps_seq, .count = nmaps});
		for (size_t i = 0; i < nmaps; i++)
			hp_rec_map_put(&c.payload, &maps[i]);
		hp_craft_emit(&c, HP_REC_MAPS);
	}
	hp_craft_write(&c, path);
}

static const struct hp_rec_block map_blocks[] = {
	{0x10010, 100, 1},        {0x10100, 200, 1}, {0x20000, 1000, 1}, /* brk */
	{0x7f0000000010, 400, 2},                                        /* the chunk */
	{0x7f0000100000, 200, 2},                                        /* in no region */
};

static const struct hp_rec_map map_regions[] = {
	{.start = 0x10000,
	 .size = 0x20000,
	 .kind = HP_MAP_BRK,
	 .perms = 3,
	 .rss_bytes = 0x8000,
	 .name = {"[heap]", 6}},
	{.start = 0x7f0000000000,
	 .size = 0x1000,
	 .kind = HP_MAP_CHUNK,
	 .perms = 3,
	 .rss_bytes = 0x1000,
	 .name = {"", 0}},
};

/* The analyzer's figures of a crafted map, exactly: each block in its
 * region, in use, the largest free stretch, fragmentation, the blocks in
 * none; and the region's name and kind as written. */
HP_TEST(crafted_maps_regions_are_measured)
{
	const char *path = tmp_path("maps.hpf");
	struct hp_capture cap;
	struct hp_map map;
	char err[512], *text;

	craft_maps(path, map_blocks, 5, map_regions, 2, 1, 0);
	if (!expect_eq_u64((uint64_t)hp_capture_load(path, &cap, err, sizeof err), 0, "loads"))
		return;
	expect_eq_u64(cap.ndamage, 0, "no damage");
	if (expect_eq_u64(cap.nsnapshots, 1, "one snapshot") &&
	    expect_true(cap.snapshots[0].has_maps, "with its regions") &&
	    expect_eq_u64((uint64_t)hp_map_build(&cap.snapshots[0], &map), 0, "built") &&
	    expect_eq_u64(map.n, 2, "two regions")) {
		const struct hp_map_region *r = map.regions;
		expect_str(r[0].name, "[heap]", "the brk heap's name");
		expect_eq_u64(r[0].count, 3, "brk: 3 blocks");
		expect_eq_u64(r[0].inuse_bytes, 1300, "brk: 1300 bytes in use");
		/* 0x101c8 .. 0x20000, longer than the 0x203e8 .. 0x30000 after */
		expect_eq_u64(r[0].largest_gap_bytes, 0x20000 - 0x101c8,
			      "brk: the gap before 0x20000");
		expect_eq_u64((uint64_t)(hp_map_fragmentation(&r[0]) * 1e6),
			      (uint64_t)((1.0 - 1300.0 / 32768.0) * 1e6), "brk: 1 - 1300 / 32 KiB");
		expect_eq_u64(r[1].kind, HP_MAP_CHUNK, "the chunk's kind");
		expect_eq_u64(r[1].count, 1, "chunk: 1 block");
		expect_eq_u64(r[1].largest_gap_bytes, 0x1000 - 0x10 - 400, "chunk: its tail");
		expect_eq_u64(map.outside_count, 1, "one block in no region");
		expect_eq_u64(map.outside_bytes, 200, "of 200 bytes");
		hp_map_free(&map);
	}
	hp_capture_free(&cap);
	text = hp_test_sh_out("%s/heapprof report --map %s 2>&1", hp_test_build(), path);
	expect_true(text &&
			    strstr(text, "  0x10000         brk   128.0 KiB  32.0 KiB   1.3 KiB"
					 "      3    63.6 KiB   96%\n") &&
			    strstr(text, "  outside the regions: 1 block, 200 B\n"),
		    "report --map: the brk heap's line, the block outside");
	if (text)
		printf("%s", text);
	free(text);
}

/* A MAPS record whose regions the recorder cannot have written: one line
 * says which, the record is skipped, the map is still drawn from the
 * blocks. */
HP_TEST(crafted_maps_bad_fields_one_line)
{
	static const struct {
		const char *name, *why;
		struct hp_rec_map second;
		uint64_t seq;
		int twice;
	} cases[] = {
		{"size0", "a region of size 0", {.start = 0x7f0000000000, .kind = 3}, 1, 0},
		{"wraps",
		 "past the end of the address space",
		 {.start = UINT64_MAX - 0xfff, .size = 0x2000, .kind = 3},
		 1,
		 0},
		{"overlap",
		 "out of address order, or overlapping",
		 {.start = 0x2f000, .size = 0x2000, .kind = 3},
		 1,
		 0},
		{"rss",
		 "more resident bytes than its size",
		 {.start = 0x7f0000000000, .size = 0x1000, .kind = 3, .rss_bytes = 0x2000},
		 1,
		 0},
		{"kind",
		 "a region of an unknown kind",
		 {.start = 0x7f0000000000, .size = 0x1000, .kind = 9},
		 1,
		 0},
		{"seq",
		 "its snapshot is not in the file",
		 {.start = 0x7f0000000000, .size = 0x1000, .kind = 3},
		 7,
		 0},
		{"twice",
		 "a second one for the same snapshot",
		 {.start = 0x7f0000000000, .size = 0x1000, .kind = 3},
		 1,
		 1},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct hp_rec_map m[2] = {map_regions[0], cases[i].second};
		char name[64], *err, *out;
		snprintf(name, sizeof name, "maps-%s.hpf", cases[i].name);
		craft_maps(tmp_path(name), map_blocks, 5, m, 2, cases[i].seq, cases[i].twice);
		err = hp_test_sh_out("%s/heapprof report --map %s 2>&1 >/dev/null", hp_test_build(),
				     tmp_path(name));
		out = hp_test_sh_out("%s/heapprof report --map %s 2>/dev/null", hp_test_build(),
				     tmp_path(name));
		expect_true(err && strstr(err, "MAPS record is malformed (") &&
				    strstr(err, cases[i].why) && strstr(err, "), skipped\n") &&
				    strchr(err, '\n') == err + strlen(err) - 1,
			    "one line says what is wrong");
		/* A second MAPS is dropped: the first stands. */
		expect_true(out && strstr(out, cases[i].twice ? "that hold the heap"
							      : "no mappings recorded"),
			    "the map is still drawn");
		if (err)
			printf("  %s: %s", cases[i].name, err);
		free(err);
		free(out);
	}
}
