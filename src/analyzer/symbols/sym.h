/*
 * sym.h - what the symbolizer answers and the model keeps: one symbolic
 * frame (struct hp_sym) and how a module's symbols were found (enum
 * hp_module_status). A header of its own so that the symbols' layer
 * (symbolize.h, symcache.h) needs nothing from the model above it.
 */
#ifndef HP_ANALYZER_SYM_H
#define HP_ANALYZER_SYM_H

#include <stdint.h>

#include "../../format/format.h"

/* One symbolic frame. Strings are owned by the model and never NULL:
 * function is "0x<offset>" or "??" when unknown, file "" when unknown. */
struct hp_sym {
	const char *function; /* demangled */
	const char *file;
	uint32_t line; /* 0 when unknown */
	int inlined;   /* this frame was inlined into the next one */
};

/* How a module's symbols were found. The SYMBOLS record keeps three of
 * these per module (HP_SYMSTATUS_*, format.h, the same numbers): what the
 * binary gave when the record was written, which reads back as EMBEDDED
 * when OK (hp_module_status_of_record). */
enum hp_module_status {
	HP_MODSYM_OK = HP_SYMSTATUS_OK,             /* symbols read from the binary (or its
						     * debug file) */
	HP_MODSYM_EMBEDDED = 1,                     /* symbols from the capture's SYMBOLS record */
	HP_MODSYM_MISSING = HP_SYMSTATUS_MISSING,   /* the binary is gone: module+offset only */
	HP_MODSYM_MISMATCH = HP_SYMSTATUS_MISMATCH, /* the binary's build-id differs:
						     * module+offset only */
	HP_MODSYM_NO_SYMBOLS = 4,                   /* found, but no symbol table and no debug
						     * info */
	HP_MODSYM_UNUSED = 5,                       /* no frame falls in it: not opened */
};

/* The HP_SYMSTATUS_* a SYMBOLS record keeps for a module of this status:
 * OK for symbols it holds, MISMATCH, else MISSING. */
uint64_t hp_module_status_record(enum hp_module_status st);

/* The status of a module whose SYMBOLS record says rec (HP_SYMSTATUS_*):
 * EMBEDDED for OK, MISMATCH, else MISSING. */
enum hp_module_status hp_module_status_of_record(uint64_t rec);

#endif
