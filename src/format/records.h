/*
 * records.h - the capture's record schemas: one typed struct for each part
 * of each record, with one encoder (encode.c) and one decoder (decode.c),
 * used by the recorder, the analyzer and the tests alike.
 *
 * Model. A record's payload (its bytes, format.h) is a run of parts: a
 * fixed group of fields (a struct here), or a sequence, which is a u count
 * followed by that many items (a struct each). The parts of each record,
 * in the order they stand in its payload:
 *
 *   META        hp_rec_meta, argc x str (hp_rec_str), hp_rec_meta_options
 *   MODULES     count x (hp_rec_module_event, segment_count x hp_rec_segment)
 *   STACKS      hp_rec_stacks, count x stack (hp_rec_stack_put / _get)
 *   SNAPSHOT    hp_rec_snapshot, count x hp_rec_lost, count x hp_rec_bucket,
 *               hp_rec_snapshot_tail, (minor 3) count x hp_rec_heap_peak
 *   TIMESERIES  count x hp_rec_sample (times as deltas: hp_rec_sample_put)
 *   SYMBOLS     count x str (strings), count x u (module status),
 *               count x (hp_rec_symaddr, frame_count x hp_rec_symframe),
 *               hp_rec_symbols_tail
 *   TAGS        count x hp_rec_tag
 *   HISTOGRAMS  hp_rec_hists, count x hp_rec_hist
 *   BLOCKS      hp_rec_hists, count x hp_rec_block
 *   MAPS        hp_rec_hists, count x hp_rec_map
 *   TIMELINE    count x (hp_rec_tick (time as a delta: hp_rec_tick_put),
 *               entry_count x hp_rec_site), (minor 5) count x the sites'
 *               tags (hp_rec_site_tags_put), one per site in their order
 *
 * The byte layout of each field is the table in format.h (and
 * docs/format.md); the fields of a fixed group are listed once, below, as
 * an X-macro list X(kind, type, name) in payload order, from which the
 * struct, its encoder, its decoder and its smallest size are all made:
 *
 *   kind U    a u varint; the decoder refuses a value that does not fit type
 *   kind TAIL a u varint added by a later minor version at the end of a
 *             payload: absent (no bytes left), it reads as 0
 *
 * Adding a field to a group is one line in its list, the tables in
 * format.h and docs/format.md, and the code that fills it and reads it.
 * (A field of a repeated item, a bucket say, cannot be appended in a minor
 * version: an older reader would take it for the next item. That takes a
 * major version, or a new record.)
 *
 * (A part that is its field list and nothing else gets its encoder and
 * decoder from DEFINE_PUT in encode.c and DEFINE_GET in decode.c.)
 *
 * Encoders stream: each appends its part to an hp_buf, so the recorder
 * writes from its own tables item by item, allocating nothing (the buffer
 * grows through its grow function) and touching no stdio; they are
 * async-signal-safe when the buffer's grow function is. Decoders read a
 * part from an hp_cursor over a payload, allocate nothing, and return 0,
 * or -EINVAL (with c->err set) when the payload ends early, a varint is
 * malformed or a value is out of its range; strings they return point
 * into the payload. Neither locks; both are reentrant.
 */
#ifndef HP_FORMAT_RECORDS_H
#define HP_FORMAT_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"
#include "encode.h"
#include "format.h"

/* A str or bytes field: len bytes at p (not NUL-terminated). */
struct hp_rec_str {
	const char *p;
	size_t len;
};

/* s as a str field (NULL: the empty string). */
static inline struct hp_rec_str hp_rec_str_of(const char *s)
{
	return (struct hp_rec_str){s ? s : "", s ? strlen(s) : 0};
}

/* Makes the struct members of a field list: HP_REC_BUCKET(HP_REC_MEMBER). */
#define HP_REC_MEMBER(kind, type, name) type name;
/* Copies a field list from *from to *to (pointers of those names in
 * scope), for the analyzer's containers that hold a list's fields flat. */
#define HP_REC_ASSIGN(kind, type, name) to->name = from->name;
/* The smallest encoding of a field list in bytes (one per varint). */
#define HP_REC_ONE(kind, type, name) +1

/* --- META ------------------------------------------------------------ */

/* The process and its program; then the arguments, argc x str (a count,
 * hp_rec_str_put each), then hp_rec_meta_options. */
