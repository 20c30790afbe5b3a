/*
 * events.h - the event log's records (HP_REC_EVENTS, HP_REC_EVENTS_BITS,
 * format.h): chunks of one thread's allocations and frees.
 *
 * The recorder (src/recorder/events.c) keeps each thread's events in a
 * buffer of fixed-size entries and encodes a buffer into one chunk when it
 * is full, at each snapshot and at exit (hp_ev_encode, inline here: the
 * recorder links the encoder only); the analyzer decodes chunks with
 * hp_ev_decode (events.c). Format 1.6's chunks (HP_REC_EVENTS) are
 * columns rather than events one after another, each column's bytes
 * alike (small deltas, repeated sizes) for zstd; 1.7's (HP_REC_EVENTS_BITS,
 * hp_ev_encode_bits, which the recorder writes) one bit stream of
 * adaptive Rice codes, encoded in one pass with no table and no
 * compressor.
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
#include <string.h>

#include "../common/varint.h"
#include "decode.h"
#include "encode.h"

/* The most events and buckets a chunk holds; a reader refuses more. */
#define HP_EV_CHUNK_MAX (1u << 16)

/* What an event is. */
enum { HP_EV_FREE = 0, HP_EV_ALLOC = 1, HP_EV_RETYPE = 2 };

/* One event as the recorder buffers it: a fixed 32 bytes. A free has
 * bucket 0 (its size and bucket are the allocation's, found by address);
 * a retype (heapprof_set_type, a vtable read at a snapshot) names the
 * bucket the live block at addr moved to. */
struct hp_ev {
	uint64_t tick; /* the time-stamp counter */
	uint64_t addr;
	uint64_t size;
	uint32_t bucket; /* the recorder's bucket id; 0: a free */
	uint32_t kind;   /* HP_EV_* */
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

/* An address as a delta from prev: the signed delta, in units of 16 bytes
 * with the low bit 0 when it is a multiple of 16, else in bytes with the
 * low bit 1. */
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

/* The columns of a chunk, in their order (format.h, HP_REC_EVENTS). */
enum { HP_EV_COL_CODE, HP_EV_COL_TIME, HP_EV_COL_SIZE, HP_EV_COL_ADDR, HP_EV_COLS };

/* The most bytes a column of count events takes raw. */
#define HP_EV_COL_MAX_BYTES(count) ((size_t)(count)*HP_VARINT_MAX_BYTES)

/* Appends a chunk's head h and its buckets b[0..h->nbuckets) to out. */
static inline void hp_ev_encode_head(struct hp_buf *out, const struct hp_ev_head *h,
				     const struct hp_ev_bucket *b)
{
	uint8_t *start = hp_buf_reserve(out, HP_VARINT_MAX_BYTES * (8 + 4 * h->nbuckets));
	uint8_t *p = start;

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
	out->len += (size_t)(p - start);
}

/* hp_varint_put with the one- to three-byte cases inline: the columns'
 * common values (three bytes: an allocation's address from the previous
 * one's, within 16 MiB). Returns the end. */
static inline uint8_t *hp_ev_put(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return p + 2;
	}
	if (v < 0x200000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7 | 0x80);
		p[2] = (uint8_t)(v >> 14);
		return p + 3;
	}
	return p + hp_varint_put(p, v);
}

/* The encoder's index of the chunk's events by address: open addressing
 * over mask + 1 entries of 16 bits (at least twice the chunk's events,
 * which are fewer than 65,536), each 0 (empty) or 1 + the index of the
 * last event of its address. 2 bytes an entry, zeroed for each chunk
 * (16 KiB for the recorder's 4,096 events: a sequential write, where a
 * cold index's probes would miss the cache at random), so that the index
 * stays in the cache. */

