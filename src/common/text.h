/*
 * text.h - strings from a capture made safe to show.
 *
 * Everything a capture names (the program, its arguments, module paths,
 * embedded symbols) and every name read from a binary it points to may
 * hold bytes a terminal obeys: ESC sequences that move the cursor, retitle
 * the window or rewrite what was printed, newlines that forge lines of a
 * line-based format (gperftools' MAPPED_LIBRARIES), bidi overrides that
 * reorder what is read. Outputs show such strings escaped:
 *
 *   - C0 controls (0x00-0x1f) and DEL (0x7f)            as \xNN
 *   - bytes that are not part of well-formed UTF-8       as \xNN
 *   - C1 controls (U+0080-U+009F) and the bidi controls
 *     (U+202A-U+202E, U+2066-U+2069), encoded in UTF-8   as \xNN per byte
 *
 * Everything else, other UTF-8 included, is kept. A backslash is kept as
 * it is, so escaping is idempotent: an escaped string escapes to itself
 * (a SYMBOLS record written from escaped names reads back the same).
 *
 * Strings used to open files (module paths) stay raw in the capture; only
 * what is shown is escaped. Allocation-free except hp_text_dup.
 */
#ifndef HP_COMMON_TEXT_H
#define HP_COMMON_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Whether s shows as it is (nothing to escape). */
int hp_text_is_clean(const char *s);

/* The length of s escaped (without the NUL). */
size_t hp_text_escaped_len(const char *s);

/* Writes s escaped into out[0..cap), always NUL-terminated when cap > 0,
 * cut on a whole escape when it does not fit. Returns out. */
char *hp_text_escape(char *out, size_t cap, const char *s);

/* s escaped, malloc'd; NULL when out of memory. */
char *hp_text_dup(const char *s);

/* fputs of s escaped. Returns what fputs returns. */
int hp_text_fputs(const char *s, FILE *f);

/* Copies s into out, at most max bytes of it (at least 5): when longer,
 * its head and tail around "...", cut on UTF-8 character boundaries. */
void hp_text_cut_middle(char *out, size_t cap, const char *s, size_t max);

#endif
