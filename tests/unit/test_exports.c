/*
 * test_exports.c - libheapprof.so exports the interposed functions and the
 * public API, and nothing else: `nm -D` against tests/unit/exports.txt.
 */
#include "../harness/harness.h"

HP_TEST(recorder_exports_only_its_interface)
{
	expect_eq_u64(hp_test_sh("nm -D --defined-only %s/libheapprof.so | awk '{print $3}' | "
				 "sort | diff -u tests/unit/exports.txt -",
				 hp_test_build()),
		      0, "exported symbols (diff above: - expected, + found)");
}

HP_TEST(recorder_has_no_stdio_or_malloc_imports)
{
	/* The recorder must never call the target's malloc; its own
	 * definitions are exported, so an import would show as undefined. */
	expect_eq_u64(hp_test_sh("nm -D --undefined-only %s/libheapprof.so | "
				 "grep -wE 'malloc|calloc|realloc|free|printf|fprintf|fopen|puts|"
				 "snprintf|vsnprintf'",
				 hp_test_build()),
		      1, "no allocator or stdio imports (grep found none)");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
