/*
 * cli.h - the heapprof command: one function per subcommand, and the small
 * helpers they share.
 */
#ifndef HP_CLI_CLI_H
#define HP_CLI_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "../format/capture.h"
#include "../analyzer/model/model.h"
#include "../analyzer/events.h"
#include "../common/say.h"

/* The exit statuses of the commands that read captures (report, export,
 * flamegraph, diff, symbolize, inspect); heapprof run passes on its
 * program's and has its own beside (run.c). docs/internals/errors.md
 * lists them all. */
enum {
	HP_EXIT_OK = 0,
	HP_EXIT_FAILURE = 1, /* a capture that cannot be used, a failed write, damage */
	HP_EXIT_USAGE = 2,   /* a wrong command, option or value: nothing was done */
	HP_EXIT_GATE = 3,    /* report --fail-if-leaked, --fail-if-peak, diff
			      * --fail-if-grew: over the limit (the output is whole) */
};

/* Each returns the process exit status. argv[0] is the subcommand. */
int hp_cmd_run(int argc, char **argv);
int hp_cmd_inspect(int argc, char **argv);
int hp_cmd_report(int argc, char **argv);
int hp_cmd_export(int argc, char **argv);
int hp_cmd_flamegraph(int argc, char **argv);
int hp_cmd_html(int argc, char **argv);
int hp_cmd_diff(int argc, char **argv);
int hp_cmd_symbolize(int argc, char **argv);
int hp_cmd_serve(int argc, char **argv);
int hp_cmd_core(int argc, char **argv);
int hp_cmd_attach(int argc, char **argv);
int hp_cmd_detach(int argc, char **argv);

/* Finds libheapprof.so: $HEAPPROF_LIB, beside this binary (the build
 * tree), or in ../lib/heapprof/ (an installed tree). Returns 0 with its
 * path in out, or -errno with the path it looked for last. */
int hp_cli_find_recorder(char *out, size_t cap);

/* Loads a capture, selects its image opts->image (or the default one) and
 * builds its model, for the commands that render one. Returns 0, or -errno
 * after saying what is wrong ("heapprof: FILE: ...") when the file cannot
 * be used (-EINVAL for an image it does not have); warns on stderr about
 * damage and about modules whose symbols could not be read, and returns 0.
 * On 0, free both with hp_model_free and hp_capture_free. */
int hp_cli_load_model(const char *path, const struct hp_model_options *opts, struct hp_capture *cap,
		      struct hp_model *model);

/* hp_cli_load_model in two steps, for a command that chooses its model's
 * options by what the capture holds (html): loading and selecting the
 * image (on 0, free the capture with hp_capture_free), then building the
 * model (on an error the capture is freed too). Same messages. */
int hp_cli_load_capture(const char *path, const struct hp_model_options *opts,
			struct hp_capture *cap);
int hp_cli_build_model(const char *path, const struct hp_model_options *opts,
		       struct hp_capture *cap, struct hp_model *model);

/* hp_capture_load, or for an ELF core of a process that ran under heapprof
 * the capture of its dump made in memory (core.c: hp_core_capture), so
 * that every command reading a capture reads such a core too. Same
 * contract as hp_capture_load; the core's notes go to stderr. */
int hp_cli_capture_load(const char *path, struct hp_capture *cap, char *err, size_t errlen);
/* The same with HP_CAP_LOAD_* flags (capture.h). */
int hp_cli_capture_load_flags(const char *path, unsigned flags, struct hp_capture *cap,
			      char *err, size_t errlen);

/* An output file of a command: "-" (or NULL) is standard output.
 *
 * The rules, the same for every command that writes a file:
 * - a file that is one of the command's inputs (same device and inode,
 *   whatever the path) is refused before anything is written to it;
 * - a symbolic link at the path is refused (O_NOFOLLOW): one planted in a
 *   shared directory must not redirect the write to a file of the user's;
 *   "-" stands for standard output;
 * - the file is 0600, as captures are: a profile holds the program's
 *   paths, arguments and symbols; a new file is created so, an existing
 *   one is made so (fchmod; refused, untouched, when that fails: another
 *   user's file), then truncated, and keeps its owner;
 * - a device or a FIFO is written as it is, never truncated or removed;
 * - a failed write is reported with its own errno (ENOSPC, EFBIG, EIO),
 *   kept by the stream's write function as it fails, never with whatever
 *   a renderer guessed from ferror or errno held later. */
struct hp_cli_output {
	const char *path;
	FILE *f; /* a stream over fd (fopencookie) that keeps write_err */
	int fd;
	int to_stdout;
	int regular;   /* a regular file: removed if writing fails */
	int write_err; /* the errno of the first write that failed, 0 if none */
};

