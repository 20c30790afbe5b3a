/*
 * symbolize.c - frame addresses to functions, files and lines, with
 * elfutils' libdwfl (see symbolize.h).
 *
 * Each capture module gets a Dwfl of its own, opened on first use: modules
 * loaded at different times may have occupied the same addresses, which one
 * Dwfl would refuse. Within a module: the DWARF scopes at the address give
 * the inline chain (innermost first) with the call sites' files and lines;
 * the line table gives the innermost line; the ELF symbol table names
 * functions that have no DWARF.
 *
 * With a symbol cache (symcache.h), each address is first looked up
 * there, by its module's build-id; only the addresses it lacks go to
 * libdw, and what libdw answers is stored in it. A module whose addresses
 * all hit is never opened: its status is the one its cache file vouches
 * for (HP_MODSYM_OK).
 */
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/infile.h"
#include "../../common/sort.h"
#include "../../common/strtab.h"
#include "../../common/table.h"
#include "../../common/vec.h"
#include "demangle.h"
#include "symcache.h"
#include "symtab.h"
#include "../../common/text.h"

/* A compile unit's functions, read once: every subprogram and inlined
 * subroutine with its address ranges and its nearest function-like
 * ancestor. libdw's dwarf_getscopes walks the whole unit on every call,
 * which on a large unit (an interpreter's main loop) costs milliseconds
 * per address. */
struct fn_die {
	Dwarf_Die die;
	int parent; /* index of the enclosing function-like DIE, -1 at the top */
	int depth;
};

struct fn_range {
	Dwarf_Addr lo, hi;
	int fn;
};

struct cu_table {
	Dwarf_Off offset; /* of the CU DIE */
	struct fn_die *fns;
	size_t nfns, capfns;
	struct fn_range *ranges;
	size_t nranges, capranges;
};

/* A CU's address range, for modules without .debug_aranges. */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off offset; /* of the CU DIE */
};

struct module_state {
	int opened; /* libdw was asked: status is its answer */
	/* The module's symbol cache (NULL: none), looked up once. */
	int cache_looked;
	struct hp_symcache_mod *cache;
	/* The CUs' ranges, sorted, read once when an address has no CU by
	 * .debug_aranges (clang writes none): cu_ranges_read, then ncu_ranges
	 * entries (NULL when none or short of memory). */
	int cu_ranges_read;
	struct cu_range *cu_ranges;
	size_t ncu_ranges;
	enum hp_module_status status;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct hp_symtab *symtab; /* read on the first address without DWARF */
	int symtab_read;
	struct cu_table *cus;
	size_t ncus, capcus;
	/* Data symbols (hp_symbolizer_data_symbol) with embedded symbols:
	 * the binary opened for them alone. */
	int data_opened;
	/* With embedded symbols: dwfl and mod opened for the DWARF of
	 * new-expressions alone (hp_symbolizer_new_type). */
	int dwarf_opened;
	Dwfl *data_dwfl;
	Dwfl_Module *data_mod;
	struct hp_symtab *data_symtab;
};

/* Progress on stderr while symbolizing from the binaries, when stderr is a
 * terminal and the work has taken longer than after_ns: one line naming the
 * module at hand, rewritten in place at most every 100 ms, cleared after
 * the last address. The addresses are counted per module up
 * front (distinct frame addresses of the capture's stacks). */
struct progress {
	int on;
	uint64_t after_ns, start_ns, shown_ns;
	size_t total, done;
	size_t *per_module; /* distinct addresses per module; [nmodules]: none */
	int shown;	    /* a line is on the terminal */
};

