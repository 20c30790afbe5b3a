/*
 * roots.h - the outermost frames of a stack deeper than max-depth.
 *
 * A walk that has kept max frames and finds more goes on to the stack's
 * end (at most HP_ROOTS_WALK_FRAMES frames in all), keeping the last
 * hp_roots_keep(max) frames it reads in a ring, in place at the end of
 * frames[]. The stack it gives is then max frames: the innermost
 * max - 1 - keep, the gap frame HP_FRAME_GAP (format.h) that stands for
 * those not kept, and the outermost keep frames, outermost last, as the
 * frames of any stack. So the roots of a deep stack stay (main and the
 * calls below the recursion), and stacks that differ only in how deep
 * their recursion went are one stack. A walk that reaches
 * HP_ROOTS_WALK_FRAMES before the end keeps no roots (what it read last
 * is not one): its gap frame is its last.
 *
 * Every unwinder (the rule cache's and the remembered walks' of
 * cfa_cache.c, libunwind's and the frame-pointer walk of unwind.c) ends a
 * deep walk through these, so that they give one stack for one walk
 * (HEAPPROF_UNWIND_CHECK compares them). Pure functions of their
 * arguments: async-signal-safe, no allocation, no lock.
 */
#ifndef HP_RECORDER_ROOTS_H
#define HP_RECORDER_ROOTS_H

#include <stdint.h>
#include <string.h>

#include "../format/format.h"
#include "config.h"

/* The most frames a deep walk steps through: a recursion deeper than
 * this costs each allocation in it no more (about 20 instructions a
 * frame through the rule cache). */
#define HP_ROOTS_WALK_FRAMES 1024

/* Outermost frames kept of a stack deeper than max: a quarter of them
 * (16 of the default 64). With max 1 no gap frame is put (the one frame
 * kept is the allocation's caller), so a walk need not go past max. */
static inline uint32_t hp_roots_keep(uint32_t max)
{
	return max / 4;
}

struct hp_roots {
	uint64_t *frames;
	uint32_t max, inner, keep; /* inner: frames kept before the gap */
	uint32_t next;             /* the ring's oldest entry, overwritten next */
	uint32_t seen;             /* frames read by the walk */
};

/* Starts the roots of a walk whose frames[0..max) are written and which
 * has found another frame. max >= 2. */
static inline void hp_roots_begin(struct hp_roots *g, uint64_t *frames, uint32_t max)
{
	g->frames = frames;
	g->max = max;
	g->keep = hp_roots_keep(max);
	g->inner = max - 1 - g->keep;
	/* The ring is frames[inner + 1, max): the last keep frames read */
	g->next = 0;
	g->seen = max;
}

/* The next frame of the walk, outwards. Returns 1 when the walk must stop
 * (then hp_roots_end(g, 0)): it has read HP_ROOTS_WALK_FRAMES, or there
 * are no roots to keep; else 0. */
static inline int hp_roots_add(struct hp_roots *g, uint64_t frame)
{
	if (!g->keep) /* (max < 4) no roots to keep: no need to walk on */
		return 1;
	g->frames[g->inner + 1 + g->next] = frame;
	if (++g->next == g->keep)
		g->next = 0;
	return ++g->seen >= HP_ROOTS_WALK_FRAMES;
}

/* Puts the gap frame and the roots in order, outermost last; reached:
 * whether the walk read the stack's last frame. Returns the frames'
 * number: max, or inner + 1 when the end was not reached. */
static inline uint32_t hp_roots_end(struct hp_roots *g, int reached)
{
	uint64_t *ring = g->frames + g->inner + 1;
	uint64_t head[HP_CONFIG_MAX_DEPTH_LIMIT / 4];

	g->frames[g->inner] = HP_FRAME_GAP;
	if (!reached)
		return g->inner + 1;
	if (g->next) { /* rotate: the oldest, ring[next], first */
		memcpy(head, ring, g->next * sizeof *ring);
		memmove(ring, ring + g->next, (g->keep - g->next) * sizeof *ring);
		memcpy(ring + g->keep - g->next, head, g->next * sizeof *ring);
	}
	return g->max;
}

/* The frame-pointer walk's roots (unwind.c's walk_fp and the remembered
 * walks of cfa_cache.c): frames[0..max) are written, and at is the next
 * frame's address, inside the stack (below hi), aligned and above the
 * last. Returns the frames kept: max when that frame ends the stack (its
 * return address is 0), else as hp_roots_end. Reads only words inside
 * the stack's bounds, each frame above the one before. */
static inline uint32_t hp_roots_fp(uint64_t *frames, uint32_t max, uintptr_t at, uintptr_t hi)
{
	uintptr_t next = ((const uintptr_t *)at)[0], ret = ((const uintptr_t *)at)[1];
	struct hp_roots g;

	if (!ret)
		return max;
	hp_roots_begin(&g, frames, max);
	for (;;) {
		if (hp_roots_add(&g, ret))
			return hp_roots_end(&g, 0);
		if (next <= at || next + 2 * sizeof(uintptr_t) > hi || (next & 7))
			return hp_roots_end(&g, 1);
		at = next;
		next = ((const uintptr_t *)at)[0];
		ret = ((const uintptr_t *)at)[1];
		if (!ret)
			return hp_roots_end(&g, 1);
	}
}

#endif
