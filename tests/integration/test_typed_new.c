/*
 * test_typed_new.c - every new-expression typed, with and without
 * include/heapprof/typed_new.hpp (issue 26): tests/programs/typed_new.cpp
 * compiled here with g++ and clang++ at -O0 and -O2, with
 * `-include heapprof/typed_new.hpp` (which the program's own <vector>,
 * <string>, <map>, <memory>, <set> then follow) and without, recorded, and
 * read back through `heapprof report --by type --json`: the paper's three
 * templates, Point, std::string buffers, new char[4096] and new A[5] (A
 * with a destructor), by their exact objects, bytes and elements (x86-64
 * libstdc++'s sizes).
 *
 * With the header every new-expression is [explicit] (typed_new.hpp's
 * operator->*); without it, [new] (the pointer its line declares, from
 * DWARF), but the one assigned to a global (no declaration on its line),
 * which stays unknown. std::string's buffers are [string] either way:
 * libstdc++'s _M_create allocates them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* Checks the JSON row of (type, source): its objects and bytes allocated
 * (the figures start with them), and with elements >= 0 its elements
 * allocated (the row's "elements" object). */
static void expect_row(const char *json, const char *what, const char *type, const char *source,
		       unsigned long long objects, unsigned long long bytes, long long elements)
{
	char want[512], why[768];
	const char *row, *end;

	snprintf(want, sizeof want,
		 "{\"key\": \"%s\", \"source\": \"%s\", \"values\": {\"alloc_objects\": %llu, "
		 "\"alloc_bytes\": %llu,",
		 type, source, objects, bytes);
	snprintf(why, sizeof why, "%s: %s [%s], %llu objects, %llu bytes", what, type, source,
		 objects, bytes);
	row = strstr(json, want);
	if (!expect_true(row != NULL, why)) {
		printf("  want %s\n", want);
		return;
	}
	if (elements < 0)
		return;
	end = strchr(row, '\n');
	snprintf(want, sizeof want, "\"elements\": {\"alloc\": %lld,", elements);
	snprintf(why, sizeof why, "%s: %s [%s], %lld elements", what, type, source, elements);
	row = strstr(row, want);
	if (!expect_true(row != NULL && (!end || row < end), why))
		printf("  want %s\n", want);
}

/* Builds the program with cxx at opt (with the header when header),
 * records it, and returns report --by type --json (NULL on failure). */
static char *typed_report(const char *cxx, const char *opt, int header, char *bin, size_t cap)
{
	char hpf[600];

	snprintf(bin, cap, "%s/typed-new-%s%s%s", hp_test_tmp(), cxx, opt, header ? "-h" : "");
	snprintf(hpf, sizeof hpf, "%s.hpf", bin);
	if (!expect_eq_u64(hp_test_sh("%s -std=c++17 -g %s %s -Wall -Wextra -Werror -o %s "
				      "tests/programs/typed_new.cpp",
				      cxx, opt,
				      header ? "-Iinclude -include heapprof/typed_new.hpp" : "", bin),
			   0, "the program builds"))
		return NULL;
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s > /dev/null", hp_test_build(),
				      hpf, bin),
			   0, "recorded"))
		return NULL;
	return hp_test_sh_out("%s/heapprof report --by type --json %s", hp_test_build(), hpf);
}

static void check(const char *cxx, const char *opt, int header)
{
	const char *src = header ? "explicit" : "new";
	char bin[512], what[96];
	char *json;

	snprintf(what, sizeof what, "%s %s %s", cxx, opt, header ? "with the header" : "without");
	if (!hp_test_need(cxx, strcmp(cxx, "g++") == 0 ? "g++" : "clang"))
		return;
	json = typed_report(cxx, opt, header, bin, sizeof bin);
	if (!json)
		return;
	if (getenv("HP_TEST_VERBOSE"))
		printf("%s\n", json);
	/* Three in make_templates; with the header, the one assigned to a
	 * global too. */
	expect_row(json, what, "std::vector<std::string>", src, header ? 4 : 3, header ? 96 : 72,
		   header ? 4 : 3);
	expect_row(json, what, "std::set<int>", src, 4, 4 * 48, 4);
	expect_row(json, what, "std::pair<unsigned long, bool>", src, 5, 5 * 16, 5);
	expect_row(json, what, "Point", src, 6, 6 * 16, 6);
	expect_row(json, what, "char", src, 2, 2 * 4096, 2 * 4096);
	/* new A[5]: 8 bytes of cookie, 5 x 4 bytes of A. */
	expect_row(json, what, "A", src, 1, 28, 5);
	/* Seven strings of 40 characters, built in libstdc++.so. */
	expect_row(json, what, "char", "string", 7, 7 * 41, 7 * 41);
	free(json);
}

