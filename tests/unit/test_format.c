/*
 * test_format.c - the capture format's encoder and decoder
 * (src/format/encode.c, decode.c) on captures built in memory, and the
 * stdio-free formatter (src/common/fmt.c) the recorder names files with,
 * and the record schemas' encoders and decoders (src/format/records.h).
 *
 * Each test builds a capture with hp_buf (grown with realloc, as the
 * analyzer does) and walks it back with hp_reader and hp_cursor, checking
 * bytes and values exactly. Damage on real files is tests/fault/'s job;
 * the few damage cases here pin the reader's contract on tiny inputs where
 * the expected offsets are known by construction.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/common/fmt.h"
#include "../../src/format/decode.h"
#include "../../src/format/encode.h"
#include "../../src/format/format.h"
#include "../../src/format/records.h"
#include "../harness/harness.h"

static struct hp_buf new_buf(void)
{
	return (struct hp_buf){.grow = hp_buf_grow_heap};
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* ---- the file header ---------------------------------------------------- */

HP_TEST(file_header_bytes)
{
	struct hp_buf b = new_buf();
	static const uint8_t zero[12];

	hp_format_put_file_header(&b);
	expect_eq_u64(b.err, 0, "the header is written");
	expect_eq_u64(b.len, HP_FORMAT_FILE_HEADER_BYTES, "the header is 32 bytes");
	if (b.len == HP_FORMAT_FILE_HEADER_BYTES) {
		expect_true(memcmp(b.data, "HEAPPROF", 8) == 0, "magic at 0");
		expect_eq_u64(le16(b.data + 8), HP_FORMAT_MAJOR, "major at 8");
		expect_eq_u64(le16(b.data + 10), HP_FORMAT_MINOR, "minor at 10");
		expect_eq_u64(le32(b.data + 12), 32, "header size at 12");
		expect_true(memcmp(b.data + 16, zero, 12) == 0, "reserved bytes 16..27 are zero");
		expect_eq_u64(le32(b.data + 28), crc(b.data, 28), "CRC-32 of bytes 0..27 at 28");
	}
	free(b.data);
}

HP_TEST(reader_header_only)
{
	struct hp_buf b = new_buf();
	struct hp_reader r;
	struct hp_record rec;

	hp_format_put_file_header(&b);
	expect_eq_u64(hp_reader_open(&r, b.data, b.len), 0, "a bare header opens");
	expect_eq_u64(r.minor, HP_FORMAT_MINOR, "the reader reports the file's minor");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "no records: end at once");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "and stays at the end");
	hp_reader_close(&r);
	free(b.data);
}

/* ---- records ------------------------------------------------------------ */

/* A payload with every field kind. */
static void put_sample_payload(struct hp_buf *p)
{
	static const uint8_t blob[] = {0, 1, 2, 0xff, 0};

	hp_buf_put_u(p, 0);
	hp_buf_put_u(p, 127);
	hp_buf_put_u(p, 128);
	hp_buf_put_u(p, UINT64_MAX);
	hp_buf_put_s(p, -1);
	hp_buf_put_s(p, INT64_MIN);
	hp_buf_put_s(p, INT64_MAX);
	hp_buf_put_str(p, "/usr/bin/program");
	hp_buf_put_str(p, NULL);
	hp_buf_put_str(p, "");
	hp_buf_put_blob(p, blob, sizeof blob);
}

static void check_sample_payload(const uint8_t *payload, size_t len)
{
	struct hp_cursor c = {payload, payload + len, 0};
	const uint8_t *s;
	size_t n;

	expect_eq_u64(hp_cursor_u(&c), 0, "u 0");
	expect_eq_u64(hp_cursor_u(&c), 127, "u 127");
	expect_eq_u64(hp_cursor_u(&c), 128, "u 128");
	expect_eq_u64(hp_cursor_u(&c), UINT64_MAX, "u UINT64_MAX");
	expect_eq_u64((uint64_t)hp_cursor_s(&c), (uint64_t)-1, "s -1");
	expect_eq_u64((uint64_t)hp_cursor_s(&c), (uint64_t)INT64_MIN, "s INT64_MIN");
	expect_eq_u64((uint64_t)hp_cursor_s(&c), (uint64_t)INT64_MAX, "s INT64_MAX");
	s = hp_cursor_blob(&c, &n);
	expect_eq_u64(n, 16, "str length");
	expect_true(n == 16 && memcmp(s, "/usr/bin/program", 16) == 0, "str bytes, no NUL");
	hp_cursor_blob(&c, &n);
	expect_eq_u64(n, 0, "a NULL str is written empty");
	hp_cursor_blob(&c, &n);
	expect_eq_u64(n, 0, "an empty str");
	s = hp_cursor_blob(&c, &n);
	expect_eq_u64(n, 5, "blob length");
	expect_true(n == 5 && s[0] == 0 && s[3] == 0xff && s[4] == 0, "blob bytes, NULs kept");
	expect_eq_u64(c.err, 0, "no cursor error");
	expect_true(c.p == c.end, "the payload is consumed exactly");
}

HP_TEST(record_round_trip_plain)
{
	struct hp_buf p = new_buf(), f = new_buf();
	struct hp_reader r;
	struct hp_record rec;

	put_sample_payload(&p);
	hp_format_put_file_header(&f);
	expect_eq_u64((uint64_t)hp_format_put_record(&f, HP_REC_META, p.data, p.len, NULL), 0,
		      "put_record without zstd succeeds");
	expect_eq_u64(f.len, 32 + 24 + p.len, "header + frame + payload, nothing else");

	/* The frame, byte by byte. */
	const uint8_t *fr = f.data + 32;
	expect_true(memcmp(fr, "HPRC", 4) == 0, "tag HPRC");
	expect_eq_u64(le16(fr + 4), HP_REC_META, "type at 4");
	expect_eq_u64(le16(fr + 6), 0, "flags 0: stored as is");
	expect_eq_u64(le32(fr + 8), p.len, "stored size at 8");
	expect_eq_u64(le32(fr + 12), p.len, "raw size at 12");
	expect_eq_u64(le32(fr + 16), crc(fr + 24, p.len), "payload CRC at 16");
	expect_eq_u64(le32(fr + 20), crc(fr, 20), "frame CRC at 20");
	expect_true(memcmp(fr + 24, p.data, p.len) == 0, "the payload follows the frame");

	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "one record");
	expect_eq_u64(rec.type, HP_REC_META, "its type");
	expect_eq_u64(rec.offset, 32, "right after the header");
	expect_eq_u64(rec.len, p.len, "its raw length");
	expect_true(rec.len == p.len && memcmp(rec.payload, p.data, p.len) == 0,
		    "the payload, byte for byte");
	check_sample_payload(rec.payload, rec.len);
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "then the end");
	hp_reader_close(&r);
	free(p.data);
	free(f.data);
}