/* Opens o for path; inputs[0..ninputs) are the files the command reads.
 * Returns 0, or -errno after saying why (-EEXIST: path is one of the
 * inputs). */
int hp_cli_output_open(struct hp_cli_output *o, const char *path, const char *const *inputs,
		       size_t ninputs);

/* Closes o after a renderer returned ret (0 or -errno). On failure says
 * so and removes a partial regular file (never a device such as
 * /dev/full). Returns 0, or -errno after saying why: a failed write's own
 * errno when one failed (a renderer that met it returns a guess), else
 * ret's, else the close's. */
int hp_cli_output_close(struct hp_cli_output *o, int ret);

struct hp_live_asker;

/* For the live endpoint of a process heapprof attach records (serve.c):
 * an asker that calls the recorder's heapprof_dump in it (the attached
 * recorder has no dump signal). Returns 1 with *out set, 0 when the
 * recorder is not loaded in pid, or -errno after saying why. One at a
 * time per heapprof process. */
int hp_cli_attached_asker(pid_t pid, struct hp_live_asker *out);

/* SIGXFSZ's disposition as heapprof was started with it (main.c ignores
 * the signal for itself); what a program heapprof runs gets back. */
extern struct sigaction hp_cli_xfsz_disposition;

/* Process pid's environment as it started (/proc/PID/environ: NUL
 * separated, as the kernel keeps it) into buf[0..cap), NUL-terminated.
 * Returns its length, or -errno (-ENOENT: no such process). */
ssize_t hp_cli_read_environ(pid_t pid, char *buf, size_t cap);

/* The value of NAME in such an environment block of len bytes, or NULL. */
const char *hp_cli_env_get(const char *env, size_t len, const char *name);

struct hp_embed_result;

/* --verbose of run and symbolize (symbolize.c): on stderr, where the
 * symbols embedded in path came from (the symbol cache, debug info). */
void hp_cli_say_symbols(const char *path, const struct hp_embed_result *res);

/* --- options (options.c) ---------------------------------------------- */

