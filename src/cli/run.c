/*
 * run.c - `heapprof run`: start a program with the recorder preloaded,
 * wait for it, pass on its exit status, and say what was captured.
 *
 * Every option becomes a HEAPPROF_* variable in the program's environment
 * (docs/options.md), the same ones a user sets with LD_PRELOAD by hand.
 * The child reports the capture's path, or why exec failed, through a
 * close-on-exec pipe: EOF means the exec succeeded.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../format/capture.h"
#include "../analyzer/embed.h"
#include "../analyzer/model/model.h"
#include "../common/options.h"
#include "../common/units.h"
#include "../common/vec.h"
#include "cli.h"
#include "../live/http.h"
#include "../live/serve.h"

static const char usage[] =
	"usage: heapprof run [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Runs PROGRAM with the heapprof recorder and writes a capture file.\n"
	"\n"
	"  -o, --output FILE        capture file (default heapprof.PROGRAM.PID.hpf here);\n"
	"                           children get FILE with their pid before .hpf\n"
	"      --sample-rate BYTES  sample one allocation per BYTES on average (Poisson),\n"
	"                           up to 1024G; 1 (default) records every allocation\n"
	"      --unwind MODE        dwarf (default, libunwind) or fp (frame pointers)\n"
	"      --max-depth N        frames per stack, 1..256 (default 128); a deeper\n"
	"                           stack keeps its outermost quarter (main...) after\n"
	"                           a [frames cut] frame\n"
	"      --max-stacks N       distinct stacks recorded, 1..2097151 (default);\n"
	"                           allocations at further stacks are counted lost\n"
	"      --follow-fork        record forked children and programs they exec\n"
	"      --mmap               also record anonymous mmap/munmap/mremap and the\n"
	"                           program's brk/sbrk, as the heap \"mmap\"\n"
	"      --dump-signal SIG    signal that appends a snapshot: USR1, USR2 (default),\n"
	"                           HUP, PROF, WINCH, URG, a number, or NONE\n"
	"      --interval MS        append a snapshot every MS milliseconds (up to a day;\n"
	"                           further apart when writing them takes >5% of the run)\n"
	"      --dump-every BYTES   append a snapshot every BYTES allocated\n"
	"      --dump-high-water BYTES  append one each time the peak grows by BYTES\n"
	"      --timeseries MS      heap/RSS sample period: default 10, 0 off, max 60000\n"
	"      --timeline MS        site timeline period: default 100, 0 off, max 60000\n"
	"      --live-blocks        each snapshot lists every live block (address, size,\n"
	"                           stack) and the mappings holding the heap, with their\n"
	"                           RSS: heapprof report --map\n"
	"      --events             the event log: every allocation and free with its\n"
	"                           time, thread, address, size and stack (about 3 bytes\n"
	"                           an event): report --blocks, --lived-under/-over,\n"
	"                           --between, --thread\n"
	"      --seed N             fixed seed for sampling (reproducible runs)\n"
	"      --no-symbols         do not embed symbols in the capture at the end\n"
	"      --no-symbol-cache    read every symbol from the binaries, store none\n"
	"                           (the cache: HEAPPROF_CACHE_DIR, docs/options.md)\n"
	"      --http ADDR          serve the live heap while it runs, as Go programs do:\n"
	"                           go tool pprof http://127.0.0.1:PORT/debug/pprof/heap\n"
	"                           (ADDR: PORT, :PORT or a loopback HOST:PORT), to your\n"
	"                           user and root only, as the capture's 0600 allows\n"
	"                           (heapprof serve --help)\n"
	"      --http-public        serve every client that can connect, from any host\n"
	"                           (needed to listen on an address that is not loopback)\n"
	"  -q, --quiet              no summary line, no recorder messages\n"
	"  -v, --verbose            also say where the symbols came from\n"
	"\n"
	"BYTES accept K, M and G suffixes (powers of 1024).\n"
	"\n"
	"SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to heapprof go on\n"
	"to the program (the dump signal once its recorder catches it); heapprof\n"
	"waits for it and writes the capture.\n"
	"\n"
	"Exit status: the program's, or 128+N when it died of signal N; without\n"
	"running it: 2 for a wrong option, 125 when the capture file cannot be\n"
	"created, 126 when PROGRAM is a directory, not executable, or set-user-ID\n"
	"or set-group-ID (the loader would not preload the recorder), or statically\n"
	"linked without the recorder (pkg-config heapprof-static), 127 when it\n"
	"cannot be found or started.\n";

int hp_cli_find_recorder(char *out, size_t cap)
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

/* --- signals sent to heapprof run ------------------------------------------
 *
 * `kill PID` of heapprof run must reach the program, as it does through
 * timeout(1) or strace(1): heapprof catches the signals a process is asked
 * to end or reload with and sends each on to the program, then goes on
 * waiting for it, writes what it has and exits with its status. A signal
 * the kernel sent (si_code SI_KERNEL: the terminal's ^C, ^\ and hangup,
 * which reach the whole foreground process group and so the program
 * already) is not sent again. The dump signal is sent on only when the
 * program catches it (its recorder's handler is in place, /proc/PID/status
 * SigCgt): it then asks for a snapshot, as it would sent to the program;
 * before that, its default action would end the program. */
