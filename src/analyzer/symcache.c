/*
 * symcache.c - the persistent symbol cache (see symcache.h for what it
 * holds, where, and when an entry is valid).
 *
 * In memory: the cache (its directory, producer string, counters) and a
 * list of modules, one per (build-id, path, search path). A module holds
 * its stamp, a string table, the frame entries (offset -> a run of frames
 * in one array, through a u64 map) and the data entries (offset -> a
 * string). Entries are only ever added; the strings live in the module's
 * table until the cache is closed.
 *
 * A module is filled from its file when first asked for (valid: the file
 * parsed and its stamp matches the files on disk, by stat), then by the
 * symbolizer's puts once it has stamped the module from libdwfl (entries
 * loaded under another stamp are dropped then). hp_symcache_flush writes
 * every module with new entries: it reads the file again, merges the
 * entries of a file with the same stamp (another process may have
 * written since), and renames a temporary file over it.
 *
 * The file (all integers little-endian):
 *
 *   offset size  field
 *   0      8     magic "hpsymc\0\n"
 *   8      4     version (1)
 *   12     4     CRC-32 (zlib's) of the body
 *   16     8     body length: the file's size - 32
 *   24     8     0
 *   32     ...   body:
 *     str   producer ("heapprof VERSION build-id HEX libdw VERSION")
 *     str   build-id (raw bytes, 1 to 64)
 *     str   module path, str debug search path
 *     u32   files stamped, each: str path, u8 present, u64 device,
 *           u64 inode, u64 size, u64 mtime in ns
 *     u32   strings, each a str (clean: text.h, no NUL)
 *     u32   frame entries, each: u64 offset, u32 frames (1..1024), each
 *           frame: u32 function, u32 file (string indices), u32 line,
 *           u8 inlined (0 or 1)
 *     u32   data entries, each: u64 offset, u32 string index + 1 (0: none)
 *   str = u32 length + bytes. The body ends exactly at the file's end.
 *
 * Not thread-safe (one cache per symbolizing thread).
 */
#include "symcache.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../common/options.h"
#include "../common/strtab.h"
#include "../common/table.h"
#include "../common/vec.h"
#include "../common/version.h"
#include "text.h"

#define MAGIC "hpsymc\0\n"
#define VERSION 1u
#define HEADER_BYTES 32
#define MAX_BUILD_ID 64
#define MAX_FRAMES 1024	   /* per address in a file */
#define MAX_STAMPED 4096   /* files per stamp in a file */
#define STALE_TMP_SEC 3600 /* a temporary file older than this was abandoned */

struct stamp_file {
	char *path;
	uint8_t present;
	uint64_t dev, ino, size, mtime_ns;
};

struct stamp {
	struct stamp_file *files;
	size_t n, cap;
};

struct cframe {
	uint32_t fn, file, line;
	uint8_t inlined;
};

struct centry {
	uint64_t offset;
	uint32_t first, n; /* frames[first..first+n) */
};

struct cdata {
	uint64_t offset;
	uint32_t name; /* string index + 1, 0: no symbol */
};

struct hp_symcache_mod {
	struct hp_symcache *cache;
	struct hp_symcache_mod *next;
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
	char *path, *search;
	int valid;   /* entries loaded from a file whose stamp holds now */
	int stamped; /* stamp set from libdwfl: puts are taken */
	int broken;  /* short of memory once: nothing more is stored */
	size_t added; /* entries not in the file yet */
	struct stamp stamp;
	struct hp_strtab strings;
	struct cframe *frames;
	size_t nframes, capframes;
	struct centry *entries;
	size_t nentries, capentries;
	struct hp_u64map index; /* offset -> entries[] */
	struct cdata *data;
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

/* --- the directory ------------------------------------------------------ */

/* Makes dir and its missing parents, each 0700. Returns 0 or -errno. */
static int make_dirs(char *dir)
{
	for (char *p = dir + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = '\0';
		int r = mkdir(dir, 0700);
		int e = errno;
		*p = c;
		if (r < 0 && e != EEXIST)
			return -e;
		if (!c)
			return 0;
	}
}

/* The symbols directory, made if need be and checked (a directory of this
 * user that nobody else may write), into c->dir; else c->why. */
static int find_dir(struct hp_symcache *c)
{
	const char *env = getenv("HEAPPROF_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME"), *max = getenv("HEAPPROF_CACHE_MAX");
	char root[PATH_MAX];
	struct stat st;
	int n;

	c->max_bytes = HP_SYMCACHE_MAX_BYTES;
	if (max && *max && hp_option_parse_u64(max, &c->max_bytes) < 0)
		c->max_bytes = HP_SYMCACHE_MAX_BYTES;
	if (env && (!*env || strcmp(env, "off") == 0)) {
		c->why = "HEAPPROF_CACHE_DIR is off";
		return 0;
	}
	if (env && env[0] == '/')
		n = snprintf(root, sizeof root, "%s/symbols", env);
	else if (env) { /* relative to where heapprof runs (it never changes directory) */
		char cwd[PATH_MAX];
		n = getcwd(cwd, sizeof cwd) ? snprintf(root, sizeof root, "%s/%s/symbols", cwd, env)
					    : -1;
	}
	else if (xdg && xdg[0] == '/') /* the XDG spec: a relative one is ignored */
		n = snprintf(root, sizeof root, "%s/heapprof/symbols", xdg);
	else if (home && home[0] == '/')
		n = snprintf(root, sizeof root, "%s/.cache/heapprof/symbols", home);
	else {
		c->why = "no HOME, XDG_CACHE_HOME or HEAPPROF_CACHE_DIR";
		return 0;
	}
	if (n < 0 || (size_t)n >= sizeof root || root[0] != '/') {
		c->why = "the cache directory is not an absolute path that fits";
		return 0;
	}
	if (make_dirs(root) < 0) {
		c->why = "the cache directory cannot be made";
		return 0;
	}
	if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		c->why = "the cache directory is not a directory of this user alone";
		return 0;
	}
	c->dir = strdup(root);
	return c->dir ? 0 : -ENOMEM;
}

