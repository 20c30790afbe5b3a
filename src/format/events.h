/*
 * events.h - the event log's record (HP_REC_EVENTS, format.h): one chunk
 * of one thread's allocations and frees, column by column.
 *
 * The recorder (src/recorder/events.c) keeps each thread's events in a
 * buffer of fixed-size entries and encodes a buffer into one chunk when it
 * is full, at each snapshot and at exit (hp_ev_encode, inline here: the
 * recorder links the encoder only); the analyzer decodes chunks with
 * hp_ev_decode (events.c). Columns rather than events one after another:
 * each column's bytes look alike (small deltas, repeated sizes), which is
 * what zstd, the record's compression, finds.
 *
 * Times are the CPU's time-stamp counter (rdtsc; the monotonic clock's
 * nanoseconds where there is none), in units of 2^shift ticks, so that a
 * recorded allocation costs no clock read; each chunk says what the
 * counter read when the log started and at the chunk's flush, with the
 * nanoseconds since the capture's start at both, from which a reader converts
 * (docs/format.md, "The event log").
 *
 * Nothing here allocates, locks or touches stdio; the encoder is
 * async-signal-safe when its buffer's grow function is.
 */
#ifndef HP_FORMAT_EVENTS_H
#define HP_FORMAT_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/varint.h"
#include "decode.h"
#include "encode.h"

/* The most events and buckets a chunk holds; a reader refuses more. */
#define HP_EV_CHUNK_MAX (1u << 16)

/* One event as the recorder buffers it: a fixed 32 bytes. bucket 0 is a
 * free (its size and bucket are the allocation's, found by address). */
struct hp_ev {
	uint64_t tick; /* the time-stamp counter */
	uint64_t addr;
	uint64_t size;
	uint32_t bucket; /* the recorder's bucket id; 0: a free */
	uint32_t unused;
};

/* A chunk's head: the fields before its columns. */
struct hp_ev_head {
	uint64_t thread;      /* the thread's tag id (HP_TAG_THREAD), 0: unknown */
	uint64_t tick_origin; /* the counter at the log's start ... */
	uint64_t ns_origin;   /* ... and the ns since the capture's start then */
	uint64_t tick_at;     /* the counter at this chunk's flush ... */
	uint64_t ns_at;       /* ... and the ns since the start then */
	uint64_t shift;       /* times are in units of 2^shift ticks */
	uint64_t count;       /* events */
	uint64_t nbuckets;    /* the buckets the chunk's allocations use */
};

/* A chunk's bucket: a bucket's key as a snapshot's bucket has it. */
struct hp_ev_bucket {
	uint64_t stack_id, type_tag, origin_tag, size;
};

/* An address as the address column has it: the signed delta from the
 * previous event's (the first from 0), in units of 16 bytes with the low
 * bit 0 when it is a multiple of 16, else in bytes with the low bit 1. */
static inline uint64_t hp_ev_addr_code(uint64_t addr, uint64_t prev)
{
	int64_t d = (int64_t)(addr - prev);

	if (!(d & 15))
		return hp_zigzag_encode(d >> 4) << 1;
	return hp_zigzag_encode(d) << 1 | 1;
}

static inline uint64_t hp_ev_addr_decode(uint64_t code, uint64_t prev)
{
	int64_t d = hp_zigzag_decode(code >> 1);

	return prev + (uint64_t)(code & 1 ? d : d * 16);
}

/* Appends a chunk: head h (h->count events ev[0..count), h->nbuckets
 * buckets b[0..nbuckets)), then the columns: count x u code (0 a free, k +
 * 1 an allocation of the chunk's bucket k: slot[i] is event i's k), count
 * x u time delta (from the origin's unit for the first), count x u address
 * code, then a u size per allocation. No allocation beyond out's grow. */
static inline void hp_ev_encode(struct hp_buf *out, const struct hp_ev_head *h,
				const struct hp_ev_bucket *b, const struct hp_ev *ev,
				const uint32_t *slot)
{
	/* Room for every varint at its longest, reserved once: the columns
	 * are written without a check a field. */
	uint8_t *start = hp_buf_reserve(out, 10 * (8 + 4 * h->nbuckets + 4 * h->count));
	uint8_t *p = start;
	uint64_t prev, addr = 0;

	if (!p)
		return;
	p += hp_varint_put(p, h->thread);
	p += hp_varint_put(p, h->tick_origin);
	p += hp_varint_put(p, h->ns_origin);
	p += hp_varint_put(p, h->tick_at);
	p += hp_varint_put(p, h->ns_at);
	p += hp_varint_put(p, h->shift);
	p += hp_varint_put(p, h->count);
	p += hp_varint_put(p, h->nbuckets);
	for (uint64_t i = 0; i < h->nbuckets; i++) {
		p += hp_varint_put(p, b[i].stack_id);
		p += hp_varint_put(p, b[i].type_tag);
		p += hp_varint_put(p, b[i].origin_tag);
		p += hp_varint_put(p, b[i].size);
	}
	for (uint64_t i = 0; i < h->count; i++)
		p += hp_varint_put(p, ev[i].bucket ? (uint64_t)slot[i] + 1 : 0);
	prev = h->tick_origin >> h->shift;
	for (uint64_t i = 0; i < h->count; i++) {
		uint64_t u = ev[i].tick >> h->shift;
		p += hp_varint_put(p, u >= prev ? u - prev : 0); /* never backwards */
		prev = u >= prev ? u : prev;
	}
	for (uint64_t i = 0; i < h->count; i++) {
		p += hp_varint_put(p, hp_ev_addr_code(ev[i].addr, addr));
		addr = ev[i].addr;
	}
	for (uint64_t i = 0; i < h->count; i++)
		if (ev[i].bucket)
			p += hp_varint_put(p, ev[i].size);
	out->len += (size_t)(p - start);
}

/* An event as a reader has it. */
struct hp_ev_read {
	uint64_t units; /* time: units of 2^shift ticks since the origin's unit */
	uint64_t addr, size;
	uint32_t slot; /* the chunk's bucket (allocations) */
	uint8_t alloc; /* 1: an allocation, 0: a free (size 0) */
};

/* The analyzer's side: a chunk's head (counts checked against
 * HP_EV_CHUNK_MAX and against the bytes left, so that a caller may size
 * its arrays by them), then each of its h->nbuckets buckets. Return 0 or
 * -EINVAL with c->err set. Allocate nothing. */
int hp_ev_decode_head(struct hp_cursor *c, struct hp_ev_head *h);
int hp_ev_decode_bucket(struct hp_cursor *c, struct hp_ev_bucket *b);
/* Reads the columns of a chunk whose head is h (its buckets read) into
 * ev[0..h->count): returns 0, or -EINVAL (c->err set) when a column ends
 * early or names a bucket past h->nbuckets. Allocates nothing. */
int hp_ev_decode_columns(struct hp_cursor *c, const struct hp_ev_head *h, struct hp_ev_read *ev);

#endif
