/*
 * report.c - `heapprof report`: the answers, in the terminal or as JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../analyzer/group.h"
#include "../analyzer/memmap.h"
#include "../analyzer/report.h"
#include "../analyzer/heapview.h"
#include "../common/units.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof report [options] FILE\n"
	"\n"
	"The peak heap consumers, leaks, most allocations, most temporary allocations\n"
	"and most bytes allocated, after a summary, by allocation site: the first\n"
	"frame of the program's own code and its line, with its call paths beneath\n"
	"(recursion merged: a function repeated in a stack counts once).\n"
	"  --top N          sites (or stacks) per section (default 10, 0 = all)\n"
	"  --frames N       frames shown per stack (default 8, 0 = all)\n"
	"  --by DIM         figures by stack (the sections by whole call stack),\n"
	"                   function, line or module (of the first frame of the\n"
	"                   program's own code), type (with its source: explicit,\n"
	"                   vtable, template, string, new, else unknown by size; an\n"
	"                   array's elements counted), context (a path\n"
	"                   'outer > inner', parents including children), thread or\n"
	"                   heap (malloc's and each custom heap's, with its own peak)\n"
	"  --heap NAME      the blocks of one heap in every section (malloc, the\n"
	"                   default, or a custom heap's name: report --by heap lists\n"
	"                   them)\n"
	"  --json           the same content as JSON, for scripts\n"
	"  --histograms     also each top stack's allocations by size and frees by\n"
	"                   lifetime (allocations lived through), powers of two\n"
	"  --timeline       also the bytes in use over time of the top --by groups\n"
	"                   (stacks by default), one line each, then 'other' (the\n"
	"                   recorder's per-site timeline, or the selection's blocks\n"
	"                   from the event log per ms; --json has it always)\n"
	"  --map            instead, the memory map (needs run --live-blocks): the\n"
	"                   regions that hold the heap (brk heap, arenas, mmap'd\n"
	"                   chunks), each with its RSS, bytes in use, blocks,\n"
	"                   largest gap, fragmentation (1 - in use / RSS) and top\n"
	"                   stacks; with --json, also every block\n"
	"  --blocks         instead, every block of the event log one a line (needs\n"
	"                   run --events): address, size, type, thread, allocation\n"
	"                   and free times (s since the start), lifetime (ms), stack\n"
	"                   id; the first --top (default 100000, 0 = all); with\n"
	"                   --json, one object a block and their stacks' frames;\n"
	"                   the options below select which\n"
	HP_CLI_EVENTS_HELP
	"                   (every view of report, flamegraph, export, html and\n"
	"                   diff takes them)\n"
	"  --snapshot N     report snapshot N (1 = the first; default the last)\n"
	"  --image N        image N of the capture (1 = the first; default the last\n"
	"                   with a snapshot: a process that exec'd has several)\n"
	"  --debug-dir DIR  also look for separate debug info in DIR\n"
	"  --width N        fit N columns (default: the terminal's, else $COLUMNS, else\n"
	"                   100; 0 = no limit): long names are cut in the middle\n"
	"  --all-frames     every frame: also the runtime's below main and a thread's\n"
	"                   start, and library frames one a line (by default a run of\n"
	"                   them is one line, '[+N library frames]')\n"
	"  --full-names     names as they are (default: template arguments <...>,\n"
	"                   no parameter lists)\n"
	"  --focus REGEX    only the stacks with a function matching REGEX\n"
	"  --ignore REGEX   leave out the stacks with a function matching REGEX\n"
	"  --hide REGEX     remove the functions matching REGEX from the stacks\n"
	"                   (POSIX extended regular expressions, as pprof's options)\n"
	"  --suppressions FILE  leaks not to report, in LeakSanitizer's format\n"
	"                   ('leak:PATTERN' lines: a function, file or module)\n"
	"  --no-default-suppressions  report the runtime's one-time allocations\n"
	"                   (libstdc++'s exception pool, stdio buffers, TLS) as leaks\n"
	"  --fail-if-leaked BYTES  exit 3 when more than BYTES are leaked (in use at\n"
	"                   the snapshot, suppressions left out); K, M, G suffixes\n"
	"  --fail-if-peak BYTES    exit 3 when the peak heap is over BYTES\n"
	"\n"
	"Exit status: 0 shown, 1 the capture cannot be used, 2 wrong usage, 3 a\n"
	"--fail-if limit was passed (the report is shown whole, and one line on\n"
	"stderr says which limit).\n";

unsigned hp_cli_terminal_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols && atoi(cols) > 0)
		return (unsigned)atoi(cols);
	return 100; /* piped, no $COLUMNS: what a reader's window shows */
}

