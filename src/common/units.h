/*
 * units.h - sizes and counts as people read them, for every output of the
 * analyzer and the command line: "3.0 MiB", "700 B", "1,862".
 *
 * Uses snprintf: ordinary C, never linked into the recorder (whose logger
 * has fmt.h).
 */
#ifndef HP_COMMON_UNITS_H
#define HP_COMMON_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* A byte figure: "%.0f B" below 1024 (in absolute value), else one
 * decimal in the largest binary unit up to TiB ("48.8 KiB", "-3.0 MiB").
 * Writes buf[0..cap); returns buf. */
const char *hp_units_bytes(char *buf, size_t cap, double bytes);

/* A count rounded to an integer, its digits grouped by thousands
 * ("-1,234,567"). Numbers past 10^31 are shown cut, never read past; a
 * buffer too small cuts the text. Returns buf. */
const char *hp_units_count(char *buf, size_t cap, double n);

/* The same for an exact 64-bit count ("18,446,744,073,709,551,615"). */
const char *hp_units_count_u64(char *buf, size_t cap, uint64_t n);

#endif
