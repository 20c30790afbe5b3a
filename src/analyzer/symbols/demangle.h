/*
 * demangle.h - symbol names as people write them: C++ (the Itanium ABI's
 * _Z names) and Rust, both its legacy mangling (_ZN...17h<hash>E, shown
 * without the hash) and v0 (_R...).
 *
 * Rust goes through libiberty's cplus_demangle with DMGL_RUST (the
 * demangler binutils' c++filt and nm -C use), C++ through libstdc++'s
 * __cxa_demangle, as before (see demangle.c for why not libiberty for both).
 */
#ifndef HP_ANALYZER_DEMANGLE_H
#define HP_ANALYZER_DEMANGLE_H

/* The demangled name (malloc'd, the caller frees it), or NULL when name is
 * not a C++ or Rust symbol or cannot be demangled (out of memory included).
 * Thread-safe; allocates. */
char *hp_demangle(const char *name);

#endif
