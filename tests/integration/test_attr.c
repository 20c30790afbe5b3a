/*
 * test_attr.c - attribution read back from a crafted capture (issue 9):
 * TAGS entries of every kind (an explicit type, a vtable type in a real
 * shared library built here, a vtable address in no vtable, contexts
 * nested two deep, a named and an unnamed thread, a custom heap, origins
 * over them) and buckets over them, whose figures by type, context,
 * thread, heap and function `heapprof report --by X --json` must give
 * exactly; and the same labels on every sample of the pprof export, read
 * by `go tool pprof -tags` and filtered with -tagfocus.
 *
 * The buckets (objects / bytes): allocated, freed, at the peak; origin.
 *   b1 handle_request  conn (explicit)   10/640  4/256  8/512  main, server > request
 *   b2 handle_request  Circle (vtable)    5/160  0/0    5/160  tid 101, server > db
 *   b3 allocate<node>  (template)         3/120  1/40   3/120  tid 101, server
 *   b4 handle_request  (not a vtable)     2/96   2/96   1/48   main, server > request
 *   b5 arena_alloc     (none)           100/6400 100/6400 50/3200  main, heap "arena"
 *   b6 handle_request  conn (explicit)    1/64   0/0    1/64   no origin
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/craft.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

#define BIAS 0x7f0000000000ull
#define CODE 0x400000ull

static char capture[512];

/* The address nm gives a symbol of lib, or 0. */
static uint64_t symbol_address(const char *lib, const char *sym)
{
	char *out = hp_test_sh_out("nm %s | awk '$3 == \"%s\" {print $1}'", lib, sym);
	uint64_t a = out ? strtoull(out, NULL, 16) : 0;

	free(out);
	return a;
}

