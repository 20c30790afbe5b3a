/*
 * symcache_stamp.c - the stamps of the symbol cache's modules (see
 * symcache.h, "Validity"): the state (present, device, inode, size,
 * mtime) of the files libdwfl read a module's symbols from, and of each
 * place its find_debuginfo would have looked for a debug file, so that a
 * debug file appearing, vanishing or changing there makes the entries
 * stale. Stat only: checking a stamp opens nothing.
 */
#include <errno.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/vec.h"
#include "symcache_int.h"

/* --- stamps ------------------------------------------------------------- */

void hp_symcache_stamp_free(struct hp_symcache_stamp_list *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->files[i].path);
	free(s->files);
	memset(s, 0, sizeof *s);
}

static void stat_file(struct hp_symcache_stampfile *f)
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

static int same_file(const struct hp_symcache_stampfile *a, const struct hp_symcache_stampfile *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* Adds path (once) with its state now. Returns 0 or -ENOMEM. */
static int stamp_add(struct hp_symcache_stamp_list *s, const char *path)
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

int hp_symcache_stamp_equal(const struct hp_symcache_stamp_list *a,
			    const struct hp_symcache_stamp_list *b)
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
int hp_symcache_stamp_holds(const struct hp_symcache_stamp_list *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct hp_symcache_stampfile now = {.path = s->files[i].path};
		stat_file(&now);
		if (!same_file(&now, &s->files[i]))
			return 0;
	}
	return 1;
}

/* "/.build-id/xx/rest.debug" under each absolute directory of search. */
static int add_by_build_id(struct hp_symcache_stamp_list *s, const char *search, const uint8_t *id,
			   size_t len)
{
	char *copy = strdup(search), *rest, *dir, name[PATH_MAX];
	int ret = copy ? 0 : -ENOMEM;

	if (len < 3 || len > HP_SYMCACHE_MAX_BUILD_ID) /* libdwfl's bounds: it looks nowhere */
		len = 0;
	for (rest = copy; !ret && len && (dir = strsep(&rest, ":")) != NULL;) {
		char hex[2 * HP_SYMCACHE_MAX_BUILD_ID + 1];
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
static int add_joined(struct hp_symcache_stamp_list *s, const char *dir, const char *sub,
		      const char *name)
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
static int add_by_link(struct hp_symcache_stamp_list *s, const char *search, const char *file,
		       const char *link)
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
int hp_symcache_stamp_make(struct hp_symcache_mod *m, Dwfl_Module *mod,
			   struct hp_symcache_stamp_list *s)
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
