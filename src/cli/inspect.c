/*
 * inspect.c - `heapprof inspect`: what a capture file holds, and whether it
 * is damaged. The format's own tool, not the report: figures are the raw
 * ones the recorder wrote, frames are addresses with their module and
 * offset.
 *
 * Exit status: 0 for an intact capture, 1 when it is damaged (everything
 * readable is still shown) or unreadable, 2 for wrong usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../format/capture.h"
#include "../common/text.h"
#include "../common/units.h"
#include "../analyzer/report.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof inspect [--stacks] [--json] FILE\n"
	"\n"
	"Prints a capture's header, options, modules, snapshots, totals and what\n"
	"the recorder lost, and checks every record for damage.\n"
	"  --stacks   also list every bucket of the last snapshot with its frames\n"
	"  --json     the same as one JSON object, for scripts (raw figures, as the\n"
	"             text's; the exit status is the same)\n";

static void print_frame(const struct hp_capture *cap, uint32_t i, uint64_t addr)
{
	const struct hp_cap_module *m = hp_capture_module_of(cap, addr);

	if (m) {
		printf("      #%-2u 0x%" PRIx64 " ", i, addr);
		hp_text_fputs(m->path, stdout);
		printf("+0x%" PRIx64 "\n", addr - m->bias);
	}
	else
		printf("      #%-2u 0x%" PRIx64 " ?\n", i, addr);
}

static void print_buckets(const struct hp_capture *cap, const struct hp_cap_snapshot *s)
{
	printf("buckets of snapshot %" PRIu64 " (alloc/free/peak/temp as objects bytes):\n", s->seq);
	for (size_t i = 0; i < s->nbuckets; i++) {
		const struct hp_rec_bucket *b = &s->buckets[i];
		printf("  bucket stack=%u size=%" PRIu64 " alloc=%" PRIu64 " %" PRIu64
		       " free=%" PRIu64 " %" PRIu64 " peak=%" PRIu64 " %" PRIu64 " temp=%" PRIu64
		       " %" PRIu64 "\n",
		       b->stack_id, b->size, b->alloc_count, b->alloc_bytes, b->free_count,
		       b->free_bytes, b->peak_count, b->peak_bytes, b->temp_count, b->temp_bytes);
		if (b->stack_id && b->stack_id < cap->nstacks) {
			const struct hp_cap_stack *st = &cap->stacks[b->stack_id];
			for (uint32_t f = 0; f < st->depth; f++)
				print_frame(cap, f, st->frames[f]);
		}
	}
}

/* The selected image: its program, options, modules, stacks, symbols and
 * snapshots. */
