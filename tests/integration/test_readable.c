/*
 * test_readable.c - the report as people read it (issue 13): a C++
 * program's own frames first and nothing below main, lines that fit the
 * width, filters (--focus, --ignore, --hide) with exact figures on every
 * output, leak suppressions (built-in and a file), the CI gates' exit
 * statuses, and heapprof run's end line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../programs/known.h"

#define STL_LEAK_SIZE 4242 /* tests/programs/cxx_stl.cpp */

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

/* Records a test program once per test binary; its capture's path. */
static const char *capture_of(const char *prog)
{
	static char paths[2][4400];
	static const char *progs[2];
	int slot = progs[0] && strcmp(progs[0], prog) != 0;

	if (!progs[slot]) {
		progs[slot] = prog;
		snprintf(paths[slot], sizeof paths[slot], "%s/%s.hpf", hp_test_tmp(), prog);
		if (hp_test_sh("%s run -q -o %s -- %s/tests/programs/%s > /dev/null", hp(),
			       paths[slot], hp_test_build(), prog) != 0)
			paths[slot][0] = '\0';
	}
	return paths[slot][0] ? paths[slot] : NULL;
}

/* A figure of a report's JSON: totals (or suppressed) key, by python3. */
static double json_figure(const char *args, const char *capture, const char *group,
			  const char *key)
{
	char *out = hp_test_sh_out("%s report --json %s %s | python3 -c 'import json, sys; "
				   "print(json.load(sys.stdin)[\"%s\"][\"%s\"])'",
				   hp(), args, capture, group, key);
	double v = out ? strtod(out, NULL) : -1;
	free(out);
	return v;
}

static int is_entry(const char *line)
{
	static const char *const below[] = {"__libc_start", "_start ", "start_thread", "clone",
					    "_dl_start_user"};
	for (size_t i = 0; i < sizeof below / sizeof *below; i++)
		if (strstr(line, below[i]))
			return 1;
	return 0;
}

/* Every stack of cxx_stl's report shows a frame of the program's own
 * (stl_*, main) within its first 3 lines, and no frame below main. */
HP_TEST(report_cxx_own_frame_first_nothing_below_main)
{
	const char *cap = capture_of("cxx_stl");
	char *out, *line, *save = NULL;
	int stacks = 0, late = 0, entries = 0, in_stack = 0, lines = 0, own = 0;

	if (!expect_true(cap != NULL, "heapprof run records cxx_stl"))
		return;
	out = hp_test_sh_out("%s report --top 100 --no-default-suppressions %s", hp(), cap);
	if (!expect_true(out != NULL, "heapprof report runs"))
		return;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int frame = strncmp(line, "      ", 6) == 0;
		if (!frame) {
			if (in_stack && !own)
				late++;
			in_stack = strncmp(line, "  ", 2) == 0 && strstr(line, ". ") &&
				   line[2] != ' ' ? 1 : (line[2] == ' ' && line[3] != ' ' && strchr(line, '.'));
			if (in_stack) {
				stacks++;
				lines = own = 0;
			}
			continue;
		}
		entries += is_entry(line);
		lines++;
		/* The runtime's own stacks (a library's constructor) have no
		 * frame of the program: they are counted apart below. */
		if (lines <= 3 && (strstr(line, " stl_") || strstr(line, "      main ") ||
				   strstr(line, "_dl_init")))
			own = 1;
	}
	if (in_stack && !own)
		late++;
	free(out);
	expect_true(stacks >= 40, "the report lists the stacks of five sections");
	expect_eq_u64(late, 0, "every stack shows the program's own frame within 3 lines");
	expect_eq_u64(entries, 0, "no frame below main or a thread's start");
	expect_eq_u64(hp_test_sh("%s report --all-frames %s | grep -q __libc_start_call_main", hp(),
				 cap),
		      0, "--all-frames shows them");
	expect_eq_u64(hp_test_sh("%s report --top 100 %s | grep -qF '[+' ", hp(), cap), 0,
		      "runs of library frames are folded into one line");
	expect_eq_u64(hp_test_sh("%s report --top 100 %s | grep -qF 'std::vector<...>::'", hp(), cap),
		      0, "template arguments are shortened");
	/* (by stack: the sites' view shows a library frame only as the one
	 * call a site makes) */
	expect_eq_u64(hp_test_sh("%s report --by stack --full-names --width 0 --top 100 %s | "
				 "grep -qF 'std::vector<int, std::allocator<int> >'",
				 hp(), cap),
		      0, "--full-names keeps them");
	expect_eq_u64(hp_test_sh("%s report --top 100 --frames 1 %s | grep -A1 'stl_leak()' | "
				 "grep -q '      main'",
				 hp(), cap),
		      1, "--frames 1 counts from the program's own first frame");
}

