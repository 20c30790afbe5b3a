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

/* A test selection that selects nothing fails (issue 24, item 12):
 * `HP_TEST_NAME=integration/test_cli make check` ran 59 binaries, 0 tests,
 * and passed. HP_TEST_NAME names tests, not binaries; a binary glob that
 * matches none fails too; a selection that runs a test still passes. */
HP_TEST(run_sh_empty_selection_fails)
{
	char *out;

	out = hp_test_sh_out("HP_TEST_NAME=integration/test_cli bash tests/run.sh %s "
			     "'unit/test_build' 2>&1; echo \"rc=$?\"",
			     hp_test_build());
	expect_true(out && strstr(out, "FAIL: HP_TEST_NAME='integration/test_cli' selects no test") &&
			    strstr(out, "(HP_TEST_NAME='integration/test_cli' selects no test of this "
					"binary)") &&
			    strstr(out, "0 passed, 1 failed\nrc=1\n"),
		    "a test name that matches no test fails, and says why");
	if (out && getenv("HP_TEST_VERBOSE"))
		printf("%s", out);
	free(out);
	expect_eq_u64(hp_test_sh("bash tests/run.sh %s 'unit/no_such_test*' >/dev/null 2>&1",
				 hp_test_build()),
		      1, "a binary glob that matches nothing fails");
	expect_eq_u64(hp_test_sh("HP_TEST_NAME=one_version_string bash tests/run.sh %s "
				 "'unit/test_build' >/dev/null 2>&1",
				 hp_test_build()),
		      0, "a selection that runs a test passes");
}