/* The address model's reuse lists: for each small size class, the last
 * HP_EV_REUSE addresses freed of that class (a free of a block of the
 * chunk, whose size both sides know), the latest on top: glibc's tcache
 * and fastbins hand the latest freed chunk of a class to the next
 * allocation of that class, which is then coded as a hit. */
#define HP_EV_REUSE 8
#define HP_EV_CLASSES 64
struct hp_ev_reuse {
	uint64_t addr[HP_EV_CLASSES + 1][HP_EV_REUSE];
	uint8_t top[HP_EV_CLASSES + 1], n[HP_EV_CLASSES + 1];
};

/* A size's class in the reuse lists: 1..64 for up to 1008 bytes (glibc's
 * 16-byte chunk sizes), 0 (no list) above. */
static inline unsigned hp_ev_class(uint64_t size)
{
	return size <= 1008 ? (unsigned)((size + 23) >> 4) : 0;
}

static inline void hp_ev_reuse_push(struct hp_ev_reuse *r, unsigned c, uint64_t addr)
{
	if (!c)
		return;
	r->top[c] = (uint8_t)((r->top[c] + 1) & (HP_EV_REUSE - 1));
	r->addr[c][r->top[c]] = addr;
	if (r->n[c] < HP_EV_REUSE)
		r->n[c]++;
}

/* The top of class c's list, or 0 when it is empty (no list). */
static inline uint64_t hp_ev_reuse_top(const struct hp_ev_reuse *r, unsigned c)
{
	return c && r->n[c] ? r->addr[c][r->top[c]] : 0;
}

static inline void hp_ev_reuse_pop(struct hp_ev_reuse *r, unsigned c)
{
	r->top[c] = (uint8_t)((r->top[c] - 1) & (HP_EV_REUSE - 1));
	r->n[c]--;
}

/* The chunk-local slot of an event's bucket (the caller's numbering, from
 * 0, that the chunk's bucket list follows), asked once for each run of
 * allocations and retypes of one bucket. */
typedef uint32_t (*hp_ev_slot_fn)(void *ctx, uint32_t bucket);

/* Encodes the events ev[0..h->count) into the four raw columns col[c]
 * (each with room for HP_EV_COL_MAX_BYTES(count)), their lengths into
 * len[c]: the code (0 a free, 2 slot + 1 an allocation, 2 slot + 2 a
 * retype, slot as slot_of(ctx, its bucket) says), the time in
 * units of 2^shift ticks since the previous event's (the first: since
 * tick_origin's unit; never backwards), the address, the size of each
 * allocation. An allocation's address is 0 when it is the top of its
 * size class's reuse list (which it leaves), else 1 + hp_ev_addr_code
 * from the previous allocation's (the first from 0); a free's is, when
 * its address's last event in the chunk is an allocation, how many
 * events back that is, shifted left one bit (low bit 0), and the address
 * goes on top of that allocation's class's reuse list; else
 * hp_ev_addr_code from the previous free's address shifted left one bit
 * with the low bit 1 (a block of another chunk, or another thread's). A
 * retype's is coded as a free's, from the previous retype's address for
 * its delta, and changes neither the index nor the lists. table: the index
 * (mask + 1 entries, all 0); reuse: the lists, empty.
 * One pass, no check a field: the columns have room. */