HP_TEST(record_round_trip_zstd_small_stays_plain)
{
	struct hp_buf p = new_buf(), f = new_buf();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct hp_reader r;
	struct hp_record rec;

	put_sample_payload(&p); /* well under the 128 bytes worth compressing */
	hp_format_put_file_header(&f);
	expect_eq_u64((uint64_t)hp_format_put_record(&f, HP_REC_MODULES, p.data, p.len, cctx), 0,
		      "put_record with zstd succeeds");
	expect_eq_u64(le16(f.data + 32 + 6), 0, "a small payload is stored as is");
	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "reads");
	check_sample_payload(rec.payload, rec.len);
	hp_reader_close(&r);
	ZSTD_freeCCtx(cctx);
	free(p.data);
	free(f.data);
}

HP_TEST(record_round_trip_zstd_compressed)
{
	struct hp_buf p = new_buf(), f = new_buf();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct hp_reader r;
	struct hp_record rec;

	/* 64 Ki small varints that repeat: compresses very well. */
	for (unsigned i = 0; i < 65536; i++)
		hp_buf_put_u(&p, i % 100);
	expect_eq_u64(p.err, 0, "the payload is built");
	hp_format_put_file_header(&f);
	expect_eq_u64((uint64_t)hp_format_put_record(&f, HP_REC_SNAPSHOT, p.data, p.len, cctx),
		      0, "put_record with zstd succeeds");

	const uint8_t *fr = f.data + 32;
	uint32_t stored = le32(fr + 8);
	expect_eq_u64(le16(fr + 6) & HP_FORMAT_FLAG_ZSTD, HP_FORMAT_FLAG_ZSTD,
		      "the zstd flag is set for a large compressible payload");
	expect_eq_u64(le32(fr + 12), p.len, "raw size is the uncompressed length");
	expect_true(stored < p.len / 10, "stored size is much smaller than raw");
	expect_eq_u64(f.len, 32 + 24 + stored, "the file holds the compressed bytes only");
	expect_eq_u64(le32(fr + 16), crc(fr + 24, stored), "the CRC covers the stored bytes");
	expect_eq_u64(ZSTD_getFrameContentSize(fr + 24, stored), p.len,
		      "the stored payload is one zstd frame of the raw size");

	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "reads");
	expect_eq_u64(rec.type, HP_REC_SNAPSHOT, "type");
	expect_eq_u64(rec.len, p.len, "decompressed to the raw length");
	expect_true(rec.len == p.len && memcmp(rec.payload, p.data, p.len) == 0,
		    "decompressed payload is byte-identical");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "then the end");
	hp_reader_close(&r);
	ZSTD_freeCCtx(cctx);
	free(p.data);
	free(f.data);
}

HP_TEST(record_zstd_very_compressible_after_others_reads)
{
	/* The size and lifetime histograms of a million buckets, mostly zero:
	 * 10 MiB from about 1,000 bytes, after the records that compress far
	 * less (stacks). The bound on what a file decompresses to is the
	 * file's (256 times the stored bytes so far, plus 1 MiB a record), not
	 * each record's: the recorder's capture of 2^20 stacks read as
	 * damaged ("claims 10485770 bytes from 1000 compressed"). Alone, such
	 * a record is still refused. */
	struct hp_buf big = new_buf(), zeros = new_buf(), f = new_buf(), g = new_buf();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct hp_reader r;
	struct hp_record rec;
	uint64_t x = 88172645463325252ull;

	for (unsigned i = 0; i < 6000; i++) { /* 48 KB that does not compress */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		hp_buf_put_bytes(&big, &x, sizeof x);
	}
	for (unsigned i = 0; i < 10u << 20; i++)
		hp_buf_put_u(&zeros, 0);
	expect_eq_u64(big.err | zeros.err, 0, "the payloads are built");
	hp_format_put_file_header(&f);
	hp_format_put_record(&f, HP_REC_STACKS, big.data, big.len, cctx);
	hp_format_put_record(&f, HP_REC_HISTOGRAMS, zeros.data, zeros.len, cctx);
	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "the stacks read");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "the 10 MiB of zeros read");
	expect_eq_u64(rec.len, zeros.len, "whole");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "then the end");
	hp_reader_close(&r);
	hp_format_put_file_header(&g);
	hp_format_put_record(&g, HP_REC_HISTOGRAMS, zeros.data, zeros.len, cctx);
	expect_eq_u64(hp_reader_open(&r, g.data, g.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_DAMAGED,
		      "alone, 10 MiB from 1 KB is more than the bound");
	hp_reader_close(&r);
	ZSTD_freeCCtx(cctx);
	free(big.data);
	free(zeros.data);
	free(f.data);
	free(g.data);
}

