/*
 * test_serve.c - the live endpoints (src/live/serve.h), over HTTP on
 * 127.0.0.1 only, read by their real readers: `go tool pprof` on the URL,
 * Prometheus' own text parser (python3-prometheus-client) and a strict
 * check of the exposition format here, `heapprof report` on the capture.
 *
 * The program is tests/programs/waiter.c: known allocations (waiter.h),
 * more on command, idle in read(2) in between. Every wait is bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"
#include "../programs/waiter.h"

#define HP_HTTP_BIG 12000 /* more than a request may hold (src/live/http.h) */

/* A program under `heapprof run --http` or `heapprof serve`. */
struct prog {
	pid_t pid;    /* heapprof run, or the program itself (serve) */
	pid_t server; /* heapprof serve, or 0 */
	int cmd, ack; /* the program's stdin and stdout */
	unsigned port;
	char hpf[4200], err[4200];
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reads until want arrives on fd, for at most ms. */
static int wait_for(int fd, const char *want, int ms)
{
	char buf[256];
	size_t len = 0;
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end && len < sizeof buf - 1) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = read(fd, buf + len, 1);
		if (n <= 0)
			return 0;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, want))
			return 1;
	}
	return 0;
}

/* The port a server said it listens on, from its stderr file, "(port N)". */
static unsigned port_of(const char *errfile, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		char buf[4096] = "";
		FILE *f = fopen(errfile, "r");
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		const char *p;
		if (f)
			fclose(f);
		buf[n] = '\0';
		p = strstr(buf, "(port ");
		if (p)
			return (unsigned)atoi(p + 6);
		usleep(20000);
	}
	return 0;
}

/* Starts argv with the program's stdin and stdout on pipes, its stderr
 * into p->err. */