/* --- the producer ------------------------------------------------------- */

struct self {
	uintptr_t addr;
	char hex[2 * MAX_BUILD_ID + 1];
};

/* The build-id of the object this code is in (heapprof, or a test that
 * links the analyzer), from its PT_NOTE segments. */
static int self_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self *me = arg;
	int mine = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		mine = ph->p_type == PT_LOAD && me->addr >= info->dlpi_addr + ph->p_vaddr &&
		       me->addr < info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;
		if (ph->p_type != PT_NOTE)
			continue;
		while (off + sizeof(ElfW(Nhdr)) <= ph->p_filesz) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(p + off);
			size_t name = (nh->n_namesz + 3) & ~(size_t)3;
			size_t desc = (nh->n_descsz + 3) & ~(size_t)3;
			const uint8_t *d = p + off + sizeof *nh + name;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + off + sizeof *nh, "GNU", 4) == 0 &&
			    nh->n_descsz <= MAX_BUILD_ID) {
				for (size_t k = 0; k < nh->n_descsz; k++)
					snprintf(me->hex + 2 * k, 3, "%02x", d[k]);
				return 1;
			}
			off += sizeof *nh + name + desc;
		}
	}
	return 1;
}

/* What made an entry: this heapprof build (its build-id changes with any
 * change of the symbolizer's code) and the libdw it reads with. */
static char *producer(void)
{
	struct self me = {.addr = (uintptr_t)&producer};
	const char *dw = dwfl_version(NULL);
	char buf[512];

	dl_iterate_phdr(self_build_id, &me);
	snprintf(buf, sizeof buf, "heapprof %s build-id %s libdw %s", HP_VERSION,
		 me.hex[0] ? me.hex : "none", dw ? dw : "?");
	return strdup(buf);
}

int hp_symcache_open(struct hp_symcache **out, int off)
{
	struct hp_symcache *c = calloc(1, sizeof *c);

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (off)
		c->why = "--no-symbol-cache";
	else if (find_dir(c) < 0 || (c->dir && !(c->producer = producer()))) {
		hp_symcache_close(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

const char *hp_symcache_why(const struct hp_symcache *c)
{
	return c->dir ? NULL : c->why;
}

void hp_symcache_stats(const struct hp_symcache *c, struct hp_symcache_stats *out)
{
	*out = c->stats;
}

void hp_symcache_count_open(struct hp_symcache *c)
{
	c->stats.modules_opened++;
}

void hp_symcache_count_debuginfo(struct hp_symcache *c, size_t n)
{
	c->stats.debuginfo += n;
}

/* --- stamps ------------------------------------------------------------- */

static void stamp_free(struct stamp *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->files[i].path);
	free(s->files);
	memset(s, 0, sizeof *s);
}

static void stat_file(struct stamp_file *f)
{
	struct stat st;

	f->present = stat(f->path, &st) == 0;
	f->dev = f->present ? (uint64_t)st.st_dev : 0;
	f->ino = f->present ? (uint64_t)st.st_ino : 0;
	f->size = f->present ? (uint64_t)st.st_size : 0;
	f->mtime_ns = f->present ? (uint64_t)st.st_mtim.tv_sec * 1000000000u +
					   (uint64_t)st.st_mtim.tv_nsec
				 : 0;
}

static int same_file(const struct stamp_file *a, const struct stamp_file *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* Adds path (once) with its state now. Returns 0 or -ENOMEM. */
static int stamp_add(struct stamp *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->files[i].path, path) == 0)
			return 0;
	if (hp_vec_grow(&s->files, &s->cap, s->n + 1))
		return -ENOMEM;
	s->files[s->n].path = strdup(path);
	if (!s->files[s->n].path)
		return -ENOMEM;
	stat_file(&s->files[s->n++]);
	return 0;
}

static int stamp_equal(const struct stamp *a, const struct stamp *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->files[i].path, b->files[i].path) ||
		    !same_file(&a->files[i], &b->files[i]))
			return 0;
	return 1;
}

