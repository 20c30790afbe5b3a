/*
 * seccomp.h - what a process's seccomp filters would do to the system
 * calls heapprof attach makes it make, told before making any.
 *
 * A filter is a classic BPF program run over struct seccomp_data (the
 * call's number, the architecture, the instruction pointer and six
 * arguments). heapprof knows the number and the architecture of each call
 * the attach needs, not its arguments nor where it is made from: the
 * program is run over every path those unknowns allow (its jumps only go
 * forward), and the verdict is the most severe action any path returns,
 * in the kernel's order across stacked filters (kill the process, kill
 * the thread, trap, errno, user notification, trace, log, allow).
 *
 * Ordinary CLI C: no allocation, no state, thread-safe.
 */
#ifndef HP_ATTACH_SECCOMP_H
#define HP_ATTACH_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

/* The calls the attach makes the process make, on its borrowed thread
 * (dlopen: opening, reading and mapping libheapprof.so and its libraries)
 * and on every thread afterwards (the recorder: its tables, its capture,
 * its unwinder, its timers), and at the detach (the GOT entries put back):
 * x86-64 numbers and names, ended by {-1, NULL}. */
struct hp_seccomp_call {
	int nr;
	const char *name;
};
extern const struct hp_seccomp_call hp_seccomp_needed[];

/* The name of system call nr among hp_seccomp_needed ("openat"), or "?". */
const char *hp_seccomp_name(int nr);

/* The most severe action (SECCOMP_RET_*, with its data: the errno of
 * SECCOMP_RET_ERRNO) that the filter prog[0 .. n) can return for system
 * call nr on x86-64, whatever the call's arguments and instruction
 * pointer; *depends is set when the answer depends on those (some path
 * returns something else). Returns 0, -EINVAL for a program the kernel
 * would not have accepted, -E2BIG when there are too many paths to try
 * (then nothing is known). */
int hp_seccomp_worst(const struct sock_filter *prog, size_t n, int nr, uint32_t *action,
		     int *depends);

/* Whether action a is more severe than b, as the kernel ranks the actions
 * of stacked filters. */
int hp_seccomp_more_severe(uint32_t a, uint32_t b);

#endif
