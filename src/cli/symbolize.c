/*
 * symbolize.c - `heapprof symbolize`: embed a capture's symbols in it, for
 * captures made with plain LD_PRELOAD (heapprof run does it by itself).
 */
#include <getopt.h>
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
	static const struct option longopts[] = {
		{"debug-dir", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *debug_dir = NULL;
	struct hp_embed_result res;
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': debug_dir = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		hp_cli_error("symbolize: give exactly one capture file");
		return 2;
	}
	if (hp_embed_symbols(argv[optind], debug_dir, &res, err, sizeof err) < 0) {
		hp_cli_error("%s", err);
		return 1;
	}
	fprintf(stderr, "heapprof: %s: embedded symbols for %zu addresses (%zu without a function)",
		argv[optind], res.addresses, res.unresolved);
	if (res.modules_missing || res.modules_changed)
		fprintf(stderr, "; %zu binaries missing, %zu changed since the run",
			res.modules_missing, res.modules_changed);
	fputc('\n', stderr);
	return 0;
}