static inline void hp_ev_encode_columns(const struct hp_ev_head *h, const struct hp_ev *ev,
					hp_ev_slot_fn slot_of, void *ctx,
					uint8_t *const col[HP_EV_COLS], size_t len[HP_EV_COLS],
					uint16_t *table, uint32_t mask, struct hp_ev_reuse *reuse)
{
	uint8_t *c = col[HP_EV_COL_CODE], *t = col[HP_EV_COL_TIME], *a = col[HP_EV_COL_ADDR];
	uint8_t *z = col[HP_EV_COL_SIZE];
	uint64_t prev = h->tick_origin >> h->shift, pa = 0, pf = 0, pr = 0;
	uint32_t last = 0, slot = 0, known = 0; /* a loop allocating at one site: one lookup */

	for (uint32_t i = 0; i < h->count; i++) {
		uint64_t u = ev[i].tick >> h->shift, x = ev[i].addr;
		uint32_t k = (uint32_t)((x >> 4) * 0x9e3779b97f4a7c15ull >> 40) & mask, e;
		const struct hp_ev *of; /* the last event of its address, if any */

		t = hp_ev_put(t, u >= prev ? u - prev : 0);
		prev = u >= prev ? u : prev;
		while ((e = table[k]) && ev[e - 1].addr != x)
			k = (k + 1) & mask;
		of = e ? &ev[e - 1] : &ev[i]; /* this one: not an allocation */
		if (ev[i].kind == HP_EV_RETYPE) {
			if (ev[i].bucket != last || !known) {
				last = ev[i].bucket;
				slot = slot_of(ctx, last);
				known = 1;
			}
			c = hp_ev_put(c, 2 * (uint64_t)slot + 2);
			if (of->kind == HP_EV_ALLOC) {
				a = hp_ev_put(a, (uint64_t)(i + 1 - e) << 1);
			} else {
				a = hp_ev_put(a, hp_ev_addr_code(x, pr) << 1 | 1);
				pr = x;
			}
			continue; /* the index keeps the allocation */
		}
		if (ev[i].kind == HP_EV_ALLOC) {
			unsigned cls = hp_ev_class(ev[i].size);
			if (ev[i].bucket != last || !known) {
				last = ev[i].bucket;
				slot = slot_of(ctx, last);
				known = 1;
			}
			c = hp_ev_put(c, 2 * (uint64_t)slot + 1);
			z = hp_ev_put(z, ev[i].size);
			if (x && hp_ev_reuse_top(reuse, cls) == x) {
				*a++ = 0;
				hp_ev_reuse_pop(reuse, cls);
			} else {
				a = hp_ev_put(a, 1 + hp_ev_addr_code(x, pa));
			}
			pa = x;
		} else {
			*c++ = 0;
			if (of->kind == HP_EV_ALLOC) {
				a = hp_ev_put(a, (uint64_t)(i + 1 - e) << 1);
				hp_ev_reuse_push(reuse, hp_ev_class(of->size), x);
			} else {
				a = hp_ev_put(a, hp_ev_addr_code(x, pf) << 1 | 1);
			}
			pf = x;
		}
		table[k] = (uint16_t)(i + 1);
	}
	len[HP_EV_COL_CODE] = (size_t)(c - col[HP_EV_COL_CODE]);
	len[HP_EV_COL_TIME] = (size_t)(t - col[HP_EV_COL_TIME]);
	len[HP_EV_COL_ADDR] = (size_t)(a - col[HP_EV_COL_ADDR]);
	len[HP_EV_COL_SIZE] = (size_t)(z - col[HP_EV_COL_SIZE]);
}

/* The bit stream of an HP_REC_EVENTS_BITS chunk (format.h; docs/format.md,
 * "EVENTS_BITS"): each event's fields in a few bits each, least
 * significant bit first, in one pass over the events in their order, with
 * no table of the chunk's addresses and no entropy coder after it, so
 * that the recorder's flush reads its buffer once, in order, and writes
 * the stream (the columns of HP_REC_EVENTS took an address index's
 * probes at random into a cold buffer, then zstd's Huffman coding of
 * three columns). Numbers are adaptive Rice codes: v's low k bits, then
 * q = v >> k zeros and a one, k = floor(log2(avg / 16)) (0 below 32), avg
 * 16 times the running mean of the numbers the code met (avg += v - avg /
 * 16, v counted up to 2^40, from 0). A quotient of HP_EV_BITS_ESCAPE or
 * more is written as v's low k bits, that many zeros, v's bit length in 7
 * bits, then v in that many bits. */
