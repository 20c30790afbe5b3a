/*
 * inject.c - calling a function inside another running process (inject.h):
 * a thread borrowed at a safe point, the call's frame written below its
 * stack, every register put back; and what the target's seccomp filters
 * would do to the calls an attach makes. The target itself is target.c's,
 * its threads threads.c's.
 */
#include "inject.h"
#include "inject_int.h"

#include <dirent.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/say.h"
#include "seccomp.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

/* Bytes below the stack pointer left alone: the red zone and then some. */
#define SKIP_BELOW_SP 4096

/* A thread's seccomp mode (0 none, 1 strict, 2 filter) and number of
 * filters, from /proc/PID/task/TID/status; -1 when it cannot be read. */
static int seccomp_mode(pid_t pid, pid_t tid, int *filters)
{
	char path[96], line[256];
	int mode = -1;
	FILE *f;

	*filters = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "Seccomp: %d", &mode);
		sscanf(line, "Seccomp_filters: %d", filters);
	}
	fclose(f);
	return mode;
}

/* The most severe action of tid's filters (stopped, ours) for any call the
 * attach needs: 0 with *nr, *action, *depends set (*nr < 0: every call
 * allowed), or -errno when the filters cannot be read or run. */
static int filters_verdict(pid_t tid, int *nr, uint32_t *action, int *depends)
{
	static struct sock_filter prog[4096];

	*nr = -1;
	*action = SECCOMP_RET_ALLOW;
	*depends = 0;
	for (long idx = 0;; idx++) {
		long count = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, NULL);

		if (count < 0 && errno == ENOENT)
			return 0; /* no more filters */
		if (count < 0)
			return -errno;
		if (count > (long)(sizeof prog / sizeof *prog))
			return -E2BIG;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, prog) != count)
			return -EIO;
		for (size_t i = 0; hp_seccomp_needed[i].name; i++) {
			uint32_t act;
			int dep, err = hp_seccomp_worst(prog, (size_t)count,
							hp_seccomp_needed[i].nr, &act, &dep);
			if (err < 0)
				return err;
			if (hp_seccomp_more_severe(act, *action) &&
			    hp_seccomp_more_severe(act, SECCOMP_RET_LOG)) {
				*nr = hp_seccomp_needed[i].nr;
				*action = act;
				*depends = dep;
			}
		}
	}
}

/* "kills it on openat (SECCOMP_RET_KILL_PROCESS)", "denies openat
 * (SECCOMP_RET_ERRNO: Operation not permitted)". */
static void say_action(char *out, size_t cap, int nr, uint32_t action, int depends)
{
	const char *call = hp_seccomp_name(nr), *maybe = depends ? ", for some arguments" : "";
	uint32_t act = action & SECCOMP_RET_ACTION_FULL, data = action & SECCOMP_RET_DATA;

	if (act == SECCOMP_RET_KILL_PROCESS || act == SECCOMP_RET_KILL_THREAD)
		snprintf(out, cap, "kills it on %s (SECCOMP_RET_KILL_%s%s)", call,
			 act == SECCOMP_RET_KILL_PROCESS ? "PROCESS" : "THREAD", maybe);
	else if (act == SECCOMP_RET_TRAP)
		snprintf(out, cap, "sends it SIGSYS on %s (SECCOMP_RET_TRAP%s)", call, maybe);
	else if (act == SECCOMP_RET_ERRNO)
		snprintf(out, cap, "denies %s (SECCOMP_RET_ERRNO: %s%s)", call, strerror((int)data),
			 maybe);
	else if (act == SECCOMP_RET_TRACE)
		snprintf(out, cap, "hands %s to a tracer (SECCOMP_RET_TRACE%s)", call, maybe);
	else
		snprintf(out, cap, "hands %s to a supervisor (SECCOMP_RET_USER_NOTIF%s)", call,
			 maybe);
}

int hp_inject_read_string(const struct hp_inject_target *t, uint64_t at, char *buf, size_t cap)
{
	size_t got = 0;

	/* A page at a time: the string may end just before an unmapped one. */
	while (got + 1 < cap) {
		size_t room = cap - 1 - got, to_page = 4096 - (size_t)((at + got) & 4095);
		size_t n = room < to_page ? room : to_page;
		struct iovec local = {buf + got, n}, remote = {(void *)(uintptr_t)(at + got), n};
		ssize_t k = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);

		if (k <= 0)
			break;
		if (memchr(buf + got, '\0', (size_t)k)) {
			got += (size_t)k;
			break;
		}
		got += (size_t)k;
	}
	buf[got] = '\0';
	return got ? 0 : -EFAULT;
}