/* Whether every file of s is as it was stamped. */
static int stamp_holds(const struct stamp *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct stamp_file now = {.path = s->files[i].path};
		stat_file(&now);
		if (!same_file(&now, &s->files[i]))
			return 0;
	}
	return 1;
}

/* "/.build-id/xx/rest.debug" under each absolute directory of search. */
static int add_by_build_id(struct stamp *s, const char *search, const uint8_t *id, size_t len)
{
	char *copy = strdup(search), *rest, *dir, name[PATH_MAX];
	int ret = copy ? 0 : -ENOMEM;

	if (len < 3 || len > MAX_BUILD_ID) /* libdwfl's bounds: it looks nowhere */
		len = 0;
	for (rest = copy; !ret && len && (dir = strsep(&rest, ":")) != NULL;) {
		char hex[2 * MAX_BUILD_ID + 1];
		if (*dir == '+' || *dir == '-')
			dir++;
		if (*dir != '/')
			continue;
		for (size_t k = 1; k < len; k++)
			snprintf(hex + 2 * (k - 1), 3, "%02x", id[k]);
		if (snprintf(name, sizeof name, "%s/.build-id/%02x/%s.debug", dir, id[0], hex) <
		    (int)sizeof name)
			ret = stamp_add(s, name);
	}
	free(copy);
	return ret;
}

/* Adds dir/sub/name (parts may be NULL) when it fits. */
static int add_joined(struct stamp *s, const char *dir, const char *sub, const char *name)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s%s%s%s%s", dir ? dir : "", dir ? "/" : "",
			 sub ? sub : "", sub ? "/" : "", name);

	return n > 0 && (size_t)n < sizeof path ? stamp_add(s, path) : 0;
}

/* The places libdwfl's find_debuginfo_in_path tries for file's debuglink
 * (elfutils 0.188): the file's directory, its relative subdirectories
 * (.debug), and under each absolute directory the file's directory and
 * each of its tails; with no debuglink, "BASENAME.debug" and BASENAME. */
static int add_by_link(struct stamp *s, const char *search, const char *file, const char *link)
{
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	char dirname[PATH_MAX], made[PATH_MAX], *copy, *rest, *p;
	const char *names[2];
	int nnames = 0, ret = 0;

	if (!slash || (size_t)(slash - file) >= sizeof dirname)
		return 0;
	memcpy(dirname, file, (size_t)(slash - file));
	dirname[slash - file] = '\0';
	if (link) {
		names[nnames++] = link;
	} else {
		snprintf(made, sizeof made, "%s.debug", base);
		names[nnames++] = made;
		names[nnames++] = base;
	}
	copy = strdup(search);
	if (!copy)
		return -ENOMEM;
	rest = copy;
	if (*rest == '+' || *rest == '-')
		rest++;
	while (!ret && (p = strsep(&rest, ":")) != NULL) {
		if (*p == '+' || *p == '-')
			p++;
		for (int k = 0; k < nnames && !ret; k++) {
			if (!*p) {
				if (k == 0) /* the main directory: the debuglink name only */
					ret = add_joined(s, dirname, NULL, names[k]);
			} else if (*p == '/') {
				if (dirname[0] != '/')
					continue;
				for (const char *sub = dirname; !ret && sub;) {
					sub = strchr(sub, '/');
					if (sub)
						sub++;
					if (sub && !*sub)
						break;
					ret = add_joined(s, p, sub, names[k]);
				}
			} else {
				ret = add_joined(s, dirname, p, names[k]);
			}
		}
	}
	free(copy);
	return ret;
}

/* The module's stamp from libdwfl: the files it read and the places it
 * would have found others. Returns 0 or -ENOMEM. */
