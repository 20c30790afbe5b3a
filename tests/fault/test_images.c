/*
 * test_images.c - captures of a process that exec'd: one image per META
 * record (format.h, "Images"), each with its own modules, stacks (ids from
 * 1 again), snapshots and symbols. Crafted by hand (tests/harness/craft.h)
 * with frames of the two images at the same addresses, so that a reader
 * mixing them up shows the wrong figures or names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/capture.h"
#include "../../src/analyzer/embed.h"
#include "../../src/format/format.h"
#include "../harness/craft.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

/* Image 1: /bin/sh, two stacks, a snapshot before its exec. Image 2:
 * /usr/bin/prog, same pid, three stacks (its 1 at sh's 1's address), a
 * time series and an exit snapshot. With symbols: a SYMBOLS record per
 * image naming the same address differently. module_path: where both
 * images' executable is. */
static void craft_two_images(const char *path, const char *module_path, int symbols)
{
	static const uint64_t sh_f0[] = {0x401010, 0x402020};
	static const uint64_t prog_f0[] = {0x401010, 0x403030, 0x404040};
	static const struct hp_rec_bucket sh_b[] = {
		{.stack_id = 1, .alloc_count = 7, .alloc_bytes = 7000, .free_count = 7,
		 .free_bytes = 7000, .peak_count = 7, .peak_bytes = 7000},
		{.stack_id = 2, .alloc_count = 1, .alloc_bytes = 11, .peak_count = 1,
		 .peak_bytes = 11},
	};
	static const struct hp_rec_bucket prog_b[] = {
		{.stack_id = 1, .alloc_count = 3, .alloc_bytes = 300, .free_count = 1,
		 .free_bytes = 100, .peak_count = 3, .peak_bytes = 300},
		{.stack_id = 2, .alloc_count = 2, .alloc_bytes = 64, .peak_count = 2,
		 .peak_bytes = 64},
		{.stack_id = 3, .alloc_count = 5, .alloc_bytes = 5000, .free_count = 5,
		 .free_bytes = 5000, .peak_count = 1, .peak_bytes = 1000},
	};
	static const uint64_t sh_addrs[] = {0x401010, 0x401000};
	static const char *const sh_names[] = {"sh_alloc", "sh_main"};
	static const uint64_t prog_addrs[] = {0x401010, 0x401000, 0x403030, 0x404040};
	static const char *const prog_names[] = {"prog_alloc", "prog_main", "prog_other",
						 "prog_temp"};
	struct hp_craft c;

	hp_craft_begin(&c);
	hp_craft_meta_as(&c, 100, "/bin/sh", "-c", 1);
	hp_craft_module(&c, 0, module_path, 0x400000, 0, 0x10000);
	hp_craft_stacks(&c, 1, sh_f0, 2);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXEC, sh_b, 2);

	hp_craft_meta_as(&c, 100, "/usr/bin/prog", "--flag", 1);
	hp_craft_module(&c, 0, module_path, 0x400000, 0, 0x10000);
	hp_craft_stacks(&c, 1, prog_f0, 3);
	hp_rec_count_put(&c.payload, 1); /* a time series of one sample */
	hp_rec_sample_put(&c.payload, &(struct hp_rec_sample){2000, 364, 8192}, &(uint64_t){0});
	hp_craft_emit(&c, HP_REC_TIMESERIES);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXIT, prog_b, 3);
	if (symbols) {
		hp_craft_symbols(&c, sh_addrs, sh_names, 2, 0);
		hp_craft_symbols(&c, prog_addrs, prog_names, 4, 1);
	}
	hp_craft_write(&c, path);
}

HP_TEST(two_images_are_kept_apart)
{
	const char *path = hp_craft_tmp("two.hpf");
	struct hp_capture cap;
	char err[512];

	craft_two_images(path, "/nonexistent/exe", 1);
	if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "loads"))
		return;
	expect_eq_u64(cap.ndamage, 0, "a second META is a new image, not damage");
	if (!expect_eq_u64(cap.nimages, 2, "two images")) {
		hp_capture_free(&cap);
		return;
	}
	expect_eq_u64(cap.image, 1, "the last image is shown");
	expect_str(cap.program, "/usr/bin/prog", "its program");
	expect_eq_u64(cap.nstacks, 4, "its stacks: ids 1..3 (again from 1)");
	expect_eq_u64(cap.nmodules, 1, "its module only");
	expect_eq_u64(cap.nsamples, 1, "its time series");
	if (expect_eq_u64(cap.nsnapshots, 1, "its snapshot only")) {
		expect_eq_u64(cap.snapshots[0].reason, HP_SNAP_EXIT, "the exit one");
		expect_eq_u64(cap.snapshots[0].alloc_bytes, 5364, "with its figures");
	}
	expect_eq_u64(cap.stacks[1].frames[0], 0x401010, "stack 1 of image 2");
	expect_eq_u64(cap.has_symbols, 1, "its symbols");
	expect_eq_u64(cap.symbols.naddrs, 4, "its own SYMBOLS record");

	const struct hp_cap_image *sh = &cap.images[0];
	expect_str(sh->program, "/bin/sh", "image 1 is the shell");
	expect_eq_u64(sh->nstacks, 3, "with its stacks");
	expect_eq_u64(sh->nsnapshots, 1, "and its snapshot");
	expect_eq_u64(sh->nsnapshots ? sh->snapshots[0].reason : 0, HP_SNAP_EXEC,
		      "written before the exec");
	expect_eq_u64(sh->nsnapshots ? sh->snapshots[0].alloc_bytes : 0, 7011, "its figures");
	expect_eq_u64(sh->symbols.naddrs, 2, "its symbols");
	expect_eq_u64(hp_capture_select(&cap, 0), 0, "image 1 can be selected");
	expect_str(cap.program, "/bin/sh", "and then is shown");
	expect_eq_u64(cap.nstacks, 3, "with its stacks");
	expect_true(hp_capture_select(&cap, 2) != 0, "there is no image 3");
	hp_capture_free(&cap);
}