#define HP_REC_META_PROCESS(X)                                                 \
	X(U, uint64_t, pid)                                                    \
	X(U, uint64_t, ppid)                                                   \
	X(U, uint64_t, start_realtime_ns)                                      \
	X(U, uint64_t, start_monotonic_ns)                                     \
	X(U, uint64_t, page_size)

struct hp_rec_meta {
	HP_REC_META_PROCESS(HP_REC_MEMBER)
	struct hp_rec_str program;
};

/* After the arguments: the recorder's version and options. */
#define HP_REC_META_OPTIONS(X)                                                 \
	X(U, uint64_t, sample_rate_bytes)                                      \
	X(U, uint64_t, unwind)                                                 \
	X(U, uint64_t, max_depth)                                              \
	X(U, uint64_t, flags)                                                  \
	X(U, uint64_t, dump_signal)                                            \
	X(U, uint64_t, interval_ms)                                            \
	X(U, uint64_t, dump_every_bytes)                                       \
	X(U, uint64_t, high_water_bytes)

struct hp_rec_meta_options {
	struct hp_rec_str recorder_version;
	HP_REC_META_OPTIONS(HP_REC_MEMBER)
};

void hp_rec_meta_put(struct hp_buf *b, const struct hp_rec_meta *m);
int hp_rec_meta_get(struct hp_cursor *c, struct hp_rec_meta *m);
void hp_rec_meta_options_put(struct hp_buf *b, const struct hp_rec_meta_options *m);
int hp_rec_meta_options_get(struct hp_cursor *c, struct hp_rec_meta_options *m);

/* --- MODULES: count x event --------------------------------------------- */

/* A module event; for HP_MOD_LOAD only, path .. segment_count follow, then
 * segment_count x hp_rec_segment. The decoder refuses another kind. */
#define HP_REC_MODULE_EVENT(X)                                                 \
	X(U, uint64_t, kind)                                                   \
	X(U, uint64_t, time_ns)                                                \
	X(U, uint64_t, module_id)

#define HP_REC_MODULE_LOAD(X)                                                  \
	X(U, uint64_t, bias)                                                   \
	X(U, uint64_t, segment_count)

struct hp_rec_module_event {
	HP_REC_MODULE_EVENT(HP_REC_MEMBER)
	struct hp_rec_str path, build_id; /* HP_MOD_LOAD only */
	HP_REC_MODULE_LOAD(HP_REC_MEMBER)
};

#define HP_REC_MODULE_EVENT_MIN_BYTES (0 HP_REC_MODULE_EVENT(HP_REC_ONE))

#define HP_REC_SEGMENT(X)                                                      \
	X(U, uint64_t, vaddr)                                                  \
	X(U, uint64_t, memsz)                                                  \
	X(U, uint64_t, offset)                                                 \
	X(U, uint64_t, flags)

struct hp_rec_segment {
	HP_REC_SEGMENT(HP_REC_MEMBER)
};

#define HP_REC_SEGMENT_MIN_BYTES (0 HP_REC_SEGMENT(HP_REC_ONE))

void hp_rec_module_event_put(struct hp_buf *b, const struct hp_rec_module_event *e);
int hp_rec_module_event_get(struct hp_cursor *c, struct hp_rec_module_event *e);
void hp_rec_segment_put(struct hp_buf *b, const struct hp_rec_segment *s);
int hp_rec_segment_get(struct hp_cursor *c, struct hp_rec_segment *s);

/* --- STACKS: hp_rec_stacks, count x stack ------------------------------- */

#define HP_REC_STACKS(X)                                                       \
	X(U, uint64_t, first_id)                                               \
	X(U, uint64_t, count)

struct hp_rec_stacks {
	HP_REC_STACKS(HP_REC_MEMBER)
};

void hp_rec_stacks_put(struct hp_buf *b, const struct hp_rec_stacks *s);
/* count is bounded by the bytes left (a stack takes two at least). */
int hp_rec_stacks_get(struct hp_cursor *c, struct hp_rec_stacks *s);

/* A stack: its depth, frame[0], then depth-1 deltas. */
void hp_rec_stack_put(struct hp_buf *b, const uint64_t *frames, uint32_t depth);
/* Its depth: at least 1, at most the bytes left. */
int hp_rec_stack_depth_get(struct hp_cursor *c, uint64_t *depth);
/* Then its depth frames, into frames[0 .. depth). */
int hp_rec_stack_frames_get(struct hp_cursor *c, uint64_t *frames, uint64_t depth);