struct hp_symbolizer {
	const struct hp_capture *cap;
	int embedded; /* answer from the capture's SYMBOLS record */
	int no_files; /* HP_SYMBOLIZE_NO_FILES: open nothing */
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	struct module_state *mods;
	struct hp_symcache *cache; /* the caller's, or NULL */
	struct hp_strpool strings; /* every name returned */
	struct progress progress;
	int nomem; /* an allocation failed during the lookup at hand */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Counts the distinct frame addresses of the capture per module (a set,
 * freed before returning). Returns 0 or -ENOMEM. */
static int count_addresses(struct progress *pr, const struct hp_capture *cap)
{
	struct hp_u64map seen = {0};
	uint32_t unused;
	int ret = 0;

	pr->per_module = calloc(cap->nmodules + 1, sizeof *pr->per_module);
	if (!pr->per_module)
		return -ENOMEM;
	for (size_t id = 1; id < cap->nstacks && !ret; id++) {
		const struct hp_cap_stack *st = &cap->stacks[id];
		for (uint32_t f = 0; f < st->depth && !ret; f++) {
			uint64_t a = hp_cap_frame(cap, st, f);
			if (!a || hp_u64map_get(&seen, a, &unused))
				continue;
			ret = hp_u64map_put(&seen, a, 0);
			const struct hp_cap_module *m = hp_capture_module_of(cap, a - 1);
			pr->per_module[m ? (size_t)(m - cap->modules) : cap->nmodules]++;
			pr->total++;
		}
	}
	hp_u64map_free(&seen);
	return ret;
}

/* HEAPPROF_PROGRESS_MS: after how long progress shows (default 1000;
 * tests set 0). */
static void progress_start(struct progress *pr, const struct hp_capture *cap)
{
	const char *env = getenv("HEAPPROF_PROGRESS_MS");
	char *end;
	long ms = env && *env ? strtol(env, &end, 10) : 1000;

	if (!isatty(2) || (env && *env && (*end || ms < 0)))
		return;
	pr->after_ns = (uint64_t)ms * 1000000u;
	pr->start_ns = now_ns();
	pr->on = count_addresses(pr, cap) == 0;
}

/* Clears the progress line, if one is shown. */
static void progress_end(struct progress *pr)
{
	if (pr->shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	pr->shown = 0;
	free(pr->per_module);
	pr->per_module = NULL;
}

/* One more address of module i (-1: none) symbolized; the line is cleared
 * after the last one. */
static void progress_step(struct progress *pr, const struct hp_capture *cap, int i)
{
	uint64_t now;

	pr->done++;
	if (pr->on && pr->done >= pr->total) {
		progress_end(pr);
		pr->on = 0;
		return;
	}
	if (!pr->on || ((now = now_ns()) - pr->start_ns < pr->after_ns) ||
	    (pr->shown && now - pr->shown_ns < 100000000u))
		return;
	const char *path = i >= 0 ? cap->modules[i].path : "(no module)";
	const char *base = strrchr(path, '/');
	size_t n = pr->per_module[i >= 0 ? (size_t)i : cap->nmodules];
	fprintf(stderr, "\rheapprof: symbolizing %zu addresses in %s (%zu of %zu in all)...\033[K",
		n, base ? base + 1 : path, pr->done, pr->total);
	fflush(stderr);
	pr->shown_ns = now;
	pr->shown = 1;
}

int hp_symbolizer_new(struct hp_symbolizer **out, const struct hp_capture *cap,
		      const char *debug_dir, unsigned flags)
{
	struct hp_symbolizer *s = calloc(1, sizeof *s);
	size_t n;

	if (!s)
		return -ENOMEM;
	s->cap = cap;
	s->embedded = (flags & HP_SYMBOLIZE_EMBEDDED) && cap->has_symbols;
	s->no_files = (flags & HP_SYMBOLIZE_NO_FILES) != 0;
	s->mods = calloc(cap->nmodules ? cap->nmodules : 1, sizeof *s->mods);
	/* "-" leaves out CRC checks of .gnu_debuglink files (build-ids are
	 * checked instead); then the usual places, and the user's directory. */
	n = strlen("-:.debug:/usr/lib/debug") + (debug_dir ? strlen(debug_dir) + 1 : 0) + 1;
	s->debuginfo_path = malloc(n);
	if (!s->mods || !s->debuginfo_path) {
		hp_symbolizer_free(s);
		return -ENOMEM;
	}
	snprintf(s->debuginfo_path, n, "-:.debug:/usr/lib/debug%s%s", debug_dir ? ":" : "",
		 debug_dir ? debug_dir : "");
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	if (!s->embedded && !s->no_files)
		progress_start(&s->progress, cap);
	*out = s;
	return 0;
}

void hp_symbolizer_set_cache(struct hp_symbolizer *s, struct hp_symcache *cache)
{
	s->cache = s->embedded || s->no_files ? NULL : cache;
}

void hp_symbolizer_free(struct hp_symbolizer *s)
{
	if (!s)
		return;
	progress_end(&s->progress);
	for (size_t i = 0; s->mods && i < s->cap->nmodules; i++) {
		for (size_t c = 0; c < s->mods[i].ncus; c++) {
			free(s->mods[i].cus[c].fns);
			free(s->mods[i].cus[c].ranges);
		}
		free(s->mods[i].cus);
		free(s->mods[i].cu_ranges);
		hp_symtab_free(s->mods[i].symtab);
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
		hp_symtab_free(s->mods[i].data_symtab);
		if (s->mods[i].data_dwfl)
			dwfl_end(s->mods[i].data_dwfl);
	}
	hp_strpool_free(&s->strings);
	free(s->mods);
	free(s->debuginfo_path);
	free(s);
}

/* An escaped copy of str in the string pool. Out of memory, it notes it
 * in s->nomem (hp_symbolizer_lookup then fails with -ENOMEM, so the
 * placeholder it returns is never shown). */
static const char *intern(struct hp_symbolizer *s, const char *str)
{
	size_t n = hp_text_escaped_len(str) + 1;
	char *p = hp_strpool_alloc(&s->strings, n);

	if (!p) {
		s->nomem = 1;
		return "?";
	}
	return hp_text_escape(p, n, str);
}

const char *hp_symbolizer_intern(struct hp_symbolizer *s, const char *str)
{
	return intern(s, str);
}

/* str as it may be shown: itself when clean, else an escaped copy. */
static const char *shown(struct hp_symbolizer *s, const char *str)
{
	return hp_text_is_clean(str) ? str : intern(s, str);
}

/* Opens a module's file for reading, or returns -1. The path comes from
 * the capture, which may be hostile or simply stale: a FIFO, a device or a
 * directory at that path must neither block (a FIFO's open waits for a
 * writer, a terminal or a tape for anything) nor be read. So the open does
 * not block, and what it opened must be a regular file (infile.h). Symlinks are
 * followed (no O_NOFOLLOW): libraries are installed through them
 * (libc.so.6 -> libc-2.36.so), and the check applies to their target. */
static int open_regular(const char *path)
{
	const char *why;
	int fd = hp_infile_open(path, &why); /* an ordinary descriptor for libelf */

	return fd < 0 ? -1 : fd;
}

/* Opens module i's binary into *dwfl and *mod, checking its build-id.
 * Returns its status (HP_MODSYM_OK: *mod is usable). */
static enum hp_module_status open_binary(struct hp_symbolizer *s, int i, Dwfl **dwfl,
					 Dwfl_Module **mod)
{
	const struct hp_cap_module *m = &s->cap->modules[i];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	*mod = NULL;
	if (s->no_files)
		return HP_MODSYM_MISSING;
	if (m->path[0] != '/') /* [vdso] and friends: nothing on disk */
		return HP_MODSYM_MISSING;
	fd = open_regular(m->path);
	if (fd < 0)
		return HP_MODSYM_MISSING;
	*dwfl = dwfl_begin(&s->callbacks);
	if (!*dwfl) {
		close(fd);
		return HP_MODSYM_MISSING;
	}
	if (s->cache)
		hp_symcache_count_open(s->cache);
	/* On success the module owns fd (closed by dwfl_end); on failure
	 * libdwfl leaves a descriptor it did not open to its caller. */
	*mod = dwfl_report_elf(*dwfl, m->path, m->path, fd, m->bias, false);
	dwfl_report_end(*dwfl, NULL, NULL);
	if (!*mod) {
		close(fd);
		return HP_MODSYM_MISSING;
	}
	len = dwfl_module_build_id(*mod, &bits, &vaddr);
	if (m->build_id_len && (len != (int)m->build_id_len ||
				memcmp(bits, m->build_id, m->build_id_len) != 0)) {
		*mod = NULL;
		return HP_MODSYM_MISMATCH;
	}
	return HP_MODSYM_OK;
}

/* Module i's symbol cache, or NULL (no cache, no build-id, nothing on
 * disk to stamp). */
static struct hp_symcache_mod *cache_of(struct hp_symbolizer *s, int i)
{
	struct module_state *st = &s->mods[i];
	const struct hp_cap_module *m = &s->cap->modules[i];

	if (!st->cache_looked) {
		st->cache_looked = 1;
		if (s->cache && m->path[0] == '/' && m->build_id_len)
			st->cache = hp_symcache_module(s->cache, m->path, m->build_id,
						       m->build_id_len, s->debuginfo_path);
	}
	return st->cache;
}

/* Whether module i may answer from its cache: it has one, and libdw was
 * not asked or found the module as the capture names it. */
static struct hp_symcache_mod *usable_cache(struct hp_symbolizer *s, int i)
{
	struct module_state *st = &s->mods[i];

	if (st->opened && st->status != HP_MODSYM_OK)
		return NULL;
	return cache_of(s, i);
}

static void open_module(struct hp_symbolizer *s, int i)
{
	struct module_state *st = &s->mods[i];

	st->opened = 1;
	st->status = HP_MODSYM_MISSING;
	if (s->embedded) {
		const struct hp_cap_symbols *sy = &s->cap->symbols;
		uint64_t was = (size_t)i < sy->nstatus ? sy->status[i] : HP_SYMSTATUS_MISSING;
		st->status = hp_module_status_of_record(was);
		return;
	}
	st->status = open_binary(s, i, &st->dwfl, &st->mod);
	/* What the cache holds is valid if made from the files libdwfl
	 * chose now (and is dropped otherwise). */
	if (st->status == HP_MODSYM_OK && cache_of(s, i))
		hp_symcache_stamp(st->cache, st->mod);
}

const char *hp_symbolizer_data_symbol(struct hp_symbolizer *s, int i, uint64_t address)
{
	struct module_state *st;
	const char *sym;

	if (i < 0 || (size_t)i >= s->cap->nmodules)
		return NULL;
	st = &s->mods[i];
	if (!s->embedded) {
		struct hp_symcache_mod *cm = usable_cache(s, i);
		uint64_t offset = address - s->cap->modules[i].bias;
		const char *out;
		int nomem = s->nomem;

		if (hp_symcache_data(cm, offset, &sym))
			return sym ? intern(s, sym) : NULL;
		if (!st->opened)
			open_module(s, i);
		if (st->status != HP_MODSYM_OK)
			return NULL;
		if (!st->symtab_read) {
			st->symtab_read = 1;
			if (hp_symtab_build(&st->symtab, st->mod))
				st->symtab = NULL;
		}
		sym = st->symtab ? hp_symtab_lookup(st->symtab, address)
				 : dwfl_module_addrname(st->mod, address);
		s->nomem = 0;
		out = sym ? intern(s, sym) : NULL;
		if (!s->nomem) /* what a lookup answers, never a placeholder */
			hp_symcache_put_data(cm, offset, out);
		s->nomem |= nomem;
		return out;
	} else {
		if (!st->data_opened) {
			st->data_opened = 1;
			if (open_binary(s, i, &st->data_dwfl, &st->data_mod) == HP_MODSYM_OK &&
			    hp_symtab_build(&st->data_symtab, st->data_mod))
				st->data_symtab = NULL;
		}
		if (!st->data_mod)
			return NULL;
		sym = st->data_symtab ? hp_symtab_lookup(st->data_symtab, address)
				      : dwfl_module_addrname(st->data_mod, address);
	}
	return sym ? intern(s, sym) : NULL;
}

enum hp_module_status hp_symbolizer_status(struct hp_symbolizer *s, int i)
{
	if (i < 0 || (size_t)i >= s->cap->nmodules)
		return HP_MODSYM_MISSING;
	if (!s->mods[i].opened) {
		/* A valid cache file vouches for the module without opening it. */
		if (!s->embedded && hp_symcache_valid(cache_of(s, i)))
			return HP_MODSYM_OK;
		open_module(s, i);
	}
	return s->mods[i].status;
}

/* A demangled copy of name in the string pool (name itself when it is not
 * a C++ or Rust symbol). */
static const char *demangled(struct hp_symbolizer *s, const char *name)
{
	char *d = hp_demangle(name);
	const char *out = intern(s, d ? d : name);

	free(d);
	return out;
}

/* The DIE that defines a function: an inlined or concrete instance points
 * to its abstract origin, an out-of-class definition to its declaration. */
static int definition(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	Dwarf_Die next;

	*out = *die;
	for (int i = 0; i < 8; i++) {
		if (!dwarf_attr(out, DW_AT_abstract_origin, &attr) &&
		    !dwarf_attr(out, DW_AT_specification, &attr))
			return 0;
		if (!dwarf_formref_die(&attr, &next))
			return -1;
		*out = next;
	}
	return 0;
}

/* "ns::Class::name" for a function without a linkage name (a static or
 * inline one), from the namespaces and classes around its definition. */
static const char *qualified(struct hp_symbolizer *s, Dwarf_Die *die, const char *name)
{
	Dwarf_Die def, *scopes = NULL;
	char buf[1024] = "";
	size_t len = 0;
	int n;

	if (definition(die, &def) < 0 || (n = dwarf_getscopes_die(&def, &scopes)) <= 0)
		return intern(s, name);
	for (int k = n - 1; k >= 1; k--) { /* outermost first; [0] is the function */
		int tag = dwarf_tag(&scopes[k]);
		const char *part = dwarf_diename(&scopes[k]);
		/* An unnamed namespace reads "(anonymous namespace)"; an
		 * unnamed class, a lambda's closure, "{lambda}" after the
		 * function it is in ("main::{lambda}::operator()", as gdb's
		 * "main()::<lambda()>::operator()"). */
		if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
		     tag == DW_TAG_class_type || tag == DW_TAG_union_type ||
		     (tag == DW_TAG_subprogram && part)) &&
		    len < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s::",
						part                        ? part
						: tag == DW_TAG_namespace ? "(anonymous namespace)"
									    : "{lambda}");
	}
	free(scopes);
	if (len < sizeof buf)
		snprintf(buf + len, sizeof buf - len, "%s", name);
	return intern(s, buf);
}

