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
 * The file format is in symcache_file.c, the stamps in symcache_stamp.c;
 * what they share, in symcache_int.h.
 *
 * Not thread-safe (one cache per symbolizing thread).
 */
#include "symcache.h"

#include <dirent.h>
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

#include "../../common/options.h"
#include "../../common/sort.h"
#include "../../common/vec.h"
#include "../../common/version.h"
#include "symcache_int.h"
#include "../../common/text.h"

#define STALE_TMP_SEC 3600 /* a temporary file older than this was abandoned */

	/* --- the directory ------------------------------------------------------ */

	/* Makes dir and its missing parents, each 0700. Returns 0 or -errno. */
	static int
	make_dirs(char *dir)
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
	} else if (xdg && xdg[0] == '/') /* the XDG spec: a relative one is ignored */
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
	char hex[2 * HP_SYMCACHE_MAX_BUILD_ID + 1];
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
			    nh->n_descsz <= HP_SYMCACHE_MAX_BUILD_ID) {
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

/* --- a module's entries --------------------------------------------------- */

void hp_symcache_mod_clear(struct hp_symcache_mod *m)
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
	hp_symcache_mod_clear(m);
	hp_symcache_stamp_free(&m->stamp);
	free(m->path);
	free(m->search);
	free(m);
}

/* Adds frames at offset (not cached yet). Returns 0 or -ENOMEM (the
 * module may then hold strings no entry uses, nothing worse). */
int hp_symcache_mod_add_frames(struct hp_symcache_mod *m, uint64_t offset,
			       const struct hp_sym *syms, int n)
{
	uint32_t first = (uint32_t)m->nframes;

	if (n < 1 || m->nentries >= HP_HINDEX_NONE - 1 || m->nframes + (size_t)n >= UINT32_MAX ||
	    hp_vec_grow(&m->frames, &m->capframes, m->nframes + (size_t)n) ||
	    hp_vec_grow(&m->entries, &m->capentries, m->nentries + 1))
		return -ENOMEM;
	for (int k = 0; k < n; k++) {
		struct hp_symcache_frame f = {.line = syms[k].line,
					      .inlined = syms[k].inlined != 0};
		if (hp_strtab_intern(&m->strings, syms[k].function, &f.fn) ||
		    hp_strtab_intern(&m->strings, syms[k].file, &f.file))
			return -ENOMEM;
		m->frames[first + (uint32_t)k] = f;
	}
	if (hp_u64map_put(&m->index, offset, (uint32_t)m->nentries))
		return -ENOMEM;
	m->nframes += (size_t)n;
	m->entries[m->nentries++] = (struct hp_symcache_entry){offset, first, (uint32_t)n};
	return 0;
}