#define HP_EV_BITS_ESCAPE 24u
/* The most bytes a chunk's stream of count events takes: per event a
 * time, a kind, two bucket codes (17 bits each at most), a size and an
 * address, each number at most 41 + 24 + 7 + 64 bits; then 8 bytes of
 * room for the writer's last 8-byte store. */
#define HP_EV_BITS_MAX_BYTES(count) ((size_t)(count)*64 + 16)

/* The writer: acc holds n < 8 bits not yet whole bytes, the first in bit
 * 0; each put stores 8 bytes at p (little-endian) and moves p by the
 * whole bytes, so that the byte at p always holds acc's bits. */
struct hp_ev_bitw {
	uint64_t acc;
	uint64_t n;
	uint8_t *p;
};

struct hp_ev_rice {
	uint64_t avg; /* 16 times the running mean */
};

/* The coder's state through a chunk, the same on both sides: the previous
 * event's time unit and address, one Rice state per field. */
struct hp_ev_model {
	uint64_t units, addr;
	struct hp_ev_rice time, size, alloc, other;
};

static inline unsigned hp_ev_bitlen(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* The Rice parameter of a state whose avg is avg: floor(log2(avg / 16)),
 * 0 below 32; avg | 16 has avg's top bit from 16 up, bit 4 below, so
 * that one leading-zero count gives it. */
static inline uint64_t hp_ev_rice_k_of(uint64_t avg)
{
	return 59 - (uint64_t)__builtin_clzll(avg | 16);
}

static inline unsigned hp_ev_rice_k(const struct hp_ev_rice *r)
{
	return (unsigned)hp_ev_rice_k_of(r->avg);
}

/* avg after it sees v (v counted up to 2^40). */
static inline uint64_t hp_ev_rice_next(uint64_t avg, uint64_t v)
{
	return avg + (v < (1ull << 40) ? v : (1ull << 40)) - (avg >> 4);
}

static inline void hp_ev_rice_see(struct hp_ev_rice *r, uint64_t v)
{
	r->avg = hp_ev_rice_next(r->avg, v);
}

/* Stores acc's 8 bytes at p, little-endian. */
static inline __attribute__((always_inline)) void hp_ev_store(uint8_t *p, uint64_t acc)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	__builtin_memcpy(p, &acc, 8); /* one store, also under -fno-builtin */
#else
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(acc >> 8 * i);
#endif
}

/* Appends v's low n bits (n <= 56, v < 2^n); p has 8 bytes of room. */
static inline __attribute__((always_inline)) void hp_ev_bits_put(struct hp_ev_bitw *w, uint64_t v,
								  unsigned n)
{
	w->acc |= v << w->n;
	w->n += n;
	hp_ev_store(w->p, w->acc);
	w->p += w->n >> 3;
	w->acc >>= w->n & ~7u;
	w->n &= 7;
}

/* Appends v's low n bits, n <= 64. */
static inline void hp_ev_bits_put_wide(struct hp_ev_bitw *w, uint64_t v, unsigned n)
{
	if (n > 32) {
		hp_ev_bits_put(w, v & 0xffffffffu, 32);
		v >>= 32;
		n -= 32;
	}
	hp_ev_bits_put(w, n < 64 ? v & ((1ull << n) - 1) : v, n);
}

/* Appends v's Rice code under *avg (any length, the escape included),
 * and *avg sees v. */
static inline void hp_ev_rice_put(struct hp_ev_bitw *w, uint64_t *avg, uint64_t v)
{
	unsigned k = (unsigned)hp_ev_rice_k_of(*avg);
	uint64_t q = v >> k;

	*avg = hp_ev_rice_next(*avg, v);
	hp_ev_bits_put_wide(w, v, k);
	if (q < HP_EV_BITS_ESCAPE) {
		hp_ev_bits_put(w, 1ull << q, (unsigned)q + 1);
		return;
	}
	hp_ev_bits_put(w, 0, HP_EV_BITS_ESCAPE);
	hp_ev_bits_put(w, hp_ev_bitlen(v), 7);
	hp_ev_bits_put_wide(w, v, hp_ev_bitlen(v));
}

