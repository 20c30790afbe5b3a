/*
 * test_varint.c - LEB128 varints and zigzag (src/common/varint.h).
 *
 * Every integer in a capture goes through these two functions, so the
 * edges matter: the 7-bit boundaries (127/128), the 10-byte maximum
 * (2^63 and UINT64_MAX), and input that ends inside a number or does not
 * fit in 64 bits, which a damaged or hostile file can hold. A reader must
 * reject those (hp_varint_get returns -1) without reading past end.
 */
#include <stdint.h>
#include <string.h>

#include "../../src/common/varint.h"
#include "../harness/harness.h"

/* Encodes v, checks the length, decodes it back from a buffer exactly as
 * long as the encoding (so any over-read is outside the array: ASan). */
static void round_trip(uint64_t v, size_t want_len, const char *why)
{
	uint8_t buf[HP_VARINT_MAX_BYTES];
	const uint8_t *p = buf;
	uint64_t got = ~v;
	size_t n = hp_varint_put(buf, v);

	expect_eq_u64(n, want_len, why);
	expect_eq_u64(hp_varint_get(&p, buf + n, &got), 0, why);
	expect_eq_u64(got, v, why);
	expect_eq_u64((uint64_t)(p - buf), n, why);
}

HP_TEST(varint_round_trip_edges)
{
	round_trip(0, 1, "0 is one byte");
	round_trip(1, 1, "1 is one byte");
	round_trip(127, 1, "127 is the largest one-byte value");
	round_trip(128, 2, "128 needs a second byte");
	round_trip(300, 2, "300 (the LEB128 textbook example)");
	round_trip(16383, 2, "2^14 - 1 is the largest two-byte value");
	round_trip(16384, 3, "2^14 needs a third byte");
	round_trip(UINT32_MAX, 5, "UINT32_MAX is five bytes");
	round_trip((uint64_t)1 << 56, 9, "2^56 is nine bytes");
	round_trip(((uint64_t)1 << 63) - 1, 9, "2^63 - 1 is nine bytes");
	round_trip((uint64_t)1 << 63, 10, "2^63 needs all ten bytes");
	round_trip(UINT64_MAX, 10, "UINT64_MAX is ten bytes");
}

HP_TEST(varint_exact_bytes)
{
	uint8_t buf[HP_VARINT_MAX_BYTES];
	static const uint8_t b300[] = {0xac, 0x02};
	static const uint8_t bmax[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};

	expect_eq_u64(hp_varint_put(buf, 300), 2, "300: two bytes");
	expect_true(memcmp(buf, b300, 2) == 0, "300 is ac 02, least significant group first");
	expect_eq_u64(hp_varint_put(buf, UINT64_MAX), 10, "UINT64_MAX: ten bytes");
	expect_true(memcmp(buf, bmax, 10) == 0, "UINT64_MAX is nine ff then 01");
	hp_varint_put(buf, 0);
	expect_eq_u64(buf[0], 0, "0 is a single zero byte");
}

HP_TEST(varint_sequence)
{
	static const uint64_t vals[] = {0, 1, 127, 128, 255, 256, 1u << 20, UINT32_MAX,
					(uint64_t)1 << 63, UINT64_MAX, 42};
	uint8_t buf[sizeof vals / sizeof vals[0] * HP_VARINT_MAX_BYTES];
	size_t n = 0;
	const uint8_t *p = buf;

	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		n += hp_varint_put(buf + n, vals[i]);
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		uint64_t v = 0;
		expect_eq_u64(hp_varint_get(&p, buf + n, &v), 0, "each value of a run decodes");
		expect_eq_u64(v, vals[i], "in order, with the right value");
	}
	expect_true(p == buf + n, "the run is consumed exactly");
}

HP_TEST(varint_truncated_rejected)
{
	uint8_t buf[HP_VARINT_MAX_BYTES];
	static const uint64_t vals[] = {128, 300, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX};

	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		size_t n = hp_varint_put(buf, vals[i]);
		/* Every proper prefix ends inside the number. */
		for (size_t cut = 0; cut < n; cut++) {
			const uint8_t *p = buf;
			uint64_t v = 7;
			expect_eq_u64((uint64_t)hp_varint_get(&p, buf + cut, &v), (uint64_t)-1,
				      "a varint cut short is rejected");
			expect_true(p == buf, "a rejected varint does not advance the input");
			expect_eq_u64(v, 7, "a rejected varint leaves *out alone");
		}
	}
}