/* Builds the shared library and the capture once. */
static int make_capture(void)
{
	static int made;
	char lib[512], src[600];
	uint64_t vt, data;

	if (made)
		return made > 0;
	made = -1;
	snprintf(lib, sizeof lib, "%s/libshapes.so", hp_test_tmp());
	snprintf(src, sizeof src, "%s/shapes.cpp", hp_test_tmp());
	static const char code[] = "struct Shape { virtual ~Shape(); };\n"
				   "struct Circle : Shape { ~Circle() override; double r; };\n"
				   "Shape::~Shape() {}\nCircle::~Circle() {}\n"
				   "Shape *make_circle() { return new Circle; }\n"
				   "int not_a_vtable[64];\n";
	if (!expect_eq_u64(hp_test_write_file(src, code, sizeof code - 1), 0, "source written") ||
	    !expect_eq_u64(hp_test_sh("g++ -shared -fPIC -o %s %s", lib, src), 0, "library built"))
		return 0;
	vt = symbol_address(lib, "_ZTV6Circle");
	data = symbol_address(lib, "not_a_vtable");
	if (!expect_true(vt && data, "nm finds the vtable and the array"))
		return 0;

	struct hp_craft c;
	const uint64_t frames[] = {CODE + 0x100, CODE + 0x200, CODE + 0x300};
	const char *const names[] = {
		"std::__new_allocator<std::_Rb_tree_node<std::pair<int const, int> > >::allocate("
		"unsigned long, void const*)",
		"handle_request", "arena_alloc"};
	const struct hp_craft_tag tags[] = {
		{HP_TAG_TYPE, 1, HP_TYPE_EXPLICIT, 0, 0,
		 "const char* heapprof::type_name() [with T = conn]"},
		{HP_TAG_TYPE, 2, HP_TYPE_VTABLE, BIAS + vt + 16, 0, NULL},
		{HP_TAG_TYPE, 3, HP_TYPE_VTABLE, BIAS + data + 8, 0, NULL},
		{HP_TAG_CONTEXT, 1, 0, 0, 0, "server"},
		{HP_TAG_CONTEXT, 2, 1, 0, 0, "request"},
		{HP_TAG_CONTEXT, 3, 1, 0, 0, "db"},
		{HP_TAG_THREAD, 1, 100, 0, 0, "main"},
		{HP_TAG_THREAD, 2, 101, 0, 0, NULL},
		{HP_TAG_HEAP, 1, 0, 0, 0, "arena"},
		{HP_TAG_ORIGIN, 1, 2, 1, 0, NULL},
		{HP_TAG_ORIGIN, 2, 3, 2, 0, NULL},
		{HP_TAG_ORIGIN, 3, 0, 1, 1, NULL},
		{HP_TAG_ORIGIN, 4, 1, 2, 0, NULL},
	};
	/* stack, type, origin, size, alloc, free, peak, temp */
	const struct hp_rec_bucket b[] = {
		{2, 1, 1, 0, 10, 640, 4, 256, 8, 512, 0, 0},
		{2, 2, 2, 0, 5, 160, 0, 0, 5, 160, 0, 0},
		{1, 0, 4, 0, 3, 120, 1, 40, 3, 120, 0, 0},
		{2, 3, 1, 0, 2, 96, 2, 96, 1, 48, 0, 0},
		{3, 0, 3, 0, 100, 6400, 100, 6400, 50, 3200, 0, 0},
		{2, 1, 0, 0, 1, 64, 0, 0, 1, 64, 0, 0},
	};
	const struct hp_rec_heap_peak heaps[] = {{1, 3200, 50, 300, 2}};

	hp_craft_begin(&c);
	c.heap_origin = 3;
	hp_craft_meta(&c, 100, "/bin/prog", 0);
	hp_craft_module(&c, 0, lib, BIAS, 0, 0x100000);
	hp_craft_stacks(&c, 1, frames, 3);
	hp_craft_tags(&c, tags, sizeof tags / sizeof *tags);
	hp_craft_snapshot_heaps(&c, 1, b, sizeof b / sizeof *b, heaps, 1);
	hp_craft_symbols(&c, frames, names, 3, 0);
	snprintf(capture, sizeof capture, "%s/attr.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_craft_write(&c, capture), 0, "capture written"))
		return 0;
	made = 1;
	return 1;
}

static char *report_by(const char *dim)
{
	if (!make_capture())
		return NULL;
	return hp_test_sh_out("%s/heapprof report --by %s --json %s", hp_test_build(), dim,
			      capture);
}

/* Expects the row of key (and source, NULL: none) with these figures:
 * objects and bytes allocated, in use, at the peak. */
static void expect_row(const char *json, const char *key, const char *source, int ao, int ab,
		       int io, int ib, int po, int pb)
{
	char want[1024], src[128] = "", why[1200];

	if (source)
		snprintf(src, sizeof src, ", \"source\": \"%s\"", source);
	snprintf(want, sizeof want,
		 "{\"key\": \"%s\"%s, \"values\": {\"alloc_objects\": %d, \"alloc_bytes\": %d, "
		 "\"free_objects\": %d, \"free_bytes\": %d, \"inuse_objects\": %d, \"inuse_bytes\": "
		 "%d, \"peak_objects\": %d, \"peak_bytes\": %d,",
		 key, src, ao, ab, ao - io, ab - ib, io, ib, po, pb);
	snprintf(why, sizeof why, "row %s", want);
	expect_true(strstr(json, want) != NULL, why);
}

static size_t rows(const char *json)
{
	size_t n = 0;
	for (const char *p = json; (p = strstr(p, "{\"key\": ")) != NULL; p++)
		n++;
	return n;
}

HP_TEST(attr_report_by_type)
{
	char *j = report_by("type");

	if (!j)
		return;
	expect_row(j, "conn", "explicit", 11, 704, 7, 448, 9, 576);
	expect_row(j, "Circle", "vtable", 5, 160, 5, 160, 5, 160);
	expect_row(j, "std::_Rb_tree_node<std::pair<const int, int>>", "template", 3, 120, 2, 80, 3,
		   120);
	expect_row(j, "unknown (avg 48 B)", "unknown", 2, 96, 0, 0, 1, 48);
	expect_eq_u64(rows(j), 4, "four types; the arena's blocks are not malloc's");
	expect_true(strstr(j, "\"known_type\": {\"inuse_bytes\": 688, \"peak_bytes\": 856}") != NULL,
		    "the heap of known type: in use, at the peak");
	expect_true(strstr(j, "\"alloc_objects\": 21, \"alloc_bytes\": 1080,") != NULL,
		    "malloc's totals leave the custom heap out");
	free(j);
}

HP_TEST(attr_report_by_context)
{
	char *j = report_by("context");

	if (!j)
		return;
	expect_row(j, "server", NULL, 20, 1016, 13, 624, 17, 840);
	expect_row(j, "server > request", NULL, 12, 736, 6, 384, 9, 560);
	expect_row(j, "server > db", NULL, 5, 160, 5, 160, 5, 160);
	expect_row(j, "(no context)", NULL, 1, 64, 1, 64, 1, 64);
	expect_eq_u64(rows(j), 4, "three contexts and none");
	expect_true(strstr(j, "\"self\": {\"alloc_objects\": 3, \"alloc_bytes\": 120,") != NULL,
		    "server's own buckets: the node");
	free(j);
}

HP_TEST(attr_report_by_thread)
{
	char *j = report_by("thread");

	if (!j)
		return;
	expect_row(j, "main", NULL, 12, 736, 6, 384, 9, 560);
	expect_row(j, "tid 101", NULL, 8, 280, 7, 240, 8, 280);
	expect_row(j, "(no thread)", NULL, 1, 64, 1, 64, 1, 64);
	expect_eq_u64(rows(j), 3, "two threads and none");
	free(j);
}

HP_TEST(attr_report_by_heap)
{
	char *j = report_by("heap");

	if (!j)
		return;
	expect_row(j, "malloc", NULL, 21, 1080, 14, 688, 18, 904);
	expect_row(j, "arena", NULL, 100, 6400, 0, 0, 50, 3200);
	expect_true(strstr(j, "\"heap_peak\": {\"bytes\": 3200, \"objects\": 50, \"time_ns\": 300, "
			      "\"resets\": 2}") != NULL,
		    "the arena's own peak");
	expect_eq_u64(rows(j), 2, "malloc's and the arena");
	free(j);
}

/* A filter keeps a custom heap's stacks as it keeps malloc's (issue 23,
 * item 4): one that matches nothing (--hide zzzz) leaves both heaps'
 * figures whole; --focus arena_alloc keeps the arena's stack alone,
 * --ignore arena_alloc every stack but it. Before, the filter kept only
 * stacks with a malloc bucket, and the arena read 0 B under any of them. */
HP_TEST(attr_filters_keep_custom_heaps)
{
	char *j;

	if (!make_capture())
		return;
	j = hp_test_sh_out("%s/heapprof report --by heap --json --hide zzzz %s", hp_test_build(),
			   capture);
	if (j) {
		expect_row(j, "malloc", NULL, 21, 1080, 14, 688, 18, 904);
		expect_row(j, "arena", NULL, 100, 6400, 0, 0, 50, 3200);
	}
	free(j);
	j = hp_test_sh_out("%s/heapprof report --by heap --json --focus arena_alloc %s",
			   hp_test_build(), capture);
	if (j)
		expect_row(j, "arena", NULL, 100, 6400, 0, 0, 50, 3200);
	free(j);
	j = hp_test_sh_out("%s/heapprof report --by function --heap arena --json --ignore "
			   "handle_request %s",
			   hp_test_build(), capture);
	if (j)
		expect_row(j, "arena_alloc", NULL, 100, 6400, 0, 0, 50, 3200);
	free(j);
	j = hp_test_sh_out("%s/heapprof report --by heap --json --ignore arena_alloc %s",
			   hp_test_build(), capture);
	if (j) {
		expect_row(j, "malloc", NULL, 21, 1080, 14, 688, 18, 904);
		expect_true(strstr(j, "{\"key\": \"arena\", \"values\": {\"alloc_objects\": 100") ==
				    NULL,
			    "--ignore arena_alloc drops the arena's blocks");
	}
	free(j);
}

HP_TEST(attr_report_by_function)
{
	char *j = report_by("function");

	if (!j)
		return;
	expect_row(j, "handle_request", NULL, 18, 960, 12, 608, 15, 784);
	expect_eq_u64(rows(j), 2, "handle_request and the node's caller");
	free(j);
}

/* Contexts nest as frames (issue 26, item 5), as Chromium's pseudo-stacks:
 * `server` holds `server > db` and `server > request`, in the flame graph
 * (SVG) and the page's "flame_context". */
HP_TEST(attr_flame_nests_contexts)
{
	static const char py[] =
		"import json,re,sys\n"
		"t = open(sys.argv[1]).read()\n"
		"d = json.loads(re.search(r\"id=.hp-data.>(.*?)</script>\", t, re.S).group(1))\n"
		"s = d[\"snapshots\"][-1]; fl = s[\"flame_context\"]; out = []\n"
		"def name(n): return d[\"strings\"][d[\"frames\"][n[1]][0]]\n"
		"for n in fl[\"n\"]:\n"
		"  if d[\"strings\"][d[\"frames\"][n[1]][1]] != \"(context)\": continue\n"
		"  p = fl[\"n\"][n[0]] if n[0] >= 0 else None\n"
		"  out.append(\"%s<%s %d\" % (name(n), name(p) if p else \"\", n[5]))\n"
		"print(\";\".join(sorted(out)))\n";
	char svg[600], page[600], script[600];
	char *t;

	if (!make_capture())
		return;
	snprintf(svg, sizeof svg, "%s/attr-ctx.svg", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof flamegraph --by context --heap malloc --metric "
				 "allocated -o %s %s",
				 hp_test_build(), svg, capture),
		      0, "flamegraph --by context");
	/* Under malloc's heap frame (depth 1, the first in document order). */
	expect_eq_u64(hp_test_sh("grep -q 'data-n=\"server\" data-d=\"2\" data-p=\"1\" "
				 "data-x=\"[0-9]*\" data-v=\"1016\"' %s && "
				 "grep -q 'data-n=\"server &gt; db\" data-d=\"3\" "
				 "data-p=\"2\" data-x=\"[0-9]*\" data-v=\"160\"' %s && "
				 "! grep -q 'data-n=\"server &gt; db\" data-d=\"2\"' %s",
				 svg, svg, svg),
		      0, "server (120 + 160 + 736 bytes) holds server > db (160) one level down");
	snprintf(page, sizeof page, "%s/attr-ctx.html", hp_test_tmp());
	snprintf(script, sizeof script, "%s/attr-ctx.py", hp_test_tmp());
	if (!expect_eq_u64(hp_test_write_file(script, py, sizeof py - 1), 0, "script written"))
		return;
	t = hp_test_sh_out("%s/heapprof html -o %s %s >/dev/null && python3 %s %s", hp_test_build(),
			   page, capture, script, page);
	if (t) {
		/* malloc's blocks, as the page's flame graph (the arena's are
		 * its own heap's). */
		expect_str(t,
			   "(no context)< 64;server > db<server 160;"
			   "server > request<server 736;server< 1016\n",
			   "the page: contexts nested as frames, allocated bytes each");
		free(t);
	}
}

