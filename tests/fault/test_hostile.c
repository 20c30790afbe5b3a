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
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/format/capture.h"
#include "../../src/analyzer/embed.h"
#include "../../src/analyzer/model/model.h"
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
	static const struct hp_rec_bucket b[] = {
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

/* A crafted capture (symbolized from a real binary) in a fresh directory:
 * dir/in.hpf. */
static const char *fresh_capture(const char *name)
{
	static char dir[600];
	char path[700], prog[600];

	snprintf(dir, sizeof dir, "%s/%s.dir", hp_test_tmp(), name);
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	snprintf(path, sizeof path, "%s/in.hpf", dir);
	snprintf(prog, sizeof prog, "%s/tests/programs/known", hp_test_build());
	craft_with_module(path, prog);
	return dir;
}

HP_TEST(output_onto_input_is_refused)
{
	/* -o naming the capture itself, by another path or a hard link: the
	 * capture must survive, and the command fail with one line. */
	const char *d = fresh_capture("self");
	static const char *const cmds[] = {
		"export in.hpf --format folded -o in.hpf",
		"export in.hpf --format pprof -o ./in.hpf",
		"export in.hpf --format gperftools -o link.hpf",
		"flamegraph in.hpf -o in.hpf",
		"diff in.hpf in.hpf -o link.hpf",
	};

	hp_test_sh("cd %s && cp in.hpf orig.hpf && ln in.hpf link.hpf", d);
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s %s 2> err", d, hp(), cmds[i]), 1,
			      cmds[i]);
		expect_eq_u64(hp_test_sh("cd %s && grep -q 'is the capture being read' err && "
					 "[ $(wc -l < err) = 1 ]", d), 0, "one line says why");
		expect_eq_u64(hp_test_sh("cd %s && cmp -s in.hpf orig.hpf", d), 0,
			      "the capture is intact");
	}
}

HP_TEST(output_symlink_and_mode)
{
	/* A symlink planted at the output path is not followed (its target
	 * stays as it was); a new output is created 0600 whatever the umask;
	 * an existing file is made 0600 too (issue 22: it kept 0644). */
	const char *d = fresh_capture("outmode");

	hp_test_sh("cd %s && echo precious > victim && chmod 644 victim && ln -s victim out", d);
	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s export in.hpf --format folded -o out "
				 "2> err", d, hp()), 1, "a symlink at the output is refused");
	expect_eq_u64(hp_test_sh("cd %s && grep -q 'symbolic link' err", d), 0, "said so");
	expect_eq_u64(hp_test_sh("cd %s && [ \"$(cat victim)\" = precious ]", d), 0,
		      "its target is untouched");
	expect_eq_u64(hp_test_sh("cd %s && umask 000 && timeout 20 %s export in.hpf --format "
				 "folded -o new.folded && [ $(stat -c %%a new.folded) = 600 ]",
				 d, hp()), 0, "a new output is 0600 under umask 000");
	expect_eq_u64(hp_test_sh("cd %s && umask 000 && timeout 20 %s flamegraph in.hpf -o "
				 "new.svg && [ $(stat -c %%a new.svg) = 600 ]", d, hp()), 0,
		      "a new flame graph too");
	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s export in.hpf --format folded -o "
				 "victim && [ $(stat -c %%a victim) = 600 ] && ! grep -q precious "
				 "victim",
				 d, hp()),
		      0, "a replaced file is made 0600");
}

HP_TEST(stdout_write_errors_fail)
{
	/* Printing into /dev/full fails: the exit status is 1 and one line
	 * says so, for every command that prints on standard output. */
	const char *d = fresh_capture("stdout");
	static const char *const cmds[] = {
		"inspect in.hpf",
		"inspect --stacks in.hpf",
		"report in.hpf",
		"report --json in.hpf",
		"diff in.hpf in.hpf",
		"export in.hpf --format folded -o -",
		"export in.hpf --format gperftools -o -",
		"flamegraph in.hpf -o -",
		"--help",
		"report --help",
		"--version",
	};

	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s %s > /dev/full 2> err", d, hp(),
					 cmds[i]), 1, cmds[i]);
		expect_eq_u64(hp_test_sh("cd %s && grep -q 'cannot write' err && "
					 "[ $(grep -c 'cannot write' err) = 1 ]", d), 0,
			      "one line says the write failed");
	}
}