static const int forwarded_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* The program's pid while it may be signalled: set after the fork (with
 * the signals blocked), cleared once it has ended and before it is
 * reaped, so that a signal never reaches a process that reused its pid.
 * forward_dump is the dump signal (0: none). Written by the main thread,
 * read by the handler. */
static volatile sig_atomic_t forward_pid;
static volatile sig_atomic_t forward_dump;

/* Whether process pid catches sig now, from SigCgt in /proc/PID/status.
 * Async-signal-safe (open, read, close; no stdio, no allocation). */
static int catches_signal(pid_t pid, int sig)
{
	char path[32] = "/proc/", buf[4096], *p = path + 6, *q;
	char digits[16];
	int n = 0, fd;
	ssize_t len;
	unsigned long long mask = 0;

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	while (n)
		*p++ = digits[--n];
	memcpy(p, "/status", 8);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	q = strstr(buf, "\nSigCgt:");
	if (!q)
		return 0;
	for (q += 8; *q == '\t' || *q == ' '; q++)
		;
	for (; (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'); q++)
		mask = mask << 4 | (unsigned)(*q <= '9' ? *q - '0' : *q - 'a' + 10);
	return (mask >> (sig - 1)) & 1;
}

/* The handler of forwarded_signals. Async-signal-safe; keeps errno. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	pid_t pid = forward_pid;

	(void)uc;
	if (pid > 0 && si->si_code != SI_KERNEL &&
	    (sig != forward_dump || catches_signal(pid, sig)))
		kill(pid, sig);
	errno = saved;
}

/* heapprof run's own exit statuses (otherwise the program's). */
enum {
	RUN_USAGE = 2,        /* a wrong option or value */
	RUN_NO_CAPTURE = 125, /* the capture file cannot be created */
	RUN_CANNOT_RUN = 126, /* a directory, not executable, or setuid/setgid */
	RUN_NOT_FOUND = 127,  /* the program cannot be found or started */
};

/* Creates the capture's file before the program runs, so that a capture
 * that cannot be written stops the run before it starts: a new file is
 * created empty (the recorder, finding it empty, takes it over); an
 * existing one, which only -o may name, is made 0600 (an existing file
 * keeps its mode through O_TRUNC, and a capture holds the program's
 * arguments), then emptied. Never through a symbolic link. Returns 1 when
 * a new file was created, 0 when an existing one was emptied, or -errno;
 * *private_err is set when it is fchmod that failed (the file is then left
 * as it was). */
static int claim_output(const char *path, int named, int *private_err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int created = fd >= 0, err;
	struct stat st;

	*private_err = 0;
	/* O_NONBLOCK: a FIFO without a reader fails instead of hanging. */
	if (fd < 0 && errno == EEXIST && named)
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!created && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0) {
			err = errno;
			*private_err = 1;
			close(fd);
			return -err;
		}
		if (ftruncate(fd, 0) < 0) {
			err = errno;
			close(fd);
			return -err;
		}
	}
	close(fd);
	return created;
}

/* What execvp(name) would run: name itself when it holds a '/', else the
 * first file of that name along $PATH that is executable, else the first
 * of that name at all (which execvp would refuse). Returns 0 with its path
 * and stat, or -ENOENT. */
