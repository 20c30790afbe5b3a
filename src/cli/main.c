/*
 * main.c - heapprof's command line: dispatch to a subcommand, and the
 * helpers the subcommands share (cli.h). Errors follow
 * docs/internals/errors.md: helpers return 0 or -errno after saying what
 * is wrong, in one line on stderr; only a subcommand turns that into an
 * exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/text.h"
#include "../common/version.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof <command> [options]\n"
	"\n"
	"commands:\n"
	"  run [options] [--] PROGRAM [ARGS...]\n"
	"                              run PROGRAM under the recorder\n"
	"  report FILE|CORE            the answers: peak, leaks, churn, by call stack\n"
	"                              (--by type, context, thread, heap, function...)\n"
	"  export FILE --format pprof|gperftools|folded\n"
	"                              for go tool pprof, jeprof, flame graph tools\n"
	"  flamegraph FILE             an interactive flame graph (SVG)\n"
	"  html FILE                   one page: timeline, flame graph, tables, map\n"
	"  diff BASE NEW               what grew and shrank (FILE@N: a snapshot)\n"
	"  symbolize FILE              embed symbols, for analysis on another machine\n"
	"  inspect [--stacks] FILE     what a capture file holds; checks it\n"
	"  serve --pid PID             a running program's heap over HTTP (--http ADDR)\n"
	"  core CORE                   a core dump's heap: blocks, types, leaks\n"
	"                              (--whatis ADDR...)\n"
	"  attach [options] PID        record a running process from now on\n"
	"  detach PID                  stop recording it\n"
	"  help [COMMAND]              this list, or a command's options\n"
	"\n"
	"`heapprof help COMMAND` or `heapprof COMMAND --help` shows a command's options.\n";

/* The output stream's write (fopencookie): writes all of buf to o->fd and,
 * when the kernel refuses, keeps its errno in o->write_err, which stdio
 * would drop (ferror only says that something failed). Returns the bytes
 * written, 0 on error (the cookie contract). */
