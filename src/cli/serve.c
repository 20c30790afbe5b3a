/*
 * serve.c - `heapprof serve --pid PID`: the live endpoints (src/live/serve.h)
 * for a program started with the recorder preloaded, until it ends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../attach/inject.h"
#include "../common/options.h"
#include "../common/text.h"
#include "../live/http.h"
#include "../live/serve.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof serve --pid PID [--http ADDR]\n"
	"\n"
	"Serves the live heap of a program started with the recorder preloaded\n"
	"(LD_PRELOAD=.../libheapprof.so), or recorded by heapprof attach, over\n"
	"HTTP, as Go programs serve theirs, until the program ends:\n"
	"  go tool pprof http://127.0.0.1:6060/debug/pprof/heap\n"
	"\n"
	"      --pid PID      the program's process\n"
	"      --http ADDR    PORT, :PORT or HOST:PORT to listen on (default\n"
	"                     127.0.0.1:6060; the host is 127.0.0.1 unless given)\n"
	"      --http-public  serve every client that can connect, from any host\n"
	"                     (needed to listen on an address that is not loopback)\n"
	"  -q, --quiet        say nothing on stderr unless something fails\n"
	"\n"
	"Endpoints: /debug/pprof/heap (profile.proto; ?debug=1 text; ?seconds=N\n"
	"the delta over N seconds), /debug/pprof/allocs (the same, alloc_space\n"
	"first, as Go's: Parca's and Grafana Alloy's memory path; docs/fleet.md),\n"
	"/debug/pprof/, /debug/heapprof/capture (the capture file of now),\n"
	"/metrics (Prometheus). Each answer is a snapshot\n"
	"the program writes when asked with its dump signal (HEAPPROF_DUMP_SIGNAL,\n"
	"default USR2) into its capture (HEAPPROF_OUTPUT); an attached program,\n"
	"which has no dump signal, is asked by a call to heapprof_dump() made in it\n"
	"as attach makes its calls (ptrace: the same rights as attach).\n"
	"\n"
	"Who can read it: without --http-public, only root and the user owning the\n"
	"program's capture file (0600), from this machine, asking by an address or\n"
	"localhost; anyone else is answered 403 Forbidden. heapprof finds who\n"
	"connected from the client's socket in /proc/net/tcp, as identd does.\n"
	"\n"
	"Exit status: 0 when the program ended, 1 when it cannot be served, 2 for\n"
	"wrong usage.\n";

/* Whether the file at path starts with the capture magic. */
static int is_capture(const char *path)
{
	char magic[8];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), ok;

	if (fd < 0)
		return 0;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
	     memcmp(magic, "HEAPPROF", 8) == 0;
	close(fd);
	return ok;
}

/* The program's capture: the capture file its recorder holds open
 * (/proc/PID/fd: the very file, wherever it is and whatever its name),
 * else HEAPPROF_OUTPUT (from its working directory when relative), which
 * the recorder will create. Returns 0 with out, or -ENOENT. */
static int find_capture(pid_t pid, const char *output, char *out, size_t cap)
{
	char dir[64], fdpath[384], cwd[PATH_MAX], link[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int found = 0;

	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && !found && (e = readdir(d))) {
		ssize_t n;
		if (e->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof fdpath, "%s/%s", dir, e->d_name);
		if (!is_capture(fdpath))
			continue;
		/* The path when it still names the file, else the descriptor. */
		n = readlink(fdpath, link, sizeof link - 1);
		if (n > 0) {
			struct stat a, b;
			link[n] = '\0';
			found = link[0] == '/' && stat(link, &a) == 0 && stat(fdpath, &b) == 0 &&
				a.st_dev == b.st_dev && a.st_ino == b.st_ino;
			snprintf(out, cap, "%s", found ? link : fdpath);
			found = 1;
		}
	}
	if (d)
		closedir(d);
	if (found)
		return 0;
	if (!output || !*output)
		return -ENOENT;
	if (output[0] == '/') {
		snprintf(out, cap, "%s", output);
		return 0;
	}
	snprintf(dir, sizeof dir, "/proc/%d/cwd", (int)pid);
	ssize_t n = readlink(dir, cwd, sizeof cwd - 1);
	if (n <= 0)
		return -ENOENT;
	cwd[n] = '\0';
	snprintf(out, cap, "%s/%s", cwd, output);
	return 0;
}