HP_TEST(write_errors_name_their_cause)
{
	/* A failed write says the kernel's reason, the same for every command
	 * and every view (report --json said "Cannot allocate memory", report
	 * "Input/output error": guesses from ferror): /dev/full is a full
	 * disk, a file size limit a file too large (and the file is removed). */
	const char *d = fresh_capture("cause");
	static const char *const cmds[] = {
		"inspect in.hpf > /dev/full",
		"inspect --stacks in.hpf > /dev/full",
		"report in.hpf > /dev/full",
		"report --json in.hpf > /dev/full",
		"report --json --timeline in.hpf > /dev/full",
		"report --histograms in.hpf > /dev/full",
		"report --timeline in.hpf > /dev/full",
		"report --by type in.hpf > /dev/full",
		"report --by function --json in.hpf > /dev/full",
		"diff in.hpf in.hpf > /dev/full",
		"diff --by type in.hpf in.hpf > /dev/full",
		"export in.hpf --format folded -o - > /dev/full",
		"export in.hpf --format gperftools -o - > /dev/full",
		"export in.hpf --format pprof -o /dev/full",
		"flamegraph in.hpf -o /dev/full",
		"html in.hpf -o /dev/full",
		"--help > /dev/full",
		"report --help > /dev/full",
	};

	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s %s 2> err", d, hp(), cmds[i]), 1,
			      cmds[i]);
		if (!expect_eq_u64(hp_test_sh("cd %s && grep -q 'cannot write: No space left on "
					      "device$' err && [ $(wc -l < err) = 1 ]",
					      d),
				   0, "one line: No space left on device"))
			hp_test_sh("cat %s/err", d);
	}
	expect_eq_u64(hp_test_sh("cd %s && (trap '' XFSZ; ulimit -f 1; timeout 20 %s html in.hpf "
				 "-o big.html 2> err); [ $? = 1 ] && grep -q 'big.html: cannot "
				 "write: File too large$' err && ! test -e big.html",
				 d, hp()),
		      0, "over the file size limit: File too large, the file removed");
}

HP_TEST(absurd_sampling_rate_figures_stay_numbers)
{
	/* A sampling rate of 2^62 and huge counts: the unbiased figures must
	 * be finite (JSON has no NaN or inf) and integers clamped (no
	 * -9223372036854775808 from converting an out-of-range double). */
	static const uint64_t f0[] = {0x401010, 0x402020};
	static const struct hp_rec_bucket b[] = {
		{.stack_id = 1, .size = 1, .alloc_count = 1000, .alloc_bytes = 1000,
		 .peak_count = 5, .peak_bytes = 5},
		{.stack_id = 2, .size = 1ull << 40, .alloc_count = 1ull << 62,
		 .alloc_bytes = 1ull << 63, .free_count = 3, .free_bytes = 1ull << 41},
	};
	const char *d = fresh_capture("numbers");
	char path[700];
	struct hp_craft c;

	snprintf(path, sizeof path, "%s/rate.hpf", d);
	hp_craft_begin(&c);
	hp_craft_meta_as(&c, 100, "/bin/prog", "--flag", 1ull << 62);
	hp_craft_module(&c, 0, "/nonexistent/libx.so", 0x400000, 0, 0x10000);
	hp_craft_stacks(&c, 1, f0, 2);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXIT, b, 2);
	hp_craft_write(&c, path);

	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s report --json rate.hpf > r.json 2>/dev/null",
				 d, hp()), 0, "report --json");
	expect_eq_u64(hp_test_sh("cd %s && python3 -c 'import json,sys; json.load(open(\"r.json\"), "
				 "parse_constant=lambda c: sys.exit(\"not finite: \" + c))'", d), 0,
		      "the JSON parses strictly: every number is finite");
	expect_eq_u64(hp_test_sh("cd %s && ! grep -qiE 'nan|inf' r.json", d), 0, "no nan, no inf");
	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s export rate.hpf --format folded -o f.txt "
				 "--metric allocated 2>/dev/null", d, hp()), 0, "export folded");
	expect_eq_u64(hp_test_sh("cd %s && ! grep -q -- '-9223372036854775808' f.txt && "
				 "grep -q ' 9223372036854775807$' f.txt", d), 0,
		      "an estimate past 2^63 is clamped to INT64_MAX, not wrapped");
	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s export rate.hpf --format gperftools -o "
				 "g.txt 2>/dev/null && ! grep -q -- '-9223372036854775808' g.txt", d,
				 hp()), 0, "gperftools: clamped too");
	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s diff in.hpf rate.hpf > d.txt 2>/dev/null && "
				 "grep -q '^  change  .* (+9223372036854775807 bytes, ' d.txt && "
				 "! grep -q -- '-9223372036854775808' d.txt", d, hp()), 0,
		      "diff: a growth past 2^63 is clamped too");
	expect_eq_u64(hp_test_sh("cd %s && timeout 20 %s report rate.hpf > r.txt 2>/dev/null && "
				 "! grep -qiE 'nan|inf' r.txt", d, hp()), 0, "text report: numbers");
}

