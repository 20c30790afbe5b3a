/*
 * model.h - one profile, ready to render: the snapshot of a capture with
 * every stack symbolized and every figure unbiased.
 *
 * Every output (report, pprof, gperftools, folded, flame graph, diff) reads
 * this model and nothing else. Building it:
 *
 *   1. picks a snapshot of the capture (the last one by default);
 *   2. symbolizes each distinct frame address once (symbolize.h): function,
 *      file, line and the inlined frames at that address, from the SYMBOLS
 *      record when the capture carries one, otherwise from the binaries;
 *   3. turns each capture stack into a list of locations, innermost first,
 *      without the allocator's own frames;
 *   4. unbiases sampled buckets per allocation size (docs/internals/sampling.md);
 *   5. sums each stack's buckets (hp_mstack.v), which most outputs rank.
 *
 * Ownership: the model owns everything it points to except the capture,
 * which must outlive it. Not thread-safe.
 */
#ifndef HP_ANALYZER_MODEL_H
#define HP_ANALYZER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../../format/capture.h"
#include "../symbols/sym.h"

/* One frame address of the capture. A location with inlined calls has
 * several symbolic frames: syms[0] is the innermost (the inlined callee),
 * syms[nsyms - 1] the function that contains the address. */
struct hp_location {
	uint64_t address;       /* as recorded: a return address */
	int module;             /* index into hp_model.modules, -1 if none */
	uint64_t module_offset; /* address - load bias, an ELF virtual address */
	uint32_t nsyms;         /* >= 1 */
	struct hp_sym *syms;
	/* classes[k]: hp_model_frame_class of syms[k] (HP_SYM_CLASS bits)
	 * and its marks (hp_location_marks), found once when the model makes
	 * the location (in the block of syms); NULL in a location made
	 * elsewhere, whose classes and marks are found on each call. */
	uint8_t *classes;
};

/* The figures of a bucket or a sum of buckets, unbiased (exact in a full
 * recording, estimates in a sampled one). In use = at the snapshot. */
/* Every figure is finite (hp_model_build guarantees it, whatever the
 * capture says): outputs such as JSON have no NaN or infinity. */
struct hp_values {
	double alloc_objects, alloc_bytes;
	double free_objects, free_bytes;
	double inuse_objects, inuse_bytes;
	double peak_objects, peak_bytes;
	double temp_objects, temp_bytes;
};

/* A call stack as locations, innermost first, with the figures of its
 * buckets summed (in bucket order), so that no output sums them again. */
/* (Members ordered so that no padding is left: a million stacks.) */
struct hp_mstack {
	uint32_t depth;
	uint32_t nbuckets;   /* the buckets of the snapshot on this stack */
	/* Its locations' indexes into hp_model.locations, read with
	 * hp_mstack_location: 16 bits each when every one of them is below
	 * 2^16 (a million stacks of ~26 frames share far fewer locations:
	 * 52 bytes a stack, not 104), else (wide_locations) 24 bits, three
	 * bytes least significant first, when every one is below 2^24
	 * (packed_locations: a program of more than 65,536 locations), else
	 * 32. */
	union {
		uint16_t *narrow;
		uint8_t *packed;
		uint32_t *wide;
	} locations;
	struct hp_values v;  /* their figures, summed */
	/* The type its frames name (attr.h: an allocator template, a string
	 * class, a new-expression's DWARF), read with hp_mstack_inferred: the
	 * location that names it + 1 (0: none), whose type the model keeps
	 * once per location. */
	uint32_t inferred;
	uint8_t suppressed;      /* matches a suppression (hp_model_suppress): its blocks
				  * in use are runtime allocations, not leaks */
	uint8_t inferred_source; /* then: HP_TYPESRC_TEMPLATE, _STRING or _NEW */
	/* Its blocks are glibc's exit-function list at an exit snapshot:
	 * freed, as they are by the end of the process (model.c); its
	 * buckets' figures read so (hp_mbucket_values). */
	uint8_t freed_at_exit;
	uint8_t wide_locations : 1;   /* locations.packed or .wide, else .narrow */
	uint8_t packed_locations : 1; /* (wide) locations.packed, else .wide */
};

