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
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/folded.h"
#include "../analyzer/legacy.h"
#include "../analyzer/pprof.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof export FILE --format pprof|gperftools|folded [-o OUT] [options]\n"
	"\n"
	"Writes the profile of a capture for other tools.\n"
	"  --format pprof       gzipped profile.proto: go tool pprof, Parca, Pyroscope;\n"
	"                       sample types alloc_*, inuse_* (inuse_space is the\n"
	"                       default) and peak_objects, peak_space (at the peak)\n"
	"  --format gperftools  gperftools' heap profile text: google-pprof, jeprof,\n"
	"                       go tool pprof (symbolized from the binaries)\n"
	"  --format folded      'root;...;leaf value' lines: flamegraph.pl, inferno\n"
	"  -o, --output OUT     the file to write ('-' = standard output; default the\n"
	"                       capture's name with .pb.gz, .heap or .folded for .hpf,\n"
	"                       here, never replacing a file)\n"
	"  --at end|peak        pprof, gperftools: the in-use figures at the snapshot\n"
	"                       (default) or at the global peak\n"
	"  --by type|context    folded: each stack under a root frame of its type or\n"
	"                       its context path (pprof labels every sample with its\n"
	"                       type, context, thread and heap)\n"
	"  --metric M           folded: the value of a stack: leaked (default, bytes in\n"
	"                       use at the snapshot), peak (bytes in use at the peak),\n"
	"                       allocated (bytes), allocations, temporary (counts)\n"
	"  --heap NAME|all      the blocks of one heap (malloc, or a custom heap's\n"
	"                       name) or of every heap (the default); with a custom\n"
	"                       heap's blocks, each heap is named: pprof labels every\n"
	"                       sample 'heap' (and its comment says the heap shown),\n"
	"                       folded puts each stack under a root frame\n"
	"                       '[heap NAME]', gperftools puts each heap's lines after\n"
	"                       a '# heap: NAME' line\n"
	"  --snapshot N         export snapshot N (1 = the first; default the last)\n"
	"  --image N            image N of the capture (1 = the first; default the last\n"
	"                       with a snapshot: a process that exec'd has several)\n"
	"  --debug-dir DIR      also look for separate debug info in DIR\n"
	"  --full-names         folded: names as they are (default: template arguments\n"
	"                       <...>, no parameter lists unless overloads need them;\n"
	"                       pprof and gperftools always have the whole names)\n"
	"  --all-frames         folded: every frame, the runtime's below main and a\n"
	"                       thread's start too (by default left out, as report\n"
	"                       leaves them out; pprof and gperftools keep them)\n"
	"  --focus REGEX        only the stacks with a function matching REGEX\n"
	"  --ignore REGEX       leave out the stacks with a function matching REGEX\n"
	HP_CLI_EVENTS_HELP
	"  --hide REGEX         remove the functions matching REGEX from the stacks\n"
	"                       (POSIX extended regular expressions, as pprof's)\n"	"\n"
	"Figures of a sampled capture are unbiased estimates, rounded to integers.\n";

enum format { FMT_NONE, FMT_PPROF, FMT_GPERFTOOLS, FMT_FOLDED };

/* Returns 0 or -EINVAL. */
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

static int check_format(const char *cmd, const char *value)
{
	enum format f;

	if (parse_format(value, &f) == 0)
		return 0;
	hp_say_error("%s: unknown format '%s' (pprof, gperftools, folded)", cmd, value);
	return -EINVAL;
}