HP_TEST(record_zstd_incompressible_stays_plain)
{
	struct hp_buf f = new_buf();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint8_t noise[4096];
	uint64_t x = 0x9e3779b97f4a7c15u;
	struct hp_reader r;
	struct hp_record rec;

	for (size_t i = 0; i < sizeof noise; i++) { /* xorshift: no redundancy */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		noise[i] = (uint8_t)(x >> 32);
	}
	hp_format_put_file_header(&f);
	expect_eq_u64((uint64_t)hp_format_put_record(&f, HP_REC_STACKS, noise, sizeof noise, cctx),
		      0, "put_record succeeds");
	expect_eq_u64(le16(f.data + 32 + 6), 0, "compression that does not save is not used");
	expect_eq_u64(le32(f.data + 32 + 8), sizeof noise, "stored = raw");
	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "reads");
	expect_true(rec.len == sizeof noise && memcmp(rec.payload, noise, sizeof noise) == 0,
		    "the payload, byte for byte");
	hp_reader_close(&r);
	ZSTD_freeCCtx(cctx);
	free(f.data);
}

HP_TEST(records_in_order_with_unknown_type)
{
	struct hp_buf f = new_buf(), big = new_buf();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct hp_reader r;
	struct hp_record rec;
	/* A later minor version's record type, between known ones. */
	static const unsigned types[] = {HP_REC_META, HP_REC_MODULES, 0x7777, HP_REC_STACKS,
					 HP_REC_TIMESERIES, HP_REC_SNAPSHOT, HP_REC_SYMBOLS};
	enum { N = sizeof types / sizeof types[0] };
	size_t offsets[N];

	for (unsigned i = 0; i < 1000; i++)
		hp_buf_put_u(&big, 5);
	hp_format_put_file_header(&f);
	for (unsigned i = 0; i < N; i++) {
		uint8_t payload[8];
		offsets[i] = f.len;
		if (i % 2) { /* odd ones large and compressed, to mix both kinds */
			big.data[0] = (uint8_t)i;
			hp_format_put_record(&f, types[i], big.data, big.len, cctx);
		} else {
			payload[0] = (uint8_t)i;
			/* record i carries i+1 bytes: sizes differ, so a
			 * wrong offset shows */
			memset(payload + 1, 0xa0 + i, sizeof payload - 1);
			hp_format_put_record(&f, types[i], payload, i + 1, cctx);
		}
	}
	expect_eq_u64(f.err, 0, "every record is written");

	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	for (unsigned i = 0; i < N; i++) {
		int st = hp_reader_next(&r, &rec);
		expect_eq_u64(st, HP_READ_OK, "each record reads");
		if (st != HP_READ_OK)
			break;
		expect_eq_u64(rec.type, types[i], "records come back in order, unknown type too");
		expect_eq_u64(rec.offset, offsets[i], "at the offset they were written");
		expect_eq_u64(rec.len, i % 2 ? big.len : i + 1, "with their raw length");
		expect_eq_u64(rec.len ? rec.payload[0] : 0xff, i, "and their own payload");
		if (i % 2)
			expect_true(memcmp(rec.payload + 1, big.data + 1, big.len - 1) == 0,
				    "large payload intact");
	}
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "then the end");
	hp_reader_close(&r);
	ZSTD_freeCCtx(cctx);
	free(big.data);
	free(f.data);
}

HP_TEST(record_empty_payload)
{
	struct hp_buf f = new_buf();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct hp_reader r;
	struct hp_record rec;

	hp_format_put_file_header(&f);
	hp_format_put_record(&f, HP_REC_SYMBOLS, NULL, 0, NULL);
	hp_format_put_record(&f, HP_REC_TIMESERIES, NULL, 0, cctx);
	expect_eq_u64(f.len, 32 + 24 + 24, "empty payloads take a frame only");
	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "opens");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "first empty record");
	expect_eq_u64(rec.len, 0, "length 0");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "second empty record");
	expect_eq_u64(rec.type, HP_REC_TIMESERIES, "its type");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_END, "end");
	hp_reader_close(&r);
	ZSTD_freeCCtx(cctx);
	free(f.data);
}

/* ---- hp_buf errors ------------------------------------------------------ */

static int grow_never(struct hp_buf *b, size_t need)
{
	(void)b;
	(void)need;
	return -ENOSPC;
}

HP_TEST(buf_error_is_sticky)
{
	uint8_t mem[40];
	struct hp_buf b = {.data = mem, .cap = sizeof mem, .grow = grow_never};
	uint8_t payload[64] = {0};

	hp_format_put_file_header(&b);
	expect_eq_u64(b.len, 32, "the header fits in 40 bytes");
	expect_eq_u64((uint64_t)hp_format_put_record(&b, HP_REC_META, payload, sizeof payload, NULL),
		      (uint64_t)-ENOSPC, "a record that does not fit fails with the grow error");
	expect_eq_u64((uint64_t)b.err, (uint64_t)-ENOSPC, "the error is kept in err");
	expect_eq_u64(b.len, 32, "nothing half-written");
	hp_buf_put_u(&b, 1);
	hp_buf_put_str(&b, "x");
	expect_eq_u64(b.len, 32, "later puts are no-ops, even ones that would fit");
	expect_true(hp_buf_reserve(&b, 1) == NULL, "reserve refuses after an error");

	struct hp_buf nogrow = {0};
	hp_buf_put_u(&nogrow, 1);
	expect_eq_u64((uint64_t)nogrow.err, (uint64_t)-ENOMEM, "no grow function: -ENOMEM");
}

/* A histogram is its classes up to the last one not zero, each run
 * written as its length then its values: every last class from none to
 * the top, in both runs, reads back as written, in exactly 2 + n bytes
 * (values below 128). */
HP_TEST(hist_runs_end_at_the_last_class_set)
{
	for (unsigned top = 0; top <= HP_HIST_SIZE_CLASSES; top++) {
		struct hp_rec_hist h = {0}, back;
		struct hp_buf b = new_buf();
		struct hp_cursor c;
		unsigned life_top = top % (HP_HIST_LIFE_CLASSES + 1);
		char what[64];

		if (top)
			h.size[top - 1] = top, h.size[0] = 1;
		if (life_top)
			h.life[life_top - 1] = 100 + life_top;
		hp_rec_hist_put(&b, &h);
		snprintf(what, sizeof what, "size classes to %u, lifetimes to %u: bytes", top,
			 life_top);
		expect_eq_u64(b.len, 2 + top + life_top, what);
		c = (struct hp_cursor){b.data, b.data + b.len, 0};
		memset(&back, 0xff, sizeof back);
		expect_eq_u64((uint64_t)hp_rec_hist_get(&c, &back), 0, "reads");
		expect_true(memcmp(&back, &h, sizeof h) == 0, "reads back as written");
		free(b.data);
	}
}

