/*
 * report.c - `heapprof report`: the answers, in the terminal or as JSON.
 */
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
	static const struct hp_cli_use uses[] = {
		{HP_OPT_TOP, 1, LONG_MAX, NULL},
		{HP_OPT_FRAMES, 0, LONG_MAX, NULL},
		{HP_OPT_JSON, 0, 0, NULL},
		{HP_OPT_SNAPSHOT, 1, LONG_MAX, NULL},
		{HP_OPT_IMAGE, 1, HP_CLI_IMAGE_MAX, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_WIDTH, 0, LONG_MAX, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_cli_args a;
	struct hp_model_options mo = {0};
	struct hp_report_options ro = {.top = 10, .frames = 8, .width = terminal_width()};
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	int ret;

	if (hp_cli_parse("report", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.given[HP_OPT_TOP])
		ro.top = (unsigned)a.number[HP_OPT_TOP];
	if (a.given[HP_OPT_FRAMES])
		ro.frames = (unsigned)a.number[HP_OPT_FRAMES];
	if (a.given[HP_OPT_WIDTH])
		ro.width = (unsigned)a.number[HP_OPT_WIDTH];
	mo.snapshot = hp_cli_snapshot(&a);
	mo.image = hp_cli_image(&a);
	mo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	if (a.noperands != 1) {
		hp_cli_error("report: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	if (hp_cli_load_model(argv[a.operand], &mo, &cap, &model))
		return HP_EXIT_FAILURE;
	hp_cli_output_open(&o, "-", NULL, 0); /* standard output: cannot fail */
	ret = a.given[HP_OPT_JSON] ? hp_report_json(o.f, &model, &ro)
				   : hp_report_text(o.f, &model, &ro);
	hp_model_free(&model);
	hp_capture_free(&cap);
	return hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;
}
