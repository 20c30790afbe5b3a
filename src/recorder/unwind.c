/*
 * unwind.c - DWARF and frame-pointer unwinding (see unwind.h).
 */
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <link.h>
#include <libunwind.h>
#include <string.h>

#include "../format/format.h"
#include "config.h"
#include "os.h"

/* Set once at init, read-only afterwards. */
static unsigned mode;
static uintptr_t own_lo, own_hi; /* the recorder's executable segment */

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t self = (uintptr_t)arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= lo &&
		    self < lo + ph->p_memsz) {
			own_lo = lo;
			own_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

int hp_unwind_init(unsigned m)
{
	mode = m;
	dl_iterate_phdr(find_own, (void *)(uintptr_t)&hp_unwind_init);
	if (mode == HP_UNWIND_DWARF) {
		/* The per-thread cache keeps unw_backtrace on its fast path: the
		 * global cache would mask signals around every lookup. */
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	}
	return own_hi ? 0 : -2; /* -ENOENT */
}

int hp_unwind_is_own(uintptr_t addr)
{
	return addr >= own_lo && addr < own_hi;
}

/* Walks saved frame pointers from our own frame. Each frame must lie inside
 * the thread's stack, above the previous one and aligned, so a frame of
 * code built without frame pointers ends the walk instead of crashing it. */
static uint32_t walk_fp(struct hp_thread *t, uint64_t *out, uint32_t max)
{
	const uintptr_t *fp = __builtin_frame_address(0);
	uint32_t n = 0;

	if (!t->stack_hi) {
		t->forwarding++; /* glibc may allocate here: not the program's */
		if (hp_os_thread_stack(&t->stack_lo, &t->stack_hi) < 0)
			t->stack_lo = t->stack_hi = 1; /* no bounds: no walk */
		t->forwarding--;
	}
	while (n < max) {
		uintptr_t at = (uintptr_t)fp, ret, next;
		if (at < t->stack_lo || at + 2 * sizeof(uintptr_t) > t->stack_hi || (at & 7))
			break;
		next = fp[0];
		ret = fp[1];
		if (!ret)
			break;
		if (n || !hp_unwind_is_own(ret))
			out[n++] = ret;
		if (next <= at)
			break;
		fp = (const uintptr_t *)next;
	}
	return n;
}

uint32_t hp_unwind(struct hp_thread *t, uint64_t *frames, uint32_t max)
{
	/* Room for the recorder's own frames, which are dropped. */
	void *raw[HP_CONFIG_MAX_DEPTH_LIMIT + 8];
	int got, skip = 0;

	if (mode == HP_UNWIND_FP)
		return walk_fp(t, frames, max);
	got = unw_backtrace(raw, (int)(max + 8 < sizeof raw / sizeof *raw ? max + 8
									    : sizeof raw / sizeof *raw));
	while (skip < got && hp_unwind_is_own((uintptr_t)raw[skip]))
		skip++;
	if (got - skip < (int)max)
		max = (uint32_t)(got - skip);
	for (uint32_t i = 0; i < max; i++)
		frames[i] = (uint64_t)(uintptr_t)raw[skip + i];
	return max;
}