static int make_stamp(struct hp_symcache_mod *m, Dwfl_Module *mod, struct stamp *s)
{
	const char *mainfile = NULL, *debugfile = NULL, *link = NULL, *altname = NULL;
	const void *altid = NULL;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias); /* looks for the debug file */
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Word crc;
	ssize_t altlen = 0;
	char *canon;
	int ret;

	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (elf)
		link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (dw)
		altlen = dwelf_dwarf_gnu_debugaltlink(dw, &altname, &altid);
	ret = stamp_add(s, m->path);
	if (!ret && mainfile)
		ret = stamp_add(s, mainfile);
	if (!ret && debugfile)
		ret = stamp_add(s, debugfile);
	if (!ret)
		ret = add_by_build_id(s, m->search, m->build_id, m->build_id_len);
	if (!ret)
		ret = add_by_link(s, m->search, m->path, link);
	canon = realpath(m->path, NULL);
	if (!ret && canon && strcmp(canon, m->path) != 0)
		ret = add_by_link(s, m->search, canon, link);
	free(canon);
	/* A dwz file, by its build-id, or by its name (absolute, or beside
	 * the debug file). */
	if (!ret && altlen > 0)
		ret = add_by_build_id(s, m->search, altid, (size_t)altlen);
	if (!ret && altlen > 0 && altname && altname[0] == '/')
		ret = stamp_add(s, altname);
	else if (!ret && altlen > 0 && altname && debugfile && strrchr(debugfile, '/')) {
		char path[PATH_MAX];
		int n = snprintf(path, sizeof path, "%.*s/%s",
				 (int)(strrchr(debugfile, '/') - debugfile), debugfile, altname);
		if (n > 0 && (size_t)n < sizeof path)
			ret = stamp_add(s, path);
	}
	return ret;
}

/* --- a module's entries --------------------------------------------------- */

static void mod_clear(struct hp_symcache_mod *m)
{
	hp_strtab_free(&m->strings);
	free(m->frames);
	free(m->entries);
	free(m->data);
	hp_u64map_free(&m->index);
	hp_u64map_free(&m->data_index);
	m->frames = NULL;
	m->entries = NULL;
	m->data = NULL;
	m->nframes = m->capframes = m->nentries = m->capentries = m->ndata = m->capdata = 0;
	m->added = 0;
}

static void mod_free(struct hp_symcache_mod *m)
{
	mod_clear(m);
	stamp_free(&m->stamp);
	free(m->path);
	free(m->search);
	free(m);
}

/* Adds frames at offset (not cached yet). Returns 0 or -ENOMEM (the
 * module may then hold strings no entry uses, nothing worse). */
static int add_frames(struct hp_symcache_mod *m, uint64_t offset, const struct hp_sym *syms,
		      int n)
{
	uint32_t first = (uint32_t)m->nframes;

	if (n < 1 || m->nentries >= HP_HINDEX_NONE - 1 ||
	    m->nframes + (size_t)n >= UINT32_MAX ||
	    hp_vec_grow(&m->frames, &m->capframes, m->nframes + (size_t)n) ||
	    hp_vec_grow(&m->entries, &m->capentries, m->nentries + 1))
		return -ENOMEM;
	for (int k = 0; k < n; k++) {
		struct cframe f = {.line = syms[k].line, .inlined = syms[k].inlined != 0};
		if (hp_strtab_intern(&m->strings, syms[k].function, &f.fn) ||
		    hp_strtab_intern(&m->strings, syms[k].file, &f.file))
			return -ENOMEM;
		m->frames[first + (uint32_t)k] = f;
	}
	if (hp_u64map_put(&m->index, offset, (uint32_t)m->nentries))
		return -ENOMEM;
	m->nframes += (size_t)n;
	m->entries[m->nentries++] = (struct centry){offset, first, (uint32_t)n};
	return 0;
}

static int add_data(struct hp_symcache_mod *m, uint64_t offset, const char *name)
{
	uint32_t idx = 0;

	if (m->ndata >= HP_HINDEX_NONE - 1 || hp_vec_grow(&m->data, &m->capdata, m->ndata + 1))
		return -ENOMEM;
	if (name && hp_strtab_intern(&m->strings, name, &idx))
		return -ENOMEM;
	if (hp_u64map_put(&m->data_index, offset, (uint32_t)m->ndata))
		return -ENOMEM;
	m->data[m->ndata++] = (struct cdata){offset, name ? idx + 1 : 0};
	return 0;
}

/* Whether a symbolizer string may be stored: the symbolizer escapes what
 * it returns (text.h), so a clean string is all a valid file holds. */
static int storable(const char *s)
{
	return s && hp_text_is_clean(s);
}

void hp_symcache_put_frames(struct hp_symcache_mod *m, uint64_t offset, const struct hp_sym *syms,
			    int n)
{
	uint32_t unused;

	if (!m || !m->stamped || m->broken || n < 1 || n > MAX_FRAMES ||
	    hp_u64map_get(&m->index, offset, &unused))
		return;
	for (int k = 0; k < n; k++)
		if (!storable(syms[k].function) || !storable(syms[k].file))
			return;
	if (add_frames(m, offset, syms, n)) {
		m->broken = 1;
		return;
	}
	m->added++;
}

