/*
 * encode.h - building capture records.
 *
 * A struct hp_buf is a byte buffer whose memory comes from the caller's grow
 * function: the recorder grows it with mmap (it must never call the target's
 * malloc), the analyzer with realloc. Errors are sticky: the first failure is
 * kept in err and every later put is a no-op, so a writer checks once, at the
 * end.
 *
 * Nothing here allocates by itself, takes a lock or touches stdio; all of it
 * is async-signal-safe when the grow function and the zstd context are.
 */
#ifndef HP_FORMAT_ENCODE_H
#define HP_FORMAT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/varint.h"

struct ZSTD_CCtx_s;

struct hp_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err; /* 0 or the first -errno */
	/* Makes cap >= need (keeping data[0..len)); returns 0 or -errno. */
	int (*grow)(struct hp_buf *b, size_t need);
};

/* A grow function backed by realloc (src/format/buf_heap.c), for the
 * analyzer and tools, never the recorder. Free b->data when done. */
int hp_buf_grow_heap(struct hp_buf *b, size_t need);

/* Makes room for n more bytes; returns a pointer to them, or NULL (and sets
 * err) when the buffer cannot grow. */
uint8_t *hp_buf_reserve(struct hp_buf *b, size_t n);
void hp_buf_put_bytes(struct hp_buf *b, const void *p, size_t n);
/* A varint. Inline while the buffer has room for the longest (a snapshot
 * of a million stacks writes some 30 million); the rest grows it. */
void hp_buf_put_u_grow(struct hp_buf *b, uint64_t v);
static inline void hp_buf_put_u(struct hp_buf *b, uint64_t v)
{
	if (__builtin_expect(!b->err && b->cap - b->len >= HP_VARINT_MAX_BYTES, 1))
		b->len += hp_varint_put(b->data + b->len, v);
	else
		hp_buf_put_u_grow(b, v);
}
void hp_buf_put_s(struct hp_buf *b, int64_t v);
/* A u length then the bytes; s may be NULL (written as empty). */
void hp_buf_put_str(struct hp_buf *b, const char *s);
void hp_buf_put_blob(struct hp_buf *b, const void *p, size_t n);

/* Appends the 32-byte file header to out. */
void hp_format_put_file_header(struct hp_buf *out);

/*
 * Appends one framed record of the given type to out, its payload being
 * payload[0..raw_len). When cctx is not NULL and compression saves space,
 * the payload is stored as one zstd frame. Returns 0, or -errno (also left
 * in out->err) when out cannot grow or compression fails.
 */
int hp_format_put_record(struct hp_buf *out, unsigned type, const uint8_t *payload,
			 size_t raw_len, struct ZSTD_CCtx_s *cctx);

/*
 * For a writer that writes a large payload in pieces and its frame last
 * (the recorder's writer): the CRC-32 of p[0..n) continued from crc (0 for
 * the first piece), and the HP_FORMAT_FRAME_BYTES frame of a record of
 * type whose stored bytes (stored of them, raw_len once decompressed when
 * flags has HP_FORMAT_FLAG_ZSTD) have that CRC. No allocation.
 */
uint32_t hp_format_crc(uint32_t crc, const uint8_t *p, size_t n);
void hp_format_frame(uint8_t *frame, unsigned type, unsigned flags, size_t stored,
		     size_t raw_len, uint32_t payload_crc);

#endif
