/*
 * events.c - the event log's buffers and their flushes (events.h).
 *
 * Every buffer ever mapped is in bufs[] (never unmapped: a thread that
 * exits frees its buffer for the next thread, so a program keeps at most
 * as many as it has threads at once, HP_EV_MAX_BUFS at the most). The
 * flusher's state (the chunk's bit stream, the bucket dedup table, the
 * record of the chunks not yet written) is mapped once at init and used
 * under the events lock.
 *
 * A buffer's events are written in order by one thread; [flushed, n) are
 * those not yet in the capture, n = next - ev (count()). Invariants: only
 * the owner writes entries at next and up, and stores next after the
 * entry; flushers (the owner when its buffer is full or it exits, a
 * snapshot for every buffer) take the events lock, read next (acquire),
 * encode [flushed, n) and move flushed to n; only the owner, under the
 * lock, sets next back to ev and flushed to 0.
 */
#include "events.h"

#include <errno.h>
#include <string.h>

#include "aggregate.h"
#include "attr.h"
#include "log.h"
#include "recorder.h"
#include "spin.h"
#include "writer.h"

#define HP_EV_MAX_BUFS 4096u
/* The chunk-local bucket table: open addressing, twice the events. */
#define SLOTS (2 * HP_EV_BUF_EVENTS)
/* A record is written once its chunks take this many bytes (about 4 of
 * churn's), before each snapshot and at a thread's exit. */
#define HP_EV_RECORD_BYTES (60u * 1024)

int hp_events_on;
struct hp_ev_buf hp_ev_none, hp_ev_done; /* next == limit == NULL: full */
__thread struct hp_ev_buf *hp_ev_self __attribute__((tls_model("initial-exec"))) = &hp_ev_none;

/* Set at init, read-only after. */
static const struct hp_config *config;
static uint64_t tick_origin, ns_origin;
static unsigned exit_key;
static int have_key;

/* bufs[0 .. nbufs): an entry may still read NULL while its mapper stores
 * it (flushers skip it). */
static struct hp_ev_buf *bufs[HP_EV_MAX_BUFS];
static uint32_t nbufs;

/* The flusher's memory, under lock. */
static struct hp_spin lock;
struct flusher {
	struct {
		uint32_t bucket, gen, slot;
	} table[SLOTS];
	uint32_t gen;
	struct hp_ev_bucket buckets[HP_EV_BUF_EVENTS];
	uint8_t bits[HP_EV_BITS_MAX_BYTES(HP_EV_BUF_EVENTS)]; /* the chunk's bit stream */
	struct hp_buf out; /* the record: its frame, then the chunks pending */
	uint64_t pending;  /* the events of the chunks in out */
};
static struct flusher *fl;

/* The events written in b: its next entry's index (acquire: the entries
 * before it are whole). */
static inline uint32_t count(struct hp_ev_buf *b)
{
	return (uint32_t)(__atomic_load_n(&b->next, __ATOMIC_ACQUIRE) - b->ev);
}

static int grow(struct hp_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 1u << 16;
	uint8_t *p;

	while (cap < need)
		cap *= 2;
	p = hp_os_map(cap);
	if (!p)
		return -ENOMEM;
	if (b->len)
		memcpy(p, b->data, b->len);
	hp_os_unmap(b->data, b->cap);
	b->data = p;
	b->cap = cap;
	return 0;
}

/* A bucket new to the chunk at fl->table[h] (empty): its key read, its
 * slot the next. Out of the encoder's loop (cold: once per bucket and
 * chunk), so that the loop's values need not live across a call. Under
 * lock. */
static __attribute__((noinline, cold)) uint32_t slot_new(uint64_t *nbuckets, uint32_t bucket,
							 uint32_t h)
{
	uint32_t stack, type, origin;
	uint64_t size;

	hp_agg_key(bucket, &stack, &type, &origin, &size);
	fl->buckets[*nbuckets] = (struct hp_ev_bucket){stack, type, origin, size};
	fl->table[h].bucket = bucket;
	fl->table[h].gen = fl->gen;
	fl->table[h].slot = (uint32_t)*nbuckets;
	return (uint32_t)(*nbuckets)++;
}