void hp_symcache_put_data(struct hp_symcache_mod *m, uint64_t offset, const char *name)
{
	uint32_t unused;

	if (!m || !m->stamped || m->broken || hp_u64map_get(&m->data_index, offset, &unused) ||
	    (name && !storable(name)))
		return;
	if (add_data(m, offset, name)) {
		m->broken = 1;
		return;
	}
	m->added++;
}

/* The frames of entry i into out[0..its count). */
static void entry_syms(const struct hp_symcache_mod *m, uint32_t i, struct hp_sym *out)
{
	for (uint32_t k = 0; k < m->entries[i].n; k++) {
		const struct cframe *f = &m->frames[m->entries[i].first + k];
		out[k] = (struct hp_sym){hp_strtab_get(&m->strings, f->fn),
					 hp_strtab_get(&m->strings, f->file), f->line, f->inlined};
	}
}

int hp_symcache_frames(struct hp_symcache_mod *m, uint64_t offset, struct hp_sym *out, int max)
{
	uint32_t i;

	if (!m || !hp_u64map_get(&m->index, offset, &i) || m->entries[i].n > (uint32_t)max)
		return 0;
	entry_syms(m, i, out);
	m->cache->stats.cached++;
	return (int)m->entries[i].n;
}

int hp_symcache_data(struct hp_symcache_mod *m, uint64_t offset, const char **name)
{
	uint32_t i;

	if (!m || !hp_u64map_get(&m->data_index, offset, &i))
		return 0;
	*name = m->data[i].name ? hp_strtab_get(&m->strings, m->data[i].name - 1) : NULL;
	return 1;
}

int hp_symcache_valid(const struct hp_symcache_mod *m)
{
	return m && m->valid;
}

void hp_symcache_stamp(struct hp_symcache_mod *m, Dwfl_Module *mod)
{
	struct stamp s = {0};

	if (!m || m->stamped || m->broken)
		return;
	if (make_stamp(m, mod, &s)) {
		stamp_free(&s);
		m->broken = 1;
		return;
	}
	/* The files libdwfl chose are the ones the entries were made from,
	 * unless the stamp says otherwise: then they are stale. */
	if (!stamp_equal(&s, &m->stamp)) {
		mod_clear(m);
		m->valid = 0;
	}
	stamp_free(&m->stamp);
	m->stamp = s;
	m->stamped = 1;
}

/* --- the file ------------------------------------------------------------- */

struct reader {
	const uint8_t *p;
	size_t len, pos;
	int bad;
};

static uint64_t get_le(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

/* A string of the file: *len bytes at the returned pointer (not
 * terminated), or NULL. */
static const uint8_t *get_str(struct reader *r, size_t *len)
{
	uint64_t n = get_le(r, 4);

	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return NULL;
	}
	*len = (size_t)n;
	r->pos += (size_t)n;
	return r->p + r->pos - n;
}

/* Whether the next string is s exactly. */
static int get_same(struct reader *r, const void *s, size_t slen)
{
	size_t len;
	const uint8_t *p = get_str(r, &len);

	return p && len == slen && memcmp(p, s, len) == 0;
}

/* A count of items of at least min_bytes each, which the rest of the file
 * must be able to hold (so a count never asks for more memory than the
 * file's size warrants). */
static size_t get_count(struct reader *r, size_t min_bytes, size_t max)
{
	uint64_t n = get_le(r, 4);

	if (r->bad || n > max || n > (r->len - r->pos) / min_bytes) {
		r->bad = 1;
		return 0;
	}
	return (size_t)n;
}

/* Reads a whole file of at most HP_SYMCACHE_MAX_FILE_BYTES, a regular
 * file of this user, not through a symbolic link. Returns 0 or -1. */
static int read_file(const char *path, uint8_t **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	size_t done = 0;
	uint8_t *buf = NULL;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size < HEADER_BYTES || st.st_size > HP_SYMCACHE_MAX_FILE_BYTES ||
	    !(buf = malloc((size_t)st.st_size)))
		goto err;
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto err;
		done += (size_t)n;
	}
	close(fd);
	*data = buf;
	*len = done;
	return 0;
err:
	free(buf);
	close(fd);
	return -1;
}

/* Parses a file's bytes into out, a fresh module with its key (build-id,
 * path, search) set: its stamp and entries. Returns 0, or -1 when the
 * file is not a valid one of this key and producer (nothing is kept
 * then: out is cleared). */