/* --- SNAPSHOT ----------------------------------------------------------- */

#define HP_REC_SNAPSHOT(X)                                                     \
	X(U, uint64_t, seq)                                                    \
	X(U, uint64_t, time_ns)                                                \
	X(U, uint64_t, reason)                                                 \
	X(U, uint64_t, signo)                                                  \
	X(U, uint64_t, alloc_count)                                            \
	X(U, uint64_t, alloc_bytes)                                            \
	X(U, uint64_t, free_count)                                             \
	X(U, uint64_t, free_bytes)                                             \
	X(U, uint64_t, peak_bytes)                                             \
	X(U, uint64_t, peak_count)                                             \
	X(U, uint64_t, peak_time_ns)                                           \
	X(U, uint64_t, stack_count)

struct hp_rec_snapshot {
	HP_REC_SNAPSHOT(HP_REC_MEMBER)
};

/* What the recorder could not record, for one reason (HP_LOST_*). */
#define HP_REC_LOST(X)                                                         \
	X(U, uint64_t, reason)                                                 \
	X(U, uint64_t, count)                                                  \
	X(U, uint64_t, bytes)

struct hp_rec_lost {
	HP_REC_LOST(HP_REC_MEMBER)
};

#define HP_REC_LOST_MIN_BYTES (0 HP_REC_LOST(HP_REC_ONE))

/* One bucket: the allocations that share a stack, tags and size (the
 * type tag names a TAGS TYPE entry, the origin tag an ORIGIN entry:
 * context x thread x heap; 0: none). The
 * recorder's aggregates hand the writer this struct (hp_agg_read), the
 * analyzer keeps it as it is (hp_cap_snapshot.buckets). */
#define HP_REC_BUCKET(X)                                                       \
	X(U, uint32_t, stack_id)                                               \
	X(U, uint32_t, type_tag)                                               \
	X(U, uint32_t, origin_tag)                                            \
	X(U, uint64_t, size)                                                   \
	X(U, uint64_t, alloc_count)                                            \
	X(U, uint64_t, alloc_bytes)                                            \
	X(U, uint64_t, free_count)                                             \
	X(U, uint64_t, free_bytes)                                             \
	X(U, uint64_t, peak_count)                                             \
	X(U, uint64_t, peak_bytes)                                             \
	X(U, uint64_t, temp_count)                                             \
	X(U, uint64_t, temp_bytes)

struct hp_rec_bucket {
	HP_REC_BUCKET(HP_REC_MEMBER)
};

#define HP_REC_BUCKET_MIN_BYTES (0 HP_REC_BUCKET(HP_REC_ONE))

/* After the buckets. */
#define HP_REC_SNAPSHOT_TAIL(X) X(TAIL, uint64_t, recorder_bytes) /* minor 1 */

struct hp_rec_snapshot_tail {
	HP_REC_SNAPSHOT_TAIL(HP_REC_MEMBER)
};

/* After the tail (minor 3): a count, then a custom heap's own peak each
 * (the snapshot's figures are malloc's, heap 0). An older snapshot has
 * none: read the count only when bytes are left. */
#define HP_REC_HEAP_PEAK(X)                                                    \
	X(U, uint64_t, heap)                                                   \
	X(U, uint64_t, peak_bytes)                                             \
	X(U, uint64_t, peak_count)                                             \
	X(U, uint64_t, peak_time_ns)                                           \
	X(U, uint64_t, resets)

struct hp_rec_heap_peak {
	HP_REC_HEAP_PEAK(HP_REC_MEMBER)
};

#define HP_REC_HEAP_PEAK_MIN_BYTES (0 HP_REC_HEAP_PEAK(HP_REC_ONE))

void hp_rec_heap_peak_put(struct hp_buf *b, const struct hp_rec_heap_peak *h);
int hp_rec_heap_peak_get(struct hp_cursor *c, struct hp_rec_heap_peak *h);
void hp_rec_snapshot_put(struct hp_buf *b, const struct hp_rec_snapshot *s);
int hp_rec_snapshot_get(struct hp_cursor *c, struct hp_rec_snapshot *s);
void hp_rec_lost_put(struct hp_buf *b, const struct hp_rec_lost *l);
int hp_rec_lost_get(struct hp_cursor *c, struct hp_rec_lost *l);
void hp_rec_bucket_put(struct hp_buf *b, const struct hp_rec_bucket *v);
int hp_rec_bucket_get(struct hp_cursor *c, struct hp_rec_bucket *v);
void hp_rec_snapshot_tail_put(struct hp_buf *b, const struct hp_rec_snapshot_tail *t);
int hp_rec_snapshot_tail_get(struct hp_cursor *c, struct hp_rec_snapshot_tail *t);

