/*
 * root.c - heapprof_root, the one exported data symbol (root.h): where a
 * reader of a core dump finds the recorder's tables.
 *
 * Written once by hp_root_fill at init, before recording starts, then
 * only read (by nobody in the process: its reader is the analyzer, in a
 * core). Being written, its page is private and dirty, so the kernel
 * dumps it with the anonymous memory (coredump_filter's default).
 */
#include "root.h"

#include <stddef.h>
#include <stdint.h>

#include "thread.h"

#pragma GCC visibility push(default)
struct hp_root heapprof_root;
#pragma GCC visibility pop

void hp_root_fill(void)
{
	struct hp_root r = {.magic = HP_ROOT_MAGIC,
			    .version = HP_ROOT_VERSION,
			    .root_bytes = sizeof r};

	hp_stacks_root(&r);
	hp_agg_root(&r);
	hp_live_root(&r);
	hp_tags_root(&r);
	/* The threads' own state: at a fixed distance from the thread pointer
	 * (initial-exec TLS), the same in every thread. */
	r.self_tpoff = (uint64_t)((uintptr_t)&hp_self - (uintptr_t)__builtin_thread_pointer());
	r.freeing_off = (uint32_t)offsetof(struct hp_thread, freeing);
	r.freeing_size_off = (uint32_t)offsetof(struct hp_thread, freeing_size);
	r.freeing_bucket_off = (uint32_t)offsetof(struct hp_thread, freeing_bucket);
	r.freeing_temp_off = (uint32_t)offsetof(struct hp_thread, freeing_temp);
	/* The magic last: a core dumped during init shows no half root. */
	r.magic = 0;
	heapprof_root = r;
	__atomic_store_n(&heapprof_root.magic, HP_ROOT_MAGIC, __ATOMIC_RELEASE);
}
