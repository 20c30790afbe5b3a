/*
 * run.c - `heapprof run`: start a program with the recorder preloaded,
 * wait for it, pass on its exit status, and say what was captured.
 *
 * Every option becomes a HEAPPROF_* variable in the program's environment
 * (docs/options.md), the same ones a user sets with LD_PRELOAD by hand.
 * The child reports the capture's path, or why exec failed, through a
 * close-on-exec pipe: EOF means the exec succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../analyzer/capture.h"
#include "../analyzer/embed.h"
#include "../analyzer/model.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof run [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Runs PROGRAM with the heapprof recorder and writes a capture file.\n"
	"\n"
	"  -o, --output FILE        capture file (default heapprof.PROGRAM.PID.hpf here);\n"
	"                           children get FILE with their pid before .hpf\n"
	"      --sample-rate BYTES  sample one allocation per BYTES on average (Poisson);\n"
	"                           1 (default) records every allocation\n"
	"      --unwind MODE        dwarf (default, libunwind) or fp (frame pointers)\n"
	"      --max-depth N        frames per stack, 1..256 (default 64)\n"
	"      --follow-fork        record forked children and programs they exec\n"
	"      --dump-signal SIG    signal that appends a snapshot (default USR2; NONE)\n"
	"      --interval MS        append a snapshot every MS milliseconds\n"
	"      --dump-every BYTES   append a snapshot every BYTES allocated\n"
	"      --dump-high-water BYTES  append one each time the peak grows by BYTES\n"
	"      --timeseries MS      heap/RSS sample period (default 10; 0 = off)\n"
	"      --seed N             fixed seed for sampling (reproducible runs)\n"
	"      --no-symbols         do not embed symbols in the capture at the end\n"
	"  -q, --quiet              no summary line, no recorder messages\n"
	"\n"
	"BYTES accept K, M and G suffixes (powers of 1024). Exit status: the\n"
	"program's, or 128+N when it died of signal N.\n";

/* Finds libheapprof.so: $HEAPPROF_LIB, beside this binary (the build
 * tree), or in ../lib/heapprof/ (an installed tree). */
static int find_recorder(char *out, size_t cap)
{
	char self[PATH_MAX - 64];
	const char *env = getenv("HEAPPROF_LIB");
	ssize_t n;
	char *slash;
	static const char *rel[] = {"/libheapprof.so", "/../lib/heapprof/libheapprof.so"};

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, R_OK) == 0 ? 0 : -errno;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s%s", self, rel[i]);
		if (realpath(path, out) && access(out, R_OK) == 0)
			return 0;
	}
	snprintf(out, cap, "%s/libheapprof.so", self);
	return -ENOENT;
}

/* Validates a BYTES argument the same way the recorder will read it. */
static int valid_number(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	(void)v;
	if (errno || end == s || *s == '-')
		return 0;
	if (*end && strchr("kKmMgG", *end))
		end++;
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	return *end == '\0';
}

struct opt_env {
	const char *name;   /* long option */
	const char *var;    /* HEAPPROF_ variable */
	int numeric;
};

static const struct opt_env options[] = {
	{"sample-rate", "HEAPPROF_SAMPLE_RATE", 1},
	{"unwind", "HEAPPROF_UNWIND", 0},
	{"max-depth", "HEAPPROF_MAX_DEPTH", 1},
	{"dump-signal", "HEAPPROF_DUMP_SIGNAL", 0},
	{"interval", "HEAPPROF_INTERVAL_MS", 1},
	{"dump-every", "HEAPPROF_DUMP_EVERY_BYTES", 1},
	{"dump-high-water", "HEAPPROF_DUMP_HIGH_WATER_BYTES", 1},
	{"timeseries", "HEAPPROF_TIMESERIES_MS", 1},
	{"seed", "HEAPPROF_SEED", 1},
};
#define NOPTS (sizeof options / sizeof *options)