int hp_cmd_export(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_FORMAT, 0, 0, check_format},
		{HP_OPT_OUTPUT, 0, 0, NULL},
		{HP_OPT_AT, 0, 0, NULL},
		{HP_OPT_METRIC, 0, 0, NULL},
		{HP_OPT_BY, 0, 0, hp_cli_check_by_root},
		{HP_OPT_SNAPSHOT, 1, LONG_MAX, NULL},
		{HP_OPT_HEAP, 0, 0, NULL},
		{HP_OPT_IMAGE, 1, HP_CLI_IMAGE_MAX, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_FULL_NAMES, 0, 0, NULL},
		{HP_OPT_ALL_FRAMES, 0, 0, NULL},
		{HP_OPT_FOCUS, 0, 0, NULL},
		{HP_OPT_IGNORE, 0, 0, NULL},
		{HP_OPT_HIDE, 0, 0, NULL},
		{HP_OPT_LIVED_UNDER, 0, 0, NULL},
		{HP_OPT_LIVED_OVER, 0, 0, NULL},
		{HP_OPT_BETWEEN, 0, 0, NULL},
		{HP_OPT_THREAD, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_events_select ev;
	struct hp_cli_args a = {.metric = HP_METRIC_LEAKED};
	struct hp_model_options mo = {0};
	struct hp_model_filter filter;
	enum format format = FMT_NONE;
	const char *output, *at;
	struct hp_capture cap;
	struct hp_model model;
	struct hp_cli_output o;
	FILE *out;
	int64_t heap;
	char default_out[4096];
	int ret, said = 0, status = HP_EXIT_FAILURE;

	if (hp_cli_parse("export", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (hp_cli_events("export", &a, argv, &ev))
		return HP_EXIT_USAGE;
	mo.events = &ev;
	if (a.given[HP_OPT_FORMAT])
		parse_format(a.value[HP_OPT_FORMAT], &format); /* checked */
	output = a.value[HP_OPT_OUTPUT];
	at = a.value[HP_OPT_AT];
	mo.snapshot = hp_cli_snapshot(&a);
	mo.image = hp_cli_image(&a);
	mo.debug_dir = a.value[HP_OPT_DEBUG_DIR];
	mo.filter = hp_cli_filter(&a, &filter);
	if (a.noperands != 1) {
		hp_say_error("export: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	if (format == FMT_NONE) {
		hp_say_error("export: say which --format (pprof, gperftools, folded)");
		return HP_EXIT_USAGE;
	}
	if (!output) {
		static const char *const ext[] = {
			[FMT_PPROF] = ".pb.gz", [FMT_GPERFTOOLS] = ".heap", [FMT_FOLDED] = ".folded"};
		output = hp_cli_default_output("export", argv[a.operand], ext[format], default_out,
					       sizeof default_out);
		if (!output)
			return HP_EXIT_FAILURE;
		said = 1;
	}
	if (at && format == FMT_FOLDED) {
		hp_say_error("export: --at is for pprof and gperftools; folded takes --metric");
		return HP_EXIT_USAGE;
	}
	if (a.given[HP_OPT_BY] && format != FMT_FOLDED) {
		hp_say_error("export: --by is for folded; pprof carries type, context, thread "
			     "and heap as labels");
		return HP_EXIT_USAGE;
	}
	if (a.given[HP_OPT_METRIC] && format != FMT_FOLDED) {
		hp_say_error("export: --metric is for folded; pprof and gperftools carry every "
			     "figure (--at peak for the peak)");
		return HP_EXIT_USAGE;
	}
	if (strcmp(output, "-") == 0 && format == FMT_PPROF && isatty(1)) {
		hp_say_error("export: pprof is binary: not writing it to a terminal");
		return HP_EXIT_USAGE;
	}
	/* One model of the capture, no frame read after: each stack's frames
	 * are freed as they are made locations (model.h). */
	mo.release_frames = &cap;
	/* No export reads the per-site timeline or the histograms (the
	 * snapshot's buckets stay: they hold the model's figures). */
	mo.release_parts = HP_CAP_PART_TIMELINE | HP_CAP_PART_HISTOGRAMS;
	if (hp_cli_load_model(argv[a.operand], &mo, &cap, &model))
		return HP_EXIT_FAILURE;
	if (hp_cli_heap(&a, &model, argv[a.operand], &heap))
		goto err;

	if (hp_cli_output_open(&o, output, (const char *const *)argv + a.operand, 1))
		goto err;
	out = o.f;
	switch (format) {
	case FMT_PPROF: {
		struct hp_pprof_options po = {.at_peak = at && strcmp(at, "peak") == 0,
					      .one_heap = heap != HP_HEAP_ALL,
					      .heap = heap != HP_HEAP_ALL ? (uint64_t)heap : 0};
		ret = hp_pprof_write(out, &model, &po);
		break;
	}
	case FMT_GPERFTOOLS: {
		struct hp_legacy_options lo = {.at_peak = at && strcmp(at, "peak") == 0,
					       .one_heap = heap != HP_HEAP_ALL,
					       .heap = heap != HP_HEAP_ALL ? (uint64_t)heap : 0};
		ret = hp_legacy_write(out, &model, &lo);
		break;
	}
	default: ret = hp_folded_write_heap(out, &model, a.metric, hp_cli_by(&a), heap,
						   a.given[HP_OPT_FULL_NAMES], a.given[HP_OPT_ALL_FRAMES]);
		break;
	}
	status = hp_cli_output_close(&o, ret) ? HP_EXIT_FAILURE : HP_EXIT_OK;
	if (status == HP_EXIT_OK && said)
		fprintf(stderr, "heapprof: wrote %s\n", output);

err:
	hp_model_free(&model);
	hp_capture_free(&cap);
	return status;
}
