/*
 * got.c - GOT rewriting (see got.h).
 *
 * The dynamic section of a loaded object, as glibc leaves it on x86-64,
 * holds absolute addresses for DT_SYMTAB, DT_STRTAB, DT_JMPREL and
 * DT_RELA (the loader relocates them in place); a value below the load
 * bias is taken as relative, for loaders that do not. Relocations of
 * type JUMP_SLOT (calls through the PLT) and GLOB_DAT (address taken)
 * name their symbol; their r_offset is the GOT entry.
 */
#include "got.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "os.h"

struct search {
	uintptr_t in;
	const struct hp_got_patch *patches;
	size_t n;
	int found, rewritten;
};

static int contains(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

/* Writes *slot = fn, through a writable mapping when RELRO made the
 * page read-only. */
static int rewrite(const struct dl_phdr_info *info, void **slot, void *fn)
{
	uintptr_t page = hp_os_page_size(), at = (uintptr_t)slot & ~(page - 1);
	int relro = 0, err;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_RELRO && (uintptr_t)slot >= lo &&
		    (uintptr_t)slot < lo + ph->p_memsz)
			relro = 1;
	}
	err = relro ? hp_os_protect((void *)at, page, 1) : 0;
	if (err)
		return err;
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	if (relro)
		hp_os_protect((void *)at, page, 0);
	return 0;
}

static void patch_relocs(struct search *s, const struct dl_phdr_info *info, const ElfW(Rela) *r,
			 size_t bytes, const ElfW(Sym) *symtab, const char *strtab)
{
	for (size_t i = 0; i < bytes / sizeof *r; i++) {
		unsigned type = ELF64_R_TYPE(r[i].r_info);
		const char *name;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		name = strtab + symtab[ELF64_R_SYM(r[i].r_info)].st_name;
		for (size_t k = 0; k < s->n; k++) {
			if (strcmp(name, s->patches[k].name) != 0)
				continue;
			if (rewrite(info, (void **)(info->dlpi_addr + r[i].r_offset),
				    s->patches[k].fn) == 0)
				s->rewritten++;
		}
	}
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct search *s = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	uintptr_t jmprel = 0, rela = 0;
	size_t jmprel_bytes = 0, rela_bytes = 0;
	(void)size;

	if (!contains(info, s->in))
		return 0;
	s->found = 1;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 1;
#define ADDR(v) ((uintptr_t)(v) < info->dlpi_addr ? info->dlpi_addr + (uintptr_t)(v) : (uintptr_t)(v))
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)ADDR(dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)ADDR(dyn->d_un.d_ptr); break;
		case DT_JMPREL: jmprel = ADDR(dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmprel_bytes = dyn->d_un.d_val; break;
		case DT_RELA: rela = ADDR(dyn->d_un.d_ptr); break;
		case DT_RELASZ: rela_bytes = dyn->d_un.d_val; break;
		}
	}
#undef ADDR
	if (!symtab || !strtab)
		return 1;
	if (jmprel)
		patch_relocs(s, info, (const ElfW(Rela) *)jmprel, jmprel_bytes, symtab, strtab);
	if (rela)
		patch_relocs(s, info, (const ElfW(Rela) *)rela, rela_bytes, symtab, strtab);
	return 1;
}

int hp_got_patch(uintptr_t in, const struct hp_got_patch *patches, size_t n)
{
	struct search s = {in, patches, n, 0, 0};

	hp_os_dl_iterate(visit, &s);
	return s.found ? s.rewritten : -ENOENT;
}
