/*
 * decode.c - reading capture files (see format.h for the layout).
 */
#include "decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../common/varint.h"
#include "format.h"

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

static void say(struct hp_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

int hp_reader_open(struct hp_reader *r, const uint8_t *data, size_t size)
{
	memset(r, 0, sizeof *r);
	r->data = data;
	r->size = size;
	if (size < 8 || memcmp(data, HP_FORMAT_MAGIC, 8) != 0) {
		say(r, "not a heapprof capture (no HEAPPROF magic)");
		return -EINVAL;
	}
	if (size < HP_FORMAT_FILE_HEADER_BYTES) {
		say(r, "truncated in the file header (%zu of %d bytes)", size,
		    HP_FORMAT_FILE_HEADER_BYTES);
		return -EINVAL;
	}
	if (get_le(data + 28, 4) != crc(data, 28)) {
		say(r, "file header is corrupt (checksum mismatch)");
		return -EINVAL;
	}
	if (get_le(data + 8, 2) != HP_FORMAT_MAJOR) {
		say(r, "format version %u.%u, this heapprof reads %d.x",
		    (unsigned)get_le(data + 8, 2), (unsigned)get_le(data + 10, 2), HP_FORMAT_MAJOR);
		return -EINVAL;
	}
	r->minor = (int)get_le(data + 10, 2);
	r->pos = get_le(data + 12, 4);
	if (r->pos < HP_FORMAT_FILE_HEADER_BYTES || r->pos > size) {
		say(r, "file header is corrupt (header size %zu)", r->pos);
		return -EINVAL;
	}
	return 0;
}

/* Finds the next offset after from where a frame with a valid header
 * checksum starts, or size. */
static size_t resync(const struct hp_reader *r, size_t from)
{
	for (size_t at = from; at + HP_FORMAT_FRAME_BYTES <= r->size; at++) {
		const uint8_t *f = r->data + at;
		if (memcmp(f, HP_FORMAT_RECORD_TAG, 4) == 0 && get_le(f + 20, 4) == crc(f, 20))
			return at;
	}
	return r->size;
}

static int damaged(struct hp_reader *r, size_t at, size_t skip_to)
{
	r->pos = resync(r, skip_to);
	if (r->pos >= r->size)
		r->ended = 1;
	(void)at;
	return HP_READ_DAMAGED;
}

int hp_reader_next(struct hp_reader *r, struct hp_record *rec)
{
	size_t at = r->pos;
	const uint8_t *f = r->data + at;
	uint64_t stored, raw, flags;

	if (r->ended || at == r->size)
		return HP_READ_END;
	if (r->size - at < HP_FORMAT_FRAME_BYTES) {
		say(r, "offset %zu: truncated inside a record frame (%zu of %d bytes)", at,
		    r->size - at, HP_FORMAT_FRAME_BYTES);
		r->ended = 1;
		return HP_READ_DAMAGED;
	}
	if (memcmp(f, HP_FORMAT_RECORD_TAG, 4) != 0 || get_le(f + 20, 4) != crc(f, 20)) {
		say(r, "offset %zu: corrupt record frame, skipping to the next intact record", at);
		return damaged(r, at, at + 1);
	}
	flags = get_le(f + 6, 2);
	stored = get_le(f + 8, 4);
	raw = get_le(f + 12, 4);
	if (stored > HP_FORMAT_MAX_PAYLOAD_BYTES || raw > HP_FORMAT_MAX_PAYLOAD_BYTES) {
		say(r, "offset %zu: record claims %llu bytes, more than the format allows", at,
		    (unsigned long long)(stored > raw ? stored : raw));
		return damaged(r, at, at + 1);
	}
	if (r->size - at - HP_FORMAT_FRAME_BYTES < stored) {
		say(r, "offset %zu: truncated record (type %u needs %llu bytes, %zu left)", at,
		    (unsigned)get_le(f + 4, 2), (unsigned long long)stored,
		    r->size - at - HP_FORMAT_FRAME_BYTES);
		r->ended = 1;
		return HP_READ_DAMAGED;
	}
	if (get_le(f + 16, 4) != crc(f + HP_FORMAT_FRAME_BYTES, stored)) {
		say(r, "offset %zu: record of type %u is corrupt (payload checksum mismatch)", at,
		    (unsigned)get_le(f + 4, 2));
		return damaged(r, at, at + HP_FORMAT_FRAME_BYTES + stored);
	}

	rec->type = (unsigned)get_le(f + 4, 2);
	rec->offset = at;
	r->pos = at + HP_FORMAT_FRAME_BYTES + stored;
	if (flags & ~(uint64_t)HP_FORMAT_FLAG_ZSTD) {
		say(r, "offset %zu: record of type %u has flags 0x%llx this reader does not know, "
		       "skipped", at, rec->type, (unsigned long long)flags);
		return HP_READ_DAMAGED;
	}
	if (!(flags & HP_FORMAT_FLAG_ZSTD)) {
		if (stored != raw) {
			say(r, "offset %zu: record sizes disagree (%llu stored, %llu raw)", at,
			    (unsigned long long)stored, (unsigned long long)raw);
			return HP_READ_DAMAGED;
		}
		rec->payload = f + HP_FORMAT_FRAME_BYTES;
		rec->len = raw;
		return HP_READ_OK;
	}
	/* The frame must announce the size the record claims, and no more than
	 * the recorder's payloads ever compress to (they shrink 5 to 50 times;
	 * zstd can shrink a run of zeros 10000 times): a small corrupt or hostile
	 * record cannot make us allocate gigabytes. */
	if (ZSTD_getFrameContentSize(f + HP_FORMAT_FRAME_BYTES, stored) != raw) {
		say(r, "offset %zu: record of type %u is corrupt (compressed size disagrees)", at,
		    rec->type);
		return HP_READ_DAMAGED;
	}
	if (raw > HP_FORMAT_MAX_RATIO * stored + (1u << 20)) {
		say(r, "offset %zu: record of type %u claims %llu bytes from %llu compressed, more "
		       "than heapprof ever writes", at, rec->type, (unsigned long long)raw,
		    (unsigned long long)stored);
		return HP_READ_DAMAGED;
	}
	if (raw > r->scratch_cap) {
		uint8_t *p = realloc(r->scratch, raw);
		if (!p) {
			say(r, "offset %zu: out of memory for a %llu-byte record", at,
			    (unsigned long long)raw);
			return HP_READ_DAMAGED;
		}
		r->scratch = p;
		r->scratch_cap = raw;
	}
	size_t n = ZSTD_decompress(r->scratch, raw, f + HP_FORMAT_FRAME_BYTES, stored);
	if (ZSTD_isError(n) || n != raw) {
		say(r, "offset %zu: record of type %u does not decompress (%s)", at, rec->type,
		    ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
		return HP_READ_DAMAGED;
	}
	rec->payload = r->scratch;
	rec->len = raw;
	return HP_READ_OK;
}

void hp_reader_close(struct hp_reader *r)
{
	free(r->scratch);
	r->scratch = NULL;
}

uint64_t hp_cursor_u(struct hp_cursor *c)
{
	uint64_t v = 0;
	if (c->err || hp_varint_get(&c->p, c->end, &v) < 0) {
		c->err = 1;
		return 0;
	}
	return v;
}

int64_t hp_cursor_s(struct hp_cursor *c)
{
	return hp_zigzag_decode(hp_cursor_u(c));
}

const uint8_t *hp_cursor_blob(struct hp_cursor *c, size_t *len)
{
	uint64_t n = hp_cursor_u(c);
	const uint8_t *p = c->p;
	if (c->err || n > (uint64_t)(c->end - c->p)) {
		c->err = 1;
		*len = 0;
		return (const uint8_t *)"";
	}
	c->p += n;
	*len = (size_t)n;
	return p;
}

uint64_t hp_cursor_count(struct hp_cursor *c, uint64_t max)
{
	uint64_t n = hp_cursor_u(c);
	if (n > max) {
		c->err = 1;
		return 0;
	}
	return n;
}
