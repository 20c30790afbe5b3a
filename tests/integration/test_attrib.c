/*
 * test_attrib.c - types, contexts, threads and heaps end to end: the C++
 * program tests/programs/attrib.cpp, built with g++ and with clang++, run
 * under heapprof; `heapprof report --by X --json` must give, per type,
 * context, thread and heap, exactly the objects and bytes it allocated,
 * has in use and had at the peak, and go tool pprof must read the same in
 * the labels of the pprof export. The figures are attrib.cpp's (its
 * comments say each), for libstdc++ on x86-64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

struct fig {
	long alloc_objects, alloc_bytes, inuse_objects, inuse_bytes, peak_objects, peak_bytes;
};

/* The figures of the row of key in a report --by X --json, and its
 * source; 0 when there is no such row. */
static int row(const char *json, const char *key, struct fig *f, char *source, size_t cap)
{
	char want[512];
	const char *p, *v;

	snprintf(want, sizeof want, "{\"key\": \"%s\"", key);
	p = strstr(json, want);
	if (!p)
		return 0;
	if (source) {
		const char *s = strstr(p, "\"source\": \"");
		const char *vals = strstr(p, "\"values\"");
		source[0] = '\0';
		if (s && vals && s < vals)
			sscanf(s, "\"source\": \"%63[^\"]", source);
		(void)cap;
	}
	v = strstr(p, "\"values\": {");
	if (!v)
		return 0;
#define FIELD(name)                                                                          \
	do {                                                                                 \
		const char *q = strstr(v, "\"" #name "\": ");                                \
		f->name = q ? strtol(q + strlen("\"" #name "\": "), NULL, 10) : -1;           \
	} while (0)
	FIELD(alloc_objects);
	FIELD(alloc_bytes);
	FIELD(inuse_objects);
	FIELD(inuse_bytes);
	FIELD(peak_objects);
	FIELD(peak_bytes);
#undef FIELD
	return 1;
}

static void expect_fig(const char *json, const char *dim, const char *key, const char *source,
		       struct fig want)
{
	struct fig got = {0, 0, 0, 0, 0, 0};
	char src[64] = "", why[512];

	snprintf(why, sizeof why, "--by %s has a row %s", dim, key);
	if (!expect_true(row(json, key, &got, src, sizeof src), why))
		return;
#define CHECK(name)                                                                          \
	do {                                                                                 \
		snprintf(why, sizeof why, "--by %s %s: " #name, dim, key);                   \
		expect_eq_u64((uint64_t)got.name, (uint64_t)want.name, why);                 \
	} while (0)
	CHECK(alloc_objects);
	CHECK(alloc_bytes);
	CHECK(inuse_objects);
	CHECK(inuse_bytes);
	CHECK(peak_objects);
	CHECK(peak_bytes);
#undef CHECK
	if (source) {
		snprintf(why, sizeof why, "--by %s %s: its source", dim, key);
		expect_str(src, source, why);
	}
}

/* Records attrib built by compiler into cap (NULL when that fails). */
static int record(const char *compiler, char *cap, size_t len)
{
	char prog[4096];

	snprintf(prog, sizeof prog, "%s/attrib-%s", hp_test_tmp(), compiler);
	snprintf(cap, len, "%s/attrib-%s.hpf", hp_test_tmp(), compiler);
	if (!expect_eq_u64(hp_test_sh("%s -std=c++17 -O1 -g -fno-omit-frame-pointer -pthread -o %s "
				      "tests/programs/attrib.cpp",
				      compiler, prog),
			   0, "attrib.cpp builds"))
		return 0;
	return expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s", hp_test_build(), cap,
					prog),
			     0, "attrib runs under heapprof");
}

static char *report(const char *cap, const char *dim)
{
	return hp_test_sh_out("%s/heapprof report --by %s --json %s", hp_test_build(), dim, cap);
}

static void check(const char *compiler)
{
	char cap[4096];
	char *j;

	if (!hp_test_need(compiler, strcmp(compiler, "g++") == 0 ? "g++" : "clang") ||
	    !record(compiler, cap, sizeof cap))
		return;

	if ((j = report(cap, "type"))) {
		/* By their vtable: Square's 5 lived to the snapshot that read
		 * them, 2 were deleted after it. */
		expect_fig(j, "type", "Circle", "vtable", (struct fig){3, 48, 3, 48, 3, 48});
		expect_fig(j, "type", "Square", "vtable", (struct fig){5, 120, 3, 72, 3, 72});
		expect_fig(j, "type", "Triangle", "vtable", (struct fig){7, 224, 7, 224, 7, 224});
		/* From the allocator's template frames. */
		expect_fig(j, "type", "Point", "template", (struct fig){8, 3060, 1, 1536, 1, 1536});
		expect_fig(j, "type", "std::_Rb_tree_node<std::pair<const int, std::string>>",
			   "template", (struct fig){10, 720, 10, 720, 10, 720});
		expect_fig(j, "type", "std::__detail::_Hash_node<std::pair<const int, int>, false>",
			   "template", (struct fig){10, 160, 10, 160, 10, 160});
		expect_fig(j, "type", "Big", NULL, (struct fig){4, 224, 4, 224, 4, 224});
		expect_fig(j, "type", "Bigger", "template", (struct fig){2, 112, 2, 112, 2, 112});
		/* Named by the program. */
		expect_fig(j, "type", "Widget", "explicit", (struct fig){1, 152, 1, 152, 1, 152});
		expect_fig(j, "type", "Record", "explicit", (struct fig){5, 240, 3, 144, 3, 144});
		free(j);
	}
	if ((j = report(cap, "context"))) {
		expect_fig(j, "context", "request > parse", NULL,
			   (struct fig){7, 2100, 7, 2100, 7, 2100});
		expect_fig(j, "context", "request", NULL, (struct fig){7, 2100, 7, 2100, 7, 2100});
		expect_fig(j, "context", "produce", NULL, (struct fig){20, 2000, 0, 0, 0, 0});
		expect_fig(j, "context", "consume", NULL, (struct fig){30, 6000, 0, 0, 0, 0});
		free(j);
	}
	if ((j = report(cap, "thread"))) {
		/* Each frees the other's blocks: they count for the allocator. */
		expect_fig(j, "thread", "producer", NULL, (struct fig){20, 2000, 0, 0, 0, 0});
		expect_fig(j, "thread", "consumer", NULL, (struct fig){30, 6000, 0, 0, 0, 0});
		free(j);
	}
	if ((j = report(cap, "heap"))) {
		/* The arena: 50 x 48 (its own peak), a reset, 10 x 64 with 2
		 * freed; malloc's totals leave its objects out. */
		expect_fig(j, "heap", "arena", NULL, (struct fig){60, 3040, 8, 512, 50, 2400});
		free(j);
	}
	{
		char pb[4200];
		char *tags;

		if (!hp_test_need_go())
			return;
		snprintf(pb, sizeof pb, "%s.pb.gz", cap);
		if (!expect_eq_u64(hp_test_sh("%s/heapprof export --format pprof -o %s %s",
					      hp_test_build(), pb, cap),
				   0, "pprof export"))
			return;
		tags = hp_test_sh_out("go tool pprof -unit=B -sample_index=alloc_space -tags %s 2>&1",
				      pb);
		if (tags) {
			expect_true(strstr(tags, "224.0B (") && strstr(tags, "): Triangle\n"),
				    "pprof: Triangle's 224 bytes under its type label");
			expect_true(strstr(tags, "2100.0B (") && strstr(tags, "): request > parse\n"),
				    "pprof: the context path");
			expect_true(strstr(tags, "2000.0B (") && strstr(tags, "): producer\n"),
				    "pprof: the thread by its name");
			expect_true(strstr(tags, "3040.0B (") && strstr(tags, "): arena\n"),
				    "pprof: the custom heap");
			free(tags);
		}
	}
}

/* examples/arena.c: 50 requests of n = 200 + 10 r tokens in an arena
 * ("requests", reset after each), 100 x 200 bytes of configuration in
 * another ("config"). Objects are rounded up to 16 bytes. */
HP_TEST(attrib_example_arena)
{
	char prog[4096], cap[4096];
	char *j;

	snprintf(prog, sizeof prog, "%s/arena", hp_test_tmp());
	snprintf(cap, sizeof cap, "%s/arena.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("cc -O2 -g -Wall -Werror -o %s examples/arena.c", prog), 0,
			   "examples/arena.c builds") ||
	    !expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s > /dev/null", hp_test_build(),
				      cap, prog),
			   0, "it runs under heapprof"))
		return;
	if ((j = report(cap, "heap"))) {
		/* 50 + 2 x 22250 objects (a token array, n tokens, n nodes),
		 * 72 bytes per token; the peak is the last request's, n = 690. */
		expect_fig(j, "heap", "requests", NULL,
			   (struct fig){44550, 1602000, 0, 0, 1381, 49680});
		expect_fig(j, "heap", "config", NULL, (struct fig){100, 20800, 100, 20800, 100, 20800});
		free(j);
	}
	if ((j = report(cap, "type --heap requests"))) {
		expect_fig(j, "type", "struct token", "explicit", (struct fig){22250, 712000, 0, 0, 690, 22080});
		expect_fig(j, "type", "struct node", "explicit", (struct fig){22250, 712000, 0, 0, 690, 22080});
		free(j);
	}
	if ((j = report(cap, "context --heap requests"))) {
		expect_fig(j, "context", "tokenize", NULL, (struct fig){22300, 890000, 0, 0, 691, 27600});
		expect_fig(j, "context", "parse", NULL, (struct fig){22250, 712000, 0, 0, 690, 22080});
		free(j);
	}
	expect_eq_u64(hp_test_sh("%s/heapprof report --by type --heap nosuch %s 2>/dev/null",
				 hp_test_build(), cap),
		      1, "--heap of a heap the capture does not have: status 1");
}

