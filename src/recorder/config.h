/*
 * config.h - the recorder's options, read once from HEAPPROF_* variables.
 *
 * `heapprof run` turns its command-line options into these variables, so a
 * user who sets LD_PRELOAD by hand has every option too; docs/options.md
 * lists them. Parsed at init with getenv and without allocation; a bad
 * value is reported in one line and replaced by the default.
 */
#ifndef HP_RECORDER_CONFIG_H
#define HP_RECORDER_CONFIG_H

#include <stdint.h>

#define HP_CONFIG_PATH_MAX 4096
#define HP_CONFIG_MAX_DEPTH_LIMIT 256 /* = HP_OPTION_MAX_DEPTH_MAX */

struct hp_config {
	uint64_t sample_rate_bytes;  /* HEAPPROF_SAMPLE_RATE, 1 = every allocation */
	unsigned unwind;             /* HEAPPROF_UNWIND: dwarf (default) or fp */
	int unwind_cache;            /* HEAPPROF_UNWIND_CACHE, default 1: DWARF walks
				      * through the rule cache (0: libunwind only) */
	int unwind_check;            /* HEAPPROF_UNWIND_CHECK=1: every cached walk
				      * compared with libunwind's (unwind.h) */
	unsigned max_depth;          /* HEAPPROF_MAX_DEPTH, default 128 */
	unsigned max_stacks;         /* HEAPPROF_MAX_STACKS, default 2^21 - 1:
				      * distinct stacks the table holds */
	int follow_fork;             /* HEAPPROF_FOLLOW_FORK=1 */
	int dump_signal;             /* HEAPPROF_DUMP_SIGNAL, default SIGUSR2, 0 = none */
	unsigned interval_ms;        /* HEAPPROF_INTERVAL_MS, 0 = none */
	uint64_t dump_every_bytes;   /* HEAPPROF_DUMP_EVERY_BYTES, 0 = none */
	uint64_t high_water_bytes;   /* HEAPPROF_DUMP_HIGH_WATER_BYTES, 0 = none */
	unsigned timeseries_ms;      /* HEAPPROF_TIMESERIES_MS, default 10, 0 = none */
	int live_blocks;             /* HEAPPROF_LIVE_BLOCKS=1: each snapshot lists
				      * the live blocks (BLOCKS record) */
	int events;                  /* HEAPPROF_EVENTS=1: the event log (events.h,
				      * EVENTS records) */
	unsigned timeline_ms;        /* HEAPPROF_TIMELINE_MS, default 100, 0 = none:
				      * the per-site timeline's period */
	uint64_t seed;               /* HEAPPROF_SEED, 0 = from the clock */
	int quiet;                   /* HEAPPROF_QUIET=1 */
	int types;                   /* HEAPPROF_TYPES, default 1: C++ dynamic types
				      * read from live blocks at snapshots (0: not) */
	int mmap;                    /* HEAPPROF_MMAP=1: anonymous mmap, munmap,
				      * mremap and the program's brk/sbrk recorded
				      * as the "mmap" heap (interpose_mmap.c) */
	int shadowed;                /* not from the environment: another
				      * library's malloc comes first (recorder.c) */
	int claimed_pid;             /* HEAPPROF_OUTPUT_CLAIMED: the recorded process
				      * that started the run (see recorder.c) */
	int attached;                /* not from the environment: started by
				      * heapprof attach (attach.c): no signal of the
				      * program's is touched */
	uint64_t start_ns;           /* not from the environment: when the recorder
				      * started (monotonic), the one origin of the
				      * capture's times (recorder.c sets it) */
	char output[HP_CONFIG_PATH_MAX]; /* HEAPPROF_OUTPUT, "" = default name */
	char roster[HP_CONFIG_PATH_MAX]; /* HEAPPROF_ROSTER: where each followed process
					  * enlists (heapprof run --follow-fork), "" = none */
};

/* Fills c from the environment. Logs each bad value (hp_log). No
 * allocation (getenv and the shared parsers), no lock; not thread-safe
 * against setenv. Called once at start. */
void hp_config_load(struct hp_config *c);
/* Makes hp_config_load read its variables from block instead of the
 * environment: NAME=VALUE strings, each ended by a NUL, the block by an
 * empty one (heapprof attach passes its options so; NULL: the environment
 * again). block must stay valid until hp_config_load has run. No
 * allocation, no lock; not thread-safe. */
void hp_config_set_source(const char *block);

#endif
