/*
 * test_fuzz_corpus.c - the fuzzer's kept inputs, replayed as a regular test;
 * and, in CI, the fuzzer itself for a bounded time.
 *
 * tests/fuzz/crashes/ holds every input `make fuzz` found to crash, leak,
 * hang or ask for too much memory; tests/fuzz/seeds/ holds a small corpus
 * that covers the reader's paths. Each file goes through what the fuzz
 * target does (hp_capture_load_mem, then tests/fuzz/exercise.h, every
 * view of tests/fuzz/views.h, and the lean load against the whole one:
 * exercise_lean) in a child
 * process of its own, so that one crash names its file and the others still
 * run. A child may not take more than CHILD_SECONDS, nor more than
 * CHILD_MEMORY_BYTES of memory (as libFuzzer's -rss_limit_mb=2048): an input
 * of at most 64 KiB that needs gigabytes is a finding, as in the fuzzer. A
 * crash input stays in crashes/ until the bug is fixed: this test fails until
 * then, by design.
 *
 * With CI or HP_FUZZ=1 in the environment, fuzz_for_a_while runs
 * `make -s fuzz FUZZ_SECONDS=20` (clang, libFuzzer): a new crash lands in
 * tests/fuzz/crashes/ and fails the test. Locally the test only replays.
 *
 * Built with gcc like every test; the source tree is found from the current
 * directory (make check runs from the top), else from $HP_SRCDIR, else as the
 * parent of the build directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/format/capture.h"
#include "../fuzz/exercise.h"
#include "../fuzz/views.h"
#include "../harness/harness.h"

#define CHILD_SECONDS 20
#define CHILD_MEMORY_BYTES (2ull << 30)
#define MAX_INPUT_BYTES (1u << 20) /* the fuzzer keeps 64 KiB; more is not a kept input */

/* How a child ends, besides a signal. */
enum {
	CHILD_OK = 0,
	CHILD_NO_MEMORY = 10, /* hp_capture_load_mem returned -ENOMEM */
	CHILD_UNREADABLE = 11,
	CHILD_LEAKED = 23, /* LeakSanitizer's exit code, in a SAN=address build */
};

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