static void print_image(const struct hp_capture *cap)
{
	const struct hp_cap_snapshot *s;
	char b1[32], b2[32];

	if (cap->has_meta) {
		printf("program   ");
		hp_text_fputs(hp_model_program_name(cap), stdout);
		for (size_t i = 1; i < cap->argc; i++) {
			putchar(' ');
			hp_text_fputs(cap->argv[i], stdout);
		}
		printf("\nexe       ");
		hp_text_fputs(cap->program, stdout);
		printf("\npid       %" PRIu64 " (parent %" PRIu64 ")%s\n", cap->pid, cap->ppid,
		       cap->flags & HP_META_FORKED_CHILD ? ", forked from a recorded process" : "");
		printf("recorder  heapprof ");
		hp_text_fputs(cap->recorder_version, stdout);
		putchar('\n');
		printf("options   sample-rate %" PRIu64 "%s, unwind %s, max-depth %" PRIu64
		       ", follow-fork %s, dump-signal %" PRIu64 ", interval %" PRIu64 " ms\n",
		       cap->sample_rate_bytes, cap->sample_rate_bytes == 1 ? " (every allocation)" : "",
		       cap->unwind == HP_UNWIND_FP ? "fp" : "dwarf", cap->max_depth,
		       cap->flags & HP_META_FOLLOW_FORK ? "yes" : "no", cap->dump_signal,
		       cap->interval_ms);
		if (cap->flags & HP_META_SHADOWED)
			printf("warning   another library's malloc came before heapprof's in "
			       "LD_PRELOAD: nothing was recorded\n");
	}
	printf("modules   %zu\n", cap->nmodules);
	for (size_t i = 0; i < cap->nmodules; i++) {
		const struct hp_cap_module *m = &cap->modules[i];
		char shown[1024];
		printf("  %-50s bias 0x%" PRIx64 " build-id ",
		       hp_text_escape(shown, sizeof shown, m->path), m->bias);
		for (size_t k = 0; k < m->build_id_len; k++)
			printf("%02x", m->build_id[k]);
		if (!m->build_id_len)
			printf("-");
		if (m->unloaded)
			printf(" (unloaded at %.3f s)", (double)m->unload_ns / 1e9);
		printf("\n");
	}
	printf("stacks    %zu\n", cap->nstacks ? cap->nstacks - 1 : 0);
	printf("samples   %zu (heap and RSS over time)\n", cap->nsamples);
	if (cap->flags & HP_META_EVENTS)
		printf("events    %zu (the event log, run --events: docs/events.md)\n", cap->nevents);
	if (cap->has_symbols)
		printf("symbols   embedded: %zu addresses, %zu frames\n", cap->symbols.naddrs,
		       cap->symbols.nframes);
	else
		printf("symbols   none embedded (heapprof symbolize adds them)\n");
	printf("snapshots %zu\n", cap->nsnapshots);
	for (size_t i = 0; i < cap->nsnapshots; i++) {
		s = &cap->snapshots[i];
		printf("  #%-3" PRIu64 " at %8.3f s  %-16s allocs %" PRIu64 "  frees %" PRIu64
		       "  in use %s  peak %s  buckets %zu\n",
		       s->seq, (double)s->time_ns / 1e9, hp_capture_reason_name(s->reason),
		       s->alloc_count, s->free_count,
		       hp_units_bytes(b1, sizeof b1, (double)(s->alloc_bytes - s->free_bytes)),
		       hp_units_bytes(b2, sizeof b2, (double)s->peak_bytes), s->nbuckets);
	}
}

/* --- JSON ------------------------------------------------------------- */

#define JS(s) hp_report_json_str(stdout, (s) ? (s) : "")

static void json_frames(const struct hp_capture *cap, const struct hp_rec_bucket *b)
{
	const struct hp_cap_stack *st =
		b->stack_id && b->stack_id < cap->nstacks ? &cap->stacks[b->stack_id] : NULL;

	printf("[");
	for (uint32_t f = 0; st && f < st->depth; f++) {
		const struct hp_cap_module *m = hp_capture_module_of(cap, st->frames[f]);
		printf("%s{\"address\": \"0x%" PRIx64 "\", \"module\": ", f ? ", " : "",
		       st->frames[f]);
		if (m) {
			JS(m->path);
			printf(", \"offset\": \"0x%" PRIx64 "\"}", st->frames[f] - m->bias);
		} else {
			printf("null, \"offset\": null}");
		}
	}
	printf("]");
}

static void json_snapshot_totals(const struct hp_cap_snapshot *s)
{
	printf("{\"seq\": %" PRIu64 ", \"time_ns\": %" PRIu64 ", \"reason\": ", s->seq,
	       s->time_ns);
	JS(hp_capture_reason_name(s->reason));
	printf(", \"alloc_objects\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
	       ", \"free_objects\": %" PRIu64 ", \"free_bytes\": %" PRIu64
	       ", \"peak_objects\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
	       ", \"peak_time_ns\": %" PRIu64 ", \"buckets\": %zu}",
	       s->alloc_count, s->alloc_bytes, s->free_count, s->free_bytes, s->peak_count,
	       s->peak_bytes, s->peak_time_ns, s->nbuckets);
}