/* Whether a file holds a control byte other than newline and tab. */
static int has_controls(const char *dir, const char *file)
{
	return hp_test_sh("cd %s && LC_ALL=C grep -qP '[\\x00-\\x08\\x0b-\\x1f\\x7f]' %s", dir,
			  file) == 0;
}

HP_TEST(escapes_in_names_are_escaped)
{
	/* Terminal escapes and newlines in the program, its arguments, a
	 * module path and embedded symbols: every text output shows them
	 * escaped, and the gperftools map keeps one line per segment. */
	static const uint64_t f0[] = {0x401010, 0x402020};
	static const uint64_t addrs[] = {0x401010, 0x401000, 0x402020, 0x402010};
	static const char *const names[] = {"evil\x1b]0;pwned\x07", "caller\x1b[2J",
					    "bidi\xe2\x80\xae" "evil", "c1\xc2\x9b" "csi"};
	static const struct hp_rec_bucket b[] = {
		{.stack_id = 1, .alloc_count = 3, .alloc_bytes = 300, .peak_count = 3,
		 .peak_bytes = 300},
		{.stack_id = 2, .alloc_count = 1, .alloc_bytes = 50},
	};
	static const char *const outs[] = {"report", "report --json", "inspect --stacks",
					   "export --format folded -o -",
					   "export --format gperftools -o -", "flamegraph -o -"};
	const char *d = fresh_capture("escapes");
	char path[700], cmd[1024];
	struct hp_craft c;

	snprintf(path, sizeof path, "%s/esc.hpf", d);
	hp_craft_begin(&c);
	hp_craft_meta_as(&c, 100, "/bin/\x1b[31mred\x1b[0m", "arg\x1b]2;title\x07", 1);
	hp_craft_module(&c, 0, "/lib/x.so\n00400000-00500000 r-xp 00000000 00:00 0 /bin/forged",
			0x400000, 0, 0x10000);
	hp_craft_stacks(&c, 1, f0, 2);
	hp_craft_snapshot_of(&c, 1, HP_SNAP_EXIT, b, 2);
	hp_craft_symbols(&c, addrs, names, 4, -1);
	hp_craft_write(&c, path);

	for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
		snprintf(cmd, sizeof cmd, "%s", outs[i]);
		char *sp = strchr(cmd, ' ');
		/* the capture goes right after the subcommand */
		hp_test_sh("cd %s && timeout 20 %s %.*s esc.hpf %s > out.%zu 2> err.%zu", d, hp(),
			   sp ? (int)(sp - cmd) : (int)strlen(cmd), cmd, sp ? sp + 1 : "", i, i);
		char f[32];
		snprintf(f, sizeof f, "out.%zu", i);
		expect_true(!has_controls(d, f), outs[i]);
		snprintf(f, sizeof f, "err.%zu", i);
		expect_true(!has_controls(d, f), "and nothing raw on standard error either");
	}
	expect_eq_u64(hp_test_sh("cd %s && grep -q 'x1b\\[31mred' out.0", d), 0,
		      "the program is shown, escaped");
	expect_eq_u64(hp_test_sh("cd %s && grep -q 'evil.x1b]0;pwned.x07' out.0", d), 0,
		      "an embedded symbol is shown, escaped");
	expect_eq_u64(hp_test_sh("cd %s && ! grep -q $(printf '\\342\\200\\256') out.0", d), 0,
		      "a bidi override is escaped");
	expect_eq_u64(hp_test_sh("cd %s && ! grep -q '^00400000-00500000.*forged' out.4", d), 0,
		      "a newline in a module path forges no MAPPED_LIBRARIES line");
	expect_eq_u64(hp_test_sh("cd %s && python3 -c 'import json; json.load(open(\"out.1\"))'", d),
		      0, "the JSON report is valid");
}