#ifdef HAVE_ASAN
/* Under ASan an address-space limit cannot work (the shadow alone is
 * terabytes), so the allocator refuses the one big request instead, like
 * libFuzzer's -malloc_limit_mb. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=2048";
}
#endif

static const char *src_dir(void)
{
	static char dir[4200];
	const char *env = getenv("HP_SRCDIR");
	struct stat st;

	if (dir[0])
		return dir;
	if (env && *env)
		snprintf(dir, sizeof dir, "%s", env);
	else if (stat("tests/fuzz", &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%s/..", hp_test_build());
	return dir;
}

/* The whole file, malloc'ed; NULL when unreadable or too large. */
static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *buf = NULL;
	struct stat st;
	ssize_t r = 0;

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= MAX_INPUT_BYTES &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL) {
		while (*len < (size_t)st.st_size) {
			r = read(fd, buf + *len, (size_t)st.st_size - *len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			*len += (size_t)r;
		}
		if (*len != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	return buf;
}

/* In the child: one input, as the fuzz target runs it. Does not return. */
static void replay_child(const char *path)
{
	struct hp_capture cap;
	char err[512] = "";
	size_t len;
	uint8_t *data;
	int ret;

#ifndef HAVE_ASAN
	struct rlimit rl = {CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES};
	setrlimit(RLIMIT_AS, &rl);
#endif
	alarm(CHILD_SECONDS);
	data = slurp(path, &len);
	if (!data)
		exit(CHILD_UNREADABLE);
	ret = hp_capture_load_mem(data, len, &cap, err, sizeof err);
	if (ret == -ENOMEM)
		exit(CHILD_NO_MEMORY);
	if (ret && !err[0])
		broken("hp_capture_load_mem failed without saying why");
	if (!ret) {
		exercise_images(&cap);
		exercise_all_views(&cap);
		exercise_lean(data, len, &cap);
		hp_capture_free(&cap);
	}
	free(data);
	exit(CHILD_OK); /* exit, not _exit: LeakSanitizer checks at exit */
}

/* Replays one file; returns 1 when it went through cleanly. */
static int replay(const char *path, const char *shown)
{
	int st;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return expect_true(0, "fork for a replay");
	if (pid == 0)
		replay_child(path);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return expect_true(0, "waitpid for a replay");
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_OK)
		return 1;
	printf("  %s: ", shown);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
		printf("took more than %d s (a hang?)", CHILD_SECONDS);
	else if (WIFSIGNALED(st))
		printf("crashed: %s", strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st) == CHILD_NO_MEMORY)
		printf("needs more than %llu MiB to load", CHILD_MEMORY_BYTES >> 20);
	else if (WEXITSTATUS(st) == CHILD_UNREADABLE)
		printf("cannot be read (or is over %u bytes)", MAX_INPUT_BYTES);
	else if (WEXITSTATUS(st) == CHILD_LEAKED)
		printf("leaks (LeakSanitizer's report is above)");
	else
		printf("exited %d (a sanitizer's report is above)", WEXITSTATUS(st));
	printf("; replay with: build/fuzz/fuzz_capture %s\n", shown);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_input(const struct dirent *e)
{
	/* Not ".", "..", ".gitkeep", nor the directory's README. */
	return e->d_name[0] != '.' && strncmp(e->d_name, "README", 6) != 0;
}

/* Replays every file of tests/fuzz/<sub>; returns how many it replayed. */
static int replay_dir(const char *sub)
{
	char dir[4400], path[4800], shown[600];
	struct dirent **names;
	int n, bad = 0;

	snprintf(dir, sizeof dir, "%s/tests/fuzz/%s", src_dir(), sub);
	n = scandir(dir, &names, is_input, by_name);
	if (n < 0 && errno == ENOENT && strcmp(sub, "crashes") == 0)
		return 0; /* git keeps no empty directory: no crash kept */
	if (n < 0) {
		expect_true(n >= 0, "tests/fuzz/<dir> is readable");
		printf("  %s: %s\n", dir, strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		snprintf(shown, sizeof shown, "tests/fuzz/%s/%s", sub, names[i]->d_name);
		if (!replay(path, shown))
			bad++;
		free(names[i]);
	}
	free(names);
	expect_eq_u64((uint64_t)bad, 0, "every kept input loads without a crash, leak, hang "
					"or gigabyte allocation");
	return n;
}

HP_TEST(replay_crash_inputs)
{
	replay_dir("crashes");
}

HP_TEST(replay_seed_corpus)
{
	expect_true(replay_dir("seeds") > 0, "tests/fuzz/seeds holds a corpus");
}

HP_TEST(fuzz_for_a_while)
{
	const char *ci = getenv("CI"), *want = getenv("HP_FUZZ");
	char probe[4400];
	int st;

	if (!(want && strcmp(want, "1") == 0) && !(ci && *ci && strcmp(ci, "0") != 0)) {
		printf("  (replay only: set HP_FUZZ=1, or CI, to fuzz for 20 s)\n");
		return;
	}
	/* The same probe as the Makefile's, to say what to install before
	 * make says anything else. */
	snprintf(probe, sizeof probe, "%s/fuzz-probe", hp_test_tmp());
	st = hp_test_sh("printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) "
			"{ return !d && n; }\\n' | clang -fsanitize=fuzzer,address,undefined "
			"-x c - -o '%s' >/dev/null 2>&1",
			probe);
	if (!expect_eq_u64((uint64_t)st, 0, "clang with libFuzzer is installed")) {
		printf("  fuzzing (CI or HP_FUZZ=1) needs clang with libFuzzer and the "
		       "sanitizers: apt-get install clang libclang-rt-14-dev\n");
		return;
	}
	st = hp_test_sh("make -s --no-print-directory -C '%s' fuzz BUILD='%s' FUZZ_SECONDS=20",
			src_dir(), hp_test_build());
	expect_eq_u64((uint64_t)st, 0, "make fuzz finds nothing in 20 s (a finding is now in "
				       "tests/fuzz/crashes/; its report is above)");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
