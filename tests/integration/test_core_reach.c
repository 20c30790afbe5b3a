/*
 * test_core_reach.c - reachability with heapprof's stacks (issue 12, the
 * two kinds together): tests/programs/corereach, run under heapprof, keeps
 * blocks in globals, in main's frame and in another block, drops the last
 * pointer to others (and a whole list), prints some addresses and aborts.
 * `heapprof core` must join the recorder's live register with the glibc
 * heap walk and the conservative scan: every site's live blocks exactly
 * as "definitely lost", "indirectly lost" or "still reachable", in JSON
 * and in the text listing, and --whatis on the printed addresses names
 * the allocation site (function, file:line) of the block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* Sums the core's JSON (argv[1]) per site, named by its innermost frame's
 * function: "site.NAME=lost objects,bytes,indirect objects,bytes,
 * reachable objects,bytes", then "unknown=N" blocks the heap walk missed
 * and "blocks=N" whose reachability disagrees with their site's sums. */
static const char sites_py[] =
	"import json,sys\n"
	"r=json.load(open(sys.argv[1])); out={}\n"
	"print(\"reachability=%s\" % r[\"recorder\"][\"reachability\"])\n"
	"for s in r[\"sites\"]:\n"
	"  f=s[\"frames\"][0][\"name\"].split(\"+\")[0] if s[\"frames\"] else \"\"\n"
	"  o=out.setdefault(f,[0]*6)\n"
	"  for i,k in enumerate((\"lost\",\"indirect\",\"reachable\")):\n"
	"    o[2*i]+=s[k+\"_count\"]; o[2*i+1]+=s[k+\"_bytes\"]\n"
	"for f,o in sorted(out.items()):\n"
	"  if f.startswith(\"site_\"): print(\"site.%s=%s\" % (f,\",\".join(map(str,o))))\n"
	"print(\"unknown=%d\" % sum(s[\"unknown_count\"] for s in r[\"sites\"]))\n"
	"names={\"definitely lost\":\"lost\",\"indirectly lost\":\"indirect\","
	"\"still reachable\":\"reachable\"}\n"
	"by={}\n"
	"for b in r[\"blocks\"]:\n"
	"  k=(b[\"stack\"],names.get(b[\"reachability\"],\"unknown\")); by[k]=by.get(k,0)+1\n"
	"bad=0\n"
	"for s in r[\"sites\"]:\n"
	"  for k in (\"lost\",\"indirect\",\"reachable\",\"unknown\"):\n"
	"    bad+=by.get((s[\"stack\"],k),0)!=s[k+\"_count\"]\n"
	"print(\"blocks=%d\" % bad)\n";

/* Runs tests/programs/corereach under heapprof into dir (its core
 * reach.core, its output out.txt), once per process. Returns 0, or -1
 * after saying why there is no core (a failure in CI). */
static int make_core(char *dir, size_t cap)
{
	static int made; /* 0: not tried, 1: made, -1: failed */
	const char *b = hp_test_build();

	snprintf(dir, cap, "%s/corereach", hp_test_tmp());
	if (made)
		return made > 0 ? 0 : -1;
	made = -1;
	if (hp_test_sh("grep -qx core /proc/sys/kernel/core_pattern")) {
		printf("  core_pattern is not 'core': the kernel's core goes elsewhere\n");
		expect_true(!getenv("CI"), "kernel core dumps in the working directory (CI)");
		return -1;
	}
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* cap.hpf && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/corereach > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" reach.core",
		       dir, dir, b, dir, b)) {
		printf("  no core written in %s (a container without core dumps?)\n", dir);
		expect_true(!getenv("CI"), "a kernel core of the aborted program (CI)");
		return -1;
	}
	made = 1;
	return 0;
}

