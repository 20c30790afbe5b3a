/*
 * test_events_format.c - the event log's record (src/format/events.h,
 * events.c): chunks encoded as the recorder encodes them and decoded back
 * exactly (the address model's every case: a free of the chunk's block,
 * a free of another chunk's, an allocation that takes its class's latest
 * freed address, unaligned addresses, sizes past the classes, a clock
 * that steps back); every prefix of a chunk and every byte flipped decode
 * to an error or to events, never past their bounds; counts past the
 * bounds refused; and a capture whose chunk is damaged loads with that
 * chunk alone lost, said once. The same for the bit stream of EVENTS_BITS
 * (hp_ev_encode_bits, hp_ev_decode_bits), which the recorder writes since
 * format 1.7: its every code (each kind, a new bucket and a known one,
 * the Rice codes' escapes: a clock jump, an address across the address
 * space, a size past 2^40, a bucket code past 8 bits), and what it
 * refuses (a bucket past the next to meet, fewer buckets met than the
 * head says, padding bits set, a byte left over).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../../src/format/capture.h"
#include "../../src/format/events.h"
#include "../../src/format/format.h"
#include "../../src/format/records.h"
#include "../harness/harness.h"

#define N 64

static struct hp_ev ev[N];
static uint32_t slot[N];
static struct hp_ev_bucket buckets[3] = {{1, 0, 1, 0}, {2, 5, 1, 0}, {7, 0, 2, 0}};

/* Events of every case the address model has. */
static size_t make_events(void)
{
	size_t n = 0;
	uint64_t t = 1000000;
#define A(addr, size, b) \
	(slot[n] = (b), ev[n++] = (struct hp_ev){t += 700, (addr), (size), (b) + 10, HP_EV_ALLOC})
#define F(addr) (slot[n] = 0, ev[n++] = (struct hp_ev){t += 300, (addr), 0, 0, HP_EV_FREE})
#define R(addr, b) \
	(slot[n] = (b), ev[n++] = (struct hp_ev){t += 100, (addr), 0, (b) + 10, HP_EV_RETYPE})
	A(0x5000, 24, 0);
	A(0x5020, 24, 1);
	R(0x5000, 2);     /* the chunk's block typed: 2 events back */
	R(0x8000, 1);     /* another chunk's block typed: a delta */
	F(0x5000);        /* the chunk's block: 4 events back (retypes keep the index) */
	A(0x5000, 20, 0); /* class of 24 too: the reuse list's top */
	F(0x9999990);     /* another chunk's block: a delta */
	A(0x7001, 3, 2);  /* unaligned */
	F(0x7001);
	A(0x7001, 5000, 2); /* past the classes: a delta */
	A(0x6000, 100, 1);
	F(0x5020);
	F(0x6000);
	A(0x6000, 100, 1);                      /* the latest of its class */
	A(0x5020, 24, 0);                       /* the next in class 3: still listed */
	ev[n - 1].tick = ev[n - 2].tick - 5000; /* a clock that steps back: clamped */
	F(0x5020);
	F(0x5020); /* a second free: not the chunk's live block */
	for (int i = 0; i < 20; i++)
		A(0x10000 + 32 * (uint64_t)i, 17 + (uint64_t)i, (unsigned)i % 3);
	for (int i = 19; i >= 0; i -= 2)
		F(0x10000 + 32 * (uint64_t)i);
#undef A
#undef F
#undef R
	return n;
}

/* The events' slots: each bucket is its slot + 10 (make_events). */
static uint32_t slot_of_bucket(void *ctx, uint32_t bucket)
{
	(void)ctx;
	return bucket - 10;
}

/* A chunk's payload, as the recorder writes it; compress: zstd each of the
 * code, time and size columns. */
static struct hp_buf encode(size_t n, int compress)
{
	struct hp_buf out = {.grow = hp_buf_grow_heap};
	struct hp_ev_head h = {.thread = 3,
			       .tick_origin = 999000,
			       .ns_origin = 5,
			       .tick_at = 2000000,
			       .ns_at = 400000,
			       .shift = 6,
			       .count = n,
			       .nbuckets = 3};
	static uint8_t cols[HP_EV_COLS][HP_EV_COL_MAX_BYTES(N)];
	uint8_t *col[HP_EV_COLS] = {cols[0], cols[1], cols[2], cols[3]};
	static uint16_t table[2 * N];
	static struct hp_ev_reuse reuse;
	size_t len[HP_EV_COLS];

	memset(table, 0, sizeof table);
	memset(&reuse, 0, sizeof reuse);
	hp_ev_encode_head(&out, &h, buckets);
	hp_ev_encode_columns(&h, ev, slot_of_bucket, NULL, col, len, table, 2 * N - 1, &reuse);
	for (int c = 0; c < HP_EV_COLS; c++) {
		uint8_t z[1024];
		size_t zn = compress && c != HP_EV_COL_ADDR
				    ? ZSTD_compress(z, sizeof z, col[c], len[c], 1)
				    : 0;
		hp_buf_put_u(&out, len[c]);
		if (zn && !ZSTD_isError(zn)) {
			hp_buf_put_u(&out, zn);
			hp_buf_put_bytes(&out, z, zn);
		} else {
			hp_buf_put_u(&out, 0);
			hp_buf_put_bytes(&out, col[c], len[c]);
		}
	}
	return out;
}

