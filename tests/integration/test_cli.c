/*
 * test_cli.c - heapprof run as a user meets it: exit statuses, wrong
 * options, a program that cannot start, file naming and safety, and an
 * installed copy finding its installed recorder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

/* Runs a command in dir, stderr into dir/err; returns its status and the
 * number of stderr lines in *lines. */
static int in_dir(const char *dir, int *lines, const char *cmd)
{
	int st;
	char path[8192];
	FILE *f;
	int c, n = 0;

	st = hp_test_sh("cd %s && %s 2> err", dir, cmd);
	snprintf(path, sizeof path, "%s/err", dir);
	if ((f = fopen(path, "r"))) {
		while ((c = fgetc(f)) != EOF)
			n += c == '\n';
		fclose(f);
	}
	*lines = n;
	return st;
}

static const char *fresh_dir(const char *name)
{
	static char dir[4400];
	snprintf(dir, sizeof dir, "%s/%s.dir", hp_test_tmp(), name);
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	return dir;
}

HP_TEST(exit_status_is_passed_on)
{
	const char *d = fresh_dir("status");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "%s run -o a.hpf -- sh -c 'exit 7'", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 7, "exit 7 passed on");
	expect_eq_u64(lines, 1, "one summary line on stderr");
	snprintf(cmd, sizeof cmd, "%s run -q -o b.hpf -- sh -c 'kill -KILL $$'", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 128 + 9, "death by SIGKILL is 128 + 9");
}

HP_TEST(wrong_usage_is_one_line)
{
	const char *d = fresh_dir("usage");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "%s run --sample-rate lots -- true", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "a bad number is a usage error");
	expect_eq_u64(lines, 1, "said in one line");
	snprintf(cmd, sizeof cmd, "%s run --unwind magic -- true", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "a bad unwinder is a usage error");
	expect_eq_u64(lines, 1, "said in one line");
	snprintf(cmd, sizeof cmd, "%s run", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "no program is a usage error");
	expect_eq_u64(lines, 1, "said in one line");
	snprintf(cmd, sizeof cmd, "%s frobnicate", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "an unknown command is a usage error");
	snprintf(cmd, sizeof cmd, "%s run -- ./no-such-program", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 127, "a program that cannot start: 127");
	expect_eq_u64(lines, 1, "said in one line");
}

/* Issue 24, item 11: an unknown option is one line that names the command
 * and hints (the nearest option, or --help), not the whole usage; a value
 * missing or an ambiguous abbreviation alike; heapprof help [COMMAND]. */
HP_TEST(unknown_option_is_one_line_with_a_hint)
{
	const char *d = fresh_dir("unknown-option");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "%s export x.hpf --hep arena", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "an unknown option is a usage error");
	expect_eq_u64(lines, 1, "said in one line");
	expect_eq_u64(hp_test_sh("grep -qx \"heapprof: export: unknown option '--hep' (did you mean "
				 "--heap? heapprof export --help lists them)\" %s/err",
				 d),
		      0, "the nearest option as a hint");
	snprintf(cmd, sizeof cmd, "%s report --zzzzzz x.hpf", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "an unknown option is a usage error");
	expect_eq_u64(hp_test_sh("grep -qx \"heapprof: report: unknown option '--zzzzzz' (heapprof "
				 "report --help lists them)\" %s/err",
				 d),
		      0, "else --help as a hint");
	snprintf(cmd, sizeof cmd, "%s flamegraph x.hpf -o", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "a missing value is a usage error");
	expect_eq_u64(hp_test_sh("grep -qx \"heapprof: flamegraph: -o wants a value (heapprof "
				 "flamegraph --help)\" %s/err",
				 d),
		      0, "a missing value, in one line");
	snprintf(cmd, sizeof cmd, "%s report --he x.hpf", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "an ambiguous option is a usage error");
	expect_eq_u64(hp_test_sh("grep -qx \"heapprof: report: option '--he' is ambiguous "
				 "(--heap, --help)\" %s/err",
				 d),
		      0, "an ambiguous abbreviation names the candidates");
	snprintf(cmd, sizeof cmd, "%s run --bogus -- true", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "run: an unknown option is a usage error");
	expect_eq_u64(lines, 1, "run: said in one line");

	expect_eq_u64(hp_test_sh("bash -c 'diff <(%s help) <(%s --help)' >/dev/null", hp(), hp()), 0,
		      "heapprof help is heapprof --help");
	expect_eq_u64(hp_test_sh("bash -c 'diff <(%s help export) <(%s export --help)' >/dev/null",
				 hp(), hp()),
		      0, "heapprof help export is heapprof export --help");
	expect_eq_u64(hp_test_sh("%s help | grep -q '^  help \\[COMMAND\\]  '", hp()), 0,
		      "help is listed");
	snprintf(cmd, sizeof cmd, "%s help frobnicate", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 2, "help of an unknown command is a usage error");
	expect_eq_u64(lines, 1, "said in one line");
	/* The top-level list is aligned: every description starts in one
	 * column (30), on the command's line or on the next. */
	expect_eq_u64(hp_test_sh("%s --help | awk '/^commands:/ {on = 1; next} /^$/ {on = 0} "
				 "on && !/^  [a-z]/ && (match($0, /^ +/) ? RLENGTH : 0) != 30 {bad = 1} "
				 "on && /^  [a-z]/ && index(substr($0, 3), \"  \") && "
				 "(substr($0, 29, 2) != \"  \" || substr($0, 31, 1) == \" \") {bad = 1} "
				 "END {exit bad}'",
				 hp()),
		      0, "heapprof --help: descriptions in one column");
	/* Every command's --help reads in an 80-column terminal. */
	expect_eq_u64(hp_test_sh("for c in '' run attach detach report export flamegraph html "
				 "diff inspect core serve symbolize; do %s $c --help; done | "
				 "awk 'length > 80 {print; bad = 1} END {exit bad}' >&2",
				 hp()),
		      0, "every --help line fits 80 columns");
}