/* The chunk-local slot of bucket, its key read once per chunk; nbuckets
 * (a struct hp_ev_head's) counts them (hp_ev_slot_fn). Under lock. */
static inline __attribute__((always_inline)) uint32_t slot_of(void *ctx, uint32_t bucket)
{
	uint32_t h = (bucket * 0x9e3779b1u) & (SLOTS - 1);

	while (__builtin_expect(fl->table[h].gen == fl->gen, 1)) {
		if (__builtin_expect(fl->table[h].bucket == bucket, 1))
			return fl->table[h].slot;
		h = (h + 1) & (SLOTS - 1);
	}
	return slot_new(ctx, bucket, h);
}

/* The chunk's bit stream (format/events.h, hp_ev_encode_bits): compiled
 * twice on x86-64, once for any CPU and once with BMI2 and LZCNT (shifts
 * by a register other than cl, a mask without a shift, a leading-zero
 * count without a branch), which encode() takes where the CPU has them
 * (init). Under lock. */
static uint8_t *encode_any(const struct hp_ev_head *h, const struct hp_ev *ev, uint64_t *nbuckets,
			   uint8_t *out)
{
	return hp_ev_encode_bits_shift(h, HP_EV_SHIFT, ev, slot_of, nbuckets, out);
}

#if defined(__x86_64__)
#include <cpuid.h>

__attribute__((target("bmi,bmi2,lzcnt"))) static uint8_t *
encode_bmi2(const struct hp_ev_head *h, const struct hp_ev *ev, uint64_t *nbuckets, uint8_t *out)
{
	return hp_ev_encode_bits_shift(h, HP_EV_SHIFT, ev, slot_of, nbuckets, out);
}

/* Whether the CPU has BMI1, BMI2 and LZCNT (cpuid). */
static int have_bmi2(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_BMI) || !(b & bit_BMI2))
		return 0;
	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_LZCNT);
}
#endif

/* Set at init, read-only after. */
static uint8_t *(*encode)(const struct hp_ev_head *, const struct hp_ev *, uint64_t *,
			  uint8_t *) = encode_any;

/* Writes the record of the chunks encoded so far (fl->out), if any: one
 * write for several chunks, as a write costs the kernel some 12 us
 * whatever its size here (ext4: 15 MiB in 15 KiB writes 17.9 ms of CPU,
 * in 60 KiB ones 8.8 ms). Under lock. Returns 0 or -errno (its events
 * are counted lost). */
static int write_pending(unsigned flags)
{
	int err;

	if (!fl || !fl->pending)
		return 0;
	err = fl->out.err ? fl->out.err
			  : hp_writer_put(HP_REC_EVENTS_BITS, fl->out.data,
					  fl->out.len - HP_FORMAT_FRAME_BYTES, flags);
	if (err == -EDEADLK && fl->out.len < 4 * HP_EV_RECORD_BYTES)
		return err; /* the writer's lock not free (a signal handler's
			     * snapshot): kept for the next write */
	if (err)
		hp_agg_lost(HP_LOST_EVENTS_WRITE, fl->pending, 0);
	fl->out.len = 0;
	fl->out.err = 0;
	fl->pending = 0;
	return err;
}

/* Encodes b's events [flushed, to) as one chunk after those pending in
 * fl->out, moves flushed to to, and writes the record once it holds
 * HP_EV_RECORD_BYTES. Under lock. Returns 0 or -errno (the events are
 * counted lost). */
