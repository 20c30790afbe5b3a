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
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/flame.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof flamegraph FILE -o OUT.svg [options]\n"
	"\n"
	"Draws the call stacks of a capture as a flame graph: one self-contained SVG\n"
	"to open in a browser, the root at the bottom, each frame as wide as its share\n"
	"of the metric. Hover for details, click to zoom, Ctrl-F (or Search) to\n"
	"highlight functions matching a regular expression.\n"
	"  -o, --output OUT     the file to write ('-' = standard output)\n"
	"  --metric M           peak (default: bytes in use at the peak), leaked (bytes\n"
	"                       in use at the snapshot), allocated (bytes), allocations,\n"
	"                       temporary (counts)\n"
	"  --snapshot N         draw snapshot N (1 = the first; default the last)\n"
	"  --image N            image N of the capture (1 = the first; default the last\n"
	"                       with a snapshot: a process that exec'd has several)\n"
	"  --title T            the title (default: the metric and the program)\n"
	"  --width PX           the image's width in pixels (default 1200)\n"
	"  --debug-dir DIR      also look for separate debug info in DIR\n"
	"\n"
	"Frames narrower than 0.1% of the total are left out. Figures of a sampled\n"
	"capture are unbiased estimates.\n";

int hp_cmd_flamegraph(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},   {"metric", required_argument, NULL, 'm'},
		{"snapshot", required_argument, NULL, 's'}, {"title", required_argument, NULL, 't'},
		{"width", required_argument, NULL, 'w'},    {"debug-dir", required_argument, NULL, 'd'},
		{"image", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},         {0},
	};
	struct hp_model_options mo = {.snapshot = -1};
	struct hp_flame_options fo = {0};
	enum hp_metric metric = HP_METRIC_PEAK;
	const char *output = NULL;
	struct hp_capture cap;
	struct hp_model model;
	struct hp_flame *flame = NULL;
	struct hp_cli_output o;
	long v;
	int c, ret, status = 1;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'm':
			if (hp_metric_parse(optarg, &metric)) {
				hp_cli_error("flamegraph: unknown metric '%s' (peak, leaked, allocated, "
					     "allocations, temporary)", optarg);
				return 2;
			}
			break;
		case 's':
			if (hp_cli_number("flamegraph", "--snapshot", optarg, 1, 1000000000L, &v))
				return 2;
			mo.snapshot = v - 1;
			break;
		case 't': fo.title = optarg; break;
		case 'w':
			if (hp_cli_number("flamegraph", "--width", optarg, 200, 100000, &v))
				return 2;
			fo.width_px = (unsigned)v;
			break;
		case 'd': mo.debug_dir = optarg; break;
		case 'i':
			if (hp_cli_number("flamegraph", "--image", optarg, 1, 1000000L, &v))
				return 2;
			mo.image = (size_t)v;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		hp_cli_error("flamegraph: give exactly one capture file");
		return 2;
	}
	if (!output) {
		hp_cli_error("flamegraph: say where to write the SVG (-o OUT.svg)");
		return 2;
	}
	if (hp_cli_load_model(argv[optind], &mo, &cap, &model))
		return 1;

	ret = hp_flame_build(&model, metric, &flame);
	if (ret) {
		hp_cli_error("%s: cannot build the flame graph: %s", argv[optind], strerror(-ret));
		goto err;
	}
	if (hp_cli_output_open(&o, output, (const char *const *)argv + optind, 1))
		goto err;
	status = hp_cli_output_close(&o, hp_flame_write_svg(o.f, flame, &fo, NULL));

err:
	hp_flame_free(flame);
	hp_model_free(&model);
	hp_capture_free(&cap);
	return status;
}