/* Location i of st (i < st->depth): an index into hp_model.locations. */
static inline uint32_t hp_mstack_location(const struct hp_mstack *st, uint32_t i)
{
	if (!st->wide_locations)
		return st->locations.narrow[i];
	if (st->packed_locations) {
		const uint8_t *b = st->locations.packed + 3 * (size_t)i;
		return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
	}
	return st->locations.wide[i];
}

/* Where a bucket's type comes from (explicit and vtable beat template). */
enum hp_type_origin {
	HP_TYPESRC_UNKNOWN = 0,  /* none: named "unknown (N B)" by object size */
	HP_TYPESRC_EXPLICIT = 1, /* heapprof_set_type (a TYPE tag) */
	HP_TYPESRC_VTABLE = 2,   /* the objects' vtable (a TYPE tag) */
	HP_TYPESRC_TEMPLATE = 3, /* an allocator template frame of the stack */
	HP_TYPESRC_STRING = 4,   /* a string class's frame: its characters (issue 26) */
	HP_TYPESRC_NEW = 5,      /* the DWARF of the new-expression (or malloc) that
				  * allocates: the pointer declared on its line */
	HP_TYPESRC_COUNT = 6
};

/* "unknown", "explicit", "vtable", "template", "string", "new". */
const char *hp_type_origin_name(enum hp_type_origin o);

/* A distinct type of the model: name and source. */
struct hp_mtype {
	const char *name;
	enum hp_type_origin source;
};

struct hp_model;

/* The type stack st's frames name (hp_mstack.inferred), or NULL; its
 * element and array cookie bytes (0: not known: string buffers'
 * characters, a new-expression's T) into *elem and *cookie. The name is
 * the model's. */
const char *hp_mstack_inferred(const struct hp_model *m, const struct hp_mstack *st,
			       uint64_t *elem, uint64_t *cookie);

/* A bucket of the snapshot. Its figures are its record's (raw), read
 * through hp_mbucket_values: the model holds no copy of them (a million
 * buckets: 80 bytes each). (Members ordered so that no padding is left.) */
struct hp_mbucket {
	uint32_t stack;  /* index into hp_model.stacks (the capture's stack id) */
	/* Attribution (issue 9): an index into hp_model.types, and the
	 * bucket's origin: its context, thread and heap tag ids (0: none; heap
	 * 0 is malloc's). */
	uint32_t type;
	/* The snapshot's record: its figures, and its allocation size
	 * (raw->size: sampled captures', else 0). */
	const struct hp_rec_bucket *raw;
	uint64_t context, thread, heap;
	/* Its blocks are arrays (issue 26): of elements of elem_bytes, after
	 * cookie_bytes each (0: one element a block, not known). */
	uint64_t elem_bytes, cookie_bytes;
};

/* Bucket b's figures, unbiased (exact in a full recording, estimates of
 * doubles in a sampled one: docs/internals/sampling.md), into *out;
 * finite whatever the capture says. Made from b->raw on each call, the
 * same every time. */
void hp_mbucket_values(const struct hp_model *m, const struct hp_mbucket *b,
		       struct hp_values *out);

/* A bucket's figures in elements: each *_objects field of out holds the
 * elements of those blocks ((bytes - objects x cookie) / element bytes;
 * the objects themselves when b's elements are not known), each *_bytes
 * field the bytes. */
void hp_mbucket_elements(const struct hp_model *m, const struct hp_mbucket *b,
			 struct hp_values *out);

struct hp_mmodule {
	const struct hp_cap_module *cap;
	const char *name;        /* the file name, for display */
	enum hp_module_status status;
};

struct hp_model {
	const struct hp_capture *cap;
	const struct hp_cap_snapshot *snap;
	int sampled;                 /* the figures are estimates */
	uint64_t sample_rate_bytes;