/* In the child: picks the capture's path (never an existing file unless
 * named with -o), sets the environment, execs. Reports through fd. */
static void child(char **prog, const char *lib, const char *output, int fd)
{
	char path[PATH_MAX + 64], cwd[PATH_MAX];
	const char *pre = getenv("LD_PRELOAD");
	char *preload;
	int err;

	if (output) {
		if (output[0] == '/' || !getcwd(cwd, sizeof cwd))
			snprintf(path, sizeof path, "%s", output);
		else
			snprintf(path, sizeof path, "%s/%s", cwd, output);
	} else {
		const char *base = strrchr(prog[0], '/');
		base = base ? base + 1 : prog[0];
		if (!getcwd(cwd, sizeof cwd))
			strcpy(cwd, ".");
		snprintf(path, sizeof path, "%s/heapprof.%s.%d.hpf", cwd, base, (int)getpid());
		for (int i = 1; access(path, F_OK) == 0 && i < 1000; i++)
			snprintf(path, sizeof path, "%s/heapprof.%s.%d.%d.hpf", cwd, base,
				 (int)getpid(), i);
	}
	setenv("HEAPPROF_OUTPUT", path, 1);
	/* This process, after the exec, is the run's first recorded one: the
	 * recorder then needs no change to the program's environment. Its
	 * capture starts empty: an image that finds it non-empty is this
	 * process after a later exec, and appends. */
	snprintf(cwd, sizeof cwd, "%d", (int)getpid());
	setenv("HEAPPROF_OUTPUT_CLAIMED", cwd, 1);
	err = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (err >= 0)
		close(err);
	if (pre && *pre) {
		preload = malloc(strlen(lib) + strlen(pre) + 2);
		sprintf(preload, "%s:%s", lib, pre);
	} else {
		preload = strdup(lib);
	}
	setenv("LD_PRELOAD", preload, 1);
	if (write(fd, path, strlen(path) + 1) < 0)
		_exit(127);
	execvp(prog[0], prog);
	err = errno;
	dprintf(fd, "E%d", err);
	_exit(127);
}

static void summarize(const char *path, int quiet)
{
	struct hp_capture cap;
	char err[512], peak[32], rate[64] = "";
	const struct hp_cap_snapshot *s;
	uint64_t lost = 0, peak_bytes;

	if (hp_capture_load(path, &cap, err, sizeof err) < 0) {
		hp_cli_error("no usable capture: %s", err);
		return;
	}
	s = hp_capture_last(&cap);
	if (!s) {
		hp_cli_error("wrote %s, but it holds no snapshot (the program was killed before "
			     "one was written, or the recorder could not write it)", path);
		hp_capture_free(&cap);
		return;
	}
	for (int i = 1; i < HP_LOST_KINDS; i++)
		if (i != HP_LOST_UNKNOWN_FREE)
			lost += s->lost_count[i];
	peak_bytes = s->peak_bytes;
	if (cap.sample_rate_bytes > 1) {
		/* The snapshot's peak is raw: unbias its buckets, as the report does. */
		double est = 0;
		for (size_t i = 0; i < s->nbuckets; i++)
			est += (double)s->buckets[i].peak_bytes *
			       hp_model_unbias_scale(&s->buckets[i], cap.sample_rate_bytes);
		peak_bytes = (uint64_t)(est + 0.5);
		snprintf(rate, sizeof rate, " (sampled every %llu bytes)",
			 (unsigned long long)cap.sample_rate_bytes);
	}
	if (!quiet) {
		fprintf(stderr,
			"heapprof: wrote %s: %llu allocations%s, peak heap %s%s at %.3f s",
			path, (unsigned long long)s->alloc_count, rate,
			cap.sample_rate_bytes > 1 ? "~" : "",
			hp_cli_bytes(peak, sizeof peak, peak_bytes), (double)s->peak_time_ns / 1e9);
		if (lost)
			fprintf(stderr, ", %llu events not recorded (see heapprof inspect)",
				(unsigned long long)lost);
		fputc('\n', stderr);
	}
	if (cap.ndamage)
		hp_cli_error("%s is damaged: %s", path, cap.damage[0]);
	hp_capture_free(&cap);
}