/* report on the capture of a running program with no snapshot yet says
 * how to get one (issue 24, item 11): its dump signal, --interval; on the
 * capture of a program killed before any snapshot, that it ended without. */
HP_TEST(no_snapshot_says_how_to_get_one)
{
	const char *d = fresh_dir("no-snapshot");
	char *out;

	out = hp_test_sh_out("cd %s && { %s run -q -o s.hpf -- sleep 3 & } && "
			     "for i in $(seq 50); do [ -s s.hpf ] && break; sleep 0.1; done; "
			     "sleep 0.3; %s report s.hpf 2>&1; echo \"rc=$?\"; wait",
			     d, hp(), hp());
	expect_true(out && hp_test_sh("printf '%%s' '%s' | grep -qE '^heapprof: s.hpf: holds no "
				      "snapshot yet: sleep \\(pid [0-9]+\\) is running: `kill "
				      "-USR2 [0-9]+` asks it for one \\(heapprof run --interval "
				      "MS writes one every MS\\)$'",
				      out) == 0 &&
			    strstr(out, "\nrc=1\n"),
		    "a running program: kill -USR2 PID, or --interval");
	if (out && getenv("HP_TEST_VERBOSE"))
		printf("%s", out);
	free(out);
	out = hp_test_sh_out("cd %s && %s run -q -o k.hpf -- sh -c 'kill -9 $$' 2>/dev/null; "
			     "%s report k.hpf 2>&1; true",
			     d, hp(), hp());
	expect_true(out && strstr(out, "holds no snapshot: sh (pid ") &&
			    strstr(out, ") ended without writing one"),
		    "a killed program: it ended without one");
	free(out);
}

/* inspect --json (issue 24, item 11): the text's content as one object,
 * valid JSON whose figures are the text's. */
HP_TEST(inspect_json_is_the_text)
{
	static const char py[] =
		"import json,sys\n"
		"d = json.load(open(sys.argv[1]))\n"
		"l = d[\"last\"]\n"
		"print(\"%s %d %d %d %d %s\" % (d[\"images\"][0][\"program\"], l[\"alloc_objects\"],\n"
		"      l[\"alloc_bytes\"], len(d[\"buckets\"]), l[\"buckets\"], d[\"damage\"]))\n";
	const char *d = fresh_dir("inspect-json");
	char *json, *text;

	json = hp_test_sh_out("cd %s && %s run -q -o k.hpf -- %s/tests/programs/known >/dev/null && "
			      "%s inspect --json --stacks k.hpf > k.json && python3 -c '%s' k.json",
			      d, hp(), hp_test_build(), hp(), py);
	text = hp_test_sh_out("cd %s && %s inspect k.hpf | awk '/^  allocated/ {print $2, $4}'; "
			      "%s inspect --stacks k.hpf | grep -c '^  bucket '",
			      d, hp(), hp());
	if (json && text) {
		unsigned long long jo = 0, jb = 0, to = 0, tb = 0, nb = 0, jn = 0, jl = 0;
		char prog[64] = "";
		expect_eq_u64(sscanf(json, "%63s %llu %llu %llu %llu", prog, &jo, &jb, &jn, &jl), 5,
			      "inspect --json parses");
		expect_eq_u64(sscanf(text, "%llu %llu %llu", &to, &tb, &nb), 3, "the text's figures");
		expect_str(prog, "known", "the program");
		expect_eq_u64(jo, to, "allocated objects as the text's");
		expect_eq_u64(jb, tb, "allocated bytes as the text's");
		expect_eq_u64(jn, nb, "--stacks: every bucket");
		expect_eq_u64(jl, nb, "the last snapshot's bucket count");
		expect_true(strstr(json, " []\n") != NULL, "no damage");
	}
	free(json);
	free(text);
}

