/*
 * attach.c - `heapprof attach PID` and `heapprof detach PID`: record a
 * running program from now on, and stop, without restarting it.
 *
 * attach loads the recorder into the process (inject.h: a dlopen called
 * on one of its threads at a safe point) and calls its heapprof_attach
 * with the options, as the HEAPPROF_* variables heapprof run would set;
 * the recorder then routes the program's allocation calls to itself by
 * rewriting the modules' GOT entries (src/recorder/attach.c). detach calls
 * heapprof_detach: the final snapshot, the entries put back. The library
 * stays loaded (unused), so that the next attach finds it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../analyzer/embed.h"
#include "../live/http.h"
#include "../live/serve.h"
#include "cli.h"
#include "../attach/inject.h"

#define RECORDER_NAME "libheapprof.so"
/* Sampled by default: attach is for programs in production. */
#define ATTACH_DEFAULT_RATE "524288"
/* How long to look for a thread at a safe point. */
#define SAFE_POINT_TIMEOUT_MS 5000

static const char attach_usage[] =
	"usage: heapprof attach [options] PID\n"
	"\n"
	"Records the running process PID from now on, without restarting it: loads\n"
	"the recorder into it and routes its allocation calls there, until Ctrl-C,\n"
	"--for SECONDS, `heapprof detach PID`, or the process's exit or exec; then\n"
	"writes the capture's last snapshot and puts the calls back as they were.\n"
	"Allocations made before the attach are not in the capture, and their frees\n"
	"are ignored: \"in use\" is what was allocated since the attach and is still\n"
	"live. Needs ptrace permission on PID (same user and kernel.yama.ptrace_scope\n"
	"0, or root) and a dynamically linked program with glibc 2.34 or later; the\n"
	"program's allocator may be glibc's, jemalloc, tcmalloc or mimalloc. Refused,\n"
	"in one line and with nothing done to the program: a seccomp filter that would\n"
	"kill it or deny a call the recorder needs (or that only root can read), a\n"
	"process out of file descriptors, an -o its user cannot write.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE        the capture (default heapprof.PID.attach.hpf)\n"
	"      --for SECONDS        detach after SECONDS\n"
	"      --sample-rate BYTES  one sample per BYTES allocated (default 524288;\n"
	"                           1 records every allocation)\n"
	"      --unwind dwarf|fp    how to unwind (default dwarf)\n"
	"      --max-depth N        frames per stack (default 128)\n"
	"      --max-stacks N       distinct stacks recorded (default 2097151)\n"
	"      --mmap               also record anonymous mmap/munmap/mremap and brk/sbrk\n"
	"      --no-symbols         do not embed symbols in the capture at the end\n"
	"      --http ADDR          serve its live heap over HTTP while attached, as\n"
	"                           heapprof run --http does (HOST:PORT, PORT or :PORT)\n"
	"      --http-public        serve every client, not only the capture's owner\n"
	"  -q, --quiet              no messages but errors\n"
	"  -h, --help               this help\n";

static const char detach_usage[] =
	"usage: heapprof detach PID\n"
	"\n"
	"Stops the recording that `heapprof attach` started in PID: writes the\n"
	"capture's last snapshot and puts the program's allocation calls back.\n";

static int parse_pid(const char *cmd, const char *s, pid_t *pid)
{
	long v;

	if (hp_cli_number(cmd, "PID", s, 1, INT_MAX, &v) < 0)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

static double elapsed_s(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) + (double)(now.tv_nsec - since->tv_nsec) / 1e9;
}

/* The real user and group ids of pid. */
static int process_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		unsigned long v;
		if (sscanf(line, "Uid: %lu", &v) == 1) {
			*uid = (uid_t)v;
			found |= 1;
		} else if (sscanf(line, "Gid: %lu", &v) == 1) {
			*gid = (gid_t)v;
			found |= 2;
		}
	}
	fclose(f);
	return found == 3 ? 0 : -EINVAL;
}

/* The file descriptors the recorder needs free in the process: one for
 * each library dlopen opens (one at a time), its capture, and one for the
 * files it reads at its start (/proc/self/maps). */
#define FDS_NEEDED 4

/* How many descriptors pid has open, and its RLIMIT_NOFILE soft limit
 * (-1: unlimited). Returns 0 or -errno. */
