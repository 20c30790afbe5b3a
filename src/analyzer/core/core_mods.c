/*
 * core_mods.c - the modules of a core: one per file NT_FILE maps, with its
 * load bias, its writable ranges (data and bss: roots of the scan), its
 * build-id and its symbols.
 *
 * The ELF header and program headers come from the core when it holds the
 * module's first page (the kernel dumps it: coredump_filter bit 4, on by
 * default; gdb's gcore too), else from the file on disk. The build-id in
 * the core is compared with the file's: a file that changed since the dump
 * gives no symbols (its addresses would name the wrong things), and one
 * that is gone gives none either; both are noted, and the blocks are still
 * listed by size and reachability, without C++ types.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "../../common/sort.h"
#include "../../common/text.h"
#include "../../common/infile.h"

#define PAGE_MASK_4K 0xfffULL

/* The GNU build-id in a note area, into id (up to 64 bytes); its length or 0. */
static size_t note_build_id(const unsigned char *p, uint64_t n, unsigned char *id)
{
	uint64_t at = 0;

	while (n - at >= 12 && at < n) {
		Elf64_Nhdr h;
		uint64_t desc;
		memcpy(&h, p + at, sizeof h);
		desc = at + 12 + (((uint64_t)h.n_namesz + 3) & ~3ULL);
		if (desc > n || h.n_descsz > n - desc)
			return 0;
		if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 &&
		    memcmp(p + at + 12, "GNU", 4) == 0 && h.n_descsz && h.n_descsz <= 64) {
			memcpy(id, p + desc, h.n_descsz);
			return h.n_descsz;
		}
		at = desc + (((uint64_t)h.n_descsz + 3) & ~3ULL);
	}
	return 0;
}

/* Bias, writable ranges and build-id of m from the headers in the core. */
static size_t core_headers(const struct hp_core *c, struct hp_core_module *m, uint64_t first,
			   unsigned char *id)
{
	const Elf64_Ehdr *eh = hp_core_mem(c, first, sizeof *eh);
	const unsigned char *ph;
	size_t idlen = 0;
	int have_bias = 0;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(Elf64_Phdr))
		return 0;
	ph = hp_core_mem(c, first + eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
	if (!ph)
		return 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr p;
		memcpy(&p, ph + i * sizeof p, sizeof p);
		if (p.p_type == PT_LOAD && !have_bias) {
			m->bias = first - (p.p_vaddr & ~PAGE_MASK_4K);
			have_bias = 1;
		}
	}
	if (!have_bias)
		return 0;
	m->nrw = 0;
	m->nseg = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr p;
		memcpy(&p, ph + i * sizeof p, sizeof p);
		if (p.p_type == PT_LOAD && m->nseg < HP_CORE_MOD_MAX_SEGMENTS)
			m->seg[m->nseg++] = (struct hp_core_mod_seg){p.p_vaddr, p.p_memsz,
								     p.p_offset, p.p_flags};
		if (p.p_type == PT_LOAD && (p.p_flags & PF_W) && m->nrw < 4) {
			m->rw_lo[m->nrw] = m->bias + p.p_vaddr;
			m->rw_hi[m->nrw++] = m->bias + p.p_vaddr + p.p_memsz;
		} else if (p.p_type == PT_NOTE && !idlen) {
			const unsigned char *n = hp_core_mem(c, m->bias + p.p_vaddr, p.p_filesz);
			if (n)
				idlen = note_build_id(n, p.p_filesz, id);
		}
	}
	return idlen ? idlen : (size_t)-1; /* -1: headers read, no build-id */
}

static int sym_cmp(const void *a, const void *b)
{
	const struct hp_core_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The build-id of an open ELF file, into id; its length or 0. */
static size_t elf_build_id(Elf *e, unsigned char *id)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && (n = note_build_id(d->d_buf, d->d_size, id)))
			return n;
	}
	return 0;
}

/* Calls keep for every defined function or object symbol of e (symtab,
 * else dynsym). Returns 0 or -ENOMEM. */
typedef int (*sym_fn)(void *arg, const char *name, const GElf_Sym *s);
static int each_symbol(Elf *e, sym_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int want = SHT_SYMTAB, found = 0;

again:
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned)want || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		found = 1;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			int t;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			t = GELF_ST_TYPE(s.st_info);
			if (t != STT_OBJECT && t != STT_FUNC)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (name && *name && fn(arg, name, &s))
				return -ENOMEM;
		}
	}
	if (!found && want == SHT_SYMTAB) {
		want = SHT_DYNSYM;
		scn = NULL;
		goto again;
	}
	return 0;
}

struct collect {
	struct hp_core_module *m;
	size_t cap, strbytes, strcap;
	int count_only;
};