int hp_symcache_mod_add_data(struct hp_symcache_mod *m, uint64_t offset, const char *name)
{
	uint32_t idx = 0;

	if (m->ndata >= HP_HINDEX_NONE - 1 || hp_vec_grow(&m->data, &m->capdata, m->ndata + 1))
		return -ENOMEM;
	if (name && hp_strtab_intern(&m->strings, name, &idx))
		return -ENOMEM;
	if (hp_u64map_put(&m->data_index, offset, (uint32_t)m->ndata))
		return -ENOMEM;
	m->data[m->ndata++] = (struct hp_symcache_datum){offset, name ? idx + 1 : 0};
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

	if (!m || !m->stamped || m->broken || n < 1 || n > HP_SYMCACHE_MAX_FRAMES ||
	    hp_u64map_get(&m->index, offset, &unused))
		return;
	for (int k = 0; k < n; k++)
		if (!storable(syms[k].function) || !storable(syms[k].file))
			return;
	if (hp_symcache_mod_add_frames(m, offset, syms, n)) {
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
	if (hp_symcache_mod_add_data(m, offset, name)) {
		m->broken = 1;
		return;
	}
	m->added++;
}

/* The frames of entry i into out[0..its count). */
void hp_symcache_entry_syms(const struct hp_symcache_mod *m, uint32_t i, struct hp_sym *out)
{
	for (uint32_t k = 0; k < m->entries[i].n; k++) {
		const struct hp_symcache_frame *f = &m->frames[m->entries[i].first + k];
		out[k] = (struct hp_sym){hp_strtab_get(&m->strings, f->fn),
					 hp_strtab_get(&m->strings, f->file), f->line, f->inlined};
	}
}

int hp_symcache_frames(struct hp_symcache_mod *m, uint64_t offset, struct hp_sym *out, int max)
{
	uint32_t i;

	if (!m || !hp_u64map_get(&m->index, offset, &i) || m->entries[i].n > (uint32_t)max)
		return 0;
	hp_symcache_entry_syms(m, i, out);
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
	struct hp_symcache_stamp_list s = {0};

	if (!m || m->stamped || m->broken)
		return;
	if (hp_symcache_stamp_make(m, mod, &s)) {
		hp_symcache_stamp_free(&s);
		m->broken = 1;
		return;
	}
	/* The files libdwfl chose are the ones the entries were made from,
	 * unless the stamp says otherwise: then they are stale. */
	if (!hp_symcache_stamp_equal(&s, &m->stamp)) {
		hp_symcache_mod_clear(m);
		m->valid = 0;
	}
	hp_symcache_stamp_free(&m->stamp);
	m->stamp = s;
	m->stamped = 1;
}

/* A fresh module with m's key, for parsing into. */
static struct hp_symcache_mod *mod_new(struct hp_symcache *c, const char *path, const uint8_t *id,
				       size_t idlen, const char *search)
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

	if (!c || !c->dir || !build_id_len || build_id_len > HP_SYMCACHE_MAX_BUILD_ID ||
	    path[0] != '/')
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
	hp_symcache_file_name(c, m, name, sizeof name);
	if (hp_symcache_file_read(name, &data, &len) == 0) {
		if (hp_symcache_file_parse(c, data, len, m) == 0 &&
		    hp_symcache_stamp_holds(&m->stamp)) {
			m->valid = 1;
			/* Used now: the last to be removed (hp_symcache_flush). */
			utimensat(AT_FDCWD, name, NULL, AT_SYMLINK_NOFOLLOW);
		} else {
			hp_symcache_mod_clear(m);
		}
		free(data);
	}
	return m;
}

/* Adds to m the entries of file that m lacks, when the file has m's
 * stamp (another process wrote it since m was read). */
static void merge_file(struct hp_symcache *c, struct hp_symcache_mod *m, const char *name)
{
	struct hp_symcache_mod *disk;
	struct hp_sym syms[HP_SYMCACHE_MAX_FRAMES];
	uint8_t *data;
	size_t len;
	uint32_t unused;

	if (hp_symcache_file_read(name, &data, &len) < 0)
		return;
	disk = mod_new(c, m->path, m->build_id, m->build_id_len, m->search);
	if (disk && hp_symcache_file_parse(c, data, len, disk) == 0 &&
	    hp_symcache_stamp_equal(&disk->stamp, &m->stamp)) {
		for (size_t i = 0; i < disk->nentries; i++) {
			const struct hp_symcache_entry *e = &disk->entries[i];
			if (hp_u64map_get(&m->index, e->offset, &unused))
				continue;
			hp_symcache_entry_syms(disk, (uint32_t)i, syms);
			if (hp_symcache_mod_add_frames(m, e->offset, syms, (int)e->n))
				break;
		}
		for (size_t i = 0; i < disk->ndata; i++) {
			const struct hp_symcache_datum *d = &disk->data[i];
			if (hp_u64map_get(&m->data_index, d->offset, &unused))
				continue;
			if (hp_symcache_mod_add_data(m, d->offset,
						     d->name ? hp_strtab_get(&disk->strings,
									     d->name - 1)
							     : NULL))
				break;
		}
	}
	if (disk)
		mod_free(disk);
	free(data);
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
		hp_sort(files, n, sizeof *files, by_mtime);
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
		uint8_t *data = NULL;
		size_t len = 0;
		if (!m->added || !m->stamped || m->broken)
			continue;
		hp_symcache_file_name(c, m, name, sizeof name);
		merge_file(c, m, name);
		if (hp_symcache_file_serialize(c, m, &data, &len) == 0 &&
		    len <= HP_SYMCACHE_MAX_FILE_BYTES &&
		    hp_symcache_file_write(c, name, data, len) == 0)
			written++;
		free(data);
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