	size_t nmodules;
	struct hp_mmodule *modules;  /* parallel to cap->modules */
	size_t nlocations;
	struct hp_location *locations;
	size_t nstacks;
	struct hp_mstack *stacks;    /* indexed by the capture's stack id; 0 is empty */
	size_t nbuckets;
	struct hp_mbucket *buckets;  /* one per bucket of the snapshot, custom heaps' too */
	/* malloc's figures (heap 0): the buckets of custom heaps are kept apart
	 * (an arena's blocks lie in a chunk malloc counts already), out of
	 * total and of every stack's v; the report skips them, the exports
	 * and the flame graph choose by heap (HP_HEAP_ALL, hp_heap_selected). */
	struct hp_values total;
	/* The heap the views by dimension show (report --by X --heap NAME):
	 * 0, malloc's, unless set after the build (hp_model_find_heap). */
	uint64_t view_heap;
	size_t ntypes;
	struct hp_mtype *types;      /* hp_mbucket.type indexes it */
	/* thread_shared[id]: another thread of the capture has the same name
	 * (an unnamed thread has its process's, inherited): such threads are
	 * told apart by their tid. nthread_shared entries. */
	size_t nthread_shared;
	uint8_t *thread_shared;

	/* Stacks deeper than the recorder's max-depth (format.h,
	 * HP_FRAME_GAP): their location for the frames not kept, + 1 (0:
	 * none), how many of the snapshot's stacks have it and their figures
	 * summed (malloc's, as total). */
	uint32_t gap_location;
	size_t cut_stacks;
	struct hp_values cut;

	/* After hp_model_filter: the stacks with allocations before it, and
	 * how many of those it kept (both 0 when no filter was applied). */
	size_t filter_stacks, filter_kept;
	/* After hp_model_suppress: the figures of the suppressed stacks,
	 * summed (they stay in total). */
	struct hp_values suppressed;

	void *priv;                  /* string pool and caches */
};

struct hp_model_filter;
struct hp_symcache;
struct hp_events_select;
struct hp_events_window;

struct hp_model_options {
	long snapshot;               /* index into cap->snapshots; -1 = the last */
	size_t image;                /* for loaders (hp_cli_load_model): the image to select
				      * first, 1 = the first; 0 = the capture's default */
	const char *debug_dir;       /* extra directory for separate debug info, or NULL */
	int no_embedded;             /* ignore a SYMBOLS record, read the binaries */
	int embedded_only;           /* symbols from the SYMBOLS record only: no binary,
				      * debug file or symbol cache is opened (what the
				      * record does not name is module+offset); for a
				      * capture read alone (the fuzz targets) */
	struct hp_symcache *symcache; /* the symbol cache for reading the binaries
				       * (symcache.h; the caller's, flushed by it),
				       * or NULL: the user's, opened and written by
				       * the model */
	int keep_allocator_frames;   /* do not hide the allocator's own frames */
	int no_dwarf_types;          /* read no new-expression's type from DWARF
				      * (attr.h): it opens the binary, which embedding
				      * symbols a cache answers must not */
	const struct hp_model_filter *filter; /* applied once built (hp_model_filter), or
					       * NULL */
	/* For loaders (hp_cli_load_model): a selection of the event log
	 * (analyzer/events.h, --lived-under, --between, --thread) whose
	 * snapshot is built and shown in place of the capture's, and the
	 * window's figures back; NULL: the capture's snapshots. */
	const struct hp_events_select *events;
	struct hp_events_window *events_window;
	/* The capture being built from, for a caller that builds one model of
	 * it and reads none of its stacks' frames after (report, export,
	 * diff): each stack's frames are freed as soon as they are made
	 * locations (the stack then reads depth 0), so the capture's frames
	 * and the model's locations are not held at once; a capture loaded
	 * with its frames interned (HP_CAP_LOAD_INTERN: hp_cli_load_capture
	 * loads it so) gives its stack table back too once the last stack is
	 * made (cap->stacks NULL, nstacks kept: hp_capture_release_stacks).
	 * NULL: the capture is left as it is. */
	struct hp_capture *release_frames;
	/* With release_frames: the parts of that capture (HP_CAP_PART_*,
	 * capture.h) the caller reads nowhere, freed before the build, so
	 * that the model is not built beside them (0: none). The buckets
	 * (HP_CAP_PART_BUCKETS) hold the model's figures (hp_mbucket.raw):
	 * they go only with drop_buckets, once the build has read them. */
	unsigned release_parts;
	/* The caller reads no bucket of the model, nor its types, only the
	 * stacks' sums (diff by stack): each bucket is summed into its stack
	 * as it is made, none is kept (nbuckets 0, no type named), and with
	 * release_frames the capture's go once the model is built
	 * (HP_CAP_PART_BUCKETS): 230 bytes a bucket. */
	int drop_buckets;
	/* The caller reads only the locations and the modules' statuses (the
	 * symbols' embedding, embed.c): every frame of every stack becomes a
	 * location, and nothing else is built (nstacks and nbuckets 0, no
	 * type, no figure). keep_allocator_frames is implied. */
	int locations_only;
};

