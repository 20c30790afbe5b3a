/*
 * diff.c - `heapprof diff` (being written).
 */
#include "cli.h"

int hp_cmd_diff(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hp_cli_error("diff: not built yet");
	return 2;
}
