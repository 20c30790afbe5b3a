/*
 * inject_int.h - what the files of src/attach share among themselves
 * (target.c, threads.c, inject.c); not an interface of the folder, which
 * is inject.h. Each function's comment is at its definition. None is
 * async-signal-safe: they run in heapprof's own process.
 */
#ifndef HP_ATTACH_INJECT_INT_H
#define HP_ATTACH_INJECT_INT_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "inject.h"

/* A line of /proc/PID/maps. */
struct hp_inject_map {
	uintptr_t lo, hi, off;
	char perms[5];
	char path[4096];
};

/* target.c */
int hp_inject_each_map(pid_t pid, int (*fn)(const struct hp_inject_map *, void *), void *arg);
int hp_inject_proc_stat(pid_t pid, char *comm, size_t cap, char *state, unsigned long *flags);
int hp_inject_exit_status(pid_t pid);
int hp_inject_execing(pid_t pid);

/* threads.c */
Dwfl *hp_inject_unwinder(pid_t pid);
int hp_inject_safe_point(const struct hp_inject_target *t, Dwfl *dwfl, pid_t tid,
			 const struct user_regs_struct *r);
int hp_inject_stop_thread(const struct hp_inject_target *t, pid_t tid, int *pending);
int hp_inject_seize_refused(pid_t pid, pid_t tid);
int hp_inject_list_threads(pid_t pid, pid_t *tids, size_t max, size_t *n);
void hp_inject_sleep_ms(unsigned ms);
int hp_inject_say_ptrace_error(pid_t pid, int err);
int hp_inject_thread_gone(const struct hp_inject_target *t, pid_t tid, const char *when);

#endif