HP_TEST(default_name_never_replaces_a_file)
{
	const char *d = fresh_dir("naming");
	char cmd[16384];
	int lines;

	/* Plant files at every name the next pids could get, then run: the
	 * capture must go elsewhere and the planted files stay. */
	snprintf(cmd, sizeof cmd,
		 "for i in $(seq 1 400); do echo keep > heapprof.true.$(( $$ + i )).hpf; done; "
		 "%s run -- true; grep -l keep heapprof.true.*.hpf | wc -l > kept; "
		 "ls heapprof.true.*.hpf | wc -l > files",
		 hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "run succeeds");
	expect_eq_u64(hp_test_sh("cd %s && [ $(cat kept) -eq 400 ] && [ $(cat files) -eq 401 ]", d),
		      0, "400 planted files kept, one capture added");
}

HP_TEST(symlink_is_not_followed)
{
	const char *d = fresh_dir("symlink");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "echo secret > target; ln -s target out.hpf; ln -s nowhere dangling.hpf; "
		 "%s run -o out.hpf -- touch ran", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 125, "a capture that cannot be created: 125");
	expect_eq_u64(lines, 1, "said in one line");
	expect_eq_u64(hp_test_sh("cd %s && grep -q 'cannot create the capture .*out.hpf: it is a "
				 "symbolic link' err", d), 0, "which says why");
	expect_eq_u64(hp_test_sh("cd %s && [ \"$(cat target)\" = secret ]", d), 0,
		      "the symlink's target is untouched");
	expect_eq_u64(hp_test_sh("test -e %s/ran", d), 1, "the program did not run");
	snprintf(cmd, sizeof cmd, "%s run -o dangling.hpf -- touch ran", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 125, "a dangling symlink: 125");
	expect_eq_u64(hp_test_sh("test -e %s/nowhere || test -e %s/ran", d, d), 1,
		      "nothing created through it, the program did not run");
}

HP_TEST(unwritable_output_stops_the_run)
{
	const char *d = fresh_dir("unwritable");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "%s run -o /nonexistent/dir/out.hpf -- sh -c 'touch ran; exit 3'",
		 hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 125, "a capture that cannot be created: 125");
	expect_eq_u64(lines, 1, "said in one line");
	expect_eq_u64(hp_test_sh("cd %s && grep -q '^heapprof: run: cannot create the capture "
				 "/nonexistent/dir/out.hpf: No such file or directory$' err", d),
		      0, "which names the file and why");
	expect_eq_u64(hp_test_sh("test -e %s/ran", d), 1, "the program did not run");
	snprintf(cmd, sizeof cmd, "mkdir sub && %s run -o sub -- touch ran", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 125, "a directory as the capture: 125");
	expect_eq_u64(hp_test_sh("test -e %s/ran", d), 1, "the program did not run");
	/* The file is created before the program starts: when the program
	 * cannot start after all, it is not left behind. */
	snprintf(cmd, sizeof cmd, "%s run -o new.hpf -- ./no-such-program", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 127, "a program that cannot start: 127");
	expect_eq_u64(hp_test_sh("test -e %s/new.hpf", d), 1, "and no capture file is left");
	snprintf(cmd, sizeof cmd, "%s run -- ./no-such-program", hp());
	in_dir(d, &lines, cmd);
	expect_eq_u64(hp_test_sh("ls %s/heapprof.* 2>/dev/null", d), 2,
		      "nor one under the default name");
}

HP_TEST(full_disk_leaves_whole_records)
{
	/* A file size limit: the recorder writes no record that would cross
	 * it (with SIGXFSZ at its default action too: test_lifecycle
	 * file_size_limit_raises_no_signal), says so, and the file stays
	 * readable without damage. A record cut short by a full disk is cut
	 * off again: test_rec_writer, a disk that fills at every byte. */
	const char *d = fresh_dir("fulldisk");
	char cmd[16384], path[8192], err[512];
	struct hp_capture cap;
	int lines;

	snprintf(cmd, sizeof cmd,
		 "sh -c \"trap '' XFSZ; ulimit -f 2; %s run --no-symbols -o out.hpf -- "
		 "%s/tests/programs/known\"",
		 hp(), hp_test_build());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "the program runs to its end");
	expect_eq_u64(hp_test_sh("grep -q 'out.hpf reached the file size limit' %s/err", d), 0,
		      "the recorder says why the capture is short");
	snprintf(path, sizeof path, "%s/out.hpf", d);
	if (expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "the capture loads")) {
		expect_eq_u64(cap.ndamage, 0, "no half-written record in it");
		expect_true(cap.has_meta, "its header and META are there");
		hp_capture_free(&cap);
	}
}

