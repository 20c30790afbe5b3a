/*
 * symbolize.c - `heapprof symbolize` (being written).
 */
#include "cli.h"

int hp_cmd_symbolize(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hp_cli_error("symbolize: not built yet");
	return 2;
}
