/*
 * serve.c - the live endpoints (serve.h): an HTTP server over a follower
 * of the program's capture (live.h).
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
#include <time.h>
#include <unistd.h>

#include "../analyzer/legacy.h"
#include "../analyzer/pprof.h"
#include "../common/text.h"
#include "../common/options.h"
#include "../common/say.h"
#include "http.h"
#include "live.h"

#define READ_MS 5000            /* to read a request */
#define SNAPSHOT_MS 10000       /* for the program to write a snapshot */
#define WRITE_MS 30000          /* to write an answer */
#define CAPTURE_WRITE_MS 300000 /* to write a capture file, which may be large */

/* What requests may add to the capture. Each snapshot the endpoint asks
 * for is appended to the program's capture file, so they are rationed: the
 * next one is asked for no sooner than GAP after the last, and later when
 * the last was large, so that on average they add at most RATE bytes a
 * second (a gap of its size / RATE, at most MAX_GAP: a snapshot larger
 * than RATE * MAX_GAP, 3.75 MiB, is taken once a minute). A request that
 * finds the next snapshot due within WAIT waits for it; one that would
 * wait longer is served the last snapshot, with an Age header. So however
 * many requests come, the endpoint's snapshots add at most
 * max(one snapshot a second, RATE bytes a second) to the file. */
#define SNAPSHOT_GAP_MS 1000
#define SNAPSHOT_RATE_BYTES (64u << 10)
#define SNAPSHOT_MAX_GAP_MS 60000
#define SNAPSHOT_WAIT_MS 2000

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
	uint64_t next_ask_ns; /* when the next snapshot may be asked for; under lock */
	pid_t pid;
	int public;  /* serve every client (--http-public) */
	uid_t owner; /* with root, the only user served unless public */
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

/* The gap after a snapshot of len bytes before the next may be asked for
 * (SNAPSHOT_RATE_BYTES). */
static uint64_t gap_after(size_t len)
{
	uint64_t ns = (uint64_t)len * 1000000000ull / SNAPSHOT_RATE_BYTES;

	if (ns < SNAPSHOT_GAP_MS * 1000000ull)
		ns = SNAPSHOT_GAP_MS * 1000000ull;
	if (ns > SNAPSHOT_MAX_GAP_MS * 1000000ull)
		ns = SNAPSHOT_MAX_GAP_MS * 1000000ull;
	return ns;
}

/* A snapshot asked for at or after since: the last one when it was, else a
 * new one, asked for no sooner than next_ask_ns (the ration above): the
 * request waits for it up to SNAPSHOT_WAIT_MS, or without limit when
 * must_be_fresh (the end of a ?seconds interval); else it gets the last
 * one (asked for before since, then). Called with the
 * lock held; it is released while waiting. Returns 0 with a copy in *out
 * (free it), or -errno with err set. */
static int fresh_snapshot(struct hp_server *s, uint64_t since, int must_be_fresh,
			  struct hp_live_snap *out, char *err, size_t errlen)
{
	int ret;

