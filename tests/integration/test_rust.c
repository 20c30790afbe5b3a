/*
 * test_rust.c - Rust names demangled, both manglings: tests/programs/
 * rust_known.rs built by Debian's rustc with the legacy scheme
 * (rust_legacy) and with -C symbol-mangling-version=v0 (rust_v0), run under
 * heapprof run; the JSON report names the program's own functions as Rust
 * writes them, with the figures each allocated, and no mangled name is left.
 */
#include <stdio.h>
#include <string.h>

#include "../harness/harness.h"

static void check(const char *prog, const char *nm_pattern, const char *fill)
{
	char capture[4096], why[256];
	const char *b = hp_test_build();

	/* The binary really uses the mangling under test. */
	snprintf(why, sizeof why, "%s: its symbols are mangled as %s", prog, nm_pattern);
	expect_eq_u64(hp_test_sh("nm %s/tests/programs/%s | grep -qE '%s'", b, prog, nm_pattern), 0,
		      why);
	snprintf(capture, sizeof capture, "%s/%s.hpf", hp_test_tmp(), prog);
	snprintf(why, sizeof why, "%s runs under heapprof and exits 0", prog);
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/%s", b, capture, b,
				 prog),
		      0, why);
	snprintf(why, sizeof why, "%s: Rust names in the JSON report (the assertion above)", prog);
	expect_eq_u64(
		hp_test_sh("%s/heapprof report --json %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "def fns(e): return [f[\"function\"] for f in e[\"stack\"]]\n"
			   "def find(top, name):\n"
			   "    m=[e for e in r[\"top\"][top] if name in fns(e)]\n"
			   "    assert len(m)==1, (top, name, [fns(e) for e in r[\"top\"][top]])\n"
			   "    return m[0]\n"
			   "e=find(\"leaked\", \"known::leak_box\")\n"
			   "assert e[\"values\"][\"inuse_bytes\"]==1000, e\n"
			   "f=fns(e)\n"
			   "assert f[f.index(\"known::leak_box\")+1]==\"known::main\", f\n"
			   "e=find(\"allocated\", \"known::grow_vec\")\n"
			   "assert e[\"values\"][\"alloc_bytes\"]==1200, e\n"
			   "e=find(\"allocated\", \"%s\")\n"
			   "assert e[\"values\"][\"alloc_bytes\"]==64+128, e\n"
			   "for t in r[\"top\"].values():\n"
			   "    for e in t:\n"
			   "        for n in fns(e):\n"
			   "            assert not n.startswith((\"_Z\", \"_R\")), n\n"
			   "            assert \"$LT$\" not in n, n\n"
			   "'",
			   b, capture, fill),
		0, why);
}

/* The line of the first occurrence of text in rust_known.rs. */
static unsigned line_of(const char *text)
{
	char buf[512];
	unsigned n = 0;
	FILE *f = fopen("tests/programs/rust_known.rs", "r");

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

/* Issue 24, item 2: Rust's std frames (alloc::raw_vec, alloc_impl, the
 * runtime's lang_start) are the library's: the report's first frame is
 * the program's own, --frames 2 reaches its caller, and --by function
 * charges the program's function, not alloc::alloc. fill names the
 * Store's method as the mangling writes it (v0 keeps the impl's self
 * type). */
static void check_frames(const char *prog, const char *fill)
{
	char capture[4096], out[4096], why[256];
	const char *b = hp_test_build();

	snprintf(capture, sizeof capture, "%s/%s-frames.hpf", hp_test_tmp(), prog);
	snprintf(out, sizeof out, "%s/%s-frames.txt", hp_test_tmp(), prog);
	hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/%s", b, capture, b, prog);
	expect_eq_u64(hp_test_sh("%s/heapprof report --width 80 --frames 2 %s > %s", b, capture, out),
		      0, "report");
	/* (above them, the one library call the site makes, vec!'s from_elem) */
	snprintf(why, sizeof why, "%s: the peak's first entry is grow_vec's line, then main's", prog);
	if (!expect_eq_u64(
		    hp_test_sh("printf '      known::grow_vec  rust_known.rs:%u\\n"
			       "      known::main  rust_known.rs:%u\\n' > %s.want && "
			       "sed -n '/^peak heap consumers/,/^   2\\./p' %s | sed '1,2d;$d' | tail -2 | "
			       "diff %s.want -",
			       line_of("vec![1u32; 300]"), line_of("let n = grow_vec()"), out, out,
			       out),
		    0, why))
		hp_test_sh("sed -n '/^peak heap/,/^leaks/p' %s", out);
	snprintf(why, sizeof why, "%s: fill's line names %s", prog, fill);
	expect_eq_u64(hp_test_sh("grep -qxF '      %s  rust_known.rs:%u' %s", fill,
				 line_of("self.items.push(i);"), out),
		      0, why);
	snprintf(why, sizeof why, "%s: no std frame before the program's own in the sections", prog);
	expect_eq_u64(hp_test_sh("grep -E 'alloc::raw_vec|alloc_impl|lang_start' %s", out), 1, why);
	/* The flame graph shows a stack by the report's rule (frames.h): Rust's
	 * runtime starting main (lang_start, __rust_begin_short_backtrace) is
	 * not drawn, so known::main stands on the root, unless every frame is
	 * asked for. (std's own start-up, with no frame of the program's,
	 * keeps its lang_start_internal, as report shows it.) */
	snprintf(why, sizeof why, "%s: known::main on the root, no way to it drawn", prog);
	expect_eq_u64(hp_test_sh("%s/heapprof flamegraph %s -o %s.svg && "
				 "grep -qF 'data-n=\"known::main\" data-d=\"1\"' %s.svg && "
				 "! grep -qE 'data-n=\"[^\"]*__rust_begin_short_backtrace' %s.svg",
				 b, capture, out, out, out),
		      0, why);
	snprintf(why, sizeof why, "%s: flamegraph --all-frames draws lang_start", prog);
	expect_eq_u64(hp_test_sh("%s/heapprof flamegraph --all-frames %s -o %s.all.svg && "
				 "grep -qE 'data-n=\"[^\"]*lang_start' %s.all.svg",
				 b, capture, out, out),
		      0, why);
	snprintf(why, sizeof why, "%s: --by function charges known::grow_vec its 1200 bytes", prog);
	expect_eq_u64(
		hp_test_sh("%s/heapprof report --by function --json %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "k={x[\"key\"]: x[\"values\"] for x in r[\"rows\"]}\n"
			   "assert k[\"known::grow_vec\"][\"alloc_bytes\"]==1200, k\n"
			   "assert k[\"known::leak_box\"][\"inuse_bytes\"]==1000, k\n"
			   "assert not [x for x in k if x.startswith((\"alloc::\", \"<alloc::\")) "
			   "or \"alloc_impl\" in x or \"raw_vec\" in x], k'",
			   b, capture),
		0, why);
}

HP_TEST(rust_std_frames_fold)
{
	check_frames("rust_legacy", "known::Store::fill");
	check_frames("rust_v0", "<known::Store>::fill");
}

HP_TEST(rust_legacy_names_demangled)
{
	check("rust_legacy", "^[0-9a-f]+ t _ZN5known8leak_box17h[0-9a-f]{16}E$",
	      "known::Store::fill");
}

HP_TEST(rust_v0_names_demangled)
{
	check("rust_v0", "^[0-9a-f]+ t _RNvCs[0-9A-Za-z_]+_5known8leak_box$",
	      "<known::Store>::fill");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