/* hp_rec_hist_put_one writes the bytes hp_rec_hist_put writes for the
 * histogram it stands for: every size class and lifetime class (none
 * included), with counts of 0, 1, 127, 128 and 2^32 - 1. */
HP_TEST(hist_put_one_is_hist_put)
{
	static const uint64_t counts[] = {0, 1, 127, 128, 0xffffffffu};
	unsigned differ = 0, cases = 0;

	for (unsigned sc = 0; sc <= HP_HIST_SIZE_CLASSES; sc++)
		for (unsigned lc = 0; lc <= HP_HIST_LIFE_CLASSES; lc++)
			for (unsigned k = 0; k < 5; k++) {
				struct hp_rec_hist h = {0};
				struct hp_buf full = new_buf(), one = new_buf();
				uint64_t sn = counts[k], ln = counts[4 - k];

				if (sc)
					h.size[sc - 1] = sn;
				if (lc)
					h.life[lc - 1] = ln;
				hp_rec_hist_put(&full, &h);
				hp_rec_hist_put_one(&one, sc, sn, lc, ln);
				cases++;
				differ += full.len != one.len ||
					  memcmp(full.data, one.data, full.len) != 0;
				free(full.data);
				free(one.data);
			}
	expect_eq_u64(cases, 25 * 18 * 5, "cases");
	expect_eq_u64(differ, 0, "histograms whose bytes differ");

	struct hp_buf b = new_buf();
	hp_rec_hist_put_one(&b, HP_HIST_SIZE_CLASSES + 1, 1, 0, 0);
	expect_eq_u64((uint64_t)b.err, (uint64_t)-EINVAL, "a class past the last is refused");
	expect_eq_u64(b.len, 0, "and nothing written");
	free(b.data);
}

/* hp_rec_stack_put writes a stack as its depth, its first frame and the
 * differences between frames (signed), one value at a time as
 * hp_buf_put_u and hp_buf_put_s write them: deltas up and down, of one
 * byte to ten, depths 1 to 200. */
HP_TEST(stack_put_is_depth_first_then_deltas)
{
	static const uint64_t steps[] = {0, 1, 63, 64, 0x1234, (uint64_t)-1, (uint64_t)-4096,
					 1ull << 40, 0x8000000000000000ull};
	unsigned differ = 0;

	for (uint32_t depth = 1; depth <= 200; depth += depth < 8 ? 1 : 37) {
		uint64_t frames[200];
		struct hp_buf ref = new_buf(), b = new_buf();

		frames[0] = 0x7f0000001000ull + depth;
		for (uint32_t i = 1; i < depth; i++)
			frames[i] = frames[i - 1] + steps[(i * 7 + depth) % 9];
		hp_buf_put_u(&ref, depth);
		hp_buf_put_u(&ref, frames[0]);
		for (uint32_t i = 1; i < depth; i++)
			hp_buf_put_s(&ref, (int64_t)(frames[i] - frames[i - 1]));
		hp_rec_stack_put(&b, frames, depth);
		differ += ref.len != b.len || memcmp(ref.data, b.data, b.len) != 0;
		free(ref.data);
		free(b.data);
	}
	expect_eq_u64(differ, 0, "stacks whose bytes differ");
}

/* A part that is its field list (hp_rec_bucket_put) is its fields' u
 * varints in order, as hp_buf_put_u writes them, from 1 byte to 10; a
 * buffer that cannot grow takes none of it. */
HP_TEST(bucket_put_is_its_fields_in_order)
{
	struct hp_rec_bucket v = {.stack_id = 1, .type_tag = 0xffffffffu, .origin_tag = 128,
				  .size = 0, .alloc_count = UINT64_MAX, .alloc_bytes = 1ull << 35,
				  .free_count = 127, .free_bytes = 16384, .peak_count = 3,
				  .peak_bytes = 1ull << 63, .temp_count = 7, .temp_bytes = 300};
	struct hp_buf ref = new_buf(), b = new_buf();
	uint8_t small[64];
	struct hp_buf full = {.data = small, .cap = sizeof small};

	hp_buf_put_u(&ref, v.stack_id);
	hp_buf_put_u(&ref, v.type_tag);
	hp_buf_put_u(&ref, v.origin_tag);
	hp_buf_put_u(&ref, v.size);
	hp_buf_put_u(&ref, v.alloc_count);
	hp_buf_put_u(&ref, v.alloc_bytes);
	hp_buf_put_u(&ref, v.free_count);
	hp_buf_put_u(&ref, v.free_bytes);
	hp_buf_put_u(&ref, v.peak_count);
	hp_buf_put_u(&ref, v.peak_bytes);
	hp_buf_put_u(&ref, v.temp_count);
	hp_buf_put_u(&ref, v.temp_bytes);
	hp_rec_bucket_put(&b, &v);
	expect_eq_u64(b.len, ref.len, "bytes");
	expect_true(b.len == ref.len && memcmp(b.data, ref.data, b.len) == 0, "the same bytes");
	hp_rec_bucket_put(&full, &v);
	expect_eq_u64((uint64_t)full.err, (uint64_t)-ENOMEM, "no room, no grow: -ENOMEM");
	expect_eq_u64(full.len, 0, "and nothing written");
	free(ref.data);
	free(b.data);
}