/* Lines longer than max in cmd's output: their count. */
static int long_lines(const char *cmd, const char *cap, int max)
{
	char *out = hp_test_sh_out("%s %s | awk 'length($0) > %d' | wc -l", cmd, cap, max);
	int n = out ? atoi(out) : -1;
	free(out);
	return n;
}

HP_TEST(report_fits_the_width)
{
	const char *cap = capture_of("cxx_stl");
	char cmd[4400];

	if (!expect_true(cap != NULL, "heapprof run records cxx_stl"))
		return;
	snprintf(cmd, sizeof cmd, "env -u COLUMNS %s report --top 100 --full-names", hp());
	expect_eq_u64(long_lines(cmd, cap, 100), 0, "piped, no $COLUMNS: every line fits 100");
	snprintf(cmd, sizeof cmd, "env -u COLUMNS %s report --top 100 --full-names --width 160",
		 hp());
	expect_eq_u64(long_lines(cmd, cap, 160), 0, "--width 160: every line fits 160");
	snprintf(cmd, sizeof cmd, "COLUMNS=90 %s report --top 100 --full-names", hp());
	expect_eq_u64(long_lines(cmd, cap, 90), 0, "COLUMNS=90: every line fits 90");
	snprintf(cmd, sizeof cmd, "env -u COLUMNS %s report --top 100 --full-names --width 0", hp());
	expect_true(long_lines(cmd, cap, 160) > 0, "--width 0: full names are longer than that");
	/* Cut in the middle: the line still ends with its file:line. */
	expect_eq_u64(hp_test_sh("env -u COLUMNS %s report --top 100 --full-names %s | grep -F '...' "
				 "| grep -vqE '\\.(h|tcc|cpp|c):[0-9]+( +\\[\\+[0-9]+ library "
				 "frames?\\])?$'",
				 hp(), cap),
		      1, "a cut name keeps its file:line at the end");
	expect_eq_u64(hp_test_sh("%s report %s | grep -q ' 1 blocks'", hp(), cap), 1,
		      "one block reads '1 block'");
}

