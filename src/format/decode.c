/*
 * decode.c - reading capture files (see format.h for the layout): the
 * reader of framed records, the cursor over a payload, and the decoder of
 * each part of each record (records.h).
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
#include "records.h"

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
	r->raw_allowed += HP_FORMAT_MAX_RATIO * stored + (1u << 20);
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
	/* The frame must announce the size the record claims, and the records
	 * read so far no more than the recorder's payloads ever compress to
	 * (they shrink 5 to 50 times): a small corrupt or hostile file cannot
	 * make us allocate gigabytes. The bound is the file's, not each
	 * record's: zstd shrinks a run of zeros 10,000 times, and one record
	 * can be that (the size and lifetime histograms of a million buckets,
	 * mostly zero: 10 MiB from 1,000 bytes), after records that
	 * compress less. */
	if (ZSTD_getFrameContentSize(f + HP_FORMAT_FRAME_BYTES, stored) != raw) {
		say(r, "offset %zu: record of type %u is corrupt (compressed size disagrees)", at,
		    rec->type);
		return HP_READ_DAMAGED;
	}
	if (raw > r->raw_allowed - r->raw_taken) {
		say(r, "offset %zu: record of type %u claims %llu bytes from %llu compressed, more "
		       "than heapprof ever writes", at, rec->type, (unsigned long long)raw,
		    (unsigned long long)stored);
		return HP_READ_DAMAGED;
	}
	r->raw_taken += raw;
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

uint64_t hp_cursor_u_slow(struct hp_cursor *c)
{
	uint64_t v = 0;

	/* Room for the longest: no bound to check a byte (a stack's first
	 * frame, an address, takes six or more). Reads as hp_varint_get. */
	if (!c->err && c->end - c->p >= HP_VARINT_MAX_BYTES) {
		const uint8_t *q = c->p;
		uint8_t b;
		for (unsigned shift = 0; shift < 63; shift += 7) {
			b = *q++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80)) {
				c->p = q;
				return v;
			}
		}
		if ((b = *q++) > 1) { /* past 64 bits, or longer than the longest */
			c->err = 1;
			return 0;
		}
		c->p = q;
		return v | (uint64_t)b << 63;
	}
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

/* --- the record schemas (records.h) ------------------------------------- */

/* A u that must fit its field (max: the field type's largest value). */
static uint64_t get_u(struct hp_cursor *c, uint64_t max)
{
	uint64_t v = hp_cursor_u(c);
	if (v > max) {
		c->err = 1;
		return 0;
	}
	return v;
}

/* A field a later minor version appended: 0 when the payload ends first. */
static uint64_t get_tail(struct hp_cursor *c, uint64_t max)
{
	return c->err || c->p >= c->end ? 0 : get_u(c, max);
}

#define GET_U(type, name) v->name = (type)get_u(c, (type)-1);
#define GET_TAIL(type, name) v->name = (type)get_tail(c, (type)-1);
#define GET(kind, type, name) GET_##kind(type, name)

static int result(const struct hp_cursor *c)
{
	return c->err ? -EINVAL : 0;
}

/* A count field of a group: at most as many items as the bytes left could
 * hold, min_item_bytes each. */
static void bound(struct hp_cursor *c, uint64_t *n, size_t min_item_bytes)
{
	if (!c->err && *n > (uint64_t)(c->end - c->p) / min_item_bytes) {
		c->err = 1;
		*n = 0;
	}
}

/* The decoder of a part that is its field list and nothing else. */
#define DEFINE_GET(part, LIST)                                                 \
	int hp_rec_##part##_get(struct hp_cursor *c, struct hp_rec_##part *v) \
	{                                                                      \
		LIST(GET)                                                      \
		return result(c);                                              \
	}

DEFINE_GET(segment, HP_REC_SEGMENT)
DEFINE_GET(snapshot, HP_REC_SNAPSHOT)
DEFINE_GET(lost, HP_REC_LOST)
DEFINE_GET(bucket, HP_REC_BUCKET)
DEFINE_GET(snapshot_tail, HP_REC_SNAPSHOT_TAIL)
DEFINE_GET(heap_peak, HP_REC_HEAP_PEAK)
DEFINE_GET(symframe, HP_REC_SYMFRAME)
DEFINE_GET(symbols_tail, HP_REC_SYMBOLS_TAIL)
DEFINE_GET(site, HP_REC_SITE)
DEFINE_GET(block, HP_REC_BLOCK)

int hp_rec_hists_get(struct hp_cursor *c, struct hp_rec_hists *v)
{
	HP_REC_HISTS(GET)
	bound(c, &v->count, 2);
	return result(c);
}

/* Reads a class list into v[0..max), zeros past its end; returns its
 * length (0 on damage). */
