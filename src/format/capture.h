/*
 * capture.h - a capture file loaded into memory: the analyzer's view of
 * what the recorder wrote.
 *
 * hp_capture_load reads every record it can; damage (a corrupt record, a
 * truncated end) is kept as messages in damage[], and whatever is intact is
 * still loaded, so callers can show what is readable and say what is not.
 * Only a file that is not a capture at all (or unreadable) fails.
 *
 * A capture holds one image per META record (a process that exec'd; see
 * format.h, "Images"): images[] keeps each apart, and the capture's own
 * fields show one of them (hp_capture_select), so that everything that
 * reads a capture analyses one program, never a mix of two.
 *
 * Ordinary analyzer C: allocates with malloc, owns everything it returns,
 * not thread-safe.
 */
#ifndef HP_FORMAT_CAPTURE_H
#define HP_FORMAT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"

#define HP_CAP_MAX_SEGMENTS 16
#define HP_CAP_MAX_DAMAGE 16
#define HP_CAP_MAX_DEPTH 256 /* frames per stack a reader accepts */
/* The reader's memory bound: what it holds for a capture's content never
 * passes HP_CAP_MEM_FACTOR times the file's size plus HP_CAP_MEM_BASE_BYTES
 * (see hp_capture.mem_bytes); a lean load (HP_CAP_LOAD_INTERN) holds less
 * and is charged the same, its index of distinct addresses aside (about
 * 70 bytes an address, uncharged). */
#define HP_CAP_MEM_FACTOR 256
#define HP_CAP_MEM_BASE_BYTES (16u << 20)

struct hp_cap_module {
	uint32_t id;
	char *path;
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t bias;
	uint32_t nseg;
	struct hp_rec_segment seg[HP_CAP_MAX_SEGMENTS]; /* the first of its segments */
	uint64_t load_ns, unload_ns;
	int unloaded;
};

struct hp_cap_stack {
	uint32_t depth;
	uint64_t *frames; /* innermost first; return addresses; NULL when the
			   * capture is loaded with HP_CAP_LOAD_INTERN */
	/* With HP_CAP_LOAD_INTERN: the frames as indexes into the image's
	 * addrs[] (read them with hp_cap_frame); else NULL. */
	uint32_t *addr_index;
};

/* A SNAPSHOT record: the schema's fields (records.h) flat, its lost counts
 * by reason, its buckets as the schema has them. */
struct hp_cap_snapshot {
	HP_REC_SNAPSHOT(HP_REC_MEMBER)
	HP_REC_SNAPSHOT_TAIL(HP_REC_MEMBER) /* recorder_bytes: 0 before format 1.1 */
	uint64_t lost_count[HP_LOST_KINDS], lost_bytes[HP_LOST_KINDS];
	size_t nbuckets;
	struct hp_rec_bucket *buckets; /* NULL with HP_CAP_LOAD_BUCKETS_ENCODED */
	/* With HP_CAP_LOAD_BUCKETS_ENCODED: the buckets as the record holds
	 * them (nbuckets x hp_rec_bucket_get, each checked as loaded), about
	 * 16 bytes a bucket where the struct takes 88. */
	uint8_t *buckets_enc;
	size_t buckets_enc_len;
	/* Each custom heap's own peak (format 1.3; none before). */
	size_t nheaps;
	struct hp_rec_heap_peak *heaps;
	/* The buckets' size and lifetime histograms (HISTOGRAMS, format 1.4;
	 * NULL before, or when lost), kept sparse: bucket i's nonzero classes
	 * are hist[hist_first[i] .. hist_first[i + 1]); read them with
	 * hp_capture_hist. */
	uint32_t *hist_first; /* nbuckets + 1 */
	struct hp_cap_hclass *hist;
	/* The live blocks (BLOCKS, format 1.4, with --live-blocks), sorted by
	 * address, each once; has_blocks 0 when the snapshot has none. */
	int has_blocks;
	int hists_read; /* the loader's: its HISTOGRAMS record was read (kept or not) */
	size_t nblocks;
	struct hp_rec_block *blocks;
	/* The regions that hold the heap (MAPS, format 1.5, with
	 * --live-blocks), by address, none overlapping, each checked (size
	 * above 0, rss_bytes at most size, a known kind); has_maps 0 when
	 * the snapshot has none. */
	int has_maps;
	size_t nmaps;
	struct hp_cap_map *maps;
};

/* A MAPS region: the schema's fields (records.h), its name a string. */
struct hp_cap_map {
	HP_REC_MAP(HP_REC_MEMBER)
	char *name; /* NUL-terminated; "" when anonymous */
};

/* A nonzero class of a bucket's histograms: which (HP_CAP_HIST_SIZE or
 * _LIFE) and its class, and its count. */