/* Builds the model. Returns 0, or -errno with err set to one line (the
 * capture has no snapshot, out of memory). Modules whose symbols could not
 * be read are not an error: see modules[i].status. */
int hp_model_build(struct hp_model *m, const struct hp_capture *cap,
		   const struct hp_model_options *opts, char *err, size_t errlen);

void hp_model_free(struct hp_model *m);

/* The allocations one sampled allocation of a bucket stands for: 1 / (1 -
 * exp(-size / rate)) with size the bucket's (its mean allocation size when
 * it has none), docs/internals/sampling.md; 1 when rate_bytes <= 1.
 * Always finite and at least 1, whatever the capture says (computed with
 * expm1). The model applies it; a summary that reads a capture alone uses
 * it too. */
double hp_model_unbias_scale(const struct hp_rec_bucket *b, uint64_t rate_bytes);

/* The index in m->modules of the program's own executable: the module
 * whose path is the capture's program (both come from /proc/self/exe),
 * else the first one loaded (the loader lists the program first); -1 when
 * the capture has no module. */
int hp_model_main_module(const struct hp_model *m);

/* The program's name, for titles and headers: the base name of argv[0]
 * when the capture has one (a program started through a symlink, such as
 * redis-server -> redis-check-rdb, is named as it was called), else of the
 * executable's path, else "(unknown program)". The executable's path
 * (cap->program) stays what symbols are read from. The string is the
 * capture's or static. */
const char *hp_model_program_name(const struct hp_capture *cap);

/* The metrics a user ranks and draws by. */
enum hp_metric {
	HP_METRIC_PEAK,        /* bytes in use at the global peak */
	HP_METRIC_LEAKED,      /* bytes in use at the snapshot (at exit: leaked) */
	HP_METRIC_ALLOCATED,   /* bytes allocated */
	HP_METRIC_ALLOCATIONS, /* number of allocations */
	HP_METRIC_TEMPORARY,   /* number of temporary allocations */
	HP_METRIC_COUNT
};

/* Parses "peak", "leaked", "allocated", "allocations", "temporary"; returns
 * 0 or -EINVAL. */
int hp_metric_parse(const char *name, enum hp_metric *out);
const char *hp_metric_name(enum hp_metric m);
/* Whether the metric counts bytes (else objects). */
int hp_metric_is_bytes(enum hp_metric m);
double hp_values_metric(const struct hp_values *v, enum hp_metric m);
void hp_values_add(struct hp_values *sum, const struct hp_values *v);

/* An estimate as an integer: rounded to the nearest, clamped to
 * [INT64_MIN, INT64_MAX], NaN as 0. Every output that prints or encodes a
 * figure as an integer converts through this: converting a double out of
 * an integer's range is undefined behaviour (x86 gives INT64_MIN, which
 * a hostile capture turned into -9223372036854775808 bytes). */
int64_t hp_estimate_i64(double v);

/* A location's innermost function name and "file:line" (or "module+0x..").
 * buf is used for the latter. */
const char *hp_location_where(const struct hp_model *m, const struct hp_location *l, char *buf,
			      size_t cap);

