/*
 * test_seccomp.c - running seccomp filters over the calls heapprof attach
 * needs (src/attach/seccomp.c): the verdict for a call whose number and
 * architecture are known and whose arguments and instruction pointer are
 * not, every path those allow, the kernel's ranking of actions, and the
 * programs the kernel would refuse.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#include "../../src/attach/seccomp.h"
#include "../harness/harness.h"

#define N(prog) (sizeof(prog) / sizeof *(prog))
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

static uint32_t verdict(const struct sock_filter *p, size_t n, int nr, int *depends, int *err)
{
	uint32_t action = 0xdead;

	*err = hp_seccomp_worst(p, n, nr, &action, depends);
	return action;
}

HP_TEST(seccomp_a_filter_on_the_call_number)
{
	const struct sock_filter kill_openat[] = {
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		RET(SECCOMP_RET_KILL_PROCESS),
		RET(SECCOMP_RET_ALLOW),
	};
	const struct sock_filter eperm_openat[] = {
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		RET(SECCOMP_RET_ERRNO | EPERM),
		RET(SECCOMP_RET_ALLOW),
	};
	int dep, err;

	expect_eq_u64(verdict(kill_openat, N(kill_openat), __NR_openat, &dep, &err),
		      SECCOMP_RET_KILL_PROCESS, "openat: killed");
	expect_eq_u64((uint64_t)err, 0, "a valid program");
	expect_eq_u64((uint64_t)dep, 0, "whatever its arguments");
	expect_eq_u64(verdict(kill_openat, N(kill_openat), __NR_read, &dep, &err),
		      SECCOMP_RET_ALLOW, "read: allowed");
	expect_eq_u64(verdict(eperm_openat, N(eperm_openat), __NR_openat, &dep, &err),
		      SECCOMP_RET_ERRNO | EPERM, "openat: EPERM, with its errno");
}

/* The architecture is known (x86-64): the usual first check of a filter
 * decides, it does not fork. */
HP_TEST(seccomp_the_architecture_check_is_decided)
{
	const struct sock_filter p[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 0, 1),
		RET(SECCOMP_RET_ERRNO | EPERM),
		RET(SECCOMP_RET_ALLOW),
	};
	int dep, err;

	expect_eq_u64(verdict(p, N(p), __NR_mmap, &dep, &err), SECCOMP_RET_ALLOW,
		      "mmap: allowed on x86-64");
	expect_eq_u64((uint64_t)dep, 0, "and nothing depends on what is unknown");
	expect_eq_u64(verdict(p, N(p), __NR_ptrace, &dep, &err), SECCOMP_RET_ERRNO | EPERM,
		      "ptrace: EPERM");
}

/* A check of an argument, or of the instruction pointer, takes both ways:
 * the verdict is the worse, and depends says so. */
HP_TEST(seccomp_arguments_take_both_ways)
{
	const struct sock_filter creat[] = {
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
		LOAD(args[2]),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0100, 0, 1),
		RET(SECCOMP_RET_KILL_PROCESS),
		RET(SECCOMP_RET_ALLOW),
	};
	const struct sock_filter by_ip[] = {
		LOAD(instruction_pointer),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x400000, 0, 1),
		RET(SECCOMP_RET_TRAP),
		RET(SECCOMP_RET_LOG),
	};
	const struct sock_filter via_x[] = {
		LOAD(args[0]),
		BPF_STMT(BPF_MISC | BPF_TAX, 0),
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
		RET(SECCOMP_RET_ERRNO | EACCES),
		RET(SECCOMP_RET_ALLOW),
	};
	int dep, err;

	expect_eq_u64(verdict(creat, N(creat), __NR_openat, &dep, &err), SECCOMP_RET_KILL_PROCESS,
		      "openat with O_CREAT kills: the worse of the two");
	expect_eq_u64((uint64_t)dep, 1, "depending on the arguments");
	expect_eq_u64(verdict(creat, N(creat), __NR_close, &dep, &err), SECCOMP_RET_ALLOW,
		      "close: allowed");
	expect_eq_u64((uint64_t)dep, 0, "close: whatever its arguments");
	expect_eq_u64(verdict(by_ip, N(by_ip), __NR_read, &dep, &err), SECCOMP_RET_TRAP,
		      "by instruction pointer: the trap");
	expect_eq_u64(verdict(via_x, N(via_x), __NR_read, &dep, &err), SECCOMP_RET_ERRNO | EACCES,
		      "compared with an argument in X: both ways");
	expect_eq_u64((uint64_t)dep, 1, "depends");
}

