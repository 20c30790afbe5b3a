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
#include "cli.h"

static const char usage[] =
	"usage: heapprof inspect [--stacks] FILE\n"
	"\n"
	"Prints a capture's header, options, modules, snapshots, totals and what\n"
	"the recorder lost, and checks every record for damage.\n"
	"  --stacks   also list every bucket of the last snapshot with its frames\n";

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

int hp_cmd_inspect(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_STACKS, 0, 0, NULL},
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
