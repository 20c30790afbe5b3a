/*
 * log.h - the recorder's diagnostics.
 *
 * One line per message on stderr, "heapprof: ..." , formatted into a stack
 * buffer with hp_fmt and written with write(2): no stdio, no allocation,
 * async-signal-safe. Rate-limited: after HP_LOG_MAX_LINES lines the recorder
 * says it goes quiet and does. Silenced entirely by HEAPPROF_QUIET=1.
 * Written only while descriptor 2 is still the file it was when the
 * recorder started: a program that closes its stderr and opens a file of
 * its own (its log) at that number never finds our lines in it.
 */
#ifndef HP_RECORDER_LOG_H
#define HP_RECORDER_LOG_H

#define HP_LOG_MAX_LINES 20

/* One line, "heapprof: " and fmt (hp_fmt's subset of printf), on stderr.
 * Async-signal-safe, no allocation, no lock (an atomic line count). */
void hp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Called once at start: silences the log, or remembers what stderr is.
 * Not thread-safe; no allocation, no lock. */
void hp_log_set_quiet(int quiet);

#endif
