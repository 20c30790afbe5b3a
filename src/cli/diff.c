/*
 * diff.c - `heapprof diff BASE NEW`: what grew and what shrank between two
 * captures, per call stack (diff.h), as text or as a pprof profile of the
 * changes.
 *
 * BASE and NEW may be moments of one run (FILE@N, FILE@end, FILE@peak):
 * the file is loaded once per side, at that snapshot, and the stacks are
 * matched as for two runs. Two runs are compared by their peaks by
 * default (each stack's bytes in use at its run's peak: what a user
 * comparing two runs asks first, as report's first section answers it);
 * --metric leaked compares the bytes in use at the last snapshots, and
 * is the default when an operand names a moment (in use at each). The
 * text shows the other of the two (in use, or the peak) beside the
 * totals. The
 * runtime's one-time allocations are suppressed as report suppresses
 * them, and stacks read as report's (report_int.h).
 *
 * Exit status: 0 when shown or written, 1 for a capture that cannot be
 * used or a failed write, 2 for wrong usage.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/diff.h"
#include "../analyzer/group.h"
#include "../analyzer/heapview.h"
#include "../analyzer/pprof.h"
#include "../common/units.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof diff [options] BASE NEW\n"
	"\n"
	"Matches the call stacks of two captures by their functions (not their\n"
	"addresses, which differ between runs) and shows the stacks whose figure\n"
	"changed most, NEW minus BASE, with the totals.\n"
	"BASE and NEW may name a moment of a run: FILE@N (snapshot N, as inspect\n"
	"lists them), FILE@end (the last snapshot), FILE@peak (in use at the peak);\n"
	"'heapprof diff run.hpf@1 run.hpf@2' shows what grew between two snapshots\n"
	"(moments are compared by what is in use at each: --metric leaked).\n"
	"  --metric M        peak (default: each stack's bytes in use at its run's\n"
	"                    peak, the bytes in use at the snapshot beside them),\n"
	"                    leaked (in use at the snapshot, the peak beside it),\n"
	"                    allocated, allocations, temporary\n"
	"  --top N           stacks shown (default 10, 0 = every stack that changed)\n"
	"  --frames N        frames shown per stack (default 8, 0 = all)\n"
	"  --width N         fit N columns (default: the terminal's, else $COLUMNS, else\n"
	"                    100; 0 = no limit)\n"
	"  --by DIM          what changed by type (with its source), or by function,\n"
	"                    line, module, context, thread or heap, instead of by stack\n"
	"  --json            the figures of both sides per stack (or per --by key),\n"
	"                    and the change, as JSON\n"
	"  --format F        text (default) or pprof: the changes as a pprof profile\n"
	"                    (negative values for what shrank), for go tool pprof\n"
	"  -o, --output OUT  where to write (default standard output for text)\n"
	"  --snapshot N      compare snapshot N of each capture (default the last)\n"
	"  --image N         use image N of each capture (1 = the first; default the\n"
	"                    last with a snapshot: a process that exec'd has several)\n"
	"  --debug-dir DIR   also look for separate debug info in DIR\n"
	"  --focus REGEX     only the stacks with a function matching REGEX\n"
	"  --ignore REGEX    leave out the stacks with a function matching REGEX\n"
	HP_CLI_EVENTS_HELP
	"  --hide REGEX      remove the functions matching REGEX from the stacks\n"
	"                    (POSIX extended regular expressions, as pprof's)\n"
	"  --heap NAME       the blocks of one heap on both sides, found by its name\n"
	"                    (malloc, the default, or a custom heap's)\n"
	"  --fail-if-grew BYTES  exit 3 when the bytes of the metric (the peak by\n"
	"                    default) grew by more than BYTES; K, M, G\n"
	"\n"
	"Exit status: 0 shown, 1 a capture cannot be used, 2 wrong usage, 3 the\n"
	"--fail-if-grew limit was passed (the diff is shown whole, and one line on\n"
	"stderr says by how much).\n";

/* A capture operand: FILE, or FILE@N, FILE@end, FILE@peak. */
struct moment {
	char path[4096];
	long snapshot; /* index into the capture's snapshots; -1 = the last */
	long seq;      /* FILE@N: N, which the snapshot's seq must be; else 0 */
	int named;     /* a moment was given */
	int at_peak;   /* FILE@peak */
};

