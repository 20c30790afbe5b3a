/*
 * core.h - post-mortem heap analysis of an ELF core of an x86-64 Linux
 * process that ran without heapprof (issue 12, second kind; docs/core.md).
 *
 * Four stages, one file each, meeting through struct hp_core:
 *
 *   core_file.c   the core itself: its PT_LOAD segments (the memory), its
 *                 notes (NT_PRSTATUS: every thread's registers; NT_FILE:
 *                 the mapped files; NT_AUXV; NT_PRPSINFO)
 *   core_mods.c   the modules named by NT_FILE: load bias, build-id check
 *                 against the file on disk, writable ranges, symbols (the
 *                 _ZTV vtables, globals, glibc's main_arena and mp_ from
 *                 libc6-dbg's debug file found by build-id)
 *   core_heap.c   glibc malloc's heap: arenas, their heaps, mmapped chunks,
 *                 tcache and fastbins; every chunk allocated or free
 *   core_scan.c   the dynamic C++ type of each block (its vtable pointer)
 *                 and reachability from the roots (a conservative scan)
 *   core_report.c the text and JSON reports and --whatis
 *   core_rec.c    a process that ran under heapprof: the recorder's
 *                 tables found through heapprof_root (src/format/root.h);
 *                 core_rec_report.c lists them
 *
 * Memory: the core is mapped read-only, never copied; the tables are one
 * entry per chunk of the heap (at least 32 bytes of the core each) and one
 * per thread, mapping and symbol, so what is allocated is bounded by a
 * small multiple of the core's size plus the modules' symbol tables.
 * Not thread-safe: one struct hp_core is used by one thread.
 */
#ifndef HP_ANALYZER_CORE_H
#define HP_ANALYZER_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* --- the core file (core_file.c) -------------------------------------- */

struct hp_core_seg {
	uint64_t vaddr, memsz;  /* the mapping in the process */
	uint64_t offset, filesz; /* its bytes in the core */
	uint64_t present;        /* bytes of filesz really in the file (truncation) */
	uint32_t flags;          /* PF_R | PF_W | PF_X */
};

/* x86-64 user_regs_struct order (sys/user.h), as NT_PRSTATUS holds them. */
#define HP_CORE_NREGS 27
#define HP_CORE_REG_RSP 19
#define HP_CORE_REG_FS_BASE 21 /* the thread pointer */

struct hp_core_thread {
	int tid;
	uint64_t regs[HP_CORE_NREGS];
};

/* One NT_FILE entry: [start, end) maps path from file offset offset. */
struct hp_core_map {
	uint64_t start, end, offset;
	const char *path; /* into the core's mapping, NUL-terminated */
};

enum hp_core_mod_status {
	HP_CORE_MOD_OK,
	HP_CORE_MOD_MISSING,  /* the file is gone */
	HP_CORE_MOD_CHANGED,  /* its build-id differs from the one in the core */
	HP_CORE_MOD_NOT_ELF,  /* not an ELF file we can read */
};

struct hp_core_sym {
	uint64_t addr, size; /* in the process (bias applied) */
	const char *name;    /* into the module's string pool */
};

#define HP_CORE_MOD_MAX_SEGMENTS 16

/* One PT_LOAD of a module, as its program header says (bias not applied). */
struct hp_core_mod_seg {
	uint64_t vaddr, memsz, offset;
	uint32_t flags;
};

struct hp_core_module {
	char *path;        /* as NT_FILE names it */
	const char *file;  /* the file read for it: path, or --exe (borrowed) */
	uint64_t lo, hi;   /* lowest and highest address of its mappings */
	uint64_t bias;     /* load bias */
	int is_exe;
	enum hp_core_mod_status status;
	/* [rw_lo[i], rw_hi[i]): its writable PT_LOADs (data and bss) */
	uint64_t rw_lo[4], rw_hi[4];
	int nrw;
	/* its PT_LOADs and build-id, from its headers in the core, else from
	 * the file (for a capture of the dump: core_cap.c) */
	struct hp_core_mod_seg seg[HP_CORE_MOD_MAX_SEGMENTS];
	int nseg;
	unsigned char build_id[64];
	size_t build_id_len;
	struct hp_core_sym *syms; /* sorted by addr; function and object symbols */
	size_t nsyms;
	char *strings;
};

/* What the recorder held at the dump (core_rec.c), for a process that
 * ran under heapprof. */
struct hp_core_rec_stack {
	/* into the core (a version 6 root or older) or rec.frames; NULL when
	 * not in the core */
	const uint64_t *frames;
	uint32_t depth;
};

struct hp_core_rec_bucket {
	uint32_t id, stack;
	uint32_t type_tag, origin_tag; /* the bucket key's tags (0: none) */
	uint64_t size; /* the bucket key's size (sampled mode), else 0 */
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes, temp_count, temp_bytes;
	uint64_t peak_count, peak_bytes; /* at the global peak */
	int torn; /* its lock was held at the dump */
};

