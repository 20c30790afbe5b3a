/*
 * say.c - one-line messages on stderr (say.h).
 */
#include "say.h"

#include <stdarg.h>
#include <stdio.h>

void hp_say_error(const char *fmt, ...)
{
	va_list ap;

	fputs("heapprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
