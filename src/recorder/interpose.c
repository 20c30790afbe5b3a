/*
 * interpose.c - the C allocation family, and dlclose.
 *
 * Each function forwards to the next definition in the lookup order
 * (dlsym(RTLD_NEXT)), or, loaded by heapprof attach, to the definition the
 * program's objects are bound to (hp_attach_next), so the program's
 * allocator, be it glibc's or a jemalloc/tcmalloc/mimalloc loaded as a
 * shared library, does the work and keeps its semantics: results, errno,
 * EINVAL, ENOMEM, calloc's overflow check. A failed allocation is not recorded. realloc is recorded as the
 * free of the old block and the allocation of the new one, attributed to
 * the realloc's stack.
 *
 * Bootstrap: dlsym itself may allocate (its error buffer) before the real
 * functions are known. A thread-local flag marks the lookup, and calls made
 * during it are served from a static buffer; frees of that buffer are no-ops.
 * Other threads arriving meanwhile wait for the lookup to finish.
 *
 * Built into the static archive (HP_STATIC), the entry points are
 * __wrap_malloc and so on, and the real functions are __real_malloc and so
 * on, known at link time (interpose_inline.h, HP_ENTRY): no dlsym, nothing
 * served from the bootstrap buffer, no dlclose to watch (a static program
 * loads no libraries of its own).
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cfa_cache.h"
#include "interpose_inline.h"
#include "modules.h"
#include "os.h"

/* Everything this file defines with external linkage is exported (the
 * version script then keeps just the interposed names). */
#pragma GCC visibility push(default)

#ifdef HP_STATIC
/* The mark heapprof run looks for in a static program to know that the
 * recorder is linked in (src/cli/run.c): an ELF note, name "heapprof",
 * type 1, no descriptor. A note, so that strip keeps it and ld's
 * --gc-sections does not drop it. */
__asm__(".pushsection .note.heapprof,\"a\",@note\n"
	"\t.balign 4\n"
	"\t.long 9, 0, 1\n"
	"\t.asciz \"heapprof\"\n"
	"\t.balign 4\n"
	"\t.popsection\n");

/* attach.c is not in the archive (a static program has no loader to
 * dlopen the recorder with): never attached. */
int hp_attach_starting(void)
{
	return 0;
}
#endif

#ifdef HP_STATIC
extern void *__real_malloc(size_t);
extern void __real_free(void *);
extern void *__real_calloc(size_t, size_t);
extern void *__real_realloc(void *, size_t);
extern void *__real_reallocarray(void *, size_t, size_t);
extern int __real_posix_memalign(void **, size_t, size_t);
extern void *__real_aligned_alloc(size_t, size_t);
extern void *__real_memalign(size_t, size_t);
extern void *__real_valloc(size_t);
extern void *__real_pvalloc(size_t);
#endif

static void *first_malloc(size_t size);
static void *first_calloc(size_t n, size_t size);

/* The real functions: written once by the thread that resolves them, before
 * resolved is published; read-only afterwards. Until then malloc and
 * calloc, whose fast paths tail-call them, point to first_malloc and
 * first_calloc, so that the interposed functions need no "are we ready"
 * test of their own; free points to hp_free_slow (the whole free: NULL,
 * the bootstrap buffer, the register) until the filter that lets the fast
 * path of free skip it is set up, at the end of hp_interpose_init. */
