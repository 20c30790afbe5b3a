/*
 * test_core_rec.c - `heapprof core` on the core of a process that ran
 * under heapprof (issue 12, first kind): tests/programs/corerec, run with
 * LD_PRELOAD=libheapprof.so, allocates known blocks from known sites and
 * aborts; the recorder writes its fatal-signal snapshot, then the kernel
 * the core. The core's figures per site (stack) must equal exactly those
 * of that snapshot (heapprof inspect --stacks), its live blocks must add
 * up to each site's objects and bytes in use, and the known sites must
 * hold exactly what the program kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* Compares the core's JSON (argv[1]) with inspect --stacks (argv[2]):
 * prints one "mismatch ..." line per difference, then the figures of the
 * known sites as "site.NAME=count,bytes" and "same=N" sites compared. */
static const char check_py[] =
	"import json,re,sys\n"
	"r=json.load(open(sys.argv[1]))\n"
	"cap={}; frames={}; cur=None\n"
	"for l in open(sys.argv[2]):\n"
	"  m=re.match(r\"\\s*bucket stack=(\\d+) size=\\d+ alloc=(\\d+) (\\d+) free=(\\d+) (\\d+) "
	"peak=(\\d+) (\\d+)\",l)\n"
	"  if m:\n"
	"    cur=int(m.group(1)); v=[int(x) for x in m.groups()[1:]]\n"
	"    o=cap.setdefault(cur,[0]*6); cap[cur]=[a+b for a,b in zip(o,v)]; continue\n"
	"  m=re.match(r\"\\s*#\\d+\\s+(0x[0-9a-f]+)\",l)\n"
	"  if m and cur is not None: frames.setdefault(cur,[]).append(int(m.group(1),16))\n"
	"core={s[\"stack\"]:s for s in r[\"sites\"]}\n"
	"if set(core)!=set(cap): print(\"mismatch stacks\",sorted(core),sorted(cap))\n"
	"n=0\n"
	"for k,s in core.items():\n"
	"  want=cap.get(k); got=[s[x] for x in (\"alloc_count\",\"alloc_bytes\",\"free_count\","
	"\"free_bytes\",\"peak_count\",\"peak_bytes\")]\n"
	"  if want!=got: print(\"mismatch figures\",k,got,want)\n"
	"  if [int(f[\"address\"],16) for f in s[\"frames\"]]!=frames.get(k): "
	"print(\"mismatch frames\",k)\n"
	"  bl=[b for b in r[\"blocks\"] if b[\"stack\"]==k]\n"
	"  if len(bl)!=s[\"in_use_count\"] or sum(b[\"size\"] for b in bl)!=s[\"in_use_bytes\"]: "
	"print(\"mismatch blocks\",k)\n"
	"  n+=1\n"
	"  f=s[\"frames\"][0][\"name\"].split(\"+\")[0] if s[\"frames\"] else \"\"\n"
	"  if f.startswith(\"site_\"):\n"
	"    c=cap[k]; print(\"site.%s=%d,%d\" % (f,c[0]-c[2],c[1]-c[3]))\n"
	"print(\"same=%d\" % n)\n";

HP_TEST(core_under_heapprof_equals_fatal_snapshot)
{
	char dir[512], *o;
	const char *b = hp_test_build();
	int st;

	snprintf(dir, sizeof dir, "%s/corerec", hp_test_tmp());
	if (hp_test_sh("grep -qx core /proc/sys/kernel/core_pattern")) {
		/* In CI a test never skips silently: there it fails. */
		printf("  core_pattern is not 'core': the kernel's core goes elsewhere\n");
		expect_true(!getenv("CI"), "kernel core dumps in the working directory (CI)");
		return;
	}
	st = hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* cap.hpf && "
			"LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
			"%s/tests/programs/corerec > out.txt 2>/dev/null; "
			"set -- core*; [ -f \"$1\" ] && mv \"$1\" rec.core",
			dir, dir, b, dir, b);
	if (st) {
		printf("  no core written in %s (a container without core dumps?)\n", dir);
		expect_true(!getenv("CI"), "a kernel core of the aborted program (CI)");
		return;
	}
	expect_eq_u64(hp_test_sh("%s/heapprof inspect %s/cap.hpf | grep -q 'fatal signal'", b,
				 dir), 0, "the capture holds the fatal-signal snapshot");
	expect_eq_u64(hp_test_sh("%s/heapprof core --json %s/rec.core > %s/core.json 2> %s/err.txt "
				 "&& %s/heapprof inspect --stacks %s/cap.hpf > %s/stacks.txt",
				 b, dir, dir, dir, b, dir, dir), 0, "core and inspect exit 0");
	expect_eq_u64(hp_test_sh("[ ! -s %s/err.txt ]", dir), 0, "nothing torn, nothing missing");
	o = hp_test_sh_out("python3 -c '%s' %s/core.json %s/stacks.txt", check_py, dir, dir);
	if (!o)
		return;
	expect_true(!strstr(o, "mismatch"), "every site's figures, frames and blocks as in the "
					    "fatal-signal snapshot");
	if (strstr(o, "mismatch"))
		printf("%s", o);
	expect_true(strstr(o, "\nsame=8\n") != NULL || strncmp(o, "same=8\n", 7) == 0,
		    "8 stacks: 7 of the program (two call sites of site_big, three of site_gone) "
		    "and printf's buffer");
	expect_true(strstr(o, "site.site_small=6,144\n") != NULL, "site_small: 6 x 24 in use");
	expect_true(strstr(o, "site.site_mid=5,5000\n") != NULL, "site_mid: 5 x 1000 in use");
	expect_true(strstr(o, "site.site_big=1,70000\n") != NULL &&
			    strstr(o, "site.site_big=0,0\n") != NULL,
		    "site_big: one kept, the other freed");
	expect_true(strstr(o, "site.site_gone=0,0\n") != NULL, "site_gone: all freed");
	free(o);
	/* the text listing names the sites */
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/rec.core | grep -A1 '^ *5000 *5 *5 *0 *5000 "
				 " stack' | grep -q 'site_mid+0x[0-9a-f]* in corerec'", b, dir),
		      0, "the text listing: site_mid's figures and frame");
	/* --whatis answers from the glibc heap, recorder or not: the
	 * 70,000-byte block the program keeps is found */
	expect_eq_u64(hp_test_sh("%s/heapprof core --json %s/rec.core | python3 -c 'import json,sys; "
				 "r=json.load(sys.stdin); print(hex(int([b for b in r[\"blocks\"] "
				 "if b[\"size\"]==70000][0][\"address\"],16)+8))' > %s/addr && "
				 "%s/heapprof core %s/rec.core --whatis $(cat %s/addr) | "
				 "grep -q 'allocated'",
				 b, dir, dir, b, dir, dir),
		      0, "--whatis on a core made under heapprof finds the block");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
