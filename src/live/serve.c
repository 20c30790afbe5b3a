/*
 * serve.c - the live endpoints (serve.h) and `heapprof serve --pid PID`.
 *
 * Threads and locking: one thread accepts; each connection gets a thread
 * of its own (detached), which reads the request, takes the server's lock
 * for everything that touches the follower (live.h: asking for a
 * snapshot, building and rendering the model), and answers without the
 * lock. `lock` guards live, last and active; `stop` is written by
 * hp_server_stop and read by every wait. A ?seconds=N request waits for
 * its second snapshot on `cond` without the lock, so other requests go on
 * meanwhile.
 */
#include "serve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../analyzer/legacy.h"
#include "../analyzer/pprof.h"
#include "../common/text.h"
#include "../common/options.h"
#include "../cli/cli.h"
#include "http.h"
#include "live.h"

#define READ_MS 5000            /* to read a request */
#define SNAPSHOT_MS 10000       /* for the program to write a snapshot */
#define WRITE_MS 30000          /* to write an answer */
#define CAPTURE_WRITE_MS 300000 /* to write a capture file, which may be large */

struct hp_server {
	int lfd;
	int wake[2]; /* written by hp_server_stop: the accepting thread's poll returns */
	pthread_t acceptor;
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* signalled on stop and when a connection ends */
	int stop;                 /* atomic; set once */
	int active;               /* connection threads running; under lock */
	struct hp_live *live;     /* under lock */
	struct hp_live_snap last; /* the latest snapshot taken, under lock */
	int have_last;
	pid_t pid;
};