/* The encoder's state that its slow path (hp_ev_encode_slow) takes: the
 * writer, the Rice states' avg (time, size, an allocation's address,
 * another event's address), the slots met, the last bucket looked up and
 * its slot. */
struct hp_ev_enc {
	struct hp_ev_bitw w;
	uint64_t time, size, alloc, other;
	uint32_t met, last, slot;
};

/* One event's codes, each field on its own, whatever their lengths: the
 * encoder's path for what its fast paths leave (a retype, a code longer
 * than 24 bits, an escape). dt and dx: its time and address codes; its
 * bucket's slot (not a free's) is s->slot. Out of line, so that the encoder's loop
 * keeps its state in registers. */
static __attribute__((noinline, cold, unused)) void
hp_ev_encode_slow(struct hp_ev_enc *s, uint32_t kind, uint64_t dt, uint64_t dx, uint64_t size)
{
	hp_ev_rice_put(&s->w, &s->time, dt);
	hp_ev_bits_put(&s->w, kind != HP_EV_FREE, 1);
	if (kind != HP_EV_FREE) {
		unsigned width = hp_ev_bitlen(s->met + 1);
		if (kind == HP_EV_RETYPE)
			hp_ev_bits_put(&s->w, s->met + 1, width);
		hp_ev_bits_put(&s->w, s->slot, width);
		s->met += s->slot == s->met;
	}
	if (kind == HP_EV_ALLOC) {
		hp_ev_rice_put(&s->w, &s->size, size);
		hp_ev_rice_put(&s->w, &s->alloc, dx);
	} else {
		hp_ev_rice_put(&s->w, &s->other, dx);
	}
}

/* Encodes the events ev[0..h->count) as a chunk's bit stream at out (room
 * for HP_EV_BITS_MAX_BYTES(count)); returns its end. Each event: the Rice
 * code (model.time) of its time in units of 2^shift ticks since the
 * previous event's (the first: since tick_origin's unit; never
 * backwards); one bit, 0 a free, 1 an allocation or a retype; for an
 * allocation or a retype its bucket code: the chunk's slot of its bucket
 * (slot_of numbers the buckets as met, from 0, so that a slot is one met
 * before or the next; asked once for each run of one bucket; a bucket is
 * never 0, a free's) in bitlen(met + 1) bits, met the slots met before
 * it, a retype first the value met + 1 in as many bits; for an allocation
 * its size (model.size); last its address, the Rice code (model.alloc for
 * an allocation, model.other else) of hp_ev_addr_code from the previous
 * event's address (the first from 0). The stream ends with zero bits to a
 * whole byte. One pass, no table, no check a field: out has room.
 *
 * shift is h->shift (a constant where the caller has one). The loop's
 * fast paths take a free and an allocation whose Rice codes are 24 bits
 * at most each (k + q < 24: then q < 24, no escape, and v < 2^24, below
 * the states' clamp): a free's codes in one store of the writer (49 bits
 * at most), an allocation's in one when they fit 56 bits, else two; then
 * a free whose codes are longer, up to 41 bits each, with no escape and
 * no clamp (q < 16, k + q <= 40: v < 2^(k + q)), in two stores: the
 * frees' address state after a chunk's first address, which is coded from
 * 0 (churn: some 130 frees a chunk, 3% of its events). Every other event
 * goes to hp_ev_encode_slow. k is one leading-zero count a
 * code; no call on the common path (slot_of should call out only for a
 * bucket new to the chunk), so that what every event uses can stay in
 * registers. */
