/*
 * options.h - the values of the recorder's options (docs/options.md): one
 * grammar and one set of ranges for both sides, so that what `heapprof run`
 * accepts is exactly what the recorder takes from its HEAPPROF_* variable,
 * and a value the recorder would replace by its default is refused before
 * anything runs.
 *
 * The recorder's own reader is src/recorder/config.c; its ranges are these
 * (HP_CONFIG_MAX_DEPTH_LIMIT is HP_OPTION_MAX_DEPTH_MAX). Numbers that may
 * take any 64-bit value (seed, dump-every, dump-high-water) go up to
 * UINT64_MAX.
 *
 * Allocation-free, lock-free, async-signal-safe, no stdio: usable in the
 * recorder.
 */
#ifndef HP_COMMON_OPTIONS_H
#define HP_COMMON_OPTIONS_H

#include <stdint.h>

#define HP_OPTION_SAMPLE_RATE_MIN 1ull
#define HP_OPTION_SAMPLE_RATE_MAX (1ull << 40)  /* 1T: one sample per TiB */
#define HP_OPTION_MAX_DEPTH_MIN 1ull
#define HP_OPTION_MAX_DEPTH_MAX 256ull          /* frames per stack */
#define HP_OPTION_MAX_STACKS_MIN 1ull
#define HP_OPTION_MAX_STACKS_MAX 2097151ull     /* distinct stacks: 2^21 - 1 */
#define HP_OPTION_INTERVAL_MS_MAX 86400000ull   /* a day */
#define HP_OPTION_TIMESERIES_MS_MAX 60000ull    /* a minute */
#define HP_OPTION_SIGNAL_MAX 64                 /* SIGRTMAX on Linux */

/* Parses a decimal number with an optional K, M or G suffix (powers of
 * 1024), then optionally i and B ("512K", "64MiB", "1GB"), into *out.
 * Returns 0, or -1 when s is not such a number or its value does not fit
 * in 64 bits (18446744073709551615 does). */
int hp_option_parse_u64(const char *s, uint64_t *out);

/* Parses a dump signal into *out: USR1, USR2, HUP, PROF, WINCH or URG, with
 * or without SIG; NONE or 0 (no dump signal, *out = 0); or a number from 1
 * to HP_OPTION_SIGNAL_MAX that a handler can catch: not SIGKILL or SIGSTOP,
 * and not 32 or 33, which glibc keeps for its threads (sigaction refuses
 * them). Returns 0 or -1. */
int hp_option_parse_signal(const char *s, int *out);

#endif