HP_TEST(record_too_large_refused)
{
	struct hp_buf f = new_buf();
	uint8_t one = 0;

	/* The size is checked before the payload is touched. */
	expect_eq_u64((uint64_t)hp_format_put_record(&f, HP_REC_META, &one,
						     (size_t)HP_FORMAT_MAX_PAYLOAD_BYTES + 1, NULL),
		      (uint64_t)-EFBIG, "a payload over 1 GiB is refused");
	expect_eq_u64((uint64_t)f.err, (uint64_t)-EFBIG, "sticky");
	free(f.data);
}

/* hp_format_crc is zlib's CRC-32 (what the reader checks, decode.c) at every
 * length and alignment, whole or continued piece by piece: its folding
 * path (PCLMULQDQ, 64 bytes and up) and the byte path for the rest. */
HP_TEST(crc_is_zlibs)
{
	static uint8_t buf[70000];
	uint64_t x = 88172645463325252ull;
	int bad = 0;

	for (size_t i = 0; i < sizeof buf; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	for (size_t n = 0; n <= 1100; n++)
		for (size_t off = 0; off < 16; off += 5)
			bad += hp_format_crc(0, buf + off, n) !=
			       (uint32_t)crc32(0, buf + off, (uInt)n);
	expect_eq_u64((uint64_t)bad, 0, "lengths 0 to 1100 at offsets 0, 5, 10, 15");
	expect_eq_u64(hp_format_crc(0, buf, sizeof buf), (uint32_t)crc32(0, buf, sizeof buf),
		      "70,000 bytes");
	expect_eq_u64(hp_format_crc(hp_format_crc(hp_format_crc(0, buf, 100), buf + 100, 4000),
				    buf + 4100, 77),
		      (uint32_t)crc32(0, buf, 4177), "continued in pieces of 100, 4,000 and 77");
	expect_eq_u64(hp_format_crc(0, (const uint8_t *)"123456789", 9), 0xcbf43926,
		      "the check value of CRC-32 (zlib's polynomial)");
}

/* ---- cursors ------------------------------------------------------------ */

HP_TEST(cursor_bounds)
{
	/* u 300, then a blob claiming 10 bytes with 2 present. */
	static const uint8_t p[] = {0xac, 0x02, 0x0a, 'a', 'b'};
	struct hp_cursor c = {p, p + sizeof p, 0};
	size_t n = 99;
	const uint8_t *s;

	expect_eq_u64(hp_cursor_u(&c), 300, "first u");
	s = hp_cursor_blob(&c, &n);
	expect_eq_u64(c.err, 1, "a blob longer than the payload sets err");
	expect_eq_u64(n, 0, "with length 0");
	expect_true(s != NULL, "and a non-NULL pointer, safe to copy 0 bytes from");
	expect_eq_u64(hp_cursor_u(&c), 0, "reads after an error return 0");
	expect_eq_u64(c.err, 1, "err stays set");

	struct hp_cursor e = {p, p, 0};
	expect_eq_u64(hp_cursor_u(&e), 0, "reading an empty payload returns 0");
	expect_eq_u64(e.err, 1, "and sets err");

	static const uint8_t cut[] = {0x80, 0x80};
	struct hp_cursor t = {cut, cut + sizeof cut, 0};
	hp_cursor_u(&t);
	expect_eq_u64(t.err, 1, "a varint cut by the payload's end sets err");

	static const uint8_t cnt[] = {5, 6};
	struct hp_cursor k = {cnt, cnt + sizeof cnt, 0};
	expect_eq_u64(hp_cursor_count(&k, 5), 5, "a count at its maximum is fine");
	expect_eq_u64(k.err, 0, "no error");
	expect_eq_u64(hp_cursor_count(&k, 5), 0, "a count above its maximum reads as 0");
	expect_eq_u64(k.err, 1, "and sets err");
}

/* ---- damage, on inputs small enough to know every offset ---------------- */

/* Three plain records of 10, 20, 30 bytes (types 1, 2, 3): frames at 32,
 * 66, 110; the file is 164 bytes. */
static struct hp_buf three_records(void)
{
	struct hp_buf f = new_buf();
	uint8_t payload[30];

	hp_format_put_file_header(&f);
	for (unsigned i = 1; i <= 3; i++) {
		memset(payload, (int)i, sizeof payload);
		hp_format_put_record(&f, i, payload, 10 * i, NULL);
	}
	return f;
}

static unsigned walk(const uint8_t *data, size_t size, unsigned *types, int *ndamaged)
{
	struct hp_reader r;
	struct hp_record rec;
	unsigned n = 0;
	int st, guard = 0;

	*ndamaged = 0;
	if (hp_reader_open(&r, data, size) < 0)
		return 0;
	while ((st = hp_reader_next(&r, &rec)) != HP_READ_END && guard++ < 100) {
		if (st == HP_READ_DAMAGED) {
			expect_true(strncmp(r.msg, "offset ", 7) == 0, "damage names its offset");
			(*ndamaged)++;
		} else if (n < 8) {
			types[n++] = rec.type;
		}
	}
	expect_true(guard < 100, "the walk ends");
	hp_reader_close(&r);
	return n;
}

HP_TEST(reader_resyncs_after_payload_damage)
{
	struct hp_buf f = three_records();
	unsigned types[8];
	int nd;

	expect_eq_u64(f.len, 164, "the layout this test assumes");
	f.data[66 + 24 + 5] ^= 0x10; /* inside record 2's payload */
	expect_eq_u64(walk(f.data, f.len, types, &nd), 2, "records 1 and 3 survive");
	expect_eq_u64(nd, 1, "one damage");
	expect_true(types[0] == 1 && types[1] == 3, "in order");
	free(f.data);
}

HP_TEST(reader_resyncs_after_frame_damage)
{
	struct hp_buf f = three_records();
	unsigned types[8];
	int nd;

	for (unsigned at = 66; at < 66 + 24; at++) { /* every byte of record 2's frame */
		f.data[at] ^= 0x01;
		expect_eq_u64(walk(f.data, f.len, types, &nd), 2, "records 1 and 3 survive");
		expect_eq_u64(nd, 1, "one damage");
		expect_true(types[0] == 1 && types[1] == 3, "in order");
		f.data[at] ^= 0x01;
	}
	free(f.data);
}

HP_TEST(reader_truncation_reported_once)
{
	struct hp_buf f = three_records();
	unsigned types[8];
	int nd;

	/* Inside record 3's frame, then inside its payload. */
	expect_eq_u64(walk(f.data, 110 + 10, types, &nd), 2, "cut in a frame: two records");
	expect_eq_u64(nd, 1, "one truncation");
	expect_eq_u64(walk(f.data, 110 + 24 + 29, types, &nd), 2, "cut in a payload: two records");
	expect_eq_u64(nd, 1, "one truncation");
	/* On a record boundary the cut cannot be seen: the format has no
	 * trailer, and a shorter capture is a valid capture. */
	expect_eq_u64(walk(f.data, 110, types, &nd), 2, "cut between records: two records");
	expect_eq_u64(nd, 0, "and no damage");
	free(f.data);
}

HP_TEST(reader_plain_size_mismatch)
{
	struct hp_buf f = three_records();
	uint8_t *fr = f.data + 66;
	unsigned types[8];
	int nd;

	/* A consistent frame (valid CRCs) that says stored 20, raw 21, no zstd. */
	put_le32(fr + 12, 21);
	put_le32(fr + 20, crc(fr, 20));
	expect_eq_u64(walk(f.data, f.len, types, &nd), 2, "records 1 and 3 survive");
	expect_eq_u64(nd, 1, "the mismatch is damage");
	free(f.data);
}

HP_TEST(reader_bad_zstd)
{
	struct hp_buf f = three_records();
	uint8_t *fr = f.data + 66;
	unsigned types[8];
	int nd;

	/* Claims to be zstd; the payload is twenty 0x02 bytes. */
	fr[6] = HP_FORMAT_FLAG_ZSTD;
	put_le32(fr + 12, 100);
	put_le32(fr + 20, crc(fr, 20));
	expect_eq_u64(walk(f.data, f.len, types, &nd), 2, "records 1 and 3 survive");
	expect_eq_u64(nd, 1, "a payload that does not decompress is damage");
	free(f.data);
}

HP_TEST(reader_oversized_claim)
{
	struct hp_buf f = three_records();
	uint8_t *fr = f.data + 66;
	unsigned types[8];
	int nd;

	put_le32(fr + 8, HP_FORMAT_MAX_PAYLOAD_BYTES + 1);
	put_le32(fr + 20, crc(fr, 20));
	expect_eq_u64(walk(f.data, f.len, types, &nd), 2, "records 1 and 3 survive");
	expect_eq_u64(nd, 1, "a size over the format's limit is damage, not an allocation");
	free(f.data);
}

/* The file header as a later writer might make it: a higher minor and a
 * larger header whose extra bytes this reader does not know. */
HP_TEST(reader_newer_minor_and_longer_header)
{
	struct hp_buf f = new_buf();
	struct hp_reader r;
	struct hp_record rec;
	uint8_t *h;
	uint8_t payload[3] = {1, 2, 3};

	hp_format_put_file_header(&f);
	hp_buf_put_bytes(&f, "EXTENSION-16-BYT", 16);
	hp_format_put_record(&f, HP_REC_META, payload, sizeof payload, NULL);
	h = f.data;
	h[10] = 9;                 /* minor 9 */
	put_le32(h + 12, 32 + 16); /* header size 48 */
	put_le32(h + 28, crc(h, 28));
	expect_eq_u64(hp_reader_open(&r, f.data, f.len), 0, "a newer minor opens");
	expect_eq_u64(r.minor, 9, "its minor is reported");
	expect_eq_u64(hp_reader_next(&r, &rec), HP_READ_OK, "the first record is found");
	expect_eq_u64(rec.offset, 48, "after the longer header");
	hp_reader_close(&r);
	free(f.data);
}

HP_TEST(reader_refuses_bad_headers)
{
	struct hp_buf f = three_records();
	struct hp_reader r;

	expect_true(hp_reader_open(&r, f.data, 0) == -EINVAL, "empty input refused");
	expect_true(hp_reader_open(&r, f.data, 20) == -EINVAL, "a cut header refused");
	expect_true(strstr(r.msg, "truncated") != NULL, "and called truncated");

	f.data[8] = 2; /* major 2, CRC recomputed */
	put_le32(f.data + 28, crc(f.data, 28));
	expect_true(hp_reader_open(&r, f.data, f.len) == -EINVAL, "another major refused");
	char want[32];
	snprintf(want, sizeof want, "version 2.%d", HP_FORMAT_MINOR);
	expect_true(strstr(r.msg, want) != NULL, "the message names the version");

	f.data[8] = 1;
	put_le32(f.data + 12, 16); /* header size below 32 */
	put_le32(f.data + 28, crc(f.data, 28));
	expect_true(hp_reader_open(&r, f.data, f.len) == -EINVAL, "header size 16 refused");
	put_le32(f.data + 12, 1000); /* past the end */
	put_le32(f.data + 28, crc(f.data, 28));
	expect_true(hp_reader_open(&r, f.data, f.len) == -EINVAL, "header size past the end refused");

	put_le32(f.data + 12, 32);
	f.data[20] = 1; /* reserved byte, CRC not recomputed */
	expect_true(hp_reader_open(&r, f.data, f.len) == -EINVAL, "header CRC mismatch refused");
	expect_true(strstr(r.msg, "checksum") != NULL, "and called a checksum mismatch");
	free(f.data);
}

/* ---- hp_fmt ------------------------------------------------------------- */

/* hp_vfmt without the printf attribute, for formats gcc would warn about. */
static size_t fmt_raw(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = hp_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

HP_TEST(fmt_conversions)
{
	char b[128];
	size_t n;

	n = hp_fmt(b, sizeof b, "%s=%d", "pid", 1234);
	expect_str(b, "pid=1234", "%s and %d");
	expect_eq_u64(n, 8, "returns the length");
	hp_fmt(b, sizeof b, "%d %d %d", 0, -1, INT_MIN);
	expect_str(b, "0 -1 -2147483648", "%d: zero, negatives, INT_MIN");
	hp_fmt(b, sizeof b, "%u %u", 0u, UINT_MAX);
	expect_str(b, "0 4294967295", "%u");
	hp_fmt(b, sizeof b, "%x %x %x", 0u, 0xdeadbeefu, 255u);
	expect_str(b, "0 deadbeef ff", "%x, lower case, no prefix");
	hp_fmt(b, sizeof b, "%llu %llu", 0ull, (unsigned long long)UINT64_MAX);
	expect_str(b, "0 18446744073709551615", "%llu up to UINT64_MAX");
	hp_fmt(b, sizeof b, "%lld %ld", (long long)INT64_MIN, -5L);
	expect_str(b, "-9223372036854775808 -5", "%lld INT64_MIN, %ld");
	hp_fmt(b, sizeof b, "%llx", (unsigned long long)UINT64_MAX);
	expect_str(b, "ffffffffffffffff", "%llx");
	hp_fmt(b, sizeof b, "%zu", (size_t)SIZE_MAX);
	expect_str(b, "18446744073709551615", "%zu");
	hp_fmt(b, sizeof b, "%c%c 100%%", 'o', 'k');
	expect_str(b, "ok 100%", "%c and %%");
	hp_fmt(b, sizeof b, "heapprof.%s.%d.%d.hpf", "known", 4242, 3);
	expect_str(b, "heapprof.known.4242.3.hpf", "the recorder's file name");
	fmt_raw(b, sizeof b, "%s", (const char *)NULL); /* gcc warns through hp_fmt */
	expect_str(b, "(null)", "a NULL string");
	hp_fmt(b, sizeof b, "%s", "");
	expect_str(b, "", "an empty string");
}

HP_TEST(fmt_unknown_and_trailing_percent)
{
	char b[64];

	fmt_raw(b, sizeof b, "a%qb");
	expect_str(b, "a%qb", "an unknown conversion is copied as is");
	fmt_raw(b, sizeof b, "end%");
	expect_str(b, "end", "a trailing % is dropped, not read past");
	fmt_raw(b, sizeof b, "end%ll");
	expect_str(b, "end", "a trailing %ll is dropped, not read past");
}

HP_TEST(fmt_truncation)
{
	char b[16];
	size_t n;

	memset(b, 'X', sizeof b);
	n = hp_fmt(b, 5, "%s", "hello world");
	expect_str(b, "hell", "truncated to cap - 1, NUL-terminated");
	expect_eq_u64(n, 4, "returns the length written");
	expect_eq_u64((unsigned char)b[5], 'X', "nothing written past cap");

	n = hp_fmt(b, 4, "%d", -123456);
	expect_str(b, "-12", "a number cut in the middle");
	expect_eq_u64(n, 3, "length 3");

	n = hp_fmt(b, 8, "%llu", (unsigned long long)UINT64_MAX);
	expect_str(b, "1844674", "a long number cut");

	memset(b, 'X', sizeof b);
	n = hp_fmt(b, 1, "%s", "abc");
	expect_eq_u64(n, 0, "cap 1: nothing but the NUL");
	expect_eq_u64(b[0], 0, "NUL-terminated");
	expect_eq_u64((unsigned char)b[1], 'X', "nothing past it");

	b[0] = 'X';
	n = hp_fmt(b, 0, "%s", "abc");
	expect_eq_u64(n, 0, "cap 0 writes nothing");
	expect_eq_u64((unsigned char)b[0], 'X', "not even a NUL");

	n = hp_fmt(b, sizeof b, "%s", "exactly 15 char");
	expect_str(b, "exactly 15 char", "a string of exactly cap - 1 fits");
	expect_eq_u64(n, 15, "length 15");
}

HP_TEST(errname_known_and_unknown)
{
	expect_str(hp_errname(ENOENT), "no such file or directory", "ENOENT");
	expect_str(hp_errname(ENOSPC), "no space left on device", "ENOSPC");
	expect_str(hp_errname(-1), "error", "unknown values get a generic name");
}

/* --- the record schemas (records.h) ------------------------------------ */

/* Each part's bytes are its fields in the order of format.h's tables,
 * and its decoder gives back what its encoder was given. */
HP_TEST(record_parts_bytes_and_round_trip)
{
	struct hp_buf b = new_buf();
	struct hp_rec_bucket in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 300}, out;
	struct hp_rec_module_event ev;
	struct hp_rec_segment seg;
	struct hp_rec_sample sm;
	struct hp_rec_str str;
	uint64_t prev = 0;
	static const uint8_t want[] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0xac, 0x02,   /* the bucket */
		1, 7, 3, 2, '/', 'x', 1, 0xee, 0x10, 1,           /* a load ... */
		0x10, 0x20, 0, 5,                                 /* ... its segment */
		2, 9, 3,                                          /* an unload */
		0x14, 100, 120, 0x09, 50, 60,                     /* samples at 10, 5 */
	};

	hp_rec_bucket_put(&b, &in);
	hp_rec_module_event_put(&b, &(struct hp_rec_module_event){
		.kind = HP_MOD_LOAD, .time_ns = 7, .module_id = 3,
		.path = hp_rec_str_of("/x"), .build_id = {"\xee", 1}, .bias = 0x10,
		.segment_count = 1});
	hp_rec_segment_put(&b, &(struct hp_rec_segment){0x10, 0x20, 0, 5});
	hp_rec_module_event_put(&b, &(struct hp_rec_module_event){
		.kind = HP_MOD_UNLOAD, .time_ns = 9, .module_id = 3,
		.path = hp_rec_str_of("not written for an unload")});
	hp_rec_sample_put(&b, &(struct hp_rec_sample){10, 100, 120}, &prev);
	hp_rec_sample_put(&b, &(struct hp_rec_sample){5, 50, 60}, &prev);
	if (!expect_eq_u64(b.len, sizeof want, "the parts' size") ||
	    !expect_eq_u64(memcmp(b.data, want, sizeof want), 0, "the parts' bytes")) {
		free(b.data);
		return;
	}

	struct hp_cursor c = {b.data, b.data + b.len, 0};
	expect_eq_u64(hp_rec_bucket_get(&c, &out), 0, "bucket decodes");
	int same = 1;
#define SAME(kind, type, name) same &= in.name == out.name;
	HP_REC_BUCKET(SAME)
	expect_eq_u64(same, 1, "the same bucket, field by field");
	expect_eq_u64(hp_rec_module_event_get(&c, &ev), 0, "load decodes");
	expect_eq_u64(ev.kind * 1000 + ev.time_ns * 100 + ev.module_id, 1703, "kind, time, id");
	expect_eq_u64(ev.path.len == 2 && memcmp(ev.path.p, "/x", 2) == 0, 1, "path");
	expect_eq_u64(ev.build_id.len == 1 && (uint8_t)ev.build_id.p[0] == 0xee, 1, "build-id");
	expect_eq_u64(ev.bias * 10 + ev.segment_count, 0x10 * 10 + 1, "bias, segments");
	expect_eq_u64(hp_rec_segment_get(&c, &seg), 0, "segment decodes");
	expect_eq_u64(seg.vaddr + seg.memsz + seg.offset + seg.flags, 0x35, "segment fields");
	expect_eq_u64(hp_rec_module_event_get(&c, &ev), 0, "unload decodes");
	expect_eq_u64(ev.kind * 100 + ev.time_ns * 10 + ev.module_id, 293, "unload fields");
	expect_eq_u64(ev.path.len, 0, "no path for an unload");
	prev = 0;
	expect_eq_u64(hp_rec_sample_get(&c, &sm, &prev), 0, "sample decodes");
	expect_eq_u64(sm.time_ns * 10000 + sm.heap_bytes * 10 + sm.rss_bytes, 101120, "first");
	expect_eq_u64(hp_rec_sample_get(&c, &sm, &prev), 0, "sample decodes");
	expect_eq_u64(sm.time_ns, 5, "a negative delta: time 5 after 10");
	expect_eq_u64(c.p == c.end && !c.err, 1, "all read");
	expect_eq_u64(hp_rec_str_get(&c, &str), -EINVAL, "past the end is an error");
	free(b.data);
}