/* Decodes p[0..len): 0 with *h and got[] filled, or -EINVAL. */
static int decode(const uint8_t *p, size_t len, struct hp_ev_head *h, struct hp_ev_read *got)
{
	struct hp_cursor c = {p, p + len, 0};
	static uint8_t scratch[HP_EV_COL_MAX_BYTES(HP_EV_CHUNK_MAX)];
	struct hp_ev_reuse reuse;
	struct hp_ev_bucket b;

	if (hp_ev_decode_head(&c, h))
		return -EINVAL;
	if (h->count > N)
		return -EINVAL; /* (the test's arrays) */
	for (uint64_t i = 0; i < h->nbuckets; i++)
		if (hp_ev_decode_bucket(&c, &b))
			return -EINVAL;
	return hp_ev_decode_columns(&c, h, got, scratch, &reuse);
}

static void round_trip(int compress)
{
	size_t n = make_events();
	struct hp_buf out = encode(n, compress);
	struct hp_ev_read got[N];
	struct hp_ev_head h;
	uint64_t prev = 999000 >> 6;

	if (!expect_eq_u64(decode(out.data, out.len, &h, got), 0, "decodes"))
		goto out;
	expect_eq_u64(h.count, n, "count");
	expect_eq_u64(h.thread, 3, "thread");
	expect_eq_u64(h.ns_at, 400000, "ns_at");
	for (size_t i = 0; i < n; i++) {
		char why[64];
		uint64_t u = ev[i].tick >> 6;
		snprintf(why, sizeof why, "event %zu", i);
		prev = u > prev ? u : prev;
		expect_eq_u64(got[i].kind, ev[i].kind, why);
		expect_eq_u64(got[i].addr, ev[i].addr, why);
		expect_eq_u64(got[i].size, ev[i].kind == HP_EV_ALLOC ? ev[i].size : 0, why);
		if (ev[i].kind != HP_EV_FREE)
			expect_eq_u64(got[i].slot, slot[i], why);
		expect_eq_u64(got[i].units, prev - (999000 >> 6), why);
	}
out:
	free(out.data);
}

HP_TEST(events_round_trip_raw)
{
	round_trip(0);
}
HP_TEST(events_round_trip_compressed)
{
	round_trip(1);
}

/* Every prefix of a chunk, and every byte of it flipped: an error or
 * events, never a read past the payload (ASan in make check SAN=...). */
HP_TEST(events_prefixes_and_flips)
{
	size_t n = make_events(), bad = 0;
	struct hp_buf out = encode(n, 1);
	struct hp_ev_read got[N];
	struct hp_ev_head h;

	for (size_t len = 0; len < out.len; len++) {
		uint8_t *copy = malloc(len + 1);
		memcpy(copy, out.data, len);
		bad += decode(copy, len, &h, got) != 0;
		free(copy);
	}
	expect_eq_u64(bad, out.len, "every prefix is refused (a column ends early)");
	for (size_t i = 0; i < out.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			out.data[i] ^= (uint8_t)(1u << bit);
			(void)decode(out.data, out.len, &h, got);
			out.data[i] ^= (uint8_t)(1u << bit);
		}
	}
	expect_eq_u64(decode(out.data, out.len, &h, got), 0, "whole again");
	free(out.data);
}

/* A crafted chunk: head, one bucket, columns given raw. */
static int crafted(uint64_t count, uint64_t nbuckets, const uint8_t *code, size_t ncode,
		   const uint8_t *time, size_t ntime, const uint8_t *size, size_t nsize,
		   const uint8_t *addr, size_t naddr)
{
	struct hp_buf b = {.grow = hp_buf_grow_heap};
	struct hp_ev_read got[N];
	struct hp_ev_head h;
	const uint8_t *col[4] = {code, time, size, addr};
	size_t len[4] = {ncode, ntime, nsize, naddr};
	int r;

	for (int i = 0; i < 5; i++)
		hp_buf_put_u(&b, 1);
	hp_buf_put_u(&b, 6);
	hp_buf_put_u(&b, count);
	hp_buf_put_u(&b, nbuckets);
	for (uint64_t i = 0; i < nbuckets; i++)
		for (int f = 0; f < 4; f++)
			hp_buf_put_u(&b, 1);
	for (int c = 0; c < 4; c++) {
		hp_buf_put_u(&b, len[c]);
		hp_buf_put_u(&b, 0);
		hp_buf_put_bytes(&b, col[c], len[c]);
	}
	r = decode(b.data, b.len, &h, got);
	free(b.data);
	return r;
}