/* --- TIMESERIES: count x sample ----------------------------------------- */

/* On the wire the time is a delta (s) from the previous sample of the
 * record, the first from 0: *prev_ns is that previous time, 0 at the
 * start of each record, and both functions move it on. */
#define HP_REC_SAMPLE(X)                                                       \
	X(U, uint64_t, heap_bytes)                                             \
	X(U, uint64_t, rss_bytes)

struct hp_rec_sample {
	uint64_t time_ns;
	HP_REC_SAMPLE(HP_REC_MEMBER)
};

#define HP_REC_SAMPLE_MIN_BYTES (1 HP_REC_SAMPLE(HP_REC_ONE))

void hp_rec_sample_put(struct hp_buf *b, const struct hp_rec_sample *s, uint64_t *prev_ns);
int hp_rec_sample_get(struct hp_cursor *c, struct hp_rec_sample *s, uint64_t *prev_ns);

/* --- SYMBOLS ------------------------------------------------------------ */

/* count x str (index 0 is ""), count x u (HP_SYMSTATUS_*, one per module),
 * count x (hp_rec_symaddr, frame_count x hp_rec_symframe), the tail. */
#define HP_REC_SYMADDR(X)                                                      \
	X(U, uint64_t, address)                                                \
	X(U, uint64_t, frame_count)

struct hp_rec_symaddr {
	HP_REC_SYMADDR(HP_REC_MEMBER)
};

#define HP_REC_SYMADDR_MIN_BYTES (0 HP_REC_SYMADDR(HP_REC_ONE))

/* function and file are indexes into the record's strings. */
#define HP_SYMFRAME_INLINED 1u /* flags: inlined into the next frame */
#define HP_REC_SYMFRAME(X)                                                     \
	X(U, uint32_t, function)                                               \
	X(U, uint32_t, file)                                                   \
	X(U, uint32_t, line)                                                   \
	X(U, uint32_t, flags)

struct hp_rec_symframe {
	HP_REC_SYMFRAME(HP_REC_MEMBER)
};

#define HP_REC_SYMFRAME_MIN_BYTES (0 HP_REC_SYMFRAME(HP_REC_ONE))

#define HP_REC_SYMBOLS_TAIL(X) X(TAIL, uint64_t, image) /* minor 2 */

struct hp_rec_symbols_tail {
	HP_REC_SYMBOLS_TAIL(HP_REC_MEMBER)
};

void hp_rec_symaddr_put(struct hp_buf *b, const struct hp_rec_symaddr *a);
int hp_rec_symaddr_get(struct hp_cursor *c, struct hp_rec_symaddr *a);
void hp_rec_symframe_put(struct hp_buf *b, const struct hp_rec_symframe *f);
int hp_rec_symframe_get(struct hp_cursor *c, struct hp_rec_symframe *f);
/* The tail: a record from before minor 2 has none (image 0). */
void hp_rec_symbols_tail_put(struct hp_buf *b, const struct hp_rec_symbols_tail *t);
int hp_rec_symbols_tail_get(struct hp_cursor *c, struct hp_rec_symbols_tail *t);

/* --- TAGS: count x tag (minor 3) -------------------------------------- */

/* What a tag id of kind (HP_TAG_*) stands for; a, b, c and name per kind
 * in format.h (enum hp_tag_kind), unused ones 0 and "". */
#define HP_REC_TAG(X)                                                          \
	X(U, uint64_t, kind)                                                   \
	X(U, uint64_t, id)                                                     \
	X(U, uint64_t, a)                                                      \
	X(U, uint64_t, b)                                                      \
	X(U, uint64_t, c)

struct hp_rec_tag {
	HP_REC_TAG(HP_REC_MEMBER)
	struct hp_rec_str name;
};

#define HP_REC_TAG_MIN_BYTES (1 HP_REC_TAG(HP_REC_ONE))

void hp_rec_tag_put(struct hp_buf *b, const struct hp_rec_tag *t);
int hp_rec_tag_get(struct hp_cursor *c, struct hp_rec_tag *t);