static int resolve_program(const char *name, char *out, size_t cap, struct stat *st)
{
	const char *dirs = getenv("PATH"), *p, *end;
	int found = 0;

	if (strchr(name, '/')) {
		snprintf(out, cap, "%s", name);
		return stat(out, st) == 0 ? 0 : -ENOENT;
	}
	if (!dirs)
		dirs = "/bin:/usr/bin"; /* glibc's default */
	for (p = dirs; *name; p = end + 1) {
		char path[PATH_MAX];
		struct stat s;
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		/* An empty entry is the current directory. */
		snprintf(path, sizeof path, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", name);
		if (stat(path, &s) == 0) {
			int runnable = S_ISREG(s.st_mode) && access(path, X_OK) == 0;
			if (runnable || !found) {
				snprintf(out, cap, "%s", path);
				*st = s;
				found = 1;
			}
			if (runnable)
				return 0;
		}
		if (!*end)
			break;
	}
	return found ? 0 : -ENOENT;
}

/* Whether the program at path is statically linked (no PT_INTERP, no
 * PT_DYNAMIC: the loader never runs, LD_PRELOAD does nothing) and, if so,
 * whether the static recorder is linked in: its note, "heapprof" in a
 * PT_NOTE segment (src/recorder/interpose.c), which strip keeps. Returns 1
 * for a static program with the recorder, 0 for one without, -1 for
 * anything else (a dynamic program, a script, an unreadable file, not
 * ELF64: left to the loader as before). A static-pie (PT_DYNAMIC, no
 * PT_INTERP) is not told from the loader itself run as a program: -1. */
static int static_recorder(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), dynamic = 0, note = 0;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof ph)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) !=
		    (ssize_t)sizeof ph)
			goto out;
		if (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC)
			dynamic = 1;
		else if (ph.p_type == PT_NOTE && ph.p_filesz <= 1 << 16 && !note) {
			/* Each note: namesz, descsz, type, then the name and
			 * the descriptor, each padded to 4 bytes. */
			unsigned char buf[1 << 16];
			size_t at = 0, n = (size_t)ph.p_filesz;
			if (pread(fd, buf, n, (off_t)ph.p_offset) != (ssize_t)n)
				goto out;
			while (at + 12 <= n) {
				Elf64_Nhdr nh;
				memcpy(&nh, buf + at, sizeof nh);
				at += sizeof nh;
				if (nh.n_namesz == 9 && at + 9 <= n && memcmp(buf + at, "heapprof", 9) == 0)
					note = 1;
				at += ((size_t)nh.n_namesz + 3) / 4 * 4 + ((size_t)nh.n_descsz + 3) / 4 * 4;
			}
		}
	}
	close(fd);
	return dynamic ? -1 : note;
out:
	close(fd);
	return -1;
}

/* Refuses, in one line, a program the recorder cannot be preloaded into:
 * a directory, a file that is not executable, and a set-user-ID or
 * set-group-ID program that would change identity (the loader ignores
 * LD_PRELOAD for those, so the run would record nothing). A program that
 * is not found is left to execvp, which says so. A statically linked
 * program without the static recorder is refused too (the capture would
 * stay empty); one with it linked in runs as any other, reading
 * HEAPPROF_OUTPUT and the rest (LD_PRELOAD, useless to it, still reaches
 * the dynamic programs it execs). Returns 0, or -EISDIR, -EACCES or -EPERM
 * after saying why. */
static int check_program(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (resolve_program(name, path, sizeof path, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		hp_say_error("run: cannot run %s: it is a directory", path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
		hp_say_error("run: cannot run %s: it is not an executable file", path);
		return -EACCES;
	}
	if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getgid())) {
		hp_say_error("run: cannot record %s: it is set-%s-ID, and the loader ignores "
			     "LD_PRELOAD for such programs (record a copy without the bit)",
			     path, st.st_mode & S_ISUID ? "user" : "group");
		return -EPERM;
	}
	if (static_recorder(path) == 0) {
		hp_say_error("run: cannot record %s: statically linked without the recorder: "
			     "link it with pkg-config heapprof-static, or use a dynamic build",
			     path);
		return -EPERM;
	}
	return 0;
}

/* In the child: picks the capture's path (never an existing file unless
 * named with -o), creates it, sets the environment, execs. Reports
 * through fd: the path and a NUL, then 'N' when the file is new, then
 * "C<errno>" when it cannot be created or "M<errno>" when an existing one
 * cannot be made 0600 (and exits without running the program), or
 * "E<errno>" when exec failed. */
static void child(char **prog, const char *lib, const char *output, int fd)
{
	char path[PATH_MAX + 64], cwd[PATH_MAX];
	const char *pre = getenv("LD_PRELOAD");
	char *preload;
	int err, private_err = 0;

	if (output) {
		int n;
		if (output[0] == '/' || !getcwd(cwd, sizeof cwd))
			n = snprintf(path, sizeof path, "%s", output);
		else
			n = snprintf(path, sizeof path, "%s/%s", cwd, output);
		/* A path cut to fit would name another file: never created. */
		err = n < 0 || (size_t)n >= sizeof path ? -ENAMETOOLONG
							: claim_output(path, 1, &private_err);
	} else {
		const char *base = strrchr(prog[0], '/');
		base = base ? base + 1 : prog[0];
		if (!getcwd(cwd, sizeof cwd))
			strcpy(cwd, ".");
		snprintf(path, sizeof path, "%s/heapprof.%s.%d.hpf", cwd, base, (int)getpid());
		err = claim_output(path, 0, &private_err);
		for (int i = 1; err == -EEXIST && i < 1000; i++) {
			snprintf(path, sizeof path, "%s/heapprof.%s.%d.%d.hpf", cwd, base,
				 (int)getpid(), i);
			err = claim_output(path, 0, &private_err);
		}
	}
	if (write(fd, path, strlen(path) + 1) < 0)
		_exit(RUN_NOT_FOUND);
	if (err < 0) {
		dprintf(fd, "%c%d", private_err ? 'M' : 'C', -err);
		_exit(RUN_NO_CAPTURE);
	}
	if (err == 1 && write(fd, "N", 1) < 0)
		_exit(RUN_NOT_FOUND);
	setenv("HEAPPROF_OUTPUT", path, 1);
	/* This process, after the exec, is the run's first recorded one: the
	 * recorder then needs no change to the program's environment. Its
	 * capture starts empty (claim_output): an image that finds it
	 * non-empty is this process after a later exec, and appends. */
	snprintf(cwd, sizeof cwd, "%d", (int)getpid());
	setenv("HEAPPROF_OUTPUT_CLAIMED", cwd, 1);
	if (pre && *pre) {
		preload = malloc(strlen(lib) + strlen(pre) + 2);
		sprintf(preload, "%s:%s", lib, pre);
	} else {
		preload = strdup(lib);
	}
	setenv("LD_PRELOAD", preload, 1);
	/* bash sets $_ to the command it runs: heapprof, here. Where it
	 * names heapprof, the program sees what bash would have set for it
	 * (other shells leave $_ as they found it, and so do we). */
	const char *underscore = getenv("_");
	char self[PATH_MAX], named[PATH_MAX], found[PATH_MAX];
	struct stat st;
	if (underscore && realpath("/proc/self/exe", self) && realpath(underscore, named) &&
	    strcmp(self, named) == 0 && resolve_program(prog[0], found, sizeof found, &st) == 0)
		setenv("_", found, 1);
	execvp(prog[0], prog);
	err = errno;
	dprintf(fd, "E%d", err);
	_exit(RUN_NOT_FOUND);
}

