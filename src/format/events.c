/*
 * events.c - the event log's decoder (events.h): a chunk's head, its
 * buckets and its columns, every count checked before it sizes anything.
 */
#include "events.h"

#include <errno.h>
#include <string.h>
#include <zstd.h>

#include "format.h"

int hp_ev_decode_head(struct hp_cursor *c, struct hp_ev_head *h)
{
	size_t left;

	h->thread = hp_cursor_u(c);
	h->tick_origin = hp_cursor_u(c);
	h->ns_origin = hp_cursor_u(c);
	h->tick_at = hp_cursor_u(c);
	h->ns_at = hp_cursor_u(c);
	h->shift = hp_cursor_count(c, 32);
	h->count = hp_cursor_count(c, HP_EV_CHUNK_MAX);
	h->nbuckets = hp_cursor_count(c, HP_EV_CHUNK_MAX);
	if (c->err)
		return -EINVAL;
	/* Each bucket takes four bytes at least (its columns are stored
	 * raw): more than the payload holds is damage. The events' columns
	 * are compressed: their count is bounded by HP_EV_CHUNK_MAX alone,
	 * and what they take in memory by the reader's bound (capture.h). */
	left = (size_t)(c->end - c->p);
	if (h->nbuckets > left / 4 || h->nbuckets > h->count) {
		c->err = -EINVAL;
		return -EINVAL;
	}
	return 0;
}

int hp_ev_decode_bucket(struct hp_cursor *c, struct hp_ev_bucket *b)
{
	b->stack_id = hp_cursor_count(c, UINT32_MAX);
	b->type_tag = hp_cursor_count(c, UINT32_MAX);
	b->origin_tag = hp_cursor_count(c, UINT32_MAX);
	b->size = hp_cursor_u(c);
	return c->err ? -EINVAL : 0;
}

/* The next column: u raw length, u stored length (0: raw_len raw bytes
 * follow; else a zstd frame of that many bytes), into scratch when
 * compressed. *out and *n: its raw bytes. */
static int column(struct hp_cursor *c, uint64_t max, uint8_t *scratch, const uint8_t **out,
		  size_t *n)
{
	uint64_t raw = hp_cursor_count(c, max);
	uint64_t stored = hp_cursor_count(c, (uint64_t)(c->end - c->p));
	size_t got;

	if (c->err)
		return -EINVAL;
	if (!stored) {
		if (raw > (uint64_t)(c->end - c->p))
			goto bad;
		*out = c->p;
		*n = (size_t)raw;
		c->p += raw;
		return 0;
	}
	if (ZSTD_getFrameContentSize(c->p, stored) != raw)
		goto bad;
	got = ZSTD_decompress(scratch, raw, c->p, stored);
	if (ZSTD_isError(got) || got != raw)
		goto bad;
	c->p += stored;
	*out = scratch;
	*n = (size_t)raw;
	return 0;
bad:
	c->err = -EINVAL;
	return -EINVAL;
}

int hp_ev_decode_columns(struct hp_cursor *c, const struct hp_ev_head *h, struct hp_ev_read *ev,
			 uint8_t *scratch, struct hp_ev_reuse *reuse)
{
	uint64_t max = HP_EV_COL_MAX_BYTES(h->count), units = 0, pa = 0, pf = 0, pr = 0;
	const uint8_t *col;
	size_t n;
	struct hp_cursor k;

	memset(reuse->n, 0, sizeof reuse->n);
	memset(reuse->top, 0, sizeof reuse->top);
	for (int which = 0; which < HP_EV_COLS; which++) {
		if (column(c, max, scratch, &col, &n))
			return -EINVAL;
		k = (struct hp_cursor){col, col + n, 0};
		for (uint64_t i = 0; i < h->count; i++) {
			uint64_t v;
			switch (which) {
			case HP_EV_COL_CODE:
				v = hp_cursor_count(&k, 2 * h->nbuckets);
				ev[i].kind = !v ? HP_EV_FREE : v & 1 ? HP_EV_ALLOC : HP_EV_RETYPE;
				ev[i].slot = v ? (uint32_t)((v - 1) / 2) : 0;
				ev[i].size = 0;
				break;
			case HP_EV_COL_TIME:
				v = hp_cursor_u(&k);
				if (v > UINT64_MAX / 2 - units) /* a time past any run */
					k.err = -EINVAL;
				units += v;
				ev[i].units = units;
				break;
			case HP_EV_COL_ADDR:
				/* The model of hp_ev_encode_columns. */
				v = hp_cursor_u(&k);
				if (ev[i].kind == HP_EV_RETYPE) {
					if (v & 1) {
						pr = hp_ev_addr_decode(v >> 1, pr);
						ev[i].addr = pr;
					} else if ((v >> 1) >= 1 && (v >> 1) <= i &&
						   ev[i - (v >> 1)].kind == HP_EV_ALLOC) {
						ev[i].addr = ev[i - (v >> 1)].addr;
					} else {
						k.err = -EINVAL;
					}
				} else if (ev[i].kind == HP_EV_ALLOC) {
					unsigned cls = hp_ev_class(ev[i].size);
					if (v) {
						pa = hp_ev_addr_decode(v - 1, pa);
					} else if (hp_ev_reuse_top(reuse, cls)) {
						pa = hp_ev_reuse_top(reuse, cls);
						hp_ev_reuse_pop(reuse, cls);
					} else {
						k.err = -EINVAL;
					}
					ev[i].addr = pa;
				} else if (v & 1) {
					pf = hp_ev_addr_decode(v >> 1, pf);
					ev[i].addr = pf;
				} else if ((v >> 1) >= 1 && (v >> 1) <= i &&
					   ev[i - (v >> 1)].kind == HP_EV_ALLOC) {
					const struct hp_ev_read *of = &ev[i - (v >> 1)];
					pf = of->addr;
					ev[i].addr = pf;
					hp_ev_reuse_push(reuse, hp_ev_class(of->size), pf);
				} else {
					k.err = -EINVAL;
				}
				break;
			default:
				if (ev[i].kind == HP_EV_ALLOC)
					ev[i].size = hp_cursor_u(&k);
				break;
			}
		}
		if (k.err || k.p != k.end) { /* short, or bytes left over: damage */
			c->err = -EINVAL;
			return -EINVAL;
		}
	}
	return 0;
}

