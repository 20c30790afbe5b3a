/*
 * stacks.c - the stack table (see stacks.h).
 */
#include "stacks.h"

#include <errno.h>

#include "../common/hash.h"
#include "../common/options.h"
#include "config.h"
#include "intern.h"
#include "root.h"

/* Limits: about two million distinct stacks (HP_STACKS_MAX; fewer with
 * HEAPPROF_MAX_STACKS), each keeping HP_INTERN_HEAD_WORDS + 1 words at
 * most, and about two million distinct segments (HP_INTERN_MAX_IDS) of
 * the frames outer to those, 64 Mi words in all (512 MiB at most); all
 * mapped in 512 KiB chunks as stacks come. A stack whose segments do not
 * fit is not added (the table is full). */
#define MAX_SEG_WORDS (1ull << 26)

_Static_assert(HP_STACKS_MAX <= HP_INTERN_MAX_IDS, "stack ids fit an interning table");
_Static_assert(HP_OPTION_MAX_STACKS_MAX == HP_STACKS_MAX - 1, "one stack limit");
_Static_assert(HP_CONFIG_MAX_DEPTH_LIMIT <= HP_STACKS_MAX_DEPTH, "any stack can be interned");

/* Set up once at init, their memory mapped as they fill; see intern.h for
 * their locking (segs' lock is taken only under table's). */
static struct hp_intern table, segs;

int hp_stacks_init(uint32_t max_stacks)
{
	if (max_stacks < 1 || max_stacks >= HP_STACKS_MAX)
		return -EINVAL;
	int err = hp_intern_init(&segs, HP_INTERN_MAX_IDS, MAX_SEG_WORDS);
	if (err)
		return err;
	/* ids 1 .. max_stacks */
	return hp_intern_init_chained(&table, max_stacks + 1,
				      (uint64_t)(max_stacks + 1) * (HP_INTERN_HEAD_WORDS + 1), &segs);
}

uint32_t hp_stacks_intern(const uint64_t *frames, uint32_t depth)
{
	return hp_stacks_intern_hashed(frames, depth, hp_hash_stack(frames, depth));
}

uint32_t hp_stacks_intern_hashed(const uint64_t *frames, uint32_t depth, uint64_t hash)
{
	return depth ? hp_intern_put_hashed(&table, frames, depth, hash) : 0;
}

uint32_t hp_stacks_count(void)
{
	return hp_intern_count(&table);
}

uint32_t hp_stacks_frames(uint32_t id, uint64_t *frames)
{
	return hp_intern_copy(&table, id, frames);
}

int hp_stacks_equal(uint32_t id, const uint64_t *frames, uint32_t depth)
{
	return hp_intern_equal(&table, id, frames, depth);
}

uint64_t hp_stacks_bytes(void)
{
	return hp_intern_bytes(&table) + hp_intern_bytes(&segs);
}

void hp_stacks_lock(void)
{
	hp_spin_lock(&table.lock);
}

void hp_stacks_unlock(void)
{
	hp_spin_unlock(&table.lock);
}

void hp_stacks_root(struct hp_root *r)
{
	hp_intern_root(&table, &r->stacks);
	hp_intern_root(&segs, &r->stack_segs);
	r->stack_head_frames = HP_INTERN_HEAD_WORDS;
	r->stack_seg_frames = HP_INTERN_SEG_WORDS;
}
