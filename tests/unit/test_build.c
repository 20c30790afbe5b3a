/*
 * test_build.c - the build's knobs reach every part: the recorder
 * (libheapprof.so) is optimised as the analyzer is (DEBUG=1 builds both
 * with -O0, into build-debug/; the recorder once kept its -O2). Read from
 * the DWARF producer strings of every compilation unit, with readelf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* The distinct -O flags the compilation units of a binary were built
 * with, as one line each ("-O2\n"), or NULL. */
static char *opt_levels(const char *binary)
{
	return hp_test_sh_out("readelf --debug-dump=info %s/%s 2>/dev/null | grep DW_AT_producer | "
			      "grep -o -- ' -O[0-9a-z]*' | sort -u | tr -d ' '",
			      hp_test_build(), binary);
}

/* One definition of heapprof's version (src/common/version.h): the
 * recorder's META once carried a copy of its own, in writer.c. Any other
 * "N.N.N" string literal in the sources is a second one. Run from the
 * source tree, as make check runs. */
HP_TEST(one_version_string)
{
	char *where = hp_test_sh_out("grep -rlE '\"[0-9]+\\.[0-9]+\\.[0-9]+\"' src include | sort");

	expect_str(where, "src/common/version.h\n", "the version is written once, in version.h");
	free(where);
}

HP_TEST(recorder_is_built_as_the_analyzer)
{
	char *recorder, *analyzer;

	if (!hp_test_need("readelf", "binutils"))
		return;
	recorder = opt_levels("libheapprof.so");
	analyzer = opt_levels("heapprof");
	if (expect_true(recorder && analyzer && *recorder && *analyzer,
			"both carry DWARF producer strings (-g)")) {
		expect_true(strchr(recorder, '\n') == recorder + strlen(recorder) - 1,
			    "every unit of the recorder at one level");
		expect_str(recorder, analyzer, "the recorder at the analyzer's level (DEBUG=)");
	}
	free(recorder);
	free(analyzer);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