static inline __attribute__((always_inline)) uint8_t *
hp_ev_encode_bits_shift(const struct hp_ev_head *h, unsigned shift, const struct hp_ev *ev,
			hp_ev_slot_fn slot_of, void *ctx, uint8_t *out)
{
	/* In registers: the writer, the time's state, the previous time and
	 * address. In s: the other states, the buckets met and the last
	 * looked up, which one kind of event uses each. */
	uint64_t acc = 0, n = 0, at = 0, addr = 0, units = h->tick_origin >> shift;
	uint8_t *p = out;
	struct hp_ev_enc s = {{0, 0, out}, 0, 0, 0, 0, 0, 0, 0};
	const struct hp_ev *e = ev, *end = ev + h->count;

#define HP_EV_PUT(v, len)                  \
	do {                               \
		acc |= (uint64_t)(v) << n; \
		n += (len);                \
		hp_ev_store(p, acc);       \
		p += n >> 3;               \
		acc >>= n & 56;            \
		n &= 7;                    \
	} while (0)
	for (; e != end; e++) {
		uint64_t u, x, d, dt, dx, kt, st;
		uint32_t kind;

		/* s stays in memory, not in registers across the loop */
		__asm__ volatile("" ::: "memory");
		/* The entries 32 on (1 KiB): the buffer is cold when it is
		 * encoded, the program's work since its entries were written
		 * having pushed them out of the cache, and waiting on the
		 * entry's first load was the loop's largest cost. A prefetch
		 * past the buffer's end does not fault. */
		__builtin_prefetch((const void *)((uintptr_t)e + 1024));
		u = e->tick >> shift;
		x = e->addr;
		d = x - addr;
		kind = e->kind;
		dt = u - units;
		if (__builtin_expect((int64_t)dt < 0, 0)) { /* a step back: none */
			dt = 0;
			u = units;
		}
		units = u;
		/* hp_ev_addr_code, its common case (16 bytes apart) first */
		if (__builtin_expect(!(d & 15), 1))
			dx = (uint64_t)((int64_t)d >> 3 ^ (int64_t)d >> 63) << 1;
		else
			dx = hp_ev_addr_code(x, addr);
		addr = x;
		kt = hp_ev_rice_k_of(at);
		st = kt + (dt >> kt);
		if (kind == HP_EV_FREE) {
			uint64_t ao = s.other, ka = hp_ev_rice_k_of(ao), sa = ka + (dx >> ka);
			if (__builtin_expect(st < 24 && sa < 24, 1)) {
				uint64_t ct = (dt & ((1ull << kt) - 1)) | 1ull << st;
				uint64_t ca = (dx & ((1ull << ka) - 1)) | 1ull << sa;
				at += dt - (at >> 4);
				s.other = ao + dx - (ao >> 4);
				HP_EV_PUT(ct | ca << (st + 2), st + sa + 3);
				continue;
			}
			if (__builtin_expect((dt >> kt | dx >> ka) < 16 && st <= 40 && sa <= 40,
					     1)) {
				/* Longer codes: no escape (q < 16), no clamp
				 * (v < 2^st <= 2^40). */
				uint64_t ct = (dt & ((1ull << kt) - 1)) | 1ull << st;
				uint64_t ca = (dx & ((1ull << ka) - 1)) | 1ull << sa;
				at += dt - (at >> 4);
				s.other = ao + dx - (ao >> 4);
				HP_EV_PUT(ct, st + 2);
				HP_EV_PUT(ca, sa + 1);
				continue;
			}
		} else {
			if (e->bucket != s.last) {
				s.last = e->bucket;
				s.slot = slot_of(ctx, s.last);
			}
			if (__builtin_expect(kind == HP_EV_ALLOC, 1)) {
				uint64_t az = s.size, aa = s.alloc, size = e->size;
				uint64_t kz = hp_ev_rice_k_of(az), sz = kz + (size >> kz);
				uint64_t ka = hp_ev_rice_k_of(aa), sa = ka + (dx >> ka);
				if (__builtin_expect(st < 24 && sz < 24 && sa < 24, 1)) {
					uint32_t met = s.met, slot = s.slot;
					uint64_t width =
						64 - (uint64_t)__builtin_clzll((uint64_t)met + 1);
					uint64_t b1 = (dt & ((1ull << kt) - 1)) | 3ull << st |
						      (uint64_t)slot << (st + 2);
					uint64_t l1 = st + 2 + width, l2 = sz + sa + 2;
					uint64_t b2 = (size & ((1ull << kz) - 1)) | 1ull << sz |
						      ((dx & ((1ull << ka) - 1)) | 1ull << sa)
							      << (sz + 1);
					at += dt - (at >> 4);
					s.size = az + size - (az >> 4);
					s.alloc = aa + dx - (aa >> 4);
					s.met = met + (slot == met);
					if (__builtin_expect(l1 + l2 <= 56, 1)) {
						HP_EV_PUT(b1 | b2 << l1, l1 + l2);
					} else {
						HP_EV_PUT(b1, l1);
						HP_EV_PUT(b2, l2);
					}
					continue;
				}
			}
		}
		s.w = (struct hp_ev_bitw){acc, n, p};
		s.time = at;
		hp_ev_encode_slow(&s, kind, dt, dx, e->size);
		acc = s.w.acc;
		n = s.w.n;
		p = s.w.p;
		at = s.time;
	}
#undef HP_EV_PUT
	return p + (n != 0);
}