/* A capture of a few kilobytes whose zstd records each inflate to 1 MiB of
 * the smallest possible items: stacks of depth 1, module events without a
 * path or segments, snapshot buckets of zeros. Each item costs the reader
 * far more than its two to twelve bytes (a 16-byte stack and a malloc'd
 * frame; a 640-byte module; an 88-byte bucket): 594 MB for 2.7 KB before
 * the reader had a memory bound. */
static size_t craft_amplifier(const char *path, int records)
{
	struct hp_craft c;
	uint64_t next = 1;
	size_t size;

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	for (int r = 0; r < records; r++) {
		struct hp_buf *p = &c.payload;
		size_t n = (1u << 20) / 2 - 8;
		hp_buf_put_u(p, next);             /* STACKS: first id */
		hp_buf_put_u(p, n);
		for (size_t i = 0; i < n; i++) {
			hp_buf_put_u(p, 1);        /* depth */
			hp_buf_put_u(p, 0);        /* frame */
		}
		next += n;
		hp_craft_emit_zstd(&c, HP_REC_STACKS, 19);
		n = (1u << 20) / 7 - 2;           /* MODULES: minimal loads */
		hp_buf_put_u(p, n);
		for (size_t i = 0; i < n; i++) {
			hp_buf_put_u(p, HP_MOD_LOAD);
			for (int k = 0; k < 6; k++) /* time, id, path, build-id, bias, nseg */
				hp_buf_put_u(p, 0);
		}
		hp_craft_emit_zstd(&c, HP_REC_MODULES, 19);
		for (int k = 0; k < 12; k++)       /* SNAPSHOT: header, no lost kinds */
			hp_buf_put_u(p, k == 0 ? 1 : 0);
		hp_buf_put_u(p, 0);
		n = (1u << 20) / 12 - 4;
		hp_buf_put_u(p, n);
		for (size_t i = 0; i < n * 12; i++) /* buckets of stack 0, all zeros */
			hp_buf_put_u(p, 0);
		hp_craft_emit_zstd(&c, HP_REC_SNAPSHOT, 19);
	}
	size = c.file.len;
	hp_craft_write(&c, path);
	return size;
}

/* The peak resident set of `heapprof SUB PATH`, in KiB, or 0. Measured
 * by GNU time, a small process: a child of this test would start from the
 * test's own peak, which survives the exec. */
static long peak_rss_kib(const char *sub, const char *path)
{
	char out[600];
	long kib = 0;
	FILE *f;

	snprintf(out, sizeof out, "%s/rss.%s", hp_test_tmp(), sub);
	if (hp_test_sh("timeout 60 /usr/bin/time -f %%M -o %s %s %s %s > /dev/null 2>&1; "
		       "test -s %s", out, hp(), sub, path, out))
		return 0;
	/* The last line: GNU time first says "Command exited with non-zero
	 * status 1" (the capture is damaged: what was refused). */
	if ((f = fopen(out, "r"))) {
		char line[256];
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "%ld", &kib) != 1)
				kib = 0;
		fclose(f);
	}
	return kib;
}

/* Frame address 0 (a capture may hold it; the recorder never writes it) is
 * one location like any other address: the model's address index once
 * took key 0 for an empty slot and made a new location at each sight. */
HP_TEST(address_zero_is_one_location)
{
	const char *path = hp_craft_tmp("zero.hpf");
	const uint64_t frame0[] = {16, 16}; /* two stacks: 16, 0 */
	const uint64_t ids[] = {1, 2};
	struct hp_capture cap;
	struct hp_model m;
	struct hp_craft c;
	char err[256];

	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, frame0, 2);
	hp_craft_snapshot(&c, ids, 2);
	if (hp_craft_write(&c, path) ||
	    !expect_eq_u64((uint64_t)hp_capture_load(path, &cap, err, sizeof err), 0, err))
		return;
	if (expect_eq_u64((uint64_t)hp_model_build(&m, &cap, NULL, err, sizeof err), 0, err)) {
		expect_eq_u64(m.nlocations, 2, "addresses 16 and 0, one location each");
		expect_eq_u64(hp_mstack_location(&m.stacks[1], 1), hp_mstack_location(&m.stacks[2], 1),
			      "both stacks end in the same location");
		hp_model_free(&m);
	}
	hp_capture_free(&cap);
}

/* A stack's location indexes take 16 bits while they fit (model.h):
 * 70,000 stacks of two fresh addresses each make 140,000 locations, the
 * lists of the first 32,768 stacks narrow, the others' wide (24 bits an
 * index: all fit). Each reads
 * back its own indexes, and diff matches every chain of a capture with
 * the same stacks in the other order (a chain narrow on one side is wide
 * on the other): all 70,000 the same, none changed. */
