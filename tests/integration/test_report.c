/*
 * test_report.c - heapprof report on programs with known allocations:
 * function names, file:line, exact figures, JSON, demangled C++ and inlined
 * frames, symbols embedded in the capture, a binary that changed, and
 * sampled estimates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/records.h"
#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"
#include "../programs/known.h"
#include "../programs/rtree.h"
#include "../programs/sampling.h"

/* The line of the first occurrence of text in a source file. */
static unsigned line_of(const char *file, const char *text)
{
	char buf[512];
	unsigned n = 0;
	FILE *f = fopen(file, "r");

	while (f && fgets(buf, sizeof buf, f)) {
		n++;
		if (strstr(buf, text)) {
			fclose(f);
			return n;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

/* Runs cmd and checks that its stdout contains every string (NULL-ended). */
static void expect_output(const char *what, const char *cmd, const char *const *want)
{
	char out[8192];
	snprintf(out, sizeof out, "%s/out.txt", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s > %s", cmd, out), 0, what);
	for (int i = 0; want[i]; i++) {
		char why[600];
		snprintf(why, sizeof why, "%s: shows \"%s\"", what, want[i]);
		if (!expect_eq_u64(hp_test_sh("grep -qF -- '%s' %s", want[i], out), 0, why))
			hp_test_sh("head -60 %s", out);
	}
}

HP_TEST(report_names_lines_and_figures)
{
	char capture[4096], cmd[8192], leak[64], peak[64], churn[64];
	const char *b = hp_test_build();

	snprintf(leak, sizeof leak, "leak_leaf  known.c:%u",
		 line_of("tests/programs/known.c", "leaks[i] = malloc(LEAK_SIZE);"));
	snprintf(peak, sizeof peak, "peak_leaf  known.c:%u",
		 line_of("tests/programs/known.c", "peak[i] = malloc(PEAK_SIZE);"));
	snprintf(churn, sizeof churn, "churn_leaf  known.c:%u",
		 line_of("tests/programs/known.c", "void *p = malloc(CHURN_SIZE);"));
	snprintf(capture, sizeof capture, "%s/known.hpf", hp_test_tmp());
	hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/known", b, capture, b);
	snprintf(cmd, sizeof cmd, "%s/heapprof report --frames 3 %s", b, capture);
	expect_output("report", cmd,
		      (const char *const[]){leak, peak, churn, "leak_path  known.c:",
					    "48.8 KiB in 50 blocks", "1000 B in 10 blocks",
					    "1,000 temporary (",
					    "; 100% of this site",
					    "peak heap       49.8 KiB in 60 blocks", NULL});
	/* The JSON, checked by a JSON parser. */
	expect_eq_u64(
		hp_test_sh("%s/heapprof report --json %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "t=r[\"top\"][\"leaked\"]\n"
			   "e=[x for x in t if x[\"stack\"][0][\"function\"]==\"leak_leaf\"][0]\n"
			   "assert e[\"values\"][\"inuse_bytes\"]==%d, e\n"
			   "assert e[\"values\"][\"inuse_objects\"]==%d, e\n"
			   "assert e[\"stack\"][1][\"function\"]==\"leak_path\"\n"
			   "assert e[\"stack\"][0][\"file\"].endswith(\"known.c\")\n"
			   "assert r[\"totals\"][\"peak_bytes\"]==%d\n"
			   "assert not r[\"sampled\"]'",
			   b, capture, LEAK_N * LEAK_SIZE, LEAK_N, KNOWN_PEAK_BYTES),
		0, "JSON report: leak_leaf's figures and frames, the peak");
}

/* Whether lines (NULL-ended) follow one another in file, in order. */
static int consecutive(const char *file, const char *const *lines)
{
	char buf[1024];
	size_t k = 0;
	FILE *f = fopen(file, "r");

	while (f && lines[k] && fgets(buf, sizeof buf, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, lines[k]) == 0)
			k++;
		else
			k = strcmp(buf, lines[0]) == 0 ? 1 : 0;
	}
	if (f)
		fclose(f);
	return !lines[k];
}

/* Issue 24, item 1: a tree built by recursion is one stack per depth
 * (4 nodes each, 4% of the peak); grouped by allocation site, the first
 * entry of the peak holds the whole tree, with main as its one call path,
 * and the index's three allocations a node (map node, key, value, under
 * std::map's frames) are one site at their line. */
/* Issue 24: frames of a stripped library (libstripped.so, .dynsym
 * only) are grouped by their module and the nearest exported function on
 * the stack, not one site per address: stripped_work's three static
 * callees and its own loop (4 sites of 400, 400, 400 and 200 bytes) are
 * one site of 1.4 KiB in 16 blocks; the static function called through a
 * pointer (two lines: two sites of 210 bytes) is the module's site. */
HP_TEST(report_stripped_library_sites)
{
	char capture[4096], out[4096];
	const char *b = hp_test_build(), *t = hp_test_tmp();

	snprintf(capture, sizeof capture, "%s/stripuser.hpf", t);
	snprintf(out, sizeof out, "%s/stripuser.txt", t);
	expect_eq_u64(hp_test_sh("readelf -S %s/tests/programs/libstripped.so | grep -q symtab", b),
		      1, "libstripped.so has no .symtab");
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/stripuser", b,
				 capture, b),
		      0, "stripuser runs");
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 80 %s > %s", b, capture, out), 0,
		      "report");
	if (!expect_eq_u64(
		    hp_test_sh("sed -n '/^leaks by allocation site/,/^$/p' %s > %s.leaks && "
			       "grep -qxF '   1. 1.4 KiB in 16 blocks (76.9%% of the bytes leaked)' "
			       "%s.leaks && "
			       "grep -qE '^      stripped_work  libstripped.so\\+0x[0-9a-f]+  "
			       "\\[no symbols below it: grouped\\]$' %s.leaks && "
			       "grep -qxF '   2. 420 B in 6 blocks (23.1%% of the bytes leaked)' "
			       "%s.leaks && "
			       "grep -qxF '      [libstripped.so: no symbols, its frames grouped]' "
			       "%s.leaks && "
			       "test $(grep -c '^   [0-9]\\.' %s.leaks) = 2",
			       out, out, out, out, out, out, out),
		    0, "two sites: stripped_work's, and the library's own"))
		hp_test_sh("sed -n '/^leaks by/,/^most/p' %s", out);
	/* The page groups them too: its frames without a symbol are named by
	 * their library, one row of the function table (3 x 400 + 2 x 210 B
	 * flat), not five. */
	expect_eq_u64(
		hp_test_sh("%s/heapprof html %s -o %s.html && python3 -c '"
			   "import json,re,sys\n"
			   "h=open(sys.argv[1]).read()\n"
			   "d=json.loads(re.search(r\"id=.hp-data.>(.*?)</script>\", h, re.S).group(1))\n"
			   "name=lambda f: d[\"strings\"][d[\"frames\"][f][0]]\n"
			   "rows=d[\"snapshots\"][-1][\"tables\"][\"function\"][\"rows\"]\n"
			   "lib=[r for r in rows if name(r[0])==\"[libstripped.so]\"]\n"
			   "assert len(lib)==1 and lib[0][1]==1620, rows\n"
			   "assert not [r for r in rows if name(r[0]).startswith(\"0x\")], rows' %s.html",
			   b, capture, out, out),
		0, "html: the library's frames one function, [libstripped.so], 1,620 bytes flat");
}

HP_TEST(report_sites_hold_the_peak)
{
	char capture[4096], out[4096], l_build[96], l_main[96], l_index[96], l_walk[96],
		l_main2[96];
	const char *b = hp_test_build(), *t = hp_test_tmp(), *src = "tests/programs/rtree.cpp";

	snprintf(capture, sizeof capture, "%s/rtree.hpf", t);
	snprintf(out, sizeof out, "%s/rtree.txt", t);
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/rtree", b, capture, b),
		      0, "rtree runs");
	snprintf(l_build, sizeof l_build, "      build  rtree.cpp:%u  [recursive]",
		 line_of(src, "Node *n = new Node();"));
	snprintf(l_main, sizeof l_main, "      main  rtree.cpp:%u",
		 line_of(src, "Node *root = build(0, RTREE_FANOUT);"));
	snprintf(l_index, sizeof l_index, "      store::index_value  rtree.cpp:%u",
		 line_of(src, "index[key] = v->text;"));
	snprintf(l_walk, sizeof l_walk, "      index_tree  rtree.cpp:%u  [recursive]",
		 line_of(src, "store::index_value(index, v, (*id)++);"));
	snprintf(l_main2, sizeof l_main2, "      main  rtree.cpp:%u",
		 line_of(src, "index_tree(index, root, &v, &id);"));
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 80 %s > %s", b, capture, out), 0,
		      "report");
	if (!expect_true(consecutive(out, (const char *const[]){l_build, l_main, NULL}),
			 "the tree's site, then main: one call path, recursion merged") ||
	    !expect_true(consecutive(out, (const char *const[]){l_index, l_walk, l_main2, NULL}),
			 "the index's site, its walk merged") ||
	    !expect_eq_u64(hp_test_sh("sed -n '/^peak heap consumers/{n;p;q}' %s | "
				      "grep -qF '   1. 776.0 KiB in 97 blocks ('",
				      out),
			   0, "the first entry: the tree, 776.0 KiB in 97 blocks"))
		hp_test_sh("sed -n '/^peak heap/,/^leaks/p' %s", out);
	/* The exact figures, and the share, from the JSON. */
	expect_eq_u64(
		hp_test_sh("%s/heapprof report --json %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "s=r[\"top_sites\"][\"peak\"]\n"
			   "assert s[0][\"site\"][\"function\"]==\"build\", s[0][\"site\"]\n"
			   "assert s[0][\"values\"][\"peak_bytes\"]==%d, s[0][\"values\"]\n"
			   "assert s[0][\"values\"][\"peak_objects\"]==%d\n"
			   "assert len(s[0][\"paths\"])==1\n"
			   "assert s[0][\"values\"][\"peak_bytes\"] >= 0.5*r[\"totals\"][\"peak_bytes\"]\n"
			   "i=[x for x in s if x[\"site\"] and x[\"site\"][\"function\"].startswith(\"store::index_value\")][0]\n"
			   "assert i[\"values\"][\"peak_bytes\"]==%d, i[\"values\"]\n"
			   "assert i[\"values\"][\"peak_objects\"]==%d\n"
			   "o=r[\"top\"][\"peak\"]\n"
			   "assert o[0][\"values\"][\"peak_bytes\"] < 0.5*r[\"totals\"][\"peak_bytes\"]'",
			   b, capture, RTREE_NODES * RTREE_NODE_SIZE, RTREE_NODES, RTREE_INDEX_BYTES,
			   RTREE_INDEX_BLOCKS),
		0, "JSON: the tree's site holds its 97 nodes, over half the peak; a stack does not");
	/* --by stack: the sections by whole call stack, as before. */
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 80 --by stack %s | "
				 "grep -qxF 'peak heap consumers (in use at the peak)'",
				 b, capture),
		      0, "--by stack keeps the sections by call stack");
}