static int parse(struct hp_symcache *c, const uint8_t *d, size_t len, struct hp_symcache_mod *out)
{
	struct reader r = {d + HEADER_BYTES, len - HEADER_BYTES, 0, 0};
	struct reader h = {d, HEADER_BYTES, 0, 0};
	uint32_t *map = NULL;
	char *tmp = NULL;
	size_t tmpcap = 0, n;
	struct hp_sym *syms = NULL;

	if (len < HEADER_BYTES || memcmp(d, MAGIC, 8) != 0)
		return -1;
	h.pos = 8;
	uint32_t version = (uint32_t)get_le(&h, 4), crc = (uint32_t)get_le(&h, 4);
	uint64_t body = get_le(&h, 8);
	if (version != VERSION || body != len - HEADER_BYTES ||
	    crc != (uint32_t)crc32(0, r.p, (uInt)r.len))
		return -1;
	if (!get_same(&r, c->producer, strlen(c->producer)) ||
	    !get_same(&r, out->build_id, out->build_id_len) ||
	    !get_same(&r, out->path, strlen(out->path)) ||
	    !get_same(&r, out->search, strlen(out->search)))
		return -1;
	n = get_count(&r, 4 + 1 + 32, MAX_STAMPED);
	for (size_t i = 0; i < n && !r.bad; i++) {
		size_t plen;
		const uint8_t *p = get_str(&r, &plen);
		struct stamp_file f;
		if (!p || memchr(p, 0, plen) || hp_vec_grow(&out->stamp.files, &out->stamp.cap, i + 1) ||
		    !(f.path = strndup((const char *)p, plen))) {
			r.bad = 1;
			break;
		}
		f.present = (uint8_t)get_le(&r, 1);
		f.dev = get_le(&r, 8);
		f.ino = get_le(&r, 8);
		f.size = get_le(&r, 8);
		f.mtime_ns = get_le(&r, 8);
		out->stamp.files[out->stamp.n++] = f;
	}
	/* Strings: the file's index to this module's. */
	n = get_count(&r, 4, UINT32_MAX - 1);
	map = malloc((n + 1) * sizeof *map);
	if (!map)
		r.bad = 1;
	for (size_t i = 0; i < n && !r.bad; i++) {
		size_t slen;
		const uint8_t *p = get_str(&r, &slen);
		if (!p || memchr(p, 0, slen) || hp_vec_grow(&tmp, &tmpcap, slen + 1)) {
			r.bad = 1;
			break;
		}
		memcpy(tmp, p, slen);
		tmp[slen] = '\0';
		if (!hp_text_is_clean(tmp) || hp_strtab_intern(&out->strings, tmp, &map[i]))
			r.bad = 1;
	}
	size_t nstrings = n;
	syms = malloc(MAX_FRAMES * sizeof *syms);
	if (!syms)
		r.bad = 1;
	n = get_count(&r, 8 + 4 + 13, UINT32_MAX - 1);
	for (size_t i = 0; i < n && !r.bad; i++) {
		uint64_t offset = get_le(&r, 8);
		size_t nf = get_count(&r, 13, MAX_FRAMES);
		uint32_t unused;
		if (nf < 1)
			r.bad = 1;
		for (size_t k = 0; k < nf && !r.bad; k++) {
			uint64_t fn = get_le(&r, 4), file = get_le(&r, 4), line = get_le(&r, 4);
			uint64_t inl = get_le(&r, 1);
			if (fn >= nstrings || file >= nstrings || inl > 1) {
				r.bad = 1;
				break;
			}
			syms[k] = (struct hp_sym){hp_strtab_get(&out->strings, map[fn]),
						  hp_strtab_get(&out->strings, map[file]),
						  (uint32_t)line, (int)inl};
		}
		if (r.bad || hp_u64map_get(&out->index, offset, &unused)) {
			r.bad = 1; /* an offset twice: not a file this code wrote */
			break;
		}
		if (add_frames(out, offset, syms, (int)nf))
			r.bad = 1;
	}
	n = get_count(&r, 12, UINT32_MAX - 1);
	for (size_t i = 0; i < n && !r.bad; i++) {
		uint64_t offset = get_le(&r, 8), name = get_le(&r, 4);
		uint32_t unused;
		if (r.bad || name > nstrings || hp_u64map_get(&out->data_index, offset, &unused) ||
		    add_data(out, offset,
			     name ? hp_strtab_get(&out->strings, map[name - 1]) : NULL))
			r.bad = 1;
	}
	if (r.pos != r.len)
		r.bad = 1;
	free(map);
	free(tmp);
	free(syms);
	if (r.bad) {
		mod_clear(out);
		stamp_free(&out->stamp);
		return -1;
	}
	return 0;
}

static void file_name(const struct hp_symcache *c, const struct hp_symcache_mod *m, char *out,
		      size_t cap)
{
	char hex[2 * MAX_BUILD_ID + 1];

	for (size_t k = 0; k < m->build_id_len; k++)
		snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
	hex[2 * m->build_id_len] = '\0';
	snprintf(out, cap, "%s/%s.hpsym", c->dir, hex);
}