HP_TEST(failed_write_keeps_devices)
{
	/* Every command that writes a file removes what it left half-written
	 * when writing fails, but never a device it was pointed at. */
	const char *d = fresh_dir("devfull");
	static const char *const cmds[] = {
		"export out.hpf --format pprof -o /dev/full",
		"export out.hpf --format folded -o /dev/full",
		"flamegraph out.hpf -o /dev/full",
		"diff out.hpf out.hpf -o /dev/full",
	};
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "%s run -q -o out.hpf -- %s/tests/programs/known", hp(),
		 hp_test_build());
	in_dir(d, &lines, cmd);
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		snprintf(cmd, sizeof cmd, "%s %s", hp(), cmds[i]);
		expect_eq_u64(in_dir(d, &lines, cmd), 1, cmds[i]);
		expect_eq_u64(lines, 1, "one line says the write failed");
		expect_eq_u64(hp_test_sh("test -c /dev/full"), 0, "/dev/full is still a device");
	}
}

HP_TEST(capture_mode_is_0600)
{
	const char *d = fresh_dir("mode");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "umask 000; %s run -q -o out.hpf -- true", hp());
	in_dir(d, &lines, cmd);
	expect_eq_u64(hp_test_sh("cd %s && [ \"$(stat -c %%a out.hpf)\" = 600 ]", d), 0,
		      "the capture is readable by its owner only");
}

/* -o onto a file that exists with mode 0644 or 0666: every command's
 * output is 0600 all the same (it names the program's functions, files
 * and arguments); another user's file that cannot be made so is refused,
 * and left as it was. */
HP_TEST(outputs_onto_existing_files_are_0600)
{
	static const char *const cmds[] = {
		"run -q -o F -- true",
		"export out.hpf --format pprof -o F",
		"export out.hpf --format gperftools -o F",
		"export out.hpf --format folded -o F",
		"flamegraph out.hpf -o F",
		"html out.hpf -o F",
		"diff out.hpf out.hpf -o F",
	};
	static const char *const modes[] = {"644", "666"};
	const char *d = fresh_dir("existing");
	char cmd[16384], name[64];
	int lines;

	snprintf(cmd, sizeof cmd, "%s run -q -o out.hpf -- %s/tests/programs/known", hp(),
		 hp_test_build());
	in_dir(d, &lines, cmd);
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
			char why[256];
			const char *f = strchr(cmds[i], 'F');
			snprintf(name, sizeof name, "out%zu-%s", i, modes[m]);
			snprintf(cmd, sizeof cmd, "echo old > %s && chmod %s %s && %s %.*s%s%s",
				 name, modes[m], name, hp(), (int)(f - cmds[i]), cmds[i], name,
				 f + 1);
			snprintf(why, sizeof why, "%s onto a file of mode %s succeeds", cmds[i],
				 modes[m]);
			expect_eq_u64(in_dir(d, &lines, cmd), 0, why);
			snprintf(why, sizeof why, "%s onto a file of mode %s: 0600", cmds[i],
				 modes[m]);
			expect_eq_u64(hp_test_sh("cd %s && [ \"$(stat -c %%a %s)\" = 600 ] && "
						 "! grep -qx old %s",
						 d, name, name),
				      0, why);
		}
	}
	if (!expect_true(getuid() == 0, "run as root: the test needs a second user"))
		return;
	/* Root's file, writable by all: nobody cannot make it private. */
	snprintf(cmd, sizeof cmd,
		 "chmod 755 . && echo old > roots && chmod 666 roots && chmod 644 out.hpf && "
		 "setpriv --reuid=nobody --regid=nogroup --clear-groups %s export out.hpf "
		 "--format folded -o roots",
		 hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 1, "another user's file: refused, status 1");
	expect_eq_u64(lines, 1, "in one line");
	expect_eq_u64(hp_test_sh("cd %s && grep -q 'roots: cannot make it private (mode 0600): "
				 "Operation not permitted' err && grep -qx old roots && "
				 "[ \"$(stat -c %%a roots)\" = 666 ]",
				 d),
		      0, "which says why, and the file is left as it was");
	snprintf(cmd, sizeof cmd,
		 "echo old > rootcap && chmod 666 rootcap && "
		 "setpriv --reuid=nobody --regid=nogroup --clear-groups %s run -o rootcap -- "
		 "touch ran",
		 hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 125, "run onto another user's file: 125");
	expect_eq_u64(
		hp_test_sh("cd %s && grep -q 'cannot make the capture .*rootcap private "
			   "(mode 0600): Operation not permitted' err && grep -qx old rootcap "
			   "&& ! test -e ran",
			   d),
		0, "said, the file left as it was, the program not run");
}

/* A -o path longer than the system takes (4,300 characters): refused in
 * one line with status 125, never a program killed by SIGPIPE (the pipe
 * from the child closed before it wrote its status: 141 in 6 runs of 10),
 * never a file created at the path cut short. */