/* Reads arg into mt, snapshot the --snapshot default. An operand that names
 * an existing file is that file, '@' or not; otherwise a suffix @N, @end or
 * @peak after its last '@' is a moment. Returns 0 or -EINVAL after saying
 * why (a bad moment, a path too long). */
static int parse_moment(const char *arg, long snapshot, struct moment *mt)
{
	const char *at = strrchr(arg, '@');
	size_t len = strlen(arg);
	char *end;

	memset(mt, 0, sizeof *mt);
	mt->snapshot = snapshot;
	if (len >= sizeof mt->path) {
		hp_say_error("diff: %.40s...: path too long", arg);
		return -EINVAL;
	}
	memcpy(mt->path, arg, len + 1);
	if (!at || access(arg, F_OK) == 0)
		return 0;
	mt->path[at - arg] = '\0';
	mt->named = 1;
	mt->snapshot = -1;
	if (strcmp(at + 1, "end") == 0)
		return 0;
	if (strcmp(at + 1, "peak") == 0) {
		mt->at_peak = 1;
		return 0;
	}
	errno = 0;
	mt->seq = strtol(at + 1, &end, 10);
	if (at[1] >= '0' && at[1] <= '9' && !*end && !errno && mt->seq >= 1) {
		mt->snapshot = mt->seq - 1; /* the recorder numbers an image's snapshots from 1 */
		return 0;
	}
	hp_say_error("diff: %s: a moment is @N (a snapshot, 1 = the first), @end or @peak, "
		     "not '@%s'", arg, at + 1);
	return -EINVAL;
}

/* The header's name of a side: the operand, and for a moment what it is
 * ("run.hpf@2 (snapshot 2 of 3, api, at 0.512 s)"). Returns 0, or -EINVAL
 * after saying why when FILE@N found another snapshot than the N-th. */
static int moment_name(char *buf, size_t cap, const char *arg, const struct moment *mt,
		       const struct hp_model *m)
{
	const struct hp_cap_snapshot *s = m->snap;

	if (mt->seq && s->seq != (uint64_t)mt->seq) {
		hp_say_error("diff: %s: snapshot %ld is numbered %llu in the capture", arg,
			     mt->seq, (unsigned long long)s->seq);
		return -EINVAL;
	}
	if (!mt->named)
		snprintf(buf, cap, "%s", arg);
	else if (mt->at_peak)
		snprintf(buf, cap, "%s (in use at the peak, %.3f s)", arg,
			 (double)s->peak_time_ns / 1e9);
	else
		snprintf(buf, cap, "%s (snapshot %llu of %zu, %s, at %.3f s)", arg,
			 (unsigned long long)s->seq, m->cap->nsnapshots,
			 hp_capture_reason_name(s->reason), (double)s->time_ns / 1e9);
	return 0;
}

/* --format: text or pprof. Returns 0 or -EINVAL after saying why. */
static int check_format(const char *cmd, const char *value)
{
	if (strcmp(value, "pprof") == 0 || strcmp(value, "text") == 0)
		return 0;
	hp_say_error("%s: --format wants text or pprof, not '%s'", cmd, value);
	return -EINVAL;
}