HP_TEST(events_model_refuses_what_is_not_there)
{
	static const uint8_t zero2[] = {0, 0}, one2[] = {1, 1}, t2[] = {1, 1};
	/* two allocations of bucket 0, the second a reuse hit with no list */
	expect_eq_u64(crafted(2, 1, one2, 2, t2, 2, (const uint8_t[]){24, 24}, 2,
			      (const uint8_t[]){2, 0}, 2),
		      (uint64_t)-EINVAL, "a reuse hit on an empty list");
	/* a free 1 event back that is a free */
	expect_eq_u64(crafted(2, 1, (const uint8_t[]){0, 0}, 2, t2, 2, zero2, 0,
			      (const uint8_t[]){3, 2}, 2),
		      (uint64_t)-EINVAL, "a free of an earlier free");
	/* a free 0 events back */
	expect_eq_u64(crafted(2, 1, (const uint8_t[]){1, 0}, 2, t2, 2, (const uint8_t[]){24}, 1,
			      (const uint8_t[]){2, 0}, 2),
		      (uint64_t)-EINVAL, "a free of itself");
	/* a code naming bucket 1 of 1 */
	expect_eq_u64(crafted(2, 1, (const uint8_t[]){3, 0}, 2, t2, 2, (const uint8_t[]){24}, 1,
			      (const uint8_t[]){2, 1}, 2),
		      (uint64_t)-EINVAL, "a bucket past the record's");
	/* bytes left over in a column */
	expect_eq_u64(crafted(2, 1, one2, 2, (const uint8_t[]){1, 1, 1}, 3,
			      (const uint8_t[]){24, 24}, 2, (const uint8_t[]){2, 4}, 2),
		      (uint64_t)-EINVAL, "bytes left over");
	/* the same, whole: decodes */
	expect_eq_u64(crafted(2, 1, one2, 2, t2, 2, (const uint8_t[]){24, 24}, 2,
			      (const uint8_t[]){2, 4}, 2),
		      0, "two allocations");
	/* a free 1 back, of an allocation: decodes */
	expect_eq_u64(crafted(2, 1, (const uint8_t[]){1, 0}, 2, t2, 2, (const uint8_t[]){24}, 1,
			      (const uint8_t[]){2, 2}, 2),
		      0, "an allocation and its free");
	(void)zero2;
	/* counts past the bounds */
	expect_eq_u64(crafted(HP_EV_CHUNK_MAX + 1, 1, zero2, 0, zero2, 0, zero2, 0, zero2, 0),
		      (uint64_t)-EINVAL, "more events than a chunk holds");
	expect_eq_u64(crafted(2, 3, zero2, 0, zero2, 0, zero2, 0, zero2, 0), (uint64_t)-EINVAL,
		      "more buckets than events");
}

/* A capture: header, META with the log's flag, two chunks, the second
 * damaged (a bucket code past its buckets, CRC right): one chunk read, one
 * damage line naming EVENTS. */
HP_TEST(events_capture_damaged_chunk)
{
	struct hp_buf file = {.grow = hp_buf_grow_heap}, p = {.grow = hp_buf_grow_heap};
	struct hp_rec_meta m = {.pid = 1};
	struct hp_rec_meta_options o = {.sample_rate_bytes = 1, .flags = HP_META_EVENTS};
	struct hp_capture cap;
	char err[256];
	size_t n = make_events();
	struct hp_buf chunk = encode(n, 1);

	hp_format_put_file_header(&file);
	m.program = hp_rec_str_of("/bin/x");
	hp_rec_meta_put(&p, &m);
	hp_rec_count_put(&p, 0);
	hp_rec_meta_options_put(&p, &o);
	hp_format_put_record(&file, HP_REC_META, p.data, p.len, NULL);
	hp_format_put_record(&file, HP_REC_EVENTS, chunk.data, chunk.len, NULL);
	/* the second: the first code column's byte (raw) names bucket 9 */
	{
		struct hp_buf bad = encode(n, 0);
		struct hp_cursor c = {bad.data, bad.data + bad.len, 0};
		struct hp_ev_head h;
		struct hp_ev_bucket b;
		hp_ev_decode_head(&c, &h);
		for (int i = 0; i < 3; i++)
			hp_ev_decode_bucket(&c, &b);
		(void)hp_cursor_u(&c);
		(void)hp_cursor_u(&c);
		*(uint8_t *)c.p = 19; /* an allocation of bucket 9 */
		hp_format_put_record(&file, HP_REC_EVENTS, bad.data, bad.len, NULL);
		free(bad.data);
	}
	if (expect_eq_u64(hp_capture_load_mem(file.data, file.len, &cap, err, sizeof err), 0,
			  "loads")) {
		expect_eq_u64(cap.nevents, n, "the first chunk's events");
		expect_eq_u64(cap.ndamage, 1, "one damage line");
		expect_true(cap.ndamage && strstr(cap.damage[0], "EVENTS record is malformed"),
			    "it names the record");
		expect_true((cap.flags & HP_META_EVENTS) != 0, "the log's flag");
		expect_eq_u64(cap.events[4].addr, 0x5000, "a free's address");
		expect_eq_u64(cap.events[4].kind, HP_EV_FREE, "a free");
		expect_eq_u64(cap.events[2].kind, HP_EV_RETYPE, "a retype");
		expect_eq_u64(cap.events[2].stack_id, 7, "its new bucket's stack");
		expect_eq_u64(cap.events[0].stack_id, 1, "an allocation's stack");
		expect_eq_u64(cap.events[1].type_tag, 5, "its type");
		expect_eq_u64(cap.events[0].thread, 3, "its thread");
		hp_capture_free(&cap);
	}
	free(file.data);
	free(p.data);
	free(chunk.data);
}

