/*
 * test_symtab.c - the sorted symbol table (src/analyzer/symbols/symtab.c) names
 * every address exactly as libdwfl's dwfl_module_addrname, which it
 * replaces: on the frames of real captures (known, cxx_all, threads) and on
 * the edges of the symbols (first, last and next byte, and the middle) of
 * real binaries with full .symtab (heapprof itself, the test programs) and
 * with .dynsym only (libc, libstdc++, ld.so, libLLVM).
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyzer/symbols/symtab.h"
#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct opened {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct hp_symtab *tab;
};

static int open_at(struct opened *o, const char *path, uint64_t bias)
{
	memset(o, 0, sizeof *o);
	o->dwfl = dwfl_begin(&callbacks);
	if (o->dwfl)
		o->mod = dwfl_report_elf(o->dwfl, path, path, -1, bias, false);
	if (o->dwfl)
		dwfl_report_end(o->dwfl, NULL, NULL);
	if (!o->mod || hp_symtab_build(&o->tab, o->mod) != 0) {
		expect_true(0, path);
		if (o->dwfl)
			dwfl_end(o->dwfl);
		return -1;
	}
	return 0;
}

static void close_opened(struct opened *o)
{
	hp_symtab_free(o->tab);
	dwfl_end(o->dwfl);
}

/* Compares one address; prints the first few differences of a module. */
static int same_at(struct opened *o, const char *path, uint64_t addr, int *shown)
{
	const char *want = dwfl_module_addrname(o->mod, addr);
	const char *got = hp_symtab_lookup(o->tab, addr);

	if ((!want && !got) || (want && got && strcmp(want, got) == 0))
		return 1;
	if ((*shown)++ < 5)
		printf("  %s+0x%llx: libdwfl %s, symtab %s\n", path, (unsigned long long)addr,
		       want ? want : "(none)", got ? got : "(none)");
	return 0;
}

/* The edges of every symbol (of at most max_syms, evenly spread). */
static void check_edges(const char *path, int max_syms)
{
	struct opened o;
	size_t checked = 0, differ = 0;
	int n, step, shown = 0;

	if (open_at(&o, path, 0))
		return;
	n = dwfl_module_getsymtab(o.mod);
	step = n > max_syms ? n / max_syms : 1;
	for (int i = 1; i < n; i += step) {
		GElf_Sym sym;
		GElf_Addr v;
		if (!dwfl_module_getsym_info(o.mod, i, &sym, &v, NULL, NULL, NULL) || !v)
			continue;
		uint64_t z = sym.st_size;
		uint64_t at[] = {v - 1, v, v + 1, v + z / 2, v + z - 1, v + z, v + z + 1};
		for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
			checked++;
			differ += !same_at(&o, path, at[k], &shown);
		}
	}
	char why[512];
	snprintf(why, sizeof why, "%s: addresses named differently (of %zu, %zu symbols)", path,
		 checked, hp_symtab_count(o.tab));
	expect_eq_u64(differ, 0, why);
	expect_true(checked > 100, "enough addresses checked");
	close_opened(&o);
}

/* Every frame of a capture of a test program, in its module at its bias. */
static void check_capture(const char *prog)
{
	char out[512];
	struct hp_capture *cap;
	size_t checked = 0, differ = 0;
	int shown = 0;

	snprintf(out, sizeof out, "%s/symtab-%s.hpf", hp_test_tmp(), prog);
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/tests/programs/%s "
				 "> /dev/null",
				 hp_test_build(), out, hp_test_build(), prog),
		      0, "the test program runs");
	if (!(cap = hpq_load(out)))
		return;
	for (size_t m = 0; m < cap->nmodules; m++) {
		struct opened o;
		const struct hp_cap_module *mod = &cap->modules[m];
		if (mod->path[0] != '/' || open_at(&o, mod->path, mod->bias))
			continue;
		for (size_t id = 1; id < cap->nstacks; id++) {
			const struct hp_cap_stack *s = &cap->stacks[id];
			for (uint32_t f = 0; f < s->depth; f++) {
				if (hp_capture_module_of(cap, s->frames[f] - 1) != mod)
					continue;
				checked++;
				differ += !same_at(&o, mod->path, s->frames[f] - 1, &shown);
			}
		}
		close_opened(&o);
	}
	snprintf(out, sizeof out, "%s: frames named differently (of %zu)", prog, checked);
	expect_eq_u64(differ, 0, out);
	expect_true(checked > 10, "frames checked");
	hpq_free(cap);
}

HP_TEST(symtab_as_libdwfl_on_captured_frames)
{
	check_capture("known");
	check_capture("cxx_all");
	check_capture("threads");
}

HP_TEST(symtab_as_libdwfl_on_full_symtabs)
{
	char path[512];

	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	check_edges(path, 100000);
	snprintf(path, sizeof path, "%s/tests/programs/cxx_all", hp_test_build());
	check_edges(path, 100000);
	snprintf(path, sizeof path, "%s/libheapprof.so", hp_test_build());
	check_edges(path, 100000);
}

HP_TEST(symtab_as_libdwfl_on_system_libraries)
{
	/* The libraries the test programs load, found as they do. */
	char *libs = hp_test_sh_out("ldd %s/tests/programs/cxx_all | awk '$3 ~ /^\\// {print $3}'",
				    hp_test_build());
	/* libLLVM: the large .dynsym that made libdwfl slow (clang is a test
	 * dependency). */
	char *llvm = hp_test_sh_out("ldd \"$(command -v clang)\" | awk '/libLLVM/ {print $3}'");
	int n = 0;

	for (char *p = libs ? strtok(libs, "\n") : NULL; p; p = strtok(NULL, "\n"), n++)
		check_edges(p, 800);
	expect_true(n >= 3, "libc, libstdc++ and more are checked");
	if (llvm && llvm[0] == '/') {
		llvm[strcspn(llvm, "\n")] = '\0';
		check_edges(llvm, 60);
	} else {
		expect_true(0, "libLLVM found through clang (apt-get install clang)");
	}
	free(libs);
	free(llvm);
}

int main(int argc, char **argv)
{
	debuginfo_path = "-:.debug:/usr/lib/debug";
	return hp_test_main(argc, argv);
}