int hp_inject_check_seccomp(struct hp_inject_target *t, const char *doing)
{
	pid_t tids[1024];
	size_t n = 0;

	if (hp_inject_list_threads(t->pid, tids, sizeof tids / sizeof *tids, &n) < 0)
		return 0; /* gone: the attach says so */
	for (size_t i = 0; i < n; i++) {
		int filters, mode = seccomp_mode(t->pid, tids[i], &filters), pending = 0, nr = -1;
		int depends = 0, err;
		uint32_t action = SECCOMP_RET_ALLOW;
		char what[256];

		if (mode == 1) {
			hp_say_error(
				"process %d runs in seccomp strict mode (thread %d): it may make "
				"no system call but read, write, exit and sigreturn, and %s "
				"would get it killed; refused, nothing was done to it",
				(int)t->pid, (int)tids[i], doing);
			return -EPERM;
		}
		if (mode != 2)
			continue;
		if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0) {
			if (errno == ESRCH ||
			    (errno == EPERM && hp_inject_seize_refused(t->pid, tids[i])))
				continue; /* ended */
			return errno == EPERM ? -EPERM : hp_inject_say_ptrace_error(t->pid, errno);
		}
		err = hp_inject_stop_thread(t, tids[i], &pending);
		if (!err)
			err = filters_verdict(tids[i], &nr, &action, &depends);
		ptrace(PTRACE_DETACH, tids[i], 0, (void *)(uintptr_t)pending);
		if (err == -ESRCH)
			continue; /* the thread ended meanwhile */
		if (err == -EACCES || err == -EPERM) {
			hp_say_error(
				"process %d has a seccomp filter (%d on thread %d) that heapprof "
				"can read only with CAP_SYS_ADMIN (as root): unread, it could get "
				"the program killed or denied when %s; refused, nothing was done "
				"to it",
				(int)t->pid, filters, (int)tids[i], doing);
			return -EPERM;
		}
		if (err < 0) {
			hp_say_error(
				"process %d has a seccomp filter (%d on thread %d) that heapprof "
				"cannot read (%s): it could get the program killed or denied when "
				"%s; refused, nothing was done to it",
				(int)t->pid, filters, (int)tids[i],
				err == -EINVAL  ? "the kernel lacks CONFIG_CHECKPOINT_RESTORE"
				: err == -E2BIG ? "too many paths to follow"
						: strerror(-err),
				doing);
			return -EPERM;
		}
		if (nr >= 0) {
			say_action(what, sizeof what, nr, action, depends);
			hp_say_error("process %d: its seccomp filter %s, a call that %s needs; "
				     "refused, nothing was done to it",
				     (int)t->pid, what, doing);
			return -EPERM;
		}
	}
	return 0;
}

/* Finds a thread at a safe point and leaves it seized and stopped. */
static int borrow_thread(struct hp_inject_target *t, Dwfl *dwfl, unsigned timeout_ms, pid_t *out,
			 int *pending, struct user_regs_struct *regs)
{
	pid_t tids[1024];
	size_t n = 0;
	unsigned waited = 0;
	int any_seized = 0;

	for (;;) {
		int err = hp_inject_list_threads(t->pid, tids, sizeof tids / sizeof *tids, &n);
		if (err < 0)
			return hp_inject_say_ptrace_error(t->pid, ESRCH);
		if (hp_inject_same_image(t) != 1)
			return hp_inject_thread_gone(t, 0, "before heapprof's call");
		/* The thread of the last call first: what it left (dlerror's
		 * message) is per thread. */
		for (size_t i = 1; t->last_tid && i < n; i++)
			if (tids[i] == t->last_tid) {
				tids[i] = tids[0];
				tids[0] = t->last_tid;
			}
		for (size_t i = 0; i < n; i++) {
			if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0) {
				if (errno == ESRCH)
					continue; /* a thread that just ended */
				/* An exec from another thread makes that thread the
				 * leader, under the pid just refused: the image says. */
				if (errno == EPERM && hp_inject_same_image(t) != 1)
					return hp_inject_thread_gone(t, 0,
								     "before heapprof's call");
				if (errno == EPERM && !hp_inject_seize_refused(t->pid, tids[i]))
					return -EPERM;
				if (errno != EPERM && !any_seized)
					return hp_inject_say_ptrace_error(t->pid, errno);
				continue;
			}
			any_seized = 1;
			if (hp_inject_stop_thread(t, tids[i], pending) < 0) {
				ptrace(PTRACE_DETACH, tids[i], 0, 0);
				continue;
			}
			if (ptrace(PTRACE_GETREGS, tids[i], 0, regs) == 0 &&
			    hp_inject_safe_point(t, dwfl, tids[i], regs)) {
				*out = tids[i];
				return 0;
			}
			ptrace(PTRACE_DETACH, tids[i], 0, (void *)(uintptr_t)*pending);
		}
		if (waited >= timeout_ms) {
			hp_say_error(
				"process %d: no thread came to a safe point in %u ms (each was "
				"inside the allocator, the dynamic loader or the recorder, or "
				"short of stack)",
				(int)t->pid, timeout_ms);
			return -EBUSY;
		}
		hp_inject_sleep_ms(2);
		waited += 2;
	}
}

static int call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3], const void *data,
		size_t len, uint64_t *ret, unsigned timeout_ms);