HP_TEST(filters_exact_figures)
{
	const char *cap = capture_of("known");
	double all, ignored;
	char *out;

	if (!expect_true(cap != NULL, "heapprof run records known"))
		return;
	expect_near(json_figure("--focus leak_path", cap, "totals", "inuse_bytes"),
		    LEAK_N * LEAK_SIZE, 0, "--focus leak_path: only its leaks");
	expect_near(json_figure("--focus leak_path", cap, "totals", "alloc_objects"), LEAK_N, 0,
		    "and its allocations");
	expect_near(json_figure("--focus '^churn_leaf$'", cap, "totals", "alloc_objects"), CHURN_N, 0,
		    "--focus churn_leaf: its allocations");
	all = json_figure("", cap, "totals", "alloc_objects");
	ignored = json_figure("--ignore 'churn_|leak_'", cap, "totals", "alloc_objects");
	expect_near(all - ignored, CHURN_N + LEAK_N, 0,
		    "--ignore drops exactly the stacks matching");
	expect_eq_u64(hp_test_sh("%s report --focus leak_leaf --hide leak_path %s | grep -q leak_path",
				 hp(), cap),
		      1, "--hide leaves the frame out");
	out = hp_test_sh_out("%s export --format folded --metric leaked --focus leak_ --hide "
			     "'^leak_path$' -o - %s",
			     hp(), cap);
	/* (main is the outermost frame: folded leaves the runtime's below it
	 * out, as every view does) */
	expect_true(out && strncmp(out, "main;leak_leaf ", 15) == 0 && !strstr(out, "leak_path"),
		    "export folded: leak_leaf right under main");
	if (out) {
		const char *v = strrchr(out, ' ');
		expect_near(v ? atof(v) : -1, LEAK_N * LEAK_SIZE, 0, "with the leaked bytes");
	}
	free(out);
	out = hp_test_sh_out("%s flamegraph --metric leaked --focus leak_leaf -o - %s | "
			     "grep -o 'data-n=\"all\" data-d=\"0\" data-x=\"0\" data-v=\"[0-9]*\"'",
			     hp(), cap);
	expect_true(out && strstr(out, "data-v=\"1000\""), "flamegraph: the root is the focus");
	free(out);
	out = hp_test_sh_out("%s diff --focus leak_leaf %s %s | sed -n 2p", hp(), cap, cap);
	expect_true(out && strstr(out, "1000 B (1000 bytes, 10 objects)"), "diff: the totals are the focus's");
	free(out);
	expect_eq_u64(hp_test_sh("%s report --focus '(' %s 2>/dev/null", hp(), cap), 2,
		      "a pattern that is no regular expression is a usage error");
}

HP_TEST(suppressions_builtin_and_file)
{
	const char *cap = capture_of("cxx_stl");
	char file[4400];
	double runtime;

	if (!expect_true(cap != NULL, "heapprof run records cxx_stl"))
		return;
	expect_near(json_figure("", cap, "totals", "inuse_bytes") -
			    json_figure("", cap, "suppressed", "inuse_bytes"),
		    STL_LEAK_SIZE, 0, "built-in suppressions: only stl_leak's block is a leak");
	runtime = json_figure("", cap, "suppressed", "inuse_objects");
	expect_true(runtime >= 2, "the exception pool and stdout's buffer are suppressed");
	expect_eq_u64(hp_test_sh("%s report %s | grep -qE '^  suppressed +%.0f blocks of runtime "
				 "allocations suppressed'",
				 hp(), cap, runtime),
		      0, "the report says how many blocks were suppressed");
	expect_near(json_figure("--no-default-suppressions", cap, "suppressed", "inuse_objects"), 0,
		    0, "--no-default-suppressions suppresses nothing");
	snprintf(file, sizeof file, "%s/supp.txt", hp_test_tmp());
	hp_test_write_file(file, "# LeakSanitizer's format\n\nleak:stl_le*k\n", 40);
	expect_eq_u64(hp_test_sh("cd %s && %s report --suppressions supp.txt %s | "
				 "grep -qE '^  in use +0 B in 0 blocks'",
				 hp_test_tmp(), hp(), cap),
		      0, "a suppressions file takes the last leak out");
	expect_eq_u64(hp_test_sh("cd %s && %s report --suppressions supp.txt "
				 "--no-default-suppressions %s | grep -qE '^  in use .* %s$'",
				 hp_test_tmp(), hp(), cap, "\\(leaked at exit\\)"),
		      0, "with the file alone the runtime's blocks are leaks again");
	hp_test_write_file(file, "race:foo\n", 9);
	expect_eq_u64(hp_test_sh("cd %s && %s report --suppressions supp.txt %s 2>/dev/null",
				 hp_test_tmp(), hp(), cap),
		      2, "a line that is not leak: is a usage error");
	expect_eq_u64(hp_test_sh("%s report --suppressions /nonexistent %s 2>/dev/null", hp(), cap),
		      1, "a missing file is exit status 1");
}