/* --- TIMELINE: count x (tick, entry_count x site) (minor 4) --------- */

/* A tick of the per-site timeline: its time, a delta on the wire as a
 * sample's (*prev_ns: 0 at the start of each record, both functions move
 * it on), then entry_count sites. */
#define HP_REC_TICK(X) X(U, uint64_t, entry_count)

struct hp_rec_tick {
	uint64_t time_ns;
	HP_REC_TICK(HP_REC_MEMBER)
};

#define HP_REC_TICK_MIN_BYTES (1 HP_REC_TICK(HP_REC_ONE))

/* A bucket that changed since the previous tick of its process: its id in
 * the recorder (a key of this image's timeline, not of the snapshots), its
 * stack and size (as the bucket's in a snapshot), and what it holds in use
 * now (raw, as a snapshot's figures). */
#define HP_REC_SITE(X)                                                         \
	X(U, uint32_t, bucket)                                                 \
	X(U, uint32_t, stack_id)                                               \
	X(U, uint64_t, size)                                                   \
	X(U, uint64_t, in_use_count)                                           \
	X(U, uint64_t, in_use_bytes)

/* A site's tags (minor 5): its bucket's type_tag and origin_tag, as a
 * snapshot bucket's. A site is a repeated item, so they cannot follow its
 * fields: they stand after the record's ticks, as a u count (the record's
 * sites, all ticks together) and one pair per site in their order, where
 * a reader of minor 4 ignores them (bytes left over). A record without
 * them (minor 4) gives 0 and 0: no type, no origin. */
#define HP_REC_SITE_TAGS(X)                                                    \
	X(U, uint32_t, type_tag)                                               \
	X(U, uint32_t, origin_tag)

struct hp_rec_site {
	HP_REC_SITE(HP_REC_MEMBER)
	HP_REC_SITE_TAGS(HP_REC_MEMBER)
};

#define HP_REC_SITE_MIN_BYTES (0 HP_REC_SITE(HP_REC_ONE))
#define HP_REC_SITE_TAGS_MIN_BYTES (0 HP_REC_SITE_TAGS(HP_REC_ONE))

void hp_rec_tick_put(struct hp_buf *b, const struct hp_rec_tick *t, uint64_t *prev_ns);
/* entry_count is bounded by the bytes left. */
int hp_rec_tick_get(struct hp_cursor *c, struct hp_rec_tick *t, uint64_t *prev_ns);
/* The site's fields in its tick (HP_REC_SITE; its tags untouched by the
 * decoder). */
void hp_rec_site_put(struct hp_buf *b, const struct hp_rec_site *s);
int hp_rec_site_get(struct hp_cursor *c, struct hp_rec_site *s);
/* Its tags, after the ticks (HP_REC_SITE_TAGS); the count before them is
 * hp_rec_count_put / hp_rec_count_get (HP_REC_SITE_TAGS_MIN_BYTES). */
void hp_rec_site_tags_put(struct hp_buf *b, const struct hp_rec_site *s);
int hp_rec_site_tags_get(struct hp_cursor *c, struct hp_rec_site *s);

/* --- HISTOGRAMS: hp_rec_hists, count x hp_rec_hist (minor 4) --------- */

/* Size class c of an allocation of size bytes: 0 for 0, else the bit
 * length of size ([2^(c-1), 2^c)), the last class taking all larger. */
#define HP_HIST_SIZE_CLASSES 24
static inline unsigned hp_hist_size_class(uint64_t size)
{
	unsigned c = size ? 64 - (unsigned)__builtin_clzll(size) : 0;
	return c < HP_HIST_SIZE_CLASSES ? c : HP_HIST_SIZE_CLASSES - 1;
}

/* Lifetime class c of a block freed after age allocations (counted in
 * units of 64, live.h): 0 below 64, else [2^(c+5), 2^(c+6)), the last
 * class taking all longer. */
#define HP_HIST_LIFE_CLASSES 17
static inline unsigned hp_hist_life_class(uint64_t age)
{
	unsigned c = age >= 64 ? 64 - (unsigned)__builtin_clzll(age) - 6 : 0;
	return c < HP_HIST_LIFE_CLASSES ? c : HP_HIST_LIFE_CLASSES - 1;
}

/* Which snapshot the histograms are of (the SNAPSHOT record just before,
 * of this seq), and how many buckets: its bucket_count. */
