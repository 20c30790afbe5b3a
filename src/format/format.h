/*
 * format.h - the byte layout of a heapprof capture file (.hpf).
 *
 * A capture is a fixed file header followed by a stream of records. Every
 * record is framed, length-prefixed and checksummed on its own, so a file cut
 * short (SIGKILL, full disk) keeps every record written before the cut, and a
 * damaged record is found, named and skipped without losing the others. The
 * file is append-only: the recorder appends snapshots while the program runs,
 * and the analyzer may later append a SYMBOLS record.
 *
 * docs/format.md has the same tables with prose; keep both in step. The
 * payloads below are coded once, in records.h: one struct per part of each
 * record (named after each table), its fields listed once, with one
 * encoder (encode.c) and one decoder (decode.c) that the recorder, the
 * analyzer and the tests all use.
 *
 * File header (32 bytes, little-endian, never compressed)
 *
 *   offset size  field
 *   0      8     magic "HEAPPROF"
 *   8      2     major version (HP_FORMAT_MAJOR); a reader refuses another
 *   10     2     minor version; additions a reader of a lower minor skips
 *   12     4     header size in bytes (32)
 *   16     12    reserved, zero
 *   28     4     CRC-32 (zlib) of bytes 0..27
 *
 * Record frame (24 bytes, then the payload)
 *
 *   offset size  field
 *   0      4     tag "HPRC" (lets a reader find the next record after damage)
 *   4      2     record type (HP_REC_*)
 *   6      2     flags: bit 0 = payload is one zstd frame; a reader skips a
 *                record with a flag it does not know (as damage)
 *   8      4     stored payload size in bytes (as in the file)
 *   12     4     raw payload size in bytes (after decompression)
 *   16     4     CRC-32 of the stored payload
 *   20     4     CRC-32 of bytes 0..19 of this frame
 *
 * Payloads are sequences of fields; "u" is an unsigned LEB128 varint, "s" a
 * signed zigzag varint, "str" a u length then that many bytes (no NUL),
 * "bytes" the same for binary data. Times are nanoseconds since the capture's
 * start (CLOCK_MONOTONIC) unless stated. Readers ignore bytes left over at the
 * end of a payload, which is how minor versions add fields.
 *
 * Images (minor 2). A process that execs keeps its capture: the recorder
 * writes a snapshot with reason HP_SNAP_EXEC, and the new program (same
 * pid) appends a META record of its own, then its own MODULES, STACKS,
 * TIMESERIES and SNAPSHOT records. Each META starts an image: the records
 * from one META up to the next belong to it, and its stack ids start again
 * at 1, its module events from an empty map, its snapshot seq at 1. Records
 * before the first intact META form image 0 without a META. SYMBOLS records
 * name their image. Analyses show one image, by default the last that
 * holds a snapshot; docs/format.md, "Images".
 *
 * HP_REC_META (first record of each image; hp_rec_meta, the arguments,
 * hp_rec_meta_options)
 *   u pid, u ppid, u start_realtime_ns (since the epoch), u start_monotonic_ns,
 *   u page_size, str program (absolute path of the executable), u argc,
 *   argc x str argv, str recorder_version,
 *   u sample_rate_bytes (1 = every allocation), u unwind (HP_UNWIND_*),
 *   u max_depth, u flags (HP_META_*), u dump_signal, u interval_ms,
 *   u dump_every_bytes, u dump_high_water_bytes
 *
 * HP_REC_MODULES (whenever the module map changed since the last one;
 * hp_rec_module_event, hp_rec_segment)
 *   u count, then count events:
 *   u kind (HP_MOD_LOAD or HP_MOD_UNLOAD), u time, u module_id,
 *   for HP_MOD_LOAD only: str path, bytes build_id, u load_bias,
 *     u segment_count, segment_count x (u vaddr, u memsz, u file_offset, u flags)
 *   A frame address A belongs to module M when some segment S of M has
 *   load_bias + S.vaddr <= A < load_bias + S.vaddr + S.memsz.
 *
 * HP_REC_STACKS (before the first snapshot that uses them; hp_rec_stacks,
 * hp_rec_stack_put)
 *   u first_id, u count, then count stacks, ids first_id, first_id+1, ...:
 *   u depth, u frame[0] (the caller of the allocation function),
 *   depth-1 x s (frame[i] - frame[i-1])
 *   Frames are return addresses, innermost first. Stack id 0 is reserved for
 *   "no stack" (unwinding failed or the stack table was full). A stack
 *   deeper than max_depth has max_depth frames, one of them HP_FRAME_GAP:
 *   the innermost before it, the outermost (the stack's roots, up to
 *   main) after it, the frames between not kept; a gap frame last: the
 *   walk stopped before the stack's end (docs/format.md, "Deep stacks").
 *
 * HP_REC_SNAPSHOT (at exit, on a signal, on triggers; hp_rec_snapshot,
 * hp_rec_lost, hp_rec_bucket, hp_rec_snapshot_tail)
 *   u seq, u time, u reason (HP_SNAP_*), u signal (0 if none),
 *   u alloc_count, u alloc_bytes, u free_count, u free_bytes,
 *   u peak_bytes, u peak_count, u peak_time,
 *   u stack_count (ids below it are defined: the highest stack id + 1),
 *   u lost_kinds, lost_kinds x (u reason HP_LOST_*, u count, u bytes),
 *   u bucket_count, bucket_count x
 *     (u stack_id, u type_tag, u origin_tag, u size,
 *      u alloc_count, u alloc_bytes, u free_count, u free_bytes,
 *      u peak_count, u peak_bytes, u temp_count, u temp_bytes),
 *   (minor 1) u recorder_bytes: the memory the recorder holds for its
 *   tables and buffers, i.e. what profiling costs the profiled process
 *   (minor 3) u heap_count, heap_count x (u heap, u peak_bytes,
 *   u peak_count, u peak_time, u resets): each custom heap's own peak
 *   (HP_TAG_HEAP ids; hp_rec_heap_peak). The snapshot's totals and peak
 *   are malloc's only (heap 0); a custom heap's buckets have their peak_*
 *   at that heap's own peak.
 *   All figures are raw: in a sampled capture they count sampled allocations
 *   only (see docs/internals/sampling.md for unbiasing). size is the exact
 *   allocation size in a sampled capture (buckets are split by size so that
 *   unbiasing is exact) and 0 in a full one. In use = alloc - free. peak_* of
 *   a bucket is its in-use value at the moment of the global peak, which a
 *   sampled capture finds on the unbiased estimate of the bytes in use (its
 *   peak_bytes are the raw bytes in use at that moment).
 *
 * HP_REC_TIMESERIES (about every second, and before each snapshot;
 * hp_rec_sample)
 *   u count, then count x (s time delta from the previous sample in this
 *   record, the first from 0, i.e. absolute; u heap_bytes; u rss_bytes)
 *
 * HP_REC_SYMBOLS (appended by the analyzer: `heapprof run` at the end of
 * the run, `heapprof symbolize` later; one per image; a reader uses the
 * last one of each image; hp_rec_symaddr, hp_rec_symframe,
 * hp_rec_symbols_tail)
 *   u string_count, string_count x str (index 0 is "")
 *   u module_count, module_count x u status (for the image's modules in
 *     the order of their load events: HP_SYMSTATUS_*)
 *   u address_count, address_count x
 *     (u address (a frame as recorded), u frame_count,
 *      frame_count x (u function (string index), u file (string index),
 *                     u line, u flags (bit 0: inlined into the next frame)))
 *   (minor 2) u image: the image these frames are of (0 = the first, and
 *     the image of a record without the field)
 *   Frames are innermost first; functions are demangled.
 *
 * HP_REC_TAGS (minor 3; before the first snapshot that uses them;
 * hp_rec_tag)
 *   u count, count x (u kind (HP_TAG_*), u id, u a, u b, u c, str name)
 *   Names what a bucket's type_tag (a TYPE id) and origin_tag (an ORIGIN
 *   id: context x thread x heap) stand for; the meaning of a, b, c and
 *   name per kind is in enum hp_tag_kind. Ids are per kind, from 1; an
 *   entry for an id already defined replaces it (a thread renamed).
 *
 * HP_REC_TIMELINE (minor 4; the per-site timeline: every timeline period,
 * about a second's ticks per record, and before each snapshot;
 * hp_rec_tick, hp_rec_site)
 *   u count, count x tick:
 *   s time delta from the previous tick in this record (the first from 0,
 *   i.e. absolute), u entry_count, entry_count x
 *     (u bucket (the recorder's id: a key within this image's timeline),
 *      u stack_id, u size (as a snapshot bucket's), u in_use_count,
 *      u in_use_bytes)
 *   (minor 5) then u count (the sites of all the record's ticks), count x
 *     (u type_tag, u origin_tag): each site's bucket's tags, as a snapshot
 *     bucket's, in the order of the sites (hp_rec_site_tags); absent in a
 *     minor 4 record (no type, no origin known).
 *   A tick lists the buckets that changed since the previous tick, with
 *   what they hold in use at that tick (raw, as a snapshot's figures); a
 *   bucket not listed holds what it held at its last entry (0 before its
 *   first). Its stack may be defined by a later STACKS record only, its
 *   tags by a later TAGS record only.
 *
 * HP_REC_HISTOGRAMS (minor 4; right after each SNAPSHOT; hp_rec_hists,
 * hp_rec_hist)
 *   u seq (the snapshot's), u count (its bucket_count), count x, in the
 *   order of its buckets: u n, n x u (allocations by size class 0..n-1),
 *   u m, m x u (frees by lifetime class 0..m-1); classes past n and m
 *   are 0. Size class c: 0 for size 0, else [2^(c-1), 2^c) bytes, class
 *   23 all from 4 MiB. Lifetime class c (allocations recorded between a
 *   block's allocation and its free, counted in units of 64): 0 below
 *   64, else [2^(c+5), 2^(c+6)), class 16 all from 2 Mi. Raw, as the
 *   snapshot's figures; frees the recorder could not see are in no
 *   lifetime class. 32-bit counters in the recorder: a class that passed
 *   2^32 counts modulo 2^32.
 *
 * HP_REC_BLOCKS (minor 4; with --live-blocks, after each snapshot's
 * HISTOGRAMS, not from a signal handler; hp_rec_hists, hp_rec_block)
 *   u seq (the snapshot's), u count, count x (u address, u size,
 *   u stack_id): every live block the recorder holds (the sampled ones in
 *   a sampled recording; malloc's, not custom heaps'), in no particular
 *   order.
 *
 * HP_REC_MAPS (minor 5; with --live-blocks, right after each BLOCKS;
 * hp_rec_hists, hp_rec_map)
 *   u seq (the snapshot's), u count, count x (u start, u size, u kind
 *   (HP_MAP_*), u perms (HP_MAP_PERM_*), u rss_bytes, str name): the
 *   regions of the address space that hold the heap, by address, none
 *   overlapping: glibc's brk heap, each heap of its other arenas (the
 *   read-write part of a 64 MiB aligned mapping), each mmap'd chunk, and
 *   any other mapping (or the rest of one) that holds a block of the
 *   BLOCKS record. rss_bytes: its resident bytes (mincore(2)) when the
 *   record was written, at most size. name: the mapping's in
 *   /proc/self/maps ("[heap]", a path; "" anonymous).
 *
 * HP_REC_EVENTS (minor 6; with --events, META flag HP_META_EVENTS: a chunk
 * of one thread's event log, written when its buffer of 4,096 events is
 * full, at each snapshot (before it) and at the thread's exit; events.h,
 * hp_ev_head, hp_ev_bucket)
 *   u thread (HP_TAG_THREAD id, 0: unknown), u tick_origin, u ns_origin,
 *   u tick_at, u ns_at, u shift, u count (at most 65,536), u bucket_count
 *   (at most count), bucket_count x (u stack_id, u type_tag, u origin_tag,
 *   u size: a snapshot bucket's key), then four columns:
 *     count x u code: 0 a free, 2k+1 an allocation of the record's bucket
 *       k, 2k+2 a retype (the live block at the address moved to bucket k:
 *       its type named after its allocation)
 *     count x u time: units of 2^shift ticks since the previous event's
 *       (the first: since tick_origin's unit)
 *     one u size per allocation, in their order
 *     count x u address, against a model of the record's own (events.h,
 *       hp_ev_encode_columns; docs/format.md): an allocation by its size
 *       class's latest freed address or a delta from the previous
 *       allocation's, a free or a retype by how many events back its
 *       block's allocation is or a delta
 *   Ticks are the CPU's time-stamp counter (x86-64; elsewhere the
 *   monotonic clock's ns, shift 0): the counter read tick_origin when the
 *   log started, ns_origin ns after the capture's start, and tick_at at
 *   this record's flush, ns_at ns after the start; a reader converts a
 *   time by the line through (tick_origin, ns_origin) and the (tick_at,
 *   ns_at) of the image's record with the largest tick_at. A thread's
 *   records come in its order, threads' records interleave; a free is
 *   matched to the allocation of its address before it. Events are the
 *   recorded blocks of malloc's family (sampled ones in a sampled
 *   recording; not custom heaps'); those not logged are counted lost
 *   (HP_LOST_EVENTS_*). Written by 1.6's recorders; 1.7's write
 *   HP_REC_EVENTS_BITS.
 *
 * HP_REC_EVENTS_BITS (minor 7; with --events, META flag HP_META_EVENTS:
 * chunks of the event log, each one thread's, a record written once its
 * chunks take 60 KiB, before each snapshot and at a thread's exit;
 * events.h, hp_ev_encode_bits)
 *   chunks to the end of the payload, each: the head and buckets of
 *   HP_REC_EVENTS, u length, then length bytes of bit stream, lowest bit
 *   first: per event its time (Rice code, units since the previous
 *   event's), a kind bit (0 a free), for an allocation or a retype its
 *   bucket (bitlen(met + 1) bits: a bucket met before, the next, or met + 1
 *   for a retype then its bucket), an allocation's size (Rice), and its
 *   address's delta code from the previous event's (Rice); zero bits to
 *   the end of the byte. Rice codes are adaptive, one state per field
 *   (docs/format.md, "EVENTS_BITS"). A reader refuses the record when a
 *   chunk is malformed.
 */
