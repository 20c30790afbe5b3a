/*
 * units.c - sizes and counts as people read them (see units.h).
 */
#include "units.h"

#include <math.h>
#include <stdio.h>

const char *hp_units_bytes(char *buf, size_t cap, double b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (fabs(b) >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%.0f B", b);
	else
		snprintf(buf, cap, "%.1f %s", b, units[u]);
	return buf;
}

/* digits[0..len) grouped by thousands into buf, after a '-' when negative. */
static const char *grouped(char *buf, size_t cap, const char *digits, int len, int negative)
{
	char *p = buf;

	if (negative)
		*p++ = '-';
	for (int i = 0; i < len && (size_t)(p - buf) + 2 < cap; i++) {
		*p++ = digits[i];
		if ((len - i - 1) % 3 == 0 && i != len - 1)
			*p++ = ',';
	}
	*p = '\0';
	return buf;
}

const char *hp_units_count(char *buf, size_t cap, double n)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%.0f", n < 0 ? -n : n);

	if (len >= (int)sizeof digits) /* past 10^31: shown cut, never read past */
		len = (int)sizeof digits - 1;
	return grouped(buf, cap, digits, len, n < 0);
}

const char *hp_units_count_u64(char *buf, size_t cap, uint64_t n)
{
	char digits[24];
	int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);

	return grouped(buf, cap, digits, len, 0);
}