HP_TEST(two_images_report_the_last)
{
	/* report, export, flamegraph and diff show the exec'd program with
	 * its own names: the shell's name at the same address never. */
	const char *d = hp_test_tmp();
	const char *path = hp_craft_tmp("two-cli.hpf");

	craft_two_images(path, "/nonexistent/exe", 1);
	expect_eq_u64(hp_test_sh("timeout 20 %s report %s > %s/two.report 2>&1", hp(), path, d), 0,
		      "report");
	expect_eq_u64(hp_test_sh("grep -q '^heapprof report: prog --flag$' %s/two.report && grep -q "
				 "prog_alloc %s/two.report && ! grep -q sh_ %s/two.report", d, d, d), 0,
		      "the report is image 2's (its arguments), with its names");
	expect_eq_u64(hp_test_sh("timeout 20 %s export %s --format folded --metric allocated -o "
				 "%s/two.folded", hp(), path, d), 0, "export");
	expect_eq_u64(hp_test_sh("sort %s/two.folded | tr '\\n' '|' | grep -qx "
				 "'0x3020;prog_other 64|0x4030;prog_temp 5000|prog_main;prog_alloc 300|'", d), 0,
		      "exact figures of image 2");
	expect_eq_u64(hp_test_sh("timeout 20 %s flamegraph %s -o %s/two.svg && grep -q prog_alloc "
				 "%s/two.svg && ! grep -q sh_alloc %s/two.svg", hp(), path, d, d, d),
		      0, "flamegraph");
	expect_eq_u64(hp_test_sh("timeout 20 %s diff %s %s > %s/two.diff && grep -q '0 of 3 "
				 "stacks changed' %s/two.diff", hp(), path, path, d, d), 0,
		      "diff compares image 2 with image 2");
	if (hp_test_sh("grep -q '0 of 3' %s/two.diff", d))
		hp_test_sh("cat %s/two.diff", d);
}

HP_TEST(two_images_image_option)
{
	/* --image N shows another image, with its own figures and names. */
	const char *d = hp_test_tmp();
	const char *path = hp_craft_tmp("two-opt.hpf");

	craft_two_images(path, "/nonexistent/exe", 1);
	expect_eq_u64(hp_test_sh("timeout 20 %s export %s --image 1 --format folded --metric "
				 "allocated -o %s/one.folded", hp(), path, d), 0, "export --image 1");
	expect_eq_u64(hp_test_sh("sort %s/one.folded | tr '\\n' '|' | grep -qx "
				 "'0x2010;0x2020 11|sh_main;sh_alloc 7000|'", d), 0,
		      "exact figures of image 1, with its names");
	expect_eq_u64(hp_test_sh("timeout 20 %s report --image 1 %s 2>/dev/null | grep -A1 "
				 "'^heapprof report: prog -c$' | grep -q '^  executable /bin/sh$'",
				 hp(), path), 0,
		      "report --image 1 is the shell's (argv[0], then its executable)");
	expect_eq_u64(hp_test_sh("timeout 20 %s flamegraph --image 2 %s -o - 2>/dev/null | grep -q "
				 "prog_alloc", hp(), path), 0, "flamegraph --image 2");
	expect_eq_u64(hp_test_sh("timeout 20 %s diff --image 1 %s %s 2>/dev/null | grep -q "
				 "'0 of 2 stacks changed'", hp(), path, path), 0, "diff --image 1");
	expect_eq_u64(hp_test_sh("timeout 20 %s report --image 3 %s 2> %s/img3.err", hp(), path, d),
		      1, "there is no image 3");
	expect_eq_u64(hp_test_sh("grep -q 'there is no image 3 (the capture has 2)' %s/img3.err", d),
		      0, "said so");
	expect_eq_u64(hp_test_sh("timeout 20 %s report --image 0 %s 2>/dev/null", hp(), path), 2,
		      "images count from 1");
}