int hp_cmd_run(int argc, char **argv)
{
	static struct option longopts[NOPTS + 6];
	char lib[PATH_MAX], path[PATH_MAX + 64] = "";
	const char *output = NULL;
	int quiet = 0, symbols = 1, fds[2], status, c, idx;
	pid_t pid;
	ssize_t n;
	size_t len = 0;
	struct sigaction ign = {0}, old_int, old_quit;

	for (size_t i = 0; i < NOPTS; i++)
		longopts[i] = (struct option){options[i].name, required_argument, NULL, 1000 + (int)i};
	longopts[NOPTS] = (struct option){"output", required_argument, NULL, 'o'};
	longopts[NOPTS + 1] = (struct option){"follow-fork", no_argument, NULL, 'f'};
	longopts[NOPTS + 2] = (struct option){"quiet", no_argument, NULL, 'q'};
	longopts[NOPTS + 3] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[NOPTS + 4] = (struct option){"no-symbols", no_argument, NULL, 'S'};

	/* '+': stop at the program's name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+o:qh", longopts, &idx)) != -1) {
		if (c >= 1000) {
			const struct opt_env *o = &options[c - 1000];
			if (o->numeric && !valid_number(optarg)) {
				hp_cli_error("run: --%s wants a number, not '%s'", o->name, optarg);
				return 2;
			}
			if (strcmp(o->name, "unwind") == 0 && strcmp(optarg, "dwarf") &&
			    strcmp(optarg, "fp")) {
				hp_cli_error("run: --unwind wants dwarf or fp, not '%s'", optarg);
				return 2;
			}
			setenv(o->var, optarg, 1);
			continue;
		}
		switch (c) {
		case 'o': output = optarg; break;
		case 'f': setenv("HEAPPROF_FOLLOW_FORK", "1", 1); break;
		case 'q': quiet = 1; setenv("HEAPPROF_QUIET", "1", 1); break;
		case 'S': symbols = 0; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		hp_cli_error("run: no program given (heapprof run [options] -- PROGRAM [ARGS...])");
		return 2;
	}
	if (find_recorder(lib, sizeof lib) < 0) {
		hp_cli_error("run: cannot find the recorder library %s (set HEAPPROF_LIB)", lib);
		return 2;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		hp_cli_error("run: pipe: %s", strerror(errno));
		return 2;
	}
	/* The terminal's ^C and ^\ go to the program; we wait for it to finish
	 * (and write its capture) rather than die first. */
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid = fork();
	if (pid < 0) {
		hp_cli_error("run: fork: %s", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(fds[0]);
		child(argv + optind, lib, output, fds[1]);
	}
	close(fds[1]);
	while ((n = read(fds[0], path + len, sizeof path - 1 - len)) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0)
			len += (size_t)n;
	close(fds[0]);
	path[len] = '\0';
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			hp_cli_error("run: waitpid: %s", strerror(errno));
			return 2;
		}
	}
	/* The child wrote "path\0" and, if exec failed, "E<errno>" after it. */
	size_t plen = strlen(path);
	if (plen + 1 < len && path[plen + 1] == 'E') {
		hp_cli_error("run: cannot run %s: %s", argv[optind],
			     strerror(atoi(path + plen + 2)));
		return 127;
	}
	/* Symbols now, while the binaries are surely the ones that ran: the
	 * capture can then travel. */
	if (symbols && access(path, F_OK) == 0) {
		struct hp_embed_result res;
		char err[512];
		if (hp_embed_symbols(path, NULL, &res, err, sizeof err) < 0 && !strstr(err, "no snapshot"))
			hp_cli_error("%s", err);
	}
	summarize(path, quiet);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