/* The bit stream. Events of every code: make_events' (slots met in
 * order: 0, 1, 2), then escapes and wide bucket codes. */
#define NB 300
static struct hp_ev bev[N + NB + 16];
static uint32_t bslot[N + NB + 16];

static size_t make_bit_events(void)
{
	size_t n = make_events(), m = n;
	uint64_t t = ev[n - 1].tick;

	memcpy(bev, ev, n * sizeof *ev);
	memcpy(bslot, slot, n * sizeof *slot);
#define A(addr, size, b) \
	(bslot[m] = (b), bev[m++] = (struct hp_ev){t += 700, (addr), (size), (b) + 10, HP_EV_ALLOC})
#define F(addr) (bslot[m] = 0, bev[m++] = (struct hp_ev){t += 300, (addr), 0, 0, HP_EV_FREE})
	t += 1ull << 45;                     /* a clock that jumps: an escape */
	A(0x7ffff7a00010, 1ull << 42, 1);    /* far away, huge: escapes */
	F(0x10);                             /* back across the address space */
	A(0x7ffff7a00010, 24, 2);
	for (uint32_t b = 3; b < NB; b++)    /* bucket codes 2 to 9 bits wide */
		A(0x20000 + 48 * (uint64_t)b, 40, b);
	A(0x30000, 40, 150);                 /* a known bucket after them */
	bslot[m] = 5;                        /* a retype to a known bucket */
	bev[m++] = (struct hp_ev){t += 50, 0x30000, 0, 15, HP_EV_RETYPE};
	F(0x30000);
#undef A
#undef F
	return m;
}

static struct hp_buf encode_bits(size_t n, uint64_t nbuckets)
{
	struct hp_buf out = {.grow = hp_buf_grow_heap};
	struct hp_ev_head h = {.thread = 3,
			       .tick_origin = 999000,
			       .ns_origin = 5,
			       .tick_at = 2000000,
			       .ns_at = 400000,
			       .shift = 6,
			       .count = n,
			       .nbuckets = nbuckets};
	static struct hp_ev_bucket b[NB];
	static uint8_t bits[HP_EV_BITS_MAX_BYTES(N + NB + 16)];
	uint8_t *end;

	for (uint64_t i = 0; i < nbuckets; i++)
		b[i] = (struct hp_ev_bucket){i + 1, 0, 1, 0};
	hp_ev_encode_head(&out, &h, b);
	end = hp_ev_encode_bits(&h, bev, slot_of_bucket, NULL, bits);
	hp_buf_put_u(&out, (size_t)(end - bits));
	hp_buf_put_bytes(&out, bits, (size_t)(end - bits));
	return out;
}

static int decode_bits(const uint8_t *p, size_t len, struct hp_ev_head *h, struct hp_ev_read *got)
{
	struct hp_cursor c = {p, p + len, 0};
	struct hp_ev_bucket b;

	if (hp_ev_decode_head(&c, h))
		return -EINVAL;
	if (h->count > N + NB + 16)
		return -EINVAL; /* (the test's arrays) */
	for (uint64_t i = 0; i < h->nbuckets; i++)
		if (hp_ev_decode_bucket(&c, &b))
			return -EINVAL;
	if (hp_ev_decode_bits(&c, h, got))
		return -EINVAL;
	return c.p == c.end ? 0 : -EINVAL;
}

HP_TEST(events_bits_round_trip)
{
	size_t n = make_bit_events();
	struct hp_buf out = encode_bits(n, NB);
	static struct hp_ev_read got[N + NB + 16];
	struct hp_ev_head h;
	uint64_t prev = 999000 >> 6, wrong = 0;

	if (!expect_eq_u64(decode_bits(out.data, out.len, &h, got), 0, "decodes"))
		goto out;
	expect_eq_u64(h.count, n, "count");
	expect_eq_u64(h.nbuckets, NB, "buckets");
	for (size_t i = 0; i < n; i++) {
		uint64_t u = bev[i].tick >> 6;
		prev = u > prev ? u : prev;
		wrong += got[i].kind != bev[i].kind || got[i].addr != bev[i].addr ||
			 got[i].size != (bev[i].kind == HP_EV_ALLOC ? bev[i].size : 0) ||
			 (bev[i].kind != HP_EV_FREE && got[i].slot != bslot[i]) ||
			 got[i].units != prev - (999000 >> 6);
	}
	expect_eq_u64(wrong, 0, "every event exact");
	expect_eq_u64(got[n - 4].size, 40, "a size");
	expect_eq_u64(got[n - 2].kind, HP_EV_RETYPE, "the retype");
	expect_eq_u64(got[n - 2].slot, 5, "to its bucket");
	expect_eq_u64(got[n - 1].addr, 0x30000, "the last free's address");
	expect_eq_u64(got[n - NB - 3].size, 1ull << 42, "the escaped size");
out:
	free(out.data);
}

