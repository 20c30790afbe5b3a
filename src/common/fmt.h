/*
 * fmt.h - a tiny printf for places where stdio is not allowed.
 *
 * hp_fmt formats into a caller's buffer and always NUL-terminates it. It
 * knows %s, %d, %u, %x, %c, %% and the length modifiers l, ll and z (all
 * treated as 64-bit). Allocation-free, lock-free, async-signal-safe: the
 * recorder's logger and file naming use it.
 */
#ifndef HP_COMMON_FMT_H
#define HP_COMMON_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* Returns the length written (truncated to cap - 1). */
size_t hp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t hp_fmt(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A short name for an errno value ("file exists"), async-signal-safe:
 * strerror may allocate for its locale. */
const char *hp_errname(int err);

#endif