static inline __attribute__((always_inline)) uint8_t *
hp_ev_encode_bits(const struct hp_ev_head *h, const struct hp_ev *ev, hp_ev_slot_fn slot_of,
		  void *ctx, uint8_t *out)
{
	return hp_ev_encode_bits_shift(h, (unsigned)h->shift, ev, slot_of, ctx, out);
}

/* An event as a reader has it. */
struct hp_ev_read {
	uint64_t units; /* time: units of 2^shift ticks since the origin's unit */
	uint64_t addr, size;
	uint32_t slot; /* the chunk's bucket (allocations, retypes) */
	uint8_t kind;  /* HP_EV_*; a free's and a retype's size is 0 */
};

/* The analyzer's side: a chunk's head (counts checked against
 * HP_EV_CHUNK_MAX, buckets against the bytes left, so that a caller may
 * size its arrays by them), then each of its h->nbuckets buckets. Return 0 or
 * -EINVAL with c->err set. Allocate nothing. */
int hp_ev_decode_head(struct hp_cursor *c, struct hp_ev_head *h);
int hp_ev_decode_bucket(struct hp_cursor *c, struct hp_ev_bucket *b);
/* Reads the columns of a chunk whose head is h (its buckets read) into
 * ev[0..h->count), each column decompressed into scratch (room for
 * HP_EV_COL_MAX_BYTES(h->count) bytes), reuse the address model's
 * lists: returns 0, or -EINVAL (c->err
 * set) when a column does not decompress to its size, ends early, has
 * bytes left over or names a bucket past h->nbuckets. Allocates nothing
 * (zstd's decompression context aside). */
int hp_ev_decode_columns(struct hp_cursor *c, const struct hp_ev_head *h, struct hp_ev_read *ev,
			 uint8_t *scratch, struct hp_ev_reuse *reuse);
/* Reads the bit stream of an HP_REC_EVENTS_BITS chunk whose head is h
 * (its buckets read): u its length in bytes, then the stream, into
 * ev[0..h->count), c moved past it: returns 0, or
 * -EINVAL (c->err set) when the stream ends early, has more than its
 * padding's zero bits left over, names a bucket past the next one to meet
 * or past h->nbuckets, meets fewer than h->nbuckets, escapes to a
 * number past 64 bits, or gives a time past any run. Allocates nothing. */
int hp_ev_decode_bits(struct hp_cursor *c, const struct hp_ev_head *h, struct hp_ev_read *ev);

#endif
