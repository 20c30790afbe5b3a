/*
 * stacks.h - the stack table: call stacks deduplicated into small ids.
 *
 * An interning table (intern.h) over the frames of each stack. Ids are
 * dense from 1, so the writer emits "stacks 1..n" once each, in order, and
 * later snapshots refer to them by id. Id 0 is "no stack". Lookups are
 * lock-free; a new stack takes the table's lock. Nothing here calls the
 * target's malloc.
 */
#ifndef HP_RECORDER_STACKS_H
#define HP_RECORDER_STACKS_H

#include <stdint.h>

/* Stack ids are below this. */
#define HP_STACKS_MAX (1u << 20)

int hp_stacks_init(void);

/* The id of frames[0..depth), added when new; 0 when depth is 0 or the
 * table is full. */
uint32_t hp_stacks_intern(const uint64_t *frames, uint32_t depth);

/* Ids 1..hp_stacks_count()-1 exist. Lock-free. */
uint32_t hp_stacks_count(void);

/* The frames of an existing id. Lock-free, async-signal-safe. */
const uint64_t *hp_stacks_get(uint32_t id, uint32_t *depth);

uint64_t hp_stacks_bytes(void);

/* For fork: take and release the table lock. */
void hp_stacks_lock(void);
void hp_stacks_unlock(void);

#endif
