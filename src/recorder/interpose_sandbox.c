/*
 * interpose_sandbox.c - prctl and syscall, to see a seccomp filter coming.
 *
 * A program that sandboxes itself once started (a server after its
 * set-up) installs a seccomp filter through prctl(PR_SET_SECCOMP) or the
 * seccomp system call (libseccomp's seccomp_load calls it through
 * syscall()). The filter may kill the process at a system call the
 * program never makes but the recorder would (an open of /proc/self/statm
 * for the RSS: SIGSYS). Just before the filter goes in, the recorder opens
 * what it needs and from then on opens nothing (hp_recorder_sandbox,
 * hp_os_sandboxed). A filter installed by a raw system call instruction,
 * or by another process before the exec (seccomp filters are inherited),
 * is not seen: one from before the exec has already let the loader and
 * the recorder's start open what they open.
 *
 * Neither function is interposed in the static archive, nor patched by
 * heapprof attach. Both forward every call unchanged; syscall forwards
 * six arguments, as glibc's own wrapper passes them.
 */
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "interpose_inline.h"
#include "os.h"
#include "recorder.h"

#ifndef HP_STATIC

/* Everything this file defines with external linkage is exported (the
 * version script then keeps just the interposed names). */
#pragma GCC visibility push(default)

typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef long (*syscall_fn)(long, long, long, long, long, long, long);

/* Looked up on first use: written racily, but every thread writes the
 * same value. */
static prctl_fn next_prctl;
static syscall_fn next_syscall;

/* Reads the variadic arguments as the kernel's registers: unsigned long
 * each (what glibc's wrappers do; an argument not passed reads as what
 * its register held, and the kernel ignores it). */
int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!next_prctl)
		next_prctl = (prctl_fn)hp_os_dlsym_next("prctl");
	if (option == PR_SET_SECCOMP &&
	    (a[0] == SECCOMP_MODE_FILTER || a[0] == SECCOMP_MODE_STRICT))
		hp_recorder_sandbox(a[0] == SECCOMP_MODE_STRICT);
	return next_prctl(option, a[0], a[1], a[2], a[3]);
}

long syscall(long number, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!next_syscall)
		next_syscall = (syscall_fn)hp_os_dlsym_next("syscall");
	if (number == SYS_seccomp &&
	    (a[0] == SECCOMP_SET_MODE_FILTER || a[0] == SECCOMP_SET_MODE_STRICT))
		hp_recorder_sandbox(a[0] == SECCOMP_SET_MODE_STRICT);
	return next_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#pragma GCC visibility pop

#endif
