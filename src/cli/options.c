/*
 * options.c - the options of every subcommand, in one table, and the one
 * parser that reads them (see cli.h).
 *
 * The table says once what an option is called and what its value is; a
 * subcommand lists the options it takes (struct hp_cli_use), with the
 * range of its counts, and reads the checked values from struct
 * hp_cli_args. Counts go through hp_cli_number, the recorder's sizes
 * through hp_option_parse_u64 and its ranges (src/common/options.h), so a
 * value means the same in every subcommand and the same to the recorder.
 *
 * A wrong value is said in one line, "heapprof: CMD: --OPT wants ...",
 * and is a usage error (exit status 2: docs/internals/errors.md).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../analyzer/group.h"
#include "../common/options.h"
#include "cli.h"

/* One option a line, by hand. */
/* clang-format off */
const struct hp_cli_option hp_cli_options[HP_OPT_COUNT] = {
	[HP_OPT_HELP] =      {"help", 'h', HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_OUTPUT] =    {"output", 'o', HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_SNAPSHOT] =  {"snapshot", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_IMAGE] =     {"image", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_METRIC] =    {"metric", 0, HP_CLI_METRIC, NULL, 0, 0, {NULL}},
	[HP_OPT_TOP] =       {"top", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_FRAMES] =    {"frames", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_WIDTH] =     {"width", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_DEBUG_DIR] = {"debug-dir", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_JSON] =      {"json", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_FORMAT] =    {"format", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_AT] =        {"at", 0, HP_CLI_CHOICE, NULL, 0, 0, {"end", "peak"}},
	[HP_OPT_TITLE] =     {"title", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_STACKS] =    {"stacks", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_HISTOGRAMS] = {"histograms", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_MAP] = {"map", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_OVER_TIME] = {"timeline", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_EXE] =       {"exe", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_WHATIS] =    {"whatis", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_DAMAGE] =    {"damage", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	/* heapprof run: each recorder option becomes its HEAPPROF_ variable,
	 * checked against the range the recorder accepts (it would replace a
	 * value out of range by its default, with a message, and run anyway). */
	[HP_OPT_SAMPLE_RATE] = {"sample-rate", 0, HP_CLI_SIZE, "HEAPPROF_SAMPLE_RATE",
		HP_OPTION_SAMPLE_RATE_MIN, HP_OPTION_SAMPLE_RATE_MAX, {NULL}},
	[HP_OPT_UNWIND] = {"unwind", 0, HP_CLI_CHOICE, "HEAPPROF_UNWIND", 0, 0, {"dwarf", "fp"}},
	[HP_OPT_MAX_DEPTH] = {"max-depth", 0, HP_CLI_SIZE, "HEAPPROF_MAX_DEPTH",
		HP_OPTION_MAX_DEPTH_MIN, HP_OPTION_MAX_DEPTH_MAX, {NULL}},
	[HP_OPT_MAX_STACKS] = {"max-stacks", 0, HP_CLI_SIZE, "HEAPPROF_MAX_STACKS",
		HP_OPTION_MAX_STACKS_MIN, HP_OPTION_MAX_STACKS_MAX, {NULL}},
	[HP_OPT_DUMP_SIGNAL] = {"dump-signal", 0, HP_CLI_SIGNAL, "HEAPPROF_DUMP_SIGNAL", 0, 0,
		{NULL}},
	[HP_OPT_INTERVAL] = {"interval", 0, HP_CLI_SIZE, "HEAPPROF_INTERVAL_MS",
		0, HP_OPTION_INTERVAL_MS_MAX, {NULL}},
	[HP_OPT_DUMP_EVERY] = {"dump-every", 0, HP_CLI_SIZE, "HEAPPROF_DUMP_EVERY_BYTES",
		0, UINT64_MAX, {NULL}},
	[HP_OPT_DUMP_HIGH_WATER] = {"dump-high-water", 0, HP_CLI_SIZE,
		"HEAPPROF_DUMP_HIGH_WATER_BYTES", 0, UINT64_MAX, {NULL}},
	[HP_OPT_TIMESERIES] = {"timeseries", 0, HP_CLI_SIZE, "HEAPPROF_TIMESERIES_MS",
		0, HP_OPTION_TIMESERIES_MS_MAX, {NULL}},
	[HP_OPT_TIMELINE] = {"timeline", 0, HP_CLI_SIZE, "HEAPPROF_TIMELINE_MS",
		0, HP_OPTION_TIMESERIES_MS_MAX, {NULL}},
	[HP_OPT_LIVE_BLOCKS] = {"live-blocks", 0, HP_CLI_FLAG, "HEAPPROF_LIVE_BLOCKS", 0, 0, {NULL}},
	[HP_OPT_EVENTS] = {"events", 0, HP_CLI_FLAG, "HEAPPROF_EVENTS", 0, 0, {NULL}},
	[HP_OPT_LIVED_UNDER] = {"lived-under", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_LIVED_OVER] = {"lived-over", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_BETWEEN] = {"between", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_THREAD] = {"thread", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_BLOCKS] = {"blocks", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_SEED] = {"seed", 0, HP_CLI_SIZE, "HEAPPROF_SEED", 0, UINT64_MAX, {NULL}},
	[HP_OPT_FOLLOW_FORK] = {"follow-fork", 0, HP_CLI_FLAG, "HEAPPROF_FOLLOW_FORK", 0, 0, {NULL}},
	[HP_OPT_MMAP] = {"mmap", 0, HP_CLI_FLAG, "HEAPPROF_MMAP", 0, 0, {NULL}},
	[HP_OPT_QUIET] = {"quiet", 'q', HP_CLI_FLAG, "HEAPPROF_QUIET", 0, 0, {NULL}},
	[HP_OPT_NO_SYMBOLS] = {"no-symbols", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_HTTP] = {"http", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_PID] = {"pid", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_FOCUS] = {"focus", 0, HP_CLI_REGEX, NULL, 0, 0, {NULL}},
	[HP_OPT_IGNORE] = {"ignore", 0, HP_CLI_REGEX, NULL, 0, 0, {NULL}},
	[HP_OPT_HIDE] = {"hide", 0, HP_CLI_REGEX, NULL, 0, 0, {NULL}},
	[HP_OPT_ALL_FRAMES] = {"all-frames", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_FULL_NAMES] = {"full-names", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_SUPPRESSIONS] = {"suppressions", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_NO_DEFAULT_SUPPRESSIONS] = {"no-default-suppressions", 0, HP_CLI_FLAG, NULL, 0, 0,
		{NULL}},
	[HP_OPT_FAIL_IF_LEAKED] = {"fail-if-leaked", 0, HP_CLI_BYTES, NULL, 0, UINT64_MAX, {NULL}},
	[HP_OPT_FAIL_IF_PEAK] = {"fail-if-peak", 0, HP_CLI_BYTES, NULL, 0, UINT64_MAX, {NULL}},
	[HP_OPT_FAIL_IF_GREW] = {"fail-if-grew", 0, HP_CLI_BYTES, NULL, 0, UINT64_MAX, {NULL}},
	[HP_OPT_ICICLE] = {"icicle", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_FOR] = {"for", 0, HP_CLI_NUMBER, NULL, 0, 0, {NULL}},
	[HP_OPT_HEAP] = {"heap", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_BY] = {"by", 0, HP_CLI_TEXT, NULL, 0, 0, {NULL}},
	[HP_OPT_NO_SYMBOL_CACHE] = {"no-symbol-cache", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_VERBOSE] = {"verbose", 'v', HP_CLI_FLAG, NULL, 0, 0, {NULL}},
	[HP_OPT_HTTP_PUBLIC] = {"http-public", 0, HP_CLI_FLAG, NULL, 0, 0, {NULL}},
};
/* clang-format on */

int hp_cli_number(const char *cmd, const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v = 0;

	/* Digits only: no sign, no leading space (strtol would take both). */
	errno = 0;
	if (*s >= '0' && *s <= '9')
		v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < min || v > max) {
		if (max == LONG_MAX)
			hp_say_error("%s: %s wants a number of at least %ld, not '%s'", cmd, opt,
				     min, s);
		else
			hp_say_error("%s: %s wants a number from %ld to %ld, not '%s'", cmd, opt,
				     min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Checks the value of a recorder option of heapprof run; says what is
 * wrong in one line and returns -EINVAL, or returns 0. */
static int check_recorder(const char *cmd, const struct hp_cli_option *o, const char *value)
{
	uint64_t v;
	int sig;

	if (o->kind == HP_CLI_SIZE) {
		if (hp_option_parse_u64(value, &v) == 0 && v >= o->min && v <= o->max)
			return 0;
		hp_say_error("%s: --%s wants a number from %llu to %llu, not '%s'", cmd, o->name,
			     (unsigned long long)o->min, (unsigned long long)o->max, value);
		return -EINVAL;
	}
	if (hp_option_parse_signal(value, &sig) == 0)
		return 0;
	hp_say_error("%s: --%s wants USR1, USR2, HUP, PROF, WINCH, URG, NONE or the number of a "
		     "signal that can be caught (1 to %d), not '%s'",
		     cmd, o->name, HP_OPTION_SIGNAL_MAX, value);
	return -EINVAL;
}

/* Checks and keeps the value of option use->opt. Returns 0 or -EINVAL
 * after saying why. */
static int take(const char *cmd, const struct hp_cli_use *use, const char *value,
		struct hp_cli_args *a)
{
	const struct hp_cli_option *o = &hp_cli_options[use->opt];
	char opt[32];

	snprintf(opt, sizeof opt, "--%s", o->name);
	switch (o->kind) {
	case HP_CLI_NUMBER:
		if (hp_cli_number(cmd, opt, value, use->min, use->max, &a->number[use->opt]))
			return -EINVAL;
		break;
	case HP_CLI_METRIC:
		if (hp_metric_parse(value, &a->metric)) {
			hp_say_error(
				"%s: unknown metric '%s' (peak, leaked, allocated, allocations, "
				"temporary)",
				cmd, value);
			return -EINVAL;
		}
		break;
	case HP_CLI_CHOICE:
		if (strcmp(value, o->choices[0]) != 0 && strcmp(value, o->choices[1]) != 0) {
			hp_say_error("%s: %s wants %s or %s, not '%s'", cmd, opt, o->choices[0],
				     o->choices[1], value);
			return -EINVAL;
		}
		break;
	case HP_CLI_SIZE:
	case HP_CLI_SIGNAL:
		if (check_recorder(cmd, o, value))
			return -EINVAL;
		break;
	case HP_CLI_BYTES:
		if (hp_option_parse_u64(value, &a->bytes[use->opt])) {
			hp_say_error("%s: %s wants a number of bytes (with K, M or G: 512K, 64MiB), "
				     "not '%s'", cmd, opt, value);
			return -EINVAL;
		}
		break;
	case HP_CLI_REGEX: {
		regex_t re;
		char why[256];
		int rc = regcomp(&re, value, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &re, why, sizeof why);
			hp_say_error("%s: %s wants a regular expression (POSIX extended), not "
				     "'%s': %s", cmd, opt, value, why);
			return -EINVAL;
		}
		regfree(&re);
		break;
	}
	default: break;
	}
	if (use->check && use->check(cmd, value))
		return -EINVAL;
	a->given[use->opt] = 1;
	a->value[use->opt] = value;
	return 0;
}

/* The edit distance of a and b (at most 31 characters of b are compared),
 * for suggestions. */
static size_t distance(const char *a, const char *b)
{
	size_t row[32], nb = strlen(b) < 31 ? strlen(b) : 31;

	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; a[i - 1]; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

/* Says what is wrong with the option arg getopt refused (optopt: the
 * option, 0 for an unknown long one), in one line with a hint: the
 * closest option of the command's when one is near, else its --help. */
static void bad_option(const char *cmd, const struct hp_cli_use *uses, size_t nuses,
		       const char *arg)
{
	const struct hp_cli_option *near = NULL;
	size_t best = 3;
	char name[64];

	if (optopt >= 1000 && (size_t)(optopt - 1000) < nuses) {
		hp_say_error("%s: --%s wants a value (heapprof %s --help)", cmd,
			     hp_cli_options[uses[optopt - 1000].opt].name, cmd);
		return;
	}
	for (size_t i = 0; optopt && i < nuses; i++)
		if (hp_cli_options[uses[i].opt].short_name == optopt) {
			hp_say_error("%s: -%c wants a value (heapprof %s --help)", cmd, optopt,
				     cmd);
			return;
		}
	if (optopt)
		snprintf(name, sizeof name, "-%c", optopt);
	else
		snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
	if (name[0] == '-' && name[1] == '-' && name[2]) {
		/* An abbreviation of several (getopt_long takes a unique one). */
		char list[512] = "";
		size_t used = 0, n = 0, len = strlen(name + 2);
		for (size_t i = 0; i < nuses && used < sizeof list; i++)
			if (strncmp(hp_cli_options[uses[i].opt].name, name + 2, len) == 0) {
				used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s",
							 n ? ", " : "",
							 hp_cli_options[uses[i].opt].name);
				n++;
			}
		if (n > 1) {
			hp_say_error("%s: option '%s' is ambiguous (%s)", cmd, name, list);
			return;
		}
	}
	for (size_t i = 0; i < nuses && name[0] == '-' && name[1] == '-'; i++) {
		size_t d = distance(name + 2, hp_cli_options[uses[i].opt].name);
		if (d < best) {
			best = d;
			near = &hp_cli_options[uses[i].opt];
		}
	}
	if (near)
		hp_say_error("%s: unknown option '%s' (did you mean --%s? heapprof %s --help lists "
			     "them)",
			     cmd, name, near->name, cmd);
	else
		hp_say_error("%s: unknown option '%s' (heapprof %s --help lists them)", cmd, name,
			     cmd);
}

int hp_cli_parse(const char *cmd, const char *usage, const struct hp_cli_use *uses, size_t nuses,
		 int in_order, int argc, char **argv, struct hp_cli_args *a)
{
	struct option longopts[HP_OPT_COUNT + 1];
	char shorts[2 * HP_OPT_COUNT + 4];
	size_t ns = 0;
	int c, idx;

	if (nuses > HP_OPT_COUNT)
		return -EINVAL;
	memset(a->given, 0, sizeof a->given);
	memset(a->value, 0, sizeof a->value);
	a->help = 0;
	if (in_order)
		shorts[ns++] = '+'; /* stop at the first operand (run: the program) */
	for (size_t i = 0; i < nuses; i++) {
		const struct hp_cli_option *o = &hp_cli_options[uses[i].opt];
		int has_arg = o->kind == HP_CLI_FLAG ? no_argument : required_argument;
		longopts[i] = (struct option){o->name, has_arg, NULL, 1000 + (int)i};
		if (o->short_name) {
			shorts[ns++] = o->short_name;
			if (has_arg)
				shorts[ns++] = ':';
		}
	}
	longopts[nuses] = (struct option){0};
	shorts[ns] = '\0';

	opterr = 0; /* said here, in one line (bad_option) */
	while ((c = getopt_long(argc, argv, shorts, longopts, &idx)) != -1) {
		size_t i = 0;
		if (c >= 1000) {
			i = (size_t)(c - 1000);
		} else {
			while (i < nuses && hp_cli_options[uses[i].opt].short_name != c)
				i++;
			if (c == '?' || c == ':' || i == nuses) {
				bad_option(cmd, uses, nuses, argv[optind - 1 < argc ? optind - 1 : 0]);
				return -EINVAL;
			}
		}
		if (uses[i].opt == HP_OPT_HELP) {
			hp_cli_put_help(usage);
			a->help = 1;
			return 0;
		}
		if (take(cmd, &uses[i], optarg, a))
			return -EINVAL;
	}
	a->operand = optind;
	a->noperands = argc - optind;
	return 0;
}

static int duration(const char *cmd, const char *opt, const char *s, uint64_t *ns)
{
	if (hp_events_parse_duration(s, ns) == 0)
		return 0;
	hp_say_error("%s: %s wants a duration such as 10ms, 1.5s, 200us (ns, us, ms, s, min), "
		     "not '%s'",
		     cmd, opt, s);
	return -EINVAL;
}

int hp_cli_events(const char *cmd, struct hp_cli_args *a, char **argv,
		  struct hp_events_select *sel)
{
	memset(sel, 0, sizeof *sel);
	if (a->given[HP_OPT_LIVED_UNDER]) {
		sel->lived_under = 1;
		if (duration(cmd, "--lived-under", a->value[HP_OPT_LIVED_UNDER], &sel->under_ns))
			return -EINVAL;
	}
	if (a->given[HP_OPT_LIVED_OVER]) {
		sel->lived_over = 1;
		if (duration(cmd, "--lived-over", a->value[HP_OPT_LIVED_OVER], &sel->over_ns))
			return -EINVAL;
	}
	if (a->given[HP_OPT_BETWEEN]) {
		const char *v = a->value[HP_OPT_BETWEEN], *comma = strchr(v, ',');
		char from[64];
		uint64_t ns;
		sel->between = 1;
		if (comma) {
			snprintf(from, sizeof from, "%.*s", (int)(comma - v), v);
			if (duration(cmd, "--between", from, &sel->from_ns) ||
			    duration(cmd, "--between", comma + 1, &sel->to_ns))
				return -EINVAL;
		} else if (duration(cmd, "--between", v, &sel->from_ns)) {
			return -EINVAL;
		} else if (a->noperands >= 2 &&
			   hp_events_parse_duration(argv[a->operand], &ns) == 0) {
			sel->to_ns = ns;
			a->operand++;
			a->noperands--;
		} else if (a->noperands >= 2 &&
			   hp_events_parse_duration(argv[a->operand + a->noperands - 1], &ns) == 0) {
			sel->to_ns = ns;
			a->noperands--;
		} else {
			hp_say_error("%s: --between wants a window: FROM TO, or FROM,TO (1.2s 3.4s)",
				     cmd);
			return -EINVAL;
		}
		if (sel->to_ns < sel->from_ns) {
			hp_say_error("%s: --between: the window ends before it starts", cmd);
			return -EINVAL;
		}
	}
	if (a->given[HP_OPT_THREAD])
		sel->thread = a->value[HP_OPT_THREAD];
	sel->on = sel->lived_under || sel->lived_over || sel->between || sel->thread;
	return 0;
}

const struct hp_model_filter *hp_cli_filter(const struct hp_cli_args *a, struct hp_model_filter *f)
{
	f->focus = a->value[HP_OPT_FOCUS];
	f->ignore = a->value[HP_OPT_IGNORE];
	f->hide = a->value[HP_OPT_HIDE];
	return f->focus || f->ignore || f->hide ? f : NULL;
}

long hp_cli_snapshot(const struct hp_cli_args *a)
{
	return a->given[HP_OPT_SNAPSHOT] ? a->number[HP_OPT_SNAPSHOT] - 1 : -1;
}

size_t hp_cli_image(const struct hp_cli_args *a)
{
	return a->given[HP_OPT_IMAGE] ? (size_t)a->number[HP_OPT_IMAGE] : 0;
}

int hp_cli_check_by(const char *cmd, const char *value)
{
	enum hp_dim d;

	if (hp_dim_parse(value, &d) == 0)
		return 0;
	hp_say_error("%s: --by: '%s' is not stack, function, line, module, type, context, "
		     "thread or heap",
		     cmd, value);
	return -EINVAL;
}

int hp_cli_check_by_root(const char *cmd, const char *value)
{
	if (strcmp(value, "type") == 0 || strcmp(value, "context") == 0 ||
	    strcmp(value, "stack") == 0)
		return 0;
	hp_say_error("%s: --by: '%s' is not type or context (or stack, the default)", cmd, value);
	return -EINVAL;
}

const char *hp_cli_default_output(const char *cmd, const char *capture, const char *ext,
				  char *buf, size_t cap)
{
	const char *base = strrchr(capture, '/');
	size_t len;
	struct stat st;

	base = base ? base + 1 : capture;
	len = strlen(base);
	if (len > 4 && strcmp(base + len - 4, ".hpf") == 0)
		len -= 4;
	if (!len || (size_t)snprintf(buf, cap, "%.*s%s", (int)len, base, ext) >= cap) {
		hp_say_error("%s: cannot make an output name from '%s': name it with -o", cmd,
			     capture);
		return NULL;
	}
	if (lstat(buf, &st) == 0) {
		hp_say_error("%s: %s exists: not replacing it (name the output with -o)", cmd, buf);
		return NULL;
	}
	return buf;
}

int hp_cli_heap(const struct hp_cli_args *a, const struct hp_model *m, const char *file,
		int64_t *heap)
{
	char err[1024];

	*heap = HP_HEAP_ALL;
	if (!a->given[HP_OPT_HEAP])
		return 0;
	if (hp_model_parse_heap(m, a->value[HP_OPT_HEAP], heap, err, sizeof err) == 0)
		return 0;
	hp_say_error("%s: %s", file, err);
	return -ENOENT;
}

int hp_cli_by(const struct hp_cli_args *a)
{
	enum hp_dim d = HP_BY_STACK;

	if (a->given[HP_OPT_BY])
		hp_dim_parse(a->value[HP_OPT_BY], &d); /* checked as parsed */
	return (int)d;
}
