/*
 * symtab.h - a module's ELF symbol table, sorted once, searched per address.
 *
 * libdwfl's dwfl_module_addrname reads the whole symbol table for every
 * address it is asked about: on libLLVM's or libclang-cpp's tens of
 * thousands of symbols, and thousands of addresses, that is seconds. This
 * table is built once per module from the same symbols (libdwfl's choice of
 * .symtab, .dynsym and the auxiliary MiniDebugInfo table, with the same
 * address adjustment) and answers each address with binary searches.
 *
 * hp_symtab_lookup returns the name dwfl_module_addrname would have
 * returned, by the same rules (elfutils 0.188, libdwfl/dwfl_module_addrsym.c,
 * as dwfl_module_addrinfo):
 * global and weak symbols first, local ones only if none of those contains
 * the address; among the symbols that contain it, the one that starts
 * closest, then the stronger binding, then the smaller size, then the first
 * in table order; failing any, an assembly label (a symbol of size 0) in
 * the address's allocated section (as libdwfl's dwfl_module_address_section
 * finds it) that no symbol below the address passes over.
 * tests/unit/test_symtab.c compares the two on every address of real
 * binaries.
 *
 * Allocates; not thread-safe. The names returned point into the module's
 * ELF data and live as long as its Dwfl.
 */
#ifndef HP_ANALYZER_SYMTAB_H
#define HP_ANALYZER_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct hp_symtab;

/* Reads mod's symbol table. Returns 0 (an empty table when the module has
 * no symbols) or -ENOMEM. */
int hp_symtab_build(struct hp_symtab **out, Dwfl_Module *mod);
void hp_symtab_free(struct hp_symtab *t);

/* The name of the symbol at address (as dwfl_module_addrname), or NULL. */
const char *hp_symtab_lookup(const struct hp_symtab *t, uint64_t address);

/* How many symbols the table holds (for progress and tests). */
size_t hp_symtab_count(const struct hp_symtab *t);

#endif