/* The name of a subprogram or inlined subroutine: its linkage name
 * demangled when it has one (qualified C++ names), else its plain name. */
static const char *die_name(struct hp_symbolizer *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (name)
		return demangled(s, name);
	name = dwarf_diename(die);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? qualified(s, die, name) : NULL;
}

static const char *unknown(struct hp_symbolizer *s, uint64_t offset)
{
	char buf[32];
	snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)offset);
	return intern(s, buf);
}

/* Walks die's children, recording function-like DIEs under parent. Only
 * scopes that can hold code are entered. Returns 0 or -ENOMEM (the table
 * is then incomplete). */
static int scan_scope(struct cu_table *t, Dwarf_Die *die, int parent, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		int me = parent;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			if (hp_vec_grow(&t->fns, &t->capfns, t->nfns + 1))
				return -ENOMEM;
			me = (int)t->nfns++;
			t->fns[me] = (struct fn_die){child, parent, depth};
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hp_vec_grow(&t->ranges, &t->capranges, t->nranges + 1))
					return -ENOMEM;
				t->ranges[t->nranges++] = (struct fn_range){lo, hi, me};
			}
			if (scan_scope(t, &child, me, depth + 1))
				return -ENOMEM;
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
			   tag == DW_TAG_union_type || tag == DW_TAG_module) {
			if (scan_scope(t, &child, me, depth + 1))
				return -ENOMEM;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The table of a compile unit, read on first use; NULL with s->nomem set
 * when it cannot be (nothing half read is kept). */
static struct cu_table *cu_table_of(struct hp_symbolizer *s, struct module_state *st, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);

	for (size_t i = 0; i < st->ncus; i++)
		if (st->cus[i].offset == off)
			return &st->cus[i];
	if (hp_vec_grow(&st->cus, &st->capcus, st->ncus + 1)) {
		s->nomem = 1;
		return NULL;
	}
	struct cu_table *t = &st->cus[st->ncus];
	memset(t, 0, sizeof *t);
	t->offset = off;
	if (scan_scope(t, cu, -1, 0)) {
		free(t->fns);
		free(t->ranges);
		s->nomem = 1;
		return NULL;
	}
	st->ncus++;
	return t;
}