static unsigned get_classes(struct hp_cursor *c, uint64_t *v, unsigned max)
{
	uint64_t n = hp_cursor_u(c);

	memset(v, 0, max * sizeof *v);
	if (n > max) {
		c->err = 1;
		return 0;
	}
	for (uint64_t i = 0; i < n && !c->err; i++)
		v[i] = hp_cursor_u(c);
	return (unsigned)n;
}

int hp_rec_hist_get_n(struct hp_cursor *c, struct hp_rec_hist *v, unsigned *nsize,
		      unsigned *nlife)
{
	*nsize = get_classes(c, v->size, HP_HIST_SIZE_CLASSES);
	*nlife = get_classes(c, v->life, HP_HIST_LIFE_CLASSES);
	return result(c);
}

int hp_rec_hist_get(struct hp_cursor *c, struct hp_rec_hist *v)
{
	unsigned nsize, nlife;

	return hp_rec_hist_get_n(c, v, &nsize, &nlife);
}

int hp_rec_count_get(struct hp_cursor *c, size_t min_item_bytes, uint64_t *n)
{
	*n = hp_cursor_count(c, (uint64_t)(c->end - c->p) / min_item_bytes);
	return result(c);
}

int hp_rec_str_get(struct hp_cursor *c, struct hp_rec_str *s)
{
	s->p = (const char *)hp_cursor_blob(c, &s->len);
	return result(c);
}

int hp_rec_tag_get(struct hp_cursor *c, struct hp_rec_tag *v)
{
	HP_REC_TAG(GET)
	hp_rec_str_get(c, &v->name);
	return result(c);
}

int hp_rec_map_get(struct hp_cursor *c, struct hp_rec_map *v)
{
	HP_REC_MAP(GET)
	hp_rec_str_get(c, &v->name);
	return result(c);
}

int hp_rec_meta_get(struct hp_cursor *c, struct hp_rec_meta *v)
{
	HP_REC_META_PROCESS(GET)
	hp_rec_str_get(c, &v->program);
	return result(c);
}

int hp_rec_meta_options_get(struct hp_cursor *c, struct hp_rec_meta_options *v)
{
	hp_rec_str_get(c, &v->recorder_version);
	HP_REC_META_OPTIONS(GET)
	return result(c);
}

int hp_rec_module_event_get(struct hp_cursor *c, struct hp_rec_module_event *v)
{
	memset(v, 0, sizeof *v);
	HP_REC_MODULE_EVENT(GET)
	if (c->err || v->kind == HP_MOD_UNLOAD)
		return result(c);
	if (v->kind != HP_MOD_LOAD) {
		c->err = 1;
		return -EINVAL;
	}
	hp_rec_str_get(c, &v->path);
	hp_rec_str_get(c, &v->build_id);
	HP_REC_MODULE_LOAD(GET)
	bound(c, &v->segment_count, HP_REC_SEGMENT_MIN_BYTES);
	return result(c);
}

int hp_rec_stacks_get(struct hp_cursor *c, struct hp_rec_stacks *v)
{
	HP_REC_STACKS(GET)
	bound(c, &v->count, 2); /* a depth and a frame at least */
	return result(c);
}

int hp_rec_stack_depth_get(struct hp_cursor *c, uint64_t *depth)
{
	*depth = hp_cursor_count(c, (uint64_t)(c->end - c->p));
	if (!*depth)
		c->err = 1;
	return result(c);
}

int hp_rec_stack_frames_get(struct hp_cursor *c, uint64_t *frames, uint64_t depth)
{
	frames[0] = hp_cursor_u(c);
	for (uint64_t k = 1; k < depth; k++)
		frames[k] = frames[k - 1] + (uint64_t)hp_cursor_s(c);
	return result(c);
}

int hp_rec_sample_get(struct hp_cursor *c, struct hp_rec_sample *v, uint64_t *prev_ns)
{
	v->time_ns = *prev_ns + (uint64_t)hp_cursor_s(c);
	*prev_ns = v->time_ns;
	HP_REC_SAMPLE(GET)
	return result(c);
}

int hp_rec_site_tags_get(struct hp_cursor *c, struct hp_rec_site *v)
{
	HP_REC_SITE_TAGS(GET)
	return result(c);
}

int hp_rec_tick_get(struct hp_cursor *c, struct hp_rec_tick *v, uint64_t *prev_ns)
{
	v->time_ns = *prev_ns + (uint64_t)hp_cursor_s(c);
	*prev_ns = v->time_ns;
	HP_REC_TICK(GET)
	bound(c, &v->entry_count, HP_REC_SITE_MIN_BYTES);
	return result(c);
}

int hp_rec_symaddr_get(struct hp_cursor *c, struct hp_rec_symaddr *v)
{
	HP_REC_SYMADDR(GET)
	bound(c, &v->frame_count, HP_REC_SYMFRAME_MIN_BYTES);
	return result(c);
}