HP_TEST(attr_report_by_text)
{
	char *t;

	if (!make_capture())
		return;
	t = hp_test_sh_out("%s/heapprof report --by type %s", hp_test_build(), capture);
	if (!t)
		return;
	expect_true(strstr(t, "Circle [vtable]") != NULL, "a type says its source");
	expect_true(strstr(t, "known type: 100.0% of the heap in use") != NULL,
		    "the summary says how much has a known type");
	free(t);
	expect_eq_u64(hp_test_sh("%s/heapprof report --by colour %s 2>/dev/null", hp_test_build(),
				 capture),
		      2, "an unknown dimension is a usage error");
}

HP_TEST(attr_folded_and_flamegraph_by)
{
	char svg[600];
	char *t;

	if (!make_capture())
		return;
	t = hp_test_sh_out("%s/heapprof export --format folded --by type --metric allocated -o - %s",
			   hp_test_build(), capture);
	if (t) {
		/* Every heap (issue 23, item 5): each under its heap's frame. */
		expect_str(t,
			   "[heap arena];unknown (avg 64 B);0x4002f0;arena_alloc 6400\n"
			   "[heap malloc];Circle;0x4001f0;handle_request 160\n"
			   "[heap malloc];conn;0x4001f0;handle_request 704\n"
			   "[heap malloc];std::_Rb_tree_node<std::pair<const int, int>>;0x4000f0 120\n"
			   "[heap malloc];unknown (avg 48 B);0x4001f0;handle_request 96\n",
			   "folded --by type: the type is the root frame below the heap's");
		free(t);
	}
	t = hp_test_sh_out("%s/heapprof export --format folded --by context --metric allocated -o - "
			   "%s",
			   hp_test_build(), capture);
	if (t) {
		expect_str(t,
			   "[heap arena];(no context);0x4002f0;arena_alloc 6400\n"
			   "[heap malloc];(no context);0x4001f0;handle_request 64\n"
			   "[heap malloc];server;0x4000f0 120\n"
			   "[heap malloc];server;server > db;0x4001f0;handle_request 160\n"
			   "[heap malloc];server;server > request;0x4001f0;handle_request 736\n",
			   "folded --by context: the contexts nest as frames below the heap's, each "
			   "its path, the outermost first");
		free(t);
	}
	snprintf(svg, sizeof svg, "%s/attr.svg", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof flamegraph --by type --metric allocated -o %s %s",
				 hp_test_build(), svg, capture),
		      0, "flamegraph --by type");
	/* A frame of 160 bytes on malloc's heap frame (depth 1, index 5 in
	 * document order, after the arena's four). */
	expect_eq_u64(hp_test_sh("grep -q 'data-n=\"\\[heap malloc\\]\" data-d=\"1\" data-p=\"0\" "
				 "data-x=\"6400\" data-v=\"1080\"' %s && "
				 "grep -q 'data-n=\"Circle\" data-d=\"2\" data-p=\"5\" "
				 "data-x=\"[0-9]*\" data-v=\"160\"' %s",
				 svg, svg),
		      0,
		      "the flame graph's frames above the heap's are the types");
	expect_eq_u64(hp_test_sh("%s/heapprof export --format folded --by thread -o - %s "
				 "2>/dev/null",
				 hp_test_build(), capture),
		      2, "folded --by takes type or context only");
}

