/*
 * events.c - the event log's decoder (events.h): a chunk's head, its
 * buckets and its columns, every count checked before it sizes anything.
 */
#include "events.h"

#include <errno.h>

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
	/* Each event takes three bytes at least (code, time, address), each
	 * bucket four: more than the payload holds is damage. */
	left = (size_t)(c->end - c->p);
	if (h->count > left / 3 || h->nbuckets > left / 4 || h->nbuckets > h->count) {
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

int hp_ev_decode_columns(struct hp_cursor *c, const struct hp_ev_head *h, struct hp_ev_read *ev)
{
	uint64_t units = 0, addr = 0;

	for (uint64_t i = 0; i < h->count; i++) {
		uint64_t code = hp_cursor_count(c, h->nbuckets);
		ev[i].alloc = code != 0;
		ev[i].slot = code ? (uint32_t)(code - 1) : 0;
		ev[i].size = 0;
	}
	for (uint64_t i = 0; i < h->count; i++) {
		uint64_t d = hp_cursor_u(c);
		if (d > UINT64_MAX / 2 - units) /* a time past any run: damage */
			c->err = -EINVAL;
		units += d;
		ev[i].units = units;
	}
	for (uint64_t i = 0; i < h->count; i++) {
		addr = hp_ev_addr_decode(hp_cursor_u(c), addr);
		ev[i].addr = addr;
	}
	for (uint64_t i = 0; i < h->count; i++)
		if (ev[i].alloc)
			ev[i].size = hp_cursor_u(c);
	return c->err ? -EINVAL : 0;
}