static void json_image(const struct hp_capture *cap)
{
	printf("{\"program\": ");
	JS(cap->has_meta ? hp_model_program_name(cap) : "");
	printf(", \"argv\": [");
	for (size_t i = 0; cap->has_meta && i < cap->argc; i++) {
		printf("%s", i ? ", " : "");
		JS(cap->argv[i]);
	}
	printf("], \"exe\": ");
	JS(cap->has_meta ? cap->program : "");
	printf(", \"pid\": %" PRIu64 ", \"ppid\": %" PRIu64 ", \"recorder\": ", cap->pid, cap->ppid);
	JS(cap->has_meta ? cap->recorder_version : "");
	printf(", \"options\": {\"sample_rate_bytes\": %" PRIu64 ", \"unwind\": \"%s\", "
	       "\"max_depth\": %" PRIu64 ", \"follow_fork\": %s, \"dump_signal\": %" PRIu64
	       ", \"interval_ms\": %" PRIu64 "}, \"malloc_shadowed\": %s",
	       cap->sample_rate_bytes, cap->unwind == HP_UNWIND_FP ? "fp" : "dwarf", cap->max_depth,
	       cap->flags & HP_META_FOLLOW_FORK ? "true" : "false", cap->dump_signal,
	       cap->interval_ms, cap->flags & HP_META_SHADOWED ? "true" : "false");
	printf(", \"modules\": [");
	for (size_t i = 0; i < cap->nmodules; i++) {
		const struct hp_cap_module *m = &cap->modules[i];
		printf("%s{\"path\": ", i ? ", " : "");
		JS(m->path);
		printf(", \"bias\": \"0x%" PRIx64 "\", \"build_id\": \"", m->bias);
		for (size_t k = 0; k < m->build_id_len; k++)
			printf("%02x", m->build_id[k]);
		printf("\", \"unloaded_ns\": ");
		if (m->unloaded)
			printf("%" PRIu64 "}", m->unload_ns);
		else
			printf("null}");
	}
	printf("], \"stacks\": %zu, \"samples\": %zu, ", cap->nstacks ? cap->nstacks - 1 : 0,
	       cap->nsamples);
	if (cap->flags & HP_META_EVENTS)
		printf("\"events\": %zu, ", cap->nevents);
	printf("\"symbols\": ");
	if (cap->has_symbols)
		printf("{\"addresses\": %zu, \"frames\": %zu}", cap->symbols.naddrs,
		       cap->symbols.nframes);
	else
		printf("null");
	printf(", \"snapshots\": [");
	for (size_t i = 0; i < cap->nsnapshots; i++) {
		printf("%s", i ? ", " : "");
		json_snapshot_totals(&cap->snapshots[i]);
	}
	printf("]}");
}

/* inspect --json: the text's content as one object. */
static void print_json(struct hp_capture *cap, const char *path, int stacks)
{
	const struct hp_cap_snapshot *s;
	int first = 1;

	printf("{\"capture\": ");
	JS(path);
	printf(", \"bytes\": %zu, \"records\": %zu, \"images\": [", cap->file_bytes, cap->nrecords);
	for (size_t i = 0; i < (cap->nimages ? cap->nimages : 1); i++) {
		hp_capture_select(cap, i);
		printf("%s", i ? ",\n  " : "\n  ");
		json_image(cap);
	}
	hp_capture_select(cap, hp_capture_default_image(cap));
	printf("],\n \"shown_image\": %zu, \"sampled\": %s, \"last\": ", cap->image + 1,
	       cap->sample_rate_bytes > 1 ? "true" : "false");
	s = hp_capture_last(cap);
	if (s)
		json_snapshot_totals(s);
	else
		printf("null");
	printf(",\n \"recorder_bytes\": %" PRIu64 ", \"signal\": ", s ? s->recorder_bytes : 0);
	if (s && s->reason == HP_SNAP_FATAL)
		printf("%" PRIu64, s->signo);
	else
		printf("null");
	printf(", \"lost\": [");
	for (int k = 1; s && k < HP_LOST_KINDS; k++) {
		if (!s->lost_count[k])
			continue;
		printf("%s{\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"why\": ",
		       first ? "" : ", ", s->lost_count[k], s->lost_bytes[k]);
		JS(hp_capture_lost_name(k));
		printf("}");
		first = 0;
	}
	printf("], \"damage\": [");
	for (size_t i = 0; i < cap->ndamage && i < HP_CAP_MAX_DAMAGE; i++) {
		printf("%s", i ? ", " : "");
		JS(cap->damage[i]);
	}
	printf("]");
	if (stacks && s) {
		printf(",\n \"buckets\": [");
		for (size_t i = 0; i < s->nbuckets; i++) {
			const struct hp_rec_bucket *b = &s->buckets[i];
			printf("%s{\"stack\": %u, \"size\": %" PRIu64 ", \"alloc_objects\": %" PRIu64
			       ", \"alloc_bytes\": %" PRIu64 ", \"free_objects\": %" PRIu64
			       ", \"free_bytes\": %" PRIu64 ", \"peak_objects\": %" PRIu64
			       ", \"peak_bytes\": %" PRIu64 ", \"temp_objects\": %" PRIu64
			       ", \"temp_bytes\": %" PRIu64 ", \"frames\": ",
			       i ? ",\n  " : "\n  ", b->stack_id, b->size, b->alloc_count,
			       b->alloc_bytes, b->free_count, b->free_bytes, b->peak_count,
			       b->peak_bytes, b->temp_count, b->temp_bytes);
			json_frames(cap, b);
			printf("}");
		}
		printf("]");
	}
	printf("}\n");
}