static ssize_t output_write(void *cookie, const char *buf, size_t n)
{
	struct hp_cli_output *o = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? errno : EIO;
			if (!o->write_err)
				o->write_err = err;
			errno = err;
			return (ssize_t)done;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

/* Closes the file's descriptor (never standard output's); a failed close
 * (NFS reports a full disk there) is a failed write. */
static int output_close_fd(void *cookie)
{
	struct hp_cli_output *o = cookie;

	if (o->to_stdout || close(o->fd) == 0)
		return 0;
	if (!o->write_err)
		o->write_err = errno;
	return -1;
}

/* o->f: a stream over o->fd that keeps the first write's errno. Standard
 * output keeps its buffering (by line on a terminal). Returns 0 or
 * -ENOMEM. */
static int output_stream(struct hp_cli_output *o)
{
	static const cookie_io_functions_t io = {NULL, output_write, NULL, output_close_fd};

	o->f = fopencookie(o, "w", io);
	if (!o->f)
		return -ENOMEM;
	if (o->to_stdout && isatty(o->fd))
		setvbuf(o->f, NULL, _IOLBF, BUFSIZ);
	return 0;
}

int hp_cli_output_open(struct hp_cli_output *o, const char *path, const char *const *inputs,
		       size_t ninputs)
{
	struct stat st, in;
	int fd, err;

	memset(o, 0, sizeof *o);
	o->path = path;
	o->to_stdout = !path || strcmp(path, "-") == 0;
	if (o->to_stdout) {
		/* What was printed before goes first; without memory for the
		 * stream, stdout itself (its errors then say less). */
		fflush(stdout);
		o->fd = STDOUT_FILENO;
		if (output_stream(o))
			o->f = stdout;
		return 0;
	}
	/* Not truncated yet: first make sure it is not one of the inputs. */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		err = errno ? errno : EIO;
		if (err == ELOOP)
			hp_say_error("%s: is a symbolic link: not writing through it (name its "
				     "target, or - for standard output)", path);
		else
			hp_say_error("%s: cannot create: %s", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno ? errno : EIO;
		hp_say_error("%s: %s", path, strerror(err));
		goto err;
	}
	for (size_t i = 0; i < ninputs; i++) {
		if (stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			hp_say_error("%s: is the capture being read (%s): not overwriting it", path,
				     inputs[i]);
			err = EEXIST;
			goto err;
		}
	}
	o->regular = S_ISREG(st.st_mode);
	/* An existing file keeps its mode through open: an output is 0600
	 * whatever was there (it names the program's functions, files and
	 * arguments). Made so before it is emptied: a file that cannot be
	 * is left as it was. */
	if (o->regular && (st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0) {
		err = errno ? errno : EPERM;
		hp_say_error("%s: cannot make it private (mode 0600): %s", path, strerror(err));
		goto err;
	}
	if (o->regular && ftruncate(fd, 0) < 0) {
		err = errno ? errno : EIO;
		hp_say_error("%s: cannot truncate: %s", path, strerror(err));
		goto err;
	}
	o->fd = fd;
	if (output_stream(o)) {
		err = ENOMEM;
		hp_say_error("%s: cannot create: %s", path, strerror(err));
		goto err;
	}
	return 0;
err:
	close(fd);
	return -err;
}

int hp_cli_output_close(struct hp_cli_output *o, int ret)
{
	if (o->f == stdout ? fflush(o->f) : fclose(o->f))
		ret = ret ? ret : errno ? -errno : -EIO;
	/* A renderer that met a failed write returns what it could tell
	 * (-EIO from ferror, -ENOMEM): the write's own errno says why. */
	if (o->write_err)
		ret = -o->write_err;
	if (!ret)
		return 0;
	hp_say_error("%s: cannot write: %s", o->to_stdout ? "standard output" : o->path,
		     strerror(-ret));
	if (o->to_stdout)
		clearerr(stdout); /* said once: main's last check stays quiet */
	if (o->regular)
		unlink(o->path);
	return ret;
}

ssize_t hp_cli_read_environ(pid_t pid, char *buf, size_t cap)
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

const char *hp_cli_env_get(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if (strncmp(p, name, n) == 0 && p[n] == '=')
			return p + n + 1;
	return NULL;
}

/* A capture without a snapshot: says how to get one. The program is still
 * running when its pid is alive and its executable is the capture's
 * program (a pid can be reused): then its dump signal asks for one;
 * otherwise it ended without one. */
static void say_no_snapshot(const char *path, const struct hp_capture *cap)
{
	char exe[4096], link[64], prog[512];
	int pid = (int)cap->pid, running = 0;
	ssize_t n;

	hp_text_escape(prog, sizeof prog, hp_model_program_name(cap));
	snprintf(link, sizeof link, "/proc/%d/exe", pid);
	if ((uint64_t)pid == cap->pid && (kill(pid, 0) == 0 || errno == EPERM)) {
		n = readlink(link, exe, sizeof exe - 1);
		running = n <= 0 || !cap->program;
		if (n > 0) {
			exe[n] = '\0';
			running = cap->program && strcmp(exe, cap->program) == 0;
		}
	}
	if (running && cap->dump_signal && sigabbrev_np((int)cap->dump_signal))
		hp_say_error("%s: holds no snapshot yet: %s (pid %d) is running: `kill -%s %d` "
			     "asks it for one (heapprof run --interval MS writes one every MS)",
			     path, prog, pid, sigabbrev_np((int)cap->dump_signal), pid);
	else if (running)
		hp_say_error("%s: holds no snapshot yet: %s (pid %d) is running, recorded "
			     "without a dump signal: it writes one at its exit (heapprof run "
			     "--interval MS writes one every MS)",
			     path, prog, pid);
	else
		hp_say_error("%s: holds no snapshot: %s (pid %d) ended without writing one "
			     "(killed before its exit? heapprof run --interval MS writes one "
			     "every MS)",
			     path, prog, pid);
}

int hp_cli_load_capture(const char *path, const struct hp_model_options *opts,
			struct hp_capture *cap)
{
	char err[512];
	unsigned flags = 0;
	int ret;

	/* A caller whose model is the last reader of the frames, timeline or
	 * histograms (hp_model_options.release_frames, release_parts) has them
	 * loaded lean: the frames interned, the parts it gives back not kept
	 * (capture.h, HP_CAP_LOAD_*). */
	if (opts->release_frames == cap) {
		flags |= HP_CAP_LOAD_INTERN;
		if (opts->release_parts & HP_CAP_PART_TIMELINE)
			flags |= HP_CAP_LOAD_NO_TIMELINE;
		if (opts->release_parts & HP_CAP_PART_HISTOGRAMS)
			flags |= HP_CAP_LOAD_NO_HISTOGRAMS;
		/* Buckets read once, by the build's sums, and not kept after:
		 * kept encoded until then (not with the event log's buckets). */
		if (opts->drop_buckets && !(opts->events && opts->events->on))
			flags |= HP_CAP_LOAD_BUCKETS_ENCODED;
	}
	ret = hp_cli_capture_load_flags(path, flags, cap, err, sizeof err);
	if (ret < 0) {
		hp_say_error("%s", err);
		return ret;
	}
	if (cap->ndamage)
		hp_say_error("%s: damaged, showing what is readable: %s", path, cap->damage[0]);
	if (opts->image && hp_capture_select(cap, opts->image - 1)) {
		hp_say_error("%s: there is no image %zu (the capture has %zu)", path, opts->image,
			     cap->nimages);
		hp_capture_free(cap);
		return -EINVAL;
	}
	if (!opts->image && cap->image + 1 < cap->nimages) {
		/* The exec'd program wrote no snapshot (killed before its exit):
		 * what is shown is an earlier program's, which must be said. */
		char shown[512];
		const char *prog = cap->program ? cap->program : "(no META)";
		hp_say_error("%s: the last image (%zu) holds no snapshot: showing image %zu, %s "
			     "(--image N for another)", path, cap->nimages, cap->image + 1,
			     hp_text_escape(shown, sizeof shown, prog));
	}
	if (opts->events && opts->events->on && opts->snapshot != -1) {
		hp_say_error("%s: a snapshot (--snapshot N, FILE@N) and the event log's options "
			     "(--lived-under, --lived-over, --between, --thread) are not taken together",
			     path);
		hp_capture_free(cap);
		return -EINVAL;
	}
	if (opts->events && opts->events->on) {
		/* The log's selection, as the snapshot every view shows. */
		ret = hp_events_apply(cap, opts->events, opts->events_window, err, sizeof err);
		if (ret < 0) {
			hp_say_error("%s: %s", path, err);
			hp_capture_free(cap);
			return ret;
		}
	}
	return 0;
}

int hp_cli_build_model(const char *path, const struct hp_model_options *opts,
		       struct hp_capture *cap, struct hp_model *model)
{
	static const char *const status[] = {
		[HP_MODSYM_MISSING] = "is gone: shown as module+offset",
		[HP_MODSYM_MISMATCH] = "has changed since the run (build-id differs): shown as "
				       "module+offset",
		[HP_MODSYM_NO_SYMBOLS] = "has no symbols",
	};
	char err[512];
	int ret;

	ret = hp_model_build(model, cap, opts, err, sizeof err);
	if (ret == -ENODATA && !cap->nsnapshots && cap->has_meta && cap->pid) {
		say_no_snapshot(path, cap);
		hp_capture_free(cap);
		return ret;
	}
	if (ret < 0) {
		hp_say_error("%s: %s", path, err);
		hp_capture_free(cap);
		return ret;
	}
	for (size_t i = 0; i < model->nmodules; i++) {
		enum hp_module_status st = model->modules[i].status;
		int used = 0;
		if (st == HP_MODSYM_OK || st == HP_MODSYM_EMBEDDED || st == HP_MODSYM_UNUSED)
			continue;
		/* Only complain about modules that frames fall in. */
		for (size_t l = 0; l < model->nlocations && !used; l++)
			used = model->locations[l].module == (int)i;
		if (used && model->modules[i].cap->path[0] == '/') {
			char shown[1024];
			hp_say_error("%s %s",
				     hp_text_escape(shown, sizeof shown, model->modules[i].cap->path),
				     status[st]);
		}
	}
	return 0;
}

int hp_cli_load_model(const char *path, const struct hp_model_options *opts,
		      struct hp_capture *cap, struct hp_model *model)
{
	int ret = hp_cli_load_capture(path, opts, cap);

	return ret ? ret : hp_cli_build_model(path, opts, cap, model);
}

/* Every command that prints ends here: what it printed must have reached
 * standard output (a full disk, /dev/full, a closed pipe), else the exit
 * status says so. A command that already said it (hp_cli_output_close)
 * cleared the error. */
static int stdout_errno; /* the first failed write's, by hp_cli_put_help */

void hp_cli_put_help(const char *text)
{
	if ((fputs(text, stdout) == EOF || fflush(stdout) != 0) && !stdout_errno)
		stdout_errno = errno ? errno : EIO;
}

static int stdout_status(int status)
{
	int err = 0;

	if (fflush(stdout) != 0)
		err = errno ? errno : EIO;
	else if (ferror(stdout)) /* an earlier write failed: its errno, if kept */
		err = stdout_errno ? stdout_errno : EIO;
	if (!err)
		return status;
	hp_say_error("standard output: cannot write: %s", strerror(err));
	return status ? status : HP_EXIT_FAILURE;
}

struct sigaction hp_cli_xfsz_disposition;

int main(int argc, char **argv)
{
	/* An output past the file size limit (ulimit -f) fails with EFBIG and
	 * is said in one line, instead of SIGXFSZ killing heapprof; the program
	 * heapprof run starts gets the disposition heapprof got (run.c). */
	struct sigaction ign = {0};

	ign.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &ign, &hp_cli_xfsz_disposition);
#ifdef __GLIBC__
	/* Large arrays (a capture's, a model's: tens of MB) are mapped apart
	 * and unmapped when freed. glibc's threshold would otherwise rise to
	 * the size of the first such array freed, and the next ones would be
	 * carved from the heap, whose freed pages it keeps (diff of 2^20
	 * stacks: 525 -> 456 MB of RSS). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2)
			fputs(usage, stderr);
		else
			hp_cli_put_help(usage);
		return stdout_status(argc < 2 ? HP_EXIT_USAGE : HP_EXIT_OK);
	}
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} commands[] = {
		{"run", hp_cmd_run},           {"inspect", hp_cmd_inspect},
		{"report", hp_cmd_report},     {"export", hp_cmd_export},
		{"flamegraph", hp_cmd_flamegraph}, {"html", hp_cmd_html},
		{"diff", hp_cmd_diff},
		{"symbolize", hp_cmd_symbolize}, {"serve", hp_cmd_serve}, {"core", hp_cmd_core},
		{"attach", hp_cmd_attach},     {"detach", hp_cmd_detach},
	};
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return stdout_status(commands[i].fn(argc - 1, argv + 1));
	/* help [COMMAND]: the list, or COMMAND --help. */
	if (strcmp(argv[1], "help") == 0) {
		if (argc == 2) {
			hp_cli_put_help(usage);
			return stdout_status(HP_EXIT_OK);
		}
		if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
			fputs("usage: heapprof help [COMMAND]\n"
			      "\n"
			      "Lists heapprof's commands, or shows COMMAND's options (as heapprof\n"
			      "COMMAND --help does).\n",
			      stdout);
			return stdout_status(HP_EXIT_OK);
		}
		for (size_t i = 0; argc == 3 && i < sizeof commands / sizeof *commands; i++)
			if (strcmp(argv[2], commands[i].name) == 0) {
				char *help_argv[] = {argv[2], "--help", NULL};
				optind = 1; /* getopt's state: a fresh parse */
				return stdout_status(commands[i].fn(2, help_argv));
			}
		if (argc > 3)
			hp_say_error("help: give one command (heapprof help lists them)");
		else
			hp_say_error("help: unknown command '%s' (heapprof help lists them)",
				     argv[2]);
		return HP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		puts("heapprof " HP_VERSION);
		return stdout_status(HP_EXIT_OK);
	}
	hp_say_error("unknown command '%s' (try heapprof --help)", argv[1]);
	return HP_EXIT_USAGE;
}
