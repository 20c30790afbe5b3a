/*
 * test_hostile.c - captures made to hurt the analyzer, and outputs it must
 * not hurt: module paths naming a FIFO, memory amplification, a full disk
 * while embedding symbols, outputs onto inputs and planted symlinks,
 * figures that are not numbers, terminal escapes in names.
 *
 * Captures are crafted with tests/harness/craft.h; the real heapprof
 * binary is run on them, always under a timeout inside the test, so that
 * a hang is a failure and not a stuck `make check`.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/analyzer/capture.h"
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

/* A capture of one program whose one module is at module_path, with two
 * stacks in it and a snapshot using both. */
static void craft_with_module(const char *path, const char *module_path)
{
	static const uint64_t f0[] = {0x401010, 0x402020};
	static const struct hp_craft_bucket b[] = {
		{.stack_id = 1, .alloc_count = 3, .alloc_bytes = 300, .free_count = 1,
		 .free_bytes = 100, .peak_count = 2, .peak_bytes = 200},
		{.stack_id = 2, .alloc_count = 1, .alloc_bytes = 50, .peak_count = 1,
		 .peak_bytes = 50},
	};
	struct hp_craft c;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_module(&c, 0, module_path, 0x400000, 0, 0x10000);
	hp_craft_stacks(&c, 1, f0, 2);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXIT, b, 2);
	hp_craft_write(&c, path);
}

HP_TEST(module_path_fifo_does_not_hang)
{
	/* A FIFO's open blocks until a writer comes: every command that
	 * symbolizes must finish, showing the module as module+offset. */
	char fifo[600], cap[600];
	const char *t = hp_test_tmp();

	snprintf(fifo, sizeof fifo, "%s/fifo-module", t);
	snprintf(cap, sizeof cap, "%s/fifo.hpf", t);
	unlink(fifo);
	if (!expect_eq_u64(mkfifo(fifo, 0600), 0, "mkfifo"))
		return;
	craft_with_module(cap, fifo);
	expect_eq_u64(hp_test_sh("timeout 20 %s report %s > %s/fifo.report 2>&1", hp(), cap, t),
		      0, "report finishes");
	expect_eq_u64(hp_test_sh("grep -q 'fifo-module+0x1010' %s/fifo.report", t), 0,
		      "the frame is shown as module+offset");
	expect_eq_u64(hp_test_sh("timeout 20 %s export %s --format folded -o %s/fifo.folded "
				 "2>/dev/null", hp(), cap, t), 0, "export finishes");
	expect_eq_u64(hp_test_sh("timeout 20 %s flamegraph %s -o %s/fifo.svg 2>/dev/null", hp(),
				 cap, t), 0, "flamegraph finishes");
	expect_eq_u64(hp_test_sh("timeout 20 %s diff %s %s > /dev/null 2>&1", hp(), cap, cap), 0,
		      "diff finishes");
	expect_eq_u64(hp_test_sh("timeout 20 %s symbolize %s > /dev/null 2>&1", hp(), cap), 0,
		      "symbolize finishes");
	/* A directory and a character device in the same place: refused the
	 * same way (a directory would fail anyway; /dev/zero would be read
	 * forever by an ELF reader that trusted it). */
	craft_with_module(cap, "/dev/zero");
	expect_eq_u64(hp_test_sh("timeout 20 %s report %s > /dev/null 2>&1", hp(), cap), 0,
		      "a device as module: report finishes");
	craft_with_module(cap, t);
	expect_eq_u64(hp_test_sh("timeout 20 %s report %s > /dev/null 2>&1", hp(), cap), 0,
		      "a directory as module: report finishes");
	unlink(fifo);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