/* Every export and the flame graph show custom heaps (issue 23, item 5):
 * by default every heap, each named (a root frame "[heap arena]" in folded
 * stacks and the flame graph, a "# heap: arena" line before its lines in
 * gperftools' text, a "heap" label and the comment in pprof); --heap NAME
 * shows one. The arena's 100 blocks, 6,400 bytes allocated, were in the
 * pprof export alone. */
HP_TEST(attr_every_export_shows_custom_heaps)
{
	char svg[600], pb[600];
	char *t;

	if (!make_capture())
		return;
	t = hp_test_sh_out("%s/heapprof export --format folded --metric allocated -o - %s",
			   hp_test_build(), capture);
	expect_str(t,
		   "[heap arena];0x4002f0;arena_alloc 6400\n"
		   "[heap malloc];0x4000f0 120\n"
		   "[heap malloc];0x4001f0;handle_request 960\n",
		   "folded: every heap, each under its root frame");
	free(t);
	t = hp_test_sh_out("%s/heapprof export --format folded --metric allocated --heap arena -o - "
			   "%s",
			   hp_test_build(), capture);
	expect_str(t, "[heap arena];0x4002f0;arena_alloc 6400\n", "folded --heap arena");
	free(t);
	t = hp_test_sh_out("%s/heapprof export --format gperftools -o - %s | sed '/^$/,$d'",
			   hp_test_build(), capture);
	expect_str(t,
		   "heap profile:     14:      688 [   121:     7480] @ heapprofile\n"
		   "# heap: malloc\n"
		   "     2:       80 [     3:      120] @ 0x4000f0\n"
		   "    12:      608 [    18:      960] @ 0x400200 0x4001f0\n"
		   "# heap: arena\n"
		   "     0:        0 [   100:     6400] @ 0x400300 0x4002f0\n",
		   "gperftools: every heap, each after its comment line");
	free(t);
	t = hp_test_sh_out("%s/heapprof export --format gperftools --heap arena -o - %s | "
			   "sed '/^$/,$d'",
			   hp_test_build(), capture);
	expect_str(t,
		   "heap profile:      0:        0 [   100:     6400] @ heapprofile\n"
		   "# heap: arena\n"
		   "     0:        0 [   100:     6400] @ 0x400300 0x4002f0\n",
		   "gperftools --heap arena");
	free(t);
	snprintf(svg, sizeof svg, "%s/heaps.svg", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof flamegraph --metric allocated -o %s %s",
				 hp_test_build(), svg, capture),
		      0, "flamegraph");
	expect_eq_u64(hp_test_sh("grep -q 'data-n=\"all\" data-d=\"0\" data-x=\"0\" "
				 "data-v=\"7480\"' %s && "
				 "grep -q 'data-n=\"\\[heap arena\\]\" data-d=\"1\" data-p=\"0\" "
				 "data-x=\"0\" data-v=\"6400\"' %s && "
				 "grep -q 'data-n=\"arena_alloc\" data-d=\"3\" data-p=\"2\" "
				 "data-x=\"0\" data-v=\"6400\"' %s",
				 svg, svg, svg),
		      0, "the flame graph: the arena's 6,400 bytes on its heap's root frame");
	expect_eq_u64(hp_test_sh("%s/heapprof flamegraph --metric allocated --heap malloc -o %s %s "
				 "&& grep -q 'data-n=\"all\" data-d=\"0\" data-x=\"0\" "
				 "data-v=\"1080\"' %s && ! grep -q arena_alloc %s",
				 hp_test_build(), svg, capture, svg, svg),
		      0, "flamegraph --heap malloc: malloc's 1,080 bytes alone");
	expect_eq_u64(hp_test_sh("%s/heapprof export --format folded --heap nope -o - %s "
				 "2>&1 | grep -q \"no heap named 'nope' (its heaps: all, malloc, "
				 "arena)\"",
				 hp_test_build(), capture),
		      0, "an unknown heap is named with the heaps there are");
	if (!hp_test_need_go())
		return;
	snprintf(pb, sizeof pb, "%s/heaps.pb.gz", hp_test_tmp());
	t = hp_test_sh_out("%s/heapprof export --format pprof --heap arena -o %s %s && "
			   "go tool pprof -raw %s 2>&1 | grep -cE '^ *100 +6400 +0 +0 +50 +3200: '; "
			   "go tool pprof -raw %s 2>&1 | grep -cE '^ *-?[0-9]+( +-?[0-9]+){5}: '; "
			   "go tool pprof -comments %s 2>&1",
			   hp_test_build(), pb, capture, pb, pb, pb);
	expect_true(t && strncmp(t, "1\n1\n", 4) == 0 && strstr(t, ", heap arena\n"),
		    "pprof --heap arena: the arena's one sample, and the comment says so");
	if (t && getenv("HP_TEST_VERBOSE"))
		printf("%s", t);
	free(t);
}

