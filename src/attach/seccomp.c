/*
 * seccomp.c - running a seccomp filter over the calls heapprof attach
 * needs (seccomp.h).
 *
 * The interpreter follows the kernel's classic BPF for seccomp: 32-bit
 * loads from struct seccomp_data at aligned offsets, the scratch memory
 * M[0..15], the ALU, forward jumps, RET. A value is known (the call's
 * number, the architecture, constants and what is computed from them) or
 * unknown (the arguments, the instruction pointer); a jump on an unknown
 * value takes both ways, one of them kept on a stack of pending states.
 */
#include "seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <string.h>

const struct hp_seccomp_call hp_seccomp_needed[] = {
	{0, "read"},
	{1, "write"},
	{2, "open"},
	{3, "close"},
	{4, "stat"},
	{5, "fstat"},
	{8, "lseek"},
	{9, "mmap"},
	{10, "mprotect"},
	{11, "munmap"},
	{12, "brk"},
	{13, "rt_sigaction"},
	{14, "rt_sigprocmask"},
	{17, "pread64"},
	{18, "pwrite64"},
	{20, "writev"},
	{21, "access"},
	{24, "sched_yield"},
	{25, "mremap"},
	{26, "msync"},
	{27, "mincore"},
	{28, "madvise"},
	{35, "nanosleep"},
	{39, "getpid"},
	{72, "fcntl"},
	{77, "ftruncate"},
	{89, "readlink"},
	{97, "getrlimit"},
	{110, "getppid"},
	{131, "sigaltstack"},
	{157, "prctl"},
	{186, "gettid"},
	{202, "futex"},
	{228, "clock_gettime"},
	{230, "clock_nanosleep"},
	{234, "tgkill"},
	{257, "openat"},
	{262, "newfstatat"},
	{267, "readlinkat"},
	{293, "pipe2"},
	{302, "prlimit64"},
	{318, "getrandom"},
	{-1, NULL},
};

const char *hp_seccomp_name(int nr)
{
	for (size_t i = 0; hp_seccomp_needed[i].name; i++)
		if (hp_seccomp_needed[i].nr == nr)
			return hp_seccomp_needed[i].name;
	return "?";
}

int hp_seccomp_more_severe(uint32_t a, uint32_t b)
{
	return (int32_t)(a & SECCOMP_RET_ACTION_FULL) < (int32_t)(b & SECCOMP_RET_ACTION_FULL);
}

struct val {
	uint32_t v;
	int known;
};

struct state {
	size_t pc;
	struct val a, x, m[BPF_MEMWORDS];
};

/* The longest program the kernel takes (BPF_MAXINSNS), and the most
 * instructions run over all paths before giving up. */
#define MAX_INSNS 4096
#define MAX_STEPS (1u << 22)

/* A 32-bit load at offset k of struct seccomp_data for call nr. */
static struct val load(uint32_t k, int nr)
{
	if (k == offsetof(struct seccomp_data, nr))
		return (struct val){(uint32_t)nr, 1};
	if (k == offsetof(struct seccomp_data, arch))
		return (struct val){AUDIT_ARCH_X86_64, 1};
	return (struct val){0, 0}; /* the instruction pointer, the arguments */
}

/* The ALU operation op of a and b; known when both are (and, for a
 * division, b is not 0: the kernel rejects a constant 0, and a program
 * dividing by X = 0 ends with 0, taken as unknown here). */
static struct val alu(uint16_t op, struct val a, struct val b)
{
	struct val r = {0, a.known && b.known};

	if (op == BPF_NEG)
		return (struct val){-a.v, a.known};
	if (!r.known)
		return r;
	switch (op) {
	case BPF_ADD: r.v = a.v + b.v; break;
	case BPF_SUB: r.v = a.v - b.v; break;
	case BPF_MUL: r.v = a.v * b.v; break;
	case BPF_DIV:
		if (b.v)
			r.v = a.v / b.v;
		else
			r.known = 0;
		break;
	case BPF_MOD:
		if (b.v)
			r.v = a.v % b.v;
		else
			r.known = 0;
		break;
	case BPF_OR: r.v = a.v | b.v; break;
	case BPF_AND: r.v = a.v & b.v; break;
	case BPF_XOR: r.v = a.v ^ b.v; break;
	case BPF_LSH: r.v = b.v < 32 ? a.v << b.v : 0; break;
	case BPF_RSH: r.v = b.v < 32 ? a.v >> b.v : 0; break;
	default: r.known = 0;
	}
	return r;
}

/* Whether the instruction is one the kernel's seccomp accepts, with its
 * jumps inside the program. */