int hp_cmd_inspect(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_STACKS, 0, 0, NULL},
		{HP_OPT_JSON, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_cli_args a;
	struct hp_capture cap;
	char err[512];
	const char *path;
	int status;
	const struct hp_cap_snapshot *s;

	if (hp_cli_parse("inspect", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.noperands != 1) {
		hp_say_error("inspect: give exactly one capture file");
		return HP_EXIT_USAGE;
	}
	path = argv[a.operand];
	if (hp_capture_load(path, &cap, err, sizeof err) < 0) {
		hp_say_error("%s", err);
		return HP_EXIT_FAILURE;
	}

	if (a.given[HP_OPT_JSON]) {
		print_json(&cap, path, a.given[HP_OPT_STACKS]);
		if (cap.ndamage)
			hp_say_error("%s: damaged: %s", path, cap.damage[0]);
		status = cap.ndamage ? HP_EXIT_FAILURE : HP_EXIT_OK;
		hp_capture_free(&cap);
		return status;
	}
	printf("capture   %s (%zu bytes, %zu records)\n", path, cap.file_bytes,
	       cap.nrecords);
	for (size_t i = 0; i < (cap.nimages ? cap.nimages : 1); i++) {
		hp_capture_select(&cap, i);
		if (cap.nimages > 1)
			printf("image     %zu of %zu (%zu records)%s\n", i + 1, cap.nimages,
			       cap.images[i].nrecords, i ? ": the same process after an exec" : "");
		print_image(&cap);
	}
	hp_capture_select(&cap, hp_capture_default_image(&cap));
	if (cap.nimages > 1)
		printf("shown     image %zu: the totals below, and what report, export, "
		       "flamegraph and diff use\n", cap.image + 1);
	s = hp_capture_last(&cap);
	if (s) {
		printf("totals    (last snapshot%s)\n",
		       cap.sample_rate_bytes > 1 ? ", sampled: raw, not unbiased" : "");
		printf("  allocated  %" PRIu64 " objects, %" PRIu64 " bytes\n", s->alloc_count,
		       s->alloc_bytes);
		printf("  freed      %" PRIu64 " objects, %" PRIu64 " bytes\n", s->free_count,
		       s->free_bytes);
		printf("  in use     %" PRIu64 " objects, %" PRIu64 " bytes\n",
		       s->alloc_count - s->free_count, s->alloc_bytes - s->free_bytes);
		printf("  peak       %" PRIu64 " objects, %" PRIu64 " bytes at %.3f s\n",
		       s->peak_count, s->peak_bytes, (double)s->peak_time_ns / 1e9);
		if (s->recorder_bytes)
			printf("  recorder   %" PRIu64 " bytes of tables and buffers\n",
			       s->recorder_bytes);
		if (s->reason == HP_SNAP_FATAL)
			printf("  ended by   signal %" PRIu64 "\n", s->signo);
		for (int k = 1; k < HP_LOST_KINDS; k++)
			if (s->lost_count[k])
				printf("  lost       %" PRIu64 " (%" PRIu64 " bytes): %s\n",
				       s->lost_count[k], s->lost_bytes[k], hp_capture_lost_name(k));
	} else {
		printf("totals    none: no snapshot was written\n");
	}
	if (a.given[HP_OPT_STACKS] && s)
		print_buckets(&cap, s);

	if (cap.ndamage) {
		printf("damage    %zu problem%s\n", cap.ndamage, cap.ndamage == 1 ? "" : "s");
		for (size_t i = 0; i < cap.ndamage && i < HP_CAP_MAX_DAMAGE; i++)
			printf("  %s\n", cap.damage[i]);
		hp_say_error("%s: damaged: %s", path, cap.damage[0]);
	} else {
		printf("damage    none: every record is intact\n");
	}
	status = cap.ndamage ? HP_EXIT_FAILURE : HP_EXIT_OK;
	hp_capture_free(&cap);
	return status;
}