/* Issue 23, item 11: libstdc++ linked into a program without symbols
 * (as Debian's cc1 is): its 72,704-byte emergency pool, made by a
 * constructor no name tells, is known by what it is and suppressed; only
 * stl_leak's block is a leak, as with the shared libstdc++. */
HP_TEST(suppressions_static_libstdcxx_pool)
{
	char cap[4400];

	snprintf(cap, sizeof cap, "%s/cxx_stl_static.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s run -q -o %s -- %s/tests/programs/cxx_stl_static "
				      "> /dev/null", hp(), cap, hp_test_build()), 0,
			   "heapprof run records cxx_stl_static"))
		return;
	expect_eq_u64(hp_test_sh("%s report --no-default-suppressions %s | sed -n '/^leaks/,$p' | "
				 "grep -A1 '^   [0-9]*\\. 71.0 KiB in 1 block' | grep -q "
				 "'^      0x[0-9a-f]*  cxx_stl_static+0x'", hp(), cap), 0,
		      "the pool: one block of 72,704 bytes from a function without a name");
	expect_near(json_figure("", cap, "totals", "inuse_bytes") -
			    json_figure("", cap, "suppressed", "inuse_bytes"),
		    STL_LEAK_SIZE, 0, "built-in suppressions: only stl_leak's block is a leak");
	expect_near(json_figure("--no-default-suppressions", cap, "suppressed", "inuse_bytes"), 0,
		    0, "--no-default-suppressions suppresses nothing");
}

/* Issue 24, item 10 and issue 23, item 7: diff --by counts as report
 * does (the runtime's 72,704-byte libstdc++ pool suppressed: it is not
 * "+71.0 KiB 0xa57ba" and its totals add up to its rows) and names
 * functions as report does (no parameter list). known leaks
 * 17,008 bytes (16.6 KiB), cxx_stl 4,242 (4.1 KiB, stl_leak's). */
HP_TEST(diff_by_counts_and_names_as_report)
{
	const char *cap = capture_of("cxx_stl");
	const char *known = capture_of("known");
	char *out;

	if (!expect_true(cap && known, "heapprof run records cxx_stl and known"))
		return;
	out = hp_test_sh_out("%s diff --metric leaked --by function --width 40 %s %s", hp(), known,
			     cap);
	if (!expect_true(out != NULL, "diff --by function runs"))
		return;
	if (!expect_true(strstr(out, "\n  total 16.6 KiB -> 4.1 KiB (-12.5 KiB)\n") &&
			     strstr(out, "\n      +4.1 KiB  stl_leak\n") && !strstr(out, "0xa57ba"),
		     "the totals and stl_leak's row, without the runtime's pool"))
		printf("%s", out);
	free(out);
}