/* The function-like DIEs containing pc, innermost first, through their
 * concrete parents (an inlined call's caller, not its abstract origin). */
static int scopes_at(struct hp_symbolizer *s, struct module_state *st, Dwarf_Die *cu, Dwarf_Addr pc,
		     Dwarf_Die *out, int max)
{
	struct cu_table *t = cu_table_of(s, st, cu);
	int best = -1, n = 0;

	if (!t)
		return 0;
	for (size_t r = 0; r < t->nranges; r++) {
		const struct fn_range *x = &t->ranges[r];
		if (pc >= x->lo && pc < x->hi &&
		    (best < 0 || t->fns[x->fn].depth > t->fns[best].depth))
			best = x->fn;
	}
	for (int f = best; f >= 0 && n < max; f = t->fns[f].parent)
		out[n++] = t->fns[f].die;
	return n;
}

/* hp_symbolizer_lookup's frames: how many, with s->nomem set when an
 * allocation failed on the way. */
static int by_cu_lo(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;
	return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Reads the CUs' ranges of st's module, sorted (cu_ranges). */
static void read_cu_ranges(struct module_state *st)
{
	size_t cap = 0;
	Dwarf_Addr bias;

	st->cu_ranges_read = 1;
	for (Dwarf_Die *c = NULL; (c = dwfl_module_nextcu(st->mod, c, &bias)) != NULL;) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(c, off, &base, &lo, &hi)) > 0) {
			if (hp_vec_grow(&st->cu_ranges, &cap, st->ncu_ranges + 1)) {
				free(st->cu_ranges);
				st->cu_ranges = NULL;
				st->ncu_ranges = 0;
				return;
			}
			st->cu_ranges[st->ncu_ranges++] =
				(struct cu_range){lo + bias, hi + bias, dwarf_dieoffset(c)};
		}
	}
	if (st->ncu_ranges) /* none: cu_ranges is NULL, which qsort may not be given */
		hp_sort(st->cu_ranges, st->ncu_ranges, sizeof *st->cu_ranges, by_cu_lo);
}

