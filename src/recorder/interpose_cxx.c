/*
 * interpose_cxx.c - every C++ operator new and delete: plain, array,
 * nothrow, sized, aligned, and their combinations (the Itanium C++ ABI
 * names, which are valid C identifiers).
 *
 * The unaligned operators take a fast path: new calls the next malloc
 * directly, and delete the next free, as libstdc++'s own operators do (and
 * those of jemalloc, tcmalloc and mimalloc, whose new and malloc share one
 * heap). That saves a second pass through the interposer on every C++
 * allocation. Only when malloc fails does new forward to the next operator
 * new, whose new_handler loop, bad_alloc and nothrow semantics are then the
 * real ones. The aligned operators always forward. While forwarding, the thread's
 * forwarding flag keeps the real operator's own malloc and free from being
 * recorded a second time; the flag is dropped by a cleanup handler, so an
 * exception thrown by the real operator new leaves it right (this file is
 * built with -fexceptions).
 *
 * If no C++ runtime is loaded (nobody else defines the operators, yet
 * someone calls them), new falls back to malloc and delete to free.
 *
 * In the static archive (HP_STATIC) each operator is __wrap_<name> and the
 * next one __real_<name>, from the link (interpose_inline.h): this object
 * is only linked into programs that call an operator, which then come with
 * libstdc++.a.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "attach.h"
#include "interpose_inline.h"
#include "os.h"

/* Everything this file defines with external linkage is exported (the
 * version script then keeps just the interposed names). */
#pragma GCC visibility push(default)

/* While forwarding, the sampler's countdown is parked far from zero, so the
 * real operator's nested malloc stays on the fast path and does not consume
 * the countdown that the operator's own allocation is about to use. */
#define PARKED_COUNTDOWN (INT64_MAX / 2)

static void stop_forwarding(int64_t *countdown)
{
	hp_self.countdown_bytes = *countdown;
	hp_self.forwarding--;
}

static inline int64_t start_forwarding(void)
{
	int64_t countdown = hp_self.countdown_bytes;
	hp_self.forwarding++;
	hp_self.countdown_bytes = PARKED_COUNTDOWN;
	return countdown;
}

#define FORWARDING                                                      \
	__attribute__((cleanup(stop_forwarding))) int64_t forwarding_ = \
		start_forwarding();                                     \
	(void)forwarding_

/* The real operator, looked up on first use: written racily, but every
 * thread writes the same value. */
#ifdef HP_STATIC
#define REAL(sym, type)                                  \
	extern __typeof__(HP_ENTRY(sym)) __real_##sym;   \
	static const type real_ = __real_##sym
