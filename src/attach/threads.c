/*
 * threads.c - the target's threads (inject.h): listed, seized, stopped
 * at a safe point (no lock of malloc's or the loader's held, unwound
 * through libdwfl), and what is said when one cannot be or goes away.
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

/* The stack a borrowed thread must have left below its stack pointer: the
 * loader and the recorder's start use a few pages. */
#define CALL_STACK_ROOM (64 * 1024)
/* How far up a thread's stack the safe-point check looks for return
 * addresses, where its call chain cannot be unwound. */
#define SCAN_BYTES (128 * 1024)
/* The most frames of a call chain looked at; a longer chain is taken as
 * not unwound (a loop of garbage frames). */
#define MAX_FRAMES 1024

static int is_unsafe(const struct hp_inject_target *t, uint64_t a)
{
	for (size_t i = 0; i < t->nunsafe; i++)
		if (a >= t->unsafe[i].lo && a < t->unsafe[i].hi)
			return 1;
	return 0;
}

struct stack_find {
	uintptr_t sp;
	struct hp_inject_map m;
	int found;
};

static int find_stack(const struct hp_inject_map *m, void *arg)
{
	struct stack_find *s = arg;

	if (s->sp >= m->lo && s->sp < m->hi) {
		s->m = *m;
		s->found = 1;
		return 1;
	}
	return 0;
}

/* Whether a word of the stack from sp up (up to its mapping's end hi, at
 * most SCAN_BYTES) lies in an unsafe range: the fallback for the part of a
 * call chain that cannot be unwound, where any word may be a return
 * address (a stale one only costs a retry). Returns 1 when one does, or
 * when the stack cannot be read. */
static int scan_words(const struct hp_inject_target *t, pid_t tid, uint64_t sp, uint64_t hi)
{
	static uint64_t words[SCAN_BYTES / 8];
	struct iovec local, remote;
	ssize_t got;
	size_t n;

	if (sp >= hi)
		return 0;
	n = hi - sp < SCAN_BYTES ? hi - sp : SCAN_BYTES;
	local = (struct iovec){words, n};
	remote = (struct iovec){(void *)(uintptr_t)sp, n};
	got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (got < 8)
		return 1;
	for (size_t i = 0; i < (size_t)got / 8; i++)
		if (is_unsafe(t, words[i]))
			return 1;
	return 0;
}

struct walk {
	const struct hp_inject_target *t;
	int unsafe; /* a frame's pc lies in an unsafe range */
	size_t frames;
	uint64_t sp; /* the stack pointer of the last frame unwound */
};

/* One frame of the call chain: its pc (for a caller, its return address
 * minus one: the call itself, even when it is a function's last
 * instruction) checked against the unsafe ranges. */
static int walk_frame(Dwfl_Frame *f, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool activation;

	if (!dwfl_frame_pc(f, &pc, &activation))
		return DWARF_CB_ABORT;
	if (is_unsafe(w->t, activation ? pc : pc - 1)) {
		w->unsafe = 1;
		return DWARF_CB_ABORT;
	}
	if (dwfl_frame_reg(f, 7 /* DWARF's rsp */, &sp) == 0 && sp > w->sp)
		w->sp = sp;
	return ++w->frames < MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether the stopped thread tid, with registers r, may be borrowed: room
 * on its stack, and no unsafe code at its pc or among the return
 * addresses of its call chain. The chain is unwound with each module's
 * CFI (its .eh_frame), and frame pointers where a module has none
 * (libdwfl); the stack's other words (a buffer never written, stale
 * return addresses of calls that ended) do not count. Where the chain
 * cannot be unwound to its end, every word above the last frame counts
 * as a return address. dwfl: attached to the process (NULL: no unwinder;
 * then every word above the stack pointer counts). */
