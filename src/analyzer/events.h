/*
 * events.h - views of the event log (heapprof run --events; format.h,
 * HP_REC_EVENTS): every block with its allocation and free times and its
 * thread, selected by lifetime, time window and thread.
 *
 * A selection becomes one snapshot built from the blocks it keeps
 * (hp_events_apply), appended to the capture's image, so that every view
 * built on a snapshot (report, flamegraph, folded and pprof export, diff)
 * shows it unchanged: the blocks allocated in the window (the whole run by
 * default) by the chosen threads that lived as long as asked; freed: those
 * of them freed in the window; in use: those left at its end; peak: the
 * most their bytes in use reached in it.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_EVENTS_H
#define HP_ANALYZER_EVENTS_H

#include <stdint.h>
#include <stdio.h>

#include "../format/capture.h"

/* What to keep of the log (heapprof report --lived-under and the rest).
 * Times in ns since the capture's start. */
struct hp_events_select {
	int on; /* any option below given */
	int lived_under, lived_over;
	uint64_t under_ns, over_ns; /* freed after less than under_ns; lived more than over_ns
				     * (a block left at the end: by the end) */
	int between;
	uint64_t from_ns, to_ns; /* the window [from_ns, to_ns] */
	const char *thread;      /* only blocks allocated by threads of this name (or
				  * "tid N"), or NULL */
};

/* A block of the log. free_ns UINT64_MAX: left at the end of the log. */
struct hp_ev_block {
	uint64_t addr, size, alloc_ns, free_ns;
	uint32_t stack_id, type_tag, origin_tag, thread;
};

/* What a window saw (the selection's threads and lifetimes applied). */
struct hp_events_window {
	uint64_t alloc_count, alloc_bytes;   /* allocated in it */
	uint64_t free_count, free_bytes;     /* freed in it, wherever allocated */
	uint64_t before_count, before_bytes; /* of those, allocated before it */
	uint64_t left_count, left_bytes;     /* allocated in it, live at its end */
	uint64_t from_ns, to_ns;
};

/* Whether the selected image was recorded with the log (META flag). */
int hp_events_has_log(const struct hp_capture *cap);

/* Parses a duration: a decimal number and a unit, ns, us, ms, s or min
 * ("10ms", "1.2s"; 0 alone). Returns 0 or -EINVAL. */
int hp_events_parse_duration(const char *s, uint64_t *ns);

/* The blocks of the log, matched free to allocation by address
 * (events_int.h), every block once, by allocation time, then address,
 * then the order of the allocations at one address. The reader holds 4
 * bytes an event (each allocation's closing event) and the blocks open
 * at once, never the blocks themselves. */
struct hp_events_blocks;

/* Reads cap's log for hp_events_blocks_next; *end_ns: the end of the
 * log's time (its latest event or the last snapshot). Returns 0 or
 * -ENOMEM; *out is the caller's to close. */
int hp_events_blocks_open(const struct hp_capture *cap, struct hp_events_blocks **out,
			  uint64_t *end_ns);
/* The next block into *b: 1, or 0 after the last. */
int hp_events_blocks_next(struct hp_events_blocks *it, struct hp_ev_block *b);
/* Back to the first block. */
void hp_events_blocks_rewind(struct hp_events_blocks *it);
void hp_events_blocks_close(struct hp_events_blocks *it);

/* Whether block b passes sel (thread and lifetime; not the window). */
int hp_events_keep(const struct hp_capture *cap, const struct hp_events_select *sel,
		   const struct hp_ev_block *b, uint64_t end_ns);

/* Appends to cap's selected image a snapshot of the blocks sel keeps (see
 * above) and selects it as the last; *w (may be NULL) gets the window's
 * figures. Returns 0, -ENODATA with err set to "the capture has no event
 * log: record with heapprof run --events", -EINVAL (a window that ends
 * before it starts), or -ENOMEM. */
int hp_events_apply(struct hp_capture *cap, const struct hp_events_select *sel,
		    struct hp_events_window *w, char *err, size_t errlen);

/* Whether block b is listed by report --blocks: sel keeps it (thread,
 * lifetime) and it was allocated or freed in sel's window. */
int hp_events_listed(const struct hp_capture *cap, const struct hp_events_select *sel,
		     const struct hp_ev_block *b, uint64_t end_ns);

/* A block's thread as the views name it: its name, else "tid N", else
 * "(unknown thread)"; and its type tag's name, else "vtable 0x...", else
 * "unknown". buf (cap bytes) may hold the result. */
const char *hp_events_thread_name(const struct hp_capture *cap, uint32_t id, char *buf,
				  size_t cap_);
const char *hp_events_type_name(const struct hp_capture *cap, uint32_t id, char *buf,
				size_t cap_);

/* report --blocks: a header and one line per block listed
 * (hp_events_listed), by allocation time: address, size, type, thread,
 * allocation and free times (s), lifetime, stack id; the first limit
 * blocks (0: all), then, when more were listed, one line "... N more
 * blocks (--top 0 lists them all)". Returns 0 or -errno. */
int hp_events_print_blocks(FILE *f, const struct hp_capture *cap,
			   const struct hp_events_select *sel, size_t limit);

/* One line on the window's figures, for report (text). */
void hp_events_print_window(FILE *f, const struct hp_events_window *w);

#endif