/* A tag of the recorder's tables (TAGS record entries, format.h): kind
 * HP_TAG_*, its id, a, b, c as in the record; name points into the core
 * (len bytes, not NUL-terminated) or is "". */
struct hp_core_rec_tag {
	uint32_t kind, id;
	uint64_t a, b, c;
	const char *name;
	size_t len;
};

struct hp_core_rec_block {
	uint64_t addr, size; /* size: as requested (the recorder's) */
	uint32_t bucket, stack;
	/* enum hp_core_reach of the heap's block at addr (hp_core_scan joins
	 * them), HP_CORE_UNKNOWN when the heap was not walked or has no
	 * allocated block starting there */
	uint8_t reach;
};

/* A range of memory. */
struct hp_core_range {
	uint64_t lo, hi;
};

struct hp_core_rec {
	int found;           /* the root was found and read */
	const char *lib;     /* libheapprof's path, when in the core */
	uint64_t root;       /* heapprof_root's address */
	uint64_t in_use_bytes, peak_bytes, sample_rate;
	struct hp_core_rec_stack *stacks; /* ids 0..nstacks-1; 0 = no stack */
	uint32_t nstacks;
	uint64_t *frames; /* the stacks' frames, gathered (a version 7 root) */
	struct hp_core_rec_bucket *buckets; /* with counts, sorted by id */
	size_t nbuckets;
	struct hp_core_rec_block *blocks; /* live, sorted by addr */
	size_t nblocks;
	/* The tags (types, contexts, threads, heaps, origins) of a recorder
	 * whose root has them (version 2), each kind in id order; types
	 * holds the count of type ids (1..types-1) among them. */
	struct hp_core_rec_tag *tags;
	size_t ntags;
	uint32_t types;
	/* The custom heaps' own peaks (bytes, blocks, resets; no time), ids
	 * 1..nheaps, at heap_peaks[id - 1]. */
	struct hp_core_rec_heap {
		uint64_t peak_bytes, peak_count, resets;
	} *heap_peaks;
	uint32_t nheaps;
	/* The live register's own memory (its shards and their tables),
	 * sorted: it holds every live block's address, so the reachability
	 * scan must not take it for a root. */
	struct hp_core_range *tables;
	size_t ntables;
	int joined; /* blocks[].reach was set from a heap walk (hp_core_scan) */
	/* what a torn update or a short core left (see core_rec.c) */
	size_t torn_buckets, locked_shards, bad_entries, duplicates, miscounted_shards,
		missing_shards;
	/* Blocks whose free a thread was inside at the dump (root version 5):
	 * counted freed by the recorder, but the real free had not returned
	 * (glibc aborted in it): put back in blocks[] and in their bucket's
	 * in-use figures. */
	size_t unfreed;
};

/* Kinds of chunk. */
enum hp_core_state {
	HP_CORE_ALLOCATED,
	HP_CORE_FREE_TCACHE,
	HP_CORE_FREE_FASTBIN,
	HP_CORE_FREE_BIN, /* unsorted, small or large bin (next chunk's PREV_INUSE clear) */
	HP_CORE_TOP,
	HP_CORE_INTERNAL, /* a tcache_perthread_struct: malloc's own */
};

/* Reachability of an allocated block, as memcheck and LeakSanitizer say it. */
enum hp_core_reach {
	HP_CORE_REACHABLE,      /* "still reachable": from a root, transitively */
	HP_CORE_LOST,           /* "definitely lost": nothing points to it */
	HP_CORE_INDIRECT,       /* "indirectly lost": only from lost blocks */
	HP_CORE_UNKNOWN,        /* a recorded block the heap walk did not find */
};

struct hp_core_block {
	uint64_t addr;  /* the user address (chunk + 16) */
	uint64_t size;  /* usable bytes (malloc_usable_size) */
	uint32_t type;  /* index into hp_core.types, or UINT32_MAX */
	uint8_t state;  /* enum hp_core_state */
	uint8_t reach;  /* enum hp_core_reach, for HP_CORE_ALLOCATED */
	uint8_t mmapped;
	uint8_t arena;  /* 0 = main arena, then in main_arena.next order (capped at 255) */
	uint8_t damaged; /* its header is damaged: its size is inferred (core_heap.c) */
};

/* An inconsistency of the heap's headers or lists (core_heap.c): where,
 * what the word holds, the chunk whose header (or link) it is, the chunk
 * before it (the likely overrunner) and the bytes the walk could not
 * read as chunks. Addresses are user addresses for blocks (0: none). */