int hp_inject_safe_point(const struct hp_inject_target *t, Dwfl *dwfl, pid_t tid,
			 const struct user_regs_struct *r)
{
	struct stack_find sf = {.sp = r->rsp};
	struct walk w = {.t = t, .sp = r->rsp};
	int rc;

	if (is_unsafe(t, r->rip))
		return 0;
	if (hp_inject_each_map(t->pid, find_stack, &sf) <= 0 || !sf.found)
		return 0;
	if (r->rsp - sf.m.lo < CALL_STACK_ROOM && strcmp(sf.m.path, "[stack]") != 0)
		return 0;
	if (!dwfl)
		return !scan_words(t, tid, r->rsp, sf.m.hi);
	rc = dwfl_getthread_frames(dwfl, tid, walk_frame, &w);
	if (w.unsafe)
		return 0;
	if (rc == 0)
		return 1; /* unwound to the chain's outermost frame */
	return !scan_words(t, tid, w.sp, sf.m.hi);
}

/* No separate debug information: the CFI a safe point needs is in each
 * module's .eh_frame, and looking further (debuginfod) would take long. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

/* An unwinder for pid's threads (each stopped by us before it unwinds
 * one), or NULL when libdwfl cannot read its modules. */
Dwfl *hp_inject_unwinder(pid_t pid)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = no_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	if (!dwfl)
		return NULL;
	if (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    dwfl_linux_proc_attach(dwfl, pid, true) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* Waits for a state change of the tracee tid (waitpid, __WALL) without
 * blocking on a thread that is gone: a thread killed by another thread's
 * exec, or an old leader released by it, may never be reported to us,
 * and its id may then be the new image's leader. Returns 0 with *st set,
 * -ESRCH when the thread or the image is gone, -errno on error. */
static int wait_tracee(const struct hp_inject_target *t, pid_t tid, int *st)
{
	for (;;) {
		struct timespec ts = {0, 1000000};
		char task[64];
		pid_t w = waitpid(tid, st, __WALL | WNOHANG);

		if (w == tid)
			return 0;
		if (w < 0 && errno != EINTR)
			return errno == ECHILD ? -ESRCH : -errno;
		snprintf(task, sizeof task, "/proc/%d/task/%d", (int)t->pid, (int)tid);
		if (access(task, F_OK) != 0 || hp_inject_same_image(t) != 1)
			return -ESRCH;
		nanosleep(&ts, NULL);
	}
}

/* Stops tid (already seized). Returns 0 with *pending set to a signal that
 * was on its way (to deliver when we let it go), -errno otherwise. */
int hp_inject_stop_thread(const struct hp_inject_target *t, pid_t tid, int *pending)
{
	int st, err;

	*pending = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		err = wait_tracee(t, tid, &st);
		if (err < 0)
			return err;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP)
			return 0;
		/* A signal-delivery stop: keep the signal for later; the
		 * interrupt's own stop follows, or this one will do. */
		*pending = WSTOPSIG(st);
		return 0;
	}
}

/* Whether thread tid of pid is on its way out (PF_EXITING in the flags of
 * /proc/PID/task/TID/stat, the ninth field): the kernel refuses to trace
 * such a thread with EPERM before it is a zombie, as it does every thread
 * an exec is killing. */
static int exiting(pid_t pid, pid_t tid)
{
	char path[96], buf[1024], *p;
	unsigned long flags = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 1; /* gone */
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* past the command, which may hold spaces */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & 0x4) != 0; /* PF_EXITING */
}

/* Why thread tid of pid could not be seized (EPERM) when others may be:
 * 1 when it is exiting (a zombie: a thread that ended, or the leader of an
 * image an exec is replacing), to be passed over; otherwise 0, after
 * saying why: a debugger traces it, or the kernel refuses (another user,
 * kernel.yama.ptrace_scope). */
