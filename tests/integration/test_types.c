/*
 * test_types.c - types inferred from the stack on real C++ builds:
 * tests/programs/cxx_types.cpp compiled here with g++ and clang++, at -O0
 * (allocator templates as frames of their own) and -O2 (inlined frames),
 * recorded with libheapprof.so, and read back through
 * `heapprof report --by type --json`: each container's node or array, and
 * make_shared's and make_unique's objects, by their exact count and bytes
 * (x86-64 libstdc++'s sizes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* The JSON row of a type as report --by type --json writes it: key,
 * source, then the figures, which start with objects and bytes
 * allocated. */
static void expect_row(const char *json, const char *what, const char *type,
		       unsigned long long objects, unsigned long long bytes)
{
	char want[512], why[640];

	snprintf(want, sizeof want,
		 "{\"key\": \"%s\", \"source\": \"template\", \"values\": {\"alloc_objects\": %llu, "
		 "\"alloc_bytes\": %llu,",
		 type, objects, bytes);
	snprintf(why, sizeof why, "%s: %s, %llu objects, %llu bytes", what, type, objects, bytes);
	if (!expect_true(strstr(json, want) != NULL, why))
		printf("  want %s\n", want);
}

static void check(const char *cxx, const char *opt)
{
	char bin[512], hpf[600], what[64];
	char *json;

	snprintf(what, sizeof what, "%s %s", cxx, opt);
	snprintf(bin, sizeof bin, "%s/types-%s%s", hp_test_tmp(), cxx, opt);
	snprintf(hpf, sizeof hpf, "%s.hpf", bin);
	if (!hp_test_need(cxx, strcmp(cxx, "g++") == 0 ? "g++" : "clang"))
		return;
	if (!expect_eq_u64(hp_test_sh("%s -std=c++17 -g %s -o %s tests/programs/cxx_types.cpp", cxx,
				      opt, bin),
			   0, "the program builds"))
		return;
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s > /dev/null", hp_test_build(),
				      hpf, bin),
			   0, "recorded"))
		return;
	json = hp_test_sh_out("%s/heapprof report --by type --json %s", hp_test_build(), hpf);
	if (!json)
		return;
	if (getenv("HP_TEST_VERBOSE"))
		printf("%s\n", json);
	expect_row(json, what, "std::_Rb_tree_node<std::pair<const int, std::string>>", 7, 7 * 72);
	expect_row(json, what, "std::__detail::_Hash_node<std::pair<const int, int>, false>", 5,
		   5 * 16);
	expect_row(json, what, "Point", 1, 100 * 16);
	expect_row(json, what, "Widget", 3, 3 * 56);
	expect_row(json, what, "Gadget", 4, 4 * 12);
	expect_row(json, what, "std::shared_ptr<Widget>", 1, 16 * 16);
	expect_row(json, what, "std::unique_ptr<Gadget, std::default_delete<Gadget>>", 1, 16 * 8);
	free(json);
}

HP_TEST(types_gxx_O0) { check("g++", "-O0"); }
HP_TEST(types_gxx_O2) { check("g++", "-O2"); }
HP_TEST(types_clangxx_O0) { check("clang++", "-O0"); }
HP_TEST(types_clangxx_O2) { check("clang++", "-O2"); }

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
