/*
 * stacks.c - the stack table (see stacks.h).
 */
#include "stacks.h"

#include <errno.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/options.h"
#include "config.h"
#include "intern.h"
#include "root.h"

/* Limits: about two million distinct stacks (HP_STACKS_MAX; fewer with
 * HEAPPROF_MAX_STACKS), 64 Mi frames in all (512 MiB at most, mapped in
 * 512 KiB chunks as stacks come). */
#define MAX_FRAMES (1ull << 26)

_Static_assert(HP_STACKS_MAX <= HP_INTERN_MAX_IDS, "stack ids fit an interning table");
_Static_assert(HP_OPTION_MAX_STACKS_MAX == HP_STACKS_MAX - 1, "one stack limit");
_Static_assert(HP_CONFIG_MAX_DEPTH_LIMIT <= HP_INTERN_MAX_KEY_WORDS, "any stack can be interned");

/* Set up once at init, its memory mapped as it fills; see intern.h for its
 * locking. */
static struct hp_intern table;

int hp_stacks_init(uint32_t max_stacks)
{
	if (max_stacks < 1 || max_stacks >= HP_STACKS_MAX)
		return -EINVAL;
	return hp_intern_init(&table, max_stacks + 1, MAX_FRAMES); /* ids 1 .. max_stacks */
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

const uint64_t *hp_stacks_get(uint32_t id, uint32_t *depth)
{
	return hp_intern_key(&table, id, depth);
}

int hp_stacks_equal(uint32_t id, const uint64_t *frames, uint32_t depth)
{
	uint32_t n;
	const uint64_t *f = hp_intern_key(&table, id, &n);
	return n == depth && memcmp(f, frames, depth * sizeof *frames) == 0;
}

uint64_t hp_stacks_bytes(void)
{
	return hp_intern_bytes(&table);
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
}