static int fds_in_use(pid_t pid, long *open_n, long *limit)
{
	char path[64], line[256], soft[32];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	*limit = -1;
	snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Max open files %31s", soft) == 1)
			*limit = strcmp(soft, "unlimited") == 0 ? -1 : atol(soft);
	fclose(f);
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	*open_n = 0;
	while ((d = readdir(dir)))
		*open_n += d->d_name[0] != '.';
	closedir(dir);
	return 0;
}

/* What file access in pid uses: its filesystem user and group ids and its
 * supplementary groups (/proc/PID/status). */
struct creds {
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	size_t ngroups;
};

static int process_creds(pid_t pid, struct creds *c)
{
	char path[64], line[4096];
	unsigned long u[4];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	c->ngroups = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			c->uid = (uid_t)u[3];
			found |= 1;
		} else if (sscanf(line, "Gid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			c->gid = (gid_t)u[3];
			found |= 2;
		} else if (strncmp(line, "Groups:", 7) == 0) {
			char *p = line + 7, *end;
			for (;;) {
				unsigned long g = strtoul(p, &end, 10);
				if (end == p || c->ngroups == sizeof c->groups / sizeof *c->groups)
					break;
				c->groups[c->ngroups++] = (gid_t)g;
				p = end;
			}
		}
	}
	fclose(f);
	return found == 3 ? 0 : -EINVAL;
}

/* Whether pid, as its own user and groups and from its own root (mount
 * namespace, chroot), can open path for writing, as its recorder will:
 * 0, or the errno its open gets. Tried in a child that takes on pid's
 * credentials when heapprof is root. Can it not be told, 0. */