int hp_cmd_diff(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_METRIC, 0, 0, NULL},
		{HP_OPT_BY, 0, 0, hp_cli_check_by},
		{HP_OPT_JSON, 0, 0, NULL},
		{HP_OPT_TOP, 0, LONG_MAX, NULL},
		{HP_OPT_FRAMES, 0, LONG_MAX, NULL},
		{HP_OPT_WIDTH, 0, LONG_MAX, NULL},
		{HP_OPT_FORMAT, 0, 0, check_format},
		{HP_OPT_OUTPUT, 0, 0, NULL},
		{HP_OPT_SNAPSHOT, 1, LONG_MAX, NULL},
		{HP_OPT_IMAGE, 1, HP_CLI_IMAGE_MAX, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_FAIL_IF_GREW, 0, 0, NULL},
		{HP_OPT_FOCUS, 0, 0, NULL},
		{HP_OPT_IGNORE, 0, 0, NULL},
		{HP_OPT_HIDE, 0, 0, NULL},
		{HP_OPT_HEAP, 0, 0, NULL},
		{HP_OPT_LIVED_UNDER, 0, 0, NULL},
		{HP_OPT_LIVED_OVER, 0, 0, NULL},
		{HP_OPT_BETWEEN, 0, 0, NULL},
		{HP_OPT_THREAD, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_events_select ev;
	struct hp_cli_args a = {.metric = HP_METRIC_PEAK};
	struct hp_model_options mo = {0};
	struct hp_model_filter filter;
	unsigned at_peak = 0;
	struct hp_diff_text_options to = {.top = 10, .frames = 8, .width = hp_cli_terminal_width()};
	struct hp_capture cb, cn;
	struct hp_model mb, mn;
	struct hp_diff d;
	struct moment mtb, mtn;
	char base_name[4400], new_name[4400];
	const char *output;
	struct hp_cli_output o;
	int pprof, loaded = 0, ret, status = HP_EXIT_FAILURE;

	if (hp_cli_parse("diff", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (hp_cli_events("diff", &a, argv, &ev))
		return HP_EXIT_USAGE;
	mo.events = &ev;
	if (a.given[HP_OPT_TOP])
		to.top = (unsigned)a.number[HP_OPT_TOP];
	if (a.given[HP_OPT_FRAMES])
		to.frames = (unsigned)a.number[HP_OPT_FRAMES];
	if (a.given[HP_OPT_WIDTH])
		to.width = (unsigned)a.number[HP_OPT_WIDTH];
	mo.snapshot = hp_cli_snapshot(&a);
	mo.image = hp_cli_image(&a);
	mo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	mo.filter = hp_cli_filter(&a, &filter);
	output = a.value[HP_OPT_OUTPUT];
	pprof = a.given[HP_OPT_FORMAT] && strcmp(a.value[HP_OPT_FORMAT], "pprof") == 0;
	if (a.noperands != 2) {
		hp_say_error("diff: give two capture files, BASE and NEW");
		return HP_EXIT_USAGE;
	}
	if (a.given[HP_OPT_FAIL_IF_GREW] && !hp_metric_is_bytes(a.metric)) {
		hp_say_error("diff: --fail-if-grew is in bytes: use it with --metric leaked, peak "
			     "or allocated");
		return HP_EXIT_USAGE;
	}
	if (a.given[HP_OPT_JSON] && pprof) {
		hp_say_error("diff: --json is text's, not --format pprof's");
		return HP_EXIT_USAGE;
	}
	if (pprof && a.given[HP_OPT_BY]) {
		hp_say_error("diff: --by is for text and --json, not --format pprof");
		return HP_EXIT_USAGE;
	}
	if (pprof && !output) {
		hp_say_error("diff: --format pprof wants -o OUT");
		return HP_EXIT_USAGE;
	}
	if (pprof && (!output || strcmp(output, "-") == 0) && isatty(1)) {
		hp_say_error("diff: pprof is binary: not writing it to a terminal");
		return HP_EXIT_USAGE;
	}
	if (parse_moment(argv[a.operand], mo.snapshot, &mtb) ||
	    parse_moment(argv[a.operand + 1], mo.snapshot, &mtn))
		return HP_EXIT_USAGE;
	/* Moments of runs (FILE@N, @end, @peak) are compared by what is in use
	 * at each, unless --metric says otherwise: a snapshot's peak is the
	 * run's so far, not the moment's. */
	if (!a.given[HP_OPT_METRIC] && (mtb.named || mtn.named))
		a.metric = HP_METRIC_LEAKED;
	if ((mtb.at_peak || mtn.at_peak) && a.metric != HP_METRIC_LEAKED &&
	    a.metric != HP_METRIC_PEAK) {
		hp_say_error("diff: @peak is the bytes in use at the peak: use it with --metric "
			     "peak (the default) or leaked");
		return HP_EXIT_USAGE;
	}

	/* One model of each capture, no frame read after: each stack's frames
	 * are freed as they are made locations (model.h). */
	mo.snapshot = mtb.snapshot;
	mo.release_frames = &cb;
	/* Nor its per-site timeline or histograms; by stack (without --by,
	 * --heap), nor its buckets once summed into their stacks. */
	mo.release_parts = HP_CAP_PART_TIMELINE | HP_CAP_PART_HISTOGRAMS;
	mo.drop_buckets = !hp_cli_by(&a) && !a.given[HP_OPT_HEAP];
	if (hp_cli_load_model(mtb.path, &mo, &cb, &mb))
		return HP_EXIT_FAILURE;
	loaded = 1;
	mo.snapshot = mtn.snapshot;
	mo.release_frames = &cn;
	if (hp_cli_load_model(mtn.path, &mo, &cn, &mn))
		goto err;
	loaded = 2;
	{
		/* The runtime's one-time allocations (libstdc++'s pool, stdio's
		 * buffers) are suppressed as report suppresses them: out of the
		 * bytes in use and the leaks. */
		struct hp_suppressions sup = {0};
		ret = hp_suppressions_add_builtin(&sup);
		if (!ret)
			ret = hp_model_suppress(&mb, &sup);
		if (!ret)
			ret = hp_model_suppress(&mn, &sup);
		hp_suppressions_free(&sup);
		if (ret) {
			hp_say_error("diff: %s", strerror(-ret));
			goto err;
		}
	}
	if (a.given[HP_OPT_HEAP]) { /* one heap's blocks on both sides, by its name */
		char why[512];
		if (hp_heapview_select_named(&mb, a.value[HP_OPT_HEAP], mtb.path, why, sizeof why) ||
		    hp_heapview_select_named(&mn, a.value[HP_OPT_HEAP], mtn.path, why, sizeof why)) {
			hp_say_error("diff: %s", why);
			goto err;
		}
	}
	if (moment_name(base_name, sizeof base_name, argv[a.operand], &mtb, &mb) ||
	    moment_name(new_name, sizeof new_name, argv[a.operand + 1], &mtn, &mn))
		goto err;
	to.base_name = base_name;
	to.new_name = new_name;
	at_peak = (mtb.at_peak ? HP_DIFF_BASE_AT_PEAK : 0) | (mtn.at_peak ? HP_DIFF_NEW_AT_PEAK : 0);
	ret = hp_diff_build_at(&d, &mb, mtb.at_peak, &mn, mtn.at_peak, a.metric);
	if (ret) {
		hp_say_error("diff: %s", strerror(-ret));
		goto err;
	}
	if (hp_cli_output_open(&o, output, (const char *const *)argv + a.operand, 2)) {
		hp_diff_free(&d);
		goto err;
	}
	if (hp_cli_by(&a) && a.given[HP_OPT_JSON])
		ret = hp_diff_by_json(o.f, &mb, &mn, hp_cli_by(&a), a.metric, at_peak);
	else if (hp_cli_by(&a))
		ret = hp_diff_by_text(o.f, &mb, &mn, hp_cli_by(&a), a.metric, at_peak, &to);
	else
		ret = pprof		     ? hp_pprof_write_diff(o.f, &d)
		      : a.given[HP_OPT_JSON] ? hp_diff_json(o.f, &d, to.top, base_name, new_name)
					     : hp_diff_text(o.f, &d, &to);
	status = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;
	if (status == HP_EXIT_OK && a.given[HP_OPT_FAIL_IF_GREW]) {
		double bf, nf, unused;
		char x[32], y[32], n[32];
		hp_diff_figures(&d.base_total, a.metric, &bf, &unused);
		hp_diff_figures(&d.new_total, a.metric, &nf, &unused);
		if (nf - bf > (double)a.bytes[HP_OPT_FAIL_IF_GREW]) {
			hp_say_error("diff: %s grew by %s (%s bytes), over --fail-if-grew %s",
				     hp_metric_name(a.metric), hp_units_bytes(x, sizeof x, nf - bf),
				     hp_units_count(n, sizeof n, nf - bf),
				     hp_units_bytes(y, sizeof y,
						    (double)a.bytes[HP_OPT_FAIL_IF_GREW]));
			status = HP_EXIT_GATE;
		}
	}
	hp_diff_free(&d);

err:
	if (loaded == 2) {
		hp_model_free(&mn);
		hp_capture_free(&cn);
	}
	if (loaded >= 1) {
		hp_model_free(&mb);
		hp_capture_free(&cb);
	}
	return status;
}