/* The CI gates: HP_EXIT_GATE after one line per limit passed, else
 * HP_EXIT_OK. Leaks are what the report calls leaks: suppressed stacks left
 * out. */
static int gates(const struct hp_cli_args *a, const struct hp_model *m)
{
	double leaked = m->total.inuse_bytes - m->suppressed.inuse_bytes;
	double peak = m->total.peak_bytes;
	char x[32], y[32], n[32];
	int status = HP_EXIT_OK;

	if (a->given[HP_OPT_FAIL_IF_LEAKED] && leaked > (double)a->bytes[HP_OPT_FAIL_IF_LEAKED]) {
		hp_say_error("report: leaked %s (%s bytes), over --fail-if-leaked %s",
			     hp_units_bytes(x, sizeof x, leaked), hp_units_count(n, sizeof n, leaked),
			     hp_units_bytes(y, sizeof y, (double)a->bytes[HP_OPT_FAIL_IF_LEAKED]));
		status = HP_EXIT_GATE;
	}
	if (a->given[HP_OPT_FAIL_IF_PEAK] && peak > (double)a->bytes[HP_OPT_FAIL_IF_PEAK]) {
		hp_say_error("report: peak heap %s (%s bytes), over --fail-if-peak %s",
			     hp_units_bytes(x, sizeof x, peak), hp_units_count(n, sizeof n, peak),
			     hp_units_bytes(y, sizeof y, (double)a->bytes[HP_OPT_FAIL_IF_PEAK]));
		status = HP_EXIT_GATE;
	}
	return status;
}

/* The default of --blocks' --top: a listing bounded for a huge log. */
#define BLOCKS_TOP 100000

/* report --blocks: the event log's blocks one a line, or (--json) as
 * JSON with their stacks' frames (a model of the last snapshot names
 * them). */
static int report_blocks(const char *path, const struct hp_cli_args *a,
			 const struct hp_events_select *ev)
{
	struct hp_model_options mo = {.snapshot = -1};
	size_t limit = a->given[HP_OPT_TOP] ? (size_t)a->number[HP_OPT_TOP] : BLOCKS_TOP;
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	char err[512];
	int ret;

	if (hp_cli_capture_load(path, &cap, err, sizeof err) < 0) {
		hp_say_error("%s", err);
		return HP_EXIT_FAILURE;
	}
	if (cap.ndamage)
		hp_say_error("%s: damaged, showing what is readable: %s", path, cap.damage[0]);
	if (a->given[HP_OPT_IMAGE] && hp_capture_select(&cap, (size_t)a->number[HP_OPT_IMAGE] - 1)) {
		hp_say_error("%s: there is no image %ld (the capture has %zu)", path,
			     a->number[HP_OPT_IMAGE], cap.nimages);
		hp_capture_free(&cap);
		return HP_EXIT_FAILURE;
	}
	if (!hp_events_has_log(&cap)) {
		hp_say_error("%s: the capture has no event log: record with heapprof run --events",
			     path);
		hp_capture_free(&cap);
		return HP_EXIT_FAILURE;
	}
	if (!a->given[HP_OPT_JSON]) {
		hp_cli_output_open(&o, "-", NULL, 0);
		ret = hp_events_print_blocks(o.f, &cap, ev, limit);
		ret = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;
		hp_capture_free(&cap);
		return ret;
	}
	mo.debug_dir = a->value[HP_OPT_DEBUG_DIR];
	if (hp_cli_build_model(path, &mo, &cap, &model)) /* frees cap when it fails */
		return HP_EXIT_FAILURE;
	hp_cli_output_open(&o, "-", NULL, 0);
	ret = hp_report_blocks_json(o.f, &model, ev, limit);
	ret = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;
	hp_model_free(&model);
	hp_capture_free(&cap);
	return ret;
}