/* Issue 24, items 3 and 4: at a width too narrow for a frame's line, the
 * name gives way, never the file:line or the "[+N library frames]" marker
 * (they once read "stl_vect... frames]"); names have no parameter lists
 * unless --full-names. */
HP_TEST(report_width_cuts_names_only)
{
	char capture[4096], out[4096], site[96], full[96];
	const char *b = hp_test_build(), *t = hp_test_tmp();

	snprintf(capture, sizeof capture, "%s/cxx_stl.hpf", t);
	snprintf(out, sizeof out, "%s/cxx_stl.txt", t);
	hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/cxx_stl > /dev/null", b, capture, b);
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 60 --top 3 --by stack %s > %s", b,
				 capture, out),
		      0, "report --by stack");
	if (!expect_eq_u64(hp_test_sh("grep -qxE '      \\(inline\\) std::vector<\\.\\.\\.>::resize  "
				      "stl_vector\\.h:[0-9]+  \\[\\+2 library frames\\]' %s",
				      out),
			   0, "the vector's line: its name, file:line and marker whole") ||
	    !expect_eq_u64(hp_test_sh("grep -qxE '      \\(inline\\) std::map<\\.\\.\\.>::operator\\[\\]  "
				      "stl_map\\.h:[0-9]+  \\[\\+4 library frames\\]' %s",
				      out),
			   0, "the map's line: its name, file:line and marker whole") ||
	    !expect_eq_u64(hp_test_sh("grep 'library frame' %s | grep -vqE "
				      "'[A-Za-z0-9_.]+:[0-9]+  \\[\\+[0-9]+ library frames?\\]$|"
				      "[A-Za-z0-9_.+-]+\\+0x[0-9a-f]+  \\[\\+[0-9]+ library frames?\\]$'",
				      out),
			   1, "every folded run's line ends with a whole file:line and marker"))
		hp_test_sh("cat %s", out);
	snprintf(site, sizeof site, "      stl_map_of_vectors  cxx_stl.cpp:%u",
		 line_of("tests/programs/cxx_stl.cpp", "m[i].resize(10 + i);"));
	snprintf(full, sizeof full, "      stl_map_of_vectors()  cxx_stl.cpp:%u",
		 line_of("tests/programs/cxx_stl.cpp", "m[i].resize(10 + i);"));
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 60 %s | grep -qxF '%s'", b, capture, site),
		      0, "the site's name without its parameter list");
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 60 --full-names %s | grep -qxF '%s'", b,
				 capture, full),
		      0, "--full-names keeps it");
}