HP_TEST(core_reach_per_site_exact)
{
	char dir[512], *o;
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
	expect_eq_u64(hp_test_sh("%s/heapprof core --json %s/reach.core > %s/core.json "
				 "2> %s/err.txt", b, dir, dir, dir),
		      0, "heapprof core --json exits 0");
	expect_eq_u64(hp_test_sh("[ ! -s %s/err.txt ]", dir), 0, "nothing on stderr");
	o = hp_test_sh_out("python3 -c '%s' %s/core.json", sites_py, dir);
	if (!o)
		return;
	printf("%s", o);
	expect_true(strstr(o, "reachability=True\n") != NULL, "the heap was walked and joined");
	expect_true(strstr(o, "site.site_global=0,0,0,0,3,120\n") != NULL,
		    "site_global: 3 x 40 kept in a global array, still reachable");
	expect_true(strstr(o, "site.site_stack=0,0,0,0,2,112\n") != NULL,
		    "site_stack: 2 x 56 kept in main's frame, still reachable");
	expect_true(strstr(o, "site.site_holder=0,0,0,0,1,64\n") != NULL,
		    "site_holder: 1 x 64 kept in a global, still reachable");
	expect_true(strstr(o, "site.site_inner=0,0,0,0,4,288\n") != NULL,
		    "site_inner: 4 x 72 kept only in the holder block, still reachable");
	expect_true(strstr(o, "site.site_lost=5,440,0,0,0,0\n") != NULL,
		    "site_lost: 5 x 88 whose last pointer was dropped, definitely lost "
		    "(the live register's own copies of their addresses are not roots)");
	expect_true(strstr(o, "site.site_head=1,48,0,0,0,0\n") != NULL,
		    "site_head: the dropped list's head, definitely lost");
	expect_true(strstr(o, "site.site_tail=0,0,3,144,0,0\n") != NULL,
		    "site_tail: the rest of the list, indirectly lost");
	expect_true(strstr(o, "site.site_last=0,0,0,0,1,16\n") != NULL,
		    "site_last: 1 x 16 in a global, still reachable");
	expect_true(strstr(o, "site.site_final=1,24,0,0,0,0\n") != NULL,
		    "site_final: the thread's last block, dropped: definitely lost (the "
		    "recorder's note of it is no pointer)");
	expect_true(strstr(o, "unknown=0\n") != NULL, "every recorded block found in the heap");
	expect_true(strstr(o, "blocks=0\n") != NULL,
		    "every block's reachability adds up to its site's figures");
	free(o);
	/* the text listing: totals, and each site's reachability on lines of
	 * its own under its figures, its zero figures left out */
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/reach.core > %s/list.txt && "
				 "grep -q '^  definitely lost: 512 bytes in 7 blocks$' %s/list.txt && "
				 "grep -q '^  indirectly lost: 144 bytes in 3 blocks$' %s/list.txt && "
				 "grep -A2 '^ *440 *5 *5 *0 *440  stack [0-9]*$' %s/list.txt > "
				 "%s/lost.txt && sed -n 2p %s/lost.txt | "
				 "grep -qx '        | definitely lost 440 bytes in 5 blocks' && "
				 "sed -n 3p %s/lost.txt | grep -q '^      site_lost+0x[0-9a-f]* in corereach'",
				 b, dir, dir, dir, dir, dir, dir, dir, dir),
		      0, "the text listing: the totals and site_lost's lines");
	expect_eq_u64(hp_test_sh("grep -q '^        | ' %s/list.txt && "
				 "! grep '^        | ' %s/list.txt | grep -q ' 0 bytes\\|.\\{81\\}' && "
				 "! grep -q ' 1 blocks\\| 1 bytes' %s/list.txt", dir, dir, dir),
		      0, "reachability lines: within 80 columns, no zero figure, \"1 block\"");
}

HP_TEST(core_reach_whatis_names_the_site)
{
	char dir[512], *o;
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
	/* the printed addresses, and each site's line in the program */
	o = hp_test_sh_out(
		"R=$(pwd) && cd %s && a() { sed -n \"s/^$1 //p\" out.txt; } && "
		"l() { grep -n \"$1(void)\" $R/tests/programs/corereach.c | cut -d: -f1; } && "
		"%s/heapprof core reach.core --whatis $(a global) "
		"$(printf 0x%%x $(( $(a inner) + 8 ))) $(a lost) $(a stack) > whatis.txt && "
		"grep -A2 \"^$(a global): in block $(a global) (40 bytes) at offset 0, allocated, "
		"still reachable$\" whatis.txt | grep -q \"site_global+0x[0-9a-f]* in corereach  "
		"tests/programs/corereach.c:$(l site_global)$\" && echo global-ok; "
		"grep -A2 \"^0x[0-9a-f]*: in block $(a inner) (72 bytes) at offset 8, allocated, "
		"still reachable$\" whatis.txt | grep -q \"site_inner+0x[0-9a-f]* in corereach  "
		"tests/programs/corereach.c:$(l site_inner)$\" && echo inner-ok; "
		"grep -A2 \"^$(a lost): in block $(a lost) (88 bytes) at offset 0, allocated, "
		"definitely lost$\" whatis.txt | grep -q \"site_lost+0x[0-9a-f]* in corereach  "
		"tests/programs/corereach.c:$(l site_lost)$\" && echo lost-ok; "
		"grep -A1 \"^$(a stack): in block\" whatis.txt | grep -q \"^  recorded by "
		"heapprof: block $(a stack) of 56 bytes (as requested), stack [0-9]*, allocated "
		"at:$\" && echo stack-ok; "
		"%s/heapprof core reach.core --json --whatis $(a lost) | python3 -c 'import json,sys; "
		"w=json.load(sys.stdin)[\"whatis\"][0]; r=w[\"recorded\"]; "
		"print(\"json\", w[\"reachability\"], r[\"size\"], r[\"address\"]==w[\"block\"], "
		"r[\"frames\"][0][\"name\"].split(\"+\")[0], r[\"frames\"][0][\"symbols\"][0][\"line\"]"
		"==int(sys.argv[1]))' $(l site_lost)",
		dir, b, b);
	if (!o)
		return;
	printf("%s", o);
	expect_true(strstr(o, "global-ok\n") != NULL,
		    "--whatis on a global's block: still reachable, allocated at site_global's line");
	expect_true(strstr(o, "inner-ok\n") != NULL,
		    "--whatis 8 bytes into an inner block: offset 8, site_inner's line");
	expect_true(strstr(o, "lost-ok\n") != NULL,
		    "--whatis on a lost block: definitely lost, site_lost's line");
	expect_true(strstr(o, "stack-ok\n") != NULL,
		    "--whatis: the recorder's block, its requested size and stack");
	expect_true(strstr(o, "json definitely lost 88 True site_lost True\n") != NULL,
		    "--whatis --json: the recorded block, its size, frames and line");
	free(o);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