#else
#define REAL(sym, type) \
	static type real_; \
	if (hp_unlikely(!real_)) \
		real_ = (type)hp_attach_next(#sym)
#endif

typedef void *(*new_fn)(size_t);
typedef void *(*new_nothrow_fn)(size_t, const void *);
typedef void *(*new_aligned_fn)(size_t, size_t);
typedef void *(*new_aligned_nothrow_fn)(size_t, size_t, const void *);
typedef void (*delete_fn)(void *);
typedef void (*delete_sized_fn)(void *, size_t);
typedef void (*delete_aligned_fn)(void *, size_t);
typedef void (*delete_sized_aligned_fn)(void *, size_t, size_t);
typedef void (*delete_nothrow_fn)(void *, const void *);
typedef void (*delete_aligned_nothrow_fn)(void *, size_t, const void *);

static void *forward_new(new_fn f, size_t n)
{
	void *p;
	{
		FORWARDING;
		p = f ? f(n) : malloc(n);
	}
	if (p)
		hp_note_alloc(p, n);
	return p;
}

static void *forward_new_aligned(new_aligned_fn f, size_t n, size_t align)
{
	void *p;
	{
		FORWARDING;
		p = f ? f(n, align) : aligned_alloc(align, (n + align - 1) / align * align);
	}
	if (p)
		hp_note_alloc(p, n);
	return p;
}

/* The unaligned operators: the next malloc, recorded; NULL when it failed
 * (then the next operator new takes over). The countdown first, as in
 * malloc; given back when the malloc fails, since the next operator new
 * then allocates and counts (forward_new). Always inlined into the
 * operator, whose frame HP_CFA_ENTRY reads: the program called it. */
static inline __attribute__((always_inline)) void *new_fast(size_t n)
{
	struct hp_thread *t = &hp_self;
	void *p;

	if (hp_likely(hp_fast_alloc(t, n))) {
		p = hp_next_malloc(n);
		if (hp_likely(p != NULL))
			return p;
		t->countdown_bytes += (int64_t)n;
		return NULL;
	}
	p = hp_next_malloc(n ? n : 1);
	if (p)
		hp_note_alloc_slow_at(p, n, HP_CFA_ENTRY());
	return p;
}

#define NEW(sym)                                          \
	void *HP_ENTRY(sym)(size_t n)                               \
	{                                                 \
		void *p = new_fast(n);                    \
		if (hp_likely(p != NULL))                 \
			return p;                         \
		REAL(sym, new_fn);                        \
		return forward_new(real_, n);             \
	}

#define NEW_NOTHROW(sym)                                   \
	void *HP_ENTRY(sym)(size_t n, const void *tag)               \
	{                                                  \
		void *p = new_fast(n);                     \
		if (hp_likely(p != NULL))                  \
			return p;                          \
		REAL(sym, new_nothrow_fn);                 \
		{                                          \
			FORWARDING;                        \
			p = real_ ? real_(n, tag) : malloc(n); \
		}                                          \
		if (p)                                     \
			hp_note_alloc(p, n);               \
		return p;                                  \
	}

#define NEW_ALIGNED(sym)                                      \
	void *HP_ENTRY(sym)(size_t n, size_t align)                     \
	{                                                     \
		REAL(sym, new_aligned_fn);                    \
		return forward_new_aligned(real_, n, align);  \
	}

#define NEW_ALIGNED_NOTHROW(sym)                                             \
	void *HP_ENTRY(sym)(size_t n, size_t align, const void *tag)                   \
	{                                                                    \
		void *p;                                                     \
		REAL(sym, new_aligned_nothrow_fn);                           \
		{                                                            \
			FORWARDING;                                          \
			p = real_ ? real_(n, align, tag)                     \
				  : aligned_alloc(align, (n + align - 1) / align * align); \
		}                                                            \
		if (p)                                                       \
			hp_note_alloc(p, n);                                 \
		return p;                                                    \
	}

#define UNUSED __attribute__((unused))

/* delete of an unaligned block: as free, the filter, then the next free. */
#define DELETE_FAST(sym, params)                            \
	void HP_ENTRY(sym) params                                     \
	{                                                   \
		if (hp_unlikely(hp_live_maybe((uintptr_t)p))) \
			hp_free_slow(p);                    \
		else                                        \
			hp_next_free(p);                    \
	}

/* delete of an aligned block: out of the register, then forward. */
#define DELETE(sym, type, params, args)             \
	void HP_ENTRY(sym) params                             \
	{                                           \
		REAL(sym, type);                    \
		if (!p)                             \
			return;                     \
		hp_note_free(p);                    \
		FORWARDING;                         \
		if (real_)                          \
			real_ args;                 \
		else                                \
			free(p);                    \
		hp_self.freeing = 0; /* thread.h */ \
	}

NEW(_Znwm)                                  /* new(size_t) */
NEW(_Znam)                                  /* new[](size_t) */
NEW_NOTHROW(_ZnwmRKSt9nothrow_t)            /* new(size_t, nothrow_t) */
NEW_NOTHROW(_ZnamRKSt9nothrow_t)            /* new[](size_t, nothrow_t) */
NEW_ALIGNED(_ZnwmSt11align_val_t)           /* new(size_t, align_val_t) */
NEW_ALIGNED(_ZnamSt11align_val_t)           /* new[](size_t, align_val_t) */
NEW_ALIGNED_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t)
NEW_ALIGNED_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t)

DELETE_FAST(_ZdlPv, (void *p))                                   /* delete(p) */
DELETE_FAST(_ZdaPv, (void *p))                                   /* delete[](p) */
DELETE_FAST(_ZdlPvm, (void *p, size_t n UNUSED))                        /* sized */
DELETE_FAST(_ZdaPvm, (void *p, size_t n UNUSED))
DELETE_FAST(_ZdlPvRKSt9nothrow_t, (void *p, const void *t UNUSED))
DELETE_FAST(_ZdaPvRKSt9nothrow_t, (void *p, const void *t UNUSED))
DELETE(_ZdlPvSt11align_val_t, delete_aligned_fn, (void *p, size_t a), (p, a))
DELETE(_ZdaPvSt11align_val_t, delete_aligned_fn, (void *p, size_t a), (p, a))
DELETE(_ZdlPvmSt11align_val_t, delete_sized_aligned_fn, (void *p, size_t n, size_t a), (p, n, a))
DELETE(_ZdaPvmSt11align_val_t, delete_sized_aligned_fn, (void *p, size_t n, size_t a), (p, n, a))
DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, delete_aligned_nothrow_fn,
       (void *p, size_t a, const void *t), (p, a, t))
DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, delete_aligned_nothrow_fn,
       (void *p, size_t a, const void *t), (p, a, t))