HP_TEST(report_demangles_and_shows_inlines)
{
	char capture[4096], cmd[8192], call[96];
	const char *b = hp_test_build();

	snprintf(call, sizeof call, "(inline) shapes::make  cxx_inline.cpp:%u",
		 line_of("tests/programs/cxx_inline.cpp", "return new int[n];"));
	snprintf(capture, sizeof capture, "%s/cxx_inline.hpf", hp_test_tmp());
	hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/cxx_inline", b, capture, b);
	snprintf(cmd, sizeof cmd, "%s/heapprof report --full-names %s", b, capture);
	expect_output("C++ report", cmd,
		      (const char *const[]){call, "shapes::Factory<int>::build(unsigned long)",
					    "192 B in 3 blocks", NULL});
}

HP_TEST(embedded_symbols_survive_the_binary)
{
	char capture[4096], cmd[8192];
	const char *b = hp_test_build(), *t = hp_test_tmp();

	snprintf(capture, sizeof capture, "%s/moved.hpf", t);
	hp_test_sh("cp %s/tests/programs/known %s/known-moved", b, t);
	hp_test_sh("%s/heapprof run -q -o %s -- %s/known-moved && rm %s/known-moved", b, capture,
		   t, t);
	snprintf(cmd, sizeof cmd, "%s/heapprof report --frames 2 %s", b, capture);
	expect_output("report without the binary", cmd,
		      (const char *const[]){"leak_leaf  known.c:", "1000 B in 10 blocks", NULL});
}