HP_TEST(last_image_without_snapshot)
{
	/* The exec'd program was killed before any snapshot: the shell's
	 * image is shown, and heapprof says so. */
	static const uint64_t f0[] = {0x401010};
	static const struct hp_rec_bucket b[] = {
		{.stack_id = 1, .alloc_count = 2, .alloc_bytes = 20, .peak_count = 2,
		 .peak_bytes = 20},
	};
	const char *d = hp_test_tmp();
	const char *path = hp_craft_tmp("killed.hpf");
	struct hp_craft c;

	hp_craft_begin(&c);
	hp_craft_meta_as(&c, 100, "/bin/sh", "-c", 1);
	hp_craft_stacks(&c, 1, f0, 1);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXEC, b, 1);
	hp_craft_meta_as(&c, 100, "/usr/bin/prog", "--flag", 1);
	hp_craft_stacks(&c, 1, f0, 1);
	hp_craft_write(&c, path);
	expect_eq_u64(hp_test_sh("timeout 20 %s report %s > %s/killed.out 2> %s/killed.err", hp(),
				 path, d, d), 0, "report");
	expect_eq_u64(hp_test_sh("grep -q '^heapprof report: prog -c$' %s/killed.out && grep -q "
				 "'^  executable /bin/sh$' %s/killed.out", d, d), 0,
		      "the shell's image is shown");
	expect_eq_u64(hp_test_sh("grep -q 'the last image (2) holds no snapshot: showing image 1, "
				 "/bin/sh' %s/killed.err", d), 0, "and that is said");
}

HP_TEST(two_images_inspect_lists_both)
{
	const char *d = hp_test_tmp();
	const char *path = hp_craft_tmp("two-inspect.hpf");

	craft_two_images(path, "/nonexistent/exe", 1);
	expect_eq_u64(hp_test_sh("timeout 20 %s inspect %s > %s/two.inspect", hp(), path, d), 0,
		      "inspect: intact");
	expect_eq_u64(hp_test_sh("grep -q '^image     1 of 2' %s/two.inspect && grep -q "
				 "'^image     2 of 2' %s/two.inspect", d, d), 0, "both images");
	expect_eq_u64(hp_test_sh("grep -q '^program   prog -c$' %s/two.inspect && grep -q "
				 "'^program   prog --flag$' %s/two.inspect", d, d), 0,
		      "both programs, named by their argv[0]");
	expect_eq_u64(hp_test_sh("grep -q '^exe       /bin/sh$' %s/two.inspect && grep -q "
				 "'^exe       /usr/bin/prog$' %s/two.inspect", d, d), 0,
		      "and their executables");
	expect_eq_u64(hp_test_sh("grep -c '^pid       100 ' %s/two.inspect | grep -qx 2", d), 0,
		      "the same pid twice");
	expect_eq_u64(hp_test_sh("grep -q ' exec  .*buckets 2$' %s/two.inspect && grep -q ' exit  "
				 ".*buckets 3$' %s/two.inspect", d, d), 0, "each image's snapshot");
	expect_eq_u64(hp_test_sh("grep -q '^  allocated  10 objects, 5364 bytes' %s/two.inspect",
				 d), 0, "totals of the last image");
}

HP_TEST(two_images_symbolize_each)
{
	/* heapprof symbolize embeds each image's frames in a record of its
	 * own: image 1's frames at the same addresses as image 2's are
	 * resolved with image 1's modules. */
	const char *path = hp_craft_tmp("two-sym.hpf");
	char prog[600], err[512];
	struct hp_embed_result res;
	struct hp_capture cap;

	snprintf(prog, sizeof prog, "%s/tests/programs/known", hp_test_build());
	craft_two_images(path, prog, 0);
	if (!expect_eq_u64(hp_embed_symbols(path, NULL, &res, err, sizeof err), 0, "embedded"))
		printf("  %s\n", err);
	expect_eq_u64(res.addresses, 4 + 6, "image 1's 4 frames and image 2's 6");
	if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "loads"))
		return;
	expect_eq_u64(cap.ndamage, 0, "no damage");
	if (expect_eq_u64(cap.nimages, 2, "two images")) {
		expect_eq_u64(cap.images[0].has_symbols, 1, "image 1 has its symbols");
		expect_eq_u64(cap.images[0].symbols.naddrs, 4, "for its 4 frames");
		expect_eq_u64(cap.images[1].has_symbols, 1, "image 2 has its symbols");
		expect_eq_u64(cap.images[1].symbols.naddrs, 6, "for its 6 frames");
		expect_eq_u64(cap.images[1].symbols.nstatus, 1, "and its module's status");
	}
	hp_capture_free(&cap);
}

HP_TEST(symbols_without_image_field_are_image_1s)
{
	/* A SYMBOLS record from before format 1.2 names no image: image 1. */
	static const uint64_t f0[] = {0x401010};
	static const uint64_t addrs[] = {0x401010};
	static const char *const names[] = {"old_style"};
	const char *path = hp_craft_tmp("old-sym.hpf");
	struct hp_craft c;
	struct hp_capture cap;
	char err[512];

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, f0, 1);
	hp_craft_snapshot(&c, (const uint64_t[]){1}, 1);
	hp_craft_symbols(&c, addrs, names, 1, -1);
	hp_craft_write(&c, path);
	if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "loads"))
		return;
	expect_eq_u64(cap.ndamage, 0, "no damage");
	expect_eq_u64(cap.has_symbols, 1, "the symbols are image 1's");
	hp_capture_free(&cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
