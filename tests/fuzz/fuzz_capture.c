/*
 * fuzz_capture.c - libFuzzer target: any bytes, read as a capture file.
 *
 * The model: whatever the bytes, hp_capture_load_mem either refuses them
 * with a reason or loads what it can and lists the damage; it never reads or
 * writes out of bounds, never hits undefined behaviour, never leaks, never
 * hangs, and never asks for memory out of proportion to the input (libFuzzer's
 * -malloc_limit_mb/-rss_limit_mb). What it loads then goes through what the
 * analyzer does without the binaries (exercise.h): hp_capture_last,
 * hp_capture_module_of and hp_capture_symbols_of on every frame of every
 * stack, every bucket of every snapshot; then through every view the
 * commands show (views.h: report text and JSON by each dimension, with
 * the timeline, histograms and memory map, html, diff, the exports and
 * the flame graph, symbols from the SYMBOLS record only, into /dev/null),
 * under the same promises; and hp_capture_free.
 *
 * Every record carries two CRCs and the file header one, so random byte
 * flips almost never get past the checksums and the payload parsers would
 * go untested. The custom mutator therefore works at three levels, chosen
 * at random for each mutation:
 *   - raw bytes, checksums left as they fall: the damage and resync paths;
 *   - raw bytes, then every checksum recomputed: frame fields (sizes, types,
 *     flags) that lie with a valid CRC;
 *   - one record at a time: its payload decompressed, mutated, recompressed
 *     (or not) and reframed; records duplicated, dropped, swapped, retyped,
 *     cut short. This is what reaches the field parsers in capture.c.
 * The cross-over splices two captures at record boundaries, so that (say)
 * the SYMBOLS of one meet the STACKS of another.
 *
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined from
 * the sources (Makefile, "--- fuzzing ---"); see tests/fuzz/README.md.
 * Single-threaded, as libFuzzer calls it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/format/capture.h"
#include "../../src/format/format.h"
#include "exercise.h"
#include "views.h"

/* libFuzzer's own byte-level mutator, for payloads and raw bytes. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_capture cap;
	char err[512] = "";

	if (hp_capture_load_mem(data, size, &cap, err, sizeof err) != 0) {
		if (!err[0])
			broken("hp_capture_load_mem failed without saying why");
		return 0;
	}
	if (cap.file_bytes != size)
		broken("file_bytes is %zu for %zu bytes", cap.file_bytes, size);
	exercise_images(&cap);
	exercise_all_views(&cap);
	exercise_lean(data, size, &cap);
	hp_capture_free(&cap);
	return 0;
}

/* ---- the capture's framing, read independently of src/format ------------ */

#define HEADER_BYTES HP_FORMAT_FILE_HEADER_BYTES
#define FRAME_BYTES HP_FORMAT_FRAME_BYTES
#define MAX_RECORDS 512 /* a 64 KiB input holds at most 2730 empty records */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* Where records start: the header's own size when it is sane, else 32;
 * size when the data is not a capture at all. */
static size_t first_record(const uint8_t *d, size_t size)
{
	size_t h;

	if (size < HEADER_BYTES || memcmp(d, HP_FORMAT_MAGIC, 8) != 0)
		return size;
	h = get32(d + 12);
	return h >= HEADER_BYTES && h <= size ? h : HEADER_BYTES;
}

static int is_frame_at(const uint8_t *d, size_t size, size_t at)
{
	return at + FRAME_BYTES <= size && memcmp(d + at, HP_FORMAT_RECORD_TAG, 4) == 0;
}

/* The whole records, in order: [off[i], end[i]). Garbage between them is
 * skipped the way a reader resyncs, by looking for the next tag. */
struct records {
	size_t n;
	size_t off[MAX_RECORDS], end[MAX_RECORDS];
};

static void find_records(const uint8_t *d, size_t size, struct records *rs)
{
	size_t at = first_record(d, size);

	rs->n = 0;
	while (at + FRAME_BYTES <= size && rs->n < MAX_RECORDS) {
		if (!is_frame_at(d, size, at)) {
			at++;
			continue;
		}
		size_t stored = get32(d + at + 8);
		if (stored > size - at - FRAME_BYTES)
			break;
		rs->off[rs->n] = at;
		rs->end[rs->n++] = at + FRAME_BYTES + stored;
		at += FRAME_BYTES + stored;
	}
}