static int flush(struct hp_ev_buf *b, uint32_t to, unsigned flags)
{
	uint32_t from = b->flushed;
	struct hp_ev_head h = {0};
	size_t n;
	uint8_t *p;

	if (to <= from)
		return 0;
	b->flushed = to;
	if (!fl) {
		hp_agg_lost(HP_LOST_EVENTS_WRITE, to - from, 0);
		return -ENOMEM;
	}
	if (++fl->gen == 0) { /* wrapped: every entry would look current */
		memset(fl->table, 0, sizeof fl->table);
		fl->gen = 1;
	}
	h.thread = b->thread;
	h.tick_origin = tick_origin;
	h.ns_origin = ns_origin;
	h.tick_at = hp_ev_tick();
	h.ns_at = hp_os_now_ns() - config->start_ns;
	h.shift = HP_EV_SHIFT;
	h.count = to - from;
	/* The stream first: it numbers the chunk's buckets as it meets them
	 * (slot_of), in one pass over the events in their order (no table of
	 * addresses, no compressor: format/events.h, hp_ev_encode_bits). */
	n = (size_t)(encode(&h, &b->ev[from], &h.nbuckets, fl->bits) - fl->bits);
	if (!fl->out.len && hp_buf_reserve(&fl->out, HP_FORMAT_FRAME_BYTES))
		fl->out.len = HP_FORMAT_FRAME_BYTES; /* hp_writer_put's frame */
	hp_ev_encode_head(&fl->out, &h, fl->buckets);
	hp_buf_put_u(&fl->out, n);
	p = hp_buf_reserve(&fl->out, n);
	if (p) {
		memcpy(p, fl->bits, n);
		fl->out.len += n;
	}
	fl->pending += to - from;
	if (fl->out.len - HP_FORMAT_FRAME_BYTES >= HP_EV_RECORD_BYTES || fl->out.err)
		return write_pending(flags);
	return 0;
}

/* At a thread's exit (its key's destructor): its events written, its
 * buffer freed for the next thread. busy is raised so that what the
 * writer does is not recorded on top of the flush. */
static void thread_exit(void *arg)
{
	struct hp_ev_buf *b = arg;

	hp_self.busy++;
	hp_spin_lock(&lock);
	flush(b, count(b), 0);
	write_pending(0);
	b->next = b->ev;
	b->flushed = 0;
	__atomic_store_n(&b->owned, 0, __ATOMIC_RELEASE);
	hp_spin_unlock(&lock);
	hp_ev_self = &hp_ev_done;
	hp_self.busy--;
}

int hp_events_init(const struct hp_config *c)
{
	config = c;
	if (!c->events)
		return 0;
	tick_origin = hp_ev_tick();
	ns_origin = hp_os_now_ns() - c->start_ns;
	if (!fl) {
		fl = hp_os_map(sizeof *fl);
		if (!fl) {
			hp_log("cannot map memory for the event log; it is off");
			return -ENOMEM;
		}
		fl->out.grow = grow;
		fl->gen = 1;
	}
#if defined(__x86_64__)
	if (have_bmi2())
		encode = encode_bmi2;
#endif
	if (!have_key)
		have_key = hp_os_thread_key_create(&exit_key, thread_exit) == 0;
	__atomic_store_n(&hp_events_on, 1, __ATOMIC_RELEASE);
	return 0;
}

/* A buffer for this thread: a free one, else a new mapping. NULL when
 * none can be had. */
static struct hp_ev_buf *take_buffer(void)
{
	uint32_t n = __atomic_load_n(&nbufs, __ATOMIC_ACQUIRE), i;
	struct hp_ev_buf *b;

