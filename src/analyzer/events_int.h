/*
 * events_int.h - the event log in time order, and its blocks matched as
 * they open and close, for events.c and events_timeline.c (events.h
 * says what they make of it).
 *
 * The log's events in file order are each thread's in its order, a
 * chunk at a time; in time order they are the merge of its runs (the
 * longest stretches already in order), which struct ev_order walks with
 * a heap of one cursor per run, holding nothing per event. The order is
 * by (tick, rank, index), rank: frees, allocations, retypes; so each
 * address's events come as the matching has always taken them.
 *
 * struct ev_match matches them on the way, with a table of the open
 * blocks by address: an allocation opens its address, the next free of
 * it closes the block (and an allocation over an open address closes
 * the earlier block at its time: its free was lost); a free of an
 * address never opened (a block from before the log) is no block; a
 * retype renames the open block. Its memory is that of the blocks open
 * at once, never the log's. A reader that needs a block's future at
 * its allocation (its lifetime, its last name) reads the log twice
 * (struct ev_future).
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_EVENTS_INT_H
#define HP_ANALYZER_EVENTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "../common/table.h"
#include "events.h"

#define HP_EV_NONE UINT32_MAX

/* A run's next event in the merge: (tick, rank << 32 | index). */
struct ev_cursor {
	uint64_t tick, key;
	uint32_t end;
};

struct ev_order {
	const struct hp_capture *cap;
	uint32_t *starts; /* run r: [starts[r], starts[r + 1]), starts[nruns] = nevents */
	size_t nruns;
	struct ev_cursor *heap;
	size_t nheap;
	uint64_t end_ns;  /* the log's end: its latest event or the last snapshot */
	size_t nretypes;  /* retype events in the log */
	uint64_t last_tick, last_ns; /* hp_capture_event_ns's last answer */
	int have_last;
};

/* Finds cap's runs (one read of the log) and the log's end. Returns 0 or
 * -ENOMEM (a log of 2^32 events or more too). */
int hp_ev_order_init(struct ev_order *o, const struct hp_capture *cap);
void hp_ev_order_free(struct ev_order *o);
/* Back to the log's first event. */
void hp_ev_order_rewind(struct ev_order *o);
/* The next event's index in time order, HP_EV_NONE after the last. */
uint32_t hp_ev_order_next(struct ev_order *o);
/* The ns of a tick (hp_capture_event_ns, its last answer kept). */
uint64_t hp_ev_order_ns(struct ev_order *o, uint64_t tick);

/* An open block. key and flag are the reader's. */
struct ev_open {
	uint64_t addr, size, alloc_ns, alloc_tick;
	uint32_t i;      /* its allocation's event */
	uint32_t retype; /* its last retype's event, or HP_EV_NONE */
	uint32_t stack_id, type_tag, origin_tag, thread;
	uint32_t key, flag;
	uint32_t next; /* the free list's */
	uint32_t live;
};

enum { HP_EV_IT_OPEN, HP_EV_IT_CLOSE, HP_EV_IT_LEFT };

/* What the matching met: a block opened (at ns), closed (at ns, by event
 * j), or left open at the log's end (ns UINT64_MAX), after every other.
 * b stays valid until the next hp_ev_match_next. */
struct ev_item {
	int kind;
	uint32_t j;
	uint64_t ns;
	struct ev_open *b;
};

struct ev_match {
	struct ev_order *o;
	struct ev_open *b;
	size_t nb, alloc_b;
	uint32_t free_head;
	uint32_t *slot; /* open addressing by address: an index into b, or HP_EV_NONE */
	size_t mask, nlive;
	uint32_t pending, release;
	uint64_t pending_ns;
	size_t drain;
	int draining;
};

/* Starts a matching of o's log from its first event (rewinds o). */
int hp_ev_match_init(struct ev_match *m, struct ev_order *o);
void hp_ev_match_free(struct ev_match *m);
/* The next item: 1, 0 after the last, or -ENOMEM. */
int hp_ev_match_next(struct ev_match *m, struct ev_item *it);

/* b as a block (free_ns: UINT64_MAX for one left open), its key its
 * last retype's when given. */
void hp_ev_open_block(const struct ev_open *b, uint64_t free_ns, struct hp_ev_block *x);

/* What a reader needs of a block's future at its allocation, read by a
 * first matching: whether sel keeps it (kept, a bit per event; when
 * asked), its closing event (close, per event; when asked), its last
 * retype (retyped: allocation event -> retype event, for the blocks
 * retyped only). */
struct ev_future {
	uint8_t *kept;
	uint32_t *close;
	struct hp_u64map retyped;
};

/* Reads the log once into f: kept when sel has lifetimes (else NULL:
 * the thread alone decides, at the allocation), close when want_close,
 * retyped always (empty without retypes). Returns 0 or -ENOMEM. */
int hp_ev_future_read(struct ev_future *f, struct ev_order *o,
		      const struct hp_events_select *sel, int want_close);
void hp_ev_future_free(struct ev_future *f);
/* Whether sel keeps the block allocated by event i (its thread checked
 * here, its lifetime by f->kept). */
int hp_ev_future_keeps(const struct ev_future *f, const struct hp_capture *cap,
		       const struct hp_events_select *sel, uint32_t i);
/* The key (stack, type, origin) the block allocated by event i ends
 * with: its last retype's, else its allocation's. */
void hp_ev_future_key(const struct ev_future *f, const struct hp_capture *cap, uint32_t i,
		      uint32_t *stack_id, uint32_t *type_tag, uint32_t *origin_tag);

#endif