/* The reading side of hp_ev_bitw: bits [0, n) of acc are the stream's
 * next, then the bytes [p, end); err once it ran past the end. */
struct bitr {
	const uint8_t *p, *end;
	uint64_t acc;
	unsigned n;
	int err;
};

/* Fills acc to at least want bits (want <= 56) where the bytes last. */
static inline void fill(struct bitr *r, unsigned want)
{
	while (r->n < want && r->p < r->end) {
		r->acc |= (uint64_t)*r->p++ << r->n;
		r->n += 8;
	}
}

/* The next n bits (n <= 32); 0 and err past the end. */
static inline uint64_t get(struct bitr *r, unsigned n)
{
	uint64_t v;

	fill(r, n);
	if (r->n < n) {
		r->err = 1;
		return 0;
	}
	v = r->acc & ((1ull << n) - 1);
	r->acc = n < 64 ? r->acc >> n : 0;
	r->n -= n;
	return v;
}

static uint64_t get_wide(struct bitr *r, unsigned n)
{
	uint64_t lo;

	if (n <= 32)
		return get(r, n);
	lo = get(r, 32);
	return lo | get(r, n - 32) << 32;
}

/* A Rice code of hp_ev_rice_put: k low bits, zeros to a one or an
 * escape. */
static uint64_t get_rice(struct bitr *r, struct hp_ev_rice *s)
{
	unsigned k = hp_ev_rice_k(s), zeros;
	uint64_t low = get_wide(r, k), v;

	fill(r, HP_EV_BITS_ESCAPE + 1);
	zeros = r->acc ? (unsigned)__builtin_ctzll(r->acc) : r->n;
	if (zeros >= HP_EV_BITS_ESCAPE) {
		unsigned len;
		get(r, HP_EV_BITS_ESCAPE);
		len = (unsigned)get(r, 7);
		v = len <= 64 ? get_wide(r, len) : 0;
		if (len > 64 || (v >> k) < HP_EV_BITS_ESCAPE || (k && (v & ((1ull << k) - 1)) != low))
			r->err = 1;
	} else {
		if (zeros >= r->n) /* ran out before the one */
			r->err = 1;
		get(r, zeros + 1);
		v = (uint64_t)zeros << k | low;
	}
	hp_ev_rice_see(s, v);
	return v;
}

int hp_ev_decode_bits(struct hp_cursor *c, const struct hp_ev_head *h, struct hp_ev_read *ev)
{
	uint64_t len = hp_cursor_count(c, (uint64_t)(c->end - c->p));
	struct bitr r = {c->p, c->p + len, 0, 0, c->err != 0};
	struct hp_ev_model m = {0, 0, {0}, {0}, {0}, {0}};
	uint64_t met = 0;

	for (uint64_t i = 0; i < h->count && !r.err; i++) {
		uint64_t d = get_rice(&r, &m.time);
		if (d > UINT64_MAX / 2 - m.units) /* a time past any run */
			r.err = 1;
		m.units += d;
		ev[i].units = m.units;
		ev[i].size = 0;
		ev[i].slot = 0;
		if (!get(&r, 1)) {
			ev[i].kind = HP_EV_FREE;
			m.addr = hp_ev_addr_decode(get_rice(&r, &m.other), m.addr);
			ev[i].addr = m.addr;
			continue;
		}
		unsigned width = hp_ev_bitlen(met + 1);
		uint64_t slot = get(&r, width);
		ev[i].kind = HP_EV_ALLOC;
		if (slot == met + 1) {
			ev[i].kind = HP_EV_RETYPE;
			slot = get(&r, width);
		}
		if (slot > met || (slot == met && met >= h->nbuckets)) {
			r.err = 1;
			break;
		}
		met += slot == met;
		ev[i].slot = (uint32_t)slot;
		if (ev[i].kind == HP_EV_ALLOC) {
			ev[i].size = get_rice(&r, &m.size);
			m.addr = hp_ev_addr_decode(get_rice(&r, &m.alloc), m.addr);
		} else {
			m.addr = hp_ev_addr_decode(get_rice(&r, &m.other), m.addr);
		}
		ev[i].addr = m.addr;
	}
	/* Left: the last byte's padding, zero bits, and nothing after it. */
	if (r.err || met != h->nbuckets || r.n >= 8 || r.acc || r.p != r.end) {
		c->err = -EINVAL;
		return -EINVAL;
	}
	c->p = r.p;
	return 0;
}
