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

/* Runs hp_embed_symbols on path in a child whose files may not grow past
 * limit bytes (a full disk, as far as write(2) tells), SIGXFSZ ignored.
 * Returns the child's exit status (0: embedded) and its error line. */
static int embed_with_limit(const char *path, off_t limit, char *err, size_t errlen)
{
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(pipefd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = {.rlim_cur = (rlim_t)limit, .rlim_max = (rlim_t)limit};
		struct hp_embed_result res;
		char msg[512] = "";
		int ret;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		ret = hp_embed_symbols(path, NULL, &res, msg, sizeof msg);
		if (write(pipefd[1], msg, strlen(msg)) < 0)
			_exit(3);
		_exit(ret ? 1 : 0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

HP_TEST(embed_on_full_disk_keeps_capture)
{
	/* The SYMBOLS record does not fit: the part that was written is cut
	 * off again, the capture is as it was (no damage), and the reason is
	 * the write's own errno, not one left over from symbolizing. */
	char cap[600], prog[600], err[512], errbig[512];
	struct hp_capture c;
	off_t size0;

	snprintf(cap, sizeof cap, "%s/embed-full.hpf", hp_test_tmp());
	snprintf(prog, sizeof prog, "%s/tests/programs/known", hp_test_build());
	craft_with_module(cap, prog);
	size0 = file_size(cap);
	expect_eq_u64(hp_test_sh("cp %s %s.orig", cap, cap), 0, "a copy to compare with");

	/* Room for 10 more bytes: the first write is short, the next fails. */
	expect_eq_u64(embed_with_limit(cap, size0 + 10, err, sizeof err), 1,
		      "a short write is a failure");
	expect_true(strstr(err, "cannot append the symbols: File too large") != NULL,
		    "the errno of the write that failed is said");
	if (!strstr(err, "File too large"))
		printf("  said: %s\n", err);
	expect_eq_u64((uint64_t)file_size(cap), (uint64_t)size0, "the half record is cut off");
	expect_eq_u64(hp_test_sh("cmp -s %s %s.orig", cap, cap), 0, "the capture is unchanged");
	if (expect_eq_u64(hp_capture_load(cap, &c, errbig, sizeof errbig), 0, "it loads")) {
		expect_eq_u64(c.ndamage, 0, "without damage");
		expect_eq_u64(c.has_symbols, 0, "and without symbols");
		hp_capture_free(&c);
	}
	/* No room at all: the first write fails. */
	expect_eq_u64(embed_with_limit(cap, size0, err, sizeof err), 1, "no room is a failure");
	expect_true(strstr(err, "File too large") != NULL, "said the same way");
	expect_eq_u64((uint64_t)file_size(cap), (uint64_t)size0, "nothing was added");
	/* And with room, the record goes in whole. */
	expect_eq_u64(embed_with_limit(cap, size0 + (1 << 20), err, sizeof err), 0,
		      "with room it is embedded");
	if (expect_eq_u64(hp_capture_load(cap, &c, errbig, sizeof errbig), 0, "it loads")) {
		expect_eq_u64(c.ndamage, 0, "without damage");
		expect_eq_u64(c.has_symbols, 1, "with its symbols");
		hp_capture_free(&c);
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