/* Every option of every subcommand, once. */
enum hp_cli_opt {
	HP_OPT_HELP,      /* -h, --help: the usage on standard output, exit 0 */
	HP_OPT_OUTPUT,    /* -o, --output FILE */
	HP_OPT_SNAPSHOT,  /* --snapshot N, from 1 (hp_cli_snapshot) */
	HP_OPT_IMAGE,     /* --image N, from 1 to HP_CLI_IMAGE_MAX (hp_cli_image) */
	HP_OPT_METRIC,    /* --metric M: hp_cli_args.metric */
	HP_OPT_TOP,       /* --top N */
	HP_OPT_FRAMES,    /* --frames N */
	HP_OPT_WIDTH,     /* --width N (columns, or pixels) */
	HP_OPT_DEBUG_DIR, /* --debug-dir DIR */
	HP_OPT_JSON,      /* --json */
	HP_OPT_FORMAT,    /* --format F: each command checks its formats */
	HP_OPT_AT,        /* --at end|peak */
	HP_OPT_TITLE,     /* --title T */
	HP_OPT_STACKS,    /* --stacks */
	HP_OPT_HISTOGRAMS, /* report: --histograms */
	HP_OPT_MAP,        /* report: --map */
	HP_OPT_OVER_TIME,  /* report: --timeline (the view; run's --timeline MS is
			    * HP_OPT_TIMELINE) */
	HP_OPT_EXE,       /* core: --exe PROGRAM */
	HP_OPT_WHATIS,    /* core: --whatis (the operands after the core are addresses) */
	HP_OPT_DAMAGE,    /* core: --damage (the heap's inconsistencies) */
	/* heapprof run (docs/options.md) */
	HP_OPT_SAMPLE_RATE,
	HP_OPT_UNWIND,
	HP_OPT_MAX_DEPTH,
	HP_OPT_MAX_STACKS,
	HP_OPT_DUMP_SIGNAL,
	HP_OPT_INTERVAL,
	HP_OPT_DUMP_EVERY,
	HP_OPT_DUMP_HIGH_WATER,
	HP_OPT_TIMESERIES,
	HP_OPT_TIMELINE, /* --timeline MS: the per-site timeline's period */
	HP_OPT_LIVE_BLOCKS, /* run: --live-blocks */
	HP_OPT_SEED,
	HP_OPT_FOLLOW_FORK,
	HP_OPT_MMAP, /* run, attach: --mmap, the "mmap" heap (interpose_mmap.c) */
	HP_OPT_QUIET,
	HP_OPT_NO_SYMBOLS,
	HP_OPT_HTTP, /* run, serve: --http ADDR, the live endpoints (serve.h) */
	HP_OPT_PID,  /* serve: --pid PID */
	/* report, export, flamegraph, diff: filters (hp_cli_filter) */
	HP_OPT_FOCUS,  /* --focus REGEX: keep the stacks with a frame matching */
	HP_OPT_IGNORE, /* --ignore REGEX: drop the stacks with a frame matching */
	HP_OPT_HIDE,   /* --hide REGEX: remove the matching frames */
	/* report: how stacks read; leaks; CI gates */
	HP_OPT_ALL_FRAMES,     /* --all-frames */
	HP_OPT_FULL_NAMES,     /* --full-names */
	HP_OPT_SUPPRESSIONS,   /* --suppressions FILE (LeakSanitizer's format) */
	HP_OPT_NO_DEFAULT_SUPPRESSIONS,
	HP_OPT_FAIL_IF_LEAKED, /* --fail-if-leaked BYTES */
	HP_OPT_FAIL_IF_PEAK,   /* --fail-if-peak BYTES */
	HP_OPT_FAIL_IF_GREW,   /* diff: --fail-if-grew BYTES */
	HP_OPT_ICICLE,         /* flamegraph: --icicle */
	HP_OPT_FOR,            /* attach: --for SECONDS */
	HP_OPT_HEAP,           /* report --by: --heap NAME, the heap shown */
	HP_OPT_BY,             /* report, diff, export, flamegraph: --by DIM (group.h) */
	HP_OPT_NO_SYMBOL_CACHE, /* run, symbolize: --no-symbol-cache (symcache.h) */
	HP_OPT_VERBOSE,         /* run, symbolize: -v, --verbose: where symbols came from */
	HP_OPT_HTTP_PUBLIC,     /* run, serve: --http-public, every client served (serve.h) */
	HP_OPT_EVENTS,          /* run: --events, the event log (HEAPPROF_EVENTS) */
	HP_OPT_LIVED_UNDER,     /* the event log's views: --lived-under DURATION */
	HP_OPT_LIVED_OVER,      /* --lived-over DURATION */
	HP_OPT_BETWEEN,         /* --between FROM TO (or FROM,TO) */
	HP_OPT_THREAD,          /* --thread NAME */
	HP_OPT_BLOCKS,          /* report: --blocks, the log's blocks one by one */
	HP_OPT_COUNT
};

/* How an option's value is checked. */
enum hp_cli_kind {
	HP_CLI_FLAG,   /* no value */
	HP_CLI_TEXT,   /* a path, a title, or a choice its command checks */
	HP_CLI_NUMBER, /* a count in the command's range (hp_cli_number) */
	HP_CLI_METRIC, /* peak, leaked, allocated, allocations, temporary */
	HP_CLI_CHOICE, /* one of choices[] */
	HP_CLI_SIZE,   /* run: a recorder's number, with K/M/G, in [min, max] */
	HP_CLI_SIGNAL, /* run: a dump signal (hp_option_parse_signal) */
	HP_CLI_REGEX,  /* a POSIX extended regular expression (regex.h) */
	HP_CLI_BYTES,  /* a byte count, with K/M/G (hp_option_parse_u64): number[] */
};

struct hp_cli_option {
	const char *name; /* --name */
	char short_name;  /* -x, or 0 */
	enum hp_cli_kind kind;
	const char *var;        /* run: the HEAPPROF_ variable it becomes, or NULL */
	uint64_t min, max;      /* HP_CLI_SIZE: the range the recorder accepts */
	const char *choices[2]; /* HP_CLI_CHOICE */
};

/* The table, indexed by enum hp_cli_opt. */
extern const struct hp_cli_option hp_cli_options[HP_OPT_COUNT];

/* A command's use of an option: min and max are the range of an
 * HP_CLI_NUMBER option in this command; check, when set, is the command's
 * own check of the value (a --format it knows), run in the order of the
 * command line: it returns 0, or -EINVAL after saying why. */
struct hp_cli_use {
	enum hp_cli_opt opt;
	long min, max;
	int (*check)(const char *cmd, const char *value);
};

