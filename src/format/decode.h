/*
 * decode.h - reading capture files record by record.
 *
 * hp_reader walks a capture held in memory. It checks the file header, then
 * hands out one record at a time with its payload verified and decompressed.
 * Damage never stops the walk silently: hp_reader_next returns
 * HP_READ_DAMAGED with a message naming the offset and what is wrong, and the
 * next call resynchronises on the following intact record, so a caller can
 * show everything still readable. Truncation is reported the same way, once,
 * and then the walk ends.
 *
 * Ordinary C for the analyzer side: it allocates (decompression buffers) and
 * is not thread-safe per reader.
 */
#ifndef HP_FORMAT_DECODE_H
#define HP_FORMAT_DECODE_H

#include <stddef.h>
#include <stdint.h>

struct hp_reader {
	const uint8_t *data;
	size_t size;
	size_t pos;       /* offset of the next frame to read */
	int minor;        /* the file's minor version */
	int ended;
	/* Decompressed bytes the records read so far may take, and have
	 * taken (hp_reader_next): HP_FORMAT_MAX_RATIO times their stored
	 * bytes, plus 1 MiB a record. */
	uint64_t raw_allowed, raw_taken;
	uint8_t *scratch; /* decompression buffer, owned */
	size_t scratch_cap;
	char msg[256];    /* the last damage, as "offset N: what" */
};

struct hp_record {
	unsigned type;
	size_t offset;          /* of the frame in the file */
	const uint8_t *payload; /* raw payload, valid until the next call */
	size_t len;
};

enum {
	HP_READ_END = 0,
	HP_READ_OK = 1,
	HP_READ_DAMAGED = 2,
};

/* Checks the file header of data[0..size). Returns 0, or -EINVAL with
 * r->msg saying why the data is not a capture this reader can read. The
 * reader borrows data; free it with hp_reader_close. */
int hp_reader_open(struct hp_reader *r, const uint8_t *data, size_t size);

/* Returns HP_READ_OK with *rec filled, HP_READ_END, or HP_READ_DAMAGED with
 * r->msg set (the walk can go on). */
int hp_reader_next(struct hp_reader *r, struct hp_record *rec);

void hp_reader_close(struct hp_reader *r);

/* A bounds-checked view of a payload. Reads past the end, or malformed
 * varints, set err and return 0; check err once after a group of reads. */
struct hp_cursor {
	const uint8_t *p;
	const uint8_t *end;
	int err;
};

uint64_t hp_cursor_u_slow(struct hp_cursor *c);
/* The next varint; 0 with err set past the end or on a malformed one. One
 * to three bytes (most of a capture's varints: deltas, counts, classes,
 * a stack's next frame) inline; the rest hp_cursor_u_slow. */
static inline uint64_t hp_cursor_u(struct hp_cursor *c)
{
	const uint8_t *p = c->p;

	if (__builtin_expect(!c->err && c->end - p >= 2, 1)) {
		if (p[0] < 0x80) {
			c->p = p + 1;
			return p[0];
		}
		if (p[1] < 0x80) {
			c->p = p + 2;
			return (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		}
		if (c->end - p >= 3 && p[2] < 0x80) {
			c->p = p + 3;
			return (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 |
			       (uint64_t)p[2] << 14;
		}
	}
	return hp_cursor_u_slow(c);
}
int64_t hp_cursor_s(struct hp_cursor *c);
/* Returns a pointer into the payload (not NUL-terminated) and its length. */
const uint8_t *hp_cursor_blob(struct hp_cursor *c, size_t *len);
/* A u that must be at most max (a count about to size an allocation): sets
 * err and returns 0 otherwise. */
uint64_t hp_cursor_count(struct hp_cursor *c, uint64_t max);

#endif
