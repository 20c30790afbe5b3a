/*
 * log.h - the recorder's diagnostics.
 *
 * One line per message on stderr, "heapprof: ..." , formatted into a stack
 * buffer with hp_fmt and written with write(2): no stdio, no allocation,
 * async-signal-safe. Rate-limited: after HP_LOG_MAX_LINES lines the recorder
 * says it goes quiet and does. Silenced entirely by HEAPPROF_QUIET=1.
 */
#ifndef HP_RECORDER_LOG_H
#define HP_RECORDER_LOG_H

#define HP_LOG_MAX_LINES 20

void hp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hp_log_set_quiet(int quiet);

#endif