/* What the options said, checked. */
struct hp_cli_args {
	int given[HP_OPT_COUNT];         /* the option was given */
	const char *value[HP_OPT_COUNT]; /* its value as given (the last one) */
	long number[HP_OPT_COUNT];       /* HP_CLI_NUMBER: the value */
	uint64_t bytes[HP_OPT_COUNT];    /* HP_CLI_BYTES: the value */
	enum hp_metric metric;           /* HP_OPT_METRIC, when given */
	int help;                        /* --help: the usage was shown, exit 0 */
	int operand, noperands;          /* argv[operand..]: what follows the options */
};

/* Parses the options of command cmd (its usage is usage) that uses lists,
 * with getopt_long, in order; in_order stops at the first operand (run:
 * the program's own options follow). Returns 0 (a->help when the usage
 * was shown), or -EINVAL after saying what is wrong in one line (for an
 * unknown option, getopt's line and the usage): a usage error. Not
 * reentrant (getopt). */
int hp_cli_parse(const char *cmd, const char *usage, const struct hp_cli_use *uses, size_t nuses,
		 int in_order, int argc, char **argv, struct hp_cli_args *a);

/* The filter the options --focus, --ignore and --hide ask for, in f (its
 * strings are a's); NULL when none was given. Their patterns were checked
 * as they were parsed. */
/* The event log's options of cmd (--lived-under, --lived-over, --between,
 * --thread) into *sel (sel->on when any is given). --between takes
 * "FROM,TO", or FROM and then TO as the first operand (or the last, when
 * the capture came first), which is then taken out of a's operands.
 * Returns 0, or -EINVAL after one line saying what is wrong. */
int hp_cli_events(const char *cmd, struct hp_cli_args *a, char **argv,
		  struct hp_events_select *sel);
/* The help lines of those options, for each command's usage. */
#define HP_CLI_EVENTS_HELP                                                                   \
	"  --lived-under DUR, --lived-over DUR  only the blocks freed within DUR of\n"        \
	"                   their allocation; that lived longer (10ms, 1.5s)\n"              \
	"  --between FROM TO  only what was allocated from FROM to TO (1.2s 3.4s)\n"         \
	"  --thread NAME    only the blocks threads named NAME allocated\n"                   \
	"                   (all four need run --events)\n"

const struct hp_model_filter *hp_cli_filter(const struct hp_cli_args *a, struct hp_model_filter *f);

/* --by's checks (hp_cli_use.check): any dimension of group.h (report,
 * diff), or type or context (export --format folded, flamegraph: the
 * root frame). */
int hp_cli_check_by(const char *cmd, const char *value);
int hp_cli_check_by_root(const char *cmd, const char *value);

/* --by as an enum hp_dim (group.h); HP_BY_STACK when not given. */
int hp_cli_by(const struct hp_cli_args *a);

/* The output name when -o is not given: the capture's base name without
 * ".hpf", with ext ("heapprof.app.123.pb.gz"), in the current directory,
 * in buf. Returns buf, or NULL after saying why (the name exists: a default
 * never replaces a file; too long). */
const char *hp_cli_default_output(const char *cmd, const char *capture, const char *ext,
				  char *buf, size_t cap);

/* --heap NAME|all of an export or a view, read against the built model:
 * HP_HEAP_ALL (model.h) when not given. Returns 0, or -ENOENT after saying
 * "heapprof: FILE: no heap named 'x' (its heaps: all, malloc, ...)". */
int hp_cli_heap(const struct hp_cli_args *a, const struct hp_model *m, const char *file,
		int64_t *heap);

/* --snapshot N as a model's snapshot index (N - 1), or -1 (the last). */
long hp_cli_snapshot(const struct hp_cli_args *a);

/* The largest --image N a command takes (a capture has one image per exec
 * of its process). */
#define HP_CLI_IMAGE_MAX 1000000L

/* The columns text output fits (report, diff; src/cli/report.c): the
 * terminal's, else $COLUMNS, else 100 (piped). */
unsigned hp_cli_terminal_width(void);

/* --image N as hp_model_options.image (N, counted from 1), or 0 (the
 * capture's default image). */
size_t hp_cli_image(const struct hp_cli_args *a);

/* Parses an option's decimal value (digits only) in [min, max] into *out;
 * returns 0, or -EINVAL after saying "heapprof: CMD: OPT wants a number
 * ...". The one parser of counts in the CLI; sizes (K, M, G) go through
 * hp_option_parse_u64 (src/common/options.h). */
int hp_cli_number(const char *cmd, const char *opt, const char *s, long min, long max, long *out);

/* Prints a --help text on standard output, keeping the errno of a write
 * that fails (a text longer than stdio's buffer fails inside fputs, and
 * main's check of standard output then names the kernel's reason, not a
 * guess). No return: main reports it. */
void hp_cli_put_help(const char *text);

#endif
