/*
 * attr.h - attribution: on whose behalf (context, thread) and in which
 * heap a block is allocated, and what it is (explicit types); the
 * per-thread state it needs (a sibling of struct hp_thread, which the
 * fast path inlines and which this leaves unchanged).
 *
 * Model. A thread's contexts are a pseudo-stack of names in TLS
 * (heapprof_context_push/pop store a pointer, move a generation and raise
 * the thread's origin_moved, nothing else); the slow path interns the scopes' names, outermost first (tags.h:
 * lock-free lookups once known), and caches the origin (context x thread x
 * heap 0) until the generation moves. Scopes deeper than HP_ATTR_MAX_DEPTH
 * count in the deepest one kept. The state is small (about 300 bytes):
 * static TLS comes out of every thread's stack, and a program may give its
 * threads small ones. The bucket of an allocation is found without a
 * lookup in the common case by aggregate.c (a stack's default bucket
 * belongs to the first origin that uses it).
 *
 * Every field is thread-local, written by its own thread (and by its
 * signal handlers: a handler's push pops before it returns). Static
 * initial state is valid (no thread id yet: the first slow path gives one).
 */
#ifndef HP_RECORDER_ATTR_H
#define HP_RECORDER_ATTR_H

#include <stdint.h>

#include "live.h"
#include "thread.h"

#define HP_ATTR_MAX_DEPTH 32

struct hp_attr {
	const char *ctx_name[HP_ATTR_MAX_DEPTH]; /* the program's strings */
	uint32_t depth;                          /* scopes open (may pass HP_ATTR_MAX_DEPTH) */
	uint32_t gen;                            /* moved by every push and pop */
	uint32_t origin_gen;                     /* gen when origin was computed */
	uint32_t origin;                         /* the origin of heap 0 (0: not yet computed) */
	uint32_t thread; /* this thread's id (tags.h); 0 until its first slow path */
	char name[16];   /* its name as last read */
	uint64_t name_next_ns; /* when to read it again (hp_attr_thread_due) */
	/* heapprof_set_type's last name (a pointer), shape (tags.h) and type
	 * id. */
	const char *type_name;
	uint32_t type_id;
	uint64_t type_shape;
	/* Sampled mode: bytes of custom-heap blocks left before the next
	 * sampled one (a countdown of its own: the fast path's is malloc's). */
	int64_t heap_countdown;
};

extern __thread struct hp_attr hp_attr_self __attribute__((tls_model("initial-exec")));

/* Sets up the calling thread's id (its tid and name); from its first slow
 * path. Lock-free, no allocation. */
void hp_attr_thread_start(struct hp_attr *a);
/* Reads the thread's name again (prctl) and says so to the tags when it
 * changed; with new_tid, its tid too (a fork child). Lock-free, no
 * allocation. */
void hp_attr_thread_refresh(struct hp_attr *a, int new_tid);

/* How often a thread reads its name again: a prctl system call, too
 * costly for every look at the clock (up to every slow path of a thread
 * that allocates rarely, trigger.c). */
#define HP_ATTR_NAME_PERIOD_NS (10 * 1000000ull)

/* hp_attr_thread_refresh when the thread has not read its name for
 * HP_ATTR_NAME_PERIOD_NS (now: the monotonic clock). Lock-free, no
 * allocation. */
static inline void hp_attr_thread_due(struct hp_attr *a, uint64_t now)
{
	if (now >= a->name_next_ns) {
		a->name_next_ns = now + HP_ATTR_NAME_PERIOD_NS;
		hp_attr_thread_refresh(a, 0);
	}
}

/* The origin of an allocation by this thread now in heap (interning
 * contexts and the origin when new); 0 when a table is full. a is the
 * calling thread's hp_attr_self. For heap 0 it lowers the thread's
 * origin_moved before it looks (a push or pop meanwhile raises it again)
 * and raises it again when it could not cache the origin. Not
 * async-signal-safe (table locks); no allocation. hp_attr_origin_of is
 * its inline test of the cache: one load of origin_moved. */
uint32_t hp_attr_origin(struct hp_attr *a, uint32_t heap);
static inline uint32_t hp_attr_origin_of(struct hp_attr *a, uint32_t heap)
{
	if (!heap && !hp_self.origin_moved)
		return a->origin; /* current (thread.h, origin_moved) */
	return hp_attr_origin(a, heap);
}

/* The calling thread's cached origin is not to be used until
 * hp_attr_origin works it out again (thread.h, origin_moved): a context
 * pushed or popped, a thread set up, a fork child. A store;
 * async-signal-safe, no allocation, no lock. */
static inline void hp_attr_origin_moves(void)
{
	__atomic_store_n(&hp_self.origin_moved, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Forgets the thread's caches (a fork child). */
void hp_attr_reset_caches(struct hp_attr *a);

/* The live register key of a block of heap at p: malloc's blocks are
 * their address, a custom heap's carry the heap in the top bits (an
 * arena's first block may start where its malloc'd chunk does). */
static inline uintptr_t hp_attr_key(const void *p, uint32_t heap)
{
	return (uintptr_t)p | (uintptr_t)heap << 48;
}
#define HP_ATTR_ADDR_MASK ((UINT64_C(1) << 48) - 1)

/* heapprof_set_type: moves the live block at p (malloc's, else a custom
 * heap's) to the bucket of the type named name. Returns 0 or -ENOENT.
 * Takes the shard lock, then bucket and table locks; no allocation; not
 * async-signal-safe. */
int hp_attr_set_type(struct hp_attr *a, const void *p, const char *name);

/* heapprof_set_type_array: names the live block at first, else the one
 * at first - cookie_bytes, an array of elements of elem_bytes (its size
 * less the cookie, a whole number of them: the block found at first has
 * none). elem_bytes 0: hp_attr_set_type. Returns 0, -ENOENT (no block
 * there), -EINVAL (a block of another size: left as it is) or -ENOSPC
 * (the type table is full). Locks as hp_attr_set_type; no allocation. */
int hp_attr_set_type_array(struct hp_attr *a, const void *first, const char *name,
			   uint64_t elem_bytes, uint64_t cookie_bytes);

/* Every live block of heap, freed (heapprof_heap_reset): a walk of the
 * register. Same locks. */
void hp_attr_heap_reset(uint32_t heap);

/* Moves every live malloc'd block of no type whose first word points at a
 * C++ virtual table into the bucket of that vtable's type; returns the
 * number of blocks read. Before a snapshot, in the process that owns the
 * capture; from a signal handler only when it interrupted code outside the
 * recorder (HP_WRITE_OUTSIDE: the thread holds none of these locks): takes
 * the module table's lock (when free: else it reads nothing now), then
 * each shard's, then bucket and table locks. No allocation. */
uint64_t hp_attr_vtable_scan(void);

#endif