/* The CU holding pc (an address with the module's bias) by the CUs' own
 * ranges, into *die, or NULL. */
static Dwarf_Die *cu_by_ranges(struct module_state *st, Dwarf_Addr pc, Dwarf_Addr *bias,
			       Dwarf_Die *die)
{
	size_t lo = 0, hi;
	Dwarf *dbg;

	if (!st->cu_ranges_read)
		read_cu_ranges(st);
	hi = st->ncu_ranges;
	/* past the last range starting at or below pc; then back over the
	 * ranges that start below it, the nearest first */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (st->cu_ranges[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	dbg = dwfl_module_getdwarf(st->mod, bias);
	for (size_t k = lo, seen = 0; k-- > 0 && dbg && seen < 64; seen++) {
		const struct cu_range *r = &st->cu_ranges[k];
		if (pc >= r->lo && pc < r->hi)
			return dwarf_offdie(dbg, r->offset, die);
	}
	return NULL;
}

/* The frames at address in module i, open in libdw with status
 * HP_MODSYM_OK; returns how many. */
static int from_dwarf(struct hp_symbolizer *s, int i, uint64_t address, struct hp_sym *out,
		      int max)
{
	/* The call instruction, not the instruction after it. */
	Dwarf_Addr pc = address - 1, bias;
	const struct hp_cap_module *m = &s->cap->modules[i];
	struct module_state *st = &s->mods[i];
	Dwarf_Die *cu, *scopes;
	Dwfl_Line *line;
	const char *file = NULL, *sym;
	int lineno = 0, n = 0, nscopes;

	line = dwfl_module_getsrc(st->mod, pc);
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

	cu = dwfl_module_addrdie(st->mod, pc, &bias);
	/* clang emits no .debug_aranges by default, and elfutils 0.188 finds
	 * no CU then: look through the CUs' own ranges (sorted once: a scan
	 * of every CU for each address takes seconds on large programs). */
	Dwarf_Die cu_die;
	if (!cu)
		cu = cu_by_ranges(st, pc, &bias, &cu_die);
	/* Nor a line by libdwfl, which finds the CU the same way: the CU's
	 * own line table. */
	Dwarf_Line *dline;
	if (!file && cu && (dline = dwarf_getsrc_die(cu, pc - bias)) != NULL) {
		file = dwarf_linesrc(dline, NULL, NULL);
		dwarf_lineno(dline, &lineno);
	}
	Dwarf_Die chain[64];
	nscopes = cu ? scopes_at(s, st, cu, pc - bias, chain, 64) : 0;
	scopes = chain;
	/* Innermost first: each inlined subroutine is a frame at the file and
	 * line we are at, and moves us to its call site in the scope that
	 * contains it; the subprogram ends the chain. */
	for (int k = 0; k < nscopes && n < max; k++) {
		int tag = dwarf_tag(&scopes[k]);
		Dwarf_Attribute attr;
		Dwarf_Word cl = 0, cf = 0;
		Dwarf_Files *files;
		const char *name;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		name = die_name(s, &scopes[k]);
		out[n] = (struct hp_sym){name ? name : "??", intern(s, file ? file : ""),
					 (uint32_t)(lineno > 0 ? lineno : 0),
					 tag == DW_TAG_inlined_subroutine};
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* Up to the call site of this inlined call. */
		if (dwarf_attr(&scopes[k], DW_AT_call_line, &attr))
			dwarf_formudata(&attr, &cl);
		if (dwarf_attr(&scopes[k], DW_AT_call_file, &attr))
			dwarf_formudata(&attr, &cf);
		lineno = (int)cl;
		file = NULL;
		if (cf && dwarf_getsrcfiles(cu, &files, NULL) == 0)
			file = dwarf_filesrc(files, cf, NULL, NULL);
	}
	if (n > 0)
		return n;

	/* No DWARF here: the ELF symbol table, sorted once (short of memory
	 * for it, libdwfl's own search, which reads the whole table each
	 * time). */
	if (!st->symtab_read) {
		st->symtab_read = 1;
		if (hp_symtab_build(&st->symtab, st->mod))
			st->symtab = NULL;
	}
	sym = st->symtab ? hp_symtab_lookup(st->symtab, pc) : dwfl_module_addrname(st->mod, pc);
	out[0] = (struct hp_sym){sym ? demangled(s, sym) : unknown(s, address - m->bias),
				 intern(s, file ? file : ""), (uint32_t)(lineno > 0 ? lineno : 0),
				 0};
	if (!sym && !file && st->status == HP_MODSYM_OK)
		st->status = HP_MODSYM_OK; /* a module may lack symbols for some addresses only */
	return 1;
}

static int lookup(struct hp_symbolizer *s, int i, uint64_t address, struct hp_sym *out, int max)
{
	const struct hp_cap_module *m = i >= 0 ? &s->cap->modules[i] : NULL;
	struct hp_symcache_mod *cm;
	int n;

	if (s->embedded) {
		const struct hp_cap_symaddr *a = hp_capture_symbols_of(s->cap, address);
		const struct hp_cap_symbols *sy = &s->cap->symbols;
		if (a && a->count) {
			int k;
			for (k = 0; k < (int)a->count && k < max; k++) {
				const struct hp_rec_symframe *f = &sy->frames[a->first + k];
				/* The record is the capture's word: escaped too. */
				out[k] = (struct hp_sym){shown(s, sy->strings[f->function]),
							 shown(s, sy->strings[f->file]), f->line,
							 (int)(f->flags & HP_SYMFRAME_INLINED)};
			}
			return k;
		}
		out[0] = (struct hp_sym){unknown(s, m ? address - m->bias : address), "", 0, 0};
		return 1;
	}
	progress_step(&s->progress, s->cap, i);
	/* The cache first: its strings are copied, so they live as long as
	 * the symbolizer (as every name it returns). */
	if (m && (cm = usable_cache(s, i)) &&
	    (n = hp_symcache_frames(cm, address - m->bias, out, max)) > 0) {
		for (int k = 0; k < n; k++) {
			out[k].function = intern(s, out[k].function);
			out[k].file = intern(s, out[k].file);
		}
		return n;
	}
	if (m && !s->mods[i].opened)
		open_module(s, i);
	if (!m || s->mods[i].status != HP_MODSYM_OK) {
		out[0] = (struct hp_sym){unknown(s, m ? address - m->bias : address), "", 0, 0};
		return 1;
	}
	n = from_dwarf(s, i, address, out, max);
	if (s->cache) {
		hp_symcache_count_debuginfo(s->cache, 1);
		if (!s->nomem) /* never a placeholder for a name not stored */
			hp_symcache_put_frames(s->mods[i].cache, address - m->bias, out, n);
	}
	return n;
}

int hp_symbolizer_lookup(struct hp_symbolizer *s, int i, uint64_t address, struct hp_sym *out,
			 int max, int *count)
{
	int n;

	s->nomem = 0;
	n = lookup(s, i, address, out, max);
	if (s->nomem)
		return -ENOMEM;
	*count = n;
	return 0;
}

uint64_t hp_module_status_record(enum hp_module_status st)
{
	switch (st) {
	case HP_MODSYM_OK:
	case HP_MODSYM_EMBEDDED: return HP_SYMSTATUS_OK;
	case HP_MODSYM_MISMATCH: return HP_SYMSTATUS_MISMATCH;
	default: return HP_SYMSTATUS_MISSING;
	}
}

enum hp_module_status hp_module_status_of_record(uint64_t rec)
{
	return rec == HP_SYMSTATUS_OK ? HP_MODSYM_EMBEDDED
	       : rec == HP_SYMSTATUS_MISMATCH ? HP_MODSYM_MISMATCH
					     : HP_MODSYM_MISSING;
}

/* --- new-expressions' types (hp_symbolizer_new_type) ------------------- */

/* Module i open in libdw for its DWARF (with embedded symbols, the binary
 * opened for it alone: lookup never asks libdw then), or NULL. */
static Dwfl_Module *dwarf_module(struct hp_symbolizer *s, int i)
{
	struct module_state *st = &s->mods[i];

	if (s->no_files)
		return NULL;
	if (!s->embedded) {
		if (!st->opened)
			open_module(s, i);
		return st->status == HP_MODSYM_OK ? st->mod : NULL;
	}
	if (!st->dwarf_opened) {
		st->dwarf_opened = 1;
		if (open_binary(s, i, &st->dwfl, &st->mod) != HP_MODSYM_OK)
			st->mod = NULL;
	}
	return st->mod;
}

/* die's type, through typedefs and cv-qualifiers when strip is set, into
 * *out; 0 or -1 (none). */
static int type_of(Dwarf_Die *die, Dwarf_Die *out, int strip)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, out))
		return -1;
	for (int k = 0; strip && k < 16; k++) {
		int tag = dwarf_tag(out);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return 0;
		if (!dwarf_attr_integrate(out, DW_AT_type, &attr) || !dwarf_formref_die(&attr, out))
			return -1;
	}
	return 0;
}