#ifndef HP_FORMAT_FORMAT_H
#define HP_FORMAT_FORMAT_H

#define HP_FORMAT_MAGIC "HEAPPROF"
#define HP_FORMAT_MAJOR 1
#define HP_FORMAT_MINOR 7 /* 5: the TIMELINE sites' tags, MAPS; 6: EVENTS; 7: EVENTS_BITS */
#define HP_FORMAT_FILE_HEADER_BYTES 32
#define HP_FORMAT_RECORD_TAG "HPRC"
#define HP_FORMAT_FRAME_BYTES 24
/* A record payload is at most this large, raw or stored: a reader refuses
 * larger sizes as damage instead of trying to allocate them. */
#define HP_FORMAT_MAX_PAYLOAD_BYTES (1u << 30)
#define HP_FORMAT_FLAG_ZSTD 1u
/* A compressed payload larger than this many times its stored size (plus
 * 1 MiB) is refused as damage: heapprof's records compress far less. */
#define HP_FORMAT_MAX_RATIO 256u

enum hp_record_type {
	HP_REC_META = 1,
	HP_REC_MODULES = 2,
	HP_REC_STACKS = 3,
	HP_REC_SNAPSHOT = 4,
	HP_REC_TIMESERIES = 5,
	HP_REC_SYMBOLS = 6,
	HP_REC_TAGS = 7, /* minor 3 */
	HP_REC_TIMELINE = 8, /* minor 4 */
	HP_REC_HISTOGRAMS = 9, /* minor 4 */
	HP_REC_BLOCKS = 10,    /* minor 4 */
	HP_REC_MAPS = 11,      /* minor 5 */
	HP_REC_EVENTS = 12,    /* minor 6; written by 1.6's recorders only */
	HP_REC_EVENTS_BITS = 13, /* minor 7 */
};

