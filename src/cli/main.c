/*
 * main.c - heapprof's command line: dispatch to a subcommand.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
	"usage: heapprof <command> [options]\n"
	"\n"
	"commands:\n"
	"  run [options] [--] PROGRAM [ARGS...]   run PROGRAM under the recorder\n"
	"  inspect [--stacks] FILE                  show what a capture file holds, check it\n"
	"\n"
	"`heapprof <command> --help` shows a command's options.\n";

const char *hp_cli_bytes(char *buf, size_t cap, uint64_t bytes)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
	return buf;
}

void hp_cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("heapprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return hp_cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "inspect") == 0)
		return hp_cmd_inspect(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0) {
		puts("heapprof 0.1.0");
		return 0;
	}
	hp_cli_error("unknown command '%s' (try heapprof --help)", argv[1]);
	return 2;
}