/* Appends the C++ name of type die (typedefs read through, as the
 * compiler's __PRETTY_FUNCTION__ spells a template argument) to
 * buf[*len..cap): a class, union, enum or base type by its qualified
 * name, pointers and const after it. Returns 0 or -1 (a type it cannot
 * name: an array, a function, an unnamed class). */
static int type_name(Dwarf_Die *die, char *buf, size_t cap, size_t *len, int depth)
{
	Dwarf_Die t = *die, *scopes = NULL;
	const char *name;
	int tag, n;

	while ((tag = dwarf_tag(&t)) == DW_TAG_typedef)
		if (type_of(&t, &t, 0))
			return -1;
	if (depth > 8)
		return -1;
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_const_type:
		if (type_of(&t, &t, 0)) {
			if (tag != DW_TAG_pointer_type)
				return -1;
			*len += (size_t)snprintf(buf + *len, *len < cap ? cap - *len : 0, "void");
		} else if (type_name(&t, buf, cap, len, depth + 1)) {
			return -1;
		}
		*len += (size_t)snprintf(buf + *len, *len < cap ? cap - *len : 0, "%s",
					 tag == DW_TAG_pointer_type ? "*" : " const");
		return *len < cap ? 0 : -1;
	case DW_TAG_base_type:
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		break;
	default:
		return -1;
	}
	if (!(name = dwarf_diename(&t)))
		return -1;
	/* The namespaces and classes around it, outermost first. */
	if (tag != DW_TAG_base_type && (n = dwarf_getscopes_die(&t, &scopes)) > 0) {
		for (int k = n - 1; k >= 1; k--) {
			int st = dwarf_tag(&scopes[k]);
			const char *part = dwarf_diename(&scopes[k]);
			if (st != DW_TAG_namespace && st != DW_TAG_structure_type &&
			    st != DW_TAG_class_type && st != DW_TAG_union_type)
				continue;
			if (!part) { /* an anonymous namespace or class */
				free(scopes);
				return -1;
			}
			*len += (size_t)snprintf(buf + *len, *len < cap ? cap - *len : 0, "%s::",
						 part);
		}
		free(scopes);
	}
	*len += (size_t)snprintf(buf + *len, *len < cap ? cap - *len : 0, "%s", name);
	return *len < cap ? 0 : -1;
}

