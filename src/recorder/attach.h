/*
 * attach.h - recording a program that is already running: `heapprof
 * attach` loads libheapprof.so into it with dlopen and calls
 * heapprof_attach; `heapprof detach` calls heapprof_detach (src/cli/
 * attach.c, inject.c).
 *
 * Loaded that way the library is not ahead of libc in the lookup order,
 * so nothing reaches it until heapprof_attach rewrites the GOT entries of
 * every loaded object (got.h) for the allocation family, the C++
 * operators, dlopen and dlclose (and, after each dlopen, the new
 * objects'), and heapprof_detach puts them back. Blocks allocated before
 * the attach are not in the register: their frees are counted as unknown
 * (HP_LOST_UNKNOWN_FREE) and change no figure. The library stays loaded
 * after the detach, its tables unused; the next attach starts afresh.
 */
#ifndef HP_RECORDER_ATTACH_H
#define HP_RECORDER_ATTACH_H

/* Whether the library was preloaded (LD_PRELOAD, or /etc/ld.so.preload):
 * then it starts at load, as always, and cannot be attached. Takes the
 * loader's lock (dl_iterate_phdr); no allocation; not async-signal-safe. */
int hp_attach_preloaded(void);

/* The definition of name that the recorder's interposed function of that
 * name forwards to. Loaded by heapprof attach: the one the program's own
 * lookup finds, which its GOT entries are bound to (the program's
 * allocator, be it glibc's, or jemalloc, tcmalloc or mimalloc preloaded
 * or linked in); NULL when only the recorder defines it. Preloaded: the
 * next definition after the recorder (dlsym(RTLD_NEXT)). Calls dlsym and
 * dladdr (the loader's lock; dlsym may allocate); not async-signal-safe. */
void *hp_attach_next(const char *name);

/* Whether the recorder being started is started by heapprof_attach (read
 * by hp_recorder_start). No lock, async-signal-safe. */
int hp_attach_starting(void);

#endif