HP_TEST(varint_overlong_rejected)
{
	/* Eleven bytes: the value would need more than 64 bits. */
	uint8_t eleven[11];
	memset(eleven, 0x80, sizeof eleven);
	eleven[10] = 0x00;
	/* Ten bytes whose last carries bits above bit 63. */
	uint8_t big10[10];
	memset(big10, 0xff, sizeof big10);
	big10[9] = 0x02;
	/* Ten bytes, all with the continuation bit: no end in sight. */
	uint8_t cont10[10];
	memset(cont10, 0x80, sizeof cont10);
	/* UINT64_MAX followed by more continuation. */
	uint8_t max_more[11];
	memset(max_more, 0xff, sizeof max_more);
	max_more[10] = 0x01;
	const uint8_t *p;
	uint64_t v = 0;

	p = eleven;
	expect_eq_u64((uint64_t)hp_varint_get(&p, eleven + 11, &v), (uint64_t)-1,
		      "an 11-byte varint is rejected");
	p = big10;
	expect_eq_u64((uint64_t)hp_varint_get(&p, big10 + 10, &v), (uint64_t)-1,
		      "a 10th byte above 1 overflows 64 bits and is rejected");
	big10[9] = 0x7f;
	p = big10;
	expect_eq_u64((uint64_t)hp_varint_get(&p, big10 + 10, &v), (uint64_t)-1,
		      "a 10th byte of 0x7f is rejected");
	p = cont10;
	expect_eq_u64((uint64_t)hp_varint_get(&p, cont10 + 10, &v), (uint64_t)-1,
		      "ten continuation bytes are rejected");
	p = max_more;
	expect_eq_u64((uint64_t)hp_varint_get(&p, max_more + 11, &v), (uint64_t)-1,
		      "a 10th byte with the continuation bit is rejected");
	/* The largest legal 10th byte is 1. */
	big10[9] = 0x01;
	p = big10;
	expect_eq_u64(hp_varint_get(&p, big10 + 10, &v), 0, "ff x9 01 is accepted");
	expect_eq_u64(v, UINT64_MAX, "and is UINT64_MAX");
}

HP_TEST(varint_non_minimal_accepted)
{
	/* Writers always emit the shortest form; readers, like every LEB128
	 * reader, accept padded forms that still fit in ten bytes. The docs
	 * say so; this pins it. */
	static const uint8_t zero2[] = {0x80, 0x00};
	static const uint8_t one10[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
	const uint8_t *p = zero2;
	uint64_t v = 9;

	expect_eq_u64(hp_varint_get(&p, zero2 + 2, &v), 0, "80 00 decodes");
	expect_eq_u64(v, 0, "80 00 is 0");
	p = one10;
	expect_eq_u64(hp_varint_get(&p, one10 + 10, &v), 0, "1 padded to ten bytes decodes");
	expect_eq_u64(v, 1, "and is 1");
}

HP_TEST(varint_empty_input)
{
	uint8_t b = 0;
	const uint8_t *p = &b;
	uint64_t v = 5;

	expect_eq_u64((uint64_t)hp_varint_get(&p, &b, &v), (uint64_t)-1,
		      "no bytes at all is rejected");
	expect_eq_u64(v, 5, "and leaves *out alone");
}

static void zigzag_round_trip(int64_t v, uint64_t want, const char *why)
{
	uint8_t buf[HP_VARINT_MAX_BYTES];
	const uint8_t *p = buf;
	uint64_t u = 0;
	size_t n;

	expect_eq_u64(hp_zigzag_encode(v), want, why);
	expect_eq_u64((uint64_t)hp_zigzag_decode(hp_zigzag_encode(v)), (uint64_t)v, why);
	/* And through a varint, as hp_buf_put_s and hp_cursor_s do. */
	n = hp_varint_put(buf, hp_zigzag_encode(v));
	expect_eq_u64(hp_varint_get(&p, buf + n, &u), 0, why);
	expect_eq_u64((uint64_t)hp_zigzag_decode(u), (uint64_t)v, why);
}

HP_TEST(zigzag_edges)
{
	zigzag_round_trip(0, 0, "0 -> 0");
	zigzag_round_trip(-1, 1, "-1 -> 1");
	zigzag_round_trip(1, 2, "1 -> 2");
	zigzag_round_trip(-2, 3, "-2 -> 3");
	zigzag_round_trip(2, 4, "2 -> 4");
	zigzag_round_trip(-64, 127, "-64 is the most negative one-byte value");
	zigzag_round_trip(63, 126, "63 is the largest positive one-byte value");
	zigzag_round_trip(-65, 129, "-65 needs two bytes");
	zigzag_round_trip(INT32_MIN, (uint64_t)UINT32_MAX, "INT32_MIN");
	zigzag_round_trip(INT64_MAX, UINT64_MAX - 1, "INT64_MAX");
	zigzag_round_trip(INT64_MIN, UINT64_MAX, "INT64_MIN");
}

HP_TEST(zigzag_small_negatives_stay_short)
{
	/* The point of zigzag: a frame delta of -8 is as short as +8. */
	uint8_t buf[HP_VARINT_MAX_BYTES];

	expect_eq_u64(hp_varint_put(buf, hp_zigzag_encode(-8)), 1, "-8 is one byte");
	expect_eq_u64(hp_varint_put(buf, hp_zigzag_encode(-4096)), 2, "-4096 is two bytes");
	expect_eq_u64(hp_varint_put(buf, hp_zigzag_encode(INT64_MIN)), 10, "INT64_MIN is ten");
}

HP_TEST(zigzag_address_deltas)
{
	/* Stacks store frame[i] - frame[i-1] as a signed delta; addresses are
	 * unsigned, so the difference wraps. Check the wrap survives. */
	static const uint64_t a[] = {0x7fff00001000, 0x555500002000, 0x7fff00000ff0,
				     0xffffffffffff0000, 0x10};

	for (size_t i = 1; i < sizeof a / sizeof a[0]; i++) {
		int64_t d = (int64_t)(a[i] - a[i - 1]);
		uint64_t back = a[i - 1] + (uint64_t)hp_zigzag_decode(hp_zigzag_encode(d));
		expect_eq_u64(back, a[i], "an address rebuilt from its zigzag delta");
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
