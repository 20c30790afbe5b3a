/*
 * core_file.c - an ELF core of an x86-64 Linux process: its memory (the
 * PT_LOAD segments) and its notes (threads, mapped files, auxv).
 *
 * The file is mapped read-only and never copied: hp_core_mem hands out
 * pointers into the mapping, checked against the segment and against the
 * bytes really present in the file, so a truncated core reads as memory
 * that is not there (NULL), never past the end of the mapping. The tables
 * (segments, threads, NT_FILE entries) have one entry per program header
 * or note, each bounded by the file's size.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "../../common/infile.h"
#include "../../common/sort.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

void hp_core_note(struct hp_core *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	char **n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < c->nnotes; i++)
		if (strcmp(c->notes[i], buf) == 0)
			return;
	n = realloc(c->notes, (c->nnotes + 1) * sizeof *n);
	if (!n)
		return; /* a note lost to a lack of memory: the report goes on */
	c->notes = n;
	if ((n[c->nnotes] = strdup(buf)))
		c->nnotes++;
}

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "arm";
	case EM_AARCH64: return "aarch64";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390x";
	case EM_RISCV: return "riscv";
	case EM_MIPS: return "mips";
	default: return "another architecture";
	}
}

static int seg_cmp(const void *a, const void *b)
{
	const struct hp_core_seg *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

const struct hp_core_seg *hp_core_seg_at(const struct hp_core *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct hp_core_seg *s = &c->segs[mid];
		if (addr < s->vaddr)
			hi = mid;
		else if (addr - s->vaddr >= s->memsz)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

const void *hp_core_mem(const struct hp_core *c, uint64_t addr, uint64_t len)
{
	const struct hp_core_seg *s = hp_core_seg_at(c, addr);
	uint64_t off;

	if (!s)
		return NULL;
	off = addr - s->vaddr;
	if (len > s->present || off > s->present - len)
		return NULL; /* not dumped (a file's text), or cut off by truncation */
	return c->map + s->offset + off;
}

uint64_t hp_core_word(const struct hp_core *c, uint64_t addr, int *ok)
{
	const void *p = hp_core_mem(c, addr, 8);
	uint64_t w = 0;

	if (ok)
		*ok = p != NULL;
	if (p)
		memcpy(&w, p, 8);
	return w;
}

static void read_file_note(struct hp_core *c, const unsigned char *d, uint64_t n)
{
	uint64_t count, page, names;

	if (n < 16)
		return;
	memcpy(&count, d, 8);
	memcpy(&page, d + 8, 8);
	if (count > (n - 16) / 24)
		return;
	c->maps = calloc(count ? count : 1, sizeof *c->maps);
	if (!c->maps)
		return;
	c->map_page_bytes = page;
	names = 16 + count * 24;
	for (uint64_t i = 0; i < count && names < n; i++) {
		const unsigned char *e = d + 16 + i * 24;
		const char *name = (const char *)d + names;
		const void *nul = memchr(name, 0, n - names);
		struct hp_core_map *m = &c->maps[c->nmaps];
		if (!nul)
			break;
		memcpy(&m->start, e, 8);
		memcpy(&m->end, e + 8, 8);
		memcpy(&m->offset, e + 16, 8);
		m->offset *= page;
		m->path = name;
		names += (uint64_t)((const char *)nul - name) + 1;
		c->nmaps++;
	}
}

static void read_notes(struct hp_core *c, const unsigned char *p, uint64_t n)
{
	uint64_t at = 0;

	while (n - at >= 12) {
		Elf64_Nhdr h;
		uint64_t desc;
		memcpy(&h, p + at, sizeof h);
		desc = at + 12 + (((uint64_t)h.n_namesz + 3) & ~3ULL);
		if (desc > n || h.n_descsz > n - desc)
			break;
		const unsigned char *d = p + desc;
		if (h.n_type == NT_PRSTATUS && h.n_descsz >= sizeof(struct elf_prstatus)) {
			struct elf_prstatus st;
			struct hp_core_thread *t =
				realloc(c->threads, (c->nthreads + 1) * sizeof *t);
			if (!t)
				return;
			c->threads = t;
			memcpy(&st, d, sizeof st);
			t[c->nthreads].tid = st.pr_pid;
			memcpy(t[c->nthreads].regs, &st.pr_reg, sizeof t->regs);
			if (c->nthreads++ == 0)
				c->signal = st.pr_cursig;
		} else if (h.n_type == NT_PRPSINFO && h.n_descsz >= sizeof(struct elf_prpsinfo)) {
			struct elf_prpsinfo ps;
			memcpy(&ps, d, sizeof ps);
			memcpy(c->program, ps.pr_fname, 16);
			c->program[16] = '\0';
			c->pid = ps.pr_pid;
		} else if (h.n_type == NT_AUXV) {
			for (uint64_t i = 0; i + 16 <= h.n_descsz; i += 16) {
				uint64_t k, v;
				memcpy(&k, d + i, 8);
				memcpy(&v, d + i + 8, 8);
				if (k == AT_PHDR)
					c->auxv_phdr = v;
				else if (k == AT_ENTRY)
					c->auxv_entry = v;
			}
		} else if (h.n_type == NT_FILE && !c->maps) {
			read_file_note(c, d, h.n_descsz);
		}
		at = desc + (((uint64_t)h.n_descsz + 3) & ~3ULL);
	}
}

static int parse(struct hp_core *c, char *err, size_t errcap);

int hp_core_open(struct hp_core *c, const char *path, char *err, size_t errcap)
{
	struct stat st;
	Elf64_Ehdr eh;
	const char *why;
	int fd, ret;

	memset(c, 0, sizeof *c);
	c->path = path;
	fd = hp_infile_open(path, &why); /* never waits on a FIFO or a device */
	if (fd < 0) {
		snprintf(err, errcap, "%s: %s", path, why ? why : strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errcap, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (st.st_size < (off_t)sizeof eh) {
		snprintf(err, errcap, "%s: not an ELF core (too short)", path);
		close(fd);
		return -EINVAL;
	}
	c->map_bytes = (size_t)st.st_size;
	c->map = mmap(NULL, c->map_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		ret = -errno;
		snprintf(err, errcap, "%s: cannot map: %s", path, strerror(errno));
		return ret;
	}
	return parse(c, err, errcap);
}

int hp_core_open_mem(struct hp_core *c, const void *data, size_t size, const char *name,
		     char *err, size_t errcap)
{
	memset(c, 0, sizeof *c);
	c->path = name;
	if (size < sizeof(Elf64_Ehdr)) {
		snprintf(err, errcap, "%s: not an ELF core (too short)", name);
		return -EINVAL;
	}
	c->map = data;
	c->map_bytes = size;
	c->map_borrowed = 1;
	return parse(c, err, errcap);
}

/* Reads the headers and notes of the core at c->map (hp_core_open's). */
static int parse(struct hp_core *c, char *err, size_t errcap)
{
	const char *path = c->path;
	Elf64_Ehdr eh;

	memcpy(&eh, c->map, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		snprintf(err, errcap, "%s: not an ELF file", path);
		goto bad;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64) {
		Elf32_Ehdr e32;
		memcpy(&e32, c->map, sizeof e32);
		snprintf(err, errcap,
			 "%s: a core of %s (ELF machine %u, %d-bit): heapprof reads x86-64 cores",
			 path, machine_name(eh.e_ident[EI_CLASS] == ELFCLASS32 ? e32.e_machine
									      : eh.e_machine),
			 eh.e_ident[EI_CLASS] == ELFCLASS32 ? e32.e_machine : eh.e_machine,
			 eh.e_ident[EI_CLASS] == ELFCLASS32 ? 32 : 64);
		goto bad;
	}
	if (eh.e_type != ET_CORE) {
		snprintf(err, errcap, "%s: an ELF %s, not a core dump", path,
			 eh.e_type == ET_EXEC || eh.e_type == ET_DYN ? "program or library"
								      : "file");
		goto bad;
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > c->map_bytes ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > c->map_bytes - eh.e_phoff) {
		snprintf(err, errcap, "%s: truncated or damaged: its program headers are not all "
			 "there (%llu bytes)", path, (unsigned long long)c->map_bytes);
		goto bad;
	}
	c->segs = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof *c->segs);
	if (!c->segs) {
		snprintf(err, errcap, "%s: out of memory", path);
		hp_core_close(c);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t present = 0;
		memcpy(&ph, c->map + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
		if (ph.p_offset < c->map_bytes)
			present = c->map_bytes - ph.p_offset;
		if (present > ph.p_filesz)
			present = ph.p_filesz;
		if (ph.p_filesz && ph.p_offset + ph.p_filesz > c->need_bytes)
			c->need_bytes = ph.p_offset + ph.p_filesz;
		if (ph.p_type == PT_NOTE) {
			read_notes(c, c->map + ph.p_offset, present);
		} else if (ph.p_type == PT_LOAD && ph.p_memsz) {
			struct hp_core_seg *s = &c->segs[c->nsegs++];
			s->vaddr = ph.p_vaddr;
			s->memsz = ph.p_memsz;
			s->offset = ph.p_offset;
			s->filesz = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;
			s->present = present < s->filesz ? present : s->filesz;
			s->flags = ph.p_flags;
		}
	}
	hp_sort(c->segs, c->nsegs, sizeof *c->segs, seg_cmp);
	if (c->need_bytes > c->map_bytes)
		hp_core_note(c, "%s: truncated: %llu of its %llu bytes are missing; what they held "
			     "is not shown", path,
			     (unsigned long long)(c->need_bytes - c->map_bytes),
			     (unsigned long long)c->need_bytes);
	if (!c->nthreads)
		hp_core_note(c, "%s: no thread in the core (no NT_PRSTATUS note): no stack or "
			     "register is scanned", path);
	return 0;
bad:
	hp_core_close(c);
	return -EINVAL;
}

void hp_core_close(struct hp_core *c)
{
	hp_core_rec_free(&c->rec);
	for (size_t i = 0; i < c->nmods; i++) {
		free(c->mods[i].path);
		free(c->mods[i].syms);
		free(c->mods[i].strings);
	}
	free(c->mods);
	for (size_t i = 0; i < c->ntypes; i++)
		free(c->types[i]);
	free(c->types);
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	free(c->blocks);
	free(c->internal);
	free(c->segs);
	free(c->threads);
	free(c->maps);
	if (c->map && !c->map_borrowed)
		munmap((void *)c->map, c->map_bytes);
	memset(c, 0, sizeof *c);
}