enum { HP_CAP_HIST_SIZE = 0, HP_CAP_HIST_LIFE = 1 };
struct hp_cap_hclass {
	uint8_t which, cls;
	uint64_t count;
};

/* Bucket i's histograms into *out (all 0 when the snapshot has none).
 * Returns whether it has them. Pure. */
int hp_capture_hist(const struct hp_cap_snapshot *s, size_t i, struct hp_rec_hist *out);

/* What a tag id names (TAGS records, format 1.3): a, b, c and name as the
 * record's (format.h, enum hp_tag_kind). tags[kind][id]; entry 0 and ids
 * never defined have defined 0. */
struct hp_cap_tag {
	uint64_t a, b, c;
	char *name; /* NUL-terminated; "" when none */
	int defined;
};

/* HP_TAG_* kinds, 1 .. HP_TAG_KINDS-1, index tags[] and ntags[] below. The
 * reader accepts ids up to HP_CAP_MAX_TAG_ID per kind. */
#define HP_CAP_MAX_TAG_ID (1u << 24)

/* Symbols embedded by the analyzer (HP_REC_SYMBOLS); frames are the
 * schema's (struct hp_rec_symframe). */

struct hp_cap_symaddr {
	uint64_t address;
	uint32_t first, count; /* frames[first .. first + count) */
};

struct hp_cap_symbols {
	size_t nstrings;
	char **strings;
	size_t nstatus;
	uint64_t *status;          /* per module, HP_SYMSTATUS_* */
	size_t naddrs;
	struct hp_cap_symaddr *addrs; /* sorted by address */
	size_t nframes;
	struct hp_rec_symframe *frames;
};

/* A tick of the per-site timeline (format.h, HP_REC_TIMELINE): its time
 * and its entries, sites[first .. first + count) of the image: the buckets
 * changed since the tick before, with what each holds in use then.
 *
 * A bucket id names one key through the image's timeline, as the recorder
 * writes it: every entry of a bucket has the stack_id and size of its
 * first entry in the file, and the same tags where both are tagged. The
 * views rely on it (timeline.c sizes a site's points by the entries that
 * name its stack and fills them by its buckets' stacks); the loader drops
 * an entry that contradicts its bucket's first and says so in damage[]. */
struct hp_cap_tick {
	uint64_t time_ns;
	size_t first, count;
	int tagged; /* its record carried the sites' type and origin tags (format
		     * 1.5); else they read 0, unknown */
};

/* An event of the log (EVENTS, format 1.6, with --events): kind
 * HP_EV_ALLOC, an allocation with its block's bucket key; HP_EV_FREE, a
 * free (size 0, no key: the block is the allocation of its address before
 * it); HP_EV_RETYPE, the live block at addr moved to the bucket key (its
 * type named). tick: the recorder's counter (hp_capture_event_ns
 * converts). */
struct hp_cap_event {
	uint64_t tick;
	uint64_t addr, size;
	uint32_t stack_id, type_tag, origin_tag, thread; /* thread: HP_TAG_THREAD id */
	uint8_t kind;
};

/* The log's clock: the counter at the log's start and at the latest
 * record's flush, with the ns since the capture's start at each. */
struct hp_cap_evclock {
	uint64_t tick_origin, ns_origin, tick_at, ns_at;
};

/* What an image holds for the HP_CAP_LOAD_* flags (hp_capture_load_flags):
 * apart, so that the loader charges the image as it did without them. */
struct hp_cap_image_lean {
	/* With HP_CAP_LOAD_INTERN: every distinct frame address of the
	 * image's stacks, in the order the file first names it (stack by
	 * stack, innermost frame first). */
	size_t naddrs;
	uint64_t *addrs;
	struct hp_cap_arena *arena;   /* the stacks' addr_index lists, in blocks */
	struct hp_cap_intern *intern; /* the loader's: the addresses' index */
};

/* One image: what one program of the process recorded, from a META
 * record up to the next META (format.h, "Images"). A process that execs
 * keeps its capture file: the new program appends a META of its own and
 * its own modules, stacks (ids from 1 again), time series and snapshots
 * (seq from 1 again). Records before the first intact META (it was lost to
 * damage) form image 0 without a META. */
struct hp_cap_image {
	int has_meta;
	HP_REC_META_PROCESS(HP_REC_MEMBER) /* META's fields (records.h), flat */
	char *program;
	size_t argc;
	char **argv;
	char *recorder_version;
	HP_REC_META_OPTIONS(HP_REC_MEMBER)