HP_TEST(symbolize_after_plain_preload)
{
	char capture[4096], cmd[8192];
	const char *b = hp_test_build(), *t = hp_test_tmp();

	snprintf(capture, sizeof capture, "%s/preload.hpf", t);
	hp_test_sh("cp %s/tests/programs/known %s/known-pre", b, t);
	hp_test_sh("HEAPPROF_OUTPUT=%s LD_PRELOAD=%s/libheapprof.so %s/known-pre", capture, b, t);
	expect_eq_u64(hp_test_sh("%s/heapprof symbolize %s 2>/dev/null && rm %s/known-pre", b,
				 capture, t),
		      0, "heapprof symbolize");
	snprintf(cmd, sizeof cmd, "%s/heapprof report --frames 2 %s", b, capture);
	expect_output("report of a capture symbolized later", cmd,
		      (const char *const[]){"leak_leaf  known.c:", NULL});
}

HP_TEST(changed_binary_is_refused)
{
	char capture[4096], cmd[8192];
	const char *b = hp_test_build(), *t = hp_test_tmp();

	snprintf(capture, sizeof capture, "%s/changed.hpf", t);
	hp_test_sh("cp %s/tests/programs/known %s/known-changed", b, t);
	hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/known-changed", b, capture, t);
	/* Another program at the same path: a different build-id. */
	hp_test_sh("cp %s/tests/programs/threads %s/known-changed", b, t);
	snprintf(cmd, sizeof cmd, "%s/heapprof report --frames 2 %s 2> %s/changed.err", b, capture,
		 t);
	expect_output("report with a changed binary", cmd,
		      (const char *const[]){"known-changed+0x", "1000 B in 10 blocks", NULL});
	expect_eq_u64(hp_test_sh("grep -q 'has changed since the run' %s/changed.err", t), 0,
		      "says the binary changed");
	expect_eq_u64(hp_test_sh("grep -q leak_leaf %s/out.txt", t), 1,
		      "no name from the wrong binary");
}

