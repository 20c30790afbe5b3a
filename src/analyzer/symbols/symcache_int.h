/*
 * symcache_int.h - what symcache.c (the cache and its entries),
 * symcache_file.c (the file format) and symcache_stamp.c (the stamps)
 * share. Not for other files: symcache.h is the cache's interface.
 *
 * A module (struct hp_symcache_mod) is one (build-id, path, search path):
 * its stamp, a string table (every string a frame or a data entry names),
 * the frame entries (offset -> frames[first .. first + n), through index)
 * and the data entries (offset -> a string, through data_index). Entries
 * are only added; nothing is freed before the module.
 */
#ifndef HP_ANALYZER_SYMCACHE_INT_H
#define HP_ANALYZER_SYMCACHE_INT_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/strtab.h"
#include "../../common/table.h"
#include "symcache.h"

#define HP_SYMCACHE_MAX_BUILD_ID 64 /* bytes, as libdwfl's bound */
#define HP_SYMCACHE_MAX_FRAMES 1024 /* per address */

/* One file of a stamp: its state when stamped (present = 0: absent). */
struct hp_symcache_stampfile {
	char *path;
	uint8_t present;
	uint64_t dev, ino, size, mtime_ns;
};

struct hp_symcache_stamp_list {
	struct hp_symcache_stampfile *files;
	size_t n, cap;
};

struct hp_symcache_frame {
	uint32_t fn, file, line; /* fn and file: string indices */
	uint8_t inlined;
};

struct hp_symcache_entry {
	uint64_t offset;
	uint32_t first, n; /* frames[first .. first + n) */
};

struct hp_symcache_datum {
	uint64_t offset;
	uint32_t name; /* string index + 1, 0: no symbol */
};

struct hp_symcache_mod {
	struct hp_symcache *cache;
	struct hp_symcache_mod *next;
	uint8_t build_id[HP_SYMCACHE_MAX_BUILD_ID];
	size_t build_id_len;
	char *path, *search;
	int valid;    /* entries loaded from a file whose stamp holds now */
	int stamped;  /* stamp set from libdwfl: puts are taken */
	int broken;   /* short of memory once: nothing more is stored */
	size_t added; /* entries not in the file yet */
	struct hp_symcache_stamp_list stamp;
	struct hp_strtab strings;
	struct hp_symcache_frame *frames;
	size_t nframes, capframes;
	struct hp_symcache_entry *entries;
	size_t nentries, capentries;
	struct hp_u64map index; /* offset -> entries[] */
	struct hp_symcache_datum *data;
	size_t ndata, capdata;
	struct hp_u64map data_index; /* offset -> data[] */
};

struct hp_symcache {
	char *dir; /* .../symbols, NULL when off */
	const char *why;
	char *producer;
	uint64_t max_bytes;
	struct hp_symcache_mod *mods;
	struct hp_symcache_stats stats;
};

/* --- entries (symcache.c) --- */

/* Empties m's entries and strings (its key and stamp stay). */
void hp_symcache_mod_clear(struct hp_symcache_mod *m);

/* Adds frames syms[0..n) at offset (not there yet), or a data symbol
 * (name NULL: none). Return 0 or -ENOMEM (the module may then hold
 * strings no entry uses, nothing worse). */
int hp_symcache_mod_add_frames(struct hp_symcache_mod *m, uint64_t offset,
			       const struct hp_sym *syms, int n);
int hp_symcache_mod_add_data(struct hp_symcache_mod *m, uint64_t offset, const char *name);

/* The frames of entry i into out[0..its n), strings m's. */
void hp_symcache_entry_syms(const struct hp_symcache_mod *m, uint32_t i, struct hp_sym *out);

/* --- the file (symcache_file.c) --- */

/* c->dir/BUILDID.hpsym into out. */
void hp_symcache_file_name(const struct hp_symcache *c, const struct hp_symcache_mod *m, char *out,
			   size_t cap);

/* Reads a whole file of at most HP_SYMCACHE_MAX_FILE_BYTES, a regular file
 * of this user, not through a symbolic link, into *data (malloc'd).
 * Returns 0 or -1. */
int hp_symcache_file_read(const char *path, uint8_t **data, size_t *len);

/* Parses a file's bytes into out, a fresh module with its key set: its
 * stamp and entries. Returns 0, or -1 when the file is not a valid one of
 * this key and c's producer (out is cleared then). Bounded: every count is
 * checked against the bytes left before anything is allocated for it. */
int hp_symcache_file_parse(struct hp_symcache *c, const uint8_t *d, size_t len,
			   struct hp_symcache_mod *out);

/* The bytes of m's file into *data (malloc'd). Returns 0 or -ENOMEM. */
int hp_symcache_file_serialize(const struct hp_symcache *c, const struct hp_symcache_mod *m,
			       uint8_t **data, size_t *len);

/* Writes data to a temporary file (0600) in c->dir and renames it to
 * name. Returns 0 or -1 (no file is left behind). */
int hp_symcache_file_write(const struct hp_symcache *c, const char *name, const uint8_t *data,
			   size_t len);

/* --- stamps (symcache_stamp.c) --- */

void hp_symcache_stamp_free(struct hp_symcache_stamp_list *s);
int hp_symcache_stamp_equal(const struct hp_symcache_stamp_list *a,
			    const struct hp_symcache_stamp_list *b);

/* Whether every file of s is as it was stamped (stat only). */
int hp_symcache_stamp_holds(const struct hp_symcache_stamp_list *s);

/* m's stamp from libdwfl (it loads the module's DWARF to find its debug
 * file): the files it read and each place it would have found another
 * debug file, into s. Returns 0 or -ENOMEM. */
int hp_symcache_stamp_make(struct hp_symcache_mod *m, Dwfl_Module *mod,
			   struct hp_symcache_stamp_list *s);

#endif
