/*
 * symbolize.h - frame addresses to functions, files and lines.
 *
 * One symbolizer serves one capture. Each module of the capture is opened
 * once, lazily, with elfutils' libdwfl at the capture's load bias; its
 * build-id is compared with the one the recorder read in memory, and a
 * binary that changed since the run is refused (the module is then shown as
 * module+offset). Separate debug info is found the standard ways (build-id
 * and .gnu_debuglink under /usr/lib/debug, and an optional extra directory).
 * Names are demangled (C++, and Rust's legacy and v0 manglings: demangle.h).
 *
 * Addresses are return addresses: the symbolizer looks up address - 1, the
 * call instruction, so a call that ends its function is not attributed to
 * the next one.
 *
 * Allocates; not thread-safe; owns every string it returns until freed.
 */
#ifndef HP_ANALYZER_SYMBOLIZE_H
#define HP_ANALYZER_SYMBOLIZE_H

#include <stdint.h>

#include "../../format/capture.h"
#include "sym.h"

struct hp_symbolizer;

struct hp_symcache;

/* What hp_symbolizer_new's flags ask for. */
#define HP_SYMBOLIZE_EMBEDDED 1u /* a capture that carries a SYMBOLS record answers from
				  * it, and no binary is opened for code addresses */
#define HP_SYMBOLIZE_NO_FILES 2u /* no file is ever opened (no binary, no debug info, no
				  * symbol cache): what the SYMBOLS record does not name
				  * is module+offset, a data symbol is unknown. For a
				  * capture from anywhere that must be read alone (the
				  * fuzz targets) */

/* debug_dir may be NULL; flags are HP_SYMBOLIZE_*. Returns 0 or -ENOMEM. */
int hp_symbolizer_new(struct hp_symbolizer **out, const struct hp_capture *cap,
		      const char *debug_dir, unsigned flags);

/* Gives the symbolizer a symbol cache (symcache.h), before its first
 * lookup: unless it answers from a SYMBOLS record, addresses are looked
 * up there first, and what the binaries answer is stored in it
 * (hp_symcache_flush writes it). The cache must outlive the symbolizer.
 * Without one, every address is read from the binaries. A symbolizer
 * made with HP_SYMBOLIZE_NO_FILES takes none. */
void hp_symbolizer_set_cache(struct hp_symbolizer *s, struct hp_symcache *cache);
void hp_symbolizer_free(struct hp_symbolizer *s);

/* Fills out[0..max) with the frames at a return address in module
 * mod_index (-1: none), innermost (inlined) first, and *count with how
 * many (at least 1: an unknown function is named "0x<offset>" in its
 * module). Returns 0, or -ENOMEM when an allocation failed (out and
 * *count are then not to be used: no placeholder name stands in for what
 * could not be stored). */
int hp_symbolizer_lookup(struct hp_symbolizer *s, int mod_index, uint64_t address,
			 struct hp_sym *out, int max, int *count);

/* The raw (mangled) name of the ELF symbol of module mod_index that
 * contains address (a data address such as a vtable's, as recorded: no
 * return-address adjustment), or NULL. Reads the module's binary even when
 * the capture carries embedded symbols (they name code addresses only).
 * The string lives as long as the symbolizer. */
const char *hp_symbolizer_data_symbol(struct hp_symbolizer *s, int mod_index, uint64_t address);

/* The type a new-expression (or malloc) at a return address of module
 * mod_index allocates, from its DWARF: the one variable of the innermost
 * function, or of its blocks that hold the call, declared on the call's
 * line (file and line: the innermost frame's), when it is a pointer to a
 * type of known size (`T *p = new T(...)`, `char *buf = new char[n]`,
 * `struct node *n = malloc(sizeof *n)`). Writes the type's name (the
 * spelling its DWARF has, qualified), *elem_bytes (its size) and
 * *cookie_bytes (new T[n]'s array cookie when T declares a destructor,
 * else 0), and returns 1; else 0. Opens the module's binary, even when
 * the capture embeds its symbols; costs a walk of the function's DIEs. */
int hp_symbolizer_new_type(struct hp_symbolizer *s, int mod_index, uint64_t address,
			   const char *file, uint32_t line, char *out, size_t cap,
			   uint64_t *elem_bytes, uint64_t *cookie_bytes);

/* How the module's symbols were found (after its first lookup). */
enum hp_module_status hp_symbolizer_status(struct hp_symbolizer *s, int mod_index);

/* A copy of str, escaped for display (text.h), that lives as long as the
 * symbolizer. Every name the symbolizer returns is escaped so. Out of
 * memory it answers "?" (model.c's module names: the one caller left that
 * cannot tell; docs/internals/errors.md). */
const char *hp_symbolizer_intern(struct hp_symbolizer *s, const char *str);

#endif