/* --top 0 means all (issue 24, item 11): report's sections list both of
 * malloc's stacks (--top 1: one), html and core take it too (core's
 * capture is missing here: exit 1, not a usage error). */
HP_TEST(top_0_is_all)
{
	static const char count_py[] = "import json,sys\n"
				       "d = json.load(sys.stdin)\n"
				       "print(len(d[\"top\"][\"allocated\"]))\n";
	char *t;

	if (!make_capture())
		return;
	t = hp_test_sh_out("%s/heapprof report --json --top 0 %s | python3 -c '%s'",
			   hp_test_build(), capture, count_py);
	expect_str(t, "2\n", "report --top 0: every stack");
	free(t);
	t = hp_test_sh_out("%s/heapprof report --json --top 1 %s | python3 -c '%s'",
			   hp_test_build(), capture, count_py);
	expect_str(t, "1\n", "report --top 1: one");
	free(t);
	expect_eq_u64(hp_test_sh("%s/heapprof html --top 0 -o %s/top0.html %s", hp_test_build(),
				 hp_test_tmp(), capture),
		      0, "html --top 0");
	expect_eq_u64(hp_test_sh("%s/heapprof core --top 0 %s/no-such-core 2>/dev/null",
				 hp_test_build(), hp_test_tmp()),
		      1, "core --top 0 is no usage error");
}

