/*
 * flamegraph.c - `heapprof flamegraph` (being written).
 */
#include "cli.h"

int hp_cmd_flamegraph(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hp_cli_error("flamegraph: not built yet");
	return 2;
}
