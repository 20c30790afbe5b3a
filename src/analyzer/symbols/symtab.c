/*
 * symtab.c - a module's ELF symbol table, sorted once (see symtab.h).
 *
 * The model: libdwfl searches the symbol table in two passes, the global
 * and weak symbols (table indexes first_global..n), then, only if no sized
 * symbol of the first pass contains the address and no assembly label of
 * the first pass sits exactly on it, the local ones (1..first_global). Each
 * pass here is an array of the symbols libdwfl would consider (named, not
 * undefined, not a section, file or TLS symbol), sorted by address, with
 * the running maximum of their end addresses. For an address:
 *
 *   - the sized symbols that contain it are found by walking back from the
 *     last symbol that starts at or below it while the running maximum end
 *     is above it (usually one or two steps); libdwfl's choice among them
 *     depends on table order, so they are replayed in table order through
 *     the same comparison;
 *   - when none does, libdwfl falls back to the last assembly label in the
 *     address's section that no earlier symbol passes over: a label whose
 *     address equals the largest end among the symbols at or below the
 *     address (its "min_label"), the last such in table order.
 *
 * Invariant: pass[k].maxend[i] = max(end of e[0..i]). The table never
 * changes after hp_symtab_build.
 */
#include "symtab.h"
#include "../../common/sort.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t value, end;  /* adjusted address, value + st_size */
	const char *name;
	uint32_t index;	      /* in libdwfl's symbol table: table order */
	GElf_Word shndx;
	int binding;	      /* libdwfl's order: global 3, weak 2, local 1 */
};

struct pass {
	struct entry *e;
	uint64_t *maxend;
	size_t n;
};

struct hp_symtab {
	Dwfl_Module *mod;
	struct pass pass[2]; /* [0] global and weak, [1] local (empty if none) */
	size_t count;
};