static int valid(const struct sock_filter *prog, size_t n, size_t pc)
{
	const struct sock_filter *f = &prog[pc];
	uint16_t code = f->code;

	switch (BPF_CLASS(code)) {
	case BPF_LD:
		if (code == (BPF_LD | BPF_W | BPF_ABS))
			return f->k < sizeof(struct seccomp_data) && !(f->k & 3);
		if (code == (BPF_LD | BPF_W | BPF_LEN) || code == (BPF_LD | BPF_IMM))
			return 1;
		return code == (BPF_LD | BPF_MEM) && f->k < BPF_MEMWORDS;
	case BPF_LDX:
		if (code == (BPF_LDX | BPF_W | BPF_LEN) || code == (BPF_LDX | BPF_IMM))
			return 1;
		return code == (BPF_LDX | BPF_MEM) && f->k < BPF_MEMWORDS;
	case BPF_ST:
	case BPF_STX: return f->k < BPF_MEMWORDS;
	case BPF_ALU:
		if ((BPF_OP(code) == BPF_DIV || BPF_OP(code) == BPF_MOD) &&
		    BPF_SRC(code) == BPF_K && f->k == 0)
			return 0;
		return BPF_OP(code) <= BPF_XOR;
	case BPF_JMP:
		if (BPF_OP(code) == BPF_JA)
			return f->k < n - pc - 1;
		if (BPF_OP(code) != BPF_JEQ && BPF_OP(code) != BPF_JGT && BPF_OP(code) != BPF_JGE &&
		    BPF_OP(code) != BPF_JSET)
			return 0;
		return (size_t)f->jt < n - pc - 1 && (size_t)f->jf < n - pc - 1;
	case BPF_RET: return BPF_RVAL(code) == BPF_K || BPF_RVAL(code) == BPF_A;
	case BPF_MISC: return BPF_MISCOP(code) == BPF_TAX || BPF_MISCOP(code) == BPF_TXA;
	}
	return 0;
}

int hp_seccomp_worst(const struct sock_filter *prog, size_t n, int nr, uint32_t *action,
		     int *depends)
{
	static struct state pending[MAX_INSNS + 1];
	size_t npending = 1, steps = 0;
	int any = 0;

	if (!n || n > MAX_INSNS || BPF_CLASS(prog[n - 1].code) != BPF_RET)
		return -EINVAL;
	for (size_t pc = 0; pc < n; pc++)
		if (!valid(prog, n, pc))
			return -EINVAL;
	*depends = 0;
	memset(&pending[0], 0, sizeof pending[0]);
	for (int i = 0; i < BPF_MEMWORDS; i++)
		pending[0].m[i].known = 1; /* the kernel zeroes the scratch memory */
	pending[0].a.known = pending[0].x.known = 1;
	while (npending) {
		struct state s = pending[--npending];

		for (;;) {
			const struct sock_filter *f = &prog[s.pc];
			struct val src = BPF_SRC(f->code) == BPF_X ? s.x : (struct val){f->k, 1};

			if (++steps > MAX_STEPS)
				return -E2BIG;
			switch (BPF_CLASS(f->code)) {
			case BPF_LD:
				if (BPF_MODE(f->code) == BPF_ABS)
					s.a = load(f->k, nr);
				else if (BPF_MODE(f->code) == BPF_LEN)
					s.a = (struct val){sizeof(struct seccomp_data), 1};
				else if (BPF_MODE(f->code) == BPF_IMM)
					s.a = (struct val){f->k, 1};
				else
					s.a = s.m[f->k];
				s.pc++;
				continue;
			case BPF_LDX:
				if (BPF_MODE(f->code) == BPF_LEN)
					s.x = (struct val){sizeof(struct seccomp_data), 1};
				else if (BPF_MODE(f->code) == BPF_IMM)
					s.x = (struct val){f->k, 1};
				else
					s.x = s.m[f->k];
				s.pc++;
				continue;
			case BPF_ST:
				s.m[f->k] = s.a;
				s.pc++;
				continue;
			case BPF_STX:
				s.m[f->k] = s.x;
				s.pc++;
				continue;
			case BPF_ALU:
				s.a = alu(BPF_OP(f->code), s.a, src);
				s.pc++;
				continue;
			case BPF_MISC:
				if (BPF_MISCOP(f->code) == BPF_TAX)
					s.x = s.a;
				else
					s.a = s.x;
				s.pc++;
				continue;
			case BPF_JMP: {
				int taken = -1; /* -1: unknown */
				if (BPF_OP(f->code) == BPF_JA) {
					s.pc += 1 + f->k;
					continue;
				}
				if (s.a.known && src.known) {
					switch (BPF_OP(f->code)) {
					case BPF_JEQ: taken = s.a.v == src.v; break;
					case BPF_JGT: taken = s.a.v > src.v; break;
					case BPF_JGE: taken = s.a.v >= src.v; break;
					default: taken = (s.a.v & src.v) != 0; break;
					}
				}
				if (taken < 0) {
					/* Both ways: the false one waits. */
					pending[npending] = s;
					pending[npending].pc = s.pc + 1 + f->jf;
					npending++;
					taken = 1;
				}
				s.pc += 1 + (taken ? f->jt : f->jf);
				continue;
			}
			case BPF_RET: {
				struct val r =
					BPF_RVAL(f->code) == BPF_A ? s.a : (struct val){f->k, 1};
				uint32_t act = r.known ? r.v : SECCOMP_RET_KILL_PROCESS;
				if (!r.known)
					*depends = 1;
				if (!any) {
					*action = act;
					any = 1;
				} else if (act != *action) {
					*depends = 1;
					if (hp_seccomp_more_severe(act, *action))
						*action = act;
				}
				break;
			}
			}
			break;
		}
	}
	return 0;
}