static struct {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void (*next_free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	int (*dlclose)(void *);
} real = {.malloc = first_malloc,
	.free = hp_free_slow,
	.calloc = first_calloc,
#ifdef HP_STATIC
	/* Known from the start: frees of blocks made before the recorder
	 * started (libc's own, see constructed) reach it. */
	.next_free = __real_free,
#endif
};

#ifdef HP_STATIC
/* 0 until start_on_load runs, among the first constructors: libc's
 * start-up allocates earlier (_dl_non_dynamic_init, before the program's
 * list of loaded objects exists, which the unwinders need), and those
 * calls go straight to the real functions, unrecorded, as the loader's do
 * before a preloaded recorder starts. Written once, by the main thread. */
static int constructed;
#define EARLY(real_call, boot_call) \
	(__atomic_load_n(&constructed, __ATOMIC_ACQUIRE) ? (boot_call) : (real_call))
#else
#define EARLY(real_call, boot_call) (boot_call)
#endif

/* The C++ operators' fast path calls the next malloc and free directly
 * (see interpose_cxx.c); free is only reached for blocks malloc made, so
 * it is known by then. */
void *hp_next_malloc(size_t size)
{
	return real.malloc(size);
}

void hp_next_free(void *p)
{
	real.free(p);
}

/* The body of hp_note_free_slow, inlined into hp_free_slow: a free in a
 * full recording goes free -> hp_free_slow -> hp_record_free. */
static inline __attribute__((always_inline)) void note_free(void *p)
{
	struct hp_thread *t = &hp_self;

	/* errno: hp_record_free leaves it (recorder.c). record_free is its
	 * body: this file is compiled after recorder.c (record_path.c). */
	if (free_common(t))
		record_free_common(t, p);
	else if (!t->forwarding)
		record_free(t, p);
}

void hp_free_slow(void *p)
{
	if (!p || hp_bootstrap_owns(p))
		return;
	note_free(p);
	real.next_free(p);
	hp_self.freeing = 0; /* it returned: the free happened (thread.h) */
}

/* note_alloc's rare cases (not alloc_common): record_alloc, with errno
 * saved through __errno_location (the thread may not be set up); returns
 * p. Properties of hp_record_alloc. */
static __attribute__((noinline, cold)) void *note_alloc_rare(struct hp_thread *t, void *p,
							     size_t size, uintptr_t entry)
{
	int saved = errno;
	record_alloc(t, p, size, entry);
	errno = saved;
	return p;
}

/* The body of hp_note_alloc_slow, inlined into malloc_slow and
 * calloc_slow, which give the program's registers (hp_unwind); returns p.
 * Its common case (alloc_common) has record_alloc_common inlined in turn
 * (one frame, one prologue and epilogue fewer an allocation) and does not
 * save errno: as a free's slow path, it calls nothing that sets errno
 * but what saves it itself (the memory calls of os.h, the walk's table
 * set-up and libunwind fallback, the event log's slow path, the tick,
 * the signal stack's bounds, hp_log; tests/programs/errnomalloc.c). The
 * rest is a tail call to note_alloc_rare, after the caller's frame (the
 * common case's frame buffer) is gone. */
static inline __attribute__((always_inline)) void *note_alloc(void *p, size_t size,
							      uintptr_t entry)
{
	struct hp_thread *t = &hp_self;

	if (alloc_common(t)) {
		record_alloc_common(t, p, size, entry);
		return p;
	}
	return note_alloc_rare(t, p, size, entry);
}

void hp_note_alloc_slow(void *p, size_t size)
{
	(void)note_alloc(p, size, 0);
}

void hp_note_alloc_slow_at(void *p, size_t size, uintptr_t entry)
{
	(void)note_alloc(p, size, entry);
}

/* 0: not resolved, 1: being resolved, 2: resolved, 3: recorder started. */
static int resolved;

/* The bootstrap buffer: a bump allocator, never freed. */
_Alignas(64) uint8_t hp_bootstrap_buf[HP_BOOTSTRAP_BYTES];
#define boot_buf hp_bootstrap_buf
static size_t boot_used; /* atomic */

void *hp_bootstrap_alloc(size_t size, size_t align)
{
	size_t cur = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), at, next;

	if (align < 16)
		align = 16;
	do {
		at = (cur + align - 1) & ~(align - 1);
		next = at + size;
		if (next > sizeof boot_buf || next < at)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &cur, next, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return boot_buf + at; /* zeroed: static storage, never reused */
}

void hp_note_free_slow(void *p)
{
	note_free(p);
}

#ifdef HP_STATIC
#define NEXT_OF(name) ((void *)__real_##name)
#else
#define NEXT_OF(name) hp_attach_next(#name)
#endif
#define RESOLVE(name) real.name = (__typeof__(real.name))NEXT_OF(name)

int hp_interpose_init(void)
{
	int expected = 0;

	if (hp_likely(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) == 3))
		return 0;
	if (hp_self.resolving)
		return -1;
#ifdef HP_STATIC
	if (!__atomic_load_n(&constructed, __ATOMIC_ACQUIRE))
		return -1;
#endif
	if (__atomic_compare_exchange_n(&resolved, &expected, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		int saved = errno; /* a successful first malloc keeps errno */
		void *next_malloc;

		hp_self.resolving = 1;
		/* malloc last: once it is set, the fast path (which does not
		 * test resolved) may hand out blocks that free must know. */
		next_malloc = NEXT_OF(malloc);
		real.next_free = (__typeof__(real.free))NEXT_OF(free);
		real.calloc = (__typeof__(real.calloc))NEXT_OF(calloc);
		RESOLVE(realloc);
		RESOLVE(reallocarray);
		RESOLVE(posix_memalign);
		RESOLVE(aligned_alloc);
		RESOLVE(memalign);
		RESOLVE(valloc);
		RESOLVE(pvalloc);
#ifndef HP_STATIC
		RESOLVE(dlclose);
#endif
		hp_interpose_exit_resolve();
		hp_interpose_mmap_resolve();
		__atomic_store_n(&real.malloc, (__typeof__(real.malloc))next_malloc,
				 __ATOMIC_RELEASE);
		hp_self.resolving = 0;
		__atomic_store_n(&resolved, 2, __ATOMIC_RELEASE);
		/* Start recording. Allocations the start-up makes itself are
		 * passed through, unrecorded. */
		hp_self.forwarding++;
		hp_recorder_start();
		hp_self.forwarding--;
		/* From now on free may skip its slow path where the filter
		 * says so: not for blocks of the bootstrap buffer. Only its
		 * used part (a few hundred bytes): no block is taken from it
		 * once resolved is 2, and each pinned cell sends the frees of
		 * its aliases (every 4 MiB) to the slow path for good. */
		hp_live_filter_pin((uintptr_t)boot_buf,
				   (uintptr_t)boot_buf + __atomic_load_n(&boot_used, __ATOMIC_RELAXED));
		__atomic_store_n(&real.free, real.next_free, __ATOMIC_RELEASE);
		__atomic_store_n(&resolved, 3, __ATOMIC_RELEASE);
		errno = saved;
		return 0;
	}
	/* Another thread is resolving: wait for the real functions. */
	while (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) < 2)
		hp_os_yield();
	return 0;
}

