/*
 * interpose_inline.h - the fast path shared by the C and C++ interposers.
 *
 * An allocation costs a subtraction and a branch here (plus the store
 * that remembers the thread's last block, for temporaries); a free in
 * sampled mode one filter load. Everything else is in recorder.c, behind a
 * noinline call. errno is saved around the slow paths, so the caller sees
 * exactly what the real allocator set.
 */
#ifndef HP_RECORDER_INTERPOSE_INLINE_H
#define HP_RECORDER_INTERPOSE_INLINE_H

#include <errno.h>
#include <stddef.h>

#include "recorder.h"

#define hp_likely(x) __builtin_expect(!!(x), 1)
#define hp_unlikely(x) __builtin_expect(!!(x), 0)

/* Records p (non-NULL, size bytes) if the sampler says so. */
static inline void hp_note_alloc(void *p, size_t size)
{
	struct hp_thread *t = &hp_self;

	if (hp_unlikely(t->forwarding))
		return;
	t->last_alloc = (uintptr_t)p;
	if (hp_unlikely((t->countdown_bytes -= (int64_t)size) < 0)) {
		int saved = errno;
		hp_record_alloc(t, p, size);
		errno = saved;
	}
}

/* Before the real free of p (non-NULL): takes p out of the register. */
static inline void hp_note_free(void *p)
{
	struct hp_thread *t = &hp_self;
	struct hp_live_block blk;

	if (hp_likely(!hp_live_maybe((uintptr_t)p)) || hp_unlikely(t->forwarding))
		return;
	int saved = errno;
	if (hp_record_take(t, p, &blk))
		hp_record_release(t, p, &blk);
	errno = saved;
}

/* The bootstrap allocator answers calls made before the real allocator is
 * known (dlsym's own); its blocks are never freed. */
int hp_bootstrap_owns(const void *p);
void *hp_bootstrap_alloc(size_t size, size_t align);
/* Resolves the real C functions and starts the recorder, once. Returns 0
 * when the real functions are known, -1 while they are being looked up on
 * this thread (use the bootstrap allocator). */
int hp_interpose_init(void);

#endif