static int collect_sym(void *arg, const char *name, const GElf_Sym *s)
{
	struct collect *k = arg;
	size_t len = strlen(name) + 1;

	if (k->count_only) {
		k->cap++;
		k->strcap += len;
		return 0;
	}
	if (k->m->nsyms >= k->cap || k->strbytes + len > k->strcap)
		return 0;
	k->m->syms[k->m->nsyms].addr = k->m->bias + s->st_value;
	k->m->syms[k->m->nsyms].size = s->st_size;
	/* an offset for now: the pool may not be final */
	k->m->syms[k->m->nsyms].name = (const char *)(uintptr_t)k->strbytes;
	memcpy(k->m->strings + k->strbytes, name, len);
	k->strbytes += len;
	k->m->nsyms++;
	return 0;
}

static int load_symbols(struct hp_core_module *m, Elf *e)
{
	struct collect k = {.m = m, .count_only = 1};

	each_symbol(e, collect_sym, &k);
	if (!k.cap)
		return 0;
	m->syms = calloc(k.cap, sizeof *m->syms);
	m->strings = malloc(k.strcap);
	if (!m->syms || !m->strings)
		return -ENOMEM;
	k.count_only = 0;
	each_symbol(e, collect_sym, &k);
	for (size_t i = 0; i < m->nsyms; i++)
		m->syms[i].name = m->strings + (uintptr_t)m->syms[i].name;
	hp_sort(m->syms, m->nsyms, sizeof *m->syms, sym_cmp);
	return 0;
}

/* Opens path with libelf; NULL when it is not there, not a regular file
 * or not ELF. */
static Elf *open_elf(const char *path, int *fd)
{
	const char *why;
	Elf *e;

	*fd = hp_infile_open(path, &why); /* a FIFO at a module's path: never waited on */
	if (*fd < 0) {
		*fd = -1;
		return NULL;
	}
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return e;
}

/* Bias and writable ranges from the file, when the core lacks the headers. */
static void file_headers(struct hp_core_module *m, Elf *e, uint64_t first, uint64_t first_off)
{
	size_t n;
	int have_bias = 0;

	if (elf_getphdrnum(e, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr p;
		if (!gelf_getphdr(e, (int)i, &p) || p.p_type != PT_LOAD)
			continue;
		if (!have_bias && (p.p_offset & ~PAGE_MASK_4K) == first_off) {
			m->bias = first - (p.p_vaddr & ~PAGE_MASK_4K);
			have_bias = 1;
		}
	}
	m->nrw = 0;
	m->nseg = 0;
	for (size_t i = 0; i < n && have_bias; i++) {
		GElf_Phdr p;
		if (gelf_getphdr(e, (int)i, &p) && p.p_type == PT_LOAD &&
		    m->nseg < HP_CORE_MOD_MAX_SEGMENTS)
			m->seg[m->nseg++] = (struct hp_core_mod_seg){p.p_vaddr, p.p_memsz,
								     p.p_offset, p.p_flags};
		if (gelf_getphdr(e, (int)i, &p) && p.p_type == PT_LOAD && (p.p_flags & PF_W) &&
		    m->nrw < 4) {
			m->rw_lo[m->nrw] = m->bias + p.p_vaddr;
			m->rw_hi[m->nrw++] = m->bias + p.p_vaddr + p.p_memsz;
		}
	}
}

int hp_core_modules(struct hp_core *c, const char *exe)
{
	elf_version(EV_CURRENT);
	c->mods = calloc(c->nmaps ? c->nmaps : 1, sizeof *c->mods);
	if (!c->mods)
		return -ENOMEM;
	for (size_t i = 0; i < c->nmaps; i++) {
		struct hp_core_map *mp = &c->maps[i];
		struct hp_core_module *m = NULL;
		for (size_t j = 0; j < c->nmods; j++)
			if (strcmp(c->mods[j].path, mp->path) == 0)
				m = &c->mods[j];
		if (m) {
			m->lo = mp->start < m->lo ? mp->start : m->lo;
			m->hi = mp->end > m->hi ? mp->end : m->hi;
			continue;
		}
		m = &c->mods[c->nmods];
		if (!(m->path = strdup(mp->path)))
			return -ENOMEM;
		m->lo = mp->start;
		m->hi = mp->end;
		c->nmods++;
	}
	for (size_t j = 0; j < c->nmods; j++) {
		struct hp_core_module *m = &c->mods[j];
		unsigned char core_id[64], file_id[64];
		size_t core_idlen;
		uint64_t first_off = 0;
		const char *file;
		char shown[1024];
		Elf *e;
		int fd;

		for (size_t i = 0; i < c->nmaps; i++)
			if (c->maps[i].start == m->lo && strcmp(c->maps[i].path, m->path) == 0)
				first_off = c->maps[i].offset;
		m->is_exe = c->auxv_phdr >= m->lo && c->auxv_phdr < m->hi;
		file = m->is_exe && exe ? exe : m->path;
		m->file = file;
		core_idlen = first_off == 0 ? core_headers(c, m, m->lo, core_id) : 0;
		if (core_idlen && core_idlen != (size_t)-1) {
			memcpy(m->build_id, core_id, core_idlen);
			m->build_id_len = core_idlen;
		}
		e = open_elf(file, &fd);
		if (!e) {
			m->status = access(file, F_OK) == 0 ? HP_CORE_MOD_NOT_ELF : HP_CORE_MOD_MISSING;
			/* A mapped file that is not ELF (a locale archive, a cache)
			 * has no symbols to lose: only a gone ELF is worth a note. */
			if (m->status == HP_CORE_MOD_MISSING && core_idlen)
				hp_core_note(c, "%s: is gone: its C++ types and globals are not named",
					     hp_text_escape(shown, sizeof shown, file));
			continue;
		}
		if (!core_idlen) {
			file_headers(m, e, m->lo, first_off);
			m->build_id_len = elf_build_id(e, m->build_id);
		}
		if (core_idlen && core_idlen != (size_t)-1) {
			size_t n = elf_build_id(e, file_id);
			if (n != core_idlen || memcmp(file_id, core_id, n) != 0) {
				m->status = HP_CORE_MOD_CHANGED;
				hp_core_note(c, "%s: has changed since the dump (build-id differs): "
					     "its C++ types and globals are not named",
					     hp_text_escape(shown, sizeof shown, file));
			}
		}
		if (m->status == HP_CORE_MOD_OK && load_symbols(m, e)) {
			elf_end(e);
			close(fd);
			return -ENOMEM;
		}
		elf_end(e);
		close(fd);
	}
	return 0;
}

const struct hp_core_module *hp_core_module_at(const struct hp_core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nmods; i++) {
		const struct hp_core_module *m = &c->mods[i];
		if (addr >= m->lo && addr < m->hi)
			return m;
		for (int r = 0; r < m->nrw; r++)
			if (addr >= m->rw_lo[r] && addr < m->rw_hi[r])
				return m; /* the bss past the file's last page */
	}
	return NULL;
}