HP_TEST(long_output_path_is_refused)
{
	const char *d = fresh_dir("longpath");
	char cmd[16384], path[4400];
	size_t n = 0;
	int lines;

	n += (size_t)snprintf(path + n, sizeof path - n, "%s", d);
	while (n < 4300 - 201)
		n += (size_t)
			snprintf(path + n, sizeof path - n, "/%.200s",
				 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
				 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
				 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
				 "dddddddddddddddddddddddddddddddddddddddd");
	while (n < 4300)
		path[n++] = 'x';
	path[n] = '\0';
	for (int i = 0; i < 10; i++) {
		char why[128];
		snprintf(cmd, sizeof cmd, "%s run -o %s -- touch ran", hp(), path);
		snprintf(why, sizeof why, "run %d of 10: 125, not 141 (SIGPIPE)", i + 1);
		expect_eq_u64(in_dir(d, &lines, cmd), 125, why);
		expect_eq_u64(lines, 1, "one line");
	}
	expect_eq_u64(hp_test_sh("cd %s && grep -q 'cannot create the capture .*: its path is "
				 "4300 characters long, more than the system takes (4095)' err",
				 d),
		      0, "which says why");
	expect_eq_u64(hp_test_sh("test -e %s/ran", d), 1, "the program did not run");
	/* The same name, relative, from the directory it is in. */
	snprintf(cmd, sizeof cmd, "%s run -o .%s -- touch ran", hp(), path + strlen(d));
	expect_eq_u64(in_dir(d, &lines, cmd), 125, "a relative path too long with the cwd: 125");
	expect_eq_u64(hp_test_sh("cd %s && ls | grep -qv '^err$'", d), 1,
		      "nothing created (no directory, no file cut short)");
}

/* Every analyzer command's input (a capture, a core, a binary a core names,
 * a suppressions file) is opened only when it is a regular file: a FIFO
 * is refused in one line at once, never waited on (open(2) of a FIFO
 * blocks until a writer comes). Each under timeout 10: 124 is a hang. */
HP_TEST(analyzer_inputs_never_block)
{
	static const struct {
		const char *cmd;
		int status;
	} cmds[] = {
		{"report fifo", 1},
		{"report --json fifo", 1},
		{"export fifo --format pprof -o o1", 1},
		{"export fifo --format gperftools -o o1", 1},
		{"export fifo --format folded -o o1", 1},
		{"flamegraph fifo -o o2", 1},
		{"html fifo -o o3", 1},
		{"diff fifo out.hpf", 1},
		{"diff out.hpf fifo@1", 1},
		{"inspect fifo", 1},
		{"symbolize fifo", 1},
		{"core fifo", 1},
		{"core --json fifo", 1},
		{"report out.hpf --suppressions fifo", 2},
	};
	const char *d = fresh_dir("fifo");
	char cmd[16384];
	int lines;

	snprintf(cmd, sizeof cmd, "%s run -q -o out.hpf -- %s/tests/programs/known && mkfifo fifo",
		 hp(), hp_test_build());
	if (!expect_eq_u64(in_dir(d, &lines, cmd), 0, "a capture and a FIFO"))
		return;
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char why[256];
		snprintf(cmd, sizeof cmd, "timeout 10 %s %s", hp(), cmds[i].cmd);
		snprintf(why, sizeof why, "heapprof %s: refused at once, status %d (124: it hung)",
			 cmds[i].cmd, cmds[i].status);
		expect_eq_u64(in_dir(d, &lines, cmd), cmds[i].status, why);
		expect_eq_u64(lines, 1, "in one line");
		expect_eq_u64(
			hp_test_sh("cd %s && grep -q 'fifo: is a FIFO, not a regular file' err", d),
			0, "which says what it is");
	}
}

HP_TEST(installed_copy_finds_its_recorder)
{
	const char *d = fresh_dir("install");
	char cmd[8192], cwd[1024];
	int lines;
	struct hp_capture *cap;

	if (!getcwd(cwd, sizeof cwd))
		return;
	snprintf(cmd, sizeof cmd,
		 "make -s -C %s install PREFIX=%s/prefix BUILD=%s >/dev/null && "
		 "env -u HEAPPROF_LIB ./prefix/bin/heapprof run -q -o out.hpf -- %s/tests/programs/known",
		 cwd, d, hp_test_build(), hp_test_build());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "make install, then the installed heapprof runs");
	expect_eq_u64(hp_test_sh("cd %s && test -f prefix/include/heapprof.h && "
				 "test -f prefix/lib/heapprof/libheapprof.so",
				 d),
		      0, "header and recorder installed");
	snprintf(cmd, sizeof cmd, "%s/out.hpf", d);
	if ((cap = hpq_load(cmd))) {
		int found = 0;
		for (size_t i = 0; i < cap->nmodules; i++)
			found |= strstr(cap->modules[i].path, "prefix/lib/heapprof/libheapprof.so") != NULL;
		expect_true(found, "the installed recorder was the one preloaded");
		hpq_free(cap);
	}
}

