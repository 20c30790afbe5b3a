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
 * frames, a record type from a later minor version, a longer file header,
 * zstd-compressed and plain payloads, a damaged record and a cut end.
 * Real captures (`heapprof run`) complement them; tests/fuzz/run.sh makes
 * both.
 *
 * Ordinary C, built with the fuzz rules from src/format/encode.c; exits
 * non-zero, saying why, when a file cannot be written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/format/encode.h"
#include "../../src/format/format.h"

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

	hp_buf_put_u(p, 4242);                   /* pid */
	hp_buf_put_u(p, 1);                      /* ppid */
	hp_buf_put_u(p, 1700000000123456789ull); /* start_realtime_ns */
	hp_buf_put_u(p, 987654321);              /* start_monotonic_ns */
	hp_buf_put_u(p, 4096);                   /* page_size */
	hp_buf_put_str(p, "/usr/local/bin/prog");
	hp_buf_put_u(p, 4);
	for (int i = 0; i < 4; i++)
		hp_buf_put_str(p, argv[i]);
	hp_buf_put_str(p, "0.1.0");
	hp_buf_put_u(p, 4096);                   /* sample_rate_bytes */
	hp_buf_put_u(p, HP_UNWIND_FP);
	hp_buf_put_u(p, 64);                     /* max_depth */
	hp_buf_put_u(p, HP_META_FOLLOW_FORK | HP_META_FORKED_CHILD);
	hp_buf_put_u(p, 12);                     /* dump_signal */
	hp_buf_put_u(p, 100);                    /* interval_ms */
	hp_buf_put_u(p, 1 << 20);                /* dump_every_bytes */
	hp_buf_put_u(p, 1 << 22);                /* dump_high_water_bytes */
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

	hp_buf_put_u(p, HP_MOD_LOAD);
	hp_buf_put_u(p, time);
	hp_buf_put_u(p, id);
	hp_buf_put_str(p, path);
	hp_buf_put_blob(p, build_id, sizeof build_id);
	hp_buf_put_u(p, bias);
	hp_buf_put_u(p, (uint64_t)nseg);
	for (int i = 0; i < nseg; i++) {
		hp_buf_put_u(p, 0x1000u * (uint64_t)(1 + 4 * i)); /* vaddr */
		hp_buf_put_u(p, 0x3000);                          /* memsz */
		hp_buf_put_u(p, 0x1000u * (uint64_t)i);           /* file offset */
		hp_buf_put_u(p, i ? 4 : 5);                       /* PF_R | PF_X, PF_R */
	}
}

static void modules(struct seed *s)
{
	struct hp_buf *p = &s->pl;

	hp_buf_put_u(p, 5);
	load(p, 0, 1, "/usr/local/bin/prog", 0x555555554000ull, 3);
	load(p, 0, 2, "/lib/x86_64-linux-gnu/libc.so.6", 0x7ffff7d80000ull, 2);
	load(p, 10, 3, "/tmp/libplugin.so", 0x7ffff7fb0000ull, 2);
	hp_buf_put_u(p, HP_MOD_UNLOAD);
	hp_buf_put_u(p, 20);
	hp_buf_put_u(p, 3);
	load(p, 30, 4, "/tmp/libplugin.so", 0x7ffff7fb0000ull, 1); /* same place, again */
	emit(s, HP_REC_MODULES);
	/* A second record, as after a later dlopen. */
	hp_buf_put_u(p, 1);
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

	hp_buf_put_u(p, first);
	hp_buf_put_u(p, n);
	for (size_t k = 0; k < n; k++) {
		hp_buf_put_u(p, depths[k]);
		hp_buf_put_u(p, bases[k % 4]);
		for (unsigned f = 1; f < depths[k]; f++)
			hp_buf_put_s(p, f % 2 ? -0x40 - (int64_t)f : 0x28 + (int64_t)f);
	}
	emit(s, HP_REC_STACKS);
}

