/*
 * flamegraph.c - `heapprof flamegraph`: a capture's call stacks as one
 * interactive SVG flame graph (analyzer/flame.h), for a browser.
 *
 * The output is written in place; when writing fails the partial file is
 * removed, so a file that exists is whole.
 *
 * Exit status: 0 when written, 1 for a capture that cannot be used or a
 * failed write, 2 for wrong usage.
 */
#include <stdio.h>
#include <string.h>

#include "../analyzer/flame.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof flamegraph FILE [-o OUT.svg] [options]\n"
	"\n"
	"Draws the call stacks of a capture as a flame graph: one self-contained SVG\n"
	"to open in a browser, the root at the bottom, each frame as wide as its share\n"
	"of the metric. Hover for details, click to zoom, type a regular expression\n"
	"in the search box (Ctrl-F goes there) to highlight the functions matching.\n"
	"  -o, --output OUT     the file to write ('-' = standard output; default the\n"
	"                       capture's name with .svg for .hpf, here, never\n"
	"                       replacing a file)\n"
	"  --metric M           peak (default: bytes in use at the peak), leaked (bytes\n"
	"                       in use at the snapshot), allocated (bytes), allocations,\n"
	"                       temporary (counts)\n"
	"  --snapshot N         draw snapshot N (1 = the first; default the last)\n"
	"  --image N            image N of the capture (1 = the first; default the last\n"
	"                       with a snapshot: a process that exec'd has several)\n"
	"  --heap NAME|all      the blocks of one heap (malloc, or a custom heap's\n"
	"                       name) or of every heap (the default); with a custom\n"
	"                       heap's blocks, each stack stands on a root frame\n"
	"                       '[heap NAME]' that names its heap\n"
	"  --title T            the title (default: the metric and the program)\n"
	"  --width PX           the image's width in pixels (default 1200)\n"
	"  --debug-dir DIR      also look for separate debug info in DIR\n"
	"  --by type|context    each stack under a root frame of its type or its\n"
	"                       context path\n"
	"  --icicle             an icicle graph: the root at the top, the innermost\n"
	"                       frames below\n"
	"  --all-frames         every frame: also the runtime's below main and a\n"
	"                       thread's start (by default left out, as report\n"
	"                       leaves them out)\n"
	"  --focus REGEX        only the stacks with a function matching REGEX\n"
	"  --ignore REGEX       leave out the stacks with a function matching REGEX\n"
	HP_CLI_EVENTS_HELP
	"  --hide REGEX         remove the functions matching REGEX from the stacks\n"
	"                       (POSIX extended regular expressions, as pprof's)\n"	"\n"
	"Frames narrower than 0.1% of the total are left out. Figures of a sampled\n"
	"capture are unbiased estimates.\n";

int hp_cmd_flamegraph(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_OUTPUT, 0, 0, NULL},
		{HP_OPT_METRIC, 0, 0, NULL},
		{HP_OPT_SNAPSHOT, 1, 1000000000L, NULL},
		{HP_OPT_IMAGE, 1, HP_CLI_IMAGE_MAX, NULL},
		{HP_OPT_HEAP, 0, 0, NULL},
		{HP_OPT_TITLE, 0, 0, NULL},
		{HP_OPT_WIDTH, 200, 100000, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_ICICLE, 0, 0, NULL},
		{HP_OPT_ALL_FRAMES, 0, 0, NULL},
		{HP_OPT_BY, 0, 0, hp_cli_check_by_root},
		{HP_OPT_FOCUS, 0, 0, NULL},
		{HP_OPT_IGNORE, 0, 0, NULL},
		{HP_OPT_HIDE, 0, 0, NULL},
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
	struct hp_flame_options fo = {0};
	struct hp_capture cap;
	struct hp_model model;
	struct hp_flame *flame = NULL;
	struct hp_cli_output o;
	const char *output;
	char default_out[4096];
	int64_t heap;
	int ret, status = HP_EXIT_FAILURE;

	if (hp_cli_parse("flamegraph", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (hp_cli_events("flamegraph", &a, argv, &ev))
		return HP_EXIT_USAGE;
	mo.events = &ev;
	mo.snapshot = hp_cli_snapshot(&a);
	mo.image = hp_cli_image(&a);
	mo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	mo.filter = hp_cli_filter(&a, &filter);
	fo.title = a.value[HP_OPT_TITLE];
	fo.icicle = a.given[HP_OPT_ICICLE];
	if (a.given[HP_OPT_WIDTH])
		fo.width_px = (unsigned)a.number[HP_OPT_WIDTH];
	if (a.noperands != 1) {
		hp_say_error("flamegraph: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	output = a.value[HP_OPT_OUTPUT];
	if (!output && !(output = hp_cli_default_output("flamegraph", argv[a.operand], ".svg",
							 default_out, sizeof default_out)))
		return HP_EXIT_FAILURE;
	/* One model of the capture, no frame read after: each stack's frames
	 * are freed as they are made locations (model.h). */
	mo.release_frames = &cap;
	if (hp_cli_load_model(argv[a.operand], &mo, &cap, &model))
		return HP_EXIT_FAILURE;

	if (hp_cli_heap(&a, &model, argv[a.operand], &heap))
		goto err;
	ret = hp_flame_build_heap(&model, a.metric, hp_cli_by(&a), heap, a.given[HP_OPT_ALL_FRAMES],
				  &flame);
	if (ret) {
		hp_say_error("%s: cannot build the flame graph: %s", argv[a.operand], strerror(-ret));
		goto err;
	}
	if (hp_cli_output_open(&o, output, (const char *const *)argv + a.operand, 1))
		goto err;
	ret = hp_flame_write_svg(o.f, flame, &fo, NULL);
	status = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;
	if (status == HP_EXIT_OK && !a.value[HP_OPT_OUTPUT])
		fprintf(stderr, "heapprof: wrote %s\n", output);

err:
	hp_flame_free(flame);
	hp_model_free(&model);
	hp_capture_free(&cap);
	return status;
}