struct hp_core_damage {
	uint64_t addr;      /* the damaged word */
	uint64_t value;     /* what it holds */
	uint64_t chunk;     /* the chunk whose header or link it is */
	uint64_t block;     /* that chunk's block (chunk + 16), 0 when none was made */
	uint64_t before;    /* the block before the chunk, 0 when none */
	uint64_t target;    /* a free list's link: the block it leads to, 0 when none */
	uint64_t skip_lo, skip_hi; /* [lo, hi): not walked (lo == hi: none) */
	const char *what;   /* static text: what is inconsistent */
	int arena;
};

struct hp_core {
	const char *path;
	const unsigned char *map; /* the core file, mapped read-only */
	size_t map_bytes;
	int map_borrowed; /* hp_core_open_mem's: the caller's, not unmapped */
	uint64_t need_bytes; /* what the segments need: > map_bytes when truncated */

	struct hp_core_seg *segs; /* sorted by vaddr */
	size_t nsegs;
	struct hp_core_thread *threads; /* NT_PRSTATUS order: the faulting thread first */
	size_t nthreads;
	struct hp_core_map *maps;
	size_t nmaps;
	uint64_t map_page_bytes;
	uint64_t auxv_phdr, auxv_entry;
	int signal; /* the signal that dumped it (NT_PRSTATUS pr_cursig) */
	int pid;
	char program[17]; /* NT_PRPSINFO pr_fname */

	struct hp_core_module *mods;
	size_t nmods;

	/* the heap (core_heap.c) */
	int heap_ok;            /* main_arena was found and walked */
	int arena_by_heuristic; /* found by the signature scan, not by a symbol */
	uint64_t main_arena, mp;
	size_t narenas, nheaps, nmmapped;
	struct hp_core_block *blocks; /* every chunk, sorted by addr */
	size_t nblocks;
	struct hp_core_range *internal; /* arenas, heap_info, mp_: not roots */
	size_t ninternal;
	struct hp_core_damage *damage; /* in the order met */
	size_t ndamage;
	uint64_t unwalked_bytes; /* the sum of the damage's skipped ranges */

	char **types; /* demangled class names */
	size_t ntypes;

	struct hp_core_rec rec; /* the recorder's state (core_rec.c) */

	/* problems met, each one line, shown on stderr by the command */
	char **notes;
	size_t nnotes;
};

/* Maps the core at path and reads its segments and notes. Returns 0, or
 * -errno after writing one line into err (not a core, another
 * architecture, unreadable). A truncated core is opened and says so in
 * c->notes. On 0, free with hp_core_close. */
int hp_core_open(struct hp_core *c, const char *path, char *err, size_t errcap);

/* The same for a core already in memory, data[0..size), borrowed until
 * hp_core_close (the fuzz targets' and tests' way in); name stands for
 * its path in messages. */
int hp_core_open_mem(struct hp_core *c, const void *data, size_t size, const char *name,
		     char *err, size_t errcap);

void hp_core_close(struct hp_core *c);

/* A pointer to len bytes of the process's memory at addr, inside the
 * mapped core, or NULL when any of them is not in the core. */
const void *hp_core_mem(const struct hp_core *c, uint64_t addr, uint64_t len);

/* The 8-byte word at addr; 0 when it is not in the core (and *ok = 0). */
uint64_t hp_core_word(const struct hp_core *c, uint64_t addr, int *ok);

/* The segment holding addr, or NULL. */
const struct hp_core_seg *hp_core_seg_at(const struct hp_core *c, uint64_t addr);

