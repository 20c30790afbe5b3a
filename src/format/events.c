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