/* What a MAPS region is (kind). */
enum hp_map_kind {
	HP_MAP_BRK = 1,   /* glibc's main arena: the brk heap, [heap] */
	HP_MAP_ARENA = 2, /* a heap of another arena: the read-write part of a
			   * 64 MiB aligned mapping that starts with glibc's
			   * heap_info */
	HP_MAP_CHUNK = 3, /* one chunk glibc mmap'd for a large block */
	HP_MAP_OTHER = 4, /* another mapping (or the rest of one) holding a
			   * live block */
	HP_MAP_KINDS = 5
};

/* A MAPS region's protection (perms), as /proc/self/maps has it. */
enum hp_map_perm {
	HP_MAP_PERM_READ = 1,
	HP_MAP_PERM_WRITE = 2,
	HP_MAP_PERM_EXEC = 4,
	HP_MAP_PERM_SHARED = 8,
};

enum hp_unwind_mode {
	HP_UNWIND_DWARF = 0,
	HP_UNWIND_FP = 1,
};

/* The frame of a deep stack that stands for the frames not kept between
 * its innermost and its outermost (STACKS above): an address no return
 * address has (the kernel's half), one value, so that stacks that differ
 * only in how deep a recursion went are one. */
#define HP_FRAME_GAP 0xfffffffffffff000ull