/* Adds a printf-formatted note (a problem met, shown once). */
void hp_core_note(struct hp_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- modules (core_mods.c) -------------------------------------------- */

/* Builds c->mods from NT_FILE; exe, when not NULL, replaces the program's
 * file (--exe). Missing or changed files are noted. Returns 0 or -ENOMEM. */
int hp_core_modules(struct hp_core *c, const char *exe);

/* The module whose mappings hold addr, or NULL. */
const struct hp_core_module *hp_core_module_at(const struct hp_core *c, uint64_t addr);

/* The symbol of m covering addr, or NULL. */
const struct hp_core_sym *hp_core_symbol_at(const struct hp_core_module *m, uint64_t addr);

/* The address of the symbol called name in m (its own tables, else its
 * debug file by build-id under /usr/lib/debug/.build-id and debug_dir),
 * or 0. */
uint64_t hp_core_symbol_addr(const struct hp_core *c, const struct hp_core_module *m,
			     const char *name, const char *debug_dir);

/* --- the glibc heap (core_heap.c) ------------------------------------- */

/* Finds main_arena and walks every arena's heaps, the mmapped chunks,
 * tcache and fastbins into c->blocks. Sets c->heap_ok; what it could not
 * do is noted. Damage met is put in c->damage (and noted) and walked
 * past; with the recorder's tables read first (hp_core_recorder), each
 * recorded block is checked against its chunk. Returns 0, or -ENOMEM. */
int hp_core_heap(struct hp_core *c, const char *debug_dir);

/* The damage entry whose damaged word, or whose damaged chunk's header
 * ([chunk, chunk + 16)), holds addr, or -1. */
long hp_core_damage_at(const struct hp_core *c, uint64_t addr);

/* The index of the block (any chunk, free ones included) whose user
 * range [addr, addr + size) holds addr, or -1. c->blocks must be sorted. */
long hp_core_block_at(const struct hp_core *c, uint64_t addr);

/* --- types and reachability (core_scan.c) ----------------------------- */

/* Names the dynamic type of every allocated block with a vtable pointer
 * and classifies every allocated block's reachability; when the recorder's
 * tables were read (c->rec.found), gives each recorded live block the
 * reachability of the heap's block at its address (c->rec.joined).
 * The roots leave out malloc's memory and the live register's tables.
 * Returns 0 or -ENOMEM. */
int hp_core_scan(struct hp_core *c);

/* The _ZTV symbol (a vtable) of a module of the core that vptr, an
 * object's first word, points 16 bytes or more into (past the
 * offset-to-top and the typeinfo pointer, Itanium C++ ABI), or NULL.
 * The test hp_core_scan names a block's type with. */
const struct hp_core_sym *hp_core_vtable_at(const struct hp_core *c, uint64_t vptr);

/* Calls fn for each aligned word of the roots and the allocated blocks
 * that points into block b's user range: where the word is (a block
 * index, or -1 with a root's description in what). */
typedef void (*hp_core_ref_fn)(void *arg, uint64_t at, long from_block, const char *what);
void hp_core_refs(const struct hp_core *c, size_t b, hp_core_ref_fn fn, void *arg);

/* --- the recorder's tables (core_rec.c) ------------------------------ */

/* When the core holds libheapprof.so with a usable heapprof_root, reads
 * its stacks, buckets and live blocks into c->rec (found = 1). A core
 * without it leaves found 0; one whose root cannot be used is noted.
 * Needs hp_core_modules first. Returns 0 or -ENOMEM. */
int hp_core_recorder(struct hp_core *c);

void hp_core_rec_free(struct hp_core_rec *r);

struct hp_core_report_options;
struct hp_buf;

/* Appends to out (its grow function set by the caller) a capture file of
 * what the recorder held at the dump (core_cap.c): the file header, META,
 * MODULES, STACKS and one SNAPSHOT whose per-site figures are those of a
 * fatal-signal snapshot taken at the dump. Needs c->rec.found (-ENOENT
 * otherwise). Returns 0 or -errno (-ENOMEM). */
int hp_core_capture(const struct hp_core *c, struct hp_buf *out);

/* The recorder's listing: totals, sites (stacks) by bytes in use with
 * their frames, live blocks. Returns 0, or -errno when writing failed. */
int hp_core_rec_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o);

/* The recorded live block (c->rec.blocks) whose bytes hold addr, or -1. */
long hp_core_rec_block_at(const struct hp_core *c, uint64_t addr);

struct hp_core_report_options;
/* For --whatis: recorded block i's address, requested size, stack and
 * frames (file:line with o->sym), as text lines or one JSON object. */
void hp_core_rec_whatis(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			size_t i);

/* --- reports (core_report.c) ------------------------------------------ */

struct hp_capture;
struct hp_symbolizer;

struct hp_core_report_options {
	unsigned top; /* rows per table */
	int json;
	/* Optional, for the recorder's listing: the capture of the dump
	 * (hp_core_capture, loaded) and a symbolizer of it, which give each
	 * frame its functions, files and lines, inlined frames included, as
	 * the capture's reports have them. NULL: symbols only. */
	const struct hp_capture *cap;
	struct hp_symbolizer *sym;
	/* the text's frames: all of them, the runtime's below main and a
	 * thread's start too (--all-frames), not only the report's */
	int all_frames;
};

/* The report. Returns 0, or -errno when writing failed. */
int hp_core_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o);

/* For each of the n addresses, what holds it: the heap's block, and
 * under heapprof the recorder's block with its allocation stack (its
 * frames named with o->sym when set); text, or JSON with o->json.
 * Returns 0 or -errno. */
int hp_core_whatis(FILE *f, const struct hp_core *c, const uint64_t *addrs, size_t n,
		   const struct hp_core_report_options *o);

/* --damage: every inconsistency of the heap (c->damage) with the block
 * whose header it is and the block before it (the likely overrunner:
 * start, size, how far past its end; under heapprof its stack), text or
 * JSON. Returns 0 or -errno. */
int hp_core_damage_report(FILE *f, const struct hp_core *c,
			  const struct hp_core_report_options *o);

/* c->damage as a JSON array, each entry as --damage --json has it. */
void hp_core_damage_json(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o);

#endif