/* export and flamegraph without -o (issue 24, item 11): the capture's
 * name with the format's extension, here, said on stderr; never over a
 * file that exists. */
HP_TEST(default_output_names)
{
	char *t;

	if (!make_capture())
		return;
	t = hp_test_sh_out("d=%s/names && rm -rf $d && mkdir $d && cd $d && cp %s run.hpf && "
			   "%s/heapprof export run.hpf --format folded 2>&1 && "
			   "%s/heapprof export run.hpf --format pprof 2>&1 && "
			   "%s/heapprof export run.hpf --format gperftools 2>&1 && "
			   "%s/heapprof flamegraph run.hpf 2>&1 && ls && "
			   "head -c 13 run.folded && echo && "
			   "{ %s/heapprof flamegraph run.hpf 2>&1; echo \"rc=$?\"; }",
			   hp_test_tmp(), capture, hp_test_build(), hp_test_build(), hp_test_build(),
			   hp_test_build(), hp_test_build());
	expect_str(t,
		   "heapprof: wrote run.folded\n"
		   "heapprof: wrote run.pb.gz\n"
		   "heapprof: wrote run.heap\n"
		   "heapprof: wrote run.svg\n"
		   "run.folded\nrun.heap\nrun.hpf\nrun.pb.gz\nrun.svg\n"
		   "[heap malloc]\n"
		   "heapprof: flamegraph: run.svg exists: not replacing it (name the output with "
		   "-o)\nrc=1\n",
		   "default names, said, and never over a file");
	free(t);
}