/* A process heapprof attach records: its recorder was loaded into it
 * (dlopen, src/attach/inject.h) and has no dump signal (the program's
 * signals stay its own), so a snapshot is asked for by calling its
 * heapprof_dump() on a thread at a safe point, which writes the snapshot
 * before it returns. */
struct attached {
	struct hp_inject_target t;
	uintptr_t dump, active; /* heapprof_dump, heapprof_active in the process */
};

#define ATTACHED_SAFE_POINT_MS 2000 /* for a thread to come to a safe point */

/* Calls fn() in the attached process. Returns 0 with its return value in
 * *ret, or -errno (said on stderr by the injector). */
static int call_attached(struct attached *at, uintptr_t fn, int *ret)
{
	const uint64_t args[3] = {0, 0, 0};
	uint64_t r = 0;
	int err = hp_inject_call(&at->t, fn, args, NULL, 0, &r, ATTACHED_SAFE_POINT_MS);

	*ret = (int)r;
	return err;
}

/* The asker of an attached process (hp_live_asker). */
static int ask_attached(void *ctx, char *why, size_t whylen)
{
	struct attached *at = ctx;
	int ret, err = call_attached(at, at->dump, &ret);

	if (err == -ESRCH)
		return -ESRCH;
	if (err == -EBUSY)
		return 0; /* no thread at a safe point now: asked again soon */
	if (err < 0) {
		snprintf(why, whylen, "cannot call into process %d: %s", (int)at->t.pid,
			 strerror(-err));
		return err;
	}
	if (ret == -ENODEV) {
		snprintf(why, whylen, "process %d is no longer recorded (heapprof detach)",
			 (int)at->t.pid);
		return -ENODEV;
	}
	return ret < 0 ? 0 : 1; /* a failed write is tried again */
}

/* Whether pid is recorded by heapprof attach: the recorder is in its map
 * and active. Returns 1 (with *at ready to ask), 0 when the recorder is not
 * loaded, or -errno after saying why (detached; cannot be called into). */
static int attached_recorder(pid_t pid, struct attached *at)
{
	int active, err;

	memset(at, 0, sizeof *at);
	if (hp_inject_open(&at->t, pid) < 0 ||
	    hp_inject_find_recorder(&at->t, "libheapprof.so") != 1)
		return 0;
	at->dump = hp_inject_symbol(at->t.recorder_path, at->t.recorder_bias, "heapprof_dump");
	at->active = hp_inject_symbol(at->t.recorder_path, at->t.recorder_bias, "heapprof_active");
	if (!at->dump || !at->active) {
		hp_say_error("serve: process %d: its recorder %s has no heapprof_dump", (int)pid,
			     at->t.recorder_path);
		return -ENOENT;
	}
	err = call_attached(at, at->active, &active);
	if (err < 0)
		return err;
	if (!active) {
		hp_say_error("serve: process %d is not recorded now (heapprof attach %d, then "
			     "serve it)",
			     (int)pid, (int)pid);
		return -ENODEV;
	}
	return 1;
}

int hp_cli_attached_asker(pid_t pid, struct hp_live_asker *out)
{
	static struct attached at; /* large; lives as long as the server */
	int ret = attached_recorder(pid, &at);

	if (ret == 1)
		*out = (struct hp_live_asker){ask_attached, &at};
	return ret;
}

static int stop_pipe[2] = {-1, -1}; /* written by on_stop: SIGINT, SIGTERM */

static void on_stop(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(stop_pipe[1], "x", 1) < 0)
		(void)0;
	errno = saved;
}