static pid_t spawn(struct prog *p, char *const argv[], char *const env[])
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in) || pipe(out))
		return -1;
	pid = fork();
	if (pid == 0) {
		int e = open(p->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(e, 2);
		close(in[1]);
		close(out[0]);
		if (env)
			execve(argv[0], argv, env);
		else
			execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->cmd = in[1];
	p->ack = out[0];
	return pid;
}

/* The user the access tests run a second client (or program) as, by
 * setpriv (util-linux), and a third one. */
#define AS_NOBODY "setpriv --reuid=nobody --regid=nogroup --clear-groups"
#define AS_DAEMON "setpriv --reuid=daemon --regid=daemon --clear-groups"

/* [as USER] heapprof run -o HPF [opt] --http ADDR [--http-public] --
 * waiter: as_nobody runs it as nobody, with the capture in dir (which
 * nobody can write). Returns 1 when it runs and serves. */
static int start_with(struct prog *p, const char *name, const char *opt, const char *addr,
		      int public, int as_nobody, const char *dir)
{
	char heapprof[4200], waiter[4200];
	char *argv[20];
	int n = 0;

	memset(p, 0, sizeof *p);
	snprintf(heapprof, sizeof heapprof, "%s/heapprof", hp_test_build());
	snprintf(waiter, sizeof waiter, "%s/tests/programs/waiter", hp_test_build());
	snprintf(p->hpf, sizeof p->hpf, "%s/%s.hpf", dir ? dir : hp_test_tmp(), name);
	snprintf(p->err, sizeof p->err, "%s/%s.err", hp_test_tmp(), name);
	if (as_nobody) {
		argv[n++] = "/usr/bin/setpriv";
		argv[n++] = "--reuid=nobody";
		argv[n++] = "--regid=nogroup";
		argv[n++] = "--clear-groups";
	}
	argv[n++] = heapprof;
	argv[n++] = "run";
	argv[n++] = "-o";
	argv[n++] = p->hpf;
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--http";
	argv[n++] = (char *)addr;
	if (public)
		argv[n++] = "--http-public";
	argv[n++] = "--";
	argv[n++] = waiter;
	argv[n] = NULL;
	signal(SIGPIPE, SIG_IGN);
	p->pid = spawn(p, argv, NULL);
	if (!expect_true(p->pid > 0, "heapprof run starts") ||
	    !expect_true(wait_for(p->ack, "ready\n", 10000), "the program is ready"))
		return 0;
	p->port = port_of(p->err, 10000);
	return expect_true(p->port > 0, "heapprof run says the port it serves on");
}

/* heapprof run [opt] --http 127.0.0.1:0 -- waiter, as the test's user. */
static int start(struct prog *p, const char *name, const char *opt)
{
	return start_with(p, name, opt, "127.0.0.1:0", 0, 0, NULL);
}

/* Sends a command and waits for its acknowledgement. */
static int command(struct prog *p, char c)
{
	char b[2] = {c, '\n'};
	return expect_true(write(p->cmd, b, 2) == 2 && wait_for(p->ack, "ok\n", 10000),
			   "the program does what it is told");
}

/* Waits for pid for at most ms; returns its status, or -1 (then kills it). */
static int reap(pid_t pid, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	int status;

	while (now_ms() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Ends the program ('q') and heapprof; returns heapprof run's status. */
static int finish(struct prog *p)
{
	int st;

	if (write(p->cmd, "q", 1) < 0)
		(void)0;
	close(p->cmd);
	close(p->ack);
	st = reap(p->pid, 20000);
	if (p->server)
		expect_eq_u64(reap(p->server, 20000), 0, "heapprof serve ends with the program");
	return st;
}

static char *url(const struct prog *p, const char *path, char *buf, size_t cap)
{
	snprintf(buf, cap, "http://127.0.0.1:%u%s", p->port, path);
	return buf;
}

/* The flat figure of fn in `go tool pprof -top` of the URL for one sample
 * type, -1 when fn is not there. */
static long long top(const struct prog *p, const char *path, const char *index, const char *fn)
{
	char u[256];
	char *out = hp_test_sh_out("go tool pprof -top -nodefraction=0 -nodecount=10000 -unit=B "
				   "-sample_index=%s '%s' 2>&1",
				   index, url(p, path, u, sizeof u));
	int found;
	long long v;

	if (!out)
		return -2;
	v = hp_test_pprof_column(out, fn, 0, &found);
	if (!found && strstr(out, "Total samples = 0") == NULL && strstr(out, fn))
		printf("%s", out);
	free(out);
	return found ? v : -1;
}

/* The sum of one sample type over every sample of `go tool pprof -raw`
 * output. */
static long long raw_total(const char *raw, const char *type)
{
	const char *s = strstr(raw, "Samples:\n"), *l;
	char types[512];
	int col = -1, i = 0;
	long long sum = 0;

	if (!s)
		return -1;
	s += 9;
	l = strchr(s, '\n');
	if (!l || (size_t)(l - s) >= sizeof types)
		return -1;
	memcpy(types, s, (size_t)(l - s));
	types[l - s] = '\0';
	for (char *save, *t = strtok_r(types, " ", &save); t; t = strtok_r(NULL, " ", &save), i++)
		if (strncmp(t, type, strlen(type)) == 0 && t[strlen(type)] == '/')
			col = i;
	if (col < 0)
		return -1;
	for (s = l + 1; *s && strncmp(s, "Locations", 9) != 0; s = strchr(s, '\n') + 1) {
		const char *colon = strchr(s, ':'), *eol = strchr(s, '\n');
		if (!eol)
			break;
		if (colon && colon < eol && strstr(s, "bytes:[") != s + strspn(s, " ")) {
			const char *q = s;
			char *e;
			long long v = 0;
			for (int k = 0; k <= col; k++) {
				v = strtoll(q, &e, 10);
				if (e == q)
					break;
				q = e;
			}
			sum += v;
		}
	}
	return sum;
}

/* An HTTP exchange on a raw socket: sends req (len bytes), returns what
 * came back within ms (malloc'd). */
static char *exchange(unsigned port, const char *req, size_t len, int ms)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	char *buf = calloc(1, 65536);
	size_t got = 0;
	uint64_t end = now_ms() + (uint64_t)ms;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (fd >= 0)
			close(fd);
		return buf;
	}
	if (len && send(fd, req, len, MSG_NOSIGNAL) < 0)
		(void)0;
	while (now_ms() < end && got < 65535) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t n = recv(fd, buf + got, 65535 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return buf;
}

HP_TEST(serve_heap_has_the_figures_of_now)
{
	struct prog p;

	if (!hp_test_need_go() || !start(&p, "heap", NULL))
		return;
	expect_eq_u64(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_first"),
		      FIRST_N * FIRST_SIZE, "in use: waiter_first's blocks");
	expect_eq_u64(top(&p, "/debug/pprof/heap", "inuse_objects", "waiter_first"), FIRST_N,
		      "in use: waiter_first's count");
	expect_true(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_second") == -1,
		    "waiter_second has not run yet");
	if (command(&p, 's')) {
		expect_eq_u64(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_second"),
			      SECOND_N * SECOND_SIZE, "after 's': waiter_second's blocks");
		expect_eq_u64(top(&p, "/debug/pprof/heap", "alloc_objects", "waiter_second"),
			      SECOND_N, "after 's': waiter_second's count");
		expect_eq_u64(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_first"),
			      FIRST_N * FIRST_SIZE, "waiter_first's still");
	}
	if (command(&p, 't'))
		expect_eq_u64(top(&p, "/debug/pprof/heap", "alloc_objects", "waiter_churn"),
			      CHURN_N, "after 't': waiter_churn's allocations");
	/* Symbolized by the server: functions, files and lines, with no binary
	 * for pprof to read (PPROF_BINARY_PATH leads nowhere). */
	char u[256], *raw = hp_test_sh_out("PPROF_BINARY_PATH=/nonexistent go tool pprof -raw '%s' "
					   "2>&1",
					   url(&p, "/debug/pprof/heap", u, sizeof u));
	if (raw) {
		expect_true(strstr(raw, "waiter_first") && strstr(raw, "waiter.c:"),
			    "frames have functions, files and lines");
		expect_eq_u64(raw_total(raw, "inuse_space"),
			      FIRST_N * FIRST_SIZE + SECOND_N * SECOND_SIZE,
			      "the whole heap in use is the program's, nothing else");
		expect_eq_u64(raw_total(raw, "alloc_objects"), FIRST_N + SECOND_N + CHURN_N,
			      "every allocation counted once");
		free(raw);
	}
	expect_eq_u64(finish(&p), 0, "the program and heapprof run end well");
	struct hp_capture *cap = hpq_load(p.hpf);
	if (cap) {
		expect_true(cap->has_symbols, "heapprof run still embeds the symbols at the end");
		hpq_free(cap);
	}
}

HP_TEST(serve_text_and_index)
{
	struct prog p;
	char u[256];

	if (!start(&p, "text", NULL))
		return;
	char *text =
		hp_test_sh_out("curl -sf '%s'", url(&p, "/debug/pprof/heap?debug=1", u, sizeof u));
	if (text) {
		char want[128];
		snprintf(want, sizeof want, "heap profile: %6d: %8d [%6d: %8d] @ heapprofile",
			 FIRST_N, FIRST_N * FIRST_SIZE, FIRST_N, FIRST_N * FIRST_SIZE);
		expect_true(strncmp(text, want, strlen(want)) == 0,
			    "?debug=1: gperftools' text with the figures of now");
		if (strncmp(text, want, strlen(want)))
			printf("got: %.200s\nwant: %s\n", text, want);
		free(text);
	}
	char *index = hp_test_sh_out("curl -sf '%s'", url(&p, "/debug/pprof/", u, sizeof u));
	if (index) {
		expect_true(strstr(index, "href=\"heap\"") != NULL,
			    "the index links the heap profile");
		free(index);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* ?seconds=N: the snapshot at the start of the interval is the one the
 * capture gains first; 's' runs after it, and the answer is exactly what
 * 's' allocated. */
HP_TEST(serve_seconds_is_a_delta)
{
	struct prog p;
	char u[256], out[4200];
	size_t before = 0;
	pid_t go;
	uint64_t end;

	if (!hp_test_need_go() || !start(&p, "delta", NULL))
		return;
	/* One request first: the capture then exists and has a snapshot. */
	expect_true(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_first") > 0, "warm up");
	struct hp_capture *cap = hpq_load(p.hpf);
	if (cap) {
		before = cap->nsnapshots;
		hpq_free(cap);
	}
	snprintf(out, sizeof out, "%s/delta.raw", hp_test_tmp());
	go = fork();
	if (go == 0) {
		char cmd[8192];
		snprintf(cmd, sizeof cmd, "go tool pprof -raw -seconds 3 '%s' >%s 2>&1",
			 url(&p, "/debug/pprof/heap", u, sizeof u), out);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* Wait for the first snapshot of the interval. */
	for (end = now_ms() + 10000; now_ms() < end; usleep(20000)) {
		size_t n = 0;
		cap = hpq_load(p.hpf);
		if (cap) {
			n = cap->nsnapshots;
			hpq_free(cap);
		}
		if (n > before)
			break;
	}
	command(&p, 's');
	command(&p, 't');
	expect_eq_u64(reap(go, 30000), 0, "go tool pprof -seconds 3 succeeds");
	char *raw = hp_test_sh_out("cat %s", out);
	if (raw) {
		expect_eq_u64(raw_total(raw, "alloc_space"),
			      SECOND_N * SECOND_SIZE + CHURN_N * CHURN_SIZE,
			      "allocated in the interval: 's' and 't', nothing before");
		expect_eq_u64(raw_total(raw, "inuse_space"), SECOND_N * SECOND_SIZE,
			      "in use: the change over the interval ('t' freed its own)");
		expect_true(strstr(raw, "waiter_second") && !strstr(raw, "waiter_first"),
			    "only the interval's stacks");
		free(raw);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* ?seconds=N says its window (issue 23, item 3): a program that has run
 * for more than 3 s answers ?seconds=1 with `Duration: 1.0Xs` (pprof's
 * -raw header), not the time since the program started (3.0X s and more
 * before), and the profile's time is the window's start, as Go's delta
 * profiles say. */
HP_TEST(serve_seconds_says_its_window)
{
	struct prog p;
	char u[256], file[600];
	double d = 0;

	if (!hp_test_need_go() || !hp_test_need("curl", "curl") || !start(&p, "window", NULL))
		return;
	expect_true(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_first") >= -1, "warm up");
	usleep(3000000);
	snprintf(file, sizeof file, "%s/window.pb.gz", hp_test_tmp());
	if (expect_eq_u64(hp_test_sh("curl -sf --max-time 30 -o %s '%s'", file,
				     url(&p, "/debug/pprof/heap?seconds=1", u, sizeof u)),
			  0, "curl fetches ?seconds=1")) {
		char *out = hp_test_sh_out("go tool pprof -raw %s 2>&1 | grep '^Duration: '", file);
		expect_true(out && sscanf(out, "Duration: %lfs", &d) == 1, "a Duration line");
		printf("  %s", out ? out : "(none)\n");
		expect_true(d >= 1.0 && d < 1.5, "the duration is the window's, 1 s");
		free(out);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* The profile's duration in file, in seconds, from `go tool pprof -top`'s
 * "Duration: 324.70ms, Total ..." (Go's time.Duration; -raw cuts it to four
 * characters, "324."); -1 when there is none. */
static double top_duration(const char *file)
{
	static const struct {
		const char *unit;
		double s;
	} units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"\u00b5s", 1e-6}, {"ms", 1e-3},
		     {"s", 1},     {"mins", 60}, {"hrs", 3600}};
	char *out = hp_test_sh_out("go tool pprof -top %s 2>&1 | grep '^Duration: '", file);
	char unit[16] = "";
	double d = -1;
	int n = out ? sscanf(out, "Duration: %lf%15[^ ,\n]", &d, unit) : 0;

	free(out);
	if (n < 1)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (strcmp(unit, units[i].unit) == 0)
			return d * units[i].s;
	return -1;
}

/* The fields a scraper reads from one profile, as `TZ=UTC go tool pprof
 * -raw` prints them. */
struct scraped {
	char types[256]; /* the sample types line, "[dflt]" on the default */
	char period[64]; /* "space bytes 1" */
	time_t time;     /* time_nanos, to the second; 0: none */
	double duration; /* duration_nanos in seconds; -1: none */
	long long alloc_objects, alloc_space, inuse_objects, inuse_space;
};

/* Fetches u with curl into file and reads it back with go tool pprof.
 * Returns 1 when both succeed. */
static int scrape(const char *u, const char *file, struct scraped *s)
{
	char *raw, *l;
	struct tm tm;

	memset(s, 0, sizeof *s);
	s->duration = -1;
	if (!expect_eq_u64(hp_test_sh("curl -sf --max-time 30 -o %s '%s'", file, u), 0,
			   "curl fetches the endpoint"))
		return 0;
	raw = hp_test_sh_out("TZ=UTC go tool pprof -raw %s 2>&1", file);
	if (!expect_true(raw && strstr(raw, "\nSamples:\n"), "go tool pprof parses it")) {
		printf("%s: %s\n", u, raw ? raw : "(no output)");
		free(raw);
		return 0;
	}
	l = strstr(raw, "\nSamples:\n") + 10;
	snprintf(s->types, sizeof s->types, "%.*s", (int)strcspn(l, "\n"), l);
	l = strstr(raw, "PeriodType: ");
	if (l) {
		int n = (int)strcspn(l + 12, "\n");
		const char *per = strstr(l, "\nPeriod: ");
		snprintf(s->period, sizeof s->period, "%.*s %.*s", n, l + 12,
			 per ? (int)strcspn(per + 9, "\n") : 0, per ? per + 9 : "");
	}
	l = strstr(raw, "\nTime: ");
	memset(&tm, 0, sizeof tm);
	if (l && strptime(l + 7, "%Y-%m-%d %H:%M:%S", &tm))
		s->time = timegm(&tm);
	s->duration = top_duration(file);
	s->alloc_objects = raw_total(raw, "alloc_objects");
	s->alloc_space = raw_total(raw, "alloc_space");
	s->inuse_objects = raw_total(raw, "inuse_objects");
	s->inuse_space = raw_total(raw, "inuse_space");
	free(raw);
	return 1;
}

#define GO_TYPES "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"

/* Issue 25, item 4: every profile endpoint as the pprof scrapers (Parca,
 * Grafana Alloy) read it: /debug/pprof/allocs, the same profile with
 * alloc_space its default sample type as Go serves it, /debug/pprof/heap,
 * their text and their deltas; each with Go's sample types in Go's order,
 * the period type and period, the time and the duration. The delta's sums
 * are exactly what the program allocated and freed in its window, and its
 * time is the window's start. */
HP_TEST(serve_every_endpoint_for_the_scrapers)
{
	static const struct {
		const char *path, *dflt;
	} cumulative[] = {
		{"/debug/pprof/allocs", "alloc_objects/count alloc_space/bytes[dflt] "
					"inuse_objects/count inuse_space/bytes"},
		{"/debug/pprof/heap", "alloc_objects/count alloc_space/bytes "
				      "inuse_objects/count inuse_space/bytes[dflt]"},
	};
	struct prog p;
	struct scraped s;
	char u[256], file[600];
	pid_t curl;
	time_t asked;
	size_t before = 0;

	if (!hp_test_need_go() || !hp_test_need("curl", "curl") || !start(&p, "scrapers", NULL))
		return;
	snprintf(file, sizeof file, "%s/scrapers.pb.gz", hp_test_tmp());
	for (size_t i = 0; i < sizeof cumulative / sizeof *cumulative; i++) {
		asked = time(NULL);
		if (!scrape(url(&p, cumulative[i].path, u, sizeof u), file, &s))
			continue;
		printf("  %s: %s; %s; time %+lld s; duration %.2f s\n", cumulative[i].path, s.types,
		       s.period, (long long)(s.time - asked), s.duration);
		expect_true(strncmp(s.types, cumulative[i].dflt, strlen(cumulative[i].dflt)) == 0,
			    "Go's four sample types first, in Go's order, the default marked");
		expect_true(strcmp(s.period, "space bytes 1") == 0,
			    "period type space/bytes, period 1 (every allocation recorded)");
		expect_true(s.time >= asked - 1 && s.time <= time(NULL) + 1,
			    "the time is the snapshot's, now");
		expect_true(s.duration >= 0 && s.duration < 30,
			    "a duration: the time since the program started");
		expect_eq_u64(s.alloc_objects, FIRST_N, "allocated: waiter_first's, nothing else");
		expect_eq_u64(s.alloc_space, FIRST_N * FIRST_SIZE, "allocated bytes");
		expect_eq_u64(s.inuse_objects, FIRST_N, "in use");
		expect_eq_u64(s.inuse_space, FIRST_N * FIRST_SIZE, "in use bytes");
	}
	/* The text (gperftools' heap profile) of both, which pprof reads too. */
	for (size_t i = 0; i < sizeof cumulative / sizeof *cumulative; i++) {
		char path[64];
		snprintf(path, sizeof path, "%s?debug=1", cumulative[i].path);
		char *raw;
		if (!expect_eq_u64(hp_test_sh("curl -sf --max-time 30 -o %s '%s'", file,
					      url(&p, path, u, sizeof u)),
				   0, "curl fetches ?debug=1"))
			continue;
		/* pprof reads gperftools' text as objects/count, space/bytes:
		 * the blocks in use. */
		raw = hp_test_sh_out("go tool pprof -raw %s 2>&1", file);
		expect_eq_u64(raw ? raw_total(raw, "space") : -1, FIRST_N * FIRST_SIZE,
			      "?debug=1: pprof reads the text, the bytes in use");
		free(raw);
	}

	/* The delta of allocs over 3 s, 's' and 't' run in it. */
	struct hp_capture *cap = hpq_load(p.hpf);
	if (cap) {
		before = cap->nsnapshots;
		hpq_free(cap);
	}
	asked = time(NULL);
	curl = fork();
	if (curl == 0) {
		char cmd[8192];
		snprintf(cmd, sizeof cmd, "curl -sf --max-time 30 -o %s '%s'", file,
			 url(&p, "/debug/pprof/allocs?seconds=3", u, sizeof u));
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (uint64_t end = now_ms() + 10000; now_ms() < end; usleep(20000)) {
		size_t n = 0;
		cap = hpq_load(p.hpf);
		if (cap) {
			n = cap->nsnapshots;
			hpq_free(cap);
		}
		if (n > before)
			break;
	}
	command(&p, 's');
	command(&p, 't');
	if (expect_eq_u64(reap(curl, 30000), 0, "curl fetches allocs?seconds=3")) {
		char *raw = hp_test_sh_out("TZ=UTC go tool pprof -raw %s 2>&1", file);
		memset(&s, 0, sizeof s);
		if (raw) {
			const char *l = strstr(raw, "\nTime: ");
			s.duration = top_duration(file);
			struct tm tm = {0};
			if (l && strptime(l + 7, "%Y-%m-%d %H:%M:%S", &tm))
				s.time = timegm(&tm);
			s.alloc_objects = raw_total(raw, "alloc_objects");
			s.alloc_space = raw_total(raw, "alloc_space");
			s.inuse_objects = raw_total(raw, "inuse_objects");
			s.inuse_space = raw_total(raw, "inuse_space");
			if (!expect_true(strstr(raw,
						"\nalloc_objects/count alloc_space/bytes[dflt] "
						"inuse_objects/count inuse_space/bytes") &&
						 strstr(raw,
							"PeriodType: space bytes\nPeriod: 1\n"),
					 "the delta: Go's sample types, alloc_space the default, "
					 "the period"))
				printf("%s", raw);
			free(raw);
		}
		printf("  allocs?seconds=3: time %+lld s; duration %.2f s\n",
		       (long long)(s.time - asked), s.duration);
		expect_eq_u64(s.alloc_objects, SECOND_N + CHURN_N,
			      "allocated in the window: 's' and 't', nothing before");
		expect_eq_u64(s.alloc_space, SECOND_N * SECOND_SIZE + CHURN_N * CHURN_SIZE,
			      "their bytes");
		expect_eq_u64(s.inuse_objects, SECOND_N,
			      "in use: the window's change ('t' freed its own)");
		expect_eq_u64(s.inuse_space, SECOND_N * SECOND_SIZE, "its bytes");
		expect_true(s.duration >= 3.0 && s.duration < 4.5,
			    "the duration is the window's, 3 s");
		expect_true(s.time >= asked - 1 && s.time <= asked + 2,
			    "the time is the window's start");
	}
	/* A window in which nothing happens: an empty delta, still with its
	 * header. */
	if (scrape(url(&p, "/debug/pprof/heap?seconds=1", u, sizeof u), file, &s)) {
		expect_true(strncmp(s.types, GO_TYPES, strlen(GO_TYPES)) == 0,
			    "heap?seconds=1: Go's types");
		expect_eq_u64(s.alloc_objects + s.inuse_objects + s.alloc_space + s.inuse_space, 0,
			      "nothing allocated or freed in an idle window");
		expect_true(s.duration >= 1.0 && s.duration < 2.5, "its duration, 1 s");
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* Prometheus' text format: every sample named as [a-zA-Z_:][a-zA-Z0-9_:]*,
 * with a number, after its HELP and TYPE lines; counters named _total. */
static int strict_prometheus(const char *text)
{
	char typed[64][128];
	int ntyped = 0, ok = 1, nsamples = 0;

	for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
		char line[512], name[128], type[32];
		const char *eol = strchr(l, '\n');
		double v;
		char *e;
		if (!eol || (size_t)(eol - l) >= sizeof line)
			return 0; /* every line ends with '\n' */
		memcpy(line, l, (size_t)(eol - l));
		line[eol - l] = '\0';
		if (sscanf(line, "# TYPE %127s %31s", name, type) == 2) {
			ok &= !strcmp(type, "gauge") || !strcmp(type, "counter");
			if (!strcmp(type, "counter"))
				ok &= strlen(name) > 6 &&
				      !strcmp(name + strlen(name) - 6, "_total");
			if (ntyped < 64)
				snprintf(typed[ntyped++], sizeof typed[0], "%s", name);
			continue;
		}
		if (line[0] == '#') {
			ok &= strncmp(line, "# HELP ", 7) == 0;
			continue;
		}
		const char *sp = strchr(line, ' ');
		int known = 0;
		if (!sp)
			return 0;
		ok &= strspn(line,
			     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:0123456789") ==
			      (size_t)(sp - line) &&
		      !(line[0] >= '0' && line[0] <= '9');
		v = strtod(sp + 1, &e);
		ok &= e != sp + 1 && *e == '\0' && v == v;
		for (int i = 0; i < ntyped; i++)
			known |= strlen(typed[i]) == (size_t)(sp - line) &&
				 !strncmp(typed[i], line, (size_t)(sp - line));
		ok &= known;
		nsamples++;
	}
	return ok && nsamples > 0;
}

HP_TEST(serve_metrics_are_prometheus_text)
{
	struct prog p;
	char u[256], file[4200];

	if (!hp_test_need("/usr/bin/python3", "python3") || !start(&p, "metrics", NULL))
		return;
	snprintf(file, sizeof file, "%s/metrics.txt", hp_test_tmp());
	if (command(&p, 's') &&
	    expect_eq_u64(hp_test_sh("curl -sf -o %s '%s'", file, url(&p, "/metrics", u, sizeof u)),
			  0, "GET /metrics")) {
		char *text = hp_test_sh_out("cat %s", file);
		if (text) {
			expect_true(strict_prometheus(text), "the exposition format, strictly");
			free(text);
		}
		/* Prometheus' own parser (its Python client, Debian's
		 * python3-prometheus-client), which refuses what it cannot read. */
		char *parsed = hp_test_sh_out(
			"/usr/bin/python3 -c 'import sys\n"
			"from prometheus_client.parser import text_string_to_metric_families as f\n"
			"for m in f(open(sys.argv[1]).read()):\n"
			"    for s in m.samples: print(m.type, s.name, int(s.value))' %s 2>&1",
			file);
		if (parsed) {
			char want[256];
			snprintf(want, sizeof want, "gauge heapprof_heap_inuse_bytes %d\n",
				 FIRST_N * FIRST_SIZE + SECOND_N * SECOND_SIZE);
			expect_true(strstr(parsed, want) != NULL, "the heap in use, exactly");
			snprintf(want, sizeof want, "counter heapprof_allocations_total %d\n",
				 FIRST_N + SECOND_N);
			expect_true(strstr(parsed, want) != NULL, "allocations, a counter");
			snprintf(want, sizeof want, "gauge heapprof_heap_peak_bytes %d\n",
				 FIRST_N * FIRST_SIZE + SECOND_N * SECOND_SIZE);
			expect_true(strstr(parsed, want) != NULL, "the peak");
			expect_true(strstr(parsed, "gauge heapprof_rss_bytes ") != NULL, "RSS");
			if (!strstr(parsed, "heapprof_heap_inuse_bytes"))
				printf("%s", parsed);
			free(parsed);
		}
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* An idle program (blocked in read since it started) answers at once:
 * the dump signal's handler writes the snapshot itself. */
HP_TEST(serve_idle_program_answers)
{
	struct prog p;
	char u[256];
	uint64_t t;

	if (!start(&p, "idle", NULL))
		return;
	sleep(1);
	t = now_ms();
	expect_eq_u64(hp_test_sh("curl -sf -o /dev/null --max-time 20 '%s'",
				 url(&p, "/debug/pprof/heap", u, sizeof u)),
		      0, "an idle program answers");
	expect_true(now_ms() - t < 5000, "within seconds (no wait for an allocation)");
	expect_eq_u64(finish(&p), 0, "ends well");
}

HP_TEST(serve_twenty_concurrent_requests)
{
	struct prog p;
	char u[256];

	if (!hp_test_need_go() || !start(&p, "many", NULL))
		return;
	command(&p, 's');
	expect_eq_u64(hp_test_sh("cd %s && rm -f c*.fail; for i in $(seq 20); do "
				 "(curl -sf --max-time 60 -o c$i.pb.gz '%s' || touch c$i.fail) & "
				 "done; wait; ! ls c*.fail 2>/dev/null",
				 hp_test_tmp(), url(&p, "/debug/pprof/heap", u, sizeof u)),
		      0, "20 requests at once all succeed");
	for (int i = 1; i <= 20; i++) {
		char *out = hp_test_sh_out("go tool pprof -top -unit=B -sample_index=inuse_space "
					   "-nodefraction=0 %s/c%d.pb.gz 2>&1",
					   hp_test_tmp(), i);
		int found;
		if (!out)
			continue;
		expect_eq_u64((uint64_t)hp_test_pprof_column(out, "waiter_second", 0, &found),
			      SECOND_N * SECOND_SIZE, "each answer is whole and the same");
		free(out);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

HP_TEST(serve_malformed_requests)
{
	struct prog p;
	char big[HP_HTTP_BIG];
	char *r;

	if (!start(&p, "malformed", NULL))
		return;
	static const struct {
		const char *req, *want, *why;
	} cases[] = {
		{"GARBAGE\r\n\r\n", "HTTP/1.1 400 ", "no method, path and version"},
		{"POST /debug/pprof/heap HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "HTTP/1.1 405 ",
		 "only GET and HEAD"},
		{"GET /debug/pprof/heap HTTP/2.0\r\n\r\n", "HTTP/1.1 505 ", "HTTP/1.x only"},
		{"GET /../../etc/passwd HTTP/1.1\r\n\r\n", "HTTP/1.1 404 ", "no file is served"},
		{"GET /debug/pprof/heap?seconds=abc HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ",
		 "seconds is a number"},
		{"GET /debug/pprof/heap?seconds=99999 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ",
		 "seconds is bounded"},
		{"GET /debug/pprof/he%zzap HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ", "a bad escape"},
		{"GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n", "HTTP/1.1 408 ",
		 "a request cut short: answered within the time bound"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		r = exchange(p.port, cases[i].req, strlen(cases[i].req), 10000);
		if (!expect_true(strncmp(r, cases[i].want, strlen(cases[i].want)) == 0,
				 cases[i].why))
			printf("request %zu answered: %.80s\n", i, r);
		free(r);
	}
	/* Headers past the bound: refused, never read on. */
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	memset(big + 19, 'a', sizeof big - 19);
	r = exchange(p.port, big, sizeof big, 10000);
	expect_true(strncmp(r, "HTTP/1.1 413 ", 13) == 0 || !*r, "headers too large: refused");
	free(r);
	/* A client that connects and says nothing is let go. */
	uint64_t t = now_ms();
	r = exchange(p.port, "", 0, 15000);
	expect_true(now_ms() - t < 12000, "a silent client is closed within the bound");
	free(r);
	/* And the server still answers. */
	r = exchange(p.port, "GET /debug/pprof/heap HTTP/1.1\r\n\r\n", 34, 20000);
	expect_true(strncmp(r, "HTTP/1.1 200 ", 13) == 0, "then a good request is served");
	free(r);
	expect_eq_u64(finish(&p), 0, "ends well");
}

HP_TEST(serve_port_taken_still_runs_the_program)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char cmd[8192];

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!expect_true(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
				 listen(fd, 1) == 0 &&
				 getsockname(fd, (struct sockaddr *)&a, &len) == 0,
			 "a port taken by the test"))
		return;
	snprintf(cmd, sizeof cmd,
		 "echo q | %s/heapprof run -o %s/taken.hpf --http 127.0.0.1:%u -- "
		 "%s/tests/programs/waiter >%s/taken.out 2>%s/taken.err",
		 hp_test_build(), hp_test_tmp(), ntohs(a.sin_port), hp_test_build(), hp_test_tmp(),
		 hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s", cmd), 0, "the program runs and ends well all the same");
	expect_eq_u64(hp_test_sh("grep -q 'cannot listen on 127.0.0.1:%u: Address already in use' "
				 "%s/taken.err",
				 ntohs(a.sin_port), hp_test_tmp()),
		      0, "heapprof says it cannot listen, and why");
	expect_eq_u64(hp_test_sh("grep -q ready %s/taken.out", hp_test_tmp()), 0,
		      "the program ran");
	struct hp_capture *cap = hpq_load(strcat(strcpy(cmd, hp_test_tmp()), "/taken.hpf"));
	if (expect_true(cap != NULL, "and was recorded")) {
		expect_eq_u64(hpq_match(cap, (const char *const[]){"waiter_first", NULL})
				      .alloc_count,
			      FIRST_N, "its allocations");
		hpq_free(cap);
	}
	close(fd);
}

/* heapprof serve --pid on a program started with LD_PRELOAD by hand. */
HP_TEST(serve_pid_of_a_preloaded_program)
{
	struct prog p;
	char waiter[4200], lib[4200], out[4300], heapprof[4200], pidtext[32], preload[4300];
	char *argv[] = {waiter, NULL};
	char *env[] = {preload, out, "PATH=/usr/bin:/bin", NULL};

	if (!hp_test_need_go())
		return;
	memset(&p, 0, sizeof p);
	snprintf(waiter, sizeof waiter, "%s/tests/programs/waiter", hp_test_build());
	snprintf(lib, sizeof lib, "%s/libheapprof.so", hp_test_build());
	snprintf(p.hpf, sizeof p.hpf, "%s/bypid.hpf", hp_test_tmp());
	snprintf(p.err, sizeof p.err, "%s/bypid.prog.err", hp_test_tmp());
	snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
	snprintf(out, sizeof out, "HEAPPROF_OUTPUT=%s", p.hpf);
	unlink(p.hpf);
	p.pid = spawn(&p, argv, env);
	if (!expect_true(p.pid > 0 && wait_for(p.ack, "ready\n", 10000), "the program runs"))
		return;
	snprintf(heapprof, sizeof heapprof, "%s/heapprof", hp_test_build());
	snprintf(pidtext, sizeof pidtext, "%d", (int)p.pid);
	snprintf(p.err, sizeof p.err, "%s/bypid.err", hp_test_tmp());
	p.server = fork();
	if (p.server == 0) {
		int e = open(p.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		execl(heapprof, heapprof, "serve", "--pid", pidtext, "--http", "127.0.0.1:0",
		      (char *)NULL);
		_exit(127);
	}
	p.port = port_of(p.err, 10000);
	if (expect_true(p.port > 0, "heapprof serve says its port")) {
		expect_eq_u64(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_first"),
			      FIRST_N * FIRST_SIZE, "the program's heap");
		if (command(&p, 's'))
			expect_eq_u64(top(&p, "/debug/pprof/heap", "inuse_space", "waiter_second"),
				      SECOND_N * SECOND_SIZE, "and after it allocated more");
	}
	expect_eq_u64(finish(&p), 0, "the program ends well");
	expect_eq_u64(hp_test_sh("%s serve --pid %d 2>/dev/null", heapprof, (int)getpid()), 1,
		      "a process without the recorder is refused");
}

HP_TEST(serve_capture_of_now)
{
	struct prog p;
	char u[256], file[4200];

	if (!start(&p, "capture", NULL))
		return;
	snprintf(file, sizeof file, "%s/now.hpf", hp_test_tmp());
	if (command(&p, 's') &&
	    expect_eq_u64(hp_test_sh("curl -sf -o %s '%s'", file,
				     url(&p, "/debug/heapprof/capture", u, sizeof u)),
			  0, "GET /debug/heapprof/capture")) {
		struct hp_capture *cap = hpq_load(file);
		if (expect_true(cap != NULL, "a capture file")) {
			expect_eq_u64(cap->ndamage, 0, "whole");
			expect_true(cap->has_symbols, "with its symbols");
			expect_eq_u64(hpq_match(cap, (const char *const[]){"waiter_second", NULL})
					      .alloc_count,
				      SECOND_N, "as of now");
			hpq_free(cap);
		}
		/* Analysed where the program's binary is not. */
		char *rep =
			hp_test_sh_out("cd / && %s/heapprof report %s 2>&1", hp_test_build(), file);
		if (rep) {
			expect_true(strstr(rep, "waiter_second") && strstr(rep, "waiter.c:"),
				    "heapprof report reads it, symbolized");
			free(rep);
		}
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* The HTTP status of GET url as the user of prefix ("" for the test's
 * own), with extra curl options; the body into body (a file) when given. */
static int status_as(const char *prefix, const char *extra, const char *u, const char *body)
{
	char *out = hp_test_sh_out("%s curl -s %s -o %s -w '%%{http_code}' --max-time 30 '%s'",
				   prefix, extra, body ? body : "/dev/null", u);
	int st = out ? atoi(out) : -1;

	free(out);
	return st;
}

/* Who can read: a program run by root, whose capture is root's and 0600:
 * nobody is answered 403 on every endpoint, root 200, and go tool pprof
 * reads root's answer; a Host that names no local address is refused too
 * (a web page's name resolved to 127.0.0.1). */
HP_TEST(serve_only_to_the_capture_owner_and_root)
{
	static const char *const paths[] = {"/debug/pprof/heap", "/debug/heapprof/capture",
					    "/metrics", "/debug/pprof/",
					    "/debug/pprof/heap?debug=1"};
	struct prog p;
	char u[256];

	if (!expect_true(getuid() == 0, "run as root: the test needs a second user") ||
	    !hp_test_need("setpriv", "util-linux") || !hp_test_need("curl", "curl") ||
	    !hp_test_need_go() || !start(&p, "access", NULL))
		return;
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		char why[128];
		snprintf(why, sizeof why, "nobody: 403 for %s", paths[i]);
		expect_eq_u64(status_as(AS_NOBODY, "", url(&p, paths[i], u, sizeof u), NULL), 403,
			      why);
		snprintf(why, sizeof why, "root (the owner): 200 for %s", paths[i]);
		expect_eq_u64(status_as("", "", url(&p, paths[i], u, sizeof u), NULL), 200, why);
	}
	expect_eq_u64(hp_test_sh("%s curl -s '%s' | grep -q 'served only to uid 0, the owner of "
				 "its capture file (mode 0600), and root; this connection is "
				 "uid 65534'",
				 AS_NOBODY, url(&p, "/debug/heapprof/capture", u, sizeof u)),
		      0, "the 403 says who may read and who asked");
	expect_eq_u64(status_as("", "-H 'Host: attacker.example:80'",
				url(&p, "/debug/pprof/heap", u, sizeof u), NULL),
		      403, "a Host naming no local address: 403");
	expect_eq_u64(status_as("", "-H 'Host: localhost:1234'",
				url(&p, "/debug/pprof/heap", u, sizeof u), NULL),
		      200, "localhost is local");
	char *raw = hp_test_sh_out("go tool pprof -raw '%s' 2>&1",
				   url(&p, "/debug/pprof/heap", u, sizeof u));
	if (raw) {
		expect_eq_u64(raw_total(raw, "inuse_space"), FIRST_N * FIRST_SIZE,
			      "go tool pprof reads the owner's answer");
		free(raw);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* A program run by nobody: nobody (the capture's owner) and root are
 * served, another user (daemon) is not; go tool pprof reads what nobody
 * was given. */
HP_TEST(serve_a_users_program_to_that_user)
{
	struct prog p;
	char u[256], dir[256], file[4200];

	if (!expect_true(getuid() == 0, "run as root: the test needs two other users") ||
	    !hp_test_need("setpriv", "util-linux") || !hp_test_need("curl", "curl") ||
	    !hp_test_need_go())
		return;
	snprintf(dir, sizeof dir, "/tmp/hp-serve-%d", (int)getpid());
	hp_test_sh("rm -rf %s && mkdir -m 0700 %s && chown nobody:nogroup %s", dir, dir, dir);
	if (!start_with(&p, "nobody", NULL, "127.0.0.1:0", 0, 1, dir))
		goto out;
	snprintf(file, sizeof file, "%s/nobody.pb.gz", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s curl -sf -o - '%s' > %s", AS_NOBODY,
				 url(&p, "/debug/pprof/heap", u, sizeof u), file),
		      0, "nobody, the program's user, is served");
	expect_eq_u64(status_as(AS_DAEMON, "", url(&p, "/debug/heapprof/capture", u, sizeof u),
				NULL),
		      403, "daemon, another user: 403");
	expect_eq_u64(status_as(AS_DAEMON, "", url(&p, "/metrics", u, sizeof u), NULL), 403,
		      "daemon: 403 for /metrics");
	expect_eq_u64(status_as("", "", url(&p, "/debug/heapprof/capture", u, sizeof u), NULL), 200,
		      "root is served");
	char *raw = hp_test_sh_out("go tool pprof -raw %s 2>&1", file);
	if (raw) {
		expect_eq_u64(raw_total(raw, "inuse_space"), FIRST_N * FIRST_SIZE,
			      "go tool pprof reads nobody's answer");
		free(raw);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
out:
	hp_test_sh("rm -rf %s", dir);
}

/* An address that is not loopback is refused without --http-public (exit
 * status 2, before the program runs); with it, every user is served. */
HP_TEST(serve_public_address_needs_http_public)
{
	struct prog p;
	char u[256];

	if (!hp_test_need("setpriv", "util-linux") || !hp_test_need("curl", "curl"))
		return;
	expect_eq_u64(hp_test_sh("%s/heapprof run -o %s/pub.hpf --http 0.0.0.0:0 -- true "
				 "2>%s/pub.err",
				 hp_test_build(), hp_test_tmp(), hp_test_tmp()),
		      2, "0.0.0.0 without --http-public: a usage error");
	expect_eq_u64(hp_test_sh("grep -q 'cannot listen on 0.0.0.0:0: not a loopback address.*"
				 "--http-public' %s/pub.err && test $(wc -l < %s/pub.err) = 1",
				 hp_test_tmp(), hp_test_tmp()),
		      0, "said in one line, with the way out");
	if (!expect_true(getuid() == 0, "run as root: the test needs a second user") ||
	    !start_with(&p, "public", NULL, "0.0.0.0:0", 1, 0, NULL))
		return;
	expect_eq_u64(status_as(AS_NOBODY, "", url(&p, "/debug/pprof/heap", u, sizeof u), NULL),
		      200, "--http-public: nobody is served");
	expect_eq_u64(finish(&p), 0, "ends well");
}

/* A port free now (bound, then let go), for the forms of --http that name
 * one: PORT and :PORT. */
static unsigned free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* --http PORT and --http :PORT: the line heapprof prints gives a URL that
 * works, http://127.0.0.1:PORT/debug/pprof/, which curl fetches. */
HP_TEST(serve_banner_url_works)
{
	static const char *const forms[] = {"%u", ":%u"};

	if (!hp_test_need("curl", "curl"))
		return;
	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
		struct prog p;
		char addr[32], want[128], banner[4096] = "";
		unsigned port = free_port();
		snprintf(addr, sizeof addr, forms[i], port);
		if (!start_with(&p, i ? "banner2" : "banner1", NULL, addr, 0, 0, NULL))
			return;
		FILE *f = fopen(p.err, "r");
		size_t n = f ? fread(banner, 1, sizeof banner - 1, f) : 0;
		if (f)
			fclose(f);
		banner[n] = '\0';
		snprintf(want, sizeof want, "heapprof: serving http://127.0.0.1:%u/debug/pprof/ ",
			 port);
		if (!expect_true(strstr(banner, want) != NULL, "the banner names 127.0.0.1:PORT"))
			printf("--http %s: %s", addr, banner);
		expect_eq_u64(
			hp_test_sh("u=$(sed -n 's/^heapprof: serving \\([^ ]*\\) .*/\\1/p' %s) "
				   "&& curl -sf -o /dev/null \"${u}heap\"",
				   p.err),
			0, "curl fetches the printed URL's heap");
		expect_eq_u64(finish(&p), 0, "ends well");
	}
}

/* The capture's size and snapshot count now. */
static void capture_now(const char *hpf, uint64_t *bytes, size_t *snaps)
{
	struct hp_capture cap;
	char err[256];
	struct stat st;

	*bytes = stat(hpf, &st) == 0 ? (uint64_t)st.st_size : 0;
	*snaps = 0;
	if (hp_capture_load(hpf, &cap, err, sizeof err) == 0) {
		*snaps = cap.nsnapshots;
		hp_capture_free(&cap);
	}
}

/* 200 requests (50 at a time) add at most one snapshot a second to the
 * capture (serve.c: the endpoint's snapshots are rationed to one a second,
 * or 64 KiB a second for larger ones), not one each: the file's growth is
 * bounded by the time they took, not by their number; every request is
 * answered with the heap of now, and the capture still reads. */
HP_TEST(serve_requests_do_not_fill_the_disk)
{
	struct prog p;
	char u[256];
	uint64_t b0, b1, b2, t0, elapsed_ms;
	size_t n0, n1, n2, bound;

	if (!hp_test_need("curl", "curl") || !start(&p, "flood", NULL))
		return;
	url(&p, "/debug/pprof/heap?debug=1", u, sizeof u);
	/* Two requests: the second's growth is what one snapshot adds. */
	hp_test_sh("curl -sf -o /dev/null '%s'", u);
	capture_now(p.hpf, &b0, &n0);
	hp_test_sh("curl -sf -o /dev/null '%s'", u);
	capture_now(p.hpf, &b1, &n1);
	expect_eq_u64(n1, n0 + 1, "a request after a second one gets a snapshot of its own");
	t0 = now_ms();
	expect_eq_u64(hp_test_sh("seq 200 | xargs -P 50 -I{} curl -sf -o /dev/null --max-time 30 "
				 "'%s'",
				 u),
		      0, "all 200 requests are answered");
	elapsed_ms = now_ms() - t0;
	capture_now(p.hpf, &b2, &n2);
	bound = (size_t)(elapsed_ms / 1000) + 2;
	printf("  200 requests in %llu ms: %zu snapshots, %llu bytes added (one: %llu bytes)\n",
	       (unsigned long long)elapsed_ms, n2 - n1, (unsigned long long)(b2 - b1),
	       (unsigned long long)(b1 - b0));
	expect_true(n2 - n1 <= bound, "at most one snapshot a second (and one more)");
	expect_true(b2 - b1 <= bound * (b1 - b0), "bytes added: at most that many snapshots'");
	/* The heap of now all the same. */
	if (command(&p, 's')) {
		char *text = hp_test_sh_out("curl -sf '%s'", u);
		char want[128];
		snprintf(want, sizeof want, "heap profile: %6d: %8d", FIRST_N + SECOND_N,
			 FIRST_N * FIRST_SIZE + SECOND_N * SECOND_SIZE);
		expect_true(text && strncmp(text, want, strlen(want)) == 0,
			    "a request right after 's' sees it");
		free(text);
	}
	expect_eq_u64(finish(&p), 0, "ends well");
	struct hp_capture *cap = hpq_load(p.hpf);
	if (expect_true(cap != NULL, "the capture reads")) {
		expect_eq_u64(cap->ndamage, 0, "whole");
		hpq_free(cap);
	}
}

/* A counter's value in Prometheus text from url, -1 when not there. */
static long long metric_of(const char *u, const char *name)
{
	char *text = hp_test_sh_out("curl -sf '%s'", u), *at;
	char want[128];
	long long v = -1;

	snprintf(want, sizeof want, "\n%s ", name);
	if (text && (at = strstr(text, want)))
		v = atoll(at + strlen(want));
	free(text);
	return v;
}

/* heapprof serve --pid of a process heapprof attach records: it has no
 * dump signal, so each snapshot is asked for by a call to heapprof_dump()
 * in it. The heap is served as for a preloaded program, growing as it
 * allocates; after the detach a request says so (503); serve ends with the
 * program. tests/programs/attachee: threads that allocate steadily. */
HP_TEST(serve_an_attached_process)
{
	struct prog p;
	char prog[4200], heapprof[4200], cap[4200], aerr[4200], pidtext[32], u[256];
	char *argv[] = {prog, NULL};
	pid_t attach;
	uint64_t end;
	int attached = 0;

	if (!hp_test_need_go() || !hp_test_need("curl", "curl"))
		return;
	memset(&p, 0, sizeof p);
	snprintf(prog, sizeof prog, "%s/tests/programs/attachee", hp_test_build());
	snprintf(heapprof, sizeof heapprof, "%s/heapprof", hp_test_build());
	snprintf(cap, sizeof cap, "%s/attached.hpf", hp_test_tmp());
	snprintf(aerr, sizeof aerr, "%s/attached.attach.err", hp_test_tmp());
	snprintf(p.err, sizeof p.err, "%s/attached.prog.err", hp_test_tmp());
	unlink(cap);
	p.pid = spawn(&p, argv, NULL);
	if (!expect_true(p.pid > 0 && wait_for(p.ack, "ready", 10000), "attachee runs"))
		return;
	snprintf(pidtext, sizeof pidtext, "%d", (int)p.pid);
	attach = fork();
	if (attach == 0) {
		int e = open(aerr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		execl(heapprof, heapprof, "attach", "--sample-rate", "1", "-o", cap, pidtext,
		      (char *)NULL);
		_exit(127);
	}
	for (end = now_ms() + 30000; !attached && now_ms() < end; usleep(50000)) {
		char *t = hp_test_sh_out("cat %s", aerr);
		attached = t && strstr(t, "heapprof: attached to process");
		free(t);
	}
	if (!expect_true(attached, "heapprof attach records it"))
		goto out;
	snprintf(p.err, sizeof p.err, "%s/attached.serve.err", hp_test_tmp());
	p.server = fork();
	if (p.server == 0) {
		int e = open(p.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		execl(heapprof, heapprof, "serve", "--pid", pidtext, "--http", "127.0.0.1:0",
		      (char *)NULL);
		_exit(127);
	}
	p.port = port_of(p.err, 10000);
	if (!expect_true(p.port > 0, "heapprof serve serves an attached process")) {
		hp_test_sh("cat %s", p.err);
		goto out;
	}
	char *raw = hp_test_sh_out("go tool pprof -raw '%s' 2>&1",
				   url(&p, "/debug/pprof/heap", u, sizeof u));
	if (raw) {
		expect_true(strstr(raw, "kept_site") && strstr(raw, "attachee.c:"),
			    "go tool pprof reads its heap, symbolized");
		expect_true(raw_total(raw, "alloc_objects") > 0, "with its allocations");
		free(raw);
	}
	url(&p, "/metrics", u, sizeof u);
	long long before = metric_of(u, "heapprof_allocations_total");
	usleep(1200000);
	long long after = metric_of(u, "heapprof_allocations_total");
	expect_true(before > 0 && after > before, "a later request sees the allocations since");
	char file[4200];
	snprintf(file, sizeof file, "%s/attached-now.hpf", hp_test_tmp());
	if (expect_eq_u64(hp_test_sh("curl -sf -o %s '%s'", file,
				     url(&p, "/debug/heapprof/capture", u, sizeof u)),
			  0, "GET /debug/heapprof/capture")) {
		struct hp_capture *c = hpq_load(file);
		if (expect_true(c != NULL, "the capture of now loads")) {
			const struct hp_cap_snapshot *sn = hp_capture_last(c);
			expect_eq_u64(c->ndamage, 0, "whole");
			expect_true(sn && sn->reason == HP_SNAP_API,
				    "its last snapshot is heapprof_dump()'s");
			hpq_free(c);
		}
	}
	/* Detached (Ctrl-C to attach): the endpoint says so. */
	kill(attach, SIGINT);
	expect_eq_u64(reap(attach, 30000), 0, "heapprof attach detaches and exits 0");
	attach = 0;
	expect_eq_u64(hp_test_sh("o=$(curl -s -w '\\n%%{http_code}' '%s'); echo \"$o\" | grep -q "
				 "'no longer recorded' && [ \"$(echo \"$o\" | tail -n 1)\" = 503 ]",
				 url(&p, "/metrics", u, sizeof u)),
		      0, "after the detach: 503, no longer recorded");
out:
	if (attach > 0) {
		kill(attach, SIGINT);
		reap(attach, 30000);
	}
	if (write(p.cmd, "stop\n", 5) < 0)
		(void)0;
	close(p.cmd);
	/* Its counts go to p.ack: kept open until it has ended. */
	expect_eq_u64(reap(p.pid, 20000), 0, "the program ends well");
	close(p.ack);
	if (p.server)
		expect_eq_u64(reap(p.server, 20000), 0, "heapprof serve ends with the program");
}

/* heapprof attach --http: the attached process's live heap, served by
 * the attach itself until the detach (it was refused: "unknown option"). */
HP_TEST(attach_http_serves_while_attached)
{
	struct prog p;
	char prog[4200], heapprof[4200], cap[4200], pidtext[32], u[256];
	char *argv[] = {prog, NULL};
	pid_t attach;

	if (!hp_test_need_go() || !hp_test_need("curl", "curl"))
		return;
	memset(&p, 0, sizeof p);
	snprintf(prog, sizeof prog, "%s/tests/programs/attachee", hp_test_build());
	snprintf(heapprof, sizeof heapprof, "%s/heapprof", hp_test_build());
	snprintf(cap, sizeof cap, "%s/attachhttp.hpf", hp_test_tmp());
	snprintf(p.err, sizeof p.err, "%s/attachhttp.err", hp_test_tmp());
	unlink(cap);
	p.pid = spawn(&p, argv, NULL);
	if (!expect_true(p.pid > 0 && wait_for(p.ack, "ready", 10000), "attachee runs"))
		return;
	snprintf(pidtext, sizeof pidtext, "%d", (int)p.pid);
	attach = fork();
	if (attach == 0) {
		int e = open(p.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		execl(heapprof, heapprof, "attach", "--sample-rate", "1", "--http", "127.0.0.1:0",
		      "-o", cap, pidtext, (char *)NULL);
		_exit(127);
	}
	p.port = port_of(p.err, 30000);
	if (expect_true(p.port > 0, "heapprof attach --http serves")) {
		char *raw = hp_test_sh_out("go tool pprof -raw '%s' 2>&1",
					   url(&p, "/debug/pprof/heap", u, sizeof u));
		if (raw) {
			expect_true(strstr(raw, "kept_site") && strstr(raw, "attachee.c:"),
				    "go tool pprof reads its heap, symbolized");
			expect_true(raw_total(raw, "alloc_objects") > 0, "with its allocations");
			free(raw);
		}
		url(&p, "/metrics", u, sizeof u);
		long long before = metric_of(u, "heapprof_allocations_total");
		usleep(1200000);
		long long after = metric_of(u, "heapprof_allocations_total");
		expect_true(before > 0 && after > before, "a later request sees the allocations since");
	} else {
		hp_test_sh("cat %s", p.err);
	}
	kill(attach, SIGINT);
	expect_eq_u64(reap(attach, 30000), 0, "heapprof attach detaches and exits 0");
	expect_true(hp_test_sh("curl -s -m 2 '%s' > /dev/null", url(&p, "/metrics", u, sizeof u)) !=
			    0,
		    "the endpoint ends with the attach");
	if (write(p.cmd, "stop\n", 5) < 0)
		(void)0;
	close(p.cmd);
	expect_eq_u64(reap(p.pid, 20000), 0, "the program ends well");
	close(p.ack);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