static void snapshot(struct seed *s, uint64_t seq, uint64_t reason, const uint64_t *ids, size_t n)
{
	struct hp_buf *p = &s->pl;

	hp_buf_put_u(p, seq);
	hp_buf_put_u(p, 1000000 * seq); /* time */
	hp_buf_put_u(p, reason);
	hp_buf_put_u(p, reason == HP_SNAP_SIGNAL ? 12 : 0);
	hp_buf_put_u(p, 1000);          /* alloc_count */
	hp_buf_put_u(p, 65536);         /* alloc_bytes */
	hp_buf_put_u(p, 900);           /* free_count */
	hp_buf_put_u(p, 60000);         /* free_bytes */
	hp_buf_put_u(p, 30000);         /* peak_bytes */
	hp_buf_put_u(p, 120);           /* peak_count */
	hp_buf_put_u(p, 500000);        /* peak_time */
	hp_buf_put_u(p, 12);            /* stack_count */
	hp_buf_put_u(p, 3);             /* lost kinds: two known, one from the future */
	hp_buf_put_u(p, HP_LOST_UNWIND_FAILED);
	hp_buf_put_u(p, 3);
	hp_buf_put_u(p, 96);
	hp_buf_put_u(p, HP_LOST_REENTRANT_FREE);
	hp_buf_put_u(p, 1);
	hp_buf_put_u(p, 16);
	hp_buf_put_u(p, 40);
	hp_buf_put_u(p, 1);
	hp_buf_put_u(p, 1);
	hp_buf_put_u(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_u(p, ids[i]);
		hp_buf_put_u(p, i % 3);             /* type_tag */
		hp_buf_put_u(p, i % 2);             /* context_tag */
		hp_buf_put_u(p, i % 2 ? 0 : 4096);  /* size (sampled) */
		for (int k = 0; k < 8; k++)         /* alloc .. temp */
			hp_buf_put_u(p, (uint64_t)(k + 1) * (i + 1) * (k % 2 ? 4096 : 1));
	}
	emit(s, HP_REC_SNAPSHOT);
}

static void timeseries(struct seed *s, size_t n)
{
	struct hp_buf *p = &s->pl;

	hp_buf_put_u(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_s(p, i ? 10000000 : 5000);  /* time delta, the first absolute */
		hp_buf_put_u(p, 4096 * (i * i % 17)); /* heap_bytes */
		hp_buf_put_u(p, 1 << 21);             /* rss_bytes */
	}
	emit(s, HP_REC_TIMESERIES);
}

static void symbols(struct seed *s)
{
	struct hp_buf *p = &s->pl;
	static const char *strings[] = {"", "main", "work(int)", "std::vector<int>::push_back",
					"prog.c", "/usr/include/c++/12/bits/stl_vector.h"};
	static const uint64_t addrs[] = {0x7ffff7d81234ull, 0x555555555100ull, 0x555555555100ull - 0x41};

	hp_buf_put_u(p, 6);
	for (int i = 0; i < 6; i++)
		hp_buf_put_str(p, strings[i]);
	hp_buf_put_u(p, 3); /* a status per module */
	hp_buf_put_u(p, HP_SYMSTATUS_OK);
	hp_buf_put_u(p, HP_SYMSTATUS_MISSING);
	hp_buf_put_u(p, HP_SYMSTATUS_MISMATCH);
	hp_buf_put_u(p, 3); /* addresses, not sorted: the reader sorts */
	for (int a = 0; a < 3; a++) {
		hp_buf_put_u(p, addrs[a]);
		hp_buf_put_u(p, (uint64_t)a); /* 0, 1 and 2 frames */
		for (int f = 0; f < a; f++) {
			hp_buf_put_u(p, 1 + (uint64_t)(a + f) % 3); /* function */
			hp_buf_put_u(p, f ? 4 : 5);                  /* file */
			hp_buf_put_u(p, 10 + (uint64_t)f);           /* line */
			hp_buf_put_u(p, f + 1 < a);                  /* inlined into the next */
		}
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
	snapshot(s, 1, HP_SNAP_INTERVAL, ids1, 6);
	stacks(s, 10, later, 2); /* ids 6..9: a STACKS record lost */
	timeseries(s, 40);
	snapshot(s, 2, HP_SNAP_EXIT, ids2, 8);
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