/* A context tag as a path, outermost first: "outer > inner"; "(no
 * context)" for 0; a context the capture does not define is
 * "context N". Writes buf[0..cap); returns buf. */
const char *hp_model_context_path(const struct hp_model *m, uint64_t context, char *buf,
				  size_t cap);

/* The parent of a context tag (0: outermost or undefined). */
uint64_t hp_model_context_parent(const struct hp_model *m, uint64_t context);

/* A thread tag's name: its name, else "tid N"; "(no thread)" for 0. */
const char *hp_model_thread_name(const struct hp_model *m, uint64_t thread, char *buf,
				 size_t cap);

/* The heap id named name ("malloc" is 0; a custom heap's name, or "heap
 * N"), or -1 when the capture has none of that name. */
int64_t hp_model_find_heap(const struct hp_model *m, const char *name);
/* A heap tag's name: "malloc" for 0, the name given, else "heap N". */
const char *hp_model_heap_name(const struct hp_model *m, uint64_t heap, char *buf, size_t cap);

/* Which heaps an export or a view shows (--heap NAME|all): HP_HEAP_ALL, or
 * one heap id (0: malloc's). Every heap's blocks are apart (hp_model.total
 * is malloc's): "all" shows each under its own root frame or label. */
#define HP_HEAP_ALL (-1)

/* Parses --heap's value: "all" (HP_HEAP_ALL) or a heap's name
 * (hp_model_find_heap). Returns 0, or -ENOENT with err set to one line
 * naming the heaps the model has. */
int hp_model_parse_heap(const struct hp_model *m, const char *value, int64_t *heap, char *err,
			size_t errlen);

/* Whether heap selection sel shows the blocks of heap. */
static inline int hp_heap_selected(int64_t sel, uint64_t heap)
{
	return sel == HP_HEAP_ALL || (sel >= 0 && (uint64_t)sel == heap);
}

/* Whether an output of selection sel names the heap of what it shows (a
 * root frame, a label, a comment): when the model holds a custom heap's
 * blocks or a custom heap is chosen. A capture of malloc's blocks alone
 * reads as it always did. */
int hp_model_heap_marked(const struct hp_model *m, int64_t sel);

/* The heap ids that hold blocks of the model, malloc's (0) first, then in
 * id order: up to cap of them into out; returns how many there are. */
size_t hp_model_heaps(const struct hp_model *m, uint64_t *out, size_t cap);

/* "[heap NAME]", the root frame an output puts a heap's stacks under. */
const char *hp_model_heap_frame(const struct hp_model *m, uint64_t heap, char *buf, size_t cap);

/* --- frames as people read them --------------------------------------- */

/* What a symbolic frame is to a reader of a report. */
enum hp_frame_class {
	HP_FRAME_OWN,     /* the program's own code: what --frames counts from */
	HP_FRAME_LIBRARY, /* a library's implementation: the C++ standard library's
			   * namespaces (std::, __gnu_cxx::, __cxxabiv1::), a file
			   * under /usr/include, or a module under /lib, /usr/lib */
	HP_FRAME_ENTRY,   /* the runtime below main or a thread's function: _start,
			   * __libc_start_main and its helpers, start_thread, clone */
};

/* The class of symbolic frame s of location l: looked up when s is one of
 * l's frames and l has its classes (every location of a model does), else
 * found from the names. */
enum hp_frame_class hp_model_frame_class(const struct hp_model *m, const struct hp_location *l,
					 const struct hp_sym *s);

/* Whether s is the program's "main" (frames outside it are the runtime's). */
int hp_model_is_main(const struct hp_sym *s);

/* Whether fn is Rust's runtime starting the program's main (std::rt's
 * lang_start and what it calls it through), as __libc_start_main is C's. */
int hp_model_is_rust_start(const char *fn);

/* What symbolic frame k of l is besides its class: HP_SYM_MAIN
 * (hp_model_is_main), HP_SYM_RUST_START (hp_model_is_rust_start), or 0;
 * read from l->classes when the model made l (a million stacks ask it of
 * a few locations), else from the name. */
