/*
 * harness.c - the test harness (see harness.h).
 */
#include "harness.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 512

static struct {
	const char *name;
	hp_test_fn fn;
} tests[MAX_TESTS];
static int ntests;
static int failures; /* in the running test */
static const char *current;

void hp_test_register(const char *name, hp_test_fn fn)
{
	if (ntests < MAX_TESTS) {
		tests[ntests].name = name;
		tests[ntests++].fn = fn;
	}
}

static void fail_header(const char *file, int line)
{
	fprintf(stdout, "  %s:%d: ", file, line);
	failures++;
}

int hp_expect_eq_u64(uint64_t got, uint64_t want, const char *why, const char *file, int line)
{
	if (got == want)
		return 1;
	fail_header(file, line);
	printf("%s: expected %llu, got %llu\n", why, (unsigned long long)want,
	       (unsigned long long)got);
	return 0;
}

int hp_expect_true(int ok, const char *expr, const char *why, const char *file, int line)
{
	if (ok)
		return 1;
	fail_header(file, line);
	printf("%s: expected %s\n", why, expr);
	return 0;
}

int hp_expect_near(double got, double want, double tol, const char *why, const char *file,
		   int line)
{
	if (fabs(got - want) <= tol * fabs(want))
		return 1;
	fail_header(file, line);
	printf("%s: expected %.6g within %.2f%%, got %.6g (%+.2f%%)\n", why, want, tol * 100, got,
	       want ? (got - want) / want * 100 : 0.0);
	return 0;
}

int hp_expect_str(const char *got, const char *want, const char *why, const char *file, int line)
{
	if (got && want && strcmp(got, want) == 0)
		return 1;
	fail_header(file, line);
	printf("%s: expected \"%s\", got \"%s\"\n", why, want ? want : "(null)",
	       got ? got : "(null)");
	return 0;
}

int hp_test_sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	fflush(stdout);
	st = system(cmd);
	if (st == -1)
		return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	st = WEXITSTATUS(st);
	return st;
}

const char *hp_test_build(void)
{
	static char abs[4096];
	const char *b = getenv("HP_BUILD");

	if (!abs[0] && !realpath(b && *b ? b : "build", abs))
		snprintf(abs, sizeof abs, "%s", b && *b ? b : "build");
	return abs;
}

const char *hp_test_tmp(void)
{
	static char dir[4200];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "%s/tmp/t.%d", hp_test_build(), (int)getpid());
		char cmd[4300];
		snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot create %s\n", dir);
	}
	return dir;
}

int hp_test_main(int argc, char **argv)
{
	const char *glob = getenv("HP_TEST_NAME");
	int passed = 0, failed = 0;
	(void)argc;
	(void)argv;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < ntests; i++) {
		if (glob && *glob && fnmatch(glob, tests[i].name, 0) != 0)
			continue;
		current = tests[i].name;
		failures = 0;
		tests[i].fn();
		if (failures) {
			printf("FAIL %s\n", tests[i].name);
			failed++;
		} else {
			printf("ok   %s\n", tests[i].name);
			passed++;
		}
	}
	/* A binary none of whose tests is selected says so (tests/run.sh fails
	 * when no binary runs one). */
	if (glob && *glob && !passed && !failed)
		printf("(HP_TEST_NAME='%s' selects no test of this binary)\n", glob);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