/* Linked into a static program, before the program's own constructors
 * (the lowest priority not reserved to the implementation): the order of
 * .init_array would otherwise run those first. */
#ifdef HP_STATIC
#define HP_CONSTRUCTOR_PRIORITY 101
#else
#define HP_CONSTRUCTOR_PRIORITY 65535
#endif

/* Starts the recorder when the library is loaded, even if the program
 * never allocates before main. Loaded by dlopen instead (heapprof attach:
 * attach.h), nothing reaches it yet: it waits for heapprof_attach. */
__attribute__((constructor(HP_CONSTRUCTOR_PRIORITY))) static void start_on_load(void)
{
#ifdef HP_STATIC /* linked in: always started, never attached */
	__atomic_store_n(&constructed, 1, __ATOMIC_RELEASE);
#else
	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) == 0 && !hp_attach_preloaded())
		return;
#endif
	hp_interpose_init();
}

#define READY() (hp_likely(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) >= 2) || \
		 hp_interpose_init() == 0)

/* malloc until the real one is known: resolve, or use the bootstrap
 * buffer while dlsym itself allocates. */
static void *first_malloc(size_t size)
{
	if (hp_interpose_init() < 0)
		return EARLY(__real_malloc(size), hp_bootstrap_alloc(size, 16));
	return real.malloc(size);
}

/* calloc until the real one is known, as first_malloc. */
static void *first_calloc(size_t n, size_t size)
{
	if (!READY()) {
		if (size && n > SIZE_MAX / size)
			return EARLY(__real_calloc(n, size), NULL);
		return EARLY(__real_calloc(n, size), hp_bootstrap_alloc(n * size, 16));
	}
	return real.calloc(n, size);
}

/* The slow paths of malloc and calloc: the real call, then the record.
 * Reached by a tail call from the interposed function, so their return
 * address is the program's (HP_CFA_ENTRY; were it not, the unwinder
 * would notice and stop trusting entries). In a full recording they are
 * the hot path: not cold (which has GCC optimise them for size). */
static __attribute__((noinline)) void *malloc_slow(size_t size)
{
	void *p = real.malloc(size);

	if (hp_unlikely(p == NULL))
		return p;
	return note_alloc(p, size, HP_CFA_ENTRY());
}

static __attribute__((noinline)) void *calloc_slow(size_t n, size_t size)
{
	void *p = real.calloc(n, size);

	if (hp_unlikely(p == NULL))
		return p;
	return note_alloc(p, n * size, HP_CFA_ENTRY());
}

/* The countdown first, then a tail call: a failed allocation on the fast
 * path has counted its bytes down, which only moves the next sample (the
 * sampled bytes stay a Poisson process over the bytes asked for). */
void *HP_ENTRY(malloc)(size_t size)
{
	if (hp_likely(hp_fast_alloc(&hp_self, size)))
		return real.malloc(size);
	return malloc_slow(size);
}

/* The interposed malloc and realloc, for the calls this file makes to them
 * (realloc(NULL), reallocarray): a hidden alias binds here, where a call
 * by name goes through the library's PLT, which binds to the first malloc
 * in the lookup order: the program's own allocator when the library was
 * loaded by heapprof attach (not preloaded), which would skip the
 * recording. */
