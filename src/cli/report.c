/*
 * report.c - `heapprof report` (being written).
 */
#include "cli.h"

int hp_cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hp_cli_error("report: not built yet");
	return 2;
}
