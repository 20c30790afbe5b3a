/*
 * got.h - redirecting loaded objects' calls to a few functions, by
 * rewriting their global offset table (GOT) entries.
 *
 * Used to keep libunwind off the program's file descriptors (unwind.c):
 * libunwind validates memory by writing to a pipe it keeps on two
 * descriptor numbers, which a program that closes its descriptors and
 * opens files reuses. Only that object's imports change; every other
 * caller of those functions reaches libc as before.
 *
 * Used by heapprof attach (attach.c) to route every object's allocation
 * calls to the recorder, which forwards them to the function the entry
 * was bound to: an entry is rewritten only when it is bound to exactly
 * that function (expect), so that no object's calls reach an allocator
 * other than the one it was calling.
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

/* A patch that applies only to the entries bound to one function. An
 * entry holding an address outside its object, or the object's own
 * definition of name, is bound to that address; one not bound yet (lazy
 * binding: it holds its object's PLT stub) is taken to be bound to
 * unbound, what the loader will bind it to. */
struct hp_got_route {
	const char *name;
	void *fn;     /* what its GOT entries will hold */
	void *expect; /* only the entries bound to this are rewritten */
	void *unbound;
	int not_home; /* 1: nor those in the object that defines expect */
};

/* In every loaded object but the one that contains address skip (the
 * recorder itself), points the GOT entries of each route's import that are
 * bound to its expect at its fn, and logs each entry it changes
 * (one already pointing at fn is left alone: calling it again after a
 * dlopen patches only the new objects); *skipped (when not NULL) gets the
 * number of entries left alone because they were bound elsewhere.
 * Returns the number of entries rewritten, or -ENOMEM when the log is
 * full (the entries logged so far stay patched). Same properties as
 * hp_got_patch. */
int hp_got_patch_all(uintptr_t skip, const struct hp_got_route *routes, size_t n,
		     struct hp_got_log *log, size_t *skipped);

/* Puts back every logged entry that still holds what was written there,
 * in objects still loaded (an object unloaded meanwhile is skipped), and
 * empties the log: each entry gets back exactly the value it held before
 * the patch (its first one, when it was logged twice). Returns the number put back. Same properties as
 * hp_got_patch. */
int hp_got_restore(struct hp_got_log *log);

#endif
