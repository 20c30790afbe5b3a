/*
 * export.c - `heapprof export`: a capture's profile in the formats other
 * tools read: pprof (pprof.h), gperftools' heap profile (legacy.h), folded
 * stacks (folded.h).
 *
 * The output is written in place; when writing fails a partial regular
 * file is removed, so a file that exists is whole (a device or a pipe is
 * left alone).
 *
 * Exit status: 0 when written, 1 for a capture that cannot be used or a
 * failed write, 2 for wrong usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyzer/folded.h"
#include "../analyzer/legacy.h"
#include "../analyzer/pprof.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof export FILE --format pprof|gperftools|folded -o OUT [options]\n"
	"\n"
	"Writes the profile of a capture for other tools.\n"
	"  --format pprof       gzipped profile.proto: go tool pprof, Parca, Pyroscope\n"
	"  --format gperftools  gperftools' heap profile text: google-pprof, jeprof,\n"
	"                       go tool pprof (symbolized from the binaries)\n"
	"  --format folded      'root;...;leaf value' lines: flamegraph.pl, inferno\n"
	"  -o, --output OUT     the file to write ('-' = standard output)\n"
	"  --at end|peak        pprof, gperftools: the in-use figures at the snapshot\n"
	"                       (default) or at the global peak\n"
	"  --metric M           folded: the value of a stack: leaked (default, bytes in\n"
	"                       use at the snapshot), peak (bytes in use at the peak),\n"
	"                       allocated (bytes), allocations, temporary (counts)\n"
	"  --snapshot N         export snapshot N (1 = the first; default the last)\n"
	"  --image N            image N of the capture (1 = the first; default the last\n"
	"                       with a snapshot: a process that exec'd has several)\n"
	"  --debug-dir DIR      also look for separate debug info in DIR\n"
	"\n"
	"Figures of a sampled capture are unbiased estimates, rounded to integers.\n";

enum format { FMT_NONE, FMT_PPROF, FMT_GPERFTOOLS, FMT_FOLDED };

static int parse_format(const char *s, enum format *f)
{
	if (strcmp(s, "pprof") == 0)
		*f = FMT_PPROF;
	else if (strcmp(s, "gperftools") == 0)
		*f = FMT_GPERFTOOLS;
	else if (strcmp(s, "folded") == 0)
		*f = FMT_FOLDED;
	else
		return -EINVAL;
	return 0;
}

int hp_cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},   {"output", required_argument, NULL, 'o'},
		{"at", required_argument, NULL, 'a'},       {"metric", required_argument, NULL, 'm'},
		{"snapshot", required_argument, NULL, 's'}, {"debug-dir", required_argument, NULL, 'd'},
		{"image", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},         {0},
	};
	struct hp_model_options mo = {.snapshot = -1};
	enum format format = FMT_NONE;
	enum hp_metric metric = HP_METRIC_LEAKED;
	const char *output = NULL, *at = NULL, *metric_name = NULL;
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	FILE *out;
	char *end;
	long v;
	int c, ret, status = 1;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (parse_format(optarg, &format)) {
				hp_cli_error("export: unknown format '%s' (pprof, gperftools, folded)",
					     optarg);
				return 2;
			}
			break;
		case 'o': output = optarg; break;
		case 'a':
			if (strcmp(optarg, "end") != 0 && strcmp(optarg, "peak") != 0) {
				hp_cli_error("export: --at wants end or peak, not '%s'", optarg);
				return 2;
			}
			at = optarg;
			break;
		case 'm':
			if (hp_metric_parse(optarg, &metric)) {
				hp_cli_error("export: unknown metric '%s' (peak, leaked, allocated, "
					     "allocations, temporary)", optarg);
				return 2;
			}
			metric_name = optarg;
			break;
		case 's':
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 1) {
				hp_cli_error("export: --snapshot wants a number of at least 1, not '%s'",
					     optarg);
				return 2;
			}
			mo.snapshot = v - 1;
			break;
		case 'd': mo.debug_dir = optarg; break;
		case 'i':
			if (hp_cli_number("export", "--image", optarg, 1, 1000000L, &v))
				return 2;
			mo.image = (size_t)v;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		hp_cli_error("export: give exactly one capture file");
		return 2;
	}
	if (format == FMT_NONE || !output) {
		hp_cli_error("export: say which --format and where (-o OUT)");
		return 2;
	}
	if (at && format == FMT_FOLDED) {
		hp_cli_error("export: --at is for pprof and gperftools; folded takes --metric");
		return 2;
	}
	if (metric_name && format != FMT_FOLDED) {
		hp_cli_error("export: --metric is for folded; pprof and gperftools carry every "
			     "figure (--at peak for the peak)");
		return 2;
	}
	if (strcmp(output, "-") == 0 && format == FMT_PPROF && isatty(1)) {
		hp_cli_error("export: pprof is binary: not writing it to a terminal");
		return 2;
	}
	if (hp_cli_load_model(argv[optind], &mo, &cap, &model))
		return 1;

	if (hp_cli_output_open(&o, output, (const char *const *)argv + optind, 1))
		goto err;
	out = o.f;
	switch (format) {
	case FMT_PPROF: {
		struct hp_pprof_options po = {.at_peak = at && strcmp(at, "peak") == 0};
		ret = hp_pprof_write(out, &model, &po);
		break;
	}
	case FMT_GPERFTOOLS: {
		struct hp_legacy_options lo = {.at_peak = at && strcmp(at, "peak") == 0};
		ret = hp_legacy_write(out, &model, &lo);
		break;
	}
	default: ret = hp_folded_write(out, &model, metric); break;
	}
	status = hp_cli_output_close(&o, ret);

err:
	hp_model_free(&model);
	hp_capture_free(&cap);
	return status;
}
