/*
 * html.c - `heapprof html`: a capture as one self-contained HTML page
 * (analyzer/html.h): summary, heap and RSS timeline with its snapshots,
 * flame graph and tables of the selected snapshot.
 *
 * The output is written in place; when writing fails the partial file is
 * removed, so a file that exists is whole.
 *
 * Exit status: 0 when written, 1 for a capture that cannot be used or a
 * failed write, 2 for wrong usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../analyzer/html.h"
#include "../common/text.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof html FILE -o OUT.html [options]\n"
	"\n"
	"Writes one self-contained HTML page to open in a browser (it fetches\n"
	"nothing): the summary, the heap and RSS over time with the snapshots marked\n"
	"(click one: every view shows it), the flame graph of the snapshot by metric\n"
	"(in use, peak, allocated, allocations, temporary) with search and zoom, and\n"
	"sortable, filterable tables by call stack, function, file:line and module;\n"
	"click a row or a frame for that site's sizes and lifetimes; with an event\n"
	"log (run --events), the bytes in use over time per millisecond, stacked by\n"
	"type, thread, context or call stack.\n"
	"  -o, --output OUT     the file to write ('-' = standard output)\n"
	"  --top N              call stacks kept per snapshot, by their largest share of\n"
	"                       any metric (default 1000, 0 = all), and as many rows\n"
	"                       of the tables by function, file:line and module\n"
	"                       (counted over every stack); the rest form one row\n"
	"  --image N            image N of the capture (1 = the first; default the last\n"
	"                       with a snapshot: a process that exec'd has several)\n"
	"  --title T            the page's title (default: heapprof: PROGRAM)\n"
	"  --debug-dir DIR      also look for separate debug info in DIR\n"
	"  --heap NAME          the blocks of one heap in every view by call stack\n"
	"                       (malloc, the default, or a custom heap's name)\n"
	"  --all-frames         every frame: also the runtime's below main and a\n"
	"                       thread's start (by default left out, as report\n"
	"                       leaves them out)\n"
	"  --suppressions FILE  leaks not to report, in LeakSanitizer's format\n"
	"  --no-default-suppressions  keep the runtime's one-time allocations in what\n"
	"                       is in use and the tables by type, context, thread, heap\n"
	HP_CLI_EVENTS_HELP
	"                   (the page shows the selection as its last snapshot, and\n"
	"                   the event log's chart the selected blocks alone)\n"
	"\n"
	"Open OUT.html#snapshot=N&metric=M&view=flame to start at snapshot N\n"
	"(site=function:NAME selects a site; docs/html.md lists the others).\n"
	"Figures of a sampled capture are unbiased estimates.\n";

int hp_cmd_html(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_OUTPUT, 0, 0, NULL},
		{HP_OPT_TOP, 0, 1000000L, NULL},
		{HP_OPT_IMAGE, 1, HP_CLI_IMAGE_MAX, NULL},
		{HP_OPT_TITLE, 0, 0, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_ALL_FRAMES, 0, 0, NULL},
		{HP_OPT_HEAP, 0, 0, NULL},
		{HP_OPT_SUPPRESSIONS, 0, 0, NULL},
		{HP_OPT_NO_DEFAULT_SUPPRESSIONS, 0, 0, NULL},
		{HP_OPT_LIVED_UNDER, 0, 0, NULL},
		{HP_OPT_LIVED_OVER, 0, 0, NULL},
		{HP_OPT_BETWEEN, 0, 0, NULL},
		{HP_OPT_THREAD, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_events_select ev;
	struct hp_cli_args a = {.metric = HP_METRIC_PEAK};
	struct hp_model_options mo = {0};
	struct hp_html_options ho = {0};
	struct hp_suppressions sup = {0};
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	char err[512];
	int ret, status = HP_EXIT_FAILURE;

	if (hp_cli_parse("html", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (hp_cli_events("html", &a, argv, &ev))
		return HP_EXIT_USAGE;
	mo.events = &ev;
	ho.events = &ev;
	if (a.noperands != 1) {
		hp_say_error("html: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	if (!a.value[HP_OPT_OUTPUT]) {
		hp_say_error("html: say where to write the page (-o OUT.html)");
		return HP_EXIT_USAGE;
	}
	mo.image = hp_cli_image(&a);
	mo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	ho.debug_dir = mo.debug_dir;
	ho.title = a.value[HP_OPT_TITLE];
	ho.all_frames = a.given[HP_OPT_ALL_FRAMES];
	ho.heap = a.value[HP_OPT_HEAP];
	if (a.given[HP_OPT_TOP]) /* 0: all, the most --top takes */
		ho.top_stacks = a.number[HP_OPT_TOP] ? (size_t)a.number[HP_OPT_TOP] : 1000000;
	/* The suppressions report applies (src/cli/report.c), so the page's
	 * summary and tables by type, context, thread and heap agree with it. */
	ret = a.given[HP_OPT_NO_DEFAULT_SUPPRESSIONS] ? 0 : hp_suppressions_add_builtin(&sup);
	if (!ret && a.given[HP_OPT_SUPPRESSIONS]) {
		ret = hp_suppressions_load(&sup, a.value[HP_OPT_SUPPRESSIONS], err, sizeof err);
		if (ret) {
			hp_say_error("html: --suppressions: %s", err);
			hp_suppressions_free(&sup);
			return ret == -EINVAL ? HP_EXIT_USAGE : HP_EXIT_FAILURE;
		}
	}
	if (ret) {
		hp_say_error("html: %s", strerror(-ret));
		hp_suppressions_free(&sup);
		return HP_EXIT_FAILURE;
	}
	ho.suppressions = &sup;
	/* The last snapshot's model, for what loading says (damage, missing
	 * symbols) and to check the capture; the page takes it for that
	 * snapshot and builds the others'. The frames go with the last model
	 * built: this one when the capture has one snapshot, else the page's
	 * last (html.h). */
	mo.snapshot = -1;
	mo.release_frames = &cap; /* loaded with its frames interned (hp_cli_load_capture) */
	if (hp_cli_load_capture(argv[a.operand], &mo, &cap)) {
		hp_suppressions_free(&sup);
		return HP_EXIT_FAILURE;
	}
	if (cap.nsnapshots != 1) {
		mo.release_frames = NULL;
		ho.release_frames = &cap;
	}
	if (hp_cli_build_model(argv[a.operand], &mo, &cap, &model)) {
		hp_suppressions_free(&sup);
		return HP_EXIT_FAILURE;
	}
	if (ho.heap && hp_model_find_heap(&model, ho.heap) < 0) {
		hp_say_error("%s has no heap named '%s' (report --by heap lists its heaps)",
			     argv[a.operand], ho.heap);
		hp_model_free(&model);
		hp_capture_free(&cap);
		hp_suppressions_free(&sup);
		return HP_EXIT_FAILURE;
	}
	ho.last_model = &model; /* the page frees it */

	if (hp_cli_output_open(&o, a.value[HP_OPT_OUTPUT], (const char *const *)argv + a.operand,
			       1)) {
		hp_model_free(&model);
		goto err;
	}
	ret = hp_html_write(o.f, &cap, &ho, err, sizeof err);
	if (ret && ret != -EIO)
		hp_say_error("%s: %s", argv[a.operand], err);
	status = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;

err:
	hp_capture_free(&cap);
	hp_suppressions_free(&sup);
	return status;
}