int hp_inject_seize_refused(pid_t pid, pid_t tid)
{
	char path[96], line[256], state = 0;
	long tracer = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 1; /* gone */
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "State: %c", &state);
		sscanf(line, "TracerPid: %ld", &tracer);
	}
	fclose(f);
	if (state == 'Z' || state == 'X' || exiting(pid, tid))
		return 1;
	if (tracer > 0 && tracer != (long)getpid()) {
		char comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%ld/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		hp_say_error("process %d is being traced by process %ld (%s), a debugger: heapprof "
			     "attach cannot trace it at the same time",
			     (int)pid, tracer, comm);
		return 0;
	}
	hp_inject_say_ptrace_error(pid, EPERM);
	return 0;
}

int hp_inject_list_threads(pid_t pid, pid_t *tids, size_t max, size_t *n)
{
	char name[64];
	struct dirent *d;
	DIR *dir;

	snprintf(name, sizeof name, "/proc/%d/task", (int)pid);
	dir = opendir(name);
	if (!dir)
		return -errno;
	*n = 0;
	/* The main thread first: the likeliest to be idle in a system call. */
	tids[(*n)++] = pid;
	while ((d = readdir(dir)) && *n < max) {
		pid_t tid = (pid_t)atoi(d->d_name);
		if (tid > 0 && tid != pid)
			tids[(*n)++] = tid;
	}
	closedir(dir);
	return 0;
}

void hp_inject_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

int hp_inject_say_ptrace_error(pid_t pid, int err)
{
	if (err == EPERM) {
		FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
		int scope = -1;
		if (f) {
			if (fscanf(f, "%d", &scope) != 1)
				scope = -1;
			fclose(f);
		}
		if (scope > 0)
			hp_say_error(
				"process %d: ptrace is not permitted (kernel.yama.ptrace_scope "
				"= %d: run heapprof as root, or with CAP_SYS_PTRACE)",
				(int)pid, scope);
		else
			hp_say_error("process %d: ptrace is not permitted (another user's process, "
				     "or one already being traced)",
				     (int)pid);
	} else if (err == ESRCH) {
		hp_say_error("process %d is gone", (int)pid);
	} else {
		hp_say_error("process %d: ptrace: %s", (int)pid, strerror(err));
	}
	return -err;
}

/* The end of an attempt whose thread is gone: says why and returns
 * -ESTALE when the process runs another image (an exec, which killed the
 * thread: the new image is not touched), -ESRCH when the process is gone
 * or only the thread ended. An exec takes a moment to replace the image
 * after it kills the other threads: looked at for up to 200 ms. tid (0:
 * none) is let go, in case the exec made it the new image's thread. */
int hp_inject_thread_gone(const struct hp_inject_target *t, pid_t tid, const char *when)
{
	unsigned long flags;
	char comm[64], state = 0;
	int status = -1;

	if (tid > 0)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	for (int i = 0; i < 200; i++) {
		struct timespec ts = {0, 1000000};
		if (hp_inject_proc_stat(t->pid, comm, sizeof comm, &state, &flags) < 0)
			break;
		/* a zombie leader with a thread still running: an exec by that
		 * thread, which is about to take over the pid */
		if ((state == 'Z' || state == 'X') && !hp_inject_execing(t->pid))
			break;
		if (hp_inject_same_image(t) == 0) {
			hp_say_error("process %d replaced its program (exec) %s: the new program "
				     "is left untouched",
				     (int)t->pid, when);
			return -ESTALE;
		}
		nanosleep(&ts, NULL);
	}
	if (state == 'Z')
		status = hp_inject_exit_status(t->pid);
	if (state && state != 'Z' && state != 'X')
		hp_say_error("process %d: the thread heapprof borrowed ended %s; attach again",
			     (int)t->pid, when);
	else if (status >= 0 && WIFSIGNALED(status))
		hp_say_error("process %d was killed by signal %d (%s) %s", (int)t->pid,
			     WTERMSIG(status), strsignal(WTERMSIG(status)), when);
	else
		hp_say_error("process %d ended %s", (int)t->pid, when);
	return -ESRCH;
}
