/*
 * symcache.h - a persistent cache of symbolized addresses, keyed by
 * build-id, so that the symbols of a binary are read from its debug info
 * once per machine rather than once per run.
 *
 * Reading libc's compressed DWARF to name two frames costs a short run
 * more than the run itself (zlib inflating libc6-dbg's .debug_info); a
 * large program's (clang) costs seconds. The cache keeps, per module,
 * what the symbolizer answered for each module-relative address: the
 * frames (function, file, line, inlined, innermost first), the same
 * strings, so that a hit gives byte-identical SYMBOLS records; and the
 * data symbols it named (vtables). A module whose addresses all hit is
 * never opened by libdw.
 *
 * Where: $HEAPPROF_CACHE_DIR (empty or "off": no cache), else
 * $XDG_CACHE_HOME/heapprof, else $HOME/.cache/heapprof; the files are
 * under symbols/ there, one per build-id (BUILDID.hpsym), 0600, the
 * directories 0700, owned by the user (a directory that is not, or that
 * others may write, is not used). A directory that cannot be made or used
 * means no cache, silently: the symbols are read as without one.
 *
 * Validity: an entry stands for (build-id, the module's path, the debug
 * search path, the stamp). The stamp is the size, mtime, device and inode
 * of each file libdwfl read the module's symbols from (the binary, its
 * separate debug file, a dwz file), and whether each place libdwfl would
 * look for a debug file holds one: installing a -dbg package, rebuilding
 * without a new build-id, or another copy of the binary at another path
 * makes the entries stale, and they are read again from the binaries. A
 * file made by another heapprof build or another libdw is stale too
 * (its producer string differs).
 *
 * Robustness: a file that is truncated, corrupt (CRC-32), foreign (magic,
 * version, producer) or names another build-id is a miss; every read is
 * bounds-checked and a file over 64 MiB is not read. Writers write a
 * temporary file and rename it, merging the entries of the file as it is
 * then (several `heapprof run --follow-fork` processes may write at
 * once: the last rename wins, both sets of entries when they overlap in
 * time only partly). The directory is kept under 256 MiB
 * ($HEAPPROF_CACHE_MAX, in bytes with K/M/G), the files used the longest
 * ago removed first (a hit renews a file's mtime).
 *
 * Allocates; not thread-safe. Short of memory, the cache answers "not
 * cached" and stores nothing: symbols are never wrong for it.
 */
#ifndef HP_ANALYZER_SYMCACHE_H
#define HP_ANALYZER_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "sym.h"

struct hp_symcache;
struct hp_symcache_mod;
struct Dwfl_Module;

/* What a cache saw, for `heapprof run --verbose` and the tests. */
struct hp_symcache_stats {
	size_t cached;         /* frame addresses answered from the cache */
	size_t debuginfo;      /* frame addresses read from the binaries (libdw) */
	size_t modules_opened; /* modules opened with libdw */
	size_t files_written;  /* cache files written */
};

/* The most bytes the cache directory holds, by default. */
#define HP_SYMCACHE_MAX_BYTES (256ull << 20)
/* A cache file larger than this is not read (a miss). */
#define HP_SYMCACHE_MAX_FILE_BYTES (64u << 20)

/* Opens the user's symbol cache (the place above), or with off a cache
 * that holds nothing and only counts (--no-symbol-cache). A directory
 * that cannot be used gives such a cache too; hp_symcache_why says why.
 * Returns 0 with *out set, or -ENOMEM. */
int hp_symcache_open(struct hp_symcache **out, int off);

/* Why the cache is off (one phrase), or NULL when it is on. */
const char *hp_symcache_why(const struct hp_symcache *c);

/* Writes the modules' new entries (hp_symcache_put_*) to their files and
 * keeps the directory under its bound. Failures are silent: the cache is
 * a help, never a reason to fail. */
void hp_symcache_flush(struct hp_symcache *c);

/* Flushes and frees; c may be NULL. */
void hp_symcache_close(struct hp_symcache *c);

/* A copy of the counts. */
void hp_symcache_stats(const struct hp_symcache *c, struct hp_symcache_stats *out);

/* Counts one module opened with libdw, and n frame addresses read from
 * debug info (the symbolizer says so, cached module or not). */
void hp_symcache_count_open(struct hp_symcache *c);
void hp_symcache_count_debuginfo(struct hp_symcache *c, size_t n);

/* The cache of the module at path (absolute) with this build-id, read
 * from its file on first use and checked against the files on disk (stat
 * only, libdw is not called), for the debug search path search
 * (libdwfl's debuginfo_path). NULL when it cannot be cached: the cache is
 * off, no build-id, or short of memory. Lives as long as c. */
struct hp_symcache_mod *hp_symcache_module(struct hp_symcache *c, const char *path,
					   const uint8_t *build_id, size_t build_id_len,
					   const char *search);

/* Whether the module's file held entries that are valid now: the module
 * is then known to be readable and to match its build-id (its status is
 * HP_MODSYM_OK) without opening it. */
int hp_symcache_valid(const struct hp_symcache_mod *m);

/* The frames cached at a module-relative address, into out[0..max) (the
 * strings are the cache's: copy them), counted as a hit. Returns how
 * many (>= 1), or 0 when the address is not cached (or has more frames
 * than max). */
int hp_symcache_frames(struct hp_symcache_mod *m, uint64_t offset, struct hp_sym *out, int max);

/* The data symbol cached at a module-relative address: 1 with *name (NULL
 * when the binary has none there; the string is the cache's), or 0 when
 * not cached. */
int hp_symcache_data(struct hp_symcache_mod *m, uint64_t offset, const char **name);

/* Once the module is open in libdwfl and its build-id checked (status
 * HP_MODSYM_OK): stamps the entries with the files libdwfl uses for it
 * (it loads the module's DWARF to know them). Entries read from a file
 * under another stamp are dropped. Until this is called, puts are
 * ignored. */
void hp_symcache_stamp(struct hp_symcache_mod *m, struct Dwfl_Module *mod);

/* Stores what the symbolizer answered at a module-relative address:
 * frames syms[0..n), or a data symbol (NULL: none). Ignored when already
 * cached, before hp_symcache_stamp, or short of memory. */
void hp_symcache_put_frames(struct hp_symcache_mod *m, uint64_t offset, const struct hp_sym *syms,
			    int n);
void hp_symcache_put_data(struct hp_symcache_mod *m, uint64_t offset, const char *name);

#endif
