/*
 * varint.h - LEB128 unsigned varints and zigzag signed varints.
 *
 * The capture format stores every integer as an unsigned LEB128 varint: seven
 * bits a byte, least significant group first, high bit set on all but the
 * last byte. Signed deltas (successive frame addresses) go through zigzag
 * first so that small negative numbers stay short.
 *
 * Allocation-free, lock-free, async-signal-safe: used by the recorder and the
 * analyzer alike.
 */
#ifndef HP_COMMON_VARINT_H
#define HP_COMMON_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* The longest encoding of a uint64_t. */
#define HP_VARINT_MAX_BYTES 10

/* Writes v at p, which must have HP_VARINT_MAX_BYTES free; returns the number
 * of bytes written. */
static inline size_t hp_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Reads a varint from [*p, end). Returns 0 and advances *p, or -1 when the
 * input ends inside the number or the number does not fit in 64 bits. */
static inline int hp_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *q = *p;

	while (q < end) {
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

static inline uint64_t hp_zigzag_encode(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t hp_zigzag_decode(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