enum hp_meta_flags {
	HP_META_FOLLOW_FORK = 1,
	HP_META_FORKED_CHILD = 2, /* this process was forked from a recorded one */
	HP_META_SHADOWED = 4,     /* another library's malloc came first in the
				   * lookup order (LD_PRELOAD): nothing recorded */
	HP_META_EVENTS = 8,       /* recorded with the event log (EVENTS records) */
};

enum hp_module_event {
	HP_MOD_LOAD = 1,
	HP_MOD_UNLOAD = 2,
};

enum hp_snapshot_reason {
	HP_SNAP_EXIT = 1,        /* normal exit */
	HP_SNAP_SIGNAL = 2,      /* the dump signal (SIGUSR2 by default) */
	HP_SNAP_FATAL = 3,       /* a fatal signal; the process dies next */
	HP_SNAP_INTERVAL = 4,    /* every interval_ms */
	HP_SNAP_BYTES = 5,       /* every dump_every_bytes allocated */
	HP_SNAP_HIGH_WATER = 6,  /* the peak rose by dump_high_water_bytes */
	HP_SNAP_API = 7,         /* heapprof_dump() */
	HP_SNAP_EXEC = 8,        /* the process is about to exec */
	HP_SNAP_DETACH = 9,      /* heapprof detach (minor 3) */
};

