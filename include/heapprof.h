/*
 * heapprof.h - the public C API of the heapprof recorder.
 *
 * A program running under heapprof (`heapprof run`, or LD_PRELOAD of
 * libheapprof.so) can ask for a snapshot of its heap at a moment of its
 * choosing, say what its blocks are (types), on whose behalf it allocates
 * (contexts), and report the blocks of its own allocators (custom heaps).
 * The functions are declared weak: a program built with this header runs
 * unchanged without heapprof, where they are NULL, so call them as
 *
 *     if (heapprof_dump)
 *             heapprof_dump();
 *
 * (include/heapprof.hpp does that for C++, with RAII scopes and types
 * named at compile time.) Every function is thread-safe and takes no lock
 * that a signal handler could meet; each says whether it is
 * async-signal-safe. Called from a signal handler that interrupted the
 * recorder, a function that is not counts what it could not record instead
 * of waiting.
 */
#ifndef HEAPPROF_H
#define HEAPPROF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Appends a snapshot of the heap to the capture file now. Returns 0, or a
 * negative errno when the recorder is not recording or the write failed. */
int heapprof_dump(void) __attribute__((weak));

/* Returns 1 when the recorder is recording this process, 0 otherwise.
 * Async-signal-safe. */
int heapprof_active(void) __attribute__((weak));

/* --- types ------------------------------------------------------------- */

/* Names the type of the live block that starts at p (a pointer malloc,
 * new or a custom heap returned): its figures from now on, and its whole
 * life's, count under that type. name is copied. Where a custom heap's
 * block and malloc's start at the same address (an arena's first object
 * in its chunk), the custom heap's is named. Returns 0, -ENOENT when
 * p is not a recorded block (never recorded, or not sampled in sampled
 * mode), -ENODEV when the recorder is not recording. C++ objects with a
 * virtual table need no call: their dynamic type is read at snapshots. Not
 * async-signal-safe. */
int heapprof_set_type(const void *p, const char *name) __attribute__((weak));

/* The same for an array of elements of elem_bytes each that starts at
 * first: the block that starts at first, else the one that starts
 * cookie_bytes before it (new T[n] of a T with a destructor puts the
 * element count there, the Itanium C++ ABI's array cookie). The block's
 * size must be the cookie (none at first) and a whole number of elements:
 * report --by type counts them (n = (size - cookie) / elem_bytes).
 * Returns 0, -ENOENT (no recorded block there), -EINVAL (a block of
 * another size, left as it is), -ENODEV (not recording). C++ programs get
 * it from include/heapprof/typed_new.hpp at every new, or from
 * heapprof.hpp's set_type_array. Not async-signal-safe. */
int heapprof_set_type_array(const void *first, const char *name, size_t elem_bytes,
			    size_t cookie_bytes) __attribute__((weak));

/* --- contexts ---------------------------------------------------------- */

/* Opens a context scope on the calling thread: until the matching pop, the
 * thread's allocations are attributed to name, inside the scopes already
 * open (a per-thread pseudo-stack, like Chromium's trace scopes). A block
 * keeps the context of its allocation whichever thread frees it. name
 * must stay valid until the matching pop (a string literal is the usual
 * case); it is copied when first used. Scopes nested deeper than 32 count
 * in the 32nd. Costs a few stores: only the slow path reads them.
 * Async-signal-safe (a handler's push must pop before it returns). */
void heapprof_context_push(const char *name) __attribute__((weak));
/* Closes the innermost scope the thread opened (nothing when none is
 * open). Async-signal-safe. */
void heapprof_context_pop(void) __attribute__((weak));

/* --- custom heaps ------------------------------------------------------ */

/* Allocators of the program's own (arenas, pools) report their blocks so
 * that they get stacks, types, contexts, peaks and leaks like malloc's,
 * kept apart from malloc's: the arena's own memory, which it got from
 * malloc, stays malloc's, and no total adds the two.
 *
 * heapprof_heap_create names a heap and returns its id (> 0), or a
 * negative errno: -ENODEV when the recorder is not recording, -ENOSPC past
 * 255 heaps. Not async-signal-safe. */
int heapprof_heap_create(const char *name) __attribute__((weak));
/* A block of size bytes at p was allocated from heap: recorded with the
 * caller's stack, type (heapprof_set_type works on it) and context. A
 * block already live at p in that heap is freed first. Not
 * async-signal-safe (it unwinds). */
void heapprof_heap_alloc(int heap, const void *p, size_t size) __attribute__((weak));
/* The block at p of heap was freed. Realloc is a free then an alloc. Not
 * async-signal-safe. */
void heapprof_heap_free(int heap, const void *p) __attribute__((weak));
/* Every live block of heap was freed at once (an arena's reset or
 * destruction). Costs a walk of the recorder's live blocks. Not
 * async-signal-safe. */
void heapprof_heap_reset(int heap) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