/* Makes every checksum right again: the file header's, and both of every
 * frame's (only the frame's own for a record cut short, which the reader
 * must then report as truncated). */
static void fix_checksums(uint8_t *d, size_t size)
{
	size_t at = first_record(d, size);

	if (size >= HEADER_BYTES && memcmp(d, HP_FORMAT_MAGIC, 8) == 0)
		put32(d + 28, crc(d, 28));
	while (at + FRAME_BYTES <= size) {
		if (!is_frame_at(d, size, at)) {
			at++;
			continue;
		}
		uint8_t *f = d + at;
		size_t stored = get32(f + 8);
		int whole = stored <= size - at - FRAME_BYTES;
		if (whole)
			put32(f + 16, crc(f + FRAME_BYTES, stored));
		put32(f + 20, crc(f, 20));
		if (!whole)
			break;
		at += FRAME_BYTES + stored;
	}
}

/* ---- building the mutated file ------------------------------------------- */

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64*: deterministic for a given seed, as libFuzzer wants. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

struct out {
	uint8_t *p;
	size_t len, cap;
	int over; /* sticky: the result would not fit */
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->over || n > o->cap - o->len) {
		o->over = 1;
		return;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

/* One record: a frame for payload[0..len) (zstd-compressed when asked),
 * of the given type, checksums right. */
static void put_record(struct out *o, unsigned type, const uint8_t *payload, size_t len,
		       int compress)
{
	uint8_t frame[FRAME_BYTES];
	uint8_t *z = NULL;
	const uint8_t *stored = payload;
	size_t nstored = len;

	if (compress) {
		size_t bound = ZSTD_compressBound(len);
		z = malloc(bound);
		size_t n = z ? ZSTD_compress(z, bound, payload, len, 1) : 0;
		if (!z || ZSTD_isError(n)) {
			free(z);
			o->over = 1;
			return;
		}
		stored = z;
		nstored = n;
	}
	memcpy(frame, HP_FORMAT_RECORD_TAG, 4);
	frame[4] = (uint8_t)type;
	frame[5] = (uint8_t)(type >> 8);
	frame[6] = compress ? HP_FORMAT_FLAG_ZSTD : 0;
	frame[7] = 0;
	put32(frame + 8, (uint32_t)nstored);
	put32(frame + 12, (uint32_t)len);
	put32(frame + 16, crc(stored, nstored));
	put32(frame + 20, crc(frame, 20));
	put(o, frame, sizeof frame);
	put(o, stored, nstored);
	free(z);
}

/* Record i with its payload mutated by libFuzzer, compressed or not. */
static void mutate_payload(struct out *o, const uint8_t *d, size_t size, const struct records *rs,
			   size_t i, size_t max_size, uint64_t *rnd)
{
	const uint8_t *f = d + rs->off[i];
	unsigned type = f[4] | (unsigned)f[5] << 8, flags = f[6] | (unsigned)f[7] << 8;
	size_t stored = rs->end[i] - rs->off[i] - FRAME_BYTES, raw = get32(f + 12), len;
	size_t rest = size - (rs->end[i] - rs->off[i]);
	size_t budget = max_size > rest + FRAME_BYTES ? max_size - rest - FRAME_BYTES : 0;
	int compress = (flags & HP_FORMAT_FLAG_ZSTD) != 0;
	uint8_t *pl;

	/* A payload larger than the input limit is not worth opening (its
	 * size field may lie, too): its stored bytes are mutated as they are,
	 * and so are those of a zstd frame that does not decompress. */
	if (compress && raw > max_size)
		compress = 0;
	if (compress && raw > budget)
		budget = raw; /* may still fit once compressed again */
	if (stored > budget)
		budget = stored; /* checked when the result is put together */
	if (budget == 0)
		budget = 1;
	pl = malloc(budget);
	if (!pl) {
		o->over = 1;
		return;
	}
	len = compress ? ZSTD_decompress(pl, budget, f + FRAME_BYTES, stored) : 0;
	if (!compress || ZSTD_isError(len)) {
		compress = 0;
		len = stored;
		memcpy(pl, f + FRAME_BYTES, len);
	}
	if (len == 0)
		pl[len++] = (uint8_t)next_rand(rnd);
	len = LLVMFuzzerMutate(pl, len, budget);
	if (next_rand(rnd) % 8 == 0)
		compress = !compress;
	put(o, d, rs->off[i]);
	put_record(o, type, pl, len, compress);
	put(o, d + rs->end[i], size - rs->end[i]);
	free(pl);
}

/* One structural mutation; returns the new size, or 0 when none applies. */
static size_t mutate_records(uint8_t *data, size_t size, size_t max_size, uint64_t *rnd)
{
	struct records *rs = malloc(sizeof *rs);
	struct out o = {malloc(max_size), 0, max_size, 0};
	size_t i, j, ret = 0;

	if (!rs || !o.p)
		goto out;
	find_records(data, size, rs);
	if (!rs->n)
		goto out;
	i = next_rand(rnd) % rs->n;
	j = next_rand(rnd) % rs->n;
	if (i > j) {
		size_t t = i;
		i = j;
		j = t;
	}
	switch (next_rand(rnd) % 16) {
	case 10: /* duplicate record j before record i */
		put(&o, data, rs->off[i]);
		put(&o, data + rs->off[j], rs->end[j] - rs->off[j]);
		put(&o, data + rs->off[i], size - rs->off[i]);
		break;
	case 11: /* drop record i */
		put(&o, data, rs->off[i]);
		put(&o, data + rs->end[i], size - rs->end[i]);
		break;
	case 12: /* swap records i and j */
		if (i == j)
			goto out;
		put(&o, data, rs->off[i]);
		put(&o, data + rs->off[j], rs->end[j] - rs->off[j]);
		put(&o, data + rs->end[i], rs->off[j] - rs->end[i]);
		put(&o, data + rs->off[i], rs->end[i] - rs->off[i]);
		put(&o, data + rs->end[j], size - rs->end[j]);
		break;
	case 13: { /* retype record i: another parser reads its payload */
		put(&o, data, size);
		if (o.over)
			break;
		uint8_t *f = o.p + rs->off[i];
		unsigned type = (unsigned)(next_rand(rnd) % 8);
		f[4] = (uint8_t)type;
		f[5] = 0;
		put32(f + 20, crc(f, 20));
		break;
	}
	case 14: /* cut the file inside record i */
		put(&o, data, rs->off[i] + next_rand(rnd) % (rs->end[i] - rs->off[i]));
		break;
	default:
		mutate_payload(&o, data, size, rs, i, max_size, rnd);
		break;
	}
	if (!o.over && o.len) {
		memcpy(data, o.p, o.len);
		ret = o.len;
	}
out:
	free(rs);
	free(o.p);
	return ret;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t rnd = (uint64_t)seed * 0x9E3779B97F4A7C15ull | 1;
	uint64_t mode = next_rand(&rnd) % 8;
	size_t n;

	if (mode >= 3 && (n = mutate_records(data, size, max_size, &rnd)) != 0)
		return n;
	n = LLVMFuzzerMutate(data, size, max_size);
	if (mode != 0)
		fix_checksums(data, n);
	return n;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t size1, const uint8_t *d2,
				 size_t size2, uint8_t *out, size_t max_out, unsigned int seed)
{
	/* d1's header and first records, then d2's records from some point. */
	uint64_t rnd = (uint64_t)seed * 0x9E3779B97F4A7C15ull | 1;
	struct records *r1 = malloc(sizeof *r1), *r2 = malloc(sizeof *r2);
	struct out o = {out, 0, max_out, 0};
	size_t cut1, cut2, ret = 0;

	if (!r1 || !r2)
		goto out;
	find_records(d1, size1, r1);
	find_records(d2, size2, r2);
	cut1 = first_record(d1, size1);
	if (cut1 >= size1 || !r2->n)
		goto out;
	if (r1->n) { /* before some record, or after the last */
		size_t k = next_rand(&rnd) % (r1->n + 1);
		cut1 = k < r1->n ? r1->off[k] : r1->end[r1->n - 1];
	}
	cut2 = r2->off[next_rand(&rnd) % r2->n];
	put(&o, d1, cut1);
	put(&o, d2 + cut2, size2 - cut2);
	ret = o.over ? 0 : o.len;
out:
	free(r1);
	free(r2);
	return ret;
}
