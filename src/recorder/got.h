/*
 * got.h - redirecting one loaded object's calls to a few functions, by
 * rewriting its global offset table (GOT) entries.
 *
 * Used to keep libunwind off the program's file descriptors (unwind.c):
 * libunwind validates memory by writing to a pipe it keeps on two
 * descriptor numbers, which a program that closes its descriptors and
 * opens files reuses. Only that object's imports change; every other
 * caller of those functions reaches libc as before.
 */
#ifndef HP_RECORDER_GOT_H
#define HP_RECORDER_GOT_H

#include <stddef.h>
#include <stdint.h>

struct hp_got_patch {
	const char *name; /* the imported symbol */
	void *fn;         /* what its GOT entries will hold */
};

/* In the loaded object that contains address `in`, points every GOT entry
 * (PLT slots and data references) of each named import at its fn. Entries
 * under RELRO are made writable for the write and read-only again.
 * Returns the number of entries rewritten, or -errno (-ENOENT: no such
 * object). Calls dl_iterate_phdr (the loader's lock) and mprotect: at
 * start, with the reentrancy flag set; not async-signal-safe. */
int hp_got_patch(uintptr_t in, const struct hp_got_patch *patches, size_t n);

/* The entries hp_got_patch_all rewrote, to put back: in memory of the
 * recorder's own (mmap), entries[0 .. count). */
struct hp_got_entry {
	void **slot;
	void *old, *now;
};

struct hp_got_log {
	struct hp_got_entry *entries;
	size_t count, cap;
};

/* In every loaded object but the one that contains address skip (the
 * recorder itself), points each named import's GOT entries at its fn,
 * and logs each entry it changes (one already pointing at fn is left
 * alone: calling it again after a dlopen patches only the new objects).
 * Returns the number of entries rewritten, or -ENOMEM when the log is
 * full (the entries logged so far stay patched). Same properties as
 * hp_got_patch. */
int hp_got_patch_all(uintptr_t skip, const struct hp_got_patch *patches, size_t n,
		     struct hp_got_log *log);

/* Puts back every logged entry that still holds what was written there,
 * in objects still loaded (an object unloaded meanwhile is skipped), and
 * empties the log. Returns the number put back. Same properties as
 * hp_got_patch. */
int hp_got_restore(struct hp_got_log *log);

#endif
