/*
 * test_cxx.c - every C++ operator new and delete, recorded once each with
 * the caller's stack, and recording that goes on after a bad_alloc.
 */
#include <stdio.h>

#include "../harness/harness.h"
#include "../harness/query.h"

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_pair(struct hp_capture *cap, const char *fn, uint64_t count, uint64_t bytes)
{
	struct hpq_sum s = hpq_match(cap, STACK(fn, "main"));
	char why[128];

	snprintf(why, sizeof why, "%s: objects allocated", fn);
	expect_eq_u64(s.alloc_count, count, why);
	snprintf(why, sizeof why, "%s: bytes allocated", fn);
	expect_eq_u64(s.alloc_bytes, bytes, why);
	snprintf(why, sizeof why, "%s: all freed", fn);
	expect_eq_u64(s.free_bytes, bytes, why);
}

static void check(const char *mode)
{
	char out[512];
	struct hp_capture *cap;

	snprintf(out, sizeof out, "%s/cxx-%s.hpf", hp_test_tmp(), mode);
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --unwind %s -o %s -- %s/tests/programs/cxx_all",
				 hp_test_build(), mode, out, hp_test_build()),
		      0, "cxx_all exits 0 (bad_alloc thrown and caught through the recorder)");
	if (!(cap = hpq_load(out)))
		return;
	expect_pair(cap, "new_plain", 1, sizeof(int));
	expect_pair(cap, "new_array", 1, 10 * sizeof(int));
	expect_pair(cap, "new_nothrow", 1, sizeof(int));
	expect_pair(cap, "new_array_nothrow", 1, 20 * sizeof(int));
	expect_pair(cap, "new_aligned", 1, 128);
	expect_pair(cap, "new_aligned_array", 1, 3 * 128);
	expect_pair(cap, "new_aligned_nothrow", 1, 128);
	expect_pair(cap, "new_aligned_array_nothrow", 1, 2 * 128);
	expect_pair(cap, "explicit_operators", 10, 24 + 40 + 96 + 160 + 56 + 72 + 88 + 104 + 120 + 136);
	expect_pair(cap, "new_fails", 0, 0);
	expect_pair(cap, "after_exception", 1, 5 * sizeof(int));
	hpq_free(cap);
}

HP_TEST(cxx_every_operator_dwarf) { check("dwarf"); }
HP_TEST(cxx_every_operator_fp) { check("fp"); }

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