#define HP_SYM_CLASS 0x0fu
#define HP_SYM_MAIN 0x10u
#define HP_SYM_RUST_START 0x20u
static inline unsigned hp_location_marks(const struct hp_location *l, uint32_t k)
{
	if (l->classes)
		return l->classes[k] & (HP_SYM_MAIN | HP_SYM_RUST_START);
	return (hp_model_is_main(&l->syms[k]) ? HP_SYM_MAIN : 0) |
	       (hp_model_is_rust_start(l->syms[k].function) ? HP_SYM_RUST_START : 0);
}

/* A function name shortened for reading: the arguments of every template
 * (the text between an outermost '<' and its '>') become "...", so
 * "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>"
 * reads "std::vector<...>::_M_realloc_insert<...>"; operator<, operator<<,
 * operator<= and operator<=> stay. Writes out[0..cap), always terminated,
 * cut when it does not fit; returns out. */
char *hp_name_shorten(char *out, size_t cap, const char *name);

/* A function name as the report shows it by default: shortened as
 * hp_name_shorten, without the parameter list of a demangled C++ function
 * ("store::index_value(store::Value const*, ...) const" reads
 * "store::index_value"; operator() and a lambda's "{lambda()#1}" keep
 * theirs) and without a template function's return type; a Rust v0
 * impl's self type stays ("<r::Node>::build"). Writes out[0..cap),
 * always terminated; returns out. Allocates a scratch buffer of cap bytes
 * (without memory, the name is only shortened). */
char *hp_name_display(char *out, size_t cap, const char *name);

/* --- filters and suppressions (pprof's and LeakSanitizer's meanings) --- */

struct hp_model_filter {
	const char *focus;  /* keep only stacks with a frame matching, or NULL */
	const char *ignore; /* drop the stacks with a frame matching, or NULL */
	const char *hide;   /* remove matching frames from every stack, or NULL */
};

/* Applies f to a built model, in place: every output then sees the kept
 * stacks only (their buckets, and total summed again over them), with the
 * hidden frames gone. The patterns are POSIX extended regular expressions
 * (regex.h), searched (not anchored) in each symbolic frame's function
 * name, and in the module's file name for a frame without a symbol.
 * Returns 0, -EINVAL with err set when a pattern does not compile
 * ("--focus: ..."), or -ENOMEM. */
int hp_model_filter(struct hp_model *m, const struct hp_model_filter *f, char *err,
		    size_t errlen);

/* A list of leak suppressions in LeakSanitizer's format. */
struct hp_suppressions {
	size_t n, cap;
	char **patterns;
	int builtin; /* the built-in list is in: also suppress what the system's
		      * libraries allocate in their constructors (a stack under
		      * _dl_init without a frame of the program's own) */
};

/* The built-in suppressions: allocations the C and C++ runtimes make once
 * and keep to the end (libstdc++'s emergency exception pool, stdio's
 * buffers, the dynamic loader's TLS and link maps, locale and time zone
 * data, atexit lists). Returns 0 or -ENOMEM. */
int hp_suppressions_add_builtin(struct hp_suppressions *s);

/* Adds the rules of a file in LeakSanitizer's format: one "leak:PATTERN"
 * a line, '#' comments and blank lines skipped; other kinds
 * (race:, called_from_lib:, ...) are not heapprof's and are refused.
 * Returns 0, or -errno with err set ("FILE:LINE: ..."). */
int hp_suppressions_load(struct hp_suppressions *s, const char *path, char *err, size_t errlen);

/* Whether text matches a LeakSanitizer pattern: a substring match, '*'
 * matches any run of characters, a leading '^' and a trailing '$' anchor
 * it. */
int hp_suppression_match(const char *pattern, const char *text);

void hp_suppressions_free(struct hp_suppressions *s);

/* Marks the stacks that match a suppression (a pattern matching any
 * symbolic frame's function name or file, or its module's file name) as
 * suppressed and sums their figures into m->suppressed. Each location is
 * matched once, whatever the number of stacks through it. Returns 0 or
 * -ENOMEM (nothing marked). */
int hp_model_suppress(struct hp_model *m, const struct hp_suppressions *s);

#endif