	while (!s->have_last || s->last.asked_ns < since) {
		struct hp_live_snap snap;
		uint64_t now = now_ns();
		if (s->have_last && now < s->next_ask_ns) {
			struct timespec until = {(time_t)(s->next_ask_ns / 1000000000u),
						 (long)(s->next_ask_ns % 1000000000u)};
			if (!must_be_fresh && s->next_ask_ns - now > SNAPSHOT_WAIT_MS * 1000000ull)
				break;
			if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
				snprintf(err, errlen, "the server is stopping");
				return -ECANCELED;
			}
			pthread_cond_timedwait(&s->cond, &s->lock, &until);
			continue; /* another request may have taken one meanwhile */
		}
		ret = hp_live_snapshot(s->live, now_ns() + SNAPSHOT_MS * 1000000ull, &snap, err,
				       errlen);
		if (ret)
			return ret;
		if (s->have_last)
			hp_live_snap_free(&s->last);
		s->last = snap;
		s->have_last = 1;
		s->next_ask_ns = now_ns() + gap_after(snap.len + snap.ts_len);
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
	"<tr><td><a href=\"allocs\">allocs</a></td><td>the same profile, alloc_space its "
	"default sample type (Go's allocs; what Parca and Grafana Alloy scrape for "
	"memory)</td></tr>\n"
	"<tr><td><a href=\"/debug/heapprof/capture\">capture</a></td><td>the heapprof capture "
	"file of now, with its symbols (<code>heapprof report</code>)</td></tr>\n"
	"<tr><td><a href=\"/metrics\">metrics</a></td><td>heap in use, peak, RSS, "
	"allocations (Prometheus)</td></tr>\n</table>\n"
	"<p><code>go tool pprof http://HOST:PORT/debug/pprof/heap</code></p>\n</body></html>\n";

/* --- requests ------------------------------------------------------------------ */

enum what { HEAP, ALLOCS, METRICS, CAPTURE };

struct capture_ctx {
	int fd;
	uint64_t deadline;
	int head_only;
};

static int capture_head(void *ctx, size_t total, const char *name, const char *age)
{
	struct capture_ctx *c = ctx;
	char extra[512];

	snprintf(extra, sizeof extra, "Content-Disposition: attachment; filename=\"%s\"\r\n%s",
		 name, age);
	return hp_http_send_head(c->fd, c->deadline, 200, "application/octet-stream", extra, total);
}

/* Answers one profile request: heap or allocs (with debug and seconds),
 * metrics, or the capture. */
static void serve_profile(struct hp_server *s, int fd, const struct hp_http_request *req,
			  enum what what, int debug, long seconds)
{
	uint64_t arrived = now_ns();
	struct hp_live_snap base = {0}, snap = {0};
	struct hp_capture cap;
	struct hp_model model;
	struct out o = {0};
	char err[512], name[300], age[64] = "";
	uint8_t *sym = NULL;
	size_t symlen = 0;
	int ret, built = 0;

	pthread_mutex_lock(&s->lock);
	ret = fresh_snapshot(s, arrived, seconds != 0, seconds ? &base : &snap, err, sizeof err);
	if (!ret && seconds) {
		/* The interval runs without the lock: other requests go on. */
		struct timespec until;
		uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += seconds;
		while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && now_ns() < end)
			pthread_cond_timedwait(&s->cond, &s->lock, &until);
		ret = fresh_snapshot(s, end, 1, &snap, err, sizeof err);
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
			else {
				/* A delta's window: from the interval's first
				 * snapshot (the capture's first) to its last. */
				struct hp_pprof_options po = {
					.since = seconds && cap.nsnapshots >= 2 ? &cap.snapshots[0]
										: NULL,
					.alloc_default = what == ALLOCS,
				};
				ret = hp_pprof_write(o.f, &model, &po);
			}
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