static int process_can_write(pid_t pid, const char *path, const struct creds *c)
{
	char root[64];
	int dirfd, st;
	pid_t child;

	snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return 0;
	child = fork();
	if (child == 0) {
		int fd;
		if (geteuid() == 0 &&
		    (setgroups(c->ngroups, c->groups) != 0 ||
		     setresgid(c->gid, c->gid, c->gid) != 0 || setresuid(c->uid, c->uid, c->uid) != 0))
			_exit(255);
		fd = openat(dirfd, path[0] == '/' ? path + 1 : path,
			    O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		_exit(fd < 0 ? errno & 0xff : 0);
	}
	close(dirfd);
	if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 255)
		return 0;
	return WEXITSTATUS(st);
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int alive(pid_t pid)
{
	char path[64];
	FILE *f;
	char state = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* A zombie has exited: its capture is complete. */
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state && state != 'Z' && state != 'X';
}

static const char preloaded_line[] =
	"process %d runs under heapprof already (heapprof run, or LD_PRELOAD): it "
	"records from its start until it exits, into its own capture (its dump signal "
	"adds a snapshot; heapprof serve --pid %d serves it live)";

/* Whether pid was started with the recorder preloaded (heapprof run, or
 * LD_PRELOAD): its environment as it started names libheapprof in
 * LD_PRELOAD. Asked before calling into the process: a preloaded
 * recorder's stale return address on a thread's stack (from its start)
 * can keep that thread from ever coming to a safe point, and the answer
 * would then be a timeout instead of this. */
static int preloaded(pid_t pid)
{
	static char env[1 << 20]; /* the environment can be large; not on the stack */
	ssize_t len = hp_cli_read_environ(pid, env, sizeof env);
	const char *pre = len > 0 ? hp_cli_env_get(env, (size_t)len, "LD_PRELOAD") : NULL;

	return pre && strstr(pre, "libheapprof") != NULL;
}

/* The recorder's function name in pid, loading the recorder first when
 * load is set. Returns its address, or 0 after saying why. */
static uintptr_t recorder_function(struct hp_inject_target *t, const char *lib, int load,
				   const char *name)
{
	int found = hp_inject_find_recorder(t, RECORDER_NAME);
	uintptr_t fn;

	if (found < 0) {
		hp_say_error("process %d: cannot read its memory map: %s", (int)t->pid,
			     strerror(-found));
		return 0;
	}
	if (found && preloaded(t->pid)) {
		hp_say_error(preloaded_line, (int)t->pid, (int)t->pid);
		return 0;
	}
	if (!found && !load) {
		hp_say_error("process %d is not being recorded (no heapprof attach in it)",
			     (int)t->pid);
		return 0;
	}
	if (!found) {
		uint64_t args[3] = {HP_INJECT_DATA, RTLD_NOW | RTLD_LOCAL, 0}, handle = 0;
		if (hp_inject_call(t, t->dlopen, args, lib, strlen(lib) + 1, &handle,
				   SAFE_POINT_TIMEOUT_MS) < 0)
			return 0;
		if (!handle) {
			/* Its dlerror() says why, on the thread that called dlopen. */
			uint64_t none[3] = {0, 0, 0}, msg = 0;
			char why[512] = "";
			if (t->dlerror &&
			    hp_inject_call(t, t->dlerror, none, NULL, 0, &msg,
					   SAFE_POINT_TIMEOUT_MS) == 0 &&
			    msg)
				hp_inject_read_string(t, msg, why, sizeof why);
			if (why[0])
				hp_say_error("process %d could not load %s: its dlopen says: %s",
					     (int)t->pid, lib, why);
			else
				hp_say_error("process %d could not load %s (its dlopen failed and "
					     "said nothing more)",
					     (int)t->pid, lib);
			return 0;
		}
		found = hp_inject_find_recorder(t, RECORDER_NAME);
		int same = found <= 0 ? hp_inject_same_image(t) : 1;
		if (same == 0) {
			hp_say_error("process %d replaced its program (exec) after heapprof loaded %s: "
				     "the new program is left untouched",
				     (int)t->pid, lib);
			return 0;
		}
		if (same == -ESRCH) { /* no image to read: in the middle of an exec, or gone */
			hp_say_error("process %d replaced its program (exec), or ended, after "
				     "heapprof loaded %s: the new program is left untouched",
				     (int)t->pid, lib);
			return 0;
		}
		if (found <= 0) {
			hp_say_error("process %d: %s loaded but not in its map", (int)t->pid, lib);
			return 0;
		}
	}
	fn = hp_inject_symbol(t->recorder_path, t->recorder_bias, name);
	if (!fn)
		hp_say_error("process %d: its %s has no %s (a heapprof older than this one: "
			     "restart the program to attach)",
			     (int)t->pid, t->recorder_path, name);
	return fn;
}

/* Calls the recorder's heapprof_detach in pid. Returns 0 or -errno after
 * saying why (-ENODEV, not attached, silently when quiet_unattached;
 * -ESTALE, silently, when attached (not NULL) is the image attached to and
 * pid runs another one: it exec'd, which ended the recording). */
static int detach(pid_t pid, const char *lib, int quiet_unattached,
		  const struct hp_inject_target *attached)
{
	struct hp_inject_target t;
	uint64_t args[3] = {0, 0, 0}, ret = 0;
	uintptr_t fn;
	int err = hp_inject_open(&t, pid);

	if (err < 0)
		return err;
	if (attached && (t.random_at != attached->random_at ||
			 t.random[0] != attached->random[0] || t.random[1] != attached->random[1]))
		return -ESTALE;
	/* A filter installed since the attach: the recorder stays, the
	 * program is not killed by the detach's calls. */
	if (hp_inject_check_seccomp(&t, "detaching") < 0)
		return -EPERM;
	fn = recorder_function(&t, lib, 0, "heapprof_detach");
	if (!fn)
		return -ENOENT;
	err = hp_inject_call(&t, fn, args, NULL, 0, &ret, SAFE_POINT_TIMEOUT_MS);
	if (err < 0)
		return err;
	if ((int)ret == -ENODEV) {
		if (!quiet_unattached)
			hp_say_error("process %d is not being recorded by heapprof attach (it was "
				     "detached already)",
				     (int)pid);
		return -ENODEV;
	}
	if ((int)ret == -EEXIST) {
		hp_say_error(preloaded_line, (int)pid, (int)pid);
		return -EEXIST;
	}
	if ((int)ret < 0) {
		hp_say_error("process %d: detaching failed: %s", (int)pid, strerror(-(int)ret));
		return (int)ret;
	}
	return 0;
}

/* The options as the recorder reads them: NAME=VALUE strings one after
 * the other, each ended by a NUL, the block by an empty one. */
static size_t add_var(char *block, size_t at, size_t cap, const char *name, const char *value)
{
	int n = snprintf(block + at, cap - at, "%s=%s", name, value);

	if (n < 0 || (size_t)n + 2 > cap - at)
		return at;
	return at + (size_t)n + 1;
}

/* attach --http ADDR: the live endpoints of the attached process, served
 * from here until the detach (src/live/serve.h), snapshots asked by
 * calling the recorder's heapprof_dump in it. NULL (after saying why)
 * when they cannot be served: the recording goes on without them. */
static struct hp_server *serve_attached(pid_t pid, const char *capture, const char *addr,
					int public, int quiet)
{
	struct hp_live_asker asker;
	struct hp_server *srv = NULL;
	char url[128];
	unsigned port;
	int lfd;

	if (hp_cli_attached_asker(pid, &asker) != 1)
		return NULL;
	if (hp_http_listen(addr, public, &lfd, &port))
		return NULL;
	hp_http_url(lfd, url, sizeof url);
	if (hp_server_start(&srv, lfd, capture, pid, 0, public, &asker)) {
		hp_say_error("attach: cannot serve %s: %s", addr, strerror(errno));
		return NULL;
	}
	if (!quiet)
		fprintf(stderr, "heapprof: serving %s/debug/pprof/ (port %u) for process %d, %s\n",
			url, port, (int)pid,
			public ? "to every client" : "to its capture's owner and root");
	return srv;
}

int hp_cmd_attach(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_OUTPUT, 0, 0, NULL},      {HP_OPT_FOR, 1, 365L * 24 * 3600, NULL},
		{HP_OPT_SAMPLE_RATE, 0, 0, NULL}, {HP_OPT_UNWIND, 0, 0, NULL},
		{HP_OPT_MAX_DEPTH, 0, 0, NULL},   {HP_OPT_MAX_STACKS, 0, 0, NULL},
		{HP_OPT_NO_SYMBOLS, 0, 0, NULL},
		{HP_OPT_QUIET, 0, 0, NULL},       {HP_OPT_HELP, 0, 0, NULL},
		{HP_OPT_MMAP, 0, 0, NULL},        {HP_OPT_HTTP, 0, 0, NULL},
		{HP_OPT_HTTP_PUBLIC, 0, 0, NULL},
	};
	struct hp_server *srv = NULL;
	char lib[PATH_MAX], out[PATH_MAX], name[PATH_MAX], block[PATH_MAX + 1024], num[32];
	struct hp_inject_target t;
	struct hp_cli_args a;
	struct sigaction sa = {0}, old_int, old_term;
	uint64_t args[3] = {HP_INJECT_DATA, 0, 0}, ret = 0;
	size_t len = 0;
	uintptr_t fn;
	pid_t pid;
	int err, fd, quiet, exec;
	struct timespec start;

	if (hp_cli_parse("attach", attach_usage, uses, sizeof uses / sizeof *uses, 0, argc, argv,
			 &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.noperands != 1) {
		hp_say_error("attach: give exactly one process id");
		return HP_EXIT_USAGE;
	}
	if (parse_pid("attach", argv[a.operand], &pid) < 0)
		return HP_EXIT_USAGE;
	quiet = a.given[HP_OPT_QUIET];
	if (hp_cli_find_recorder(lib, sizeof lib) < 0) {
		hp_say_error("attach: cannot find %s (set HEAPPROF_LIB to its path)", lib);
		return HP_EXIT_FAILURE;
	}
	if (hp_inject_open(&t, pid) < 0)
		return HP_EXIT_FAILURE;
	/* Before anything is created or loaded: a filter that kills or
	 * denies a call the recorder needs refuses the attach, and so does
	 * a process out of file descriptors. */
	if (hp_inject_check_seccomp(&t, "loading the recorder") < 0)
		return HP_EXIT_FAILURE;
	{
		long used = 0, limit = -1;
		if (fds_in_use(pid, &used, &limit) == 0 && limit >= 0 &&
		    used + FDS_NEEDED > limit) {
			hp_say_error("attach: process %d is out of file descriptors (%ld open, its "
				     "RLIMIT_NOFILE %ld): the recorder needs %d free (its libraries, "
				     "its capture); refused, nothing was done to it",
				     (int)pid, used, limit, FDS_NEEDED);
			return HP_EXIT_FAILURE;
		}
	}

	/* The capture: created here, empty, so that a file that cannot be
	 * written stops us before anything is loaded; the recorder, running
	 * as the process and in its directory, takes it over by its full
	 * path. */
	if (a.given[HP_OPT_OUTPUT])
		snprintf(name, sizeof name, "%s", a.value[HP_OPT_OUTPUT]);
	else
		snprintf(name, sizeof name, "heapprof.%d.attach.hpf", (int)pid);
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0) {
		hp_say_error("attach: cannot create %s: %s", name, strerror(errno));
		return HP_EXIT_FAILURE;
	}
	/* Created 0600, as every capture: a profile holds the program's paths
	 * and symbols. The process writes it: root attaching to another
	 * user's process gives the file to that user. */
	if (geteuid() == 0) {
		uid_t uid = 0;
		gid_t gid = 0;
		if (process_owner(pid, &uid, &gid) == 0 && uid != 0 && fchown(fd, uid, gid) < 0) {
			hp_say_error("attach: cannot give %s to the process's user: %s", name,
				     strerror(errno));
			close(fd);
			unlink(name);
			return HP_EXIT_FAILURE;
		}
	}
	close(fd);
	if (!realpath(name, out)) {
		hp_say_error("attach: %s: %s", name, strerror(errno));
		return HP_EXIT_FAILURE;
	}
	/* The recorder opens it as the process, from the process's root:
	 * a directory closed to its user (or a path its mount namespace
	 * does not have) is said here, not found out by the recorder. */
	{
		struct creds c;
		int e = process_creds(pid, &c) == 0 ? process_can_write(pid, out, &c) : 0;
		if (e) {
			struct passwd *pw = getpwuid(c.uid);
			hp_say_error("attach: process %d runs as %s (uid %u), who cannot write %s "
				     "(%s%s): give -o a path that user can write",
				     (int)pid, pw ? pw->pw_name : "?", (unsigned)c.uid, out,
				     strerror(e),
				     e == EACCES ? ": a directory on the way is closed to that user"
				     : e == ENOENT ? ": the process runs in another root or mount "
						     "namespace"
						   : "");
			unlink(out);
			return HP_EXIT_FAILURE;
		}
	}

	len = add_var(block, len, sizeof block, "HEAPPROF_OUTPUT", out);
	snprintf(num, sizeof num, "%d", (int)pid);
	len = add_var(block, len, sizeof block, "HEAPPROF_OUTPUT_CLAIMED", num);
	len = add_var(block, len, sizeof block, "HEAPPROF_SAMPLE_RATE",
		      a.given[HP_OPT_SAMPLE_RATE] ? a.value[HP_OPT_SAMPLE_RATE]
						  : ATTACH_DEFAULT_RATE);
	if (a.given[HP_OPT_UNWIND])
		len = add_var(block, len, sizeof block, "HEAPPROF_UNWIND", a.value[HP_OPT_UNWIND]);
	if (a.given[HP_OPT_MAX_DEPTH])
		len = add_var(block, len, sizeof block, "HEAPPROF_MAX_DEPTH",
			      a.value[HP_OPT_MAX_DEPTH]);
	if (a.given[HP_OPT_MAX_STACKS])
		len = add_var(block, len, sizeof block, "HEAPPROF_MAX_STACKS",
			      a.value[HP_OPT_MAX_STACKS]);
	if (a.given[HP_OPT_MMAP])
		len = add_var(block, len, sizeof block, "HEAPPROF_MMAP", "1");
	/* Its messages would go to the program's stderr: none. Its signals
	 * are the program's: no dump signal. */
	len = add_var(block, len, sizeof block, "HEAPPROF_QUIET", "1");
	len = add_var(block, len, sizeof block, "HEAPPROF_DUMP_SIGNAL", "NONE");
	block[len++] = '\0';

	/* Ctrl-C from now on ends the recording (once it has started). */
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fn = recorder_function(&t, lib, 1, "heapprof_attach");
	if (!fn) {
		unlink(out);
		return HP_EXIT_FAILURE;
	}
	err = hp_inject_call(&t, fn, args, block, len, &ret, SAFE_POINT_TIMEOUT_MS);
	if (err < 0) {
		unlink(out);
		return HP_EXIT_FAILURE;
	}
	if ((int)ret == -EEXIST) {
		hp_say_error(preloaded_line, (int)pid, (int)pid);
		unlink(out);
		return HP_EXIT_FAILURE;
	}
	if ((int)ret == -EBUSY) {
		hp_say_error("attach: process %d is being recorded already (heapprof detach %d "
			     "first)",
			     (int)pid, (int)pid);
		unlink(out);
		return HP_EXIT_FAILURE;
	}
	if ((int)ret == -EINVAL) {
		hp_say_error("attach: process %d was attached to before with another "
			     "--sample-rate, --unwind, --max-depth or --max-stacks: attach "
			     "with the same ones",
			     (int)pid);
		unlink(out);
		return HP_EXIT_FAILURE;
	}
	if ((int)ret < 0) {
		hp_say_error("attach: the recorder could not start in process %d: %s", (int)pid,
			     strerror(-(int)ret));
		unlink(out);
		return HP_EXIT_FAILURE;
	}
	if (!quiet)
		fprintf(stderr,
			"heapprof: attached to process %d, recording to %s; %s\n", (int)pid, out,
			a.given[HP_OPT_FOR] ? "detaching after --for" : "Ctrl-C detaches");

	if (a.given[HP_OPT_HTTP])
		srv = serve_attached(pid, out, a.value[HP_OPT_HTTP], a.given[HP_OPT_HTTP_PUBLIC],
				     quiet);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stop_requested && alive(pid) && hp_inject_same_image(&t) == 1 &&
	       (!a.given[HP_OPT_FOR] || elapsed_s(&start) < (double)a.number[HP_OPT_FOR])) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
	}
	/* Ctrl-C again (or a signal to the whole process group, as timeout
	 * sends) must not stop us before the detach: the handler stays. The
	 * server first: it calls into the process too. */
	hp_server_stop(srv);
	exec = alive(pid) && hp_inject_same_image(&t) == 0;
	if (!exec && alive(pid)) {
		err = detach(pid, lib, 1, &t);
		exec = err == -ESTALE;
		if (err == -ENODEV && !quiet)
			fprintf(stderr, "heapprof: process %d was detached meanwhile (heapprof "
					"detach)\n",
				(int)pid);
		else if (err < 0 && !exec)
			return HP_EXIT_FAILURE;
	}
	if (exec) {
		/* The recorder wrote the exec's snapshot and closed the
		 * capture; the new program runs without it. */
		if (!quiet)
			fprintf(stderr, "heapprof: process %d replaced its program (exec); its capture "
					"ends with the exec\n",
				(int)pid);
	} else if (!alive(pid) && !quiet) {
		fprintf(stderr, "heapprof: process %d exited; its capture ends with its exit\n",
			(int)pid);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (!a.given[HP_OPT_NO_SYMBOLS]) {
		struct hp_embed_result res;
		char e[512];
		if (hp_embed_symbols(out, NULL, &res, e, sizeof e) < 0 && !quiet)
			hp_say_error("%s", e);
	}
	if (!quiet)
		fprintf(stderr, "heapprof: detached from process %d; wrote %s (heapprof report %s)\n",
			(int)pid, out, out);
	return HP_EXIT_OK;
}

int hp_cmd_detach(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_cli_args a;
	char lib[PATH_MAX];
	pid_t pid;

	if (hp_cli_parse("detach", detach_usage, uses, sizeof uses / sizeof *uses, 0, argc, argv,
			 &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.noperands != 1) {
		hp_say_error("detach: give exactly one process id");
		return HP_EXIT_USAGE;
	}
	if (parse_pid("detach", argv[a.operand], &pid) < 0)
		return HP_EXIT_USAGE;
	hp_cli_find_recorder(lib, sizeof lib);
	if (detach(pid, lib, 0, NULL) < 0)
		return HP_EXIT_FAILURE;
	fprintf(stderr, "heapprof: detached from process %d; its capture is complete\n", (int)pid);
	return HP_EXIT_OK;
}