/* Every prefix refused, every bit flipped an error or events, never a
 * read past the payload (ASan in make check SAN=...). */
HP_TEST(events_bits_prefixes_and_flips)
{
	size_t n = make_bit_events(), bad = 0;
	struct hp_buf out = encode_bits(n, NB);
	static struct hp_ev_read got[N + NB + 16];
	struct hp_ev_head h;

	for (size_t len = 0; len < out.len; len++) {
		uint8_t *copy = malloc(len + 1);
		memcpy(copy, out.data, len);
		bad += decode_bits(copy, len, &h, got) != 0;
		free(copy);
	}
	expect_eq_u64(bad, out.len, "every prefix is refused");
	for (size_t i = 0; i < out.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			out.data[i] ^= (uint8_t)(1u << bit);
			(void)decode_bits(out.data, out.len, &h, got);
			out.data[i] ^= (uint8_t)(1u << bit);
		}
	}
	expect_eq_u64(decode_bits(out.data, out.len, &h, got), 0, "whole again");
	free(out.data);
}

/* A crafted stream of one or two events after a head of count events and
 * nbuckets buckets. */
static int crafted_bits(uint64_t count, uint64_t nbuckets, const uint8_t *bits, size_t nbits)
{
	struct hp_buf b = {.grow = hp_buf_grow_heap};
	static struct hp_ev_read got[N + NB + 16];
	struct hp_ev_head h;
	int r;

	for (int i = 0; i < 5; i++)
		hp_buf_put_u(&b, 1);
	hp_buf_put_u(&b, 6);
	hp_buf_put_u(&b, count);
	hp_buf_put_u(&b, nbuckets);
	for (uint64_t i = 0; i < nbuckets; i++)
		for (int f = 0; f < 4; f++)
			hp_buf_put_u(&b, 1);
	hp_buf_put_u(&b, nbits);
	hp_buf_put_bytes(&b, bits, nbits);
	r = decode_bits(b.data, b.len, &h, got);
	free(b.data);
	return r;
}

HP_TEST(events_bits_refuses_what_is_not_there)
{
	/* An allocation of the new bucket 0 (k 0 everywhere): time 0 "1",
	 * kind "1", bucket "0" (1 bit: met 0), size 1 "01", address 1
	 * "01": 1,1,0,0,1,0,1 from bit 0 = 0x53. */
	expect_eq_u64(crafted_bits(1, 1, (const uint8_t[]){0x53}, 1), 0, "one allocation");
	expect_eq_u64(crafted_bits(1, 1, (const uint8_t[]){0x53, 0}, 2), (uint64_t)-EINVAL,
		      "a byte left over");
	expect_eq_u64(crafted_bits(1, 1, (const uint8_t[]){0xd3}, 1), (uint64_t)-EINVAL,
		      "a padding bit set");
	expect_eq_u64(crafted_bits(1, 0, (const uint8_t[]){0x53}, 1), (uint64_t)-EINVAL,
		      "a bucket the head does not list");
	expect_eq_u64(crafted_bits(1, 2, (const uint8_t[]){0x53}, 1), (uint64_t)-EINVAL,
		      "fewer buckets met than listed");
	/* bucket code 1 of met 0: a retype's mark, then bucket 1: past the
	 * next to meet ("1,1,1,1": time, kind, mark, bucket 1). */
	expect_eq_u64(crafted_bits(1, 1, (const uint8_t[]){0x0f, 0}, 2), (uint64_t)-EINVAL,
		      "a bucket past the next");
	expect_eq_u64(crafted_bits(2, 1, (const uint8_t[]){0x53}, 1), (uint64_t)-EINVAL,
		      "a second event missing");
	/* an escape whose length says 65 bits */
	expect_eq_u64(crafted_bits(1, 0, (const uint8_t[]){0, 0, 0, 0x41 << 0, 0, 0, 0, 0}, 8),
		      (uint64_t)-EINVAL, "an escape past 64 bits");
}

/* A capture with three EVENTS_BITS records: one chunk; two chunks; two
 * chunks, the second damaged (a padding bit set, CRC right): the first
 * two records' three chunks read, the third record none of its events
 * (its first chunk whole), one damage line naming EVENTS_BITS. */