HP_TEST(location_lists_narrow_then_wide)
{
	enum { N = 70000 };
	const char *fwd = hp_craft_tmp("widths_fwd.hpf"), *rev = hp_craft_tmp("widths_rev.hpf");
	uint64_t *frame0 = malloc(2 * N * sizeof *frame0), *ids = frame0 + N;
	size_t wrong = 0, wide = 0, packed = 0;
	struct hp_capture cap;
	struct hp_model m;
	struct hp_craft c;
	char err[256], *text;

	if (!expect_true(frame0 != NULL, "memory"))
		return;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < N; k++) {
			frame0[k] = 32 * (pass ? N - k : k + 1); /* then k - 16 */
			ids[k] = k + 1;
		}
		hp_craft_begin(&c);
		hp_craft_meta(&c, 100, "/bin/prog", 0);
		hp_craft_stacks(&c, 1, frame0, N);
		hp_craft_snapshot(&c, ids, N);
		if (!expect_eq_u64((uint64_t)hp_craft_write(&c, pass ? rev : fwd), 0, "written")) {
			free(frame0);
			return;
		}
	}
	free(frame0);
	if (!expect_eq_u64((uint64_t)hp_capture_load(fwd, &cap, err, sizeof err), 0, err))
		return;
	if (expect_eq_u64((uint64_t)hp_model_build(&m, &cap, NULL, err, sizeof err), 0, err)) {
		expect_eq_u64(m.nlocations, 2 * N, "two locations a stack");
		for (uint32_t k = 0; k < N; k++) {
			const struct hp_mstack *st = &m.stacks[k + 1];
			wrong += st->depth != 2 || hp_mstack_location(st, 0) != 2 * k ||
				 hp_mstack_location(st, 1) != 2 * k + 1 ||
				 st->wide_locations != (2 * k + 1 > UINT16_MAX) ||
				 st->packed_locations != st->wide_locations;
			wide += st->wide_locations;
			packed += st->packed_locations;
		}
		expect_eq_u64(wrong, 0, "each stack reads its own locations");
		expect_eq_u64(wide, N - 32768, "wide from the first index past 65,535");
		expect_eq_u64(packed, N - 32768, "in 24 bits: every index below 2^24");
		hp_model_free(&m);
	}
	hp_capture_free(&cap);
	text = hp_test_sh_out("timeout 60 %s diff --metric allocated %s %s", hp(), fwd, rev);
	expect_true(text && strstr(text, "\n0 of 70000 stacks changed:\n"),
		    "every chain matched across the widths");
	free(text);
}

HP_TEST(memory_is_bounded_by_file_size)
{
	const char *path = hp_craft_tmp("amplifier.hpf");
	size_t size = craft_amplifier(path, 10);
	struct hp_capture cap;
	char err[512];
	long inspect_kib, report_kib;

	printf("  %zu bytes crafted\n", size);
	expect_true(size < 8192, "a few kilobytes");
	if (expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "it loads")) {
		expect_eq_u64(cap.mem_limit_bytes, HP_CAP_MEM_FACTOR * size + HP_CAP_MEM_BASE_BYTES,
			      "the bound: the stated factor times the file size, plus the base");
		expect_true(cap.mem_bytes <= cap.mem_limit_bytes, "the reader stays within it");
		expect_true(cap.ndamage > 0, "and says what it refused");
		expect_true(cap.ndamage > 0 && strstr(cap.damage[cap.ndamage < HP_CAP_MAX_DAMAGE
								 ? cap.ndamage - 1 : 0],
						      "past 256 times the file's size") != NULL,
			    "as past the memory bound");
		hp_capture_free(&cap);
	}
	/* Measured from outside: the whole heapprof process, file, zstd
	 * scratch, model and all, stays under 64 MiB (it took 1.7 GB). */
	if (!hp_test_need("/usr/bin/time", "time"))
		return;
	inspect_kib = peak_rss_kib("inspect", path);
	report_kib = peak_rss_kib("report", path);
	printf("  peak RSS: inspect %ld KiB, report %ld KiB\n", inspect_kib, report_kib);
	expect_true(inspect_kib > 0 && inspect_kib < 64 * 1024, "inspect stays under 64 MiB");
	expect_true(report_kib > 0 && report_kib < 64 * 1024, "report stays under 64 MiB");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