	/* A snapshot older than the request (the ration): its age, as caches
	 * say it. */
	if (!ret && snap.asked_ns < arrived)
		snprintf(age, sizeof age, "Age: %llu\r\n",
			 (unsigned long long)((now_ns() - snap.asked_ns) / 1000000000u));
	if (ret) {
		hp_http_error(fd, WRITE_MS, ret == -ENOMEM ? 500 : status_of(ret), err);
	} else if (what == CAPTURE) {
		struct capture_ctx c = {fd, hp_http_deadline(CAPTURE_WRITE_MS), req->head};
		uint8_t piece[65536];
		uint64_t off = 0;
		ret = capture_head(&c, (size_t)snap.end + symlen, name, age);
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
		char extra[256];
		snprintf(extra, sizeof extra, "%s%s",
			 what == HEAP && !debug
				 ? "Content-Disposition: attachment; filename=\"heap\"\r\n"
			 : what == ALLOCS && !debug
				 ? "Content-Disposition: attachment; filename=\"allocs\"\r\n"
				 : "",
			 age);
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

/* Whether the client on fd may read the program's heap (serve.h): root
 * or the owner, on this machine, asking by a local name. Otherwise says
 * why in why. */
static int allowed(const struct hp_server *s, int fd, const struct hp_http_request *req, char *why,
		   size_t cap)
{
	uid_t uid;
	int ret;

	if (s->public)
		return 1;
	if (!hp_http_host_is_local(req->host)) {
		snprintf(why, cap,
			 "heapprof: Host '%.100s' is not this machine's address or localhost "
			 "(a web page's name resolved to it?): ask http://127.0.0.1:PORT/ as "
			 "the program's user",
			 req->host);
		return 0;
	}
	ret = hp_http_peer_uid(fd, &uid);
	if (ret) {
		snprintf(why, cap,
			 "heapprof: cannot tell which user connected (%s): this heap is served "
			 "only to uid %u, the owner of its capture file, and root, on this "
			 "machine (heapprof --http-public serves everyone)",
			 ret == -ENOENT ? "not a socket of this machine's" : strerror(-ret),
			 (unsigned)s->owner);
		return 0;
	}
	if (uid == 0 || uid == s->owner)
		return 1;
	snprintf(why, cap,
		 "heapprof: this heap is served only to uid %u, the owner of its capture file "
		 "(mode 0600), and root; this connection is uid %u's (heapprof --http-public "
		 "serves everyone)",
		 (unsigned)s->owner, (unsigned)uid);
	return 0;
}

static void serve_request(struct hp_server *s, int fd)
{
	struct hp_http_request req;
	char v[64], page[sizeof index_page + 32], why[512];
	long debug = 0, seconds = 0;
	int st = hp_http_read_request(fd, READ_MS, &req);

	if (st > 0) {
		hp_http_error(fd, WRITE_MS, st, hp_http_reason(st));
		return;
	}
	if (st < 0)
		return;
	if (!allowed(s, fd, &req, why, sizeof why)) {
		hp_http_error(fd, WRITE_MS, 403, why);
		return;
	}
	if (strcmp(req.path, "/debug/pprof/") == 0 || strcmp(req.path, "/debug/pprof") == 0) {
		int n = snprintf(page, sizeof page, index_page, (int)s->pid);
		hp_http_respond(fd, WRITE_MS, 200, "text/html; charset=utf-8", NULL, page,
				(size_t)n, req.head);
		return;
	}
	if (strcmp(req.path, "/debug/pprof/heap") == 0 ||
	    strcmp(req.path, "/debug/pprof/allocs") == 0) {
		/* Go's parameters: debug=N (text when not 0), seconds=N (a
		 * delta); gc=1 means nothing here and is ignored, as others are.
		 * allocs is the same profile with alloc_space its default
		 * sample type, as in Go (the path Parca and Grafana Alloy
		 * scrape for memory by default). */
		enum what w = strcmp(req.path, "/debug/pprof/heap") == 0 ? HEAP : ALLOCS;
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
		serve_profile(s, fd, &req, w, debug != 0, seconds);
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

/* The user the program's heap belongs to: the capture file's owner, else
 * (no file yet) the program's real user, else ours. */
static uid_t owner_of(const char *path, pid_t pid)
{
	char status[64], buf[4096], *p;
	struct stat st;
	unsigned u;
	ssize_t n;
	int fd;

	if (stat(path, &st) == 0)
		return st.st_uid;
	snprintf(status, sizeof status, "/proc/%d/status", (int)pid);
	fd = open(status, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		p = strstr(buf, "\nUid:");
		if (p && sscanf(p + 5, "%u", &u) == 1)
			return (uid_t)u;
	}
	return getuid();
}

int hp_server_start(struct hp_server **out, int lfd, const char *path, pid_t pid, int sig,
		    int public, const struct hp_live_asker *asker)
{
	struct hp_server *s = calloc(1, sizeof *s);
	pthread_condattr_t ca;
	int ret;

	if (!s) {
		close(lfd);
		hp_say_error("out of memory");
		return -ENOMEM;
	}
	s->lfd = lfd;
	s->pid = pid;
	s->public = public;
	s->owner = owner_of(path, pid);
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = hp_live_new(&s->live, path, pid, sig, asker, &s->stop);
	if (!ret && pipe2(s->wake, O_CLOEXEC) < 0)
		ret = -errno;
	if (!ret)
		ret = -pthread_create(&s->acceptor, NULL, acceptor, s);
	if (ret) {
		hp_say_error("cannot start the HTTP server: %s", strerror(-ret));
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