/* A fresh module with m's key, for parsing into. */
static struct hp_symcache_mod *mod_new(struct hp_symcache *c, const char *path,
				       const uint8_t *id, size_t idlen, const char *search)
{
	struct hp_symcache_mod *m = calloc(1, sizeof *m);

	if (!m)
		return NULL;
	m->cache = c;
	memcpy(m->build_id, id, idlen);
	m->build_id_len = idlen;
	m->path = strdup(path);
	m->search = strdup(search);
	if (!m->path || !m->search) {
		mod_free(m);
		return NULL;
	}
	return m;
}

struct hp_symcache_mod *hp_symcache_module(struct hp_symcache *c, const char *path,
					   const uint8_t *build_id, size_t build_id_len,
					   const char *search)
{
	struct hp_symcache_mod *m;
	char name[PATH_MAX + 160];
	uint8_t *data;
	size_t len;

	if (!c || !c->dir || !build_id_len || build_id_len > MAX_BUILD_ID || path[0] != '/')
		return NULL;
	for (m = c->mods; m; m = m->next)
		if (m->build_id_len == build_id_len &&
		    memcmp(m->build_id, build_id, build_id_len) == 0 &&
		    strcmp(m->path, path) == 0 && strcmp(m->search, search) == 0)
			return m;
	m = mod_new(c, path, build_id, build_id_len, search);
	if (!m)
		return NULL;
	m->next = c->mods;
	c->mods = m;
	file_name(c, m, name, sizeof name);
	if (read_file(name, &data, &len) == 0) {
		if (parse(c, data, len, m) == 0 && stamp_holds(&m->stamp)) {
			m->valid = 1;
			/* Used now: the last to be removed (hp_symcache_flush). */
			utimensat(AT_FDCWD, name, NULL, AT_SYMLINK_NOFOLLOW);
		} else {
			mod_clear(m);
		}
		free(data);
	}
	return m;
}

/* --- writing ---------------------------------------------------------------- */

struct writer {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void put_bytes(struct writer *w, const void *d, size_t n)
{
	if (w->err || hp_vec_grow(&w->p, &w->cap, w->len + n)) {
		w->err = 1;
		return;
	}
	memcpy(w->p + w->len, d, n);
	w->len += n;
}

static void put_le(struct writer *w, uint64_t v, size_t n)
{
	uint8_t b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, n);
}

static void put_str(struct writer *w, const void *s, size_t n)
{
	put_le(w, n, 4);
	put_bytes(w, s, n);
}

static void serialize(const struct hp_symcache *c, const struct hp_symcache_mod *m,
		      struct writer *w)
{
	uint8_t header[HEADER_BYTES] = {0};

	put_bytes(w, header, sizeof header);
	put_str(w, c->producer, strlen(c->producer));
	put_str(w, m->build_id, m->build_id_len);
	put_str(w, m->path, strlen(m->path));
	put_str(w, m->search, strlen(m->search));
	put_le(w, m->stamp.n, 4);
	for (size_t i = 0; i < m->stamp.n; i++) {
		const struct stamp_file *f = &m->stamp.files[i];
		put_str(w, f->path, strlen(f->path));
		put_le(w, f->present, 1);
		put_le(w, f->dev, 8);
		put_le(w, f->ino, 8);
		put_le(w, f->size, 8);
		put_le(w, f->mtime_ns, 8);
	}
	put_le(w, m->strings.count, 4);
	for (size_t i = 0; i < m->strings.count; i++) {
		const char *s = hp_strtab_get(&m->strings, (uint32_t)i);
		put_str(w, s, strlen(s));
	}
	put_le(w, m->nentries, 4);
	for (size_t i = 0; i < m->nentries; i++) {
		const struct centry *e = &m->entries[i];
		put_le(w, e->offset, 8);
		put_le(w, e->n, 4);
		for (uint32_t k = 0; k < e->n; k++) {
			const struct cframe *f = &m->frames[e->first + k];
			put_le(w, f->fn, 4);
			put_le(w, f->file, 4);
			put_le(w, f->line, 4);
			put_le(w, f->inlined, 1);
		}
	}
	put_le(w, m->ndata, 4);
	for (size_t i = 0; i < m->ndata; i++) {
		put_le(w, m->data[i].offset, 8);
		put_le(w, m->data[i].name, 4);
	}
	if (w->err || w->len - HEADER_BYTES > UINT32_MAX)
		return;
	struct writer h = {w->p, 0, w->len, 0};
	put_bytes(&h, MAGIC, 8);
	put_le(&h, VERSION, 4);
	put_le(&h, (uint32_t)crc32(0, w->p + HEADER_BYTES, (uInt)(w->len - HEADER_BYTES)), 4);
	put_le(&h, w->len - HEADER_BYTES, 8);
}

