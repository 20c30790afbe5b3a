/*
 * gen_seeds.c - crafted captures for the fuzzer's seed corpus.
 *
 *     gen_seeds DIR
 *
 * writes into DIR a handful of captures built by hand with the encoder,
 * each record type with every kind of field the format has, so that the
 * fuzzer starts from inputs that reach every parser in capture.c: module
 * load and unload events, stacks deep and shallow (one past the 256 frames
 * a reader accepts), a gap in the stack ids, snapshots with lost counts and
 * buckets without a stack, a time series, embedded symbols with inlined
 * frames, a memory map (BLOCKS and MAPS), a record type from a later
 * minor version, a longer file header,
 * zstd-compressed and plain payloads, a damaged record and a cut end.
 * Real captures (`heapprof run`) complement them; tests/fuzz/run.sh makes
 * both.
 *
 * Ordinary C, built with the fuzz rules from src/format/encode.c (the
 * record schemas' encoders, src/format/records.h); exits
 * non-zero, saying why, when a file cannot be written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/format/records.h"

/* A capture being built: the file so far, the payload of the next record,
 * and the zstd context when records are to be compressed. */
struct seed {
	struct hp_buf file, pl;
	ZSTD_CCtx *zstd;
};

static void begin(struct seed *s, int compress)
{
	memset(s, 0, sizeof *s);
	s->file.grow = s->pl.grow = hp_buf_grow_heap;
	s->zstd = compress ? ZSTD_createCCtx() : NULL;
	hp_format_put_file_header(&s->file);
}

static void emit(struct seed *s, unsigned type)
{
	hp_format_put_record(&s->file, type, s->pl.data, s->pl.len, s->zstd);
	s->pl.len = 0;
}

static void meta(struct seed *s, int extra)
{
	struct hp_buf *p = &s->pl;
	static const char *argv[] = {"prog", "--size", "4096", ""};

	hp_rec_meta_put(p, &(struct hp_rec_meta){
		.pid = 4242,
		.ppid = 1,
		.start_realtime_ns = 1700000000123456789ull,
		.start_monotonic_ns = 987654321,
		.page_size = 4096,
		.program = hp_rec_str_of("/usr/local/bin/prog"),
	});
	hp_rec_count_put(p, 4);
	for (int i = 0; i < 4; i++)
		hp_rec_str_put(p, hp_rec_str_of(argv[i]));
	hp_rec_meta_options_put(p, &(struct hp_rec_meta_options){
		.recorder_version = hp_rec_str_of("0.1.0"),
		.sample_rate_bytes = 4096,
		.unwind = HP_UNWIND_FP,
		.max_depth = 64,
		.flags = HP_META_FOLLOW_FORK | HP_META_FORKED_CHILD,
		.dump_signal = 12,
		.interval_ms = 100,
		.dump_every_bytes = 1 << 20,
		.high_water_bytes = 1 << 22,
	});
	if (extra) {                             /* a later minor's fields */
		hp_buf_put_u(p, 77);
		hp_buf_put_str(p, "from the future");
	}
	emit(s, HP_REC_META);
}

static void load(struct hp_buf *p, uint64_t time, uint64_t id, const char *path, uint64_t bias,
		 int nseg)
{
	static const uint8_t build_id[20] = {0x52, 0x9b, 0xea, 0xd9, 0x8a, 0x32, 0x84, 0xe6, 0xa2, 0x21,
					     0x2b, 0x08, 0xef, 0xca, 0x07, 0x21, 0xa8, 0x10, 0x90, 0x1a};

	hp_rec_module_event_put(p, &(struct hp_rec_module_event){
		.kind = HP_MOD_LOAD,
		.time_ns = time,
		.module_id = id,
		.path = hp_rec_str_of(path),
		.build_id = {(const char *)build_id, sizeof build_id},
		.bias = bias,
		.segment_count = (uint64_t)nseg,
	});
	for (int i = 0; i < nseg; i++)
		hp_rec_segment_put(p, &(struct hp_rec_segment){
			.vaddr = 0x1000u * (uint64_t)(1 + 4 * i),
			.memsz = 0x3000,
			.offset = 0x1000u * (uint64_t)i,
			.flags = i ? 4 : 5, /* PF_R | PF_X, PF_R */
		});
}

