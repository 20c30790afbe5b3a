/* probe.c - programs that do what real programs do to their process, each
 * with output of its own to compare with a bare run (tests/fault/
 * test_probes.c). `probe MODE [ARGS]`; every allocation the tests count
 * comes from a probe_* function. */
#define _GNU_SOURCE
#include <alloca.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/heapprof.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

extern char **environ;

/* A snapshot when recorded; nothing when bare. */
static void dump(void)
{
	if (heapprof_dump)
		heapprof_dump();
}

NOINLINE void *probe_alloc(size_t n) { void *p = malloc(n); KEEP(p); return p; }
NOINLINE void *probe_child_alloc(size_t n) { void *p = malloc(n); KEEP(p); return p; }

/* Allocates `depth` frames down (no tail calls: each frame adds after). */
NOINLINE int probe_deep(int depth, size_t n)
{
	if (depth > 0)
		return probe_deep(depth - 1, n) + 1;
	free(probe_alloc(n));
	return 0;
}

/* _exit with blocks in use: 4 x 100 bytes allocated, 1 freed. */
static int mode_exit_underscore(void)
{
	void *p[4];
	for (int i = 0; i < 4; i++)
		p[i] = probe_alloc(100);
	free(p[0]);
	printf("bye\n");
	fflush(stdout);
	_exit(3);
}

/* A forked child that allocates 5 x 64 bytes and _exits. */
static int mode_fork_exit(void)
{
	int status;
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			probe_child_alloc(64);
		_exit(5);
	}
	waitpid(pid, &status, 0);
	printf("child %d\n", WEXITSTATUS(status));
	return 0;
}

/* vfork, a failed exec, exit() in the child: the parent goes on. */
static int mode_vfork_exit(void)
{
	int status;
	void *a = probe_alloc(1000);
	pid_t pid = vfork();
	if (pid == 0) {
		execl("/nonexistent/program", "x", (char *)NULL);
		exit(7); /* what careless programs do: runs exit handlers */
	}
	waitpid(pid, &status, 0);
	for (int i = 0; i < 10; i++)
		probe_alloc(200);
	free(a);
	printf("vfork child %d\n", WEXITSTATUS(status));
	return 0;
}

static char clone_stack[64 * 1024] __attribute__((aligned(16)));

static int clone_child(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		free(probe_child_alloc(4000)); /* enough for a time-series record */
	return 9;
}

/* A raw clone(SIGCHLD): a new process that ran no fork handlers. */
static int mode_raw_clone(void)
{
	int status;
	for (int i = 0; i < 3; i++)
		probe_alloc(300);
	pid_t pid = clone(clone_child, clone_stack + sizeof clone_stack, SIGCHLD, NULL);
	waitpid(pid, &status, 0);
	for (int i = 0; i < 3; i++)
		probe_alloc(300);
	printf("clone child %d\n", WEXITSTATUS(status));
	return 0;
}

static void *canceller_churn(void *arg)
{
	(void)arg;
	for (unsigned i = 0;; i++) {
		free(malloc(64 + i % 128));
		if (i % 4096 == 0)
			pthread_testcancel();
	}
	return NULL;
}

/* Threads that are cancelled while they churn. */
static int mode_cancel(void)
{
	for (int round = 0; round < 50; round++) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, canceller_churn, NULL);
		usleep(2000);
		for (int i = 0; i < 4; i++) {
			pthread_cancel(t[i]);
			pthread_join(t[i], NULL);
		}
	}
	printf("cancelled 200 threads\n");
	return 0;
}

/* Closes every descriptor past 2, opens in.txt and out.txt (reusing the
 * lowest numbers), and copies one into the other a byte at a time while
 * allocating 200 frames deep. */
static int mode_fds(const char *dir)
{
	char in[4096], out[4096], c;
	int fi, fo;

	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	snprintf(in, sizeof in, "%s/in.txt", dir);
	snprintf(out, sizeof out, "%s/out.txt", dir);
	fi = open(in, O_RDONLY);
	fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fi < 0 || fo < 0)
		return 1;
	while (read(fi, &c, 1) == 1) {
		probe_deep(200, 48);
		if (write(fo, &c, 1) != 1)
			return 2;
	}
	close(fi);
	close(fo);
	printf("fds %d %d\n", fi, fo);
	return 0;
}

/* The daemon idiom: close everything, /dev/null on 0-2, a log file of its
 * own, then work, with snapshots asked for meanwhile. */
static int mode_daemon(const char *dir)
{
	char log[4096];
	int fd;

	for (fd = 0; fd < 1024; fd++)
		close(fd);
	fd = open("/dev/null", O_RDWR);
	dup2(fd, 1);
	dup2(fd, 2);
	snprintf(log, sizeof log, "%s/daemon.log", dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 50; i++) {
		char line[64];
		int n = snprintf(line, sizeof line, "line %d\n", i);
		probe_alloc(32);
		if (write(fd, line, (size_t)n) != n)
			return 1;
		if (i % 10 == 0)
			dump();
	}
	close(fd);
	return 0;
}

/* dup2 of /dev/null over every descriptor but 0-2, then work. */
static int mode_dup2(void)
{
	int null = open("/dev/null", O_RDWR);
	for (int fd = 3; fd < 1024; fd++)
		if (fd != null)
			dup2(null, fd);
	for (int i = 0; i < 7; i++)
		probe_alloc(55);
	dump();
	printf("dup2 done\n");
	return 0;
}

NOINLINE void small_stack_work(size_t kib)
{
	char used[kib * 1024];
	memset(used, 1, kib * 1024);
	KEEP(used);
	for (int i = 0; i < 10; i++)
		free(probe_alloc(16));
}