#define HP_REC_HISTS(X)                                                        \
	X(U, uint64_t, seq)                                                    \
	X(U, uint64_t, count)

struct hp_rec_hists {
	HP_REC_HISTS(HP_REC_MEMBER)
};

/* A bucket's histograms, in the order of the snapshot's buckets: on the
 * wire u n, n x u (size classes 0..n-1, the rest 0), u m, m x u (lifetime
 * classes), trailing zero classes left out. A reader refuses n or m over
 * the classes it knows. */
struct hp_rec_hist {
	uint64_t size[HP_HIST_SIZE_CLASSES];
	uint64_t life[HP_HIST_LIFE_CLASSES];
};

void hp_rec_hists_put(struct hp_buf *b, const struct hp_rec_hists *h);
/* count is bounded by the bytes left (a bucket takes two at least). */
int hp_rec_hists_get(struct hp_cursor *c, struct hp_rec_hists *h);
void hp_rec_hist_put(struct hp_buf *b, const struct hp_rec_hist *h);
/* The bytes hp_rec_hist_put writes for a histogram whose one size class
 * size_class (1-based; 0: none) counts size_count and whose one life
 * class life_class (likewise) counts life_count, every other class 0:
 * the recorder's histogram word (aggregate.c) encoded without expanding
 * it to every class. A class past the last sets b->err to -EINVAL. */
void hp_rec_hist_put_one(struct hp_buf *b, unsigned size_class, uint64_t size_count,
			 unsigned life_class, uint64_t life_count);
int hp_rec_hist_get(struct hp_cursor *c, struct hp_rec_hist *h);
/* hp_rec_hist_get, also saying how many classes of each kind the record
 * lists (those past them are 0), for a reader that visits only those. */
int hp_rec_hist_get_n(struct hp_cursor *c, struct hp_rec_hist *v, unsigned *nsize,
		      unsigned *nlife);

/* --- BLOCKS: hp_rec_hists (seq, count), count x hp_rec_block (minor 4) */

#define HP_REC_BLOCK(X)                                                        \
	X(U, uint64_t, address)                                                \
	X(U, uint64_t, size)                                                   \
	X(U, uint32_t, stack_id)

struct hp_rec_block {
	HP_REC_BLOCK(HP_REC_MEMBER)
};

#define HP_REC_BLOCK_MIN_BYTES (0 HP_REC_BLOCK(HP_REC_ONE))

void hp_rec_block_put(struct hp_buf *b, const struct hp_rec_block *v);
int hp_rec_block_get(struct hp_cursor *c, struct hp_rec_block *v);

/* --- MAPS: hp_rec_hists (seq, count), count x hp_rec_map (minor 5) ---- */

/* A region of the address space that holds heap (format.h, MAPS): its
 * bounds [start, start + size), what it is (HP_MAP_*), its protection
 * (HP_MAP_PERM_*), its resident bytes, and the name of the mapping it is
 * part of (a path, "[heap]", "" when anonymous). */
#define HP_REC_MAP(X)                                                          \
	X(U, uint64_t, start)                                                  \
	X(U, uint64_t, size)                                                   \
	X(U, uint32_t, kind)                                                   \
	X(U, uint32_t, perms)                                                  \
	X(U, uint64_t, rss_bytes)

struct hp_rec_map {
	HP_REC_MAP(HP_REC_MEMBER)
	struct hp_rec_str name;
};

#define HP_REC_MAP_MIN_BYTES (1 HP_REC_MAP(HP_REC_ONE))

void hp_rec_map_put(struct hp_buf *b, const struct hp_rec_map *v);
/* Refuses nothing but malformed varints and a name past the payload; the
 * reader checks bounds and kinds (size 0, start + size past 2^64, rss
 * over size, an unknown kind). */
int hp_rec_map_get(struct hp_cursor *c, struct hp_rec_map *v);

/* --- the pieces every record uses ---------------------------------------- */

/* A sequence's count. */
void hp_rec_count_put(struct hp_buf *b, uint64_t n);
/* A count of items of at least min_item_bytes each: refused when more
 * than the bytes left could hold. */
int hp_rec_count_get(struct hp_cursor *c, size_t min_item_bytes, uint64_t *n);

/* A str or bytes field. */
void hp_rec_str_put(struct hp_buf *b, struct hp_rec_str s);
int hp_rec_str_get(struct hp_cursor *c, struct hp_rec_str *s);

#endif
