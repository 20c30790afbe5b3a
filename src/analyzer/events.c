/*
 * events.c - the event log's blocks and the snapshot a selection makes
 * (events.h).
 *
 * Matching (events_int.h): the events in time order, by (time, frees
 * first, file order), so each address's in that order; an allocation
 * opens its address, the next free of it closes the block. The recorder
 * takes a block out of its register before the real free, and logs an
 * allocation after the real malloc, so the free of an address always
 * comes before its reuse, in any thread; an allocation over an open
 * address (its free was lost) closes the earlier block at its time; a
 * free of an address never opened (a block from before the log) is no
 * block. No reader holds the log's blocks: each takes them as they open
 * and close.
 */
#include "events.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/sort.h"
#include "../common/units.h"
#include "../common/vec.h"
#include "../format/events.h"
#include "events_int.h"

int hp_events_has_log(const struct hp_capture *cap)
{
	return (cap->flags & HP_META_EVENTS) != 0;
}

int hp_events_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}};
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!*end) {
		if (v != 0)
			return -EINVAL; /* a unit is wanted, but for 0 */
		*ns = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (strcmp(end, units[i].unit) == 0) {
			double x = v * units[i].ns;
			if (x >= 1.8e19)
				return -EINVAL;
			*ns = (uint64_t)(x + 0.5);
			return 0;
		}
	return -EINVAL;
}

/* --- the log in time order (events_int.h) -------------------------------- */

static inline uint32_t rank_of(const struct hp_cap_event *e)
{
	return e->kind == HP_EV_FREE ? 0u : e->kind == HP_EV_ALLOC ? 1u : 2u;
}

static inline int cursor_less(const struct ev_cursor *a, const struct ev_cursor *b)
{
	return a->tick != b->tick ? a->tick < b->tick : a->key < b->key;
}

