/*
 * interpose_inline.h - the fast path shared by the C and C++ interposers.
 *
 * An allocation costs a compare, a subtraction and a branch here, taken
 * before the real call where the entry point allows (malloc, calloc, the
 * unaligned operators new), so that those tail-call the real allocator; a
 * free one filter load (a static array: see live.h), then a tail call.
 * Nothing else is stored on the fast path: temporaries are told by the
 * countdown (thread.h, last_mark). Everything else is in recorder.c, behind
 * a noinline call. errno is saved around the allocations' slow paths
 * (and a free's slow path makes no call that can set it: recorder.c,
 * hp_record_free), so the caller sees exactly what the real allocator
 * set.
 */
#ifndef HP_RECORDER_INTERPOSE_INLINE_H
#define HP_RECORDER_INTERPOSE_INLINE_H

#include <errno.h>
#include <stddef.h>

#include "recorder.h"

/* The name of an interposed entry point. In libheapprof.so, the function
 * itself (found first in the lookup order: LD_PRELOAD). In the static
 * archive (libheapprof.a, built with -DHP_STATIC), __wrap_X: the program is
 * linked with -Wl,--wrap=X (heapprof-static.pc), which sends every call to
 * X in the link, libc's own included, to __wrap_X, and __real_X to the real
 * X. Replacing the whole malloc family instead would collide with libc.a's
 * malloc.o, which holds malloc and __libc_malloc alike (README, "Static
 * programs"). */
#ifdef HP_STATIC
#define HP_ENTRY(name) __wrap_##name
#else
#define HP_ENTRY(name) name
#endif

/* The symbol name of an entry point, for an alias of it: a call this
 * library makes to one of its own entry points goes through a hidden
 * alias, bound here, where a call by name would go through the library's
 * PLT and, in a recorder loaded by heapprof attach (not first in the
 * lookup order), reach the program's function instead. */
#define HP_NAME_OF(x) #x
#define HP_ALIAS_OF(x) HP_NAME_OF(x)

#define hp_likely(x) __builtin_expect(!!(x), 1)
#define hp_unlikely(x) __builtin_expect(!!(x), 0)

/* Records p (non-NULL, size bytes) if the sampler says so. Calls nested in
 * a forwarded C++ operator reach the slow path only if their countdown runs
 * out, and the operator has parked it far from zero (see
 * interpose_cxx.c); the slow path drops them. Properties of
 * hp_record_alloc (recorder.h) on the slow path; none on the fast one. */
/* Whether an allocation of size bytes stays on the fast path (0 < size <=
 * countdown, one unsigned compare), and then counts it down. Pure on the
 * thread's state: async-signal-safe, no allocation, no lock. */
static inline int hp_fast_alloc(struct hp_thread *t, size_t size)
{
	if (hp_likely(size - 1 < (uint64_t)t->countdown_bytes)) {
		t->countdown_bytes -= (int64_t)size;
		return 1;
	}
	return 0;
}

/* The slow path of an allocation already made (p non-NULL): errno kept
 * around hp_record_alloc, whose properties it has. Not cold: in a full
 * recording every allocation takes it (cold would have GCC optimise it
 * for size). */
void hp_note_alloc_slow(void *p, size_t size) __attribute__((visibility("hidden"), noinline));
/* The same, given where the program called the interposed function
 * (HP_CFA_ENTRY in that function: cfa_cache.h). */
void hp_note_alloc_slow_at(void *p, size_t size, uintptr_t entry)
	__attribute__((visibility("hidden"), noinline));

static inline void hp_note_alloc(void *p, size_t size)
{
	if (!hp_fast_alloc(&hp_self, size))
		hp_note_alloc_slow(p, size);
}

/* The slow path of hp_note_free: hp_record_take and hp_record_release
 * (recorder.h), whose properties it has. */
void hp_note_free_slow(void *p) __attribute__((noinline));

/* Before the real free of p (non-NULL): takes p out of the register.
 * Async-signal-safe, no allocation; locks as hp_note_free_slow. */
static inline void hp_note_free(void *p)
{
	if (hp_unlikely(hp_live_maybe((uintptr_t)p)))
		hp_note_free_slow(p);
}

/* The next definitions of malloc and free (hidden: not exported): the
 * program's allocator itself, with its own properties. hp_next_free is
 * for blocks the filter let through (hp_live_maybe said 0). */
void *hp_next_malloc(size_t size) __attribute__((visibility("hidden")));
void hp_next_free(void *p) __attribute__((visibility("hidden")));

/* The whole free of p, any pointer (NULL, the bootstrap buffer's, a
 * recorded block's): what free does when the filter says "maybe".
 * Properties of hp_note_free_slow, then the real free's. */
void hp_free_slow(void *p) __attribute__((visibility("hidden"), noinline));

/* The bootstrap allocator answers calls made before the real allocator is
 * known (dlsym's own); its blocks are never freed. */
#define HP_BOOTSTRAP_BYTES (64 * 1024)
extern uint8_t hp_bootstrap_buf[HP_BOOTSTRAP_BYTES] __attribute__((visibility("hidden")));

/* Whether p is in the bootstrap buffer. Pure. */
static inline int hp_bootstrap_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)hp_bootstrap_buf < HP_BOOTSTRAP_BYTES;
}

/* size bytes aligned to align (a power of two) from the bootstrap buffer,
 * zeroed, never freed; NULL when it is used up. Lock-free (a CAS),
 * async-signal-safe, no allocation. */
void *hp_bootstrap_alloc(size_t size, size_t align);
/* Resolves the real C functions and starts the recorder, once. Returns 0
 * when the real functions are known, -1 while they are being looked up on
 * this thread (use the bootstrap allocator). Calls dlsym (the loader's
 * lock; allocates, from the bootstrap buffer) and hp_recorder_start; other
 * threads wait (yielding) until it is done. Not async-signal-safe on the
 * first call; one atomic load afterwards. */
int hp_interpose_init(void);

/* Looks up the next _exit, _Exit and exec functions (interpose_exit.c).
 * Called once by hp_interpose_init; calls dlsym. */
void hp_interpose_exit_resolve(void) __attribute__((visibility("hidden")));

/* interpose_mmap.c. Looks up the next mmap, munmap, mremap, brk and sbrk;
 * called once by hp_interpose_init (calls dlsym; nothing in the static
 * recorder, which knows them at link time). */
void hp_interpose_mmap_resolve(void) __attribute__((visibility("hidden")));
/* Creates the "mmap" heap and starts recording anonymous mappings and the
 * program's brk/sbrk into it (HEAPPROF_MMAP=1). Returns 0 or -ENOSPC (no
 * heap id left). Once, by hp_recorder_start, before recording starts;
 * takes the heaps' lock; no allocation. */
int hp_interpose_mmap_start(void) __attribute__((visibility("hidden")));
/* Whether the mmap heap is recorded. Lock-free. */
int hp_interpose_mmap_on(void) __attribute__((visibility("hidden")));
/* For fork: take and release the range map's lock (first of the
 * recorder's locks, attr.c's order). Nothing when the option is off. */
void hp_interpose_mmap_lock(void) __attribute__((visibility("hidden")));
void hp_interpose_mmap_unlock(void) __attribute__((visibility("hidden")));

#endif