HP_TEST(program_is_named_as_called)
{
	/* Started through a symlink, a program is named after the link (its
	 * argv[0]), as the user knows it; symbols still come from the target. */
	const char *d = fresh_dir("named");
	char cmd[16384];
	int lines;
	char *out;

	snprintf(cmd, sizeof cmd, "ln -s %s/tests/programs/known my-server && "
		 "%s run -o out.hpf -- ./my-server one two", hp_test_build(), hp());
	if (!expect_eq_u64(in_dir(d, &lines, cmd), 0, "known runs through a symlink"))
		return;
	out = hp_test_sh_out("cd %s && %s inspect out.hpf | head -n 3", d, hp());
	expect_true(out && strstr(out, "\nprogram   my-server one two\n"), "inspect: the link's name");
	expect_true(out && strstr(out, "\nexe       /") && strstr(out, "/tests/programs/known\n"),
		    "inspect: and the executable");
	free(out);
	out = hp_test_sh_out("cd %s && %s report --frames 2 out.hpf", d, hp());
	expect_true(out && strncmp(out, "heapprof report: my-server one two\n", 35) == 0,
		    "report header: the link's name");
	expect_true(out && strstr(out, "leak_leaf  known.c:"), "report: symbols from the target");
	free(out);
	if (hp_test_need_go()) {
		out = hp_test_sh_out("cd %s && %s export out.hpf --format pprof -o out.pb.gz && "
				     "go tool pprof -comments out.pb.gz", d, hp());
		expect_true(out && strncmp(out, "heapprof: my-server, pid ", 25) == 0,
			    "pprof comment: the link's name");
		free(out);
	}
	out = hp_test_sh_out("cd %s && %s flamegraph out.hpf -o out.svg && grep -c '>Peak heap: "
			     "my-server<' out.svg", d, hp());
	expect_str(out, "1\n", "flame graph title: the link's name");
	free(out);
}

HP_TEST(run_options_are_checked)
{
	/* Each value the recorder would refuse (and replace by its default)
	 * is a usage error of its option: one line, status 2, nothing run. */
	static const char *const bad[] = {
		"--max-depth 0", "--max-depth 257", "--max-stacks 0", "--max-stacks 2097152",
		"--sample-rate 0", "--sample-rate 1025G",
		"--sample-rate -1", "--dump-signal KILL", "--dump-signal SIGSTOP", "--dump-signal 9",
		"--dump-signal 19", "--dump-signal 65", "--dump-signal TERM",
		"--interval 86400001", "--timeseries 60001", "--seed 18446744073709551616",
		"--dump-every 16777216T", "--dump-high-water 1.5M", "--unwind magic",
	};
	/* The ends of each range: taken by the recorder without a word, so
	 * stderr holds the summary line only. */
	static const char *const good[] = {
		"--max-depth 1", "--max-depth 256", "--max-stacks 1", "--max-stacks 2097151",
		"--sample-rate 1", "--sample-rate 1024G",
		"--dump-signal SIGPROF", "--dump-signal NONE", "--dump-signal 64", "--interval 0",
		"--interval 86400000", "--timeseries 0", "--timeseries 60000", "--seed 0",
		"--seed 18446744073709551609", "--dump-every 16G", "--dump-high-water 1MiB",
	};
	const char *d = fresh_dir("options");
	char cmd[16384], why[256];
	int lines;

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(cmd, sizeof cmd, "%s run %s -o out.hpf -- touch ran", hp(), bad[i]);
		snprintf(why, sizeof why, "%s: a usage error", bad[i]);
		expect_eq_u64(in_dir(d, &lines, cmd), 2, why);
		snprintf(why, sizeof why, "%s: said in one line", bad[i]);
		expect_eq_u64(lines, 1, why);
		snprintf(why, sizeof why, "%s: which names the option", bad[i]);
		expect_eq_u64(hp_test_sh("grep -q -- '^heapprof: run: %.*s wants' %s/err",
					 (int)strcspn(bad[i], " "), bad[i], d), 0, why);
		snprintf(why, sizeof why, "%s: nothing ran", bad[i]);
		expect_eq_u64(hp_test_sh("test -e %s/ran || test -e %s/out.hpf", d, d), 1, why);
	}
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		snprintf(cmd, sizeof cmd, "%s run %s -o out.hpf -- true", hp(), good[i]);
		snprintf(why, sizeof why, "%s: runs", good[i]);
		expect_eq_u64(in_dir(d, &lines, cmd), 0, why);
		snprintf(why, sizeof why, "%s: the recorder takes it without a word", good[i]);
		if (!expect_eq_u64(lines, 1, why))
			hp_test_sh("cat %s/err", d);
	}
	/* The largest seed is accepted; the recorder of this tree still
	 * refuses it (src/recorder/config.c's own parser, to be replaced by
	 * src/common/options.h's), so only heapprof run's answer is checked. */
	snprintf(cmd, sizeof cmd, "%s run -q --seed 18446744073709551615 -o out.hpf -- true", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "--seed 18446744073709551615 runs");
	expect_eq_u64(hp_test_sh("grep -q 'run: --seed' %s/err", d), 1, "heapprof run takes it");
}