const struct hp_core_sym *hp_core_symbol_at(const struct hp_core_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsyms;

	/* the last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* symbols may nest (aliases, zero-sized): look back a few */
	for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++) {
		const struct hp_core_sym *s = &m->syms[i];
		if (addr >= s->addr && addr - s->addr < (s->size ? s->size : 1))
			return s;
	}
	return NULL;
}

struct find {
	const char *name;
	uint64_t value;
	int found;
};

static int find_sym(void *arg, const char *name, const GElf_Sym *s)
{
	struct find *f = arg;

	if (!f->found && strcmp(name, f->name) == 0) {
		f->value = s->st_value;
		f->found = 1;
	}
	return 0;
}

uint64_t hp_core_symbol_addr(const struct hp_core *c, const struct hp_core_module *m,
			     const char *name, const char *debug_dir)
{
	unsigned char id[64];
	size_t idlen = 0;
	char path[4096];
	const char *dirs[2] = {debug_dir, "/usr/lib/debug"};

	for (size_t i = 0; i < m->nsyms; i++)
		if (strcmp(m->syms[i].name, name) == 0)
			return m->syms[i].addr;
	/* The debug file by the build-id in the core: it names the libc that
	 * ran, whatever is on disk now. */
	{
		struct hp_core_module tmp = *m;
		idlen = core_headers(c, &tmp, m->lo, id);
		if (idlen == (size_t)-1)
			idlen = 0;
	}
	if (!idlen && m->status == HP_CORE_MOD_OK) {
		/* not in the core (truncated): the file's, which is the same */
		Elf *e;
		int fd;
		if ((e = open_elf(m->path, &fd))) {
			idlen = elf_build_id(e, id);
			elf_end(e);
			close(fd);
		}
	}
	for (int d = 0; d < 2 && idlen; d++) {
		struct find f = {.name = name};
		size_t at;
		Elf *e;
		int fd;
		if (!dirs[d])
			continue;
		at = (size_t)snprintf(path, sizeof path, "%s/.build-id/%02x/", dirs[d], id[0]);
		for (size_t i = 1; i < idlen && at + 3 < sizeof path; i++)
			at += (size_t)snprintf(path + at, sizeof path - at, "%02x", id[i]);
		snprintf(path + at, sizeof path - at, ".debug");
		if (!(e = open_elf(path, &fd)))
			continue;
		each_symbol(e, find_sym, &f);
		elf_end(e);
		close(fd);
		if (f.found)
			return m->bias + f.value;
	}
	return 0;
}
