/*
 * symbolize.c - `heapprof symbolize`: embed a capture's symbols in it, for
 * captures made with plain LD_PRELOAD (heapprof run does it by itself).
 */
#include <stdio.h>

#include "../analyzer/embed.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof symbolize [--debug-dir DIR] [--no-symbol-cache] [-v] FILE\n"
	"\n"
	"Reads function, file and line of every frame from the binaries the capture\n"
	"names (as they are on this machine) and appends them to the capture, which\n"
	"can then be analysed on a machine without those binaries.\n"
	"\n"
	"      --debug-dir DIR      also look for separate debug info in DIR\n"
	"      --no-symbol-cache    read every symbol from the binaries, store none\n"
	"                           (the cache: HEAPPROF_CACHE_DIR, docs/options.md)\n"
	"  -v, --verbose            also say where the symbols came from\n";

int hp_cmd_symbolize(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_NO_SYMBOL_CACHE, 0, 0, NULL},
		{HP_OPT_VERBOSE, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_cli_args a;
	struct hp_embed_options eo = {0};
	struct hp_embed_result res;
	const char *path;
	char err[512];

	if (hp_cli_parse("symbolize", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.noperands != 1) {
		hp_say_error("symbolize: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	path = argv[a.operand];
	eo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	eo.no_symbol_cache = a.given[HP_OPT_NO_SYMBOL_CACHE];
	if (hp_embed_symbols_with(path, &eo, &res, err, sizeof err) < 0) {
		hp_say_error("%s", err);
		return HP_EXIT_FAILURE;
	}
	fprintf(stderr, "heapprof: %s: embedded symbols for %zu addresses (%zu without a function)",
		path, res.addresses, res.unresolved);
	if (res.modules_missing || res.modules_changed)
		fprintf(stderr, "; %zu binaries missing, %zu changed since the run",
			res.modules_missing, res.modules_changed);
	fputc('\n', stderr);
	if (a.given[HP_OPT_VERBOSE])
		hp_cli_say_symbols(path, &res);
	return HP_EXIT_OK;
}

void hp_cli_say_symbols(const char *path, const struct hp_embed_result *res)
{
	if (res->cache_off)
		fprintf(stderr, "heapprof: %s: no symbol cache: %s\n", path, res->cache_off);
	fprintf(stderr,
		"heapprof: %s: symbols: %zu addresses from the cache, %zu from debug info "
		"(%zu modules opened)\n",
		path, res->cache.cached, res->cache.debuginfo, res->cache.modules_opened);
}