int hp_inject_call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3],
		   const void *data, size_t len, uint64_t *ret, unsigned timeout_ms)
{
	sigset_t all, old;
	int err;

	/* Killed in the middle of the call, we would leave the thread to
	 * return to address 0: the signals that can wait, wait. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	err = call(t, fn, args, data, len, ret, timeout_ms);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* Writes data[0..len) at addr of the stopped tracee tid, a word at a time
 * through ptrace, which reaches only our tracee: a write racing an exec
 * fails (ESRCH) where process_vm_writev would reach whatever process then
 * holds the id, the new image. The last word is padded with zeros (the
 * bytes after data are the call's own frame). */
static int poke(pid_t tid, uint64_t addr, const void *data, size_t len)
{
	for (size_t at = 0; at < len; at += 8) {
		uint64_t w = 0;
		memcpy(&w, (const char *)data + at, len - at < 8 ? len - at : 8);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)(addr + at), (void *)w) < 0)
			return -errno;
	}
	return 0;
}

/* Whether the stopped tracee tid runs t's image: its AT_RANDOM bytes are
 * those hp_inject_open read. Read through ptrace: only our tracee. Returns
 * 1 or 0, or -errno when they cannot be read (-ESRCH: an exec by another
 * thread killed it, or the process ended). */
static int tracee_runs(const struct hp_inject_target *t, pid_t tid)
{
	for (int i = 0; i < 2; i++) {
		long w;
		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, (void *)(t->random_at + 8 * (uintptr_t)i), 0);
		if (errno)
			return -errno;
		if ((uint64_t)w != t->random[i])
			return 0;
	}
	return 1;
}

static int call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3], const void *data,
		size_t len, uint64_t *ret, unsigned timeout_ms)
{
	static uint8_t xstate[16384];
	struct user_regs_struct saved, r;
	struct iovec xs = {xstate, sizeof xstate};
	uint64_t zero = 0, base;
	pid_t tid = 0;
	int pending = 0, st, err = 0, have_xstate;
	Dwfl *dwfl = hp_inject_unwinder(t->pid);

	err = borrow_thread(t, dwfl, timeout_ms, &tid, &pending, &saved);
	if (dwfl)
		dwfl_end(dwfl);
	if (err < 0)
		return err;
	/* Stopped, the thread cannot exec, and an exec by another one kills
	 * it: from here on every ptrace request reaches this image or fails. */
	int runs = tracee_runs(t, tid);
	if (runs != 1) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)pending);
		/* Killed under us (-ESRCH), the image not yet replaced: an exec
		 * on its way, or the end; thread_gone watches which. */
		if (runs != -ESRCH && hp_inject_same_image(t) == 1) {
			hp_say_error("process %d: cannot read its stack through ptrace",
				     (int)t->pid);
			return -EIO;
		}
		return hp_inject_thread_gone(t, tid, "before heapprof's call");
	}
	have_xstate = ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &xs) == 0;
	/* The call's frame: below the red zone, the data, 16-aligned, then
	 * the return address 0, so that the callee sees rsp + 8 aligned. */
	base = (saved.rsp - SKIP_BELOW_SP - len) & ~(uint64_t)15;
	r = saved;
	r.rsp = base - 8;
	err = poke(tid, base, data, len);
	if (!err)
		err = poke(tid, r.rsp, &zero, 8);
	if (err) {
		if (err == -ESRCH)
			return hp_inject_thread_gone(t, tid, "before heapprof's call");
		hp_say_error("process %d: cannot write to its stack: %s", (int)t->pid,
			     strerror(-err));
		goto out;
	}
	{
		uint64_t a[3];
		for (int i = 0; i < 3; i++)
			a[i] = args[i] >= HP_INJECT_DATA ? base + (args[i] - HP_INJECT_DATA)
							 : args[i];
		r.rdi = a[0];
		r.rsi = a[1];
		r.rdx = a[2];
	}
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1; /* no system call restart over our call */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 || ptrace(PTRACE_CONT, tid, 0, 0) < 0) {
		err = -errno;
		if (err == -ESRCH)
			return hp_inject_thread_gone(t, tid, "before heapprof's call");
		hp_say_error("process %d: ptrace: %s", (int)t->pid, strerror(-err));
		goto out;
	}
	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
		int sig;

		if (w == 0) {
			/* Still in the call. An exec by another thread ends
			 * this one, and a thread that was the leader may be
			 * released without a word to us: look. */
			struct timespec ts = {0, 1000000};
			if (hp_inject_same_image(t) != 1)
				return hp_inject_thread_gone(t, tid, "during heapprof's call");
			nanosleep(&ts, NULL);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			return hp_inject_thread_gone(t, tid, "during heapprof's call");
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		if (st >> 16 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && r.rip == 0)
			break; /* our return */
		/* The program's own signal, during the call: its handler runs
		 * now, as it would have. */
		ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)sig);
	}
	*ret = r.rax;
	t->last_tid = tid;
out:
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	if (have_xstate)
		ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xs);
	ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)pending);
	return err;
}