struct conn {
	struct hp_server *s;
	int fd;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A snapshot asked for at or after since: the last one when it was, else a
 * new one. Called with the lock held. Returns 0 with a copy in *out (free
 * it), or -errno with err set. */
static int fresh_snapshot(struct hp_server *s, uint64_t since, struct hp_live_snap *out, char *err,
			  size_t errlen)
{
	int ret;

	if (!s->have_last || s->last.asked_ns < since) {
		struct hp_live_snap snap;
		ret = hp_live_snapshot(s->live, now_ns() + SNAPSHOT_MS * 1000000ull, &snap, err,
				       errlen);
		if (ret)
			return ret;
		if (s->have_last)
			hp_live_snap_free(&s->last);
		s->last = snap;
		s->have_last = 1;
	}
	ret = hp_live_snap_copy(out, &s->last);
	if (ret)
		snprintf(err, errlen, "out of memory");
	return ret;
}

/* The HTTP status for a follower's error. */
static int status_of(int err)
{
	return err == -ETIMEDOUT ? 504 : err == -ENOMEM || err == -EIO ? 500 : 503;
}

/* --- rendering ------------------------------------------------------------- */

struct out {
	char *data;
	size_t len;
	FILE *f;
};

static int out_open(struct out *o)
{
	memset(o, 0, sizeof *o);
	o->f = open_memstream(&o->data, &o->len);
	return o->f ? 0 : -ENOMEM;
}

/* Closes the stream after a renderer returned ret. Returns 0 or -errno. */
static int out_close(struct out *o, int ret)
{
	if (fclose(o->f) && !ret)
		ret = -ENOMEM;
	o->f = NULL;
	return ret;
}

/* One metric; figures are integers (rounded estimates), except those in
 * seconds, with milliseconds. */
static void metric(FILE *f, const char *name, const char *type, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	if (strstr(name, "_seconds"))
		fprintf(f, "%s %.3f\n", name, v);
	else
		fprintf(f, "%s %lld\n", name, (long long)hp_estimate_i64(v));
}

/* Prometheus' text exposition format, version 0.0.4: HELP and TYPE before
 * each metric, counters named _total, units in the names. Figures of a
 * sampled capture are unbiased estimates, as everywhere. */
static int render_metrics(FILE *f, const struct hp_model *m)
{
	const struct hp_capture *cap = m->cap;
	const struct hp_cap_snapshot *sn = m->snap;
	uint64_t lost = 0;

	metric(f, "heapprof_heap_inuse_bytes", "gauge", "Bytes allocated and not yet freed.",
	       m->total.inuse_bytes);
	metric(f, "heapprof_heap_inuse_objects", "gauge", "Blocks allocated and not yet freed.",
	       m->total.inuse_objects);
	metric(f, "heapprof_heap_peak_bytes", "gauge",
	       "Bytes in use at the heap's peak since the program started.", m->total.peak_bytes);
	metric(f, "heapprof_heap_peak_time_seconds", "gauge",
	       "When the peak was reached, in seconds since the program started.",
	       (double)sn->peak_time_ns / 1e9);
	if (cap->nsamples)
		metric(f, "heapprof_rss_bytes", "gauge", "Resident set size of the program.",
		       (double)cap->samples[cap->nsamples - 1].rss_bytes);
	metric(f, "heapprof_allocations_total", "counter",
	       "Allocations since the program started (rate() gives the allocation rate).",
	       m->total.alloc_objects);
	metric(f, "heapprof_allocated_bytes_total", "counter",
	       "Bytes allocated since the program started (rate() gives the allocation rate).",
	       m->total.alloc_bytes);
	metric(f, "heapprof_frees_total", "counter", "Frees since the program started.",
	       m->total.free_objects);
	metric(f, "heapprof_freed_bytes_total", "counter", "Bytes freed since the program started.",
	       m->total.free_bytes);
	metric(f, "heapprof_recorder_bytes", "gauge",
	       "Memory the recorder holds in the program for its tables and buffers.",
	       (double)sn->recorder_bytes);
	for (int i = 1; i < HP_LOST_KINDS; i++)
		if (i != HP_LOST_UNKNOWN_FREE)
			lost += sn->lost_count[i];
	metric(f, "heapprof_lost_events_total", "counter",
	       "Allocation events the recorder could not record.", (double)lost);
	metric(f, "heapprof_sample_rate_bytes", "gauge",
	       "Mean bytes between sampled allocations (1: every allocation is recorded).",
	       (double)m->sample_rate_bytes);
	metric(f, "heapprof_uptime_seconds", "gauge",
	       "Seconds since the program started, at the snapshot.", (double)sn->time_ns / 1e9);
	return ferror(f) ? -EIO : 0;
}

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>/debug/pprof/</title>"
	"</head>\n<body>\n<p>heapprof: the heap of process %d, live. Each profile is a "
	"snapshot taken when it is asked for.</p>\n<table>\n"
	"<tr><td><a href=\"heap\">heap</a></td><td>heap profile (profile.proto): "
	"alloc_objects, alloc_space, inuse_objects, inuse_space, peak_objects, peak_space; "
	"<a href=\"heap?debug=1\">as text</a>; <code>?seconds=N</code>: what the next N "
	"seconds allocated and freed</td></tr>\n"
	"<tr><td><a href=\"/debug/heapprof/capture\">capture</a></td><td>the heapprof capture "
	"file of now, with its symbols (<code>heapprof report</code>)</td></tr>\n"
	"<tr><td><a href=\"/metrics\">metrics</a></td><td>heap in use, peak, RSS, "
	"allocations (Prometheus)</td></tr>\n</table>\n"
	"<p><code>go tool pprof http://HOST:PORT/debug/pprof/heap</code></p>\n</body></html>\n";

/* --- requests ------------------------------------------------------------------ */

enum what { HEAP, METRICS, CAPTURE };

struct capture_ctx {
	int fd;
	uint64_t deadline;
	int head_only;
};

static int capture_head(void *ctx, size_t total, const char *name)
{
	struct capture_ctx *c = ctx;
	char extra[512];

	snprintf(extra, sizeof extra, "Content-Disposition: attachment; filename=\"%s\"\r\n", name);
	return hp_http_send_head(c->fd, c->deadline, 200, "application/octet-stream", extra, total);
}

/* Answers one profile request: heap (with debug and seconds), metrics,
 * or the capture. */
static void serve_profile(struct hp_server *s, int fd, const struct hp_http_request *req,
			  enum what what, int debug, long seconds)
{
	uint64_t arrived = now_ns();
	struct hp_live_snap base = {0}, snap = {0};
	struct hp_capture cap;
	struct hp_model model;
	struct out o = {0};
	char err[512], name[300];
	uint8_t *sym = NULL;
	size_t symlen = 0;
	int ret, built = 0;

