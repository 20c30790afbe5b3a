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
	const struct hp_got_patch *patches; /* hp_got_patch's; else routes */
	const struct hp_got_route *routes;
	size_t n;
	int found, rewritten;
	struct hp_got_log *log; /* patch_all: every object but in's, logged */
	int full;
	size_t skipped; /* entries bound to another function than expect */
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

/* Doubles the log's room (a fresh mapping; the old one unmapped). */
static int grow(struct hp_got_log *log)
{
	size_t cap = log->cap ? log->cap * 2 : 4096;
	struct hp_got_entry *e = hp_os_map(cap * sizeof *e);

	if (!e)
		return -ENOMEM;
	if (log->count)
		memcpy(e, log->entries, log->count * sizeof *e);
	if (log->entries)
		hp_os_unmap(log->entries, log->cap * sizeof *e);
	log->entries = e;
	log->cap = cap;
	return 0;
}

/* What the GOT entry holding old, for symbol sym of the object info, is
 * bound to: old itself when it lies outside the object or is the object's
 * own definition of sym; otherwise (a PLT stub of a lazy binding) what
 * the loader will bind it to, unbound. */
static void *bound_to(const struct dl_phdr_info *info, const ElfW(Sym) *sym, void *old,
		      void *unbound)
{
	if (!contains(info, (uintptr_t)old))
		return old;
	if (sym->st_shndx != SHN_UNDEF && (uintptr_t)old == info->dlpi_addr + sym->st_value)
		return old;
	return unbound;
}

static void patch_relocs(struct search *s, const struct dl_phdr_info *info, const ElfW(Rela) *r,
			 size_t bytes, const ElfW(Sym) *symtab, const char *strtab)
{
	for (size_t i = 0; i < bytes / sizeof *r; i++) {
		unsigned type = ELF64_R_TYPE(r[i].r_info);
		const ElfW(Sym) *sym;
		const char *name;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		sym = &symtab[ELF64_R_SYM(r[i].r_info)];
		name = strtab + sym->st_name;
		for (size_t k = 0; k < s->n; k++) {
			const struct hp_got_route *p =
				s->routes ? &s->routes[k]
					  : &(const struct hp_got_route){s->patches[k].name,
									 s->patches[k].fn, NULL,
									 NULL, 0};
			void **slot = (void **)(info->dlpi_addr + r[i].r_offset);
			void *old;

			if (strcmp(name, p->name) != 0)
				continue;
			old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
			if (old == p->fn && s->log)
				continue; /* patched already */
			if (p->expect && (bound_to(info, sym, old, p->unbound) != p->expect ||
					  (p->not_home && contains(info, (uintptr_t)p->expect)))) {
				s->skipped++; /* calls another function, or its own */
				continue;
			}
			if (s->log) {
				if (s->log->count == s->log->cap && grow(s->log) < 0) {
					s->full = 1;
					return;
				}
			}
			if (rewrite(info, slot, p->fn) != 0)
				continue;
			s->rewritten++;
			if (s->log)
				s->log->entries[s->log->count++] =
					(struct hp_got_entry){slot, old, p->fn};
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

	if (s->log ? contains(info, s->in) : !contains(info, s->in))
		return 0;
	s->found = 1;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return !s->log;
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
		return !s->log;
	if (jmprel)
		patch_relocs(s, info, (const ElfW(Rela) *)jmprel, jmprel_bytes, symtab, strtab);
	if (rela && !s->full)
		patch_relocs(s, info, (const ElfW(Rela) *)rela, rela_bytes, symtab, strtab);
	return s->log ? s->full : 1; /* patch_all: on to the next object */
}

int hp_got_patch(uintptr_t in, const struct hp_got_patch *patches, size_t n)
{
	struct search s = {in, patches, NULL, n, 0, 0, NULL, 0, 0};

	hp_os_dl_iterate(visit, &s);
	return s.found ? s.rewritten : -ENOENT;
}

int hp_got_patch_all(uintptr_t skip, const struct hp_got_route *routes, size_t n,
		     struct hp_got_log *log, size_t *skipped)
{
	struct search s = {skip, NULL, routes, n, 0, 0, log, 0, 0};

	hp_os_dl_iterate(visit, &s);
	if (skipped)
		*skipped = s.skipped;
	return s.full ? -ENOMEM : s.rewritten;
}

static int restore_in(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hp_got_log *log = arg;
	(void)size;

	/* Newest first: an entry logged twice (an object unloaded, another
	 * loaded at its address and patched) ends with its first value. */
	for (size_t i = log->count; i-- > 0;) {
		struct hp_got_entry *e = &log->entries[i];
		if (!e->slot || !contains(info, (uintptr_t)e->slot))
			continue;
		if (__atomic_load_n(e->slot, __ATOMIC_ACQUIRE) == e->now &&
		    rewrite(info, e->slot, e->old) == 0)
			e->now = e->old;
		e->slot = NULL; /* done, put back or not ours any more */
	}
	return 0;
}

int hp_got_restore(struct hp_got_log *log)
{
	int restored = 0;

	if (!log->count)
		return 0;
	hp_os_dl_iterate(restore_in, log);
	for (size_t i = 0; i < log->count; i++)
		restored += log->entries[i].now == log->entries[i].old;
	log->count = 0;
	return restored;
}