/* Adds to m the entries of file that m lacks, when the file has m's
 * stamp (another process wrote it since m was read). */
static void merge_file(struct hp_symcache *c, struct hp_symcache_mod *m, const char *name)
{
	struct hp_symcache_mod *disk;
	struct hp_sym syms[MAX_FRAMES];
	uint8_t *data;
	size_t len;
	uint32_t unused;

	if (read_file(name, &data, &len) < 0)
		return;
	disk = mod_new(c, m->path, m->build_id, m->build_id_len, m->search);
	if (disk && parse(c, data, len, disk) == 0 && stamp_equal(&disk->stamp, &m->stamp)) {
		for (size_t i = 0; i < disk->nentries; i++) {
			const struct centry *e = &disk->entries[i];
			if (hp_u64map_get(&m->index, e->offset, &unused))
				continue;
			entry_syms(disk, (uint32_t)i, syms);
			if (add_frames(m, e->offset, syms, (int)e->n))
				break;
		}
		for (size_t i = 0; i < disk->ndata; i++) {
			const struct cdata *d = &disk->data[i];
			if (hp_u64map_get(&m->data_index, d->offset, &unused))
				continue;
			if (add_data(m, d->offset,
				     d->name ? hp_strtab_get(&disk->strings, d->name - 1) : NULL))
				break;
		}
	}
	if (disk)
		mod_free(disk);
	free(data);
}

/* Writes data to a temporary file in the directory and renames it to
 * name. Returns 0 or -1 (no file is left behind). */
static int write_file(const struct hp_symcache *c, const char *name, const uint8_t *data,
		      size_t len)
{
	char tmp[PATH_MAX + 64];
	size_t done = 0;
	int fd;

	snprintf(tmp, sizeof tmp, "%s/.tmp.XXXXXX", c->dir);
	fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (close(fd) < 0 || done < len || rename(tmp, name) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

struct dirent_info {
	char name[256];
	uint64_t bytes;
	int64_t mtime_ns;
};

static int by_mtime(const void *pa, const void *pb)
{
	const struct dirent_info *a = pa, *b = pb;
	return (a->mtime_ns > b->mtime_ns) - (a->mtime_ns < b->mtime_ns);
}

/* Keeps the directory under c->max_bytes, the least recently used files
 * going first; removes temporary files abandoned long ago. */
static void prune(struct hp_symcache *c)
{
	DIR *d = opendir(c->dir);
	struct dirent_info *files = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	struct timespec now;

	if (!d)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		size_t len = strlen(e->d_name);
		int tmp = strncmp(e->d_name, ".tmp.", 5) == 0;
		if ((!tmp && (len < 7 || strcmp(e->d_name + len - 6, ".hpsym") != 0)) ||
		    len >= sizeof files->name ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (tmp) {
			if (st.st_mtim.tv_sec + STALE_TMP_SEC < now.tv_sec)
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (hp_vec_grow(&files, &cap, n + 1))
			break;
		memcpy(files[n].name, e->d_name, len + 1);
		files[n].bytes = (uint64_t)st.st_size;
		files[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		total += files[n].bytes;
		n++;
	}
	if (total > c->max_bytes) {
		qsort(files, n, sizeof *files, by_mtime);
		for (size_t i = 0; i < n && total > c->max_bytes; i++)
			if (unlinkat(dirfd(d), files[i].name, 0) == 0 || errno == ENOENT)
				total -= files[i].bytes;
	}
	free(files);
	closedir(d);
}

void hp_symcache_flush(struct hp_symcache *c)
{
	char name[PATH_MAX + 160];
	size_t written = 0;

	if (!c || !c->dir)
		return;
	for (struct hp_symcache_mod *m = c->mods; m; m = m->next) {
		struct writer w = {0};
		if (!m->added || !m->stamped || m->broken)
			continue;
		file_name(c, m, name, sizeof name);
		merge_file(c, m, name);
		serialize(c, m, &w);
		if (!w.err && w.len <= HP_SYMCACHE_MAX_FILE_BYTES &&
		    write_file(c, name, w.p, w.len) == 0)
			written++;
		free(w.p);
		m->added = 0; /* once: a failed write is not tried again */
	}
	c->stats.files_written += written;
	if (written)
		prune(c);
}

void hp_symcache_close(struct hp_symcache *c)
{
	if (!c)
		return;
	hp_symcache_flush(c);
	while (c->mods) {
		struct hp_symcache_mod *next = c->mods->next;
		mod_free(c->mods);
		c->mods = next;
	}
	free(c->dir);
	free(c->producer);
	free(c);
}