static void modules(struct seed *s)
{
	struct hp_buf *p = &s->pl;

	hp_rec_count_put(p, 5);
	load(p, 0, 1, "/usr/local/bin/prog", 0x555555554000ull, 3);
	load(p, 0, 2, "/lib/x86_64-linux-gnu/libc.so.6", 0x7ffff7d80000ull, 2);
	load(p, 10, 3, "/tmp/libplugin.so", 0x7ffff7fb0000ull, 2);
	hp_rec_module_event_put(p, &(struct hp_rec_module_event){.kind = HP_MOD_UNLOAD,
								  .time_ns = 20, .module_id = 3});
	load(p, 30, 4, "/tmp/libplugin.so", 0x7ffff7fb0000ull, 1); /* same place, again */
	emit(s, HP_REC_MODULES);
	/* A second record, as after a later dlopen. */
	hp_rec_count_put(p, 1);
	load(p, 40, 5, "linux-vdso.so.1", 0x7ffff7fc1000ull, 1);
	emit(s, HP_REC_MODULES);
}

/* Stacks first .. first + n - 1, the k-th of depth depths[k], frames in
 * the modules above (and one outside every module). */
static void stacks(struct seed *s, uint64_t first, const unsigned *depths, size_t n)
{
	struct hp_buf *p = &s->pl;
	static const uint64_t bases[] = {0x555555555100ull, 0x7ffff7d81234ull, 0x7ffff7fb1010ull,
					 0x1234};

	hp_rec_stacks_put(p, &(struct hp_rec_stacks){.first_id = first, .count = n});
	for (size_t k = 0; k < n; k++) {
		uint64_t f[300] = {bases[k % 4]};
		for (unsigned i = 1; i < depths[k]; i++)
			f[i] = f[i - 1] + (uint64_t)(i % 2 ? -0x40 - (int64_t)i : 0x28 + (int64_t)i);
		hp_rec_stack_put(p, f, depths[k]);
	}
	emit(s, HP_REC_STACKS);
}

static void snapshot(struct seed *s, uint64_t seq, uint64_t reason, const uint64_t *ids, size_t n)
{
	struct hp_buf *p = &s->pl;

	hp_rec_snapshot_put(p, &(struct hp_rec_snapshot){
		.seq = seq,
		.time_ns = 1000000 * seq,
		.reason = reason,
		.signo = reason == HP_SNAP_SIGNAL ? 12 : 0,
		.alloc_count = 1000,
		.alloc_bytes = 65536,
		.free_count = 900,
		.free_bytes = 60000,
		.peak_bytes = 30000,
		.peak_count = 120,
		.peak_time_ns = 500000,
		.stack_count = 12,
	});
	hp_rec_count_put(p, 3); /* lost kinds: two known, one from the future */
	hp_rec_lost_put(p, &(struct hp_rec_lost){HP_LOST_UNWIND_FAILED, 3, 96});
	hp_rec_lost_put(p, &(struct hp_rec_lost){HP_LOST_REENTRANT_FREE, 1, 16});
	hp_rec_lost_put(p, &(struct hp_rec_lost){40, 1, 1});
	hp_rec_count_put(p, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t v[8]; /* alloc .. temp */
		for (int k = 0; k < 8; k++)
			v[k] = (uint64_t)(k + 1) * (i + 1) * (k % 2 ? 4096 : 1);
		hp_rec_bucket_put(p, &(struct hp_rec_bucket){
			.stack_id = (uint32_t)ids[i],
			.type_tag = (uint32_t)(i % 3),
			.origin_tag = (uint32_t)(i % 2),
			.size = i % 2 ? 0 : 4096, /* sampled */
			.alloc_count = v[0], .alloc_bytes = v[1], .free_count = v[2],
			.free_bytes = v[3], .peak_count = v[4], .peak_bytes = v[5],
			.temp_count = v[6], .temp_bytes = v[7],
		});
	}
	emit(s, HP_REC_SNAPSHOT);
}