	for (i = 0; i < n && i < HP_EV_MAX_BUFS; i++) {
		uint32_t zero = 0;
		b = __atomic_load_n(&bufs[i], __ATOMIC_ACQUIRE);
		if (b && !__atomic_load_n(&b->owned, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&b->owned, &zero, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return b;
	}
	if (n >= HP_EV_MAX_BUFS)
		return NULL;
	b = hp_os_map(HP_EV_BUF_BYTES);
	if (!b)
		return NULL;
	b->owned = 1;
	b->next = b->ev;
	b->limit = b->ev + HP_EV_BUF_EVENTS;
	i = __atomic_fetch_add(&nbufs, 1, __ATOMIC_ACQ_REL);
	if (i >= HP_EV_MAX_BUFS) {
		hp_os_unmap(b, HP_EV_BUF_BYTES);
		return NULL;
	}
	__atomic_store_n(&bufs[i], b, __ATOMIC_RELEASE);
	return b;
}

/* hp_events_slow's body. */
static void events_slow(uint64_t addr, uint64_t size, uint32_t bucket, uint32_t kind)
{
	struct hp_ev_buf *b = hp_ev_self;
	uint32_t n;

	if (b == &hp_ev_done) {
		/* After the thread's exit flush: a late free of glibc's own. */
		hp_agg_lost(HP_LOST_EVENTS_NO_MEMORY, 1, 0);
		return;
	}
	if (b == &hp_ev_none) {
		b = take_buffer();
		if (!b) {
			hp_agg_lost(HP_LOST_EVENTS_NO_MEMORY, 1, 0);
			return;
		}
		if (!hp_attr_self.thread)
			hp_attr_thread_start(&hp_attr_self);
		b->thread = hp_attr_self.thread;
		hp_ev_self = b;
		if (have_key)
			hp_os_thread_key_set(exit_key, b);
	}
	n = count(b);
	if (n >= HP_EV_BUF_EVENTS && kind == HP_EV_RETYPE) {
		/* Under a live shard's lock: the writer's lock comes before
		 * the shards' (fork_prepare), so no flush from here. */
		hp_agg_lost(HP_LOST_EVENTS_NO_MEMORY, 1, 0);
		return;
	}
	if (n >= HP_EV_BUF_EVENTS) {
		hp_spin_lock(&lock);
		flush(b, n, 0);
		__atomic_store_n(&b->next, b->ev, __ATOMIC_RELEASE);
		b->flushed = 0;
		hp_spin_unlock(&lock);
		n = 0;
	}
	b->ev[n] = (struct hp_ev){hp_ev_tick(), addr, size, bucket, kind};
	__atomic_store_n(&b->next, &b->ev[n + 1], __ATOMIC_RELEASE);
}

/* errno kept: a flush's writes can fail (the program closed the capture:
 * the writer's fstat sets EBADF) and the thread's name is read from
 * /proc; the slow paths of malloc and free that call this do not save
 * it themselves. */
void hp_events_slow(uint64_t addr, uint64_t size, uint32_t bucket, uint32_t kind)
{
	int saved = errno;

	events_slow(addr, size, bucket, kind);
	errno = saved;
}

void hp_events_flush_all(unsigned flags)
{
	uint32_t n;

	if (!hp_events_on)
		return;
	if (flags & (HP_WRITE_SIGNAL | HP_WRITE_FATAL)) {
		if (!hp_spin_trylock_for(&lock, flags & HP_WRITE_FATAL ? 200000 : 100))
			return; /* what is not flushed now is at the next flush */
	} else {
		hp_spin_lock(&lock);
	}
	n = __atomic_load_n(&nbufs, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < HP_EV_MAX_BUFS; i++) {
		struct hp_ev_buf *b = __atomic_load_n(&bufs[i], __ATOMIC_ACQUIRE);
		if (b)
			flush(b, count(b), flags);
	}
	write_pending(flags);
	hp_spin_unlock(&lock);
}

uint64_t hp_events_bytes(void)
{
	uint32_t n = __atomic_load_n(&nbufs, __ATOMIC_RELAXED);

	if (!fl)
		return 0;
	return (uint64_t)(n < HP_EV_MAX_BUFS ? n : HP_EV_MAX_BUFS) * HP_EV_BUF_BYTES + sizeof *fl +
	       fl->out.cap;
}

void hp_events_fork_child(void)
{
	uint32_t n = __atomic_load_n(&nbufs, __ATOMIC_RELAXED);

	lock = (struct hp_spin){0};
	if (fl) { /* the parent's to write */
		fl->out.len = 0;
		fl->out.err = 0;
		fl->pending = 0;
	}
	for (uint32_t i = 0; i < n && i < HP_EV_MAX_BUFS; i++) {
		struct hp_ev_buf *b = bufs[i];
		if (!b)
			continue;
		b->next = b->ev;
		b->flushed = 0;
		if (b != hp_ev_self)
			b->owned = 0;
	}
	if (hp_ev_self != &hp_ev_none && hp_ev_self != &hp_ev_done)
		hp_ev_self->thread = hp_attr_self.thread;
}
