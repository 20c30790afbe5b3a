/*
 * report.c - `heapprof report`: the answers, in the terminal or as JSON.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../analyzer/report.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof report [options] FILE\n"
	"\n"
	"The peak heap consumers, leaks, most allocations, most temporary allocations\n"
	"and most bytes allocated, by call stack, after a summary.\n"
	"  --top N          stacks per section (default 10)\n"
	"  --frames N       frames shown per stack (default 8, 0 = all)\n"
	"  --json           the same content as JSON, for scripts\n"
	"  --snapshot N     report snapshot N (1 = the first; default the last)\n"
	"  --image N        image N of the capture (1 = the first; default the last\n"
	"                   with a snapshot: a process that exec'd has several)\n"
	"  --debug-dir DIR  also look for separate debug info in DIR\n"
	"  --width N        fit N columns (default: the terminal's)\n";

static unsigned terminal_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols && atoi(cols) > 0)
		return (unsigned)atoi(cols);
	return 0; /* not a terminal: no cutting */
}

int hp_cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"top", required_argument, NULL, 't'},   {"frames", required_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},        {"snapshot", required_argument, NULL, 's'},
		{"debug-dir", required_argument, NULL, 'd'}, {"width", required_argument, NULL, 'w'},
		{"image", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},         {0},
	};
	struct hp_model_options mo = {.snapshot = -1};
	struct hp_report_options ro = {.top = 10, .frames = 8, .width = terminal_width()};
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	int json = 0, c, ret;
	long v;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (hp_cli_number("report", "--top", optarg, 1, LONG_MAX, &v))
				return 2;
			ro.top = (unsigned)v;
			break;
		case 'f':
			if (hp_cli_number("report", "--frames", optarg, 0, LONG_MAX, &v))
				return 2;
			ro.frames = (unsigned)v;
			break;
		case 'w':
			if (hp_cli_number("report", "--width", optarg, 0, LONG_MAX, &v))
				return 2;
			ro.width = (unsigned)v;
			break;
		case 's':
			if (hp_cli_number("report", "--snapshot", optarg, 1, LONG_MAX, &v))
				return 2;
			mo.snapshot = v - 1;
			break;
		case 'j': json = 1; break;
		case 'd': mo.debug_dir = optarg; break;
		case 'i':
			if (hp_cli_number("report", "--image", optarg, 1, 1000000L, &v))
				return 2;
			mo.image = (size_t)v;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		hp_cli_error("report: give exactly one capture file");
		return 2;
	}
	if (hp_cli_load_model(argv[optind], &mo, &cap, &model))
		return 1;
	hp_cli_output_open(&o, "-", NULL, 0); /* standard output: cannot fail */
	ret = json ? hp_report_json(o.f, &model, &ro) : hp_report_text(o.f, &model, &ro);
	hp_model_free(&model);
	hp_capture_free(&cap);
	return hp_cli_output_close(&o, ret);
}