HP_TEST(sampled_report_is_unbiased)
{
	static const struct sampling_class classes[] = SAMPLING_CLASSES;
	char capture[4096];
	const char *b = hp_test_build();
	double truth = 0;

	for (unsigned c = 0; c < sizeof classes / sizeof *classes; c++)
		truth += (double)classes[c].count * classes[c].size;
	snprintf(capture, sizeof capture, "%s/sampled.hpf", hp_test_tmp());
	hp_test_sh("%s/heapprof run -q --sample-rate 65536 --seed 1 -o %s -- %s/tests/programs/sampling",
		   b, capture, b);
	expect_eq_u64(hp_test_sh("%s/heapprof report --json %s | python3 -c '"
				 "import json,sys; r=json.load(sys.stdin)\n"
				 "assert r[\"sampled\"]\n"
				 "got=r[\"totals\"][\"alloc_bytes\"]\n"
				 "assert abs(got-%.0f)/%.0f < 0.03, got'",
				 b, capture, truth, truth),
		      0, "estimated bytes within 3%% of the truth");
	expect_eq_u64(hp_test_sh("%s/heapprof report %s | grep -q 'figures are estimates'", b,
				 capture),
		      0, "the report says its figures are estimates");
}

HP_TEST(report_survives_lost_stacks)
{
	/* A capture whose first STACKS record was lost: ids 1 and 2 are empty
	 * stacks (found by the fuzzer: the model read a frame they lack). */
	expect_eq_u64(hp_test_sh("%s/heapprof report tests/fuzz/seeds/gap-first-stacks.hpf "
				 "> /dev/null",
				 hp_test_build()),
		      0, "report of a capture with a gap in its stack ids");
}

/* A capture built by hand: META, one stack, a snapshot at 1 s and another
 * at 3 s, and RSS samples with a known peak before each (20 MiB by 1 s,
 * 90 MiB by 3 s). Returns its path, or NULL. */