	pthread_mutex_lock(&s->lock);
	ret = fresh_snapshot(s, arrived, seconds ? &base : &snap, err, sizeof err);
	if (!ret && seconds) {
		/* The interval runs without the lock: other requests go on. */
		struct timespec until;
		uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += seconds;
		while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && now_ns() < end)
			pthread_cond_timedwait(&s->cond, &s->lock, &until);
		ret = fresh_snapshot(s, end, &snap, err, sizeof err);
	}
	if (!ret)
		ret = hp_live_build(s->live, seconds ? &base : NULL, &snap, &cap, &model, err,
				    sizeof err);
	built = !ret;
	if (!ret && what == CAPTURE) {
		ret = hp_live_symbols(s->live, &snap, &sym, &symlen);
		snprintf(name, sizeof name, "heapprof.%s.%d.hpf", hp_model_program_name(&cap),
			 (int)s->pid);
		for (char *p = name; *p; p++) /* a header value: no quotes, no controls */
			if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '_';
		if (ret)
			snprintf(err, sizeof err, "%s", strerror(-ret));
	} else if (!ret) {
		ret = out_open(&o);
		if (!ret) {
			if (what == METRICS)
				ret = render_metrics(o.f, &model);
			else if (debug)
				ret = hp_legacy_write(o.f, &model, NULL);
			else
				ret = hp_pprof_write(o.f, &model, NULL);
			ret = out_close(&o, ret);
		}
		if (ret)
			snprintf(err, sizeof err, "cannot render: %s", strerror(-ret));
	}
	if (built) {
		hp_model_free(&model);
		hp_capture_free(&cap);
	}
	pthread_mutex_unlock(&s->lock);

	if (ret) {
		hp_http_error(fd, WRITE_MS, ret == -ENOMEM ? 500 : status_of(ret), err);
	} else if (what == CAPTURE) {
		struct capture_ctx c = {fd, hp_http_deadline(CAPTURE_WRITE_MS), req->head};
		uint8_t piece[65536];
		uint64_t off = 0;
		ret = capture_head(&c, (size_t)snap.end + symlen, name);
		/* The file's bytes, read without the lock: they are written once. */
		while (!ret && !req->head && off < snap.end) {
			size_t n = snap.end - off < sizeof piece ? (size_t)(snap.end - off)
								 : sizeof piece;
			int r = hp_live_read(s->live, piece, n, off);
			if (r <= 0)
				break; /* the length said is then not met: the client sees it */
			ret = hp_http_send(fd, c.deadline, piece, (size_t)r);
			off += (size_t)r;
		}
		if (!ret && !req->head)
			hp_http_send(fd, c.deadline, sym, symlen);
	} else {
		const char *type = what == METRICS ? "text/plain; version=0.0.4; charset=utf-8"
				   : debug         ? "text/plain; charset=utf-8"
						   : "application/octet-stream";
		const char *extra =
			what == HEAP && !debug
				? "Content-Disposition: attachment; filename=\"heap\"\r\n"
				: NULL;
		hp_http_respond(fd, WRITE_MS, 200, type, extra, o.data, o.len, req->head);
	}
	free(o.data);
	free(sym);
	hp_live_snap_free(&base);
	hp_live_snap_free(&snap);
}

/* A query's number: digits only, in [min, max]. Returns 0 or -EINVAL
 * (the client is told; nothing is printed here). */
