/*
 * seccomper.c - a program that forbids itself a system call once started,
 * as sandboxed servers do: it allocates, installs a seccomp filter whose
 * action for openat (and open) is argv[1] ("kill": the process dies of
 * SIGSYS; "errno": the call fails with EPERM), then allocates on for
 * argv[2] milliseconds (default 300), and prints what it allocated.
 * Exit status 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static int forbid_open(int kill)
{
	unsigned action = kill ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | (EPERM & 0xffff);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, action),
	};
	struct sock_fprog prog = {sizeof f / sizeof *f, f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

NOINLINE void *sandboxed_alloc(size_t n)
{
	return malloc(n);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int kill = argc > 1 && strcmp(argv[1], "kill") == 0;
	double ms = argc > 2 ? atof(argv[2]) : 300, end;
	unsigned long count = 0;
	void *keep = malloc(1000);

	KEEP(keep);
	if (forbid_open(kill) != 0) {
		perror("seccomp");
		return 1;
	}
	end = now_ms() + ms;
	while (now_ms() < end) {
		void *p = sandboxed_alloc(64);
		KEEP(p);
		free(p);
		count++;
	}
	printf("sandboxed: allocated and freed %s\n", count ? "blocks" : "nothing");
	free(keep);
	return 0;
}