/* diff --by type: BASE has 3 conn in use (192 bytes) and nothing else. */
HP_TEST(attr_diff_by_type)
{
	struct hp_craft c;
	const uint64_t frames[] = {CODE + 0x200};
	const char *const names[] = {"handle_request"};
	const struct hp_craft_tag tags[] = {
		{HP_TAG_TYPE, 1, HP_TYPE_EXPLICIT, 0, 0, "conn"},
	};
	const struct hp_rec_bucket b[] = {{1, 1, 0, 0, 3, 192, 0, 0, 3, 192, 0, 0}};
	char base[600];
	char *t;

	if (!make_capture())
		return;
	snprintf(base, sizeof base, "%s/attr-base.hpf", hp_test_tmp());
	hp_craft_begin(&c);
	hp_craft_meta(&c, 99, "/bin/prog", 0);
	hp_craft_stacks(&c, 1, frames, 1);
	hp_craft_tags(&c, tags, 1);
	hp_craft_snapshot_heaps(&c, 1, b, 1, NULL, 0);
	hp_craft_symbols(&c, frames, names, 1, 0);
	if (!expect_eq_u64(hp_craft_write(&c, base), 0, "base written"))
		return;
	t = hp_test_sh_out("%s/heapprof diff --metric leaked --by type %s %s", hp_test_build(),
			   base, capture);
	if (t) {
		expect_true(strstr(t, "\n        +256 B  conn [explicit]\n"
				      "        +160 B  Circle [vtable]\n"
				      "         +80 B  std::_Rb_tree_node<std::pair<const int, int>> "
				      "[template]\n") != NULL,
			    "what grew in use, by type, most first; unchanged types left out");
		expect_true(strstr(t, "unknown") == NULL, "the unknown type's 0 bytes in use: no change");
		free(t);
	}
	t = hp_test_sh_out("%s/heapprof diff --metric leaked --by type --json %s %s",
			   hp_test_build(), base, capture);
	if (t) {
		expect_true(strstr(t, "{\"key\": \"conn\", \"source\": \"explicit\", \"change\": "
				      "256, \"base\": {\"alloc_objects\": 3, \"alloc_bytes\": 192,") !=
				    NULL,
			    "JSON: conn's change and both sides");
		free(t);
	}
	expect_eq_u64(hp_test_sh("%s/heapprof diff --json %s %s | python3 -c 'import json,sys; "
				 "assert json.load(sys.stdin)[\"by\"]==\"stack\"'",
				 hp_test_build(), base, capture),
		      0, "--json without --by: by stack (issue 24, item 10)");
}