HP_TEST(events_capture_bits_chunk)
{
	struct hp_buf file = {.grow = hp_buf_grow_heap}, p = {.grow = hp_buf_grow_heap};
	struct hp_rec_meta m = {.pid = 1};
	struct hp_rec_meta_options o = {.sample_rate_bytes = 1, .flags = HP_META_EVENTS};
	struct hp_capture cap;
	char err[256];
	size_t n = make_bit_events();
	struct hp_buf chunk = encode_bits(n, NB);

	hp_format_put_file_header(&file);
	m.program = hp_rec_str_of("/bin/x");
	hp_rec_meta_put(&p, &m);
	hp_rec_count_put(&p, 0);
	hp_rec_meta_options_put(&p, &o);
	hp_format_put_record(&file, HP_REC_META, p.data, p.len, NULL);
	hp_format_put_record(&file, HP_REC_EVENTS_BITS, chunk.data, chunk.len, NULL);
	{
		struct hp_buf two = {.grow = hp_buf_grow_heap};
		hp_buf_put_bytes(&two, chunk.data, chunk.len);
		hp_buf_put_bytes(&two, chunk.data, chunk.len);
		hp_format_put_record(&file, HP_REC_EVENTS_BITS, two.data, two.len, NULL);
		two.data[two.len - 1] |= 0x80; /* the last byte's padding */
		hp_format_put_record(&file, HP_REC_EVENTS_BITS, two.data, two.len, NULL);
		free(two.data);
	}
	if (expect_eq_u64(hp_capture_load_mem(file.data, file.len, &cap, err, sizeof err), 0,
			  "loads")) {
		expect_eq_u64(cap.nevents, 3 * n, "the first two records' three chunks");
		expect_eq_u64(cap.ndamage, 1, "one damage line");
		expect_true(cap.ndamage && strstr(cap.damage[0], "EVENTS_BITS record is malformed"),
			    "it names the record");
		expect_eq_u64(cap.events[4].addr, 0x5000, "a free's address");
		expect_eq_u64(cap.events[4].kind, HP_EV_FREE, "a free");
		expect_eq_u64(cap.events[2].kind, HP_EV_RETYPE, "a retype");
		expect_eq_u64(cap.events[2].stack_id, 3, "its new bucket's stack");
		expect_eq_u64(cap.events[0].thread, 3, "its thread");
		expect_eq_u64(cap.events[0].tick, 1000700 >> 6 << 6, "its time, in units of 64 ticks");
		hp_capture_free(&cap);
	}
	free(file.data);
	free(p.data);
	free(chunk.data);
}

/* The rule, written again bit by bit from docs/format.md ("EVENTS_BITS"):
 * hp_ev_encode_bits' fast paths (registers, one store for several codes)
 * must give these bits exactly. */
struct ref_w {
	uint8_t *b;
	uint64_t bits;
};

static void ref_bits(struct ref_w *w, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, w->bits++)
		if (v >> i & 1)
			w->b[w->bits >> 3] |= (uint8_t)(1u << (w->bits & 7));
}

static unsigned ref_len(uint64_t v)
{
	unsigned n = 0;

	for (; v; v >>= 1)
		n++;
	return n;
}

static void ref_rice(struct ref_w *w, uint64_t *avg, uint64_t v)
{
	uint64_t mean16 = *avg / 16, q;
	unsigned k = 0;

	while (mean16 >> (k + 1))
		k++;
	q = v >> k;
	ref_bits(w, v, k);
	if (q < 24) {
		ref_bits(w, 0, (unsigned)q);
		ref_bits(w, 1, 1);
	} else {
		ref_bits(w, 0, 24);
		ref_bits(w, ref_len(v), 7);
		ref_bits(w, v, ref_len(v));
	}
	*avg += (v < (1ull << 40) ? v : 1ull << 40) - *avg / 16;
}

/* Buckets numbered as met (hp_ev_slot_fn): bucket ids below 1 << 20. */
struct ref_slots {
	uint32_t slot[1u << 20];
	uint32_t n;
};

static uint32_t ref_slot_of(void *ctx, uint32_t bucket)
{
	struct ref_slots *s = ctx;

	if (!s->slot[bucket])
		s->slot[bucket] = ++s->n;
	return s->slot[bucket] - 1;
}

static size_t ref_encode(const struct hp_ev_head *h, const struct hp_ev *e, uint8_t *out)
{
	struct ref_w w = {out, 0};
	static struct ref_slots slots;
	uint64_t prev = h->tick_origin >> h->shift, addr = 0, avg[4] = {0};
	uint32_t met = 0;

	memset(&slots, 0, sizeof slots);
	memset(out, 0, HP_EV_BITS_MAX_BYTES(h->count));
	for (uint64_t i = 0; i < h->count; i++) {
		uint64_t u = e[i].tick >> h->shift, dx = hp_ev_addr_code(e[i].addr, addr);
		ref_rice(&w, &avg[0], u >= prev ? u - prev : 0);
		prev = u >= prev ? u : prev;
		addr = e[i].addr;
		ref_bits(&w, e[i].kind != HP_EV_FREE, 1);
		if (e[i].kind != HP_EV_FREE) {
			uint32_t s = ref_slot_of(&slots, e[i].bucket);
			if (e[i].kind == HP_EV_RETYPE)
				ref_bits(&w, met + 1, ref_len(met + 1));
			ref_bits(&w, s, ref_len(met + 1));
			met += s == met;
		}
		if (e[i].kind == HP_EV_ALLOC) {
			ref_rice(&w, &avg[1], e[i].size);
			ref_rice(&w, &avg[2], dx);
		} else {
			ref_rice(&w, &avg[3], dx);
		}
	}
	return (size_t)((w.bits + 7) / 8);
}