	size_t nmodules;
	struct hp_cap_module *modules;
	size_t nstacks; /* ids 0..nstacks-1; 0 is "no stack" */
	struct hp_cap_stack *stacks;
	size_t nsnapshots;
	struct hp_cap_snapshot *snapshots;
	size_t nsamples;
	struct hp_rec_sample *samples;
	size_t nticks, nsites; /* the timeline, in the file's order */
	struct hp_cap_tick *ticks;
	struct hp_rec_site *sites;
	size_t ntags[HP_TAG_KINDS]; /* ids 0 .. ntags[kind]-1 */
	struct hp_cap_tag *tags[HP_TAG_KINDS];

	int has_symbols;
	struct hp_cap_symbols symbols; /* the last SYMBOLS record for this image */

	/* The event log, in the file's order (each thread's events in its
	 * order; threads' chunks interleave), and its clock. */
	size_t nevents;
	struct hp_cap_event *events;
	struct hp_cap_evclock evclock;

	size_t nrecords; /* intact records of this image (SYMBOLS not counted) */
	size_t alloc_events;
	size_t alloc_modules, alloc_stacks, alloc_snapshots, alloc_samples; /* the loader's */
	size_t alloc_ticks, alloc_sites;
	size_t alloc_tags[HP_TAG_KINDS];
	struct hp_cap_tl_keys *tl_keys; /* the loader's: each timeline bucket's first key */
	struct hp_cap_image_lean lean;
};

struct hp_capture {
	/* The selected image (hp_capture_select; by default the last one that
	 * holds a snapshot, else the last): every field down to symbols is a
	 * copy of images[image]'s, borrowing its memory. Every analysis reads
	 * these, so one image is analysed at a time, never a mix. */
	int has_meta;
	HP_REC_META_PROCESS(HP_REC_MEMBER) /* META's fields (records.h), flat */
	char *program;
	size_t argc;
	char **argv;
	char *recorder_version;
	HP_REC_META_OPTIONS(HP_REC_MEMBER)

	size_t nmodules;
	struct hp_cap_module *modules;
	size_t nstacks; /* ids 0..nstacks-1; 0 is "no stack" */
	struct hp_cap_stack *stacks;
	size_t nsnapshots;
	struct hp_cap_snapshot *snapshots;
	size_t nsamples;
	struct hp_rec_sample *samples;
	size_t nticks, nsites; /* the per-site timeline (hp_cap_tick) */
	struct hp_cap_tick *ticks;
	struct hp_rec_site *sites;
	size_t ntags[HP_TAG_KINDS]; /* TAGS: tags[kind][id], ids below ntags[kind] */
	struct hp_cap_tag *tags[HP_TAG_KINDS];

	int has_symbols;
	struct hp_cap_symbols symbols; /* the last SYMBOLS record for this image */

	size_t naddrs; /* with HP_CAP_LOAD_INTERN (hp_cap_image) */
	uint64_t *addrs;

	size_t nevents; /* the event log (hp_cap_image) */
	struct hp_cap_event *events;
	struct hp_cap_evclock evclock;

	size_t image;   /* which image the fields above are */
	size_t nimages; /* 0 only for a file with no record at all */
	struct hp_cap_image *images; /* owned */

	size_t file_bytes;
	unsigned load_flags; /* HP_CAP_LOAD_* it was loaded with */
	/* Bytes the reader allocated for the content (malloc chunks counted
	 * whole), and its bound: HP_CAP_MEM_FACTOR x file_bytes +
	 * HP_CAP_MEM_BASE_BYTES. A record that would pass it is refused as
	 * damage, whatever it claims; mem_refused is the reader's flag. */
	size_t mem_bytes, mem_limit_bytes;
	int mem_refused;
	/* What is wrong with the record being read, when its parser says
	 * more than "malformed" (a static string). */
	const char *why;
	/* What the parser of the record being read left out of it while it
	 * kept the rest (one line, without the offset), or "". */
	char left_out[200];
	size_t nrecords;
	size_t ndamage; /* may exceed HP_CAP_MAX_DAMAGE; only the first are kept */
	char *damage[HP_CAP_MAX_DAMAGE];
};

/* Loads path. Returns 0 (check ndamage), or -errno with err set to one line
 * ("<path>: what is wrong") when the file cannot be read as a capture. */
int hp_capture_load(const char *path, struct hp_capture *cap, char *err, size_t errlen);

/* What a caller that reads less of a capture may load it without
 * (hp_capture_load_flags). Each record is read and checked as without
 * them, and charged the same against the memory bound (hp_capture.
 * mem_bytes): the same records load, the same damage is said. */
#define HP_CAP_LOAD_INTERN 1u       /* each stack's frames as indexes into the image's
				     * distinct addresses (hp_cap_stack.addr_index,
				     * hp_cap_frame), in blocks: 4 bytes a frame, no
				     * malloc a stack (frames NULL) */