static void timeseries(struct seed *s, size_t n)
{
	struct hp_buf *p = &s->pl;

	uint64_t t = 0, prev = 0;

	hp_rec_count_put(p, n);
	for (size_t i = 0; i < n; i++) {
		t += i ? 10000000 : 5000; /* time delta, the first absolute */
		hp_rec_sample_put(p, &(struct hp_rec_sample){t, 4096 * (i * i % 17), 1 << 21}, &prev);
	}
	emit(s, HP_REC_TIMESERIES);
}

/* A TIMELINE record of n ticks, three sites each, with their tags (format
 * 1.5's tail: one pair per site of the record). */
static void timeline(struct seed *s, size_t n)
{
	struct hp_buf *p = &s->pl;
	uint64_t prev = 0;

	hp_rec_count_put(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_rec_tick_put(p, &(struct hp_rec_tick){100000000 * (i + 1), 3}, &prev);
		for (uint32_t k = 0; k < 3; k++)
			hp_rec_site_put(p, &(struct hp_rec_site){k + 1, k + 1, 0, i * k, 64 * i * k,
								 0, 0});
	}
	hp_rec_count_put(p, 3 * n);
	for (uint32_t i = 0; i < 3 * n; i++)
		hp_rec_site_tags_put(p, &(struct hp_rec_site){.type_tag = i % 2, .origin_tag = i % 3});
	emit(s, HP_REC_TIMELINE);
}

static void symbols(struct seed *s)
{
	struct hp_buf *p = &s->pl;
	static const char *strings[] = {"", "main", "work(int)", "std::vector<int>::push_back",
					"prog.c", "/usr/include/c++/12/bits/stl_vector.h"};
	static const uint64_t addrs[] = {0x7ffff7d81234ull, 0x555555555100ull, 0x555555555100ull - 0x41};

	hp_rec_count_put(p, 6);
	for (int i = 0; i < 6; i++)
		hp_rec_str_put(p, hp_rec_str_of(strings[i]));
	hp_rec_count_put(p, 3); /* a status per module */
	hp_buf_put_u(p, HP_SYMSTATUS_OK);
	hp_buf_put_u(p, HP_SYMSTATUS_MISSING);
	hp_buf_put_u(p, HP_SYMSTATUS_MISMATCH);
	hp_rec_count_put(p, 3); /* addresses, not sorted: the reader sorts */
	for (int a = 0; a < 3; a++) {
		hp_rec_symaddr_put(p, &(struct hp_rec_symaddr){addrs[a], (uint64_t)a}); /* 0..2 frames */
		for (int f = 0; f < a; f++)
			hp_rec_symframe_put(p, &(struct hp_rec_symframe){
				.function = 1 + (uint32_t)(a + f) % 3,
				.file = f ? 4 : 5,
				.line = 10 + (uint32_t)f,
				.flags = f + 1 < a ? HP_SYMFRAME_INLINED : 0, /* into the next */
			});
	}
	emit(s, HP_REC_SYMBOLS);
}

static int finish(struct seed *s, const char *dir, const char *name, size_t keep)
{
	char path[4096];
	FILE *f;
	size_t len = keep && keep < s->file.len ? keep : s->file.len;
	int ok;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	ok = !s->file.err && !s->pl.err && (f = fopen(path, "wb")) != NULL;
	if (ok) {
		ok = fwrite(s->file.data, 1, len, f) == len;
		ok = fclose(f) == 0 && ok;
	}
	if (!ok)
		fprintf(stderr, "gen_seeds: %s: cannot write: %s\n", path,
			s->file.err || s->pl.err ? "out of memory" : strerror(errno));
	free(s->file.data);
	free(s->pl.data);
	ZSTD_freeCCtx(s->zstd);
	return ok ? 0 : -1;
}

/* The whole capture: every record type, more than once. */
/* The memory map of snapshot seq: its blocks (BLOCKS), then the regions
 * holding them (MAPS, format 1.5), one of each kind, a block in none. */