/* Issue 23, item 5 (the rest): --heap NAME in the report's sections by
 * site and by stack, in diff and in html: examples/arena.c's "requests"
 * heap peaks at 49,680 bytes in 1,381 blocks (the last request, n = 690:
 * 5,520 + 2 x 22,080, all from arena_alloc) and leaks nothing; "config"
 * leaks 100 x 208 bytes. */
HP_TEST(attrib_arena_heap_in_every_view)
{
	char prog[4096], cap[4096], page[4200];
	const char *b = hp_test_build();
	char *t;

	snprintf(prog, sizeof prog, "%s/arena-views", hp_test_tmp());
	snprintf(cap, sizeof cap, "%s/arena-views.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("cc -O2 -g -Wall -Werror -o %s examples/arena.c", prog), 0,
			   "examples/arena.c builds") ||
	    !expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s > /dev/null", b, cap, prog),
			   0, "it runs under heapprof"))
		return;
	expect_eq_u64(
		hp_test_sh("%s/heapprof report --heap requests --json %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "p=r[\"top_sites\"][\"peak\"]\n"
			   "assert len(p)==1 and p[0][\"site\"][\"function\"]==\"arena_alloc\", p\n"
			   "assert p[0][\"values\"][\"peak_bytes\"]==49680, p[0][\"values\"]\n"
			   "assert p[0][\"values\"][\"peak_objects\"]==1381, p[0][\"values\"]\n"
			   "assert p[0][\"values\"][\"alloc_objects\"]==44550, p[0][\"values\"]\n"
			   "assert r[\"top_sites\"][\"leaked\"]==[], r[\"top_sites\"][\"leaked\"]\n"
			   "s=r[\"top\"][\"peak\"]\n"
			   "assert sum(e[\"values\"][\"peak_bytes\"] for e in s)==49680, s'",
			   b, cap),
		0, "report --heap requests: one site, arena_alloc, the heap's own peak");
	t = hp_test_sh_out("%s/heapprof report --heap config --width 80 %s", b, cap);
	if (expect_true(t != NULL, "report --heap config runs")) {
		if (!expect_true(strstr(t, "\n  heap config alone (--heap)") &&
					 strstr(t, "\nleaks by allocation site (in use at the snapshot)\n"
						   "   1. 20.3 KiB in 100 blocks (100.0% of the bytes "
						   "leaked)\n      arena_alloc  arena.c:"),
				 "config's 100 blocks leaked, its heap named"))
			printf("%s", t);
		free(t);
	}
	t = hp_test_sh_out("%s/heapprof report --by stack --heap config --width 80 %s", b, cap);
	if (expect_true(t != NULL, "report --by stack --heap config runs")) {
		expect_true(strstr(t, "\nleaks (in use at the snapshot)\n   1. 20.3 KiB in 100 blocks "
				      "(100.0% of the bytes leaked)\n      arena_alloc  arena.c:") !=
				    NULL,
			    "--by stack: the same blocks");
		free(t);
	}
	t = hp_test_sh_out("%s/heapprof diff --heap config %s %s", b, cap, cap);
	if (expect_true(t != NULL, "diff --heap config runs")) {
		expect_true(strstr(t, "\n  heap    config alone (--heap)") &&
				    strstr(t, "\n  base    20.3 KiB (20800 bytes, 100 objects)"),
			    "diff --heap config: its 20,800 bytes on both sides");
		free(t);
	}
	/* Every JSON says which heap it shows */
	expect_eq_u64(
		hp_test_sh("%s/heapprof diff --heap config --json %s %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "assert r[\"heap\"]==\"config\", r[\"heap\"]\n"
			   "assert r[\"new_totals\"][\"alloc_bytes\"]==20800, r[\"new_totals\"]' && "
			   "%s/heapprof diff --heap config --by function --json %s %s | python3 -c '"
			   "import json,sys; assert json.load(sys.stdin)[\"heap\"]==\"config\"' && "
			   "%s/heapprof report --heap config --json %s | python3 -c '"
			   "import json,sys; assert json.load(sys.stdin)[\"heap\"]==\"config\"' && "
			   "%s/heapprof report --json %s | python3 -c '"
			   "import json,sys; assert json.load(sys.stdin)[\"heap\"]==\"malloc\"'",
			   b, cap, cap, b, cap, cap, b, cap, b, cap),
		0, "diff --json, diff --by --json and report --json name the heap they show");
	expect_eq_u64(hp_test_sh("%s/heapprof diff --heap nosuch %s %s 2>/dev/null", b, cap, cap),
		      1, "diff --heap of a heap the capture does not have: status 1");
	snprintf(page, sizeof page, "%s/arena-views.html", hp_test_tmp());
	expect_eq_u64(
		hp_test_sh("%s/heapprof html --heap requests %s -o %s && python3 -c '"
			   "import json,re,sys\n"
			   "h=open(sys.argv[1]).read()\n"
			   "d=json.loads(re.search(r\"id=.hp-data.>(.*?)</script>\", h, re.S).group(1))\n"
			   "assert d[\"heap\"]==\"requests\", d[\"heap\"]\n"
			   "s=d[\"snapshots\"][-1]\n"
			   "assert s[\"peak_bytes\"]==49680 and s[\"total\"][3]==49680, s[\"total\"]\n"
			   "assert sum(r[3] for r in s[\"rows\"])==49680, s[\"rows\"]\n"
			   "assert s[\"flame\"][\"v\"][3]==49680, s[\"flame\"][\"v\"]' %s",
			   b, cap, page, page),
		0, "html --heap requests: the page shows the heap's blocks, named");
	expect_eq_u64(hp_test_sh("%s/heapprof html --heap nosuch %s -o %s.x 2>/dev/null; "
				 "test $? = 1 && test ! -e %s.x",
				 b, cap, page, page),
		      0, "html --heap of a heap the capture does not have: status 1, no page");
}

/* tests/programs/threads.c: 8 unnamed threads (each has the process's
 * name, inherited) of 125,000 allocations each: one row each, told apart
 * by tid. */
HP_TEST(attrib_unnamed_threads_apart)
{
	char cap[4096];
	char *j;

	snprintf(cap, sizeof cap, "%s/threads.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/threads",
				      hp_test_build(), cap, hp_test_build()),
			   0, "threads runs"))
		return;
	j = hp_test_sh_out("%s/heapprof report --by thread --json --top 100 %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)[\"rows\"]; "
			   "t=[x for x in r if x[\"key\"].startswith(\"threads (tid \")]; "
			   "print(len(r), len(t), sum(x[\"values\"][\"alloc_objects\"] == 125000 "
			   "for x in t))'",
			   hp_test_build(), cap);
	if (j) {
		expect_str(j, "8 8 8\n",
			   "8 rows 'threads (tid N)', each of 125,000 allocations (the main "
			   "thread's are the runtime's, left out)");
		free(j);
	}
}

HP_TEST(attrib_gxx) { check("g++"); }
HP_TEST(attrib_clangxx) { check("clang++"); }

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