static const char *phased_capture(void)
{
	static char path[4200];
	struct hp_buf file = {.grow = hp_buf_grow_heap}, p = {.grow = hp_buf_grow_heap};
	static const uint64_t ts[][2] = {
		{500000000, 10}, {900000000, 20}, {1000000000, 15}, /* MiB */
		{2000000000, 90}, {2900000000, 40}, {3000000000, 30},
	};
	int ret;

	hp_format_put_file_header(&file);
	hp_rec_meta_put(&p, &(struct hp_rec_meta){
		.pid = 100, .ppid = 99, .start_realtime_ns = 1700000000000000000ull,
		.start_monotonic_ns = 5000, .page_size = 4096,
		.program = hp_rec_str_of("/bin/phased")});
	hp_rec_count_put(&p, 1);           /* argv */
	hp_rec_str_put(&p, hp_rec_str_of("phased"));
	hp_rec_meta_options_put(&p, &(struct hp_rec_meta_options){
		.recorder_version = hp_rec_str_of("0.1.0"), .sample_rate_bytes = 1,
		.max_depth = 64});
	hp_format_put_record(&file, HP_REC_META, p.data, p.len, NULL);
	p.len = 0;
	hp_rec_stacks_put(&p, &(struct hp_rec_stacks){.first_id = 1, .count = 1});
	hp_rec_stack_put(&p, (uint64_t[]){0x401000}, 1);
	hp_format_put_record(&file, HP_REC_STACKS, p.data, p.len, NULL);
	for (int snap = 0; snap < 2; snap++) {
		uint64_t prev = 0;
		p.len = 0;
		hp_rec_count_put(&p, 3);
		for (int i = 3 * snap; i < 3 * snap + 3; i++)
			hp_rec_sample_put(&p, &(struct hp_rec_sample){ts[i][0], 1000, ts[i][1] << 20},
					  &prev);
		hp_format_put_record(&file, HP_REC_TIMESERIES, p.data, p.len, NULL);
		p.len = 0;
		hp_rec_snapshot_put(&p, &(struct hp_rec_snapshot){
			.seq = (uint64_t)snap + 1, .time_ns = ts[3 * snap + 2][0],
			.reason = snap ? HP_SNAP_EXIT : HP_SNAP_SIGNAL,
			.alloc_count = 1, .alloc_bytes = 1000, .peak_bytes = 1000, .peak_count = 1,
			.peak_time_ns = 100, .stack_count = 2});
		hp_rec_count_put(&p, 0);           /* lost kinds */
		hp_rec_count_put(&p, 1);           /* one bucket, of stack 1: 1 x 1000 bytes */
		hp_rec_bucket_put(&p, &(struct hp_rec_bucket){.stack_id = 1, .alloc_count = 1,
							      .alloc_bytes = 1000, .peak_count = 1,
							      .peak_bytes = 1000});
		hp_format_put_record(&file, HP_REC_SNAPSHOT, p.data, p.len, NULL);
	}
	snprintf(path, sizeof path, "%s/phased.hpf", hp_test_tmp());
	ret = file.err ? file.err : hp_test_write_file(path, file.data, file.len);
	free(file.data);
	free(p.data);
	return expect_eq_u64((uint64_t)-ret, 0, "the crafted capture is written") ? path : NULL;
}

HP_TEST(report_peak_rss_up_to_the_snapshot)
{
	const char *cap = phased_capture();
	char cmd[8192];

	if (!cap)
		return;
	snprintf(cmd, sizeof cmd, "%s/heapprof report --snapshot 1 %s", hp_test_build(), cap);
	expect_output("report of the first snapshot", cmd,
		      (const char *const[]){"snapshot 1 of 2", "peak RSS        20.0 MiB", NULL});
	snprintf(cmd, sizeof cmd, "%s/heapprof report %s", hp_test_build(), cap);
	expect_output("report of the last snapshot", cmd,
		      (const char *const[]){"snapshot 2 of 2", "peak RSS        90.0 MiB", NULL});
	expect_eq_u64(hp_test_sh("%s/heapprof report --json --snapshot 1 %s | python3 -c '"
				 "import json,sys; r=json.load(sys.stdin)\n"
				 "assert r[\"peak_rss_bytes\"]==20*1024*1024, r[\"peak_rss_bytes\"]'",
				 hp_test_build(), cap),
		      0, "JSON: peak_rss_bytes of the first snapshot is 20 MiB");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