/* What a TAGS entry names (kind); ids are per kind, from 1. */
enum hp_tag_kind {
	HP_TAG_TYPE = 1,    /* a: HP_TYPE_*, b: vtable address, name: explicit name;
			     * explicit (issue 26): b: the array cookie bytes, c: the
			     * element bytes (0: not an array type, the name only) */
	HP_TAG_CONTEXT = 2, /* a: parent context (0: outermost), name */
	HP_TAG_THREAD = 3,  /* a: tid, name (a later entry of the same id renames) */
	HP_TAG_HEAP = 4,    /* name (heap 0, not listed, is malloc's) */
	HP_TAG_ORIGIN = 5,  /* a: context, b: thread, c: heap (0 each: none) */
	HP_TAG_KINDS = 6
};

/* Where a TYPE tag's type comes from. */
enum hp_type_source {
	HP_TYPE_EXPLICIT = 1, /* heapprof_set_type: name */
	HP_TYPE_VTABLE = 2,   /* the block's first word, b: a vtable address */
};

enum hp_symbols_status {
	HP_SYMSTATUS_OK = 0,       /* symbolized from the binary or its debug info */
	HP_SYMSTATUS_MISSING = 2,  /* the binary was gone */
	HP_SYMSTATUS_MISMATCH = 3, /* the binary had changed (build-id) */
};

enum hp_lost_reason {
	HP_LOST_REENTRANT = 1,   /* allocated inside the recorder (a signal handler) */
	HP_LOST_NO_MEMORY = 2,   /* the recorder could not map memory for a table */
	HP_LOST_STACK_TABLE_FULL = 3,
	HP_LOST_UNWIND_FAILED = 4, /* recorded, but with stack id 0 */
	HP_LOST_UNKNOWN_FREE = 5,  /* free of a block never recorded (before init, foreign) */
	HP_LOST_WRITE_FAILED = 6,  /* a record could not be written */
	HP_LOST_REENTRANT_FREE = 7, /* freed inside the recorder: its bytes stay in use */
	HP_LOST_STACK_ROOM = 8,    /* too little stack left for the recorder to run */
	/* The event log's (minor 6): events, not allocations. */
	HP_LOST_EVENTS_NO_MEMORY = 9, /* no buffer for the thread's events */
	HP_LOST_EVENTS_WRITE = 10,    /* a chunk of events could not be written */
	HP_LOST_KINDS = 11
};

#endif
