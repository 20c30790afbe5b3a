/*
 * filtered.c - a program that installs a seccomp filter after its start,
 * then waits: what `heapprof attach` must refuse without harming it when
 * the filter kills or denies a call the attach needs, and attach when it
 * filters only calls the attach never makes.
 *
 *   filtered kill|eperm|unrelated|args
 *       kill       openat kills the process (SECCOMP_RET_KILL_PROCESS)
 *       eperm      openat fails with EPERM (SECCOMP_RET_ERRNO)
 *       unrelated  ptrace, mount and reboot fail with EPERM; all else allowed
 *       args       openat with O_CREAT among its flags kills the process
 *   prints "ready", then on each line of standard input allocates and frees
 *   a few blocks; at its end prints "bye" and exits 0
 */
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
#include <unistd.h>

#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int main(int argc, char **argv)
{
	struct sock_filter kill_openat[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		ALLOW,
	};
	struct sock_filter eperm_openat[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		ALLOW,
	};
	struct sock_filter unrelated[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_reboot, 1, 0),
		ALLOW,
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_filter creat_args[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0100 /* O_CREAT */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		ALLOW,
	};
	struct sock_fprog prog;
	char line[64];

	if (argc != 2)
		return 2;
	if (strcmp(argv[1], "kill") == 0)
		prog = (struct sock_fprog){sizeof kill_openat / sizeof *kill_openat, kill_openat};
	else if (strcmp(argv[1], "eperm") == 0)
		prog = (struct sock_fprog){sizeof eperm_openat / sizeof *eperm_openat,
					   eperm_openat};
	else if (strcmp(argv[1], "unrelated") == 0)
		prog = (struct sock_fprog){sizeof unrelated / sizeof *unrelated, unrelated};
	else
		prog = (struct sock_fprog){sizeof creat_args / sizeof *creat_args, creat_args};
	free(malloc(1)); /* stdio and malloc ready before the filter */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("filtered: seccomp");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		void *p[8];
		for (int i = 0; i < 8; i++)
			p[i] = malloc(100 * (size_t)(i + 1));
		for (int i = 0; i < 8; i++)
			free(p[i]);
	}
	printf("bye\n");
	return 0;
}
