/*
 * unwind.h - capturing the call stack of an allocation.
 *
 * Two unwinders: DWARF through libunwind's cached fast path (unw_backtrace
 * with a per-thread cache, no signal masking; its memory validation kept
 * off the program's descriptors, see unwind.c), the default; and a frame-pointer walk that checks every frame against the
 * thread's stack bounds. Both drop the recorder's own frames, so frame 0 is
 * the return address in the caller of malloc (or new, or ...).
 */
#ifndef HP_RECORDER_UNWIND_H
#define HP_RECORDER_UNWIND_H

#include <stdint.h>

#include "thread.h"

/* Chooses the unwinder and finds the recorder's own code range. Call once,
 * at init, with the reentrancy flag set: dl_iterate_phdr takes the
 * loader's lock and may allocate. Not thread-safe, not async-signal-safe.
 * Returns 0 or -errno. */
int hp_unwind_init(unsigned mode);

/* Room an unwinder needs past max in frames[] for the recorder's own
 * frames, which it drops. */
#define HP_UNWIND_SLACK 8

/* Fills frames[0..max) with return addresses, innermost first; frames must
 * have room for max + HP_UNWIND_SLACK entries. Returns the number written
 * (0 when unwinding failed), and their hp_hash_stack in *hash (the
 * frame-pointer walk folds each frame in as it reads it). Call with
 * t->busy set: libunwind may allocate on its first use in a thread.
 * Allocation-free afterwards, lock-free, not async-signal-safe in DWARF
 * mode (libunwind's caches). */
uint32_t hp_unwind(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash);

/* Whether addr is inside the recorder's own code. Pure after init:
 * async-signal-safe, no allocation, no lock. */
int hp_unwind_is_own(uintptr_t addr);

#endif
