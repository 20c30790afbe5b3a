/*
 * symbolize.c - `heapprof symbolize`: embed a capture's symbols in it, for
 * captures made with plain LD_PRELOAD (heapprof run does it by itself).
 */
#include <stdio.h>

#include "../analyzer/embed.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof symbolize [--debug-dir DIR] FILE\n"
	"\n"
	"Reads function, file and line of every frame from the binaries the capture\n"
	"names (as they are on this machine) and appends them to the capture, which\n"
	"can then be analysed on a machine without those binaries.\n";

int hp_cmd_symbolize(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_cli_args a;
	struct hp_embed_result res;
	const char *path;
	char err[512];

	if (hp_cli_parse("symbolize", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.noperands != 1) {
		hp_cli_error("symbolize: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	path = argv[a.operand];
	if (hp_embed_symbols(path, a.value[HP_OPT_DEBUG_DIR], &res, err, sizeof err) < 0) {
		hp_cli_error("%s", err);
		return HP_EXIT_FAILURE;
	}
	fprintf(stderr, "heapprof: %s: embedded symbols for %zu addresses (%zu without a function)",
		path, res.addresses, res.unresolved);
	if (res.modules_missing || res.modules_changed)
		fprintf(stderr, "; %zu binaries missing, %zu changed since the run",
			res.modules_missing, res.modules_changed);
	fputc('\n', stderr);
	return HP_EXIT_OK;
}