/* Sorts by address, then table order. */
static int by_value(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int binding_value(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* Reads table indexes [from, to) into p, sorted. */
static int read_pass(struct pass *p, Dwfl_Module *mod, int from, int to)
{
	size_t cap = to > from ? (size_t)(to - from) : 0;

	p->n = 0;
	if (!cap)
		return 0;
	p->e = malloc(cap * sizeof *p->e);
	if (!p->e)
		return -ENOMEM;
	for (int i = from; i < to; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name =
			dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		p->e[p->n++] = (struct entry){value, value + sym.st_size, name, (uint32_t)i, shndx,
					      binding_value(sym.st_info)};
	}
	hp_sort(p->e, p->n, sizeof *p->e, by_value);
	p->maxend = malloc((p->n ? p->n : 1) * sizeof *p->maxend);
	if (!p->maxend)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		p->maxend[i] = i && p->maxend[i - 1] > p->e[i].end ? p->maxend[i - 1] : p->e[i].end;
	return 0;
}

int hp_symtab_build(struct hp_symtab **out, Dwfl_Module *mod)
{
	struct hp_symtab *t = calloc(1, sizeof *t);
	int n, first_global, ret = 0;

	if (!t)
		return -ENOMEM;
	t->mod = mod;
	n = dwfl_module_getsymtab(mod);
	first_global = n > 0 ? dwfl_module_getsymtab_first_global(mod) : -1;
	if (n > 0 && first_global >= 0) {
		/* first_global 0: only a .dynsym found through the program
		 * headers, searched in one pass. */
		ret = read_pass(&t->pass[0], mod, first_global == 0 ? 1 : first_global, n);
		if (!ret && first_global > 1)
			ret = read_pass(&t->pass[1], mod, 1, first_global);
	}
	if (ret) {
		hp_symtab_free(t);
		return ret;
	}
	t->count = t->pass[0].n + t->pass[1].n;
	*out = t;
	return 0;
}

void hp_symtab_free(struct hp_symtab *t)
{
	if (!t)
		return;
	for (int k = 0; k < 2; k++) {
		free(t->pass[k].e);
		free(t->pass[k].maxend);
	}
	free(t);
}

size_t hp_symtab_count(const struct hp_symtab *t)
{
	return t->count;
}

/* How many entries start at or below address. */
static size_t upper(const struct pass *p, uint64_t address)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->e[mid].value <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index of the allocated section of the main ELF file that holds
 * address (its end included unless the next section starts there), or
 * SHN_UNDEF: libdwfl's own lookup. */
static GElf_Word section_of(Dwfl_Module *mod, uint64_t address)
{
	Dwarf_Addr at = address, bias;
	Elf_Scn *scn = dwfl_module_address_section(mod, &at, &bias);
	return scn ? (GElf_Word)elf_ndxscn(scn) : SHN_UNDEF;
}

/* Whether address is in e's section, as libdwfl decides it for
 * dwfl_module_addrname: the sections of the two addresses compared (two
 * addresses outside every section count as one section); absolute and
 * other special symbols only on their exact address. */
static int same_section(Dwfl_Module *mod, const struct entry *e, uint64_t address)
{
	if (e->shndx >= SHN_LORESERVE)
		return e->value == address;
	return section_of(mod, address) == section_of(mod, e->value);
}

/* libdwfl's choice among the sized symbols of one pass that contain
 * address, replayed in table order; NULL if none does. */
static const struct entry *closest_in(const struct pass *p, size_t below, uint64_t address)
{
	const struct entry *c[64], *best = NULL;
	size_t nc = 0;

	for (size_t i = below; i-- > 0 && p->maxend[i] > address;) {
		if (p->e[i].end > address && nc < sizeof c / sizeof *c)
			c[nc++] = &p->e[i];
	}
	/* Table order: nc is tiny, insertion sort. */
	for (size_t i = 1; i < nc; i++)
		for (size_t j = i; j > 0 && c[j - 1]->index > c[j]->index; j--) {
			const struct entry *x = c[j];
			c[j] = c[j - 1];
			c[j - 1] = x;
		}
	for (size_t i = 0; i < nc; i++) {
		const struct entry *s = c[i];
		uint64_t bsize = best ? best->end - best->value : 0, ssize = s->end - s->value;
		if (!best || best->value < s->value || best->binding < s->binding)
			best = s;
		else if (best->value == s->value &&
			 ((bsize > ssize && best->binding <= s->binding) ||
			  (bsize >= ssize && best->binding < s->binding)))
			best = s;
	}
	return best;
}

/* The last (in table order) label of size 0 at value that is in address's
 * section, or NULL. */
static const struct entry *label_at(const struct hp_symtab *t, const struct pass *p,
				    uint64_t value, uint64_t address)
{
	const struct entry *best = NULL;

	for (size_t i = upper(p, value); i-- > 0 && p->e[i].value == value;) {
		const struct entry *e = &p->e[i];
		if (e->end == e->value && (!best || e->index > best->index) &&
		    same_section(t->mod, e, address))
			best = e;
	}
	return best;
}

const char *hp_symtab_lookup(const struct hp_symtab *t, uint64_t address)
{
	const struct pass *g = &t->pass[0], *l = &t->pass[1];
	const struct entry *best, *label = NULL;
	size_t below = upper(g, address);
	uint64_t min_label = below ? g->maxend[below - 1] : 0;

	if ((best = closest_in(g, below, address)) != NULL)
		return best->name;
	/* The locals, unless a global label sits exactly on the address. */
	if (l->n && !label_at(t, g, address, address)) {
		size_t lbelow = upper(l, address);
		if ((best = closest_in(l, lbelow, address)) != NULL)
			return best->name;
		if (lbelow && l->maxend[lbelow - 1] > min_label)
			min_label = l->maxend[lbelow - 1];
		label = label_at(t, l, min_label, address);
	}
	if (!label)
		label = label_at(t, g, min_label, address);
	return label ? label->name : NULL;
}