#define HP_CAP_LOAD_NO_TIMELINE 2u  /* no tick or site kept (nticks, nsites 0), as
				     * after hp_capture_release(HP_CAP_PART_TIMELINE) */
#define HP_CAP_LOAD_NO_HISTOGRAMS 4u /* no snapshot's histograms kept (hist_first NULL) */
#define HP_CAP_LOAD_BUCKETS_ENCODED 8u /* each snapshot's buckets kept as encoded
					* (buckets NULL, buckets_enc), for a caller
					* that reads them once, in order, with
					* hp_rec_bucket_get (a diff's model) */

/* hp_capture_load with HP_CAP_LOAD_* flags (0: hp_capture_load). */
int hp_capture_load_flags(const char *path, unsigned flags, struct hp_capture *cap, char *err,
			  size_t errlen);

/* The same for a capture already in memory: data[0..size) is borrowed for
 * the call only (everything in cap is a copy). Returns 0 (check ndamage), or
 * -errno with err set to what is wrong, without a file name. */
int hp_capture_load_mem(const uint8_t *data, size_t size, struct hp_capture *cap, char *err,
			size_t errlen);
int hp_capture_load_mem_flags(const uint8_t *data, size_t size, unsigned flags,
			      struct hp_capture *cap, char *err, size_t errlen);

/* Frame k of stack s of cap's selected image (k below s->depth), however
 * it was loaded. Pure. */
static inline uint64_t hp_cap_frame(const struct hp_capture *cap, const struct hp_cap_stack *s,
				    uint32_t k)
{
	return s->frames ? s->frames[k] : cap->addrs[s->addr_index[k]];
}

/* With HP_CAP_LOAD_INTERN: frees the addr_index blocks that hold only
 * stacks of the selected image below id upto, for a caller that reads
 * each stack once, in id order, and none again, emptying each as it goes
 * (the model's build, hp_model_options.release_frames). Once upto passes
 * the last stack, the stack table goes too: stacks NULL, nstacks kept. */
void hp_capture_release_stacks(struct hp_capture *cap, size_t upto);

void hp_capture_free(struct hp_capture *cap);

/* Parts of the selected image that a caller may give back once it knows
 * that nothing it does reads them (hp_capture_release). */
#define HP_CAP_PART_TIMELINE 1u   /* ticks and sites: the per-site timeline */
#define HP_CAP_PART_HISTOGRAMS 2u /* every snapshot's hist_first and hist */
#define HP_CAP_PART_BUCKETS 4u    /* every snapshot's buckets (nbuckets 0), and
				   * with them their histograms */

/* Frees parts (HP_CAP_PART_*) of the selected image: they then read as a
 * capture without them (nticks, nsites 0; hist_first NULL). What loading
 * found stays (damage, mem_bytes). A million stacks: the timeline holds
 * 40 bytes a stack, the histograms 32, the buckets 88. */
void hp_capture_release(struct hp_capture *cap, unsigned parts);

/* Makes image (0 = the first) the one cap's fields show. Returns 0, or
 * -EINVAL when there is no such image (the selection is then unchanged). */
int hp_capture_select(struct hp_capture *cap, size_t image);

/* The image selected on loading: the last that holds a snapshot (the
 * program an exec'ing wrapper ran), else the last. */
size_t hp_capture_default_image(const struct hp_capture *cap);

/* The tag of kind (HP_TAG_*) and id, or NULL when the capture does not
 * define it (id 0 is never defined). */
const struct hp_cap_tag *hp_capture_tag(const struct hp_capture *cap, unsigned kind, uint64_t id);
/* The time of an event's tick, in ns since the capture's start: on the
 * line through the log's clock points (before the log's start: 0). Pure. */
uint64_t hp_capture_event_ns(const struct hp_capture *cap, uint64_t tick);

/* The last snapshot, or NULL when the file has none. */
const struct hp_cap_snapshot *hp_capture_last(const struct hp_capture *cap);

/* The module whose segments contain addr (any module loaded at any time,
 * latest first), or NULL. */
const struct hp_cap_module *hp_capture_module_of(const struct hp_capture *cap, uint64_t addr);

/* The embedded frames of an address, or NULL. */
const struct hp_cap_symaddr *hp_capture_symbols_of(const struct hp_capture *cap, uint64_t addr);

/* The reason of a snapshot the analyzer made from the event log
 * (analyzer/events.h), never in a file. */
#define HP_CAP_SNAP_EVENTS 1000

/* A name for a snapshot reason, lost reason. */
const char *hp_capture_reason_name(uint64_t reason);
const char *hp_capture_lost_name(unsigned reason);

#endif
