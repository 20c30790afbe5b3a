/*
 * test_progress.c - progress while symbolizing: on a terminal (a pty made
 * by script(1)), one line naming the module at hand and the count of all
 * addresses, cleared after the last one; nothing when stderr is not a
 * terminal, nor when the work takes less than a second.
 * HEAPPROF_PROGRESS_MS=0 stands for "a second has passed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* A fresh copy of a capture of known made without symbols. */
static void fresh_capture(char *path, size_t len)
{
	static int made;
	const char *b = hp_test_build();

	snprintf(path, len, "%s/progress.hpf", hp_test_tmp());
	if (!made++)
		hp_test_sh("%s/heapprof run -q --no-symbols -o %s.orig -- %s/tests/programs/known",
			   b, path, b);
	hp_test_sh("cp %s.orig %s", path, path);
}

HP_TEST(progress_on_a_terminal)
{
	char capture[4096], want[128];
	const char *b = hp_test_build();
	char *out, *plain;
	unsigned long total = 0;

	fresh_capture(capture, sizeof capture);
	out = hp_test_sh_out("script -qfec 'HEAPPROF_PROGRESS_MS=0 %s/heapprof symbolize %s' "
			     "/dev/null",
			     b, capture);
	if (!out)
		return;
	plain = strstr(out, "embedded symbols for ");
	expect_true(plain && sscanf(plain, "embedded symbols for %lu", &total) == 1,
		    "heapprof symbolize says how many addresses");
	snprintf(want, sizeof want, " of %lu in all)...\033[K", total);
	expect_true(strncmp(out, "\rheapprof: symbolizing ", 23) == 0,
		    "the progress line comes first, from the start of the line");
	expect_true(strstr(out, want) != NULL, "it counts every address of the capture");
	expect_true(strstr(out, " addresses in known (") ||
			    strstr(out, " addresses in libc.so.6 (") ||
			    strstr(out, " addresses in ld-linux-x86-64.so.2 ("),
		    "it names a module of the capture");
	expect_true(strstr(out, "\r\033[Kheapprof: ") != NULL,
		    "the line is cleared before the final message");
	if (!strstr(out, want))
		printf("  output: %s\n", out);
	free(out);
}

HP_TEST(progress_not_without_a_terminal)
{
	char capture[4096];
	char *out;

	fresh_capture(capture, sizeof capture);
	out = hp_test_sh_out("HEAPPROF_PROGRESS_MS=0 %s/heapprof symbolize %s 2>&1 | cat",
			     hp_test_build(), capture);
	expect_true(out && !strstr(out, "symbolizing"), "no progress when stderr is a pipe");
	expect_true(out && strstr(out, "embedded symbols for "), "the final message only");
	free(out);
}

HP_TEST(progress_not_within_a_second)
{
	char capture[4096];
	char *out;

	fresh_capture(capture, sizeof capture);
	out = hp_test_sh_out("script -qfec '%s/heapprof symbolize %s' /dev/null", hp_test_build(),
			     capture);
	expect_true(out && !strstr(out, "symbolizing"),
		    "no progress for a capture symbolized well within a second");
	expect_true(out && strstr(out, "embedded symbols for "), "the final message");
	free(out);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
