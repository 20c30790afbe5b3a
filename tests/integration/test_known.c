/*
 * test_known.c - heapprof run on tests/programs/known.c: per-stack figures,
 * exactly, with the right call paths, in both unwinding modes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "known_expect.h"
#include "../../src/common/version.h"

static struct hp_capture *run_known(const char *mode)
{
	char out[512];
	snprintf(out, sizeof out, "%s/known-%s.hpf", hp_test_tmp(), mode);
	int st = hp_test_sh("%s/heapprof run -q --unwind %s -o %s -- %s/tests/programs/known",
			    hp_test_build(), mode, out, hp_test_build());
	if (!expect_eq_u64(st, 0, "known exits 0 under heapprof (the allocator's answers kept)"))
		return NULL;
	return hpq_load(out);
}

HP_TEST(known_dwarf)
{
	struct hp_capture *cap = run_known("dwarf");
	check_known(cap);
	if (cap)
		expect_str(cap->recorder_version, HP_VERSION, "the recorder says heapprof's version");
	hpq_free(cap);
}

HP_TEST(known_fp)
{
	struct hp_capture *cap = run_known("fp");
	check_known(cap);
	hpq_free(cap);
}

HP_TEST(recorder_memory_budget)
{
	/* The budget: at most 32 bytes per live recorded block, all
	 * of the recorder's memory included, checked with a million blocks
	 * live (the figure is the recorder's own account of its tables and
	 * buffers; 27.6 bytes with 16-byte register entries, 52.8 with the
	 * 24-byte ones). */
	char out[8192];
	struct hp_capture *cap;

	snprintf(out, sizeof out, "%s/manylive.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/tests/programs/manylive",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	if (expect_true(cap->nsnapshots >= 2, "the dump's snapshot and the exit's")) {
		const struct hp_cap_snapshot *s = &cap->snapshots[0];
		uint64_t live = s->alloc_count - s->free_count;
		expect_true(live >= 1000000, "a million blocks live at the dump");
		expect_true(s->recorder_bytes > 0, "the recorder reports its memory");
		expect_true(s->recorder_bytes <= 32 * live,
			    "recorder memory <= 32 bytes per live block");
		printf("  recorder: %.1f MiB for %llu live blocks (%.1f bytes each)\n",
		       s->recorder_bytes / 1048576.0, (unsigned long long)live,
		       (double)s->recorder_bytes / (double)live);
	}
	hpq_free(cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