static __typeof__(HP_ENTRY(malloc)) own_malloc
	__attribute__((alias(HP_ALIAS_OF(HP_ENTRY(malloc))), copy(HP_ENTRY(malloc))));

void HP_ENTRY(free)(void *p)
{
	if (hp_unlikely(hp_live_maybe((uintptr_t)p)))
		hp_free_slow(p);
	else
		real.free(p);
}

void *HP_ENTRY(calloc)(size_t n, size_t size)
{
	size_t bytes;

	if (hp_likely(!__builtin_mul_overflow(n, size, &bytes) && hp_fast_alloc(&hp_self, bytes)))
		return real.calloc(n, size);
	return calloc_slow(n, size);
}

/* realloc of a block from the bootstrap buffer: copy what it can. */
static void *realloc_bootstrap(void *old, size_t size)
{
	size_t room = (size_t)(boot_buf + sizeof boot_buf - (uint8_t *)old);
	void *p = own_malloc(size);
	if (p)
		memcpy(p, old, size < room ? size : room);
	return p;
}

void *HP_ENTRY(realloc)(void *old, size_t size)
{
	struct hp_thread *t;
	struct hp_live_block blk;
	int had = 0;
	void *p;

	if (!READY())
		return EARLY(__real_realloc(old, size), old ? NULL : hp_bootstrap_alloc(size, 16));
	if (!old)
		return own_malloc(size);
	if (hp_bootstrap_owns(old))
		return realloc_bootstrap(old, size);
	t = &hp_self;
	/* Take the old block out of the register before the real realloc, which
	 * may free it: another thread could get its address at once. */
	if (hp_live_maybe((uintptr_t)old) && !t->forwarding) {
		int saved = errno;
		had = hp_record_take(t, old, &blk);
		errno = saved;
	}
	p = real.realloc(old, size);
	if (!p && size) { /* failed: the old block is still there */
		if (had) {
			int saved = errno;
			hp_record_untake(t, old, &blk);
			errno = saved;
		}
		return NULL;
	}
	if (had) {
		int saved = errno;
		hp_record_release(t, old, &blk);
		errno = saved;
	}
	if (p)
		hp_note_alloc(p, size);
	return p;
}

static __typeof__(HP_ENTRY(realloc)) own_realloc
	__attribute__((alias(HP_ALIAS_OF(HP_ENTRY(realloc))), copy(HP_ENTRY(realloc))));

void *HP_ENTRY(reallocarray)(void *old, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return own_realloc(old, n * size);
}

int HP_ENTRY(posix_memalign)(void **out, size_t align, size_t size)
{
	int err;

	if (!READY()) {
#ifdef HP_STATIC
		if (!__atomic_load_n(&constructed, __ATOMIC_ACQUIRE))
			return __real_posix_memalign(out, align, size);
#endif
		if (!align || (align & (align - 1)) || align % sizeof(void *))
			return EINVAL;
		*out = hp_bootstrap_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	err = real.posix_memalign(out, align, size);
	if (!err)
		hp_note_alloc(*out, size);
	return err;
}

#define ALIGNED(name, params, call, size)                          \
	void *HP_ENTRY(name) params                                 \
	{                                                          \
		void *p;                                           \
		if (!READY())                                      \
			return EARLY(__real_##call,                \
				     hp_bootstrap_alloc(size, 4096)); \
		p = real.call;                                     \
		if (hp_likely(p != NULL))                          \
			hp_note_alloc(p, size);                    \
		return p;                                          \
	}

ALIGNED(aligned_alloc, (size_t align, size_t size), aligned_alloc(align, size), size)
ALIGNED(memalign, (size_t align, size_t size), memalign(align, size), size)
ALIGNED(valloc, (size_t size), valloc(size), size)
ALIGNED(pvalloc, (size_t size), pvalloc(size), size)

#ifndef HP_STATIC
/* A library about to be unloaded: note it in the module map while it is
 * still there, and its unloading after, so that stacks through it stay
 * resolvable. */
int dlclose(void *handle)
{
	int r;

	if (!READY() || !real.dlclose)
		return -1;
	hp_self.forwarding++;
	hp_modules_refresh(1);
	hp_self.forwarding--;
	r = real.dlclose(handle);
	hp_cfa_flush(); /* other code may be mapped where it was */
	hp_self.forwarding++;
	hp_modules_refresh(1);
	hp_self.forwarding--;
	return r;
}
#endif