HP_TEST(ci_gates_exit_status)
{
	const char *cap = capture_of("cxx_stl");
	const char *known = capture_of("known");
	char err[4400];

	if (!expect_true(cap && known, "heapprof run records cxx_stl and known"))
		return;
	snprintf(err, sizeof err, "%s/gate.err", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s report --fail-if-leaked %d %s > /dev/null", hp(),
				 STL_LEAK_SIZE, cap),
		      0, "leaked exactly the limit: exit 0");
	expect_eq_u64(hp_test_sh("%s report --fail-if-leaked %d %s > /dev/null 2> %s", hp(),
				 STL_LEAK_SIZE - 1, cap, err),
		      3, "one byte over: exit 3");
	expect_eq_u64(hp_test_sh("test $(wc -l < %s) = 1 && grep -q 'leaked 4.1 KiB (4,242 bytes), "
				 "over --fail-if-leaked' %s",
				 err, err),
		      0, "with one line saying what failed");
	expect_eq_u64(hp_test_sh("%s report --fail-if-peak 1K %s > /dev/null 2> %s", hp(), cap, err),
		      3, "--fail-if-peak under the peak: exit 3");
	expect_eq_u64(hp_test_sh("grep -q 'over --fail-if-peak 1.0 KiB' %s", err), 0,
		      "saying so");
	expect_eq_u64(hp_test_sh("%s report --fail-if-peak 1G %s > /dev/null", hp(), cap), 0,
		      "over the peak: exit 0");
	expect_eq_u64(hp_test_sh("%s report --fail-if-leaked lots %s 2>/dev/null", hp(), cap), 2,
		      "a limit that is not a size is a usage error");
	expect_eq_u64(hp_test_sh("%s diff --fail-if-grew 0 %s %s > /dev/null", hp(), known, known),
		      0, "diff of a capture with itself grew by nothing: exit 0");
	/* (cxx_stl leaks less than known: 4,242 bytes against 17,008, its
	 * 72,704-byte libstdc++ pool suppressed as report suppresses it) */
	expect_eq_u64(hp_test_sh("%s diff --metric leaked --fail-if-grew 100 %s %s > /dev/null 2> %s",
				 hp(), cap, known, err),
		      3, "cxx_stl -> known grew more than 100 bytes: exit 3");
	expect_eq_u64(hp_test_sh("test $(wc -l < %s) = 1 && grep -q '^heapprof: diff: leaked grew by' "
				 "%s",
				 err, err),
		      0, "with one line saying by how much");
	expect_eq_u64(hp_test_sh("%s diff --fail-if-grew 1 --metric allocations %s %s 2>/dev/null",
				 hp(), known, cap),
		      2, "--fail-if-grew with a count metric is a usage error");
	expect_eq_u64(hp_test_sh("%s report --help | grep -q 'exit 3'", hp()), 0,
		      "--help names the exit status");
}

HP_TEST(run_end_line_says_what_next)
{
	char out[4400];

	snprintf(out, sizeof out, "%s/next.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s run -o %s -- %s/tests/programs/known 2>&1 >/dev/null | "
				 "grep -q '^heapprof: wrote .*; next: heapprof report %s$'",
				 hp(), out, hp_test_build(), out),
		      0, "heapprof run ends with the command to read the capture");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}

/* The other reports fit 80 columns too: report --by X (its "left out"
 * line, a key beside its figures), --map of a capture without blocks, and
 * the heading of a long command line (cut, " ..." after it). */
HP_TEST(report_by_map_and_command_fit_80)
{
	const char *cap = capture_of("cxx_stl");
	static const char *const args[] = {
		"--by type",	    "--by context",	     "--by thread",
		"--by heap",	    "--timeline --by type", "--timeline --by context",
		"--timeline --by thread", "--map",
	};
	char cmd[4400], path[4400];
	char *out;

	if (!expect_true(cap != NULL, "heapprof run records cxx_stl"))
		return;
	expect_eq_u64(hp_test_sh("%s report --by context %s | grep -q 'left out: '", hp(), cap), 0,
		      "cxx_stl's report --by says what it left out");
	for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
		snprintf(cmd, sizeof cmd, "COLUMNS=80 %s report %s", hp(), args[i]);
		if (!expect_eq_u64(long_lines(cmd, cap, 80), 0, "COLUMNS=80: every line fits 80"))
			printf("  report %s\n", args[i]);
	}
	snprintf(path, sizeof path, "%s/longargs.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s run -q -o %s -- %s/tests/programs/known "
				      "first-argument-of-twenty-five second-argument-of-twenty-six "
				      "third > /dev/null",
				      hp(), path, hp_test_build()),
			   0, "heapprof run records known with arguments"))
		return;
	snprintf(cmd, sizeof cmd, "COLUMNS=80 %s report", hp());
	expect_eq_u64(long_lines(cmd, path, 80), 0, "a long command line fits 80 columns");
	out = hp_test_sh_out("COLUMNS=80 %s report %s | head -1", hp(), path);
	expect_true(out && strstr(out, "known first-argument-of-twenty-five ...\n"),
		    "the arguments that fit, then ' ...'");
	free(out);
	out = hp_test_sh_out("COLUMNS=200 %s report %s | head -1", hp(), path);
	expect_true(out && strstr(out, "second-argument-of-twenty-six third\n"),
		    "all of them when they fit");
	free(out);
}