/* pprof's labels, as go tool pprof reads them. */
HP_TEST(attr_pprof_labels)
{
	char pb[600];
	char *tags, *top;

	if (!make_capture() || !hp_test_need_go())
		return;
	snprintf(pb, sizeof pb, "%s/attr.pb.gz", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof export --format pprof -o %s %s", hp_test_build(),
				      pb, capture),
			   0, "exported"))
		return;
	tags = hp_test_sh_out("go tool pprof -unit=B -sample_index=alloc_space -tags %s 2>&1", pb);
	if (tags) {
		if (getenv("HP_TEST_VERBOSE"))
			printf("%s\n", tags);
		expect_true(strstr(tags, "704.0B (") && strstr(tags, "): conn\n"), "type conn");
		expect_true(strstr(tags, "): Circle\n") != NULL, "type Circle (vtable)");
		expect_true(strstr(tags, "): std::_Rb_tree_node<std::pair<const int, int>>\n") != NULL,
			    "the inferred node type");
		expect_true(strstr(tags, "736.0B (") && strstr(tags, "): server > request\n"),
			    "context as a path");
		expect_true(strstr(tags, "): tid 101\n") != NULL, "an unnamed thread by its id");
		expect_true(strstr(tags, "6400.0B (") && strstr(tags, "): arena\n"),
			    "the custom heap apart");
		free(tags);
	}
	top = hp_test_sh_out("go tool pprof -sample_index=alloc_space -tagfocus=type=Circle -top %s "
			     "2>&1",
			     pb);
	if (top) {
		expect_true(strstr(top, "Showing nodes accounting for 160B") != NULL,
			    "-tagfocus=type=Circle keeps Circle's 160 bytes");
		free(top);
	}
	top = hp_test_sh_out("go tool pprof -unit=B -sample_index=alloc_space -tagfocus=heap=arena -top %s "
			     "2>&1",
			     pb);
	if (top) {
		expect_true(strstr(top, "Showing nodes accounting for 6400B") != NULL,
			    "-tagfocus=heap=arena keeps the arena's 6400 bytes");
		free(top);
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
