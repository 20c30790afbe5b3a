/*
 * demangle.c - C++ and Rust names (see demangle.h).
 *
 * A legacy Rust name is also a valid C++ name, so Rust is tried first on
 * every _Z name: libiberty's Rust demangler accepts only names that end in
 * Rust's hash and decodes Rust's escapes ($LT$, $u20$, ..); it leaves out
 * the hash and v0's crate disambiguators. Everything else that starts as a
 * C++ name goes to __cxa_demangle, not to libiberty's C++ demangler:
 * Debian's libiberty (20230104) and libstdc++ 12 write some decltype
 * expressions differently (6 of libLLVM-14's 38,055 C++ names), and C++
 * names must not change (tests/unit/test_demangle.c compares them). Names
 * that are neither ("main", "_GLOBAL__sub_I_x") are left as they are.
 */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

/* libstdc++'s demangler (the C++ ABI's). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *hp_demangle(const char *name)
{
	char *d;
	int status = -1;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
	if (d || name[1] == 'R')
		return d;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (d && status != 0) {
		free(d);
		d = NULL;
	}
	return d;
}