static void memmap(struct seed *s, uint64_t seq)
{
	static const struct hp_rec_block b[] = {
		{0x55550010, 100, 1},    {0x55550100, 200, 2},    {0x7f0000000010, 1 << 20, 3},
		{0x7f1004000900, 64, 4}, {0x7f2000000000, 32, 5}, {0x7fff00000000, 8, 0},
	};
	static const struct hp_rec_map m[] = {
		{0x55550000, 0x21000, HP_MAP_BRK, 3, 0x3000, {"[heap]", 6}},
		{0x7f0000000000, 0x101000, HP_MAP_CHUNK, 3, 0x11000, {"", 0}},
		{0x7f1004000000, 0x21000, HP_MAP_ARENA, 3, 0x1000, {"", 0}},
		{0x7f2000000000, 0x1000, HP_MAP_OTHER, 7, 0, {"/dev/zero (deleted)", 19}},
	};

	hp_rec_hists_put(&s->pl, &(struct hp_rec_hists){.seq = seq, .count = 6});
	for (size_t i = 0; i < 6; i++)
		hp_rec_block_put(&s->pl, &b[i]);
	emit(s, HP_REC_BLOCKS);
	hp_rec_hists_put(&s->pl, &(struct hp_rec_hists){.seq = seq, .count = 4});
	for (size_t i = 0; i < 4; i++)
		hp_rec_map_put(&s->pl, &m[i]);
	emit(s, HP_REC_MAPS);
}

static void full(struct seed *s)
{
	static const unsigned depths[] = {1, 2, 5, 16, 257};
	static const uint64_t ids1[] = {1, 2, 0, 3, 4, 5};
	static const uint64_t ids2[] = {5, 4, 3, 2, 1, 10, 11, 0};
	static const unsigned later[] = {3, 1};

	meta(s, 0);
	modules(s);
	stacks(s, 1, depths, 5);
	timeseries(s, 3);
	timeline(s, 4);
	snapshot(s, 1, HP_SNAP_INTERVAL, ids1, 6);
	stacks(s, 10, later, 2); /* ids 6..9: a STACKS record lost */
	timeseries(s, 40);
	snapshot(s, 2, HP_SNAP_EXIT, ids2, 8);
	memmap(s, 2);
	symbols(s);
}

int main(int argc, char **argv)
{
	struct seed s;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	begin(&s, 0);
	bad |= finish(&s, argv[1], "header_only.hpf", 0);

	begin(&s, 0);
	full(&s);
	bad |= finish(&s, argv[1], "full_plain.hpf", 0);

	begin(&s, 1);
	full(&s);
	bad |= finish(&s, argv[1], "full_zstd.hpf", 0);

	begin(&s, 1); /* cut inside the last record */
	full(&s);
	bad |= finish(&s, argv[1], "full_cut.hpf", s.file.len - 7);

	/* A later minor: a longer header, extra fields, an unknown record. */
	begin(&s, 0);
	s.file.len = 0;
	{
		uint8_t h[48] = "HEAPPROF";
		h[8] = HP_FORMAT_MAJOR;
		h[10] = 9;
		h[12] = sizeof h;
		uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), h, 28);
		for (int i = 0; i < 4; i++)
			h[28 + i] = (uint8_t)(c >> (8 * i));
		hp_buf_put_bytes(&s.file, h, sizeof h);
	}
	meta(&s, 1);
	hp_buf_put_str(&s.pl, "a record type this reader does not know");
	emit(&s, 42);
	{
		static const unsigned d[] = {3};
		static const uint64_t ids[] = {1};
		stacks(&s, 1, d, 1);
		snapshot(&s, 1, HP_SNAP_API, ids, 1);
	}
	bad |= finish(&s, argv[1], "newer_minor.hpf", 0);

	/* One payload byte flipped (its CRC no longer matches): the reader
	 * skips that record and goes on. */
	begin(&s, 0);
	meta(&s, 0);
	size_t at = s.file.len;
	modules(&s);
	s.file.data[at + HP_FORMAT_FRAME_BYTES + 3] ^= 0x20;
	{
		static const unsigned d[] = {2, 4};
		static const uint64_t ids[] = {1, 2};
		stacks(&s, 1, d, 2);
		snapshot(&s, 1, HP_SNAP_FATAL, ids, 2);
	}
	bad |= finish(&s, argv[1], "damaged_record.hpf", 0);
	return bad ? 1 : 0;
}