HP_TEST(analyzer_options_are_checked_alike)
{
	/* One options table and one number parser (src/cli/options.c): a wrong
	 * count is the same usage error, in the same one line, in every
	 * command, before any capture is read (none exists here), digits only
	 * (export once took "+1", " 1" and an overflow through its own
	 * strtol, and the others a sign or a space). */
	static const struct {
		const char *cmd, *args, *option;
	} uses[] = {
		{"report", "x.hpf", "--snapshot"},
		{"report", "x.hpf", "--top"},
		{"export", "--format folded -o - x.hpf", "--snapshot"},
		{"flamegraph", "-o - x.hpf", "--snapshot"},
		{"diff", "x.hpf y.hpf", "--snapshot"},
		{"diff", "x.hpf y.hpf", "--frames"},
	};
	static const char *const bad[] = {"0x1", "+1", "' 1'", "1x", "''", "-1",
					  "99999999999999999999"};
	const char *d = fresh_dir("analyzer-options");
	char cmd[16384], why[512];
	int lines;

	for (size_t i = 0; i < sizeof uses / sizeof *uses; i++) {
		for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
			snprintf(cmd, sizeof cmd, "%s %s %s %s %s", hp(), uses[i].cmd, uses[i].option,
				 bad[k], uses[i].args);
			snprintf(why, sizeof why, "%s %s %s: a usage error in one line", uses[i].cmd,
				 uses[i].option, bad[k]);
			expect_eq_u64(in_dir(d, &lines, cmd), 2, why);
			expect_eq_u64(lines, 1, why);
			snprintf(why, sizeof why, "%s %s %s: names the command and the option",
				 uses[i].cmd, uses[i].option, bad[k]);
			expect_eq_u64(hp_test_sh("grep -q -- '^heapprof: %s: %s wants a number' %s/err",
						 uses[i].cmd, uses[i].option, d),
				      0, why);
		}
	}
	for (size_t i = 2; i < sizeof uses / sizeof *uses; i++) {
		snprintf(cmd, sizeof cmd, "%s %s --metric most %s", hp(), uses[i].cmd, uses[i].args);
		snprintf(why, sizeof why, "%s --metric most: the same usage error", uses[i].cmd);
		expect_eq_u64(in_dir(d, &lines, cmd), 2, why);
		expect_eq_u64(hp_test_sh("grep -qx \"heapprof: %s: unknown metric 'most' (peak, "
					 "leaked, allocated, allocations, temporary)\" %s/err",
					 uses[i].cmd, d),
			      0, why);
	}
}

HP_TEST(unrecordable_program_is_refused)
{
	/* A set-user-ID program owned by someone else: the loader ignores
	 * LD_PRELOAD for it. As root, a copy of known given to nobody; as
	 * anyone else, a set-user-ID program of the system. */
	const char *d = fresh_dir("setuid");
	char cmd[16384], prog[4200];
	int lines;

	if (getuid() == 0) {
		expect_eq_u64(hp_test_sh("cd %s && cp %s/tests/programs/known suid && chown 65534 suid && "
					 "chmod u+s suid && cp %s/tests/programs/known sgid && "
					 "chgrp 65534 sgid && chmod g+s sgid", d, hp_test_build(), hp_test_build()), 0, "set-ID copies made");
		snprintf(prog, sizeof prog, "./suid");
	} else {
		FILE *f = popen("find /usr/bin /bin -maxdepth 1 -user root -perm -4000 -type f "
				"2>/dev/null | head -n 1", "r");
		if (!f || !fgets(prog, sizeof prog, f))
			prog[0] = '\0';
		if (f)
			pclose(f);
		prog[strcspn(prog, "\n")] = '\0';
		if (!expect_true(prog[0], "a set-user-ID program to try (passwd, su, mount)"))
			return;
	}
	snprintf(cmd, sizeof cmd, "%s run -o out.hpf -- %s --help", hp(), prog);
	expect_eq_u64(in_dir(d, &lines, cmd), 126, "a set-user-ID program is refused: 126");
	expect_eq_u64(lines, 1, "said in one line");
	expect_eq_u64(hp_test_sh("grep -q 'cannot record .*: it is set-user-ID, and the loader "
				 "ignores LD_PRELOAD' %s/err", d), 0, "which says why");
	expect_eq_u64(hp_test_sh("test -e %s/out.hpf", d), 1, "no capture file is made");
	if (getuid() == 0) {
		snprintf(cmd, sizeof cmd, "%s run -o out.hpf -- ./sgid", hp());
		expect_eq_u64(in_dir(d, &lines, cmd), 126, "a set-group-ID program is refused: 126");
		expect_eq_u64(hp_test_sh("grep -q 'it is set-group-ID' %s/err", d), 0, "which says so");
		/* Its owner may record it: the loader then preloads as usual. */
		snprintf(cmd, sizeof cmd, "cp %s/tests/programs/known own && chmod u+s own && "
			 "%s run -q -o own.hpf -- ./own", hp_test_build(), hp());
		expect_eq_u64(in_dir(d, &lines, cmd), 0, "a set-user-ID program of our own runs");
		expect_eq_u64(hp_test_sh("test -s %s/own.hpf", d), 0, "and is recorded");
	}
	snprintf(cmd, sizeof cmd, "mkdir -p adir && %s run -o out.hpf -- ./adir", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 126, "a directory: 126");
	expect_eq_u64(lines, 1, "said in one line");
	expect_eq_u64(hp_test_sh("grep -q 'cannot run ./adir: it is a directory$' %s/err", d), 0,
		      "which says it is a directory");
	snprintf(cmd, sizeof cmd, "echo 'exit 0' > plain && chmod 644 plain && "
		 "%s run -o out.hpf -- ./plain", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 126, "not executable: 126");
	expect_eq_u64(hp_test_sh("grep -q 'cannot run ./plain: it is not an executable file$' "
				 "%s/err", d), 0, "which says it is not executable");
	snprintf(cmd, sizeof cmd, "PATH=$PWD:$PATH %s run -o out.hpf -- plain", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 126, "not executable, found along PATH: 126");
	expect_eq_u64(hp_test_sh("test -e %s/out.hpf", d), 1, "no capture file is made");
}