static int parse_number(const char *v, long min, long max, long *out)
{
	char *end;
	long n;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtol(v, &end, 10);
	if (*end || errno || n < min || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

static void serve_request(struct hp_server *s, int fd)
{
	struct hp_http_request req;
	char v[64], page[sizeof index_page + 32];
	long debug = 0, seconds = 0;
	int st = hp_http_read_request(fd, READ_MS, &req);

	if (st > 0) {
		hp_http_error(fd, WRITE_MS, st, hp_http_reason(st));
		return;
	}
	if (st < 0)
		return;
	if (strcmp(req.path, "/debug/pprof/") == 0 || strcmp(req.path, "/debug/pprof") == 0) {
		int n = snprintf(page, sizeof page, index_page, (int)s->pid);
		hp_http_respond(fd, WRITE_MS, 200, "text/html; charset=utf-8", NULL, page,
				(size_t)n, req.head);
		return;
	}
	if (strcmp(req.path, "/debug/pprof/heap") == 0) {
		/* Go's parameters: debug=N (text when not 0), seconds=N (a
		 * delta); gc=1 means nothing here and is ignored, as others are. */
		int d = hp_http_query(req.query, "debug", v, sizeof v);
		if (d < 0 || (d == 1 && parse_number(v, 0, INT_MAX, &debug))) {
			hp_http_error(fd, WRITE_MS, 400, "debug wants a number");
			return;
		}
		d = hp_http_query(req.query, "seconds", v, sizeof v);
		if (d < 0 || (d == 1 && parse_number(v, 1, HP_SERVE_MAX_SECONDS, &seconds))) {
			hp_http_error(fd, WRITE_MS, 400, "seconds wants a number from 1 to 3600");
			return;
		}
		serve_profile(s, fd, &req, HEAP, debug != 0, seconds);
		return;
	}
	if (strcmp(req.path, "/metrics") == 0) {
		serve_profile(s, fd, &req, METRICS, 0, 0);
		return;
	}
	if (strcmp(req.path, "/debug/heapprof/capture") == 0) {
		serve_profile(s, fd, &req, CAPTURE, 0, 0);
		return;
	}
	hp_http_error(fd, WRITE_MS, 404, "not found: try /debug/pprof/");
}

static void *connection(void *arg)
{
	struct conn *c = arg;
	struct hp_server *s = c->s;

	serve_request(s, c->fd);
	/* Whatever the client still sends is dropped, not answered with a
	 * reset that could cut off the response it has not read yet. */
	shutdown(c->fd, SHUT_WR);
	close(c->fd);
	free(c);
	pthread_mutex_lock(&s->lock);
	s->active--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void *acceptor(void *arg)
{
	struct hp_server *s = arg;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p[2] = {{s->lfd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
		struct conn *c;
		pthread_t t;
		int fd, busy;

		if (poll(p, 2, -1) < 0 || p[1].revents)
			continue;
		fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue; /* a client that went away, out of descriptors: next */
		pthread_mutex_lock(&s->lock);
		busy = s->active >= HP_SERVE_MAX_CONNECTIONS;
		if (!busy)
			s->active++;
		pthread_mutex_unlock(&s->lock);
		c = busy ? NULL : malloc(sizeof *c);
		if (c) {
			*c = (struct conn){s, fd};
			if (pthread_create(&t, &attr, connection, c) == 0)
				continue;
			free(c);
		}
		if (!busy) {
			pthread_mutex_lock(&s->lock);
			s->active--;
			pthread_mutex_unlock(&s->lock);
		}
		hp_http_error(fd, 1000, 503, "too many connections, try again");
		close(fd);
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

int hp_server_start(struct hp_server **out, int lfd, const char *path, pid_t pid, int sig)
{
	struct hp_server *s = calloc(1, sizeof *s);
	pthread_condattr_t ca;
	int ret;

	if (!s) {
		close(lfd);
		hp_cli_error("out of memory");
		return -ENOMEM;
	}
	s->lfd = lfd;
	s->pid = pid;
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = hp_live_new(&s->live, path, pid, sig, &s->stop);
	if (!ret && pipe2(s->wake, O_CLOEXEC) < 0)
		ret = -errno;
	if (!ret)
		ret = -pthread_create(&s->acceptor, NULL, acceptor, s);
	if (ret) {
		hp_cli_error("cannot start the HTTP server: %s", strerror(-ret));
		hp_live_free(s->live);
		if (s->wake[0] >= 0) {
			close(s->wake[0]);
			close(s->wake[1]);
		}
		close(lfd);
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void hp_server_stop(struct hp_server *s)
{
	struct timespec until;
	int left;

	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	if (write(s->wake[1], "x", 1) < 0)
		(void)0; /* a full pipe wakes it all the same */
	pthread_join(s->acceptor, NULL);
	close(s->lfd);
	/* Every connection is bounded in time, and waits end on stop: wait for
	 * them (at most the longest write), then free. */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CAPTURE_WRITE_MS / 1000 + 1;
	pthread_mutex_lock(&s->lock);
	pthread_cond_broadcast(&s->cond);
	while (s->active && pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT)
		;
	left = s->active;
	pthread_mutex_unlock(&s->lock);
	if (left)
		return; /* a thread still uses it: left to the process's exit */
	close(s->wake[0]);
	close(s->wake[1]);
	if (s->have_last)
		hp_live_snap_free(&s->last);
	hp_live_free(s->live);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* --- heapprof serve --pid PID ------------------------------------------------ */

static const char usage[] =
	"usage: heapprof serve --pid PID [--http ADDR]\n"
	"\n"
	"Serves the live heap of a program started with the recorder preloaded\n"
	"(LD_PRELOAD=.../libheapprof.so) over HTTP, as Go programs serve theirs,\n"
	"until the program ends:\n"
	"  go tool pprof http://127.0.0.1:6060/debug/pprof/heap\n"
	"\n"
	"      --pid PID      the program's process\n"
	"      --http ADDR    HOST:PORT to listen on (default 127.0.0.1:6060; the\n"
	"                     host is loopback unless one is given)\n"
	"  -q, --quiet        say nothing on stderr unless something fails\n"
	"\n"
	"Endpoints: /debug/pprof/heap (profile.proto; ?debug=1 text; ?seconds=N\n"
	"the delta over N seconds), /debug/pprof/, /debug/heapprof/capture (the\n"
	"capture file of now), /metrics (Prometheus). Each answer is a snapshot\n"
	"the program writes when asked with its dump signal (HEAPPROF_DUMP_SIGNAL,\n"
	"default USR2) into its capture (HEAPPROF_OUTPUT).\n"
	"\n"
	"Exit status: 0 when the program ended, 1 when it cannot be served, 2 for\n"
	"wrong usage.\n";

/* The program's environment as it started (/proc/PID/environ, NUL
 * separated) into buf. Returns its length, or -errno. */
static ssize_t read_environ(pid_t pid, char *buf, size_t cap)
{
	char path[64];
	size_t len = 0;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < cap - 1) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The value of NAME in an environ block, or NULL. */
static const char *env_get(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if (strncmp(p, name, n) == 0 && p[n] == '=')
			return p + n + 1;
	return NULL;
}

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
		{HP_OPT_PID, 1, INT_MAX, NULL},
		{HP_OPT_HTTP, 0, 0, NULL},
		{HP_OPT_QUIET, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	static char env[1 << 20]; /* the environment can be large; not on the stack */
	struct hp_cli_args a;
	struct hp_server *srv = NULL;
	struct sigaction sa = {0};
	char path[PATH_MAX + 64];
	const char *addr, *pre, *sigtext;
	ssize_t len;
	unsigned port;
	pid_t pid;
	int sig = SIGUSR2, lfd, pidfd = -1;

	if (hp_cli_parse("serve", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (!a.given[HP_OPT_PID] || a.noperands) {
		hp_cli_error("serve: give the program's process: heapprof serve --pid PID");
		return HP_EXIT_USAGE;
	}
	pid = (pid_t)a.number[HP_OPT_PID];
	addr = a.given[HP_OPT_HTTP] ? a.value[HP_OPT_HTTP] : "127.0.0.1:6060";
	len = read_environ(pid, env, sizeof env);
	if (len < 0) {
		hp_cli_error("serve: process %d: %s", (int)pid,
			     len == -ENOENT ? "no such process" : strerror((int)-len));
		return HP_EXIT_FAILURE;
	}
	pre = env_get(env, (size_t)len, "LD_PRELOAD");
	if (!pre || !strstr(pre, "libheapprof")) {
		hp_cli_error(
			"serve: process %d was not started with the recorder (no libheapprof.so "
			"in its LD_PRELOAD): it has no heap to serve",
			(int)pid);
		return HP_EXIT_FAILURE;
	}
	sigtext = env_get(env, (size_t)len, "HEAPPROF_DUMP_SIGNAL");
	if (sigtext && (hp_option_parse_signal(sigtext, &sig) || sig == 0)) {
		hp_cli_error("serve: process %d has no dump signal (HEAPPROF_DUMP_SIGNAL=%s): it "
			     "cannot be asked for a snapshot",
			     (int)pid, sigtext);
		return HP_EXIT_FAILURE;
	}
	if (find_capture(pid, env_get(env, (size_t)len, "HEAPPROF_OUTPUT"), path, sizeof path)) {
		hp_cli_error("serve: process %d: cannot find its capture (it holds none open, and "
			     "its HEAPPROF_OUTPUT is not set)",
			     (int)pid);
		return HP_EXIT_FAILURE;
	}
	if (hp_http_listen(addr, &lfd, &port))
		return HP_EXIT_FAILURE;
#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (pipe2(stop_pipe, O_CLOEXEC) < 0 || hp_server_start(&srv, lfd, path, pid, sig)) {
		hp_cli_error("serve: cannot start: %s", strerror(errno));
		return HP_EXIT_FAILURE;
	}
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!a.given[HP_OPT_QUIET]) {
		char shown[PATH_MAX * 4];
		fprintf(stderr,
			"heapprof: serving http://%s/debug/pprof/ (port %u) for process %d, "
			"capture %s\n",
			addr, port, (int)pid, hp_text_escape(shown, sizeof shown, path));
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
