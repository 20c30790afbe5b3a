/*
 * diff.c - `heapprof diff BASE NEW`: what grew and what shrank between two
 * captures, per call stack (diff.h), as text or as a pprof profile of the
 * changes.
 *
 * Exit status: 0 when shown or written, 1 for a capture that cannot be
 * used or a failed write, 2 for wrong usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyzer/diff.h"
#include "../analyzer/pprof.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof diff [options] BASE NEW\n"
	"\n"
	"Matches the call stacks of two captures by their functions (not their\n"
	"addresses, which differ between runs) and shows the stacks whose figure\n"
	"changed most, NEW minus BASE, with the totals.\n"
	"  --metric M        leaked (default: bytes and objects in use at the snapshot),\n"
	"                    peak, allocated, allocations, temporary\n"
	"  --top N           stacks shown (default 10, 0 = every stack that changed)\n"
	"  --frames N        frames shown per stack (default 8, 0 = all)\n"
	"  --format F        text (default) or pprof: the changes as a pprof profile\n"
	"                    (negative values for what shrank), for go tool pprof\n"
	"  -o, --output OUT  where to write (default standard output for text)\n"
	"  --snapshot N      compare snapshot N of each capture (default the last)\n"
	"  --image N         use image N of each capture (1 = the first; default the\n"
	"                    last with a snapshot: a process that exec'd has several)\n"
	"  --debug-dir DIR   also look for separate debug info in DIR\n";

int hp_cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"metric", required_argument, NULL, 'm'},   {"top", required_argument, NULL, 't'},
		{"frames", required_argument, NULL, 'f'},   {"format", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},   {"snapshot", required_argument, NULL, 's'},
		{"debug-dir", required_argument, NULL, 'd'}, {"image", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},         {0},
	};
	struct hp_model_options mo = {.snapshot = -1};
	struct hp_diff_text_options to = {.top = 10, .frames = 8};
	enum hp_metric metric = HP_METRIC_LEAKED;
	struct hp_capture cb, cn;
	struct hp_model mb, mn;
	struct hp_diff d;
	const char *output = NULL;
	struct hp_cli_output o;
	int pprof = 0, loaded = 0, c, ret, status = 1;
	long v;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (hp_metric_parse(optarg, &metric)) {
				hp_cli_error("diff: unknown metric '%s' (peak, leaked, allocated, "
					     "allocations, temporary)", optarg);
				return 2;
			}
			break;
		case 't':
			if (hp_cli_number("diff", "--top", optarg, 0, LONG_MAX, &v))
				return 2;
			to.top = (unsigned)v;
			break;
		case 'f':
			if (hp_cli_number("diff", "--frames", optarg, 0, LONG_MAX, &v))
				return 2;
			to.frames = (unsigned)v;
			break;
		case 's':
			if (hp_cli_number("diff", "--snapshot", optarg, 1, LONG_MAX, &v))
				return 2;
			mo.snapshot = v - 1;
			break;
		case 'F':
			if (strcmp(optarg, "pprof") != 0 && strcmp(optarg, "text") != 0) {
				hp_cli_error("diff: --format wants text or pprof, not '%s'", optarg);
				return 2;
			}
			pprof = strcmp(optarg, "pprof") == 0;
			break;
		case 'o': output = optarg; break;
		case 'd': mo.debug_dir = optarg; break;
		case 'i':
			if (hp_cli_number("diff", "--image", optarg, 1, 1000000L, &v))
				return 2;
			mo.image = (size_t)v;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 2) {
		hp_cli_error("diff: give two capture files, BASE and NEW");
		return 2;
	}
	if (pprof && !output) {
		hp_cli_error("diff: --format pprof wants -o OUT");
		return 2;
	}
	if (pprof && (!output || strcmp(output, "-") == 0) && isatty(1)) {
		hp_cli_error("diff: pprof is binary: not writing it to a terminal");
		return 2;
	}
	to.base_name = argv[optind];
	to.new_name = argv[optind + 1];

	if (hp_cli_load_model(argv[optind], &mo, &cb, &mb))
		return 1;
	loaded = 1;
	if (hp_cli_load_model(argv[optind + 1], &mo, &cn, &mn))
		goto err;
	loaded = 2;
	ret = hp_diff_build(&d, &mb, &mn, metric);
	if (ret) {
		hp_cli_error("diff: %s", strerror(-ret));
		goto err;
	}
	if (hp_cli_output_open(&o, output, (const char *const *)argv + optind, 2)) {
		hp_diff_free(&d);
		goto err;
	}
	ret = pprof ? hp_pprof_write_diff(o.f, &d) : hp_diff_text(o.f, &d, &to);
	hp_diff_free(&d);
	status = hp_cli_output_close(&o, ret);

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
