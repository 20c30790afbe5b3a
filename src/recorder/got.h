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

#endif
