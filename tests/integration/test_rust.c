/*
 * test_rust.c - Rust names demangled, both manglings: tests/programs/
 * rust_known.rs built by Debian's rustc with the legacy scheme
 * (rust_legacy) and with -C symbol-mangling-version=v0 (rust_v0), run under
 * heapprof run; the JSON report names the program's own functions as Rust
 * writes them, with the figures each allocated, and no mangled name is left.
 */
#include <stdio.h>

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