static void sift_down(struct ev_cursor *h, size_t n, size_t i)
{
	struct ev_cursor x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && cursor_less(&h[c + 1], &h[c]))
			c++;
		if (!cursor_less(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

int hp_ev_order_init(struct ev_order *o, const struct hp_capture *cap)
{
	size_t n = cap->nevents, alloc = 0;
	const struct hp_cap_snapshot *last = hp_capture_last(cap);
	uint64_t max_tick = 0, prev_tick = 0;
	uint32_t prev_rank = 0;

	memset(o, 0, sizeof *o);
	o->cap = cap;
	if (n >= HP_EV_NONE)
		return -ENOMEM;
	/* A run: events whose (tick, rank) never goes back. */
	for (size_t i = 0; i < n; i++) {
		const struct hp_cap_event *e = &cap->events[i];
		uint32_t r = rank_of(e);
		if (!i || e->tick < prev_tick || (e->tick == prev_tick && r < prev_rank)) {
			if (hp_vec_grow(&o->starts, &alloc, o->nruns + 2))
				goto nomem;
			o->starts[o->nruns++] = (uint32_t)i;
		}
		prev_tick = e->tick;
		prev_rank = r;
		if (e->tick > max_tick)
			max_tick = e->tick;
		o->nretypes += e->kind == HP_EV_RETYPE;
	}
	if (hp_vec_grow(&o->starts, &alloc, o->nruns + 1))
		goto nomem;
	o->starts[o->nruns] = (uint32_t)n;
	if (!(o->heap = malloc((o->nruns ? o->nruns : 1) * sizeof *o->heap)))
		goto nomem;
	/* The ns of the latest tick is the latest ns: the clock's line
	 * rises. */
	o->end_ns = last ? last->time_ns : 0;
	if (n && hp_capture_event_ns(cap, max_tick) > o->end_ns)
		o->end_ns = hp_capture_event_ns(cap, max_tick);
	hp_ev_order_rewind(o);
	return 0;
nomem:
	hp_ev_order_free(o);
	return -ENOMEM;
}

void hp_ev_order_free(struct ev_order *o)
{
	free(o->starts);
	free(o->heap);
	memset(o, 0, sizeof *o);
}

void hp_ev_order_rewind(struct ev_order *o)
{
	const struct hp_cap_event *ev = o->cap->events;

	o->nheap = o->nruns;
	for (size_t r = 0; r < o->nruns; r++) {
		uint32_t i = o->starts[r];
		o->heap[r] = (struct ev_cursor){ev[i].tick, (uint64_t)rank_of(&ev[i]) << 32 | i,
						o->starts[r + 1]};
	}
	for (size_t r = o->nheap / 2; r-- > 0;)
		sift_down(o->heap, o->nheap, r);
}

uint32_t hp_ev_order_next(struct ev_order *o)
{
	struct ev_cursor *top = o->heap;
	uint32_t i;

	if (!o->nheap)
		return HP_EV_NONE;
	i = (uint32_t)top->key;
	if (i + 1 < top->end) {
		const struct hp_cap_event *e = &o->cap->events[i + 1];
		top->tick = e->tick;
		top->key = (uint64_t)rank_of(e) << 32 | (i + 1);
	} else {
		*top = o->heap[--o->nheap];
	}
	if (o->nheap > 1)
		sift_down(o->heap, o->nheap, 0);
	return i;
}

uint64_t hp_ev_order_ns(struct ev_order *o, uint64_t tick)
{
	if (!o->have_last || tick != o->last_tick) {
		o->last_tick = tick;
		o->last_ns = hp_capture_event_ns(o->cap, tick);
		o->have_last = 1;
	}
	return o->last_ns;
}

/* --- the matching (events_int.h) ---------------------------------------- */

static inline size_t addr_slot(const struct ev_match *m, uint64_t addr)
{
	return (size_t)(((addr >> 4) * 0x9e3779b97f4a7c15ull) >> 20) & m->mask;
}

/* addr's slot: its block's, or the empty one where it would go. */
static size_t find_slot(const struct ev_match *m, uint64_t addr)
{
	size_t p = addr_slot(m, addr);

	while (m->slot[p] != HP_EV_NONE && m->b[m->slot[p]].addr != addr)
		p = (p + 1) & m->mask;
	return p;
}

/* Empties slot p, moving back the blocks after it that probed past it. */
static void remove_slot(struct ev_match *m, size_t p)
{
	size_t q = p;

	m->slot[p] = HP_EV_NONE;
	for (;;) {
		size_t home;
		q = (q + 1) & m->mask;
		if (m->slot[q] == HP_EV_NONE)
			return;
		home = addr_slot(m, m->b[m->slot[q]].addr);
		/* q's block may move to p when p lies on its probe path. */
		if ((q > p && (home <= p || home > q)) || (q < p && home <= p && home > q)) {
			m->slot[p] = m->slot[q];
			m->slot[q] = HP_EV_NONE;
			p = q;
		}
	}
}

static int grow_slots(struct ev_match *m)
{
	size_t n = (m->mask + 1) * 2;
	uint32_t *old = m->slot;
	size_t oldn = m->mask + 1;

	if (!(m->slot = malloc(n * sizeof *m->slot))) {
		m->slot = old;
		return -ENOMEM;
	}
	memset(m->slot, 0xff, n * sizeof *m->slot);
	m->mask = n - 1;
	for (size_t i = 0; i < oldn; i++)
		if (old[i] != HP_EV_NONE)
			m->slot[find_slot(m, m->b[old[i]].addr)] = old[i];
	free(old);
	return 0;
}

int hp_ev_match_init(struct ev_match *m, struct ev_order *o)
{
	memset(m, 0, sizeof *m);
	m->o = o;
	m->free_head = m->pending = m->release = HP_EV_NONE;
	m->mask = 1023;
	if (!(m->slot = malloc((m->mask + 1) * sizeof *m->slot)))
		return -ENOMEM;
	memset(m->slot, 0xff, (m->mask + 1) * sizeof *m->slot);
	hp_ev_order_rewind(o);
	return 0;
}

void hp_ev_match_free(struct ev_match *m)
{
	free(m->b);
	free(m->slot);
	memset(m, 0, sizeof *m);
}

/* Opens event j's block at ns. */
static int open_block(struct ev_match *m, uint32_t j, uint64_t ns, struct ev_item *it)
{
	const struct hp_cap_event *e = &m->o->cap->events[j];
	uint32_t k;

	if (2 * (m->nlive + 1) > m->mask + 1 && grow_slots(m))
		return -ENOMEM;
	if (m->free_head != HP_EV_NONE) {
		k = m->free_head;
		m->free_head = m->b[k].next;
	} else {
		if (hp_vec_grow(&m->b, &m->alloc_b, m->nb + 1))
			return -ENOMEM;
		k = (uint32_t)m->nb++;
	}
	m->b[k] = (struct ev_open){e->addr,       e->size,       ns,        e->tick,
				   j,             HP_EV_NONE,    e->stack_id, e->type_tag,
				   e->origin_tag, e->thread,     0,         0,
				   HP_EV_NONE,    1};
	m->slot[find_slot(m, e->addr)] = k;
	m->nlive++;
	*it = (struct ev_item){HP_EV_IT_OPEN, j, ns, &m->b[k]};
	return 1;
}

int hp_ev_match_next(struct ev_match *m, struct ev_item *it)
{
	const struct hp_cap_event *ev = m->o->cap->events;

	if (m->release != HP_EV_NONE) {
		m->b[m->release].live = 0;
		m->b[m->release].next = m->free_head;
		m->free_head = m->release;
		m->release = HP_EV_NONE;
	}
	if (m->pending != HP_EV_NONE) {
		uint32_t j = m->pending;
		m->pending = HP_EV_NONE;
		return open_block(m, j, m->pending_ns, it);
	}
	while (!m->draining) {
		uint32_t j = hp_ev_order_next(m->o);
		const struct hp_cap_event *e;
		size_t p;
		uint32_t k;
		uint64_t ns;
		if (j == HP_EV_NONE) {
			m->draining = 1;
			break;
		}
		e = &ev[j];
		p = find_slot(m, e->addr);
		k = m->slot[p];
		if (e->kind == HP_EV_RETYPE) {
			if (k != HP_EV_NONE) { /* its type named after its allocation */
				m->b[k].stack_id = e->stack_id;
				m->b[k].type_tag = e->type_tag;
				m->b[k].origin_tag = e->origin_tag;
				m->b[k].retype = j;
			}
			continue;
		}
		if (k == HP_EV_NONE && e->kind == HP_EV_FREE)
			continue; /* a block from before the log */
		ns = hp_ev_order_ns(m->o, e->tick);
		if (k == HP_EV_NONE)
			return open_block(m, j, ns, it);
		/* Its free, or (an allocation) its free was lost. */
		remove_slot(m, p);
		m->nlive--;
		m->release = k;
		if (e->kind != HP_EV_FREE) {
			m->pending = j;
			m->pending_ns = ns;
		}
		*it = (struct ev_item){HP_EV_IT_CLOSE, j, ns, &m->b[k]};
		return 1;
	}
	for (; m->drain < m->nb; m->drain++)
		if (m->b[m->drain].live) {
			*it = (struct ev_item){HP_EV_IT_LEFT, HP_EV_NONE, UINT64_MAX,
					       &m->b[m->drain++]};
			return 1;
		}
	return 0;
}

void hp_ev_open_block(const struct ev_open *b, uint64_t free_ns, struct hp_ev_block *x)
{
	*x = (struct hp_ev_block){b->addr,     b->size,     b->alloc_ns,   free_ns,
				  b->stack_id, b->type_tag, b->origin_tag, b->thread};
}

/* --- a block's future (events_int.h) ------------------------------------ */

int hp_ev_future_read(struct ev_future *f, struct ev_order *o,
		      const struct hp_events_select *sel, int want_close)
{
	const struct hp_capture *cap = o->cap;
	size_t n = cap->nevents ? cap->nevents : 1;
	struct ev_match m;
	struct ev_item it;
	int ret;

	memset(f, 0, sizeof *f);
	if (!want_close && !(sel && (sel->lived_under || sel->lived_over)) && !o->nretypes)
		return 0; /* nothing to read */
	if (sel && (sel->lived_under || sel->lived_over) && !(f->kept = calloc((n + 7) / 8, 1)))
		return -ENOMEM;
	if (want_close) {
		if (!(f->close = malloc(n * sizeof *f->close))) {
			hp_ev_future_free(f);
			return -ENOMEM;
		}
		memset(f->close, 0xff, n * sizeof *f->close);
	}
	if ((ret = hp_ev_match_init(&m, o)) != 0) {
		hp_ev_future_free(f);
		return ret;
	}
	while ((ret = hp_ev_match_next(&m, &it)) > 0) {
		struct hp_ev_block x;
		if (it.kind == HP_EV_IT_OPEN)
			continue;
		if (it.b->retype != HP_EV_NONE && hp_u64map_put(&f->retyped, it.b->i, it.b->retype)) {
			ret = -ENOMEM;
			break;
		}
		if (f->close && it.kind == HP_EV_IT_CLOSE)
			f->close[it.b->i] = it.j;
		if (f->kept) {
			hp_ev_open_block(it.b, it.kind == HP_EV_IT_CLOSE ? it.ns : UINT64_MAX, &x);
			if (hp_events_keep(cap, sel, &x, o->end_ns))
				f->kept[it.b->i / 8] |= (uint8_t)(1u << (it.b->i % 8));
		}
	}
	hp_ev_match_free(&m);
	if (ret < 0)
		hp_ev_future_free(f);
	return ret < 0 ? ret : 0;
}

void hp_ev_future_free(struct ev_future *f)
{
	free(f->kept);
	free(f->close);
	hp_u64map_free(&f->retyped);
	memset(f, 0, sizeof *f);
}

int hp_ev_future_keeps(const struct ev_future *f, const struct hp_capture *cap,
		       const struct hp_events_select *sel, uint32_t i)
{
	char buf[32];

	if (f->kept)
		return (f->kept[i / 8] >> (i % 8)) & 1; /* the thread too */
	return !sel->thread ||
	       strcmp(hp_events_thread_name(cap, cap->events[i].thread, buf, sizeof buf),
		      sel->thread) == 0;
}

void hp_ev_future_key(const struct ev_future *f, const struct hp_capture *cap, uint32_t i,
		      uint32_t *stack_id, uint32_t *type_tag, uint32_t *origin_tag)
{
	const struct hp_cap_event *e = &cap->events[i];
	uint32_t j;

	if (hp_u64map_count(&f->retyped) && hp_u64map_get(&f->retyped, i, &j))
		e = &cap->events[j];
	*stack_id = e->stack_id;
	*type_tag = e->type_tag;
	*origin_tag = e->origin_tag;
}

/* --- the blocks by allocation time ---------------------------------------- */

struct hp_events_blocks {
	const struct hp_capture *cap;
	struct ev_order o;
	struct ev_future f;
	uint32_t *moment; /* the allocations of one ns, by address */
	size_t nmoment, alloc_moment, pos;
	uint32_t ahead; /* the first allocation of the next ns, or HP_EV_NONE */
	uint64_t moment_ns;
	int done;
};

int hp_events_blocks_open(const struct hp_capture *cap, struct hp_events_blocks **out,
			  uint64_t *end_ns)
{
	struct hp_events_blocks *it = calloc(1, sizeof *it);

	*out = NULL;
	if (!it)
		return -ENOMEM;
	it->cap = cap;
	if (hp_ev_order_init(&it->o, cap) || hp_ev_future_read(&it->f, &it->o, NULL, 1)) {
		hp_events_blocks_close(it);
		return -ENOMEM;
	}
	hp_events_blocks_rewind(it);
	*end_ns = it->o.end_ns;
	*out = it;
	return 0;
}

void hp_events_blocks_rewind(struct hp_events_blocks *it)
{
	hp_ev_order_rewind(&it->o);
	it->nmoment = it->pos = 0;
	it->ahead = HP_EV_NONE;
	it->done = 0;
}

void hp_events_blocks_close(struct hp_events_blocks *it)
{
	if (!it)
		return;
	hp_ev_order_free(&it->o);
	hp_ev_future_free(&it->f);
	free(it->moment);
	free(it);
}

/* The next allocation in time order, HP_EV_NONE after the last. */
static uint32_t next_alloc(struct hp_events_blocks *it)
{
	uint32_t j;

	while ((j = hp_ev_order_next(&it->o)) != HP_EV_NONE) {
		uint8_t kind = it->cap->events[j].kind;
		if (kind != HP_EV_FREE && kind != HP_EV_RETYPE)
			return j;
	}
	return j;
}

static const struct hp_capture *sort_cap; /* by_addr's */

static int by_addr(const void *a, const void *b)
{
	const struct hp_cap_event *x = &sort_cap->events[*(const uint32_t *)a];
	const struct hp_cap_event *y = &sort_cap->events[*(const uint32_t *)b];
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->tick != y->tick)
		return x->tick < y->tick ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The next ns's allocations, by address (then time, then file order:
 * those of one address as the matching met them). Returns 0, or -ENOMEM
 * (an empty moment, as at the end). */
static int fill_moment(struct hp_events_blocks *it)
{
	uint32_t j = it->ahead;
	uint64_t ns;

	it->nmoment = it->pos = 0;
	if (j == HP_EV_NONE && (it->done || (j = next_alloc(it)) == HP_EV_NONE)) {
		it->done = 1;
		return 0;
	}
	ns = hp_ev_order_ns(&it->o, it->cap->events[j].tick);
	for (;;) {
		if (hp_vec_grow(&it->moment, &it->alloc_moment, it->nmoment + 1))
			return -ENOMEM;
		it->moment[it->nmoment++] = j;
		if ((j = next_alloc(it)) == HP_EV_NONE) {
			it->ahead = HP_EV_NONE;
			it->done = 1;
			break;
		}
		if (hp_ev_order_ns(&it->o, it->cap->events[j].tick) != ns) {
			it->ahead = j;
			break;
		}
	}
	it->moment_ns = ns;
	if (it->nmoment > 1) {
		sort_cap = it->cap;
		hp_sort(it->moment, it->nmoment, sizeof *it->moment, by_addr);
	}
	return 0;
}

int hp_events_blocks_next(struct hp_events_blocks *it, struct hp_ev_block *b)
{
	const struct hp_cap_event *e;
	uint32_t i, c;

	if (it->pos == it->nmoment) {
		if (fill_moment(it))
			return -ENOMEM;
		if (!it->nmoment)
			return 0;
	}
	i = it->moment[it->pos++];
	e = &it->cap->events[i];
	c = it->f.close[i];
	*b = (struct hp_ev_block){e->addr, e->size, it->moment_ns,
				  c == HP_EV_NONE ? UINT64_MAX
						  : hp_capture_event_ns(it->cap, it->cap->events[c].tick),
				  0, 0, 0, e->thread};
	hp_ev_future_key(&it->f, it->cap, i, &b->stack_id, &b->type_tag, &b->origin_tag);
	return 1;
}

const char *hp_events_thread_name(const struct hp_capture *cap, uint32_t id, char *buf,
				  size_t cap_)
{
	const struct hp_cap_tag *t = hp_capture_tag(cap, HP_TAG_THREAD, id);

	if (!id || !t)
		return "(unknown thread)";
	if (t->name && t->name[0])
		return t->name;
	snprintf(buf, cap_, "tid %" PRIu64, t->a);
	return buf;
}

int hp_events_keep(const struct hp_capture *cap, const struct hp_events_select *sel,
		   const struct hp_ev_block *b, uint64_t end_ns)
{
	uint64_t until = b->free_ns == UINT64_MAX ? end_ns : b->free_ns;
	uint64_t lived = until > b->alloc_ns ? until - b->alloc_ns : 0;
	char buf[32];

	if (sel->thread &&
	    strcmp(hp_events_thread_name(cap, b->thread, buf, sizeof buf), sel->thread) != 0)
		return 0;
	if (sel->lived_under && (b->free_ns == UINT64_MAX || lived >= sel->under_ns))
		return 0;
	if (sel->lived_over && lived <= sel->over_ns)
		return 0;
	return 1;
}

static int by_key(const void *a, const void *b)
{
	const struct hp_rec_bucket *x = a, *y = b;

	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	if (x->type_tag != y->type_tag)
		return x->type_tag < y->type_tag ? -1 : 1;
	if (x->origin_tag != y->origin_tag)
		return x->origin_tag < y->origin_tag ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* The snapshot's buckets while the log is read: one per key, each with
 * its blocks in use now and at the peak. The peak's are kept lazily: a
 * bucket about to change saves what it held at the latest peak (seen:
 * the peak it saved for), so that a new peak costs nothing. */
struct kbucket {
	struct hp_rec_bucket b;
	uint64_t now_count, now_bytes, peak_count, peak_bytes, seen;
};

struct kbuckets {
	struct kbucket *k;
	size_t n, alloc;
	struct hp_hindex index;
	uint64_t peaks; /* new peaks so far */
};

static uint64_t bucket_hash(const struct hp_rec_bucket *b)
{
	const uint64_t w[4] = {b->stack_id, b->type_tag, b->origin_tag, b->size};
	return hp_hash_words(w, 4, 0x6576627563686bull);
}

/* key's bucket, added when new. Returns 0 or -ENOMEM. */
static int kbucket_of(struct kbuckets *t, const struct hp_rec_bucket *key, uint32_t *out)
{
	uint64_t h = bucket_hash(key);
	struct hp_hindex_probe it;
	uint32_t i;

	hp_hindex_probe(&t->index, h, &it);
	while ((i = hp_hindex_next(&t->index, &it)) != HP_HINDEX_NONE)
		if (by_key(&t->k[i].b, key) == 0) {
			*out = i;
			return 0;
		}
	if (hp_vec_grow(&t->k, &t->alloc, t->n + 1) || hp_hindex_add(&t->index, h, (uint32_t)t->n))
		return -ENOMEM;
	t->k[t->n] = (struct kbucket){.b = *key, .seen = UINT64_MAX};
	*out = (uint32_t)t->n++;
	return 0;
}

/* Bucket k's blocks in use change by count, bytes. */
static void kbucket_move(struct kbuckets *t, uint32_t k, int64_t count, int64_t bytes)
{
	struct kbucket *x = &t->k[k];

	if (x->seen != t->peaks) {
		x->peak_count = x->now_count;
		x->peak_bytes = x->now_bytes;
		x->seen = t->peaks;
	}
	x->now_count += (uint64_t)count;
	x->now_bytes += (uint64_t)bytes;
}

int hp_events_apply(struct hp_capture *cap, const struct hp_events_select *sel,
		    struct hp_events_window *w, char *err, size_t errlen)
{
	struct hp_events_window win = {0};
	struct ev_order o;
	struct ev_future f;
	struct ev_match m;
	struct ev_item it;
	struct kbuckets kb = {0};
	struct hp_rec_bucket *bk = NULL;
	uint64_t end, from, to, peak_t = 0, moment = 0;
	int64_t in_use = 0, peak = -1;
	int in_moment = 0, sampled = cap->sample_rate_bytes > 1;
	struct hp_cap_image *img;
	struct hp_cap_snapshot *s;
	int ret = -ENOMEM;

	if (!hp_events_has_log(cap)) {
		snprintf(err, errlen,
			 "the capture has no event log: record with heapprof run "
			 "--events");
		return -ENODATA;
	}
	if (sel->between && sel->to_ns < sel->from_ns) {
		snprintf(err, errlen, "--between: the window ends before it starts");
		return -EINVAL;
	}
	if (hp_ev_order_init(&o, cap))
		return -ENOMEM;
	if (hp_ev_future_read(&f, &o, sel, 0)) {
		hp_ev_order_free(&o);
		return -ENOMEM;
	}
	if (hp_ev_match_init(&m, &o))
		goto out;
	end = o.end_ns;
	from = sel->between ? sel->from_ns : 0;
	to = sel->between ? sel->to_ns : UINT64_MAX;
	/* One reading in time order: a kept block allocated in the window
	 * counts at its allocation, its free in the window at its free; the
	 * peak is the first moment (one ns) the kept blocks' bytes in use
	 * were highest in the window. flag: the block is kept (bit 0) and
	 * was allocated in the window (bit 1). */
	while ((ret = hp_ev_match_next(&m, &it)) > 0) {
		struct ev_open *b = it.b;
		struct hp_ev_block x;
		int freed_in;
		if (in_moment && it.ns != moment) { /* the moment before ends */
			if (in_use > peak) {
				peak = in_use;
				peak_t = moment;
				kb.peaks++;
			}
			in_moment = 0;
		}
		if (it.kind == HP_EV_IT_OPEN) {
			struct hp_rec_bucket key = {.size = sampled ? b->size : 0};
			b->flag = (uint32_t)hp_ev_future_keeps(&f, cap, sel, b->i);
			if (!b->flag || b->alloc_ns < from || b->alloc_ns > to)
				continue;
			b->flag |= 2;
			hp_ev_future_key(&f, cap, b->i, &key.stack_id, &key.type_tag,
					 &key.origin_tag);
			if ((ret = kbucket_of(&kb, &key, &b->key)) != 0)
				break;
			kb.k[b->key].b.alloc_count++;
			kb.k[b->key].b.alloc_bytes += b->size;
			kbucket_move(&kb, b->key, 1, (int64_t)b->size);
			in_use += (int64_t)b->size;
			in_moment = 1;
			moment = it.ns;
			continue;
		}
		if (!(b->flag & 1))
			continue;
		hp_ev_open_block(b, it.kind == HP_EV_IT_CLOSE ? it.ns : UINT64_MAX, &x);
		freed_in = x.free_ns != UINT64_MAX && x.free_ns >= from && x.free_ns <= to;
		if (freed_in) {
			win.free_count++;
			win.free_bytes += x.size;
			if (x.alloc_ns < from) {
				win.before_count++;
				win.before_bytes += x.size;
			}
		}
		if (!(b->flag & 2))
			continue;
		win.alloc_count++;
		win.alloc_bytes += x.size;
		if (x.free_ns != UINT64_MAX && x.free_ns <= to) {
			kb.k[b->key].b.free_count++;
			kb.k[b->key].b.free_bytes += x.size;
		}
		if (freed_in) {
			kbucket_move(&kb, b->key, -1, -(int64_t)x.size);
			in_use -= (int64_t)x.size;
			in_moment = 1;
			moment = it.ns;
		} else {
			win.left_count++;
			win.left_bytes += x.size;
		}
	}
	if (ret < 0)
		goto out;
	if (in_moment && in_use > peak) {
		peak = in_use;
		peak_t = moment;
		kb.peaks++;
	}
	ret = -ENOMEM;
	/* The buckets by key, each with what it held at the peak. */
	if (!(bk = malloc((kb.n ? kb.n : 1) * sizeof *bk)))
		goto out;
	for (size_t i = 0; i < kb.n; i++) {
		struct kbucket *x = &kb.k[i];
		int saved = x->seen == kb.peaks;
		bk[i] = x->b;
		bk[i].peak_count = peak < 0 ? 0 : saved ? x->peak_count : x->now_count;
		bk[i].peak_bytes = peak < 0 ? 0 : saved ? x->peak_bytes : x->now_bytes;
	}
	hp_sort(bk, kb.n, sizeof *bk, by_key);
	win.from_ns = from;
	win.to_ns = sel->between ? to : end;
	img = &cap->images[cap->image];
	s = realloc(img->snapshots, (img->nsnapshots + 1) * sizeof *s);
	if (!s)
		goto out;
	img->snapshots = s;
	s = &img->snapshots[img->nsnapshots];
	memset(s, 0, sizeof *s);
	s->seq = img->nsnapshots ? img->snapshots[img->nsnapshots - 1].seq + 1 : 1;
	s->time_ns = win.to_ns;
	s->reason = HP_CAP_SNAP_EVENTS;
	s->alloc_count = win.alloc_count;
	s->alloc_bytes = win.alloc_bytes;
	s->free_count = win.alloc_count - win.left_count;
	s->free_bytes = win.alloc_bytes - win.left_bytes;
	s->peak_bytes = peak > 0 ? (uint64_t)peak : 0;
	s->peak_time_ns = peak > 0 ? peak_t : 0;
	for (size_t i = 0; i < kb.n; i++)
		s->peak_count += bk[i].peak_count;
	s->stack_count = cap->nstacks;
	s->nbuckets = kb.n;
	s->buckets = bk;
	bk = NULL;
	img->nsnapshots++;
	hp_capture_select(cap, cap->image);
	if (w)
		*w = win;
	ret = 0;
out:
	hp_ev_match_free(&m);
	hp_ev_future_free(&f);
	hp_ev_order_free(&o);
	free(kb.k);
	hp_hindex_free(&kb.index);
	free(bk);
	return ret;
}

const char *hp_events_type_name(const struct hp_capture *cap, uint32_t id, char *buf, size_t n)
{
	const struct hp_cap_tag *t = hp_capture_tag(cap, HP_TAG_TYPE, id);

	if (!id || !t)
		return "unknown";
	if (t->name && t->name[0])
		return t->name;
	snprintf(buf, n, "vtable 0x%" PRIx64, t->b);
	return buf;
}

int hp_events_listed(const struct hp_capture *cap, const struct hp_events_select *sel,
		     const struct hp_ev_block *b, uint64_t end_ns)
{
	uint64_t from = sel->between ? sel->from_ns : 0;
	uint64_t to = sel->between ? sel->to_ns : UINT64_MAX;
	int freed = b->free_ns != UINT64_MAX;

	if (!(b->alloc_ns >= from && b->alloc_ns <= to) &&
	    !(freed && b->free_ns >= from && b->free_ns <= to))
		return 0;
	return hp_events_keep(cap, sel, b, end_ns);
}

int hp_events_print_blocks(FILE *f, const struct hp_capture *cap,
			   const struct hp_events_select *sel, size_t limit)
{
	struct hp_events_blocks *it;
	struct hp_ev_block blk, *x = &blk;
	size_t shown = 0, more = 0;
	uint64_t end;
	int ret;

	if (hp_events_blocks_open(cap, &it, &end))
		return -ENOMEM;
	fprintf(f, "%-18s %10s  %-20s %-16s %12s %12s %12s  %s\n", "address", "size", "type",
		"thread", "allocated s", "freed s", "lived ms", "stack");
	while ((ret = hp_events_blocks_next(it, x)) > 0) {
		int freed = x->free_ns != UINT64_MAX;
		char tb[64], hb[32], fb[32], lb[32];
		if (!hp_events_listed(cap, sel, x, end))
			continue;
		if (limit && shown == limit) {
			more++;
			continue;
		}
		shown++;
		if (freed) {
			snprintf(fb, sizeof fb, "%.6f", (double)x->free_ns / 1e9);
			snprintf(lb, sizeof lb, "%.3f", (double)(x->free_ns - x->alloc_ns) / 1e6);
		} else {
			snprintf(fb, sizeof fb, "-");
			snprintf(lb, sizeof lb, "-");
		}
		fprintf(f,
			"0x%-16" PRIx64 " %10" PRIu64 "  %-20s %-16s %12.6f %12s %12s  %" PRIu32
			"\n",
			x->addr, x->size, hp_events_type_name(cap, x->type_tag, tb, sizeof tb),
			hp_events_thread_name(cap, x->thread, hb, sizeof hb),
			(double)x->alloc_ns / 1e9, fb, lb, x->stack_id);
	}
	hp_events_blocks_close(it);
	if (ret < 0)
		return ret;
	if (more)
		fprintf(f, "... %zu more block%s (--top 0 lists them all)\n", more,
			more == 1 ? "" : "s");
	return ferror(f) ? -EIO : 0;
}

void hp_events_print_window(FILE *f, const struct hp_events_window *w)
{
	char a[32], b[32], c[32], d[32];

	fprintf(f,
		"window          %.6f s to %.6f s: allocated %" PRIu64
		" blocks (%s), freed %" PRIu64 " (%s; %" PRIu64
		" allocated before it), left %" PRIu64 " (%s)\n",
		(double)w->from_ns / 1e9, (double)w->to_ns / 1e9, w->alloc_count,
		hp_units_bytes(a, sizeof a, (double)w->alloc_bytes), w->free_count,
		hp_units_bytes(b, sizeof b, (double)w->free_bytes), w->before_count, w->left_count,
		hp_units_bytes(c, sizeof c, (double)w->left_bytes));
	(void)d;
}