/* Removes the file claim_output created when it is still empty: the
 * program did not start, or the recorder never wrote. */
static void unclaim_output(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

/* What the wait status says became of the program: "exited with status
 * 3", "was killed by signal 9 (SIGKILL)". */
static const char *how_it_ended(char *buf, size_t cap, int status)
{
	if (WIFEXITED(status)) {
		snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(status));
		snprintf(buf, cap, "was killed by signal %d (SIG%s)", WTERMSIG(status),
			 abbrev ? abbrev : "?");
	} else {
		snprintf(buf, cap, "ended with wait status 0x%x", (unsigned)status);
	}
	return buf;
}

/* The roster of a run under --follow-fork: each recorded process appends
 * "PID run PROGRAM" when it starts recording and "PID exec" when it
 * execs (src/recorder/recorder.c, enlist), so that one that dies before
 * writing a capture is still named. The file is heapprof's own, in
 * $TMPDIR, removed when the run ends. */
static char roster_path[PATH_MAX];

static void roster_remove(void)
{
	if (roster_path[0])
		unlink(roster_path);
}

/* Makes the roster and names it to the recorder (HEAPPROF_ROSTER); a run
 * without one names only the processes that wrote. */
static void roster_make(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(roster_path, sizeof roster_path, "%s/heapprof-roster.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(roster_path);
	if (fd < 0) {
		hp_say_error("run: cannot make the roster of processes in %s (%s): a process "
			     "that dies before writing will go unnamed", roster_path, strerror(errno));
		roster_path[0] = '\0';
		return;
	}
	close(fd);
	setenv("HEAPPROF_ROSTER", roster_path, 1);
	atexit(roster_remove);
}

struct enlisted {
	long pid;
	char *program; /* what it ran when it enlisted last */
	int execd;     /* its last line: it exec'd after that */
	int wrote;     /* a capture of it was found */
};

/* The roster's processes, each once, in the order they enlisted; *n set.
 * Lines that do not parse are passed over. NULL when there is none. */
static struct enlisted *roster_read(size_t *n)
{
	FILE *f = roster_path[0] ? fopen(roster_path, "r") : NULL;
	struct enlisted *e = NULL;
	size_t cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;

	*n = 0;
	if (!f)
		return NULL;
	while ((len = getline(&line, &lcap, f)) > 0) {
		char *end, *what;
		long pid = strtol(line, &end, 10);
		size_t i;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (end == line || *end != ' ' || pid <= 0)
			continue;
		what = end + 1;
		for (i = 0; i < *n && e[i].pid != pid; i++)
			;
		if (strncmp(what, "run ", 4) == 0) {
			if (i == *n) {
				if (hp_vec_grow(&e, &cap, *n + 1))
					break;
				memset(&e[(*n)++], 0, sizeof *e);
				e[i].pid = pid;
			}
			free(e[i].program);
			e[i].program = strdup(what + 4);
			e[i].execd = 0;
		} else if (strcmp(what, "exec") == 0 && i < *n) {
			e[i].execd = 1;
		}
	}
	free(line);
	fclose(f);
	return e;
}

/* The end-of-run line: what the capture holds, from its last snapshot,
 * and, when that is not the program's end (no exit snapshot, no snapshot
 * at all), what became of the program, from its wait status. prog names
 * the program when the capture does not. */
/* Under --follow-fork, the captures of the run's other processes:
 * PATH.PID.hpf (PATH without its .hpf), written since the run started.
 * Embeds their symbols (with symbols) and names each on stderr, after the
 * program its process ran. */
static void children(const char *path, time_t since, int symbols, int quiet,
		     const struct hp_embed_options *eo, int verbose)
{
	char pattern[PATH_MAX + 64], err[512];
	size_t len = strlen(path), nroster = 0;
	struct enlisted *roster = roster_read(&nroster);
	glob_t g = {0};

	if (len > 4 && strcmp(path + len - 4, ".hpf") == 0)
		len -= 4;
	snprintf(pattern, sizeof pattern, "%.*s.[0-9]*.hpf", (int)len, path);
	if (glob(pattern, 0, NULL, &g) != 0)
		g.gl_pathc = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *child = g.gl_pathv[i];
		struct hp_embed_result res;
		struct hp_capture cap;
		struct stat st;

		if (lstat(child, &st) < 0 || !S_ISREG(st.st_mode) || st.st_mtime < since)
			continue;
		/* With a roster, only its processes' captures: not an earlier
		 * run's of the same second (PATH.PID.hpf or PATH.PID.N.hpf). */
		if (roster_path[0]) {
			long pid = strtol(child + len + 1, NULL, 10);
			size_t k = 0;
			while (k < nroster && roster[k].pid != pid)
				k++;
			if (k == nroster)
				continue;
		}
		if (symbols) {
			int ret = hp_embed_symbols_with(child, eo, &res, err, sizeof err);
			if (ret < 0 && ret != -ENODATA)
				hp_say_error("%s", err);
			if (ret == 0 && verbose)
				hp_cli_say_symbols(child, &res);
		}
		if (hp_capture_load(child, &cap, err, sizeof err) < 0)
			continue;
		for (size_t k = 0; k < nroster; k++)
			if ((uint64_t)roster[k].pid == cap.pid)
				roster[k].wrote = 1;
		if (!quiet) {
			const struct hp_cap_snapshot *last = hp_capture_last(&cap);
			char fate[96] = " (no snapshot)";
			if (last && last->reason == HP_SNAP_FATAL) {
				const char *abbrev = sigabbrev_np((int)last->signo);
				snprintf(fate, sizeof fate, ", killed by signal %llu (SIG%s)",
					 (unsigned long long)last->signo, abbrev ? abbrev : "?");
			} else if (last && last->reason == HP_SNAP_EXIT) {
				snprintf(fate, sizeof fate, ", exited");
			} else if (last && last->reason == HP_SNAP_EXEC) {
				snprintf(fate, sizeof fate, ", then exec'd");
			} else if (last) {
				snprintf(fate, sizeof fate, " (its last snapshot at %.3f s; no "
					 "word of its end)", (double)last->time_ns / 1e9);
			}
			fprintf(stderr, "heapprof: wrote %s: %s, pid %llu%s\n", child,
				cap.has_meta ? hp_model_program_name(&cap) : "(no META)",
				(unsigned long long)cap.pid, fate);
		}
		hp_capture_free(&cap);
	}
	globfree(&g);
	/* The recorded processes that wrote nothing: a fork child or program
	 * that only exec'd one the recorder cannot enter (static, setuid), or
	 * one killed by a signal no handler sees (SIGKILL, the OOM killer). */
	for (size_t k = 0; k < nroster; k++) {
		const char *prog = roster[k].program ? roster[k].program : "?";
		const char *base = strrchr(prog, '/');
		if (!roster[k].wrote && !quiet)
			fprintf(stderr,
				roster[k].execd
					? "heapprof: pid %ld (%s) wrote no capture: it exec'd a program "
					  "the recorder could not enter (static, or setuid)\n"
					: "heapprof: pid %ld (%s) wrote no capture: it was killed by a "
					  "signal no handler sees (SIGKILL, the OOM killer)\n",
				roster[k].pid, base ? base + 1 : prog);
		free(roster[k].program);
	}
	free(roster);
}