HP_TEST(typed_new_gxx_O0) { check("g++", "-O0", 1); }
HP_TEST(typed_new_gxx_O2) { check("g++", "-O2", 1); }
HP_TEST(typed_new_clangxx_O0) { check("clang++", "-O0", 1); }
HP_TEST(typed_new_clangxx_O2) { check("clang++", "-O2", 1); }
HP_TEST(new_from_dwarf_gxx_O0) { check("g++", "-O0", 0); }
HP_TEST(new_from_dwarf_gxx_O2) { check("g++", "-O2", 0); }
HP_TEST(new_from_dwarf_clangxx_O0) { check("clang++", "-O0", 0); }
HP_TEST(new_from_dwarf_clangxx_O2) { check("clang++", "-O2", 0); }

/* The header changes nothing a program does: the same output without
 * heapprof (a weak symbol's test), and under it. */
HP_TEST(typed_new_harmless)
{
	char bin[512], *bare, *under;

	if (!hp_test_need("g++", "g++"))
		return;
	snprintf(bin, sizeof bin, "%s/typed-new-harmless", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("g++ -std=c++17 -O2 -Iinclude -include heapprof/typed_new.hpp "
				      "-o %s tests/programs/typed_new.cpp",
				      bin),
			   0, "builds"))
		return;
	bare = hp_test_sh_out("%s", bin);
	under = hp_test_sh_out("%s/heapprof run -q -o %s.hpf -- %s", hp_test_build(), bin, bin);
	if (bare && under) {
		expect_str(bare, "21 blocks kept\n", "the program's output without heapprof");
		expect_str(under, bare, "the same under heapprof");
	}
	free(bare);
	free(under);
}

/* What the header must compile after: the standard headers a program
 * includes after it (those that name operator new are included by it
 * first), `*new T` (libstdc++'s <bitset>, which <regex> includes), a
 * placement new and ::new, with g++ and clang++, C++11 to C++20. */
HP_TEST(typed_new_compiles_first)
{
	static const char prog[] =
		"#include <vector>\n#include <string>\n#include <map>\n#include <memory>\n"
		"#include <set>\n#include <unordered_map>\n#include <functional>\n"
		"#include <iostream>\n#include <sstream>\n#include <thread>\n#include <regex>\n"
		"#include <bitset>\n#include <new>\n"
		"struct P { int x; };\n"
		"int main() {\n"
		"  alignas(P) char buf[sizeof(P)], buf2[sizeof(P)];\n"
		"  P *p = new (buf) P{1};\n"
		"  P *q = ::new (static_cast<void *>(buf2)) P{2};\n"
		"  int &r = *new int(3);\n"
		"  std::vector<std::string> *v = new std::vector<std::string>(2);\n"
		"  char *c = static_cast<char *>(new char[8]);\n"
		"  int rc = p->x + q->x + r + (int)v->size() + (c ? 0 : 1);\n"
		"  delete v; delete[] c; delete &r;\n"
		"  return rc == 8 ? 0 : 1;\n"
		"}\n";
	static const char *const cxxs[] = {"g++", "clang++"};
	static const char *const stds[] = {"c++11", "c++17", "c++20"};
	char src[512], bin[600];

	snprintf(src, sizeof src, "%s/typed-first.cpp", hp_test_tmp());
	if (!expect_eq_u64(hp_test_write_file(src, prog, sizeof prog - 1), 0, "source written"))
		return;
	for (size_t c = 0; c < 2; c++) {
		if (!hp_test_need(cxxs[c], c ? "clang" : "g++"))
			continue;
		for (size_t s = 0; s < 3; s++) {
			char why[128];
			snprintf(bin, sizeof bin, "%s/typed-first-%zu-%zu", hp_test_tmp(), c, s);
			snprintf(why, sizeof why, "%s -std=%s: compiles after the header, runs",
				 cxxs[c], stds[s]);
			expect_eq_u64(hp_test_sh("%s -std=%s -Wall -Werror -Iinclude -include "
						 "heapprof/typed_new.hpp -o %s %s -pthread && %s",
						 cxxs[c], stds[s], bin, src, bin),
				      0, why);
		}
	}
}

/* The pprof export labels an array's samples with its elements a block. */
HP_TEST(typed_new_pprof_elements)
{
	char bin[512], *raw;
	char *json;

	if (!hp_test_need("g++", "g++") || !hp_test_need_go())
		return;
	json = typed_report("g++", "-O2", 1, bin, sizeof bin);
	free(json);
	if (!expect_eq_u64(hp_test_sh("%s/heapprof export --format pprof -o %s.pb.gz %s.hpf",
				      hp_test_build(), bin, bin),
			   0, "exported"))
		return;
	raw = hp_test_sh_out("go tool pprof -raw %s.pb.gz 2>/dev/null", bin);
	if (!raw)
		return;
	expect_true(strstr(raw, "type:[A]\n                bytes:[28 bytes] elements:[5]") != NULL,
		    "new A[5]: elements:[5]");
	expect_true(strstr(raw, "type:[char]\n                bytes:[4096 bytes] elements:[4096]") !=
			    NULL,
		    "new char[4096]: elements:[4096]");
	free(raw);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