/* A field that does not fit its struct member is refused, never
 * truncated: a tag of 2^32 + 5 is not tag 5, nor a line of 2^32 line 0. */
HP_TEST(record_fields_out_of_range_are_refused)
{
	struct hp_buf b = new_buf();
	struct hp_rec_bucket v;
	struct hp_rec_symframe f;
	struct hp_rec_module_event ev;

	hp_buf_put_u(&b, 1);
	hp_buf_put_u(&b, (1ull << 32) + 5); /* type_tag */
	for (int i = 0; i < 10; i++)
		hp_buf_put_u(&b, 0);
	struct hp_cursor c = {b.data, b.data + b.len, 0};
	expect_eq_u64(hp_rec_bucket_get(&c, &v), -EINVAL, "a 33-bit type tag");
	b.len = 0;
	for (int i = 0; i < 12; i++) /* the largest that fit: 3 x 32 bits, 9 x 64 */
		hp_buf_put_u(&b, i < 3 ? UINT32_MAX : UINT64_MAX);
	c = (struct hp_cursor){b.data, b.data + b.len, 0};
	expect_eq_u64(hp_rec_bucket_get(&c, &v), 0, "the largest values that fit");
	expect_eq_u64(v.stack_id, UINT32_MAX, "stack id");
	expect_eq_u64(v.temp_bytes, UINT64_MAX, "temp bytes");
	b.len = 0;
	hp_buf_put_u(&b, 1);          /* function */
	hp_buf_put_u(&b, 2);          /* file */
	hp_buf_put_u(&b, 1ull << 32); /* line */
	hp_buf_put_u(&b, HP_SYMFRAME_INLINED);
	c = (struct hp_cursor){b.data, b.data + b.len, 0};
	expect_eq_u64(hp_rec_symframe_get(&c, &f), -EINVAL, "a line of 2^32");
	b.len = 0;
	hp_buf_put_u(&b, 3); /* neither load nor unload */
	hp_buf_put_u(&b, 0);
	hp_buf_put_u(&b, 0);
	c = (struct hp_cursor){b.data, b.data + b.len, 0};
	expect_eq_u64(hp_rec_module_event_get(&c, &ev), -EINVAL, "an unknown event kind");
	free(b.data);
}

/* A tail field (a later minor's) reads as 0 when the payload ends first,
 * as the snapshots of format 1.0 and the symbols of 1.1 do. */
HP_TEST(record_tail_absent_reads_zero)
{
	struct hp_buf b = new_buf();
	struct hp_rec_snapshot_tail t = {.recorder_bytes = 99};
	struct hp_rec_symbols_tail st = {.image = 99};

	struct hp_cursor c = {(const uint8_t *)"", (const uint8_t *)"", 0};
	expect_eq_u64(hp_rec_snapshot_tail_get(&c, &t), 0, "no tail is no error");
	expect_eq_u64(t.recorder_bytes, 0, "and reads 0");
	expect_eq_u64(hp_rec_symbols_tail_get(&c, &st), 0, "no image");
	expect_eq_u64(st.image, 0, "is image 0");
	hp_rec_snapshot_tail_put(&b, &(struct hp_rec_snapshot_tail){.recorder_bytes = 4096});
	c = (struct hp_cursor){b.data, b.data + b.len, 0};
	expect_eq_u64(hp_rec_snapshot_tail_get(&c, &t), 0, "a tail");
	expect_eq_u64(t.recorder_bytes, 4096, "its value");
	free(b.data);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