/* Says on stderr what the run wrote. loaded: path as read already (by the
 * symbols' embedding), which summarize frees, or NULL to read it here. */
static void summarize(const char *path, struct hp_capture *loaded, const char *prog, int status,
		      int quiet)
{
	struct hp_capture cap;
	char err[512], peak[32], allocs[32], lost_text[32], rate[64] = "", ended[96];
	const struct hp_cap_snapshot *s;
	uint64_t lost = 0, peak_bytes;
	const char *name;

	how_it_ended(ended, sizeof ended, status);
	/* Lean (capture.h): the summary reads the last snapshot's figures and
	 * buckets; the stacks' frames interned, the timeline and histograms
	 * checked but not kept (the same damage is said as a full load's). */
	if (loaded)
		cap = *loaded;
	else if (hp_capture_load_flags(path,
					 HP_CAP_LOAD_INTERN | HP_CAP_LOAD_NO_TIMELINE |
						 HP_CAP_LOAD_NO_HISTOGRAMS,
					 &cap, err, sizeof err) < 0) {
		hp_say_error("no usable capture: %s (%s %s)", err, prog, ended);
		return;
	}
	name = cap.has_meta ? hp_model_program_name(&cap) : prog;
	s = hp_capture_last(&cap);
	if (!s) {
		if (WIFSIGNALED(status))
			hp_say_error("wrote %s, but it holds no snapshot: %s %s before one was "
				     "written", path, name, ended);
		else
			hp_say_error("wrote %s, but it holds no snapshot: %s %s without one (an "
				     "exec without --follow-fork, _exit, or a failed write)",
				     path, name, ended);
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
		peak_bytes = (uint64_t)hp_estimate_i64(est); /* est >= 0: clamped, never UB */
		snprintf(rate, sizeof rate, " (sampled every %llu bytes)",
			 (unsigned long long)cap.sample_rate_bytes);
	}
	if (!quiet) {
		fprintf(stderr,
			"heapprof: wrote %s: %s allocations%s, peak heap %s%s at %.3f s",
			path, hp_units_count_u64(allocs, sizeof allocs, s->alloc_count), rate,
			cap.sample_rate_bytes > 1 ? "~" : "",
			hp_units_bytes(peak, sizeof peak, (double)peak_bytes),
			(double)s->peak_time_ns / 1e9);
		if (lost)
			fprintf(stderr, ", %s events not recorded (see heapprof inspect)",
				hp_units_count_u64(lost_text, sizeof lost_text, lost));
		/* The last snapshot is the program's end when it is the exit's
		 * or a fatal signal's; otherwise say what ended the program and
		 * which moment the figures are from. */
		if (s->reason == HP_SNAP_FATAL && WIFSIGNALED(status))
			fprintf(stderr, "; %s %s", name, ended);
		else if (s->reason != HP_SNAP_EXIT && s->reason != HP_SNAP_FATAL)
			fprintf(stderr, "; %s %s %s: figures as of snapshot %llu (%s) at %.3f s", name,
				ended, WIFSIGNALED(status) ? "after its last snapshot"
							   : "without a final snapshot",
				(unsigned long long)s->seq, hp_capture_reason_name(s->reason),
				(double)s->time_ns / 1e9);
		/* What to do next, to copy. */
		fprintf(stderr, "; next: heapprof report %s\n", path);
	}
	if (cap.ndamage)
		hp_say_error("%s is damaged: %s", path, cap.damage[0]);
	hp_capture_free(&cap);
}