HP_TEST(end_line_says_how_the_program_ended)
{
	const char *d = fresh_dir("endline");
	char cmd[16384], want[256];
	int lines;
	struct hp_capture *cap;

	/* A file size limit (SIGXFSZ ignored) stands in for a full disk: known
	 * exits normally, but its capture holds only what fit before the
	 * limit: its header and META, or (a snapshot at every allocation) a
	 * few snapshots, never the exit's. */
	snprintf(cmd, sizeof cmd,
		 "sh -c \"trap '' XFSZ; ulimit -f 1; %s run --no-symbols -o a.hpf -- "
		 "%s/tests/programs/known\"", hp(), hp_test_build());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "known's status passed on");
	expect_eq_u64(hp_test_sh("grep -q '^heapprof: wrote .*a.hpf, but it holds no snapshot: "
				 "known exited with status 0 without one' %s/err", d), 0,
		      "no snapshot: the end line says the program exited with status 0");
	expect_eq_u64(hp_test_sh("grep -q killed %s/err", d), 1, "not that it was killed");
	snprintf(cmd, sizeof cmd,
		 "sh -c \"trap '' XFSZ; ulimit -f 16; %s run --no-symbols --dump-every 1 -o b.hpf "
		 "-- %s/tests/programs/known\"", hp(), hp_test_build());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "known's status passed on");
	expect_eq_u64(hp_test_sh("grep -q '^heapprof: wrote .*b.hpf: .*; known exited with status 0 "
				 "without a final snapshot: figures as of snapshot [0-9]* (bytes "
				 "allocated) at ' %s/err", d), 0,
		      "snapshots but not the exit's: the end line says so, and which snapshot "
		      "the figures are from");
	snprintf(cmd, sizeof cmd, "%s run -o c.hpf -- sh -c 'kill -KILL $$'", hp());
	expect_eq_u64(in_dir(d, &lines, cmd), 128 + 9, "SIGKILL: 128 + 9");
	expect_eq_u64(lines, 1, "one line");
	expect_eq_u64(hp_test_sh("grep -q ': sh was killed by signal 9 (SIGKILL) ' %s/err", d), 0,
		      "the end line says it was killed by signal 9");
	/* Counts grouped by thousands: known makes thousands of allocations. */
	snprintf(cmd, sizeof cmd, "%s run -o k.hpf -- %s/tests/programs/known", hp(),
		 hp_test_build());
	expect_eq_u64(in_dir(d, &lines, cmd), 0, "known runs");
	snprintf(cmd, sizeof cmd, "%s/k.hpf", d);
	if ((cap = hpq_load(cmd))) {
		uint64_t n = hp_capture_last(cap) ? hp_capture_last(cap)->alloc_count : 0;
		expect_true(n >= 1000 && n < 1000000, "known makes thousands of allocations");
		snprintf(want, sizeof want, "k.hpf: %llu,%03llu allocations, peak heap ",
			 (unsigned long long)n / 1000, (unsigned long long)n % 1000);
		expect_eq_u64(hp_test_sh("grep -qF '%s' %s/err", want, d), 0, want);
		hpq_free(cap);
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