/* Whether class die declares a destructor (new T[n] then has an array
 * cookie, for a destructor that is not trivial; g++ and clang list a
 * class's implicit destructor only when it is not trivial and used). */
static int has_destructor(Dwarf_Die *die)
{
	Dwarf_Die c;

	if (dwarf_child(die, &c) != 0)
		return 0;
	do {
		const char *n = dwarf_diename(&c);
		if (dwarf_tag(&c) == DW_TAG_subprogram && n && n[0] == '~')
			return 1;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* The file name at the end of a path. */
static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

struct new_var {
	Dwarf_Die *cu;
	Dwarf_Addr pc;
	const char *file;
	uint32_t line;
	Dwarf_Die found;
	int nfound;
};

/* Looks through scope's variables, and those of the lexical blocks in it
 * that hold pc, for those declared on v's line of v's file. */
static void find_vars(Dwarf_Die *scope, struct new_var *v, int depth)
{
	Dwarf_Die c;
	Dwarf_Files *files;

	if (depth > 32 || dwarf_child(scope, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		Dwarf_Attribute attr;
		Dwarf_Word line = 0, fileno = 0;
		const char *f;

		if (tag == DW_TAG_lexical_block) {
			if (dwarf_haspc(&c, v->pc) == 1)
				find_vars(&c, v, depth + 1);
			continue;
		}
		if (tag != DW_TAG_variable)
			continue;
		if (!dwarf_attr_integrate(&c, DW_AT_decl_line, &attr) ||
		    dwarf_formudata(&attr, &line) || line != v->line)
			continue;
		if (!dwarf_attr_integrate(&c, DW_AT_decl_file, &attr) ||
		    dwarf_formudata(&attr, &fileno) || dwarf_getsrcfiles(v->cu, &files, NULL) ||
		    !(f = dwarf_filesrc(files, fileno, NULL, NULL)) ||
		    strcmp(base_name(f), base_name(v->file)) != 0)
			continue;
		v->found = c;
		v->nfound++;
	} while (dwarf_siblingof(&c, &c) == 0);
}

int hp_symbolizer_new_type(struct hp_symbolizer *s, int i, uint64_t address, const char *file,
			   uint32_t line, char *out, size_t cap, uint64_t *elem_bytes,
			   uint64_t *cookie_bytes)
{
	struct module_state *st;
	Dwfl_Module *mod;
	Dwarf_Addr bias, pc = address - 1; /* the call instruction */
	Dwarf_Die *cu, cu_die, chain[64], t;
	Dwarf_Word size;
	struct new_var v;
	size_t len = 0;
	int n;

	if (i < 0 || (size_t)i >= s->cap->nmodules || !file || !file[0] || !line ||
	    !(mod = dwarf_module(s, i)))
		return 0;
	st = &s->mods[i];
	if (!(cu = dwfl_module_addrdie(mod, pc, &bias)))
		cu = cu_by_ranges(st, pc, &bias, &cu_die);
	if (!cu || (n = scopes_at(s, st, cu, pc - bias, chain, 64)) <= 0)
		return 0;
	/* The innermost function (an inlined one's concrete instance holds
	 * its variables) and its blocks that hold the call. */
	v = (struct new_var){cu, pc - bias, file, line, {0}, 0};
	find_vars(&chain[0], &v, 0);
	/* One variable declared on the call's line, a pointer to a type of
	 * known size: `T *p = new T(...)`, `auto *v = new T[n]`. */
	if (v.nfound != 1 || type_of(&v.found, &t, 1) || dwarf_tag(&t) != DW_TAG_pointer_type ||
	    type_of(&t, &t, 1))
		return 0;
	if (dwarf_tag(&t) == DW_TAG_pointer_type)
		size = sizeof(void *);
	else if (dwarf_aggregate_size(&t, &size) != 0 || !size)
		return 0;
	if (type_name(&t, out, cap, &len, 0))
		return 0;
	*elem_bytes = size;
	*cookie_bytes = (dwarf_tag(&t) == DW_TAG_structure_type ||
			 dwarf_tag(&t) == DW_TAG_class_type) && has_destructor(&t)
				? sizeof(size_t)
				: 0;
	return 1;
}