static uint64_t rng(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A chunk of count random events: mostly churn-like (small steps of the
 * clock, frees of live blocks, 16-byte aligned neighbours, small sizes, a
 * handful of buckets), with every rare case mixed in (clock jumps and
 * steps back, unaligned and far addresses, sizes past 2^40, retypes, new
 * buckets: bucket codes up to 9 bits). Addresses are below 2^57, as a process's
 * are (a delta's code keeps 62 bits). */
static void random_events(struct hp_ev *e, uint32_t count, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1, t = rng(&x) >> 20, live[64] = {0};
	uint32_t buckets[16];

	for (int i = 0; i < 16; i++)
		buckets[i] = 1 + (uint32_t)(rng(&x) % ((1u << 20) - 1));
	for (uint32_t i = 0; i < count; i++) {
		uint64_t r = rng(&x), pick = r % 100, a;
		uint32_t b = buckets[(r >> 8) % 16];
		t += r >> 40 & 0x7ff;
		if ((r >> 20 & 63) == 0)
			t += rng(&x) >> (14 + rng(&x) % 40); /* a jump */
		else if ((r >> 20 & 63) == 1)
			t -= rng(&x) & 0xffff; /* a step back */
		if ((r >> 26 & 7) == 0)
			b = 1 + (uint32_t)(rng(&x) % ((1u << 20) - 1)); /* a new bucket */
		if (pick < 45) {
			a = live[r >> 16 & 63];
			if ((r >> 30 & 15) == 0)
				a = rng(&x) >> 7; /* another thread's block */
			e[i] = (struct hp_ev){t, a, 0, 0, HP_EV_FREE};
			continue;
		}
		if (pick < 50) {
			e[i] = (struct hp_ev){t, live[r >> 16 & 63], 0, b, HP_EV_RETYPE};
			continue;
		}
		a = 0x555555550000ull + 16 * (rng(&x) % 65536);
		if ((r >> 30 & 15) == 0)
			a += rng(&x) % 16; /* unaligned */
		else if ((r >> 30 & 15) == 1)
			a = rng(&x) >> (7 + rng(&x) % 32); /* far */
		r = rng(&x);
		e[i] = (struct hp_ev){t, a, (r & 1023) + 1, b, HP_EV_ALLOC};
		if ((r >> 10 & 15) == 0)
			e[i].size = r >> (r >> 20 & 63); /* past the classes, past 2^40 */
		live[r >> 30 & 63] = a;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_BMI2_COPY 1
/* The encoder compiled as the recorder's encode_bmi2 is. */
__attribute__((target("bmi,bmi2,lzcnt"))) static uint8_t *
encode_bits_bmi2(const struct hp_ev_head *h, const struct hp_ev *ev, void *slots, uint8_t *out)
{
	return hp_ev_encode_bits(h, ev, ref_slot_of, slots, out);
}
#endif

/* Whether the encoder's stream of h's events e (both builds where the
 * CPU has the second's instructions) differs from want[0..len): the
 * number of builds that differ. */
static uint64_t bits_differ(const struct hp_ev_head *h, const struct hp_ev *e, const uint8_t *want,
			    size_t len, uint8_t *got)
{
	static struct ref_slots slots;
	uint64_t differ = 0;

	for (int copy = 0; copy < 2; copy++) {
		uint8_t *end;
		memset(&slots, 0, sizeof slots);
		if (copy == 0) {
			end = hp_ev_encode_bits(h, e, ref_slot_of, &slots, got);
		} else {
#ifdef HAVE_BMI2_COPY
			if (!__builtin_cpu_supports("bmi2") || !__builtin_cpu_supports("lzcnt"))
				continue;
			end = encode_bits_bmi2(h, e, &slots, got);
#else
			continue;
#endif
		}
		differ += (size_t)(end - got) != len || memcmp(got, want, len) != 0;
	}
	return differ;
}

HP_TEST(events_bits_follow_the_rule)
{
	enum { COUNT = 4096 };
	static struct hp_ev e[COUNT];
	static uint8_t want[HP_EV_BITS_MAX_BYTES(COUNT)], got[HP_EV_BITS_MAX_BYTES(COUNT)];
	static struct ref_slots slots;
	static struct hp_ev_read back[COUNT];
	uint64_t differ = 0, long_differ = 0, undecoded = 0, bytes = 0;

	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct hp_ev_head h = {.tick_origin = 12345, .shift = seed % 2 ? 6 : 0};
		uint32_t count = seed == 1 ? 1 : seed == 2 ? 17 : COUNT;
		size_t len;
		random_events(e, count, seed);
		h.tick_origin = e[0].tick - (seed % 3 == 0 ? 0 : 5000);
		h.count = count;
		len = ref_encode(&h, e, want);
		bytes += len;
		for (int copy = 0; copy < 2; copy++) {
			uint8_t *end;
			memset(&slots, 0, sizeof slots);
			if (copy == 0) {
				end = hp_ev_encode_bits(&h, e, ref_slot_of, &slots, got);
			} else {
#ifdef HAVE_BMI2_COPY
				if (!__builtin_cpu_supports("bmi2") ||
				    !__builtin_cpu_supports("lzcnt"))
					continue;
				end = encode_bits_bmi2(&h, e, &slots, got);
#else
				continue;
#endif
			}
			differ += (size_t)(end - got) != len || memcmp(got, want, len) != 0;
		}
		{
			struct hp_buf b = {.grow = hp_buf_grow_heap};
			struct hp_cursor c;
			h.nbuckets = slots.n;
			hp_buf_put_u(&b, len);
			hp_buf_put_bytes(&b, want, len);
			c = (struct hp_cursor){b.data, b.data + b.len, 0};
			undecoded += hp_ev_decode_bits(&c, &h, back) != 0 || c.p != c.end;
			for (uint32_t i = 0; i < count && !undecoded; i++)
				undecoded += back[i].addr != e[i].addr || back[i].kind != e[i].kind;
			free(b.data);
		}
	}
	/* Each field's codes at the fast paths' edge, one field at a time
	 * (the others 1): fresh states (k 0), frees and allocations whose
	 * time, size or address code is v = 20..27 (q = v: 23 the longest
	 * fast code, 24 an escape), then after the states grew (k 1 to 3). */
	for (uint64_t fv = 0; fv < 3 * 8; fv++) {
		struct hp_ev_head h = {.tick_origin = 1000000, .shift = 0, .count = 24};
		uint64_t t = h.tick_origin, a = 0, field = fv / 8, v = 20 + fv % 8;
		size_t len;
		for (uint32_t i = 0; i < h.count; i++) {
			uint64_t x = i < 4 ? v : i < 16 ? 9 : v << ((i - 16) % 4);
			t += field == 0 ? x : 1;
			a = hp_ev_addr_decode(field == 2 ? x : 1, a);
			e[i] = (struct hp_ev){t, a, i % 2 ? (field == 1 ? x : 1) : 0, i % 2 ? 7 : 0,
					      i % 2 ? HP_EV_ALLOC : HP_EV_FREE};
		}
		len = ref_encode(&h, e, want);
		for (int copy = 0; copy < 2; copy++) {
			uint8_t *end;
			memset(&slots, 0, sizeof slots);
			if (copy == 0) {
				end = hp_ev_encode_bits(&h, e, ref_slot_of, &slots, got);
			} else {
#ifdef HAVE_BMI2_COPY
				if (!__builtin_cpu_supports("bmi2") ||
				    !__builtin_cpu_supports("lzcnt"))
					continue;
				end = encode_bits_bmi2(&h, e, &slots, got);
#else
				continue;
#endif
			}
			differ += (size_t)(end - got) != len || memcmp(got, want, len) != 0;
		}
	}
	/* Frees whose codes are longer than 24 bits with no escape (the
	 * loop's second tier for frees): the frees' address state after
	 * far addresses, as after a chunk's first address (coded from 0),
	 * its k from 0 up to 39, then address codes of q = 0 to 17 at that
	 * k (16 and up, or a code of more than 41 bits, the tier leaves to
	 * hp_ev_encode_slow), with time codes of q = 17 down to 0. It fails
	 * when the tier writes a code a bit short, or takes a code past 41
	 * bits (whose value the state's clamp cuts). */
	for (uint64_t grow = 0; grow <= 60; grow += 3) {
		struct hp_ev_head h = {.tick_origin = 1000000, .shift = 0};
		uint64_t t = h.tick_origin, a = 0, avg = 0, tavg = 0;
		uint32_t n = 0;
		for (uint32_t i = 0; i < grow; i++) {
			uint64_t v = 1ull << 45;
			t += 1;
			tavg = hp_ev_rice_next(tavg, 1);
			a = hp_ev_addr_decode(v, a);
			e[n++] = (struct hp_ev){t, a, 0, 0, HP_EV_FREE};
			avg = hp_ev_rice_next(avg, v);
		}
		for (uint64_t q = 0; q < 18; q++) {
			/* v even: the address 16s away, coded back the same */
			uint64_t k = hp_ev_rice_k_of(avg), v = q << k;
			uint64_t kt = hp_ev_rice_k_of(tavg), dt = (17 - q) << kt;
			t += dt;
			tavg = hp_ev_rice_next(tavg, dt);
			a = hp_ev_addr_decode(v, a);
			e[n++] = (struct hp_ev){t, a, 0, 0, HP_EV_FREE};
			avg = hp_ev_rice_next(avg, v);
		}
		h.count = n;
		long_differ += bits_differ(&h, e, want, ref_encode(&h, e, want), got);
	}
	expect_eq_u64(differ, 0, "the encoder's stream is the rule's, bit for bit");
	expect_eq_u64(long_differ, 0, "and with frees' codes past 24 bits");
	expect_eq_u64(undecoded, 0, "and decodes back");
	expect_true(bytes > 40 * 4096, "the chunks are not trivial");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
