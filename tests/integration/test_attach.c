/*
 * test_attach.c - heapprof attach and detach on a running program
 * (tests/programs/attachee.c): the capture holds exactly the calls the
 * program made through the recorder, per site; the program's output and
 * exit status are those of a bare run; after the detach its GOT is back
 * to libc; no deadlock with a thread inside realloc; no wait for a thread
 * whose stack holds stale allocator addresses; one clear line for each
 * process that cannot be attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/query.h"

struct prog {
	pid_t pid;
	int in;   /* its standard input */
	FILE *out; /* its standard output */
};

static int spawn(struct prog *p, const char *path, const char *arg)
{
	int in[2], out[2];
	char line[64];

	if (pipe(in) || pipe(out))
		return 0;
	p->pid = fork();
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = fdopen(out[0], "r");
	return p->out && fgets(line, sizeof line, p->out) && strcmp(line, "ready\n") == 0;
}

struct counts {
	unsigned long allocs, frees, calls;
};

/* Stops the program; its counts per site, whether its GOT still pointed
 * at the recorder, and its exit status. */
static int finish(struct prog *p, struct counts *kept, struct counts *temp, int *patched)
{
	char line[256];
	int st = -1, got = 0;

	if (write(p->in, "stop\n", 5) != 5)
		return -1;
	close(p->in);
	while (fgets(line, sizeof line, p->out)) {
		got += sscanf(line, "kept_site allocs %lu frees %lu calls %lu", &kept->allocs,
			      &kept->frees, &kept->calls) == 3;
		got += sscanf(line, "temp_site allocs %lu frees %lu calls %lu", &temp->allocs,
			      &temp->frees, &temp->calls) == 3;
		got += sscanf(line, "patched %d", patched) == 1;
	}
	fclose(p->out);
	waitpid(p->pid, &st, 0);
	return got == 3 ? st : -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void exact(const char *arg)
{
	char prog[4096], cap_path[4096];
	struct counts kept = {0}, temp = {0};
	struct hp_capture *cap;
	struct prog p;
	int patched = -1, st;

	snprintf(prog, sizeof prog, "%s/tests/programs/attachee", hp_test_build());
	snprintf(cap_path, sizeof cap_path, "%s/attach%s.hpf", hp_test_tmp(), arg ? arg : "");
	if (!expect_true(spawn(&p, prog, arg), "attachee starts"))
		return;
	sleep_ms(100);
	expect_eq_u64(hp_test_sh("timeout 60 %s/heapprof attach -q --sample-rate 1 --for 1 -o %s %d",
				 hp_test_build(), cap_path, (int)p.pid),
		      0, "heapprof attach --for 1 exits 0 (no deadlock)");
	sleep_ms(200); /* the program goes on, detached */
	st = finish(&p, &kept, &temp, &patched);
	expect_eq_u64((uint64_t)st, 0, "the program exits 0 and prints its counts");
	expect_eq_u64((uint64_t)patched, 0, "its GOT points at libc again after the detach");
	expect_true(kept.allocs > 100 && kept.calls > kept.allocs,
		    "it allocated before, during and after the attach");
	cap = hpq_load(cap_path);
	if (!expect_true(cap != NULL, "the capture loads"))
		return;
	{
		const struct hp_cap_snapshot *s = hp_capture_last(cap);
		struct hpq_sum k = hpq_match(cap, (const char *const[]){"kept_site", "work", NULL});
		struct hpq_sum t = hpq_match(cap, (const char *const[]){"temp_site", "work", NULL});

		expect_true(s && s->reason == HP_SNAP_DETACH, "its last snapshot is the detach's");
		expect_eq_u64(hp_test_sh("test $(stat -c %%a %s) = 600", cap_path), 0,
			      "the capture is 0600, as every capture");
		expect_eq_u64(k.alloc_count, kept.allocs, "kept_site: every recorded allocation");
		expect_eq_u64(k.alloc_bytes, kept.allocs * 64, "kept_site: bytes");
		expect_eq_u64(k.free_count, kept.frees, "kept_site: every recorded free");
		expect_eq_u64(t.alloc_count, temp.allocs, "temp_site: every recorded allocation");
		expect_eq_u64(t.free_count, temp.frees, "temp_site: every recorded free");
		expect_eq_u64(t.alloc_bytes - t.free_bytes, 0, "temp_site: nothing in use");
	}
	hpq_free(cap);
}

HP_TEST(attach_records_exactly_what_the_program_called) { exact(NULL); }
HP_TEST(attach_beside_a_thread_inside_realloc) { exact("--long"); }

/* Attached and detached 20 times (Ctrl-C ends each): every capture is
 * whole, and together they hold exactly the calls that reached the
 * recorder; the program is unharmed and detached at the end. */
HP_TEST(attach_detach_twenty_times)
{
	char prog[4096];
	struct counts kept = {0}, temp = {0};
	uint64_t kept_allocs = 0, temp_allocs = 0, temp_frees = 0;
	struct prog p;
	int patched = -1, whole = 0;

	snprintf(prog, sizeof prog, "%s/tests/programs/attachee", hp_test_build());
	if (!expect_true(spawn(&p, prog, NULL), "attachee starts"))
		return;
	for (int i = 0; i < 20; i++) {
		char cap_path[4096];
		struct hp_capture *cap;

		snprintf(cap_path, sizeof cap_path, "%s/cycle%d.hpf", hp_test_tmp(), i);
		if (hp_test_sh("timeout --preserve-status -s INT 0.3 %s/heapprof attach -q "
			       "--sample-rate 1 -o %s %d",
			       hp_test_build(), cap_path, (int)p.pid) != 0)
			break;
		cap = hpq_load(cap_path);
		if (!cap)
			break;
		{
			const struct hp_cap_snapshot *s = hp_capture_last(cap);
			struct hpq_sum k =
				hpq_match(cap, (const char *const[]){"kept_site", "work", NULL});
			struct hpq_sum t =
				hpq_match(cap, (const char *const[]){"temp_site", "work", NULL});
			whole += s && s->reason == HP_SNAP_DETACH;
			kept_allocs += k.alloc_count;
			temp_allocs += t.alloc_count;
			temp_frees += t.free_count;
		}
		hpq_free(cap);
	}
	expect_eq_u64((uint64_t)whole, 20, "20 attaches, each ended by its detach");
	expect_eq_u64((uint64_t)finish(&p, &kept, &temp, &patched), 0, "the program exits 0");
	expect_eq_u64((uint64_t)patched, 0, "its GOT is libc's at the end");
	expect_eq_u64(kept_allocs, kept.allocs, "kept_site: the captures hold every recorded call");
	expect_eq_u64(temp_allocs, temp.allocs, "temp_site: the captures hold every recorded call");
	expect_eq_u64(temp_frees, temp.frees, "temp_site: and every recorded free");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A program blocked in read() whose read buffer, never written, holds
 * libc malloc's address in every word (tests/programs/fifowait.c): its
 * call chain is read <- wait_on <- main, outside the allocator, and it is
 * attached at once (the safe point is decided from the chain, not from
 * every word of the stack: before, no thread was ever safe and the attach
 * gave up after 5 s). */
HP_TEST(attach_a_thread_with_stale_allocator_addresses_on_its_stack)
{
	char prog[4096], fifo[4096], line[128];
	double t0, took;
	long bytes = -1;
	int out[2], w, st = -1;
	FILE *f;
	pid_t pid;

	snprintf(prog, sizeof prog, "%s/tests/programs/fifowait", hp_test_build());
	snprintf(fifo, sizeof fifo, "%s/wait.fifo", hp_test_tmp());
	unlink(fifo);
	if (!expect_eq_u64((uint64_t)mkfifo(fifo, 0600), 0, "a FIFO") || pipe(out))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl(prog, prog, fifo, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	w = open(fifo, O_WRONLY); /* waits for the program to open it */
	f = fdopen(out[0], "r");
	if (!expect_true(w >= 0 && f && fgets(line, sizeof line, f) &&
			 strcmp(line, "ready\n") == 0,
			 "fifowait blocks in read"))
		return;
	sleep_ms(100);
	t0 = now_s();
	expect_eq_u64(hp_test_sh("timeout 30 %s/heapprof attach -q --for 1 -o %s/fifo.hpf %d",
				 hp_test_build(), hp_test_tmp(), (int)pid),
		      0, "heapprof attach --for 1 exits 0");
	took = now_s() - t0;
	expect_true(took < 2.0, "attached within a second (the attach and its --for 1 took < 2 s)");
	printf("     attach --for 1 took %.2f s\n", took);
	expect_eq_u64((uint64_t)write(w, "abcdef", 6), 6, "the program reads on");
	close(w);
	if (fgets(line, sizeof line, f))
		sscanf(line, "read %ld", &bytes);
	fclose(f);
	waitpid(pid, &st, 0);
	expect_eq_u64((uint64_t)bytes, 6, "it read what was written, after the detach");
	expect_eq_u64((uint64_t)st, 0, "and exits 0");
}

/* A program that replaces itself (execv) every 100 ms, 40 times, from its
 * main thread or from another thread (tests/programs/reexec.c), attached
 * over and over (each attach ended by Ctrl-C after 0.15 s): every attach
 * either records the image it attached to (its capture ends with the
 * exec's or the detach's snapshot) or gives up in one line saying the
 * program replaced itself; no attach hangs; the program is never harmed:
 * it runs all its images and prints "done". Before, calls made with the
 * old image's addresses into the new one killed it (SIGSEGV, 2 runs of 3),
 * and an attach waited for a thread the exec had released until the new
 * image exited. */
HP_TEST(attach_while_the_program_execs)
{
	char prog[4096], out[4096], errs[4096], line[512];
	int st = -1, attaches = 0, recorded = 0, gave_up = 0, other = 0, whole = 0, ended = 0;
	int ended_said = 0;
	pid_t pid;
	FILE *f;

	snprintf(prog, sizeof prog, "%s/tests/programs/reexec", hp_test_build());
	snprintf(out, sizeof out, "%s/reexec.out", hp_test_tmp());
	snprintf(errs, sizeof errs, "%s/reexec.err", hp_test_tmp());
	unlink(errs);
	pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		execl(prog, prog, "40", "100", (char *)NULL);
		_exit(127);
	}
	while (!ended && attaches < 100) {
		char cap[4096];
		int r;

		snprintf(cap, sizeof cap, "%s/reexec%d.hpf", hp_test_tmp(), attaches);
		r = hp_test_sh("timeout --preserve-status -k 5 -s INT 0.15 %s/heapprof attach -q "
			       "--sample-rate 1 -o "
			       "%s %d 2>>%s",
			       hp_test_build(), cap, (int)pid, errs);
		attaches++;
		if (r == 0) {
			struct hp_capture *c = hpq_load(cap);
			const struct hp_cap_snapshot *s = c ? hp_capture_last(c) : NULL;
			recorded++;
			whole += s && (s->reason == HP_SNAP_EXEC || s->reason == HP_SNAP_DETACH);
			hpq_free(c);
		} else if (r == 1 || r == 128 + SIGINT) {
			gave_up++; /* said why; or Ctrl-C came before it began */
		} else {
			printf("     heapprof attach ended with status %d\n", r);
			other++; /* 128 + SIGKILL: killed by timeout -k, a hang */
		}
		ended = waitpid(pid, &st, WNOHANG) == pid;
	}
	if (!ended && waitpid(pid, &st, 0) != pid)
		st = -1;
	f = fopen(errs, "r");
	while (f && fgets(line, sizeof line, f)) {
		if (strstr(line, "replaced its program (exec)"))
			continue;
		/* The last attach may meet the program's own end (its last
		 * image exits 0): said, and not a hang. Once, at the end. */
		if (ended && !ended_said && (strstr(line, "ended before heapprof's call") ||
					     strstr(line, "ended during heapprof's call") ||
					     strstr(line, "has exited (a zombie"))) {
			ended_said = 1;
			continue;
		}
		printf("     unexpected: %s", line);
		other++;
	}
	if (f)
		fclose(f);
	printf("     %d attaches: %d recorded, %d gave up\n", attaches, recorded, gave_up);
	expect_eq_u64((uint64_t)st, 0, "the program exits 0 (none of its images harmed)");
	expect_eq_u64(hp_test_sh("grep -qx done %s", out), 0, "its last image prints done");
	expect_eq_u64((uint64_t)other, 0,
		      "every attach records or gives up saying the program exec'd (none hangs)");
	expect_true(recorded > 0, "some attaches record");
	expect_eq_u64((uint64_t)whole, (uint64_t)recorded,
		      "each of their captures ends with the exec's or the detach's snapshot");
}

/* tests/programs/filtered MODE under a seccomp filter, attached with -o
 * capture (the program and heapprof as nobody when as_nobody: without
 * CAP_SYS_ADMIN): heapprof's status, its stderr in err, and whether the
 * program lived on (it answers a line, prints "bye" and exits 0 at the end
 * of its input). */
static int attach_filtered(const char *mode, int as_nobody, const char *capture, char *err,
			   size_t cap, int *unharmed)
{
	char prog[4096], errpath[4096], line[64];
	struct passwd *pw = getpwnam("nobody");
	int in[2], out[2], r, st = -1, bye = 0;
	pid_t pid;
	FILE *f, *o;
	size_t n;

	*unharmed = 0;
	err[0] = '\0';
	snprintf(prog, sizeof prog, "%s/tests/programs/filtered", hp_test_build());
	snprintf(errpath, sizeof errpath, "%s/filtered.err", hp_test_tmp());
	if (!pw || pipe(in) || pipe(out))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (as_nobody && (setgroups(0, NULL) || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
				  setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)))
			_exit(126);
		execl(prog, prog, mode, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	o = fdopen(out[0], "r");
	if (!o || !fgets(line, sizeof line, o) || strcmp(line, "ready\n") != 0)
		return -1;
	r = hp_test_sh("%s%s/heapprof attach -q --for 1 -o %s %d 2>%s",
		       as_nobody ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "",
		       hp_test_build(), capture, (int)pid, errpath);
	if (write(in[1], "x\n", 2) == 2)
		sleep_ms(50);
	close(in[1]);
	while (fgets(line, sizeof line, o))
		bye |= strcmp(line, "bye\n") == 0;
	fclose(o);
	waitpid(pid, &st, 0);
	*unharmed = bye && st == 0;
	f = fopen(errpath, "r");
	n = f ? fread(err, 1, cap - 1, f) : 0;
	err[n] = '\0';
	if (f)
		fclose(f);
	return r;
}

/* A program whose seccomp filter kills, or denies, a call the attach
 * needs (openat, to load the recorder) is refused in one line that names
 * seccomp, the call and what the filter does, and lives on; one whose
 * filter touches only calls the attach never makes is attached. Before,
 * the first was killed by SIGSYS and the second told "a different
 * architecture, or too little static TLS". */
HP_TEST(attach_and_seccomp_filters)
{
	char err[4096], cap[4096];
	int unharmed;

	snprintf(cap, sizeof cap, "%s/filtered.hpf", hp_test_tmp());
	expect_eq_u64((uint64_t)attach_filtered("kill", 0, cap, err, sizeof err, &unharmed), 1,
		      "a filter killing openat: attach refuses, status 1");
	expect_true(unharmed, "and the program lives on");
	expect_true(strstr(err, "seccomp filter kills it on openat (SECCOMP_RET_KILL_PROCESS)") &&
			    strchr(err, '\n') == err + strlen(err) - 1,
		    "one line: its seccomp filter kills it on openat");
	printf("     %s", err);
	expect_eq_u64((uint64_t)attach_filtered("eperm", 0, cap, err, sizeof err, &unharmed), 1,
		      "a filter denying openat: attach refuses, status 1");
	expect_true(unharmed, "and the program lives on");
	expect_true(strstr(err, "seccomp filter denies openat (SECCOMP_RET_ERRNO: Operation not "
				"permitted)") != NULL,
		    "it names seccomp, openat and EPERM");
	printf("     %s", err);
	expect_eq_u64((uint64_t)attach_filtered("args", 0, cap, err, sizeof err, &unharmed), 1,
		      "a filter killing openat with O_CREAT: attach refuses");
	expect_true(unharmed && strstr(err, "kills it on openat (SECCOMP_RET_KILL_PROCESS, for some "
					    "arguments)") != NULL,
		    "it says: for some arguments");
	expect_eq_u64((uint64_t)attach_filtered("unrelated", 0, cap, err, sizeof err,
						&unharmed),
		      0, "a filter on ptrace, mount and reboot only: attached");
	expect_true(unharmed, "the program lives on");
	{
		struct hp_capture *c = hpq_load(cap);
		const struct hp_cap_snapshot *s = c ? hp_capture_last(c) : NULL;
		expect_true(s && s->reason == HP_SNAP_DETACH, "its capture ends with the detach");
		hpq_free(c);
	}
	/* Without CAP_SYS_ADMIN the filter cannot be read: refused too. */
	snprintf(cap, sizeof cap, "/tmp/hp-filtered-%d.hpf", (int)getpid());
	expect_eq_u64((uint64_t)attach_filtered("kill", 1, cap, err, sizeof err, &unharmed), 1,
		      "as nobody, a filter it cannot read: attach refuses, status 1");
	expect_true(unharmed, "and the program lives on");
	expect_true(strstr(err, "seccomp filter") && strstr(err, "CAP_SYS_ADMIN") &&
			    strchr(err, '\n') == err + strlen(err) - 1,
		    "one line: a seccomp filter it can read only with CAP_SYS_ADMIN");
	printf("     %s", err);
	unlink(cap);
}

/* Whether heapprof's stderr in path is one line that holds each of the
 * strings of want (NULL-ended). */
static int one_line_with(const char *path, const char *const *want)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	int ok;

	if (f)
		fclose(f);
	buf[n] = '\0';
	ok = n > 0 && strchr(buf, '\n') == buf + n - 1;
	for (size_t i = 0; want[i]; i++)
		ok &= strstr(buf, want[i]) != NULL;
	printf("     %s", buf);
	return ok;
}

/* A kernel thread's pid: 2 (kthreadd) where it is one, else the first
 * /proc shows with PF_KTHREAD; 0 when none is visible. */
static int kernel_thread(void)
{
	for (int pid = 2; pid < 4096; pid++) {
		char path[64];
		unsigned long flags = 0;
		FILE *f;
		int ok;
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		ok = fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %lu", &flags) == 1;
		fclose(f);
		if (ok && (flags & 0x00200000ul))
			return pid;
	}
	return 0;
}

/* Each refusal names its real cause, in one line, and leaves the program
 * as it was: a kernel thread (was "statically linked"), a zombie (was
 * "statically linked"), a program out of file descriptors (was "a
 * different architecture, or too little static TLS"), -o in a directory
 * the program's user cannot enter (was "Input/output error"), a library
 * its dlopen refuses (dlerror's own words). */
HP_TEST(attach_names_the_real_cause)
{
	char err[4096], prog[4096], line[64];
	int kt = kernel_thread();

	snprintf(err, sizeof err, "%s/cause.err", hp_test_tmp());
	if (expect_true(kt > 0, "a kernel thread is visible in /proc (not in a PID namespace)")) {
		expect_eq_u64(hp_test_sh("%s/heapprof attach -o %s/k.hpf %d 2>%s", hp_test_build(),
					 hp_test_tmp(), kt, err),
			      1, "a kernel thread: status 1");
		expect_true(one_line_with(err, (const char *const[]){"is a kernel thread", NULL}),
			    "one line: a kernel thread");
	}
	expect_eq_u64(hp_test_sh("sh -c 'sleep 0.1 & exec sleep 3' & sleep 0.6; "
				 "z=$(pgrep -P $! sleep); %s/heapprof attach -o %s/z.hpf $z 2>%s; "
				 "r=$?; kill $!; exit $r",
				 hp_test_build(), hp_test_tmp(), err),
		      1, "a zombie: status 1");
	expect_true(one_line_with(err, (const char *const[]){"has exited (a zombie", NULL}),
		    "one line: it has exited, a zombie");

	/* Out of file descriptors (RLIMIT_NOFILE 32, every one used). */
	snprintf(prog, sizeof prog, "%s/tests/programs/fdhog", hp_test_build());
	{
		int in[2], out[2], st = -1, bye = 0;
		FILE *o;
		pid_t pid;
		if (pipe(in) || pipe(out))
			return;
		pid = fork();
		if (pid == 0) {
			struct rlimit rl = {32, 32};
			dup2(in[0], 0);
			dup2(out[1], 1);
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
			setrlimit(RLIMIT_NOFILE, &rl);
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		o = fdopen(out[0], "r");
		if (expect_true(o && fgets(line, sizeof line, o) && strncmp(line, "ready", 5) == 0,
				"fdhog uses up its descriptors")) {
			expect_eq_u64(hp_test_sh("%s/heapprof attach --for 1 -o %s/fd.hpf %d 2>%s",
						 hp_test_build(), hp_test_tmp(), (int)pid, err),
				      1, "out of file descriptors: status 1");
			expect_true(one_line_with(err, (const char *const[]){"out of file descriptors",
									   "RLIMIT_NOFILE 32", NULL}),
				    "one line: out of file descriptors, its RLIMIT_NOFILE");
		}
		if (write(in[1], "x\n", 2) != 2)
			bye = -1;
		close(in[1]);
		while (o && fgets(line, sizeof line, o))
			bye |= strcmp(line, "bye\n") == 0;
		if (o)
			fclose(o);
		waitpid(pid, &st, 0);
		expect_true(bye == 1 && st == 0, "and it lives on, exits 0");
	}

	/* -o in a directory closed to the program's user (nobody). */
	expect_eq_u64(hp_test_sh("mkdir -p %s/closed && chmod 700 %s/closed && "
				 "setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 5 & "
				 "sleep 0.3; %s/heapprof attach --for 1 -o %s/closed/x.hpf $! 2>%s; "
				 "r=$?; kill $!; test ! -e %s/closed/x.hpf && exit $r",
				 hp_test_tmp(), hp_test_tmp(), hp_test_build(), hp_test_tmp(), err,
				 hp_test_tmp()),
		      1, "-o where the program's user cannot write: status 1, no file left");
	expect_true(one_line_with(err, (const char *const[]){"runs as nobody", "cannot write",
							   "Permission denied", NULL}),
		    "one line: the user, the path, Permission denied");

	/* A library the process's dlopen refuses: its own words. */
	expect_eq_u64(hp_test_sh("mkdir -p %s/junk && head -c 4096 /dev/zero > "
				 "%s/junk/libheapprof.so && sleep 5 & sleep 0.3; "
				 "HEAPPROF_LIB=%s/junk/libheapprof.so %s/heapprof attach --for 1 -o "
				 "%s/j.hpf $! 2>%s; r=$?; kill -0 $! && kill $! && exit $r",
				 hp_test_tmp(), hp_test_tmp(), hp_test_tmp(), hp_test_build(),
				 hp_test_tmp(), err),
		      1, "a library its dlopen refuses: status 1, the program alive");
	expect_true(one_line_with(err, (const char *const[]){"its dlopen says:",
							   "invalid ELF header", NULL}),
		    "one line: what its dlopen said");
}

/* One line each for what cannot be attached. */
HP_TEST(attach_refuses_what_it_cannot_do)
{
	char out[8192];
	char prog[4096];
	struct counts kept, temp;
	struct prog p;
	int patched;

	expect_eq_u64(hp_test_sh("%s/heapprof attach -o %s/none.hpf 99999999999 2>%s/err.txt",
				 hp_test_build(), hp_test_tmp(), hp_test_tmp()),
		      2, "a pid out of range is a usage error");
	expect_eq_u64(hp_test_sh("%s/heapprof attach -o %s/none.hpf 4000000 2>%s/err.txt; "
				 "test $? = 1 && grep -q 'no process 4000000' %s/err.txt && "
				 "test $(wc -l < %s/err.txt) = 1",
				 hp_test_build(), hp_test_tmp(), hp_test_tmp(), hp_test_tmp(),
				 hp_test_tmp()),
		      0, "no such process: one line, status 1");
	/* A static program. */
	snprintf(out, sizeof out, "%s/static_sleeper", hp_test_tmp());
	if (expect_eq_u64(hp_test_sh("printf '#include <unistd.h>\\nint main(void){sleep(30);"
				     "return 0;}\\n' | cc -static -x c -o %s -",
				     out),
			  0, "a static program builds (libc6-dev's libc.a)")) {
		expect_eq_u64(hp_test_sh("%s & pid=$!; sleep 0.2; %s/heapprof attach -o %s/st.hpf "
					 "$pid 2>%s/err.txt; r=$?; kill $pid; test $r = 1 && "
					 "grep -q 'statically linked' %s/err.txt",
					 out, hp_test_build(), hp_test_tmp(), hp_test_tmp(),
					 hp_test_tmp()),
			      0, "a static program: says so, status 1");
	}
	/* Another user's process, as that user's heapprof would see it. */
	expect_eq_u64(hp_test_sh("sleep 5 & pid=$!; setpriv --reuid=nobody --regid=nogroup "
				 "--clear-groups %s/heapprof attach -o /tmp/hp-nobody-$$.hpf $pid "
				 "2>%s/err.txt; r=$?; kill $pid; test $r = 1 && "
				 "grep -q 'is another user.s' %s/err.txt && test $(wc -l < %s/err.txt) = 1",
				 hp_test_build(), hp_test_tmp(), hp_test_tmp(), hp_test_tmp()),
		      0, "another user's process: one line, status 1");
	/* A process that exits while attached: its capture ends with its
	 * exit snapshot; attach says so and exits 0. */
	expect_eq_u64(hp_test_sh("sh -c 'sleep 1; exec ls / > /dev/null' & pid=$!; sleep 0.3; "
				 "%s/heapprof attach --for 10 -o %s/gone.hpf $pid 2>%s/err.txt; "
				 "r=$?; wait; test $r = 0 && grep -qE 'exited|replaced its program \\(exec\\)' "
				 "%s/err.txt",
				 hp_test_build(), hp_test_tmp(), hp_test_tmp(), hp_test_tmp()),
		      0, "a process that exits while attached: attach ends, status 0");
	{
		char gone[4200];
		struct hp_capture *cap;
		snprintf(gone, sizeof gone, "%s/gone.hpf", hp_test_tmp());
		cap = hpq_load(gone);
		if (expect_true(cap != NULL, "its capture loads")) {
			const struct hp_cap_snapshot *s = hp_capture_last(cap);
			expect_true(s && (s->reason == HP_SNAP_EXEC || s->reason == HP_SNAP_EXIT),
				    "it ends with the exec's (or the exit's) snapshot");
			hpq_free(cap);
		}
	}
	/* Twice at once, and a program preloaded by heapprof run. */
	snprintf(prog, sizeof prog, "%s/tests/programs/attachee", hp_test_build());
	if (expect_true(spawn(&p, prog, NULL), "attachee starts")) {
		expect_eq_u64(hp_test_sh("%s/heapprof attach -q --for 3 -o %s/one.hpf %d & sleep 1; "
					 "%s/heapprof attach -o %s/two.hpf %d 2>%s/err.txt; r=$?; "
					 "wait; test $r = 1 && grep -q 'being recorded already' "
					 "%s/err.txt",
					 hp_test_build(), hp_test_tmp(), (int)p.pid, hp_test_build(),
					 hp_test_tmp(), (int)p.pid, hp_test_tmp(), hp_test_tmp()),
			      0, "a second attach while the first records: says so, status 1");
		expect_eq_u64((uint64_t)finish(&p, &kept, &temp, &patched), 0,
			      "the program is unharmed");
	}
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s/run.hpf -- sleep 3 & sleep 1; "
				 "pid=$(cat /proc/$!/task/$!/children); %s/heapprof attach -o %s/three.hpf "
				 "$pid 2>%s/err.txt; r=$?; wait; test $r = 1 && "
				 "grep -q 'runs under heapprof already' %s/err.txt && "
				 "test $(wc -l < %s/err.txt) = 1",
				 hp_test_build(), hp_test_tmp(), hp_test_build(), hp_test_tmp(),
				 hp_test_tmp(), hp_test_tmp(), hp_test_tmp()),
		      0, "a program run under heapprof run: it runs under heapprof already");
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s/run2.hpf -- sleep 3 & sleep 1; "
				 "pid=$(cat /proc/$!/task/$!/children); %s/heapprof detach $pid "
				 "2>%s/err.txt; r=$?; wait; test $r = 1 && "
				 "grep -q 'runs under heapprof already' %s/err.txt",
				 hp_test_build(), hp_test_tmp(), hp_test_build(), hp_test_tmp(),
				 hp_test_tmp()),
		      0, "detach of a program run under heapprof run: the same line, not a loop");
}

int main(int argc, char **argv)
{
	/* A program the attach killed must fail its test, not end this one
	 * at what is written to it. */
	signal(SIGPIPE, SIG_IGN);
	return hp_test_main(argc, argv);
}