int hp_cmd_report(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_TOP, 0, LONG_MAX, NULL},
		{HP_OPT_FRAMES, 0, LONG_MAX, NULL},
		{HP_OPT_JSON, 0, 0, NULL},
		{HP_OPT_HISTOGRAMS, 0, 0, NULL},
		{HP_OPT_MAP, 0, 0, NULL},
		{HP_OPT_OVER_TIME, 0, 0, NULL},
		{HP_OPT_BY, 0, 0, hp_cli_check_by},
		{HP_OPT_HEAP, 0, 0, NULL},
		{HP_OPT_SNAPSHOT, 1, LONG_MAX, NULL},
		{HP_OPT_IMAGE, 1, HP_CLI_IMAGE_MAX, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_WIDTH, 0, LONG_MAX, NULL},
		{HP_OPT_ALL_FRAMES, 0, 0, NULL},
		{HP_OPT_FULL_NAMES, 0, 0, NULL},
		{HP_OPT_FOCUS, 0, 0, NULL},
		{HP_OPT_IGNORE, 0, 0, NULL},
		{HP_OPT_HIDE, 0, 0, NULL},
		{HP_OPT_SUPPRESSIONS, 0, 0, NULL},
		{HP_OPT_NO_DEFAULT_SUPPRESSIONS, 0, 0, NULL},
		{HP_OPT_FAIL_IF_LEAKED, 0, 0, NULL},
		{HP_OPT_FAIL_IF_PEAK, 0, 0, NULL},
		{HP_OPT_BLOCKS, 0, 0, NULL},
		{HP_OPT_LIVED_UNDER, 0, 0, NULL},
		{HP_OPT_LIVED_OVER, 0, 0, NULL},
		{HP_OPT_BETWEEN, 0, 0, NULL},
		{HP_OPT_THREAD, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_events_select ev;
	struct hp_events_window win = {0};
	struct hp_cli_args a;
	struct hp_model_options mo = {0};
	struct hp_model_filter filter;
	struct hp_suppressions sup = {0};
	char err[512];
	struct hp_report_options ro = {.top = 10, .frames = 8, .width = hp_cli_terminal_width()};
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	int ret, status;

	if (hp_cli_parse("report", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (hp_cli_events("report", &a, argv, &ev))
		return HP_EXIT_USAGE;
	if (a.given[HP_OPT_BLOCKS] && a.noperands == 1)
		return report_blocks(argv[a.operand], &a, &ev);
	mo.events = &ev;
	mo.events_window = &win;
	ro.events = ev.on ? &ev : NULL; /* the charts and --timeline from the log */
	if (a.given[HP_OPT_TOP])
		ro.top = (unsigned)a.number[HP_OPT_TOP];
	if (a.given[HP_OPT_FRAMES])
		ro.frames = (unsigned)a.number[HP_OPT_FRAMES];
	if (a.given[HP_OPT_WIDTH])
		ro.width = (unsigned)a.number[HP_OPT_WIDTH];
	mo.snapshot = hp_cli_snapshot(&a);
	mo.image = hp_cli_image(&a);
	mo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	mo.filter = hp_cli_filter(&a, &filter);
	ro.all_frames = a.given[HP_OPT_ALL_FRAMES];
	ro.full_names = a.given[HP_OPT_FULL_NAMES];
	if (a.noperands != 1) {
		hp_say_error("report: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	ret = a.given[HP_OPT_NO_DEFAULT_SUPPRESSIONS] ? 0 : hp_suppressions_add_builtin(&sup);
	if (!ret && a.given[HP_OPT_SUPPRESSIONS]) {
		ret = hp_suppressions_load(&sup, a.value[HP_OPT_SUPPRESSIONS], err, sizeof err);
		if (ret) {
			hp_say_error("report: --suppressions: %s", err);
			hp_suppressions_free(&sup);
			return ret == -EINVAL ? HP_EXIT_USAGE : HP_EXIT_FAILURE;
		}
	}
	/* One model of the capture, no frame read after: each stack's frames
	 * are freed as they are made locations (model.h). */
	mo.release_frames = &cap;
	/* The per-site timeline and the histograms are read by --json,
	 * --timeline, --histograms only: without them, given back before
	 * the model is built. */
	if (!a.given[HP_OPT_JSON] && !a.given[HP_OPT_OVER_TIME])
		mo.release_parts |= HP_CAP_PART_TIMELINE;
	if (!a.given[HP_OPT_JSON] && !a.given[HP_OPT_HISTOGRAMS])
		mo.release_parts |= HP_CAP_PART_HISTOGRAMS;
	if (ret || hp_cli_load_capture(argv[a.operand], &mo, &cap)) {
		hp_suppressions_free(&sup);
		return HP_EXIT_FAILURE;
	}
	/* The snapshot's buckets stay: they hold the model's figures
	 * (hp_mbucket_values). */
	if (hp_cli_build_model(argv[a.operand], &mo, &cap, &model)) {
		hp_suppressions_free(&sup);
		return HP_EXIT_FAILURE;
	}
	/* --top 0: all, as many as there are stacks or groups (buckets). */
	if (a.given[HP_OPT_TOP] && !ro.top)
		ro.top = (unsigned)(model.nstacks > model.nbuckets
					    ? (model.nstacks < UINT_MAX ? model.nstacks : UINT_MAX)
					    : (model.nbuckets < UINT_MAX ? model.nbuckets + 1 : UINT_MAX));
	ret = hp_model_suppress(&model, &sup);
	hp_suppressions_free(&sup);
	if (ret) {
		hp_say_error("report: %s", strerror(-ret));
		hp_model_free(&model);
		hp_capture_free(&cap);
		return HP_EXIT_FAILURE;
	}
	enum hp_dim by = (enum hp_dim)hp_cli_by(&a);
	if (a.given[HP_OPT_HEAP]) {
		/* One heap's blocks in every section and view (heapview.h). */
		char err[512];
		int64_t h = hp_model_find_heap(&model, a.value[HP_OPT_HEAP]);
		if (h < 0 || by == HP_BY_HEAP || a.given[HP_OPT_MAP]) {
			if (h < 0)
				hp_say_error("report: %s has no heap named '%s' (report --by heap "
					     "lists its heaps)",
					     argv[a.operand], a.value[HP_OPT_HEAP]);
			else
				hp_say_error("report: --heap shows one heap: not with --by heap "
					     "or --map");
			hp_model_free(&model);
			hp_capture_free(&cap);
			return h < 0 ? HP_EXIT_FAILURE : HP_EXIT_USAGE;
		}
		hp_heapview_select_named(&model, a.value[HP_OPT_HEAP], argv[a.operand], err,
					 sizeof err);
	}
	/* --by stack, and --all-frames (the raw view): the sections by call
	 * stack; by default, by allocation site (report_site.c). */
	ro.by_stack = (a.given[HP_OPT_BY] && by == HP_BY_STACK) || ro.all_frames;
	hp_cli_output_open(&o, "-", NULL, 0); /* standard output: cannot fail */
	if (ev.between && !a.given[HP_OPT_JSON])
		hp_events_print_window(o.f, &win);
	if (a.given[HP_OPT_MAP])
		ret = hp_report_map(o.f, &model, &ro, a.given[HP_OPT_JSON]);
	else if (by != HP_BY_STACK)
		ret = a.given[HP_OPT_JSON] ? hp_report_by_json(o.f, &model, &ro, by)
					   : hp_report_by_text(o.f, &model, &ro, by);
	else
		ret = a.given[HP_OPT_JSON] ? hp_report_json(o.f, &model, &ro)
					   : hp_report_text(o.f, &model, &ro);
	/* The histograms after the text report (JSON has them always). */
	if (!ret && a.given[HP_OPT_HISTOGRAMS] && !a.given[HP_OPT_JSON] && !a.given[HP_OPT_MAP])
		ret = hp_report_hist_text(o.f, &model, &ro);
	/* The timeline by the same dimension after it (JSON: "timeline",
	 * always). */
	if (!ret && a.given[HP_OPT_OVER_TIME] && !a.given[HP_OPT_JSON] && !a.given[HP_OPT_MAP])
		ret = hp_report_timeline_text(o.f, &model, &ro, by);
	status = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : gates(&a, &model);
	hp_model_free(&model);
	hp_capture_free(&cap);
	return status;
}