/* small-stack's "warm": the thread allocates once with its stack still
 * shallow (recorded: the thread is then set up, its origin known, and its
 * later allocations take the recorder's common path) before it goes deep. */
static int small_stack_warm;

static void *small_stack_thread(void *arg)
{
	if (small_stack_warm)
		free(probe_alloc(16));
	small_stack_work((size_t)arg);
	return NULL;
}

/* A thread with a 16 KiB stack of the program's own (a guard page below
 * it) that uses `kib` KiB of it, and allocates; warm: after one
 * allocation with its stack shallow. */
static int mode_small_stack(int kib, int warm)
{
	small_stack_warm = warm;
	pthread_attr_t attr;
	pthread_t t;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *stack = mmap(NULL, page + 16 * 1024, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (stack == MAP_FAILED || mprotect(stack, page, PROT_NONE) < 0)
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack + page, 16 * 1024);
	if (pthread_create(&t, &attr, small_stack_thread, (void *)(size_t)kib) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("small stack done\n");
	return 0;
}

/* abort() with its handler stack a 2 KiB sigaltstack... of the program,
 * which set SA_ONSTACK for nothing: the recorder's handler runs there. */
static int mode_altstack_abort(void)
{
	static char alt[2048];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
	sigaltstack(&ss, NULL);
	probe_alloc(10);
	abort();
}

/* A fork that raises SIGUSR2 without --follow-fork: it must die of it. */
static int mode_fork_usr2(void)
{
	int status;
	pid_t pid = fork();
	if (pid == 0) {
		raise(SIGUSR2);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	printf("child %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return 0;
}

static void *getattr_thread(void *arg)
{
	pthread_attr_t attr;
	size_t size = 0;

	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstacksize(&attr, &size);
		pthread_attr_destroy(&attr);
	}
	*(size_t *)arg = size;
	return NULL;
}

/* pthread_getattr_np allocates while it holds the thread's lock (Rust's
 * runtime calls it at start, for the main thread). */
static int mode_getattr(void)
{
	size_t main_size, thread_size;
	pthread_t t;

	getattr_thread(&main_size);
	pthread_create(&t, NULL, getattr_thread, &thread_size);
	pthread_join(t, NULL);
	printf("stacks %s %s\n", main_size ? "known" : "unknown", thread_size ? "known" : "unknown");
	return 0;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints the environment, sorted. */
static int mode_env(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = calloc(n, sizeof *e);
	memcpy(e, environ, n * sizeof *e);
	qsort(e, n, sizeof *e, by_string);
	for (size_t i = 0; i < n; i++)
		printf("%s\n", e[i]);
	free(e);
	return 0;
}

/* A child forked and exec'd (probe env): what it sees. */
static int mode_child_env(const char *self)
{
	int status;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, "env", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WEXITSTATUS(status);
}

/* Exec chain: allocate, ask for a snapshot, exec the next stage. */
static int mode_exec_chain(const char *self, int stage)
{
	char next[16];
	for (int i = 0; i <= stage; i++)
		probe_alloc(1000 + (size_t)stage);
	dump();
	if (stage == 2) {
		printf("chain end\n");
		return 0;
	}
	snprintf(next, sizeof next, "%d", stage + 1);
	fflush(stdout);
	execl(self, self, "exec-chain", next, (char *)NULL);
	return 1;
}

/* The first allocation, below `pad` bytes of stack never touched. */
NOINLINE static void probe_first_alloc(size_t pad)
{
	char *gap = alloca(pad);
	KEEP(gap);
	free(probe_alloc(16));
}

/* 10 allocations made `depth` frames below main, after a first one (the
 * one that sets the recorder up) made below 64 KiB of untouched stack:
 * valgrind, which maps the program's stack as it is touched, has just
 * mapped the pages the first call touches then. */
static int mode_deep(int depth)
{
	probe_first_alloc(64 * 1024);
	for (int i = 0; i < 10; i++)
		probe_deep(depth, 100);
	printf("deep %d\n", depth);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : ".";

	if (!strcmp(mode, "exit_"))
		return mode_exit_underscore();
	if (!strcmp(mode, "fork-exit"))
		return mode_fork_exit();
	if (!strcmp(mode, "vfork-exit"))
		return mode_vfork_exit();
	if (!strcmp(mode, "raw-clone"))
		return mode_raw_clone();
	if (!strcmp(mode, "cancel"))
		return mode_cancel();
	if (!strcmp(mode, "fds"))
		return mode_fds(arg);
	if (!strcmp(mode, "daemon"))
		return mode_daemon(arg);
	if (!strcmp(mode, "dup2"))
		return mode_dup2();
	if (!strcmp(mode, "small-stack"))
		return mode_small_stack(argc > 2 ? atoi(arg) : 6,
					argc > 4 && !strcmp(argv[3], "warm"));
	if (!strcmp(mode, "deep"))
		return mode_deep(atoi(arg));
	if (!strcmp(mode, "altstack-abort"))
		return mode_altstack_abort();
	if (!strcmp(mode, "fork-usr2"))
		return mode_fork_usr2();
	if (!strcmp(mode, "getattr"))
		return mode_getattr();
	if (!strcmp(mode, "env"))
		return mode_env();
	if (!strcmp(mode, "child-env"))
		return mode_child_env(argv[0]);
	if (!strcmp(mode, "exec-chain"))
		return mode_exec_chain(argv[0], atoi(arg));
	fprintf(stderr, "probe: unknown mode %s\n", mode);
	return 2;
}