int hp_cmd_serve(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_PID, 1, INT_MAX, NULL},   {HP_OPT_HTTP, 0, 0, NULL},
		{HP_OPT_HTTP_PUBLIC, 0, 0, NULL}, {HP_OPT_QUIET, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	static char env[1 << 20]; /* the environment can be large; not on the stack */
	static struct attached at; /* large; lives as long as the server */
	struct hp_live_asker asker = {ask_attached, &at};
	int is_attached = 0;
	struct hp_cli_args a;
	struct hp_server *srv = NULL;
	struct sigaction sa = {0};
	char path[PATH_MAX + 64];
	const char *addr, *pre, *sigtext;
	ssize_t len;
	unsigned port;
	pid_t pid;
	char url[128];
	int sig = SIGUSR2, lfd, pidfd = -1, ret;

	if (hp_cli_parse("serve", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (!a.given[HP_OPT_PID] || a.noperands) {
		hp_say_error("serve: give the program's process: heapprof serve --pid PID");
		return HP_EXIT_USAGE;
	}
	pid = (pid_t)a.number[HP_OPT_PID];
	addr = a.given[HP_OPT_HTTP] ? a.value[HP_OPT_HTTP] : "127.0.0.1:6060";
	len = hp_cli_read_environ(pid, env, sizeof env);
	if (len < 0) {
		hp_say_error("serve: process %d: %s", (int)pid,
			     len == -ENOENT ? "no such process" : strerror((int)-len));
		return HP_EXIT_FAILURE;
	}
	pre = hp_cli_env_get(env, (size_t)len, "LD_PRELOAD");
	if (!pre || !strstr(pre, "libheapprof")) {
		ret = attached_recorder(pid, &at);
		if (ret < 0)
			return HP_EXIT_FAILURE;
		if (ret == 0) {
			hp_say_error("serve: process %d was not started with the recorder (no "
				     "libheapprof.so in its LD_PRELOAD) and is not attached to "
				     "(heapprof attach %d): it has no heap to serve",
				     (int)pid, (int)pid);
			return HP_EXIT_FAILURE;
		}
		is_attached = 1;
	}
	sigtext = is_attached ? NULL : hp_cli_env_get(env, (size_t)len, "HEAPPROF_DUMP_SIGNAL");
	if (sigtext && (hp_option_parse_signal(sigtext, &sig) || sig == 0)) {
		hp_say_error("serve: process %d has no dump signal (HEAPPROF_DUMP_SIGNAL=%s): it "
			     "cannot be asked for a snapshot",
			     (int)pid, sigtext);
		return HP_EXIT_FAILURE;
	}
	if (find_capture(pid, hp_cli_env_get(env, (size_t)len, "HEAPPROF_OUTPUT"), path,
			 sizeof path)) {
		hp_say_error("serve: process %d: cannot find its capture (it holds none open, and "
			     "its HEAPPROF_OUTPUT is not set)",
			     (int)pid);
		return HP_EXIT_FAILURE;
	}
	ret = hp_http_listen(addr, a.given[HP_OPT_HTTP_PUBLIC], &lfd, &port);
	if (ret)
		return ret == -EPERM ? HP_EXIT_USAGE : HP_EXIT_FAILURE;
	hp_http_url(lfd, url, sizeof url);
#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (pipe2(stop_pipe, O_CLOEXEC) < 0 ||
	    hp_server_start(&srv, lfd, path, pid, sig, a.given[HP_OPT_HTTP_PUBLIC],
			    is_attached ? &asker : NULL)) {
		hp_say_error("serve: cannot start: %s", strerror(errno));
		return HP_EXIT_FAILURE;
	}
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!a.given[HP_OPT_QUIET]) {
		char shown[PATH_MAX * 4];
		fprintf(stderr,
			"heapprof: serving %s/debug/pprof/ (port %u) for process %d, "
			"capture %s, %s\n",
			url, port, (int)pid, hp_text_escape(shown, sizeof shown, path),
			a.given[HP_OPT_HTTP_PUBLIC] ? "to every client"
						    : "to its capture's owner and root");
	}
	/* Until the program ends (its pidfd becomes readable; without pidfds,
	 * checked twice a second) or we are told to stop. */
	for (;;) {
		struct pollfd p[2] = {{stop_pipe[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
		int n = poll(p, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 500);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && (p[0].revents || (pidfd >= 0 && p[1].revents)))
			break;
		if (pidfd < 0 && kill(pid, 0) < 0 && errno == ESRCH)
			break;
	}
	hp_server_stop(srv);
	if (pidfd >= 0)
		close(pidfd);
	if (!a.given[HP_OPT_QUIET])
		fprintf(stderr, "heapprof: stopped serving process %d\n", (int)pid);
	return HP_EXIT_OK;
}
