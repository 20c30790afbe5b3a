/*
 * export.c - `heapprof export` (being written).
 */
#include "cli.h"

int hp_cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hp_cli_error("export: not built yet");
	return 2;
}