/* Known values through the scratch memory and the ALU stay known. */
HP_TEST(seccomp_known_values_through_memory_and_alu)
{
	const struct sock_filter p[] = {
		LOAD(nr),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LD | BPF_IMM, 0),
		BPF_STMT(BPF_LDX | BPF_MEM, 3),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xfff),
		BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__NR_openat & 0xfff) + 1, 0, 1),
		RET(SECCOMP_RET_KILL_THREAD),
		RET(SECCOMP_RET_ALLOW),
	};
	int dep, err;

	expect_eq_u64(verdict(p, N(p), __NR_openat, &dep, &err), SECCOMP_RET_KILL_THREAD,
		      "openat: killed (nr through M[3], X, A & 0xfff + 1)");
	expect_eq_u64((uint64_t)dep, 0, "decided");
	expect_eq_u64(verdict(p, N(p), __NR_write, &dep, &err), SECCOMP_RET_ALLOW,
		      "write: allowed");
}

HP_TEST(seccomp_actions_ranked_as_the_kernel_does)
{
	static const uint32_t order[] = {
		SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP,
		SECCOMP_RET_ERRNO,        SECCOMP_RET_USER_NOTIF,  SECCOMP_RET_TRACE,
		SECCOMP_RET_LOG,          SECCOMP_RET_ALLOW,
	};
	int ok = 1;

	for (size_t i = 0; i + 1 < N(order); i++)
		ok &= hp_seccomp_more_severe(order[i], order[i + 1]) &&
		      !hp_seccomp_more_severe(order[i + 1], order[i]);
	expect_true(ok, "kill process > kill thread > trap > errno > notify > trace > log > allow");
}

/* What the kernel refuses, refused; and a program with more paths than
 * can be tried says so instead of guessing. */
HP_TEST(seccomp_invalid_and_too_many_paths)
{
	const struct sock_filter no_ret[] = {LOAD(nr)};
	const struct sock_filter out_of_range[] = {
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0),
		RET(SECCOMP_RET_ALLOW),
	};
	const struct sock_filter misaligned[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		RET(SECCOMP_RET_ALLOW),
	};
	const struct sock_filter div0[] = {
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_filter many[2 * 30 + 1];
	uint32_t action;
	int dep;

	expect_eq_u64((uint64_t)hp_seccomp_worst(no_ret, N(no_ret), 0, &action, &dep),
		      (uint64_t)-EINVAL, "no RET at the end");
	expect_eq_u64((uint64_t)hp_seccomp_worst(out_of_range, N(out_of_range), 0, &action, &dep),
		      (uint64_t)-EINVAL, "a jump past the end");
	expect_eq_u64((uint64_t)hp_seccomp_worst(misaligned, N(misaligned), 0, &action, &dep),
		      (uint64_t)-EINVAL, "a misaligned load");
	expect_eq_u64((uint64_t)hp_seccomp_worst(div0, N(div0), 0, &action, &dep),
		      (uint64_t)-EINVAL, "a division by the constant 0");
	/* 30 checks of an argument one after the other, each way leading to
	 * the next: 2^30 paths. */
	for (int i = 0; i < 30; i++) {
		many[2 * i] = (struct sock_filter)LOAD(args[0]);
		many[2 * i + 1] =
			(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 1u << i, 0, 0);
	}
	many[60] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
	expect_eq_u64((uint64_t)hp_seccomp_worst(many, N(many), 0, &action, &dep), (uint64_t)-E2BIG,
		      "2^30 paths: too many to try");
	expect_true(hp_seccomp_needed[0].nr >= 0 &&
			    strcmp(hp_seccomp_name(__NR_openat), "openat") == 0,
		    "the needed calls have names");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