int hp_cmd_run(int argc, char **argv)
{
	/* The recorder's options (each a HEAPPROF_ variable, hp_cli_options),
	 * then heapprof run's own. */
	static const struct hp_cli_use uses[] = {
		{HP_OPT_SAMPLE_RATE, 0, 0, NULL},
		{HP_OPT_UNWIND, 0, 0, NULL},
		{HP_OPT_MAX_DEPTH, 0, 0, NULL},
		{HP_OPT_MAX_STACKS, 0, 0, NULL},
		{HP_OPT_DUMP_SIGNAL, 0, 0, NULL},
		{HP_OPT_INTERVAL, 0, 0, NULL},
		{HP_OPT_DUMP_EVERY, 0, 0, NULL},
		{HP_OPT_DUMP_HIGH_WATER, 0, 0, NULL},
		{HP_OPT_TIMESERIES, 0, 0, NULL},
		{HP_OPT_TIMELINE, 0, 0, NULL},
		{HP_OPT_LIVE_BLOCKS, 0, 0, NULL},
		{HP_OPT_EVENTS, 0, 0, NULL},
		{HP_OPT_SEED, 0, 0, NULL},
		{HP_OPT_OUTPUT, 0, 0, NULL},
		{HP_OPT_FOLLOW_FORK, 0, 0, NULL},
		{HP_OPT_MMAP, 0, 0, NULL},
		{HP_OPT_QUIET, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
		{HP_OPT_NO_SYMBOLS, 0, 0, NULL},
		{HP_OPT_NO_SYMBOL_CACHE, 0, 0, NULL},
		{HP_OPT_VERBOSE, 0, 0, NULL},
		{HP_OPT_HTTP, 0, 0, NULL},
		{HP_OPT_HTTP_PUBLIC, 0, 0, NULL},
	};
	struct hp_cli_args a;
	/* path: the child's report, its path (at most PATH_MAX + 64 bytes
	 * with the NUL, child()) then a status of a few bytes. */
	char lib[PATH_MAX], path[PATH_MAX + 128] = "", url[128] = "";
	const char *output;
	int quiet, symbols, fds[2], status, prog, lfd = -1, sig = SIGUSR2, verbose;
	struct hp_embed_options eo = {0};
	struct hp_capture cap;
	int loaded = 0;
	time_t started;
	unsigned port = 0;
	struct hp_server *srv = NULL;
	siginfo_t info;
	pid_t pid;
	ssize_t n;
	size_t len = 0;
	struct sigaction fwd = {0},
			 old_actions[sizeof forwarded_signals / sizeof *forwarded_signals];
	sigset_t block, old_mask;
	const char *dump_env;

	/* In order: stop at the program's name, its options are its own. */
	if (hp_cli_parse("run", usage, uses, sizeof uses / sizeof *uses, 1, argc, argv, &a))
		return RUN_USAGE;
	if (a.help)
		return 0;
	for (size_t i = 0; i < sizeof uses / sizeof *uses; i++) {
		const struct hp_cli_option *o = &hp_cli_options[uses[i].opt];
		if (o->var && a.given[uses[i].opt])
			setenv(o->var, o->kind == HP_CLI_FLAG ? "1" : a.value[uses[i].opt], 1);
	}
	output = a.value[HP_OPT_OUTPUT];
	quiet = a.given[HP_OPT_QUIET];
	symbols = !a.given[HP_OPT_NO_SYMBOLS];
	eo.no_symbol_cache = a.given[HP_OPT_NO_SYMBOL_CACHE];
	verbose = a.given[HP_OPT_VERBOSE];
	prog = a.operand; /* argv[prog] is the program */
	if (prog >= argc) {
		hp_say_error("run: no program given (heapprof run [options] -- PROGRAM [ARGS...])");
		return RUN_USAGE;
	}
	if (check_program(argv[prog]) < 0)
		return RUN_CANNOT_RUN;
	if (a.given[HP_OPT_HTTP] && a.given[HP_OPT_DUMP_SIGNAL]) {
		hp_option_parse_signal(a.value[HP_OPT_DUMP_SIGNAL], &sig); /* checked */
		if (!sig) {
			hp_say_error("run: --http asks the program for snapshots with its dump "
				     "signal: give one (--dump-signal NONE turns it off)");
			return RUN_USAGE;
		}
	}
	if (hp_cli_find_recorder(lib, sizeof lib) < 0) {
		hp_say_error("run: cannot find the recorder library %s (set HEAPPROF_LIB)", lib);
		return RUN_USAGE;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		hp_say_error("run: pipe: %s", strerror(errno));
		return RUN_USAGE;
	}
	/* Listening before the program starts: a port that cannot be had is
	 * said at once, and the program runs all the same, unserved; an
	 * address that is not loopback without --http-public is a usage
	 * error. */
	if (a.given[HP_OPT_HTTP_PUBLIC] && !a.given[HP_OPT_HTTP]) {
		hp_say_error("run: --http-public goes with --http ADDR");
		return RUN_USAGE;
	}
	if (a.given[HP_OPT_HTTP]) {
		int ret = hp_http_listen(a.value[HP_OPT_HTTP], a.given[HP_OPT_HTTP_PUBLIC], &lfd,
					 &port);
		if (ret == -EPERM)
			return RUN_USAGE;
		if (ret < 0)
			hp_say_error("run: running %s without the HTTP server", argv[prog]);
		else
			hp_http_url(lfd, url, sizeof url);
	}
	/* Signals sent to heapprof go on to the program (forward_signal); we
	 * wait for it to finish (and write its capture) rather than die
	 * first. Blocked across the fork, so that none arrives before the
	 * program's pid is known; the child puts back what it inherited. */
	dump_env = getenv("HEAPPROF_DUMP_SIGNAL");
	forward_dump = SIGUSR2; /* the recorder's default */
	if (dump_env && *dump_env) {
		int d;
		forward_dump = hp_option_parse_signal(dump_env, &d) == 0 ? d : 0;
	}
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof forwarded_signals / sizeof *forwarded_signals; i++)
		sigaddset(&block, forwarded_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	fwd.sa_sigaction = forward_signal;
	fwd.sa_flags = SA_SIGINFO; /* no SA_RESTART: the waits below loop on EINTR */
	sigfillset(&fwd.sa_mask);
	for (size_t i = 0; i < sizeof forwarded_signals / sizeof *forwarded_signals; i++)
		sigaction(forwarded_signals[i], &fwd, &old_actions[i]);
	if (a.given[HP_OPT_FOLLOW_FORK])
		roster_make();
	started = time(NULL);
	pid = fork();
	if (pid < 0) {
		hp_say_error("run: fork: %s", strerror(errno));
		return RUN_USAGE;
	}
	if (pid == 0) {
		for (size_t i = 0; i < sizeof forwarded_signals / sizeof *forwarded_signals; i++)
			sigaction(forwarded_signals[i], &old_actions[i], NULL);
		sigaction(SIGXFSZ, &hp_cli_xfsz_disposition, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		close(fds[0]);
		child(argv + prog, lib, output, fds[1]);
	}
	forward_pid = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	close(fds[1]);
	/* Read to the end, whatever the child writes: a pipe closed before
	 * then would kill it with SIGPIPE (it wrote a path cut at the size
	 * of the buffer, then its status, once). What does not fit is read
	 * and dropped. */
	for (;;) {
		char rest[256];
		int full = len == sizeof path - 1;
		n = read(fds[0], full ? rest : path + len,
			 full ? sizeof rest : sizeof path - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!full)
			len += (size_t)n;
	}
	close(fds[0]);
	path[len] = '\0';
	/* The program runs (the pipe closed on its exec): serve it. The
	 * server asks it for snapshots through a pidfd of this child, which
	 * is reaped only after the server stopped. */
	size_t plen = strlen(path), at = plen + 1;
	int created = at < len && path[at] == 'N';
	at += (size_t)created;
	if (lfd >= 0 && at >= len) { /* neither "C" nor "E": it runs */
		/* Its threads block the forwarded signals: they run on this
		 * thread, which clears forward_pid, never on one that could send
		 * to the pid after the program was reaped. */
		sigprocmask(SIG_BLOCK, &block, NULL);
		int served = hp_server_start(&srv, lfd, path, pid, sig, a.given[HP_OPT_HTTP_PUBLIC],
					     NULL) == 0;
		if (served && !quiet)
			fprintf(stderr,
				"heapprof: serving %s/debug/pprof/ (port %u) for %s, pid %d%s\n",
				url, port, argv[prog], (int)pid,
				a.given[HP_OPT_HTTP_PUBLIC] ? ", to every client"
							    : ", to its user and root");
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		lfd = -1;
	}
	if (lfd >= 0)
		close(lfd);
	/* Wait for its end without reaping it: until the server stops and
	 * the signals stop going to it, its pid must stay its own. */
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	forward_pid = 0;
	hp_server_stop(srv);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			hp_say_error("run: waitpid: %s", strerror(errno));
			return RUN_USAGE;
		}
	}
	/* The program has ended: what is left (symbols, the summary) is
	 * heapprof's own. The terminal's ^C and ^\ stay ignored, as while the
	 * program ran; the other signals do what they did before. */
	for (size_t i = 0; i < sizeof forwarded_signals / sizeof *forwarded_signals; i++) {
		int s = forwarded_signals[i];
		if (s == SIGINT || s == SIGQUIT)
			sigaction(s, &(struct sigaction){.sa_handler = SIG_IGN}, NULL);
		else
			sigaction(s, &old_actions[i], NULL);
	}
	/* The child wrote "path\0", 'N' if it created the file, and "C<errno>",
	 * "M<errno>" or "E<errno>" when it could not go on (see child()). */
	if (at < len && path[at] == 'C') {
		int e = atoi(path + at + 1);
		if (e == ENAMETOOLONG) {
			char cwd[PATH_MAX];
			size_t full = output ? strlen(output) : plen;
			if (output && output[0] != '/' && getcwd(cwd, sizeof cwd))
				full += strlen(cwd) + 1;
			hp_say_error("run: cannot create the capture %.60s...: its path is %zu "
				     "characters long, more than the system takes (%d)",
				     path, full, PATH_MAX - 1);
		} else {
			hp_say_error("run: cannot create the capture %s: %s", path,
				     e == ELOOP ? "it is a symbolic link, which heapprof does not "
						  "follow"
						: strerror(e));
		}
		return RUN_NO_CAPTURE;
	}
	if (at < len && path[at] == 'M') {
		hp_say_error("run: cannot make the capture %s private (mode 0600): %s", path,
			     strerror(atoi(path + at + 1)));
		return RUN_NO_CAPTURE;
	}
	if (at < len && path[at] == 'E') {
		if (created)
			unclaim_output(path);
		hp_say_error("run: cannot run %s: %s", argv[prog], strerror(atoi(path + at + 1)));
		return RUN_NOT_FOUND;
	}
	if (created)
		unclaim_output(path);
	/* Symbols now, while the binaries are surely the ones that ran: the
	 * capture can then travel. */
	if (symbols && access(path, F_OK) == 0) {
		struct hp_embed_result res;
		char err[512];
		int ret = hp_embed_symbols_keep(path, &eo, &res, &cap, &loaded, err, sizeof err);
		/* A capture without a snapshot (-ENODATA, hp_model_build) has no
		 * frames to name: summarize() says what became of the program. */
		if (ret < 0 && ret != -ENODATA)
			hp_say_error("%s", err);
		if (ret == 0 && verbose)
			hp_cli_say_symbols(path, &res);
	}
	/* The capture as the embedding read it: the summary needs nothing of
	 * the symbols it appended, and a big capture takes a second or more
	 * to read (2^20 stacks: 1.7 s). */
	summarize(path, loaded ? &cap : NULL, argv[prog], status, quiet);
	if (a.given[HP_OPT_FOLLOW_FORK])
		children(path, started, symbols, quiet, &eo, verbose);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
