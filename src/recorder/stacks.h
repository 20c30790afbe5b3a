/*
 * stacks.h - the stack table: call stacks deduplicated into small ids.
 *
 * An interning table of chained keys (intern.h) over the frames of each
 * stack: a stack keeps its innermost HP_INTERN_HEAD_WORDS frames and the
 * id of a segment that holds the frames outer to them, segments cut from
 * the outermost frame, so that the outer frames many stacks share are
 * stored once. Ids are
 * dense from 1, so the writer emits "stacks 1..n" once each, in order, and
 * later snapshots refer to them by id. Id 0 is "no stack". Lookups are
 * lock-free; a new stack takes the table's lock. Nothing here calls the
 * target's malloc.
 */
#ifndef HP_RECORDER_STACKS_H
#define HP_RECORDER_STACKS_H

#include <stdint.h>

#include "intern.h"

/* Stack ids are below this: at most 2^21 - 1 distinct stacks
 * (HP_OPTION_MAX_STACKS_MAX, HEAPPROF_MAX_STACKS sets fewer). */
#define HP_STACKS_MAX (1u << 21)

/* Maps the table's index, for at most max_stacks distinct stacks (1 ..
 * HP_STACKS_MAX - 1; a stack past them is not recorded, and the
 * allocation counted lost: HP_LOST_STACK_TABLE_FULL). Returns 0, -EINVAL
 * or -ENOMEM. Once, at init: not thread-safe; no allocation (mmap), no
 * lock. */
int hp_stacks_init(uint32_t max_stacks);

/* The id of frames[0..depth), added when new; 0 when depth is 0 or the
 * table is full. Lock-free for a known stack, else takes the table's
 * spinlock and may mmap; no allocation; not async-signal-safe. */
uint32_t hp_stacks_intern(const uint64_t *frames, uint32_t depth);

/* hp_stacks_intern with the hash of the frames given, which must be
 * hp_hash_stack(frames, depth) (common/hash.h): the unwinder folds it in
 * as it walks. Same properties. */
uint32_t hp_stacks_intern_hashed(const uint64_t *frames, uint32_t depth, uint64_t hash);

/* Ids 1..hp_stacks_count()-1 exist. Lock-free, async-signal-safe, no
 * allocation. */
uint32_t hp_stacks_count(void);

/* The most frames of a stack (longer ones are not interned): the room
 * hp_stacks_frames needs. */
#define HP_STACKS_MAX_DEPTH HP_INTERN_MAX_KEY_WORDS

/* Copies the frames of an existing id into frames[] (room for
 * HP_STACKS_MAX_DEPTH, or for the deepest stack interned) and returns
 * their number. Lock-free, async-signal-safe, no allocation. */
uint32_t hp_stacks_frames(uint32_t id, uint64_t *frames);

/* Whether frames[0..depth) are the frames of an existing id, compared in
 * place (no copy). Lock-free, async-signal-safe, no allocation. */
int hp_stacks_equal(uint32_t id, const uint64_t *frames, uint32_t depth);

/* Bytes of recorder memory the table may have touched. Lock-free,
 * async-signal-safe, no allocation. */
uint64_t hp_stacks_bytes(void);

/* For fork: take and release the table lock. No allocation; not
 * async-signal-safe. */
void hp_stacks_lock(void);
void hp_stacks_unlock(void);

#endif
