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

/* Runs tests/programs/corerec (with arg, or none when NULL) under
 * heapprof into dir, HP_TEST_TMP/name (its capture cap.hpf, its core
 * rec.core), once per process and *made. Returns 0, or -1 after saying
 * why there is no core (a failure in CI, where a test never skips
 * silently). */
static int make_core_of(char *dir, size_t cap, const char *name, const char *arg, int *made)
{
	const char *b = hp_test_build();

	snprintf(dir, cap, "%s/%s", hp_test_tmp(), name);
	if (*made)
		return *made > 0 ? 0 : -1;
	*made = -1;
	if (hp_test_sh("grep -qx core /proc/sys/kernel/core_pattern")) {
		printf("  core_pattern is not 'core': the kernel's core goes elsewhere\n");
		expect_true(!getenv("CI"), "kernel core dumps in the working directory (CI)");
		return -1;
	}
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* cap.hpf && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/corerec %s > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" rec.core",
		       dir, dir, b, dir, b, arg ? arg : "")) {
		printf("  no core written in %s (a container without core dumps?)\n", dir);
		expect_true(!getenv("CI"), "a kernel core of the aborted program (CI)");
		return -1;
	}
	*made = 1;
	return 0;
}

static int make_core(char *dir, size_t cap)
{
	static int made; /* 0: not tried, 1: made, -1: failed */
	return make_core_of(dir, cap, "corerec", NULL, &made);
}

/* Stacks deeper than the stack table keeps in a key's head (stacks.h:
 * the rest in segments shared between stacks, root layout 7): corerec's
 * 40 blocks from a recursion 1 to 40 calls deep, each its own stack of 6
 * to 45 frames, read from the core with every frame, figure and block as
 * in the fatal-signal snapshot. */
HP_TEST(core_reads_deep_stacks)
{
	static int made;
	char dir[512], *o;
	const char *b = hp_test_build();

	if (make_core_of(dir, sizeof dir, "corerec_deep", "deep", &made))
		return;
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
	expect_true(strstr(o, "\nsame=48\n") != NULL, "48 stacks: corerec's 8 and 40 deep ones");
	expect_eq_u64(hp_test_sh("python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); "
				 "d=sorted(len(s[\"frames\"]) for s in r[\"sites\"] "
				 "if s[\"frames\"] and s[\"frames\"][0][\"name\"]"
				 ".startswith(\"site_deep\")); "
				 "sys.exit(not (len(d)==40 and d[-1]-d[0]==39 and d[-1]>40))' %s/core.json",
				 dir), 0, "the deep sites: 40 stacks of consecutive depths, past 40 frames");
	free(o);
}

HP_TEST(core_under_heapprof_equals_fatal_snapshot)
{
	char dir[512], *o;
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
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
	/* the text listing names the sites (under the figures, the site's
	 * reachability line, then its frames) */
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/rec.core | grep -A2 '^ *5000 *5 *5 *0 *5000 "
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

/* Compares two `heapprof report --json --top 100` outputs (argv[1], the
 * core's, and argv[2], the capture's): every table's rows keyed by their
 * frames (function, file, line), with all their figures, and the totals.
 * Prints "mismatch ..." per difference, "leak.FUNCTION:LINE=objects,bytes"
 * for the program's leak rows and "rows=N". */
static const char report_py[] =
	"import json,sys\n"
	"def rows(p):\n"
	"  r=json.load(open(p)); out={}\n"
	"  for k,l in r[\"top\"].items():\n"
	"    for e in l: out[(k,tuple((f[\"function\"],f[\"file\"],f[\"line\"]) for f in "
	"e[\"stack\"]))]=e[\"values\"]\n"
	"  return r,out\n"
	"a,ra=rows(sys.argv[1]); b,rb=rows(sys.argv[2])\n"
	"if set(ra)!=set(rb): print(\"mismatch rows\",sorted(set(ra)^set(rb)))\n"
	"for k in ra:\n"
	"  if k in rb and ra[k]!=rb[k]: print(\"mismatch figures\",k,ra[k],rb[k])\n"
	"if a[\"totals\"]!=b[\"totals\"]: print(\"mismatch totals\",a[\"totals\"],b[\"totals\"])\n"
	"if a[\"snapshot\"][\"reason\"]!=b[\"snapshot\"][\"reason\"]: print(\"mismatch reason\")\n"
	"for (k,st),v in sorted(ra.items()):\n"
	"  if k==\"leaked\" and st and st[0][0].startswith(\"site_\"):\n"
	"    print(\"leak.%s:%d=%d,%d\" % (st[0][0],st[0][2],v[\"inuse_objects\"],v[\"inuse_bytes\"]))\n"
	"print(\"rows=%d\" % len(ra))\n";

/* Checks a report of the core's capture (a file, or the core itself)
 * against the report of the fatal-signal snapshot. */
static void check_report(const char *dir, const char *input, const char *what)
{
	const char *b = hp_test_build();
	char *o;

	expect_eq_u64(hp_test_sh("%s/heapprof report --json --top 100 %s/%s > %s/r-core.json && "
				 "%s/heapprof report --json --top 100 %s/cap.hpf > %s/r-cap.json",
				 b, dir, input, dir, b, dir, dir), 0, what);
	o = hp_test_sh_out("python3 -c '%s' %s/r-core.json %s/r-cap.json", report_py, dir, dir);
	if (!o)
		return;
	expect_true(!strstr(o, "mismatch"), "every row of every table and the totals as in the "
					    "fatal-signal snapshot's report");
	if (strstr(o, "mismatch"))
		printf("%s", o);
	expect_true(strstr(o, "leak.site_small:19=6,144\n") != NULL,
		    "site_small (corerec.c:19): 6 objects, 144 bytes in use");
	expect_true(strstr(o, "leak.site_mid:24=5,5000\n") != NULL,
		    "site_mid (corerec.c:24): 5 objects, 5000 bytes in use");
	expect_true(strstr(o, "leak.site_big:29=1,70000\n") != NULL,
		    "site_big (corerec.c:29): 1 object, 70000 bytes in use");
	expect_true(strstr(o, "rows=0\n") == NULL, "the tables have rows");
	free(o);
}

HP_TEST(core_o_writes_capture_of_the_dump)
{
	char dir[512];
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
	expect_eq_u64(hp_test_sh("cd %s && rm -f at.hpf && %s/heapprof core rec.core -o at.hpf "
				 "2> err-o.txt && [ ! -s err-o.txt ]", dir, b),
		      0, "heapprof core -o exits 0, quietly");
	expect_eq_u64(hp_test_sh("%s/heapprof inspect %s/at.hpf > %s/at.txt && "
				 "grep -q 'fatal signal' %s/at.txt && "
				 "grep -q 'symbols *embedded' %s/at.txt && "
				 "grep -q 'damage *none' %s/at.txt",
				 b, dir, dir, dir, dir, dir),
		      0, "a whole capture: a fatal-signal snapshot, symbols embedded, no damage");
	/* the buckets (stack ids, figures, frames) are the snapshot's, line by line */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof inspect --stacks at.hpf | "
				 "sed -n '/^buckets/,$p' | sed 's,/usr/lib/,/lib/,' > a.b && "
				 "%s/heapprof inspect --stacks cap.hpf | sed -n '/^buckets/,$p' > "
				 "c.b && diff -u c.b a.b",
				 dir, b, b),
		      0, "every bucket as in the fatal-signal snapshot");
	check_report(dir, "at.hpf", "report reads the capture of the dump");
	/* the core is the command's input: never overwritten */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core rec.core -o rec.core 2>/dev/null; "
				 "[ $? = 1 ] && [ -s rec.core ]", dir, b),
		      0, "-o onto its own input is refused, the core kept");
}

HP_TEST(core_every_command_reads_a_core)
{
	char dir[512];
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
	check_report(dir, "rec.core", "report reads the core itself");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof export rec.core --format folded -o f1 && "
				 "%s/heapprof export cap.hpf --format folded -o f2 && "
				 "cmp f1 f2 && grep -q site_mid f1",
				 dir, b, b),
		      0, "export --format folded: the same as the snapshot's");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof flamegraph rec.core -o f.svg && "
				 "grep -q 'site_mid' f.svg && %s/heapprof diff cap.hpf rec.core | "
				 "grep -q '^0 of [0-9]* stacks changed'",
				 dir, b, b),
		      0, "flamegraph and diff read the core; no stack differs from the snapshot");
}

/* Compares a sampled core's `heapprof core --json` (argv[1]) and the
 * reports of the core (argv[2]) and of the fatal-signal snapshot
 * (argv[3]): "rate=R,R2,R3" the rates each says, "mismatch ..." per
 * difference of the two reports, and "est ..." when the estimates of
 * the sites of one place (innermost function and line, caller's line)
 * differ from the report's row for it in the allocations table (which
 * merges the call sites of an unrolled loop: the sum of their rounded
 * figures may differ from the rounded sum by one per extra site), then
 * "sites=N" compared. */
static const char sampled_py[] =
	"import json,sys\n"
	"c=json.load(open(sys.argv[1])); a=json.load(open(sys.argv[2])); "
	"b=json.load(open(sys.argv[3]))\n"
	"print(\"rate=%d,%s%d,%s%d\" % (c[\"recorder\"][\"sample_rate\"],a[\"sampled\"],"
	"a[\"sample_rate_bytes\"],b[\"sampled\"],b[\"sample_rate_bytes\"]))\n"
	"def rows(r):\n"
	"  out={}\n"
	"  for k,l in r[\"top\"].items():\n"
	"    for e in l: out[(k,tuple((f[\"function\"],f[\"line\"]) for f in e[\"stack\"]))]="
	"e[\"values\"]\n"
	"  return out\n"
	"ra,rb=rows(a),rows(b)\n"
	"if ra!=rb: print(\"mismatch rows\")\n"
	"if a[\"totals\"]!=b[\"totals\"]: print(\"mismatch totals\")\n"
	"alloc={}\n"
	"for e in b[\"top\"][\"allocations\"]:\n"
	"  s=e[\"stack\"]; alloc[(s[0][\"function\"],s[0][\"line\"],s[1][\"line\"])]=e[\"values\"]\n"
	"n=0; got={}\n"
	"for s in c[\"sites\"]:\n"
	"  fr=s[\"frames\"]\n"
	"  if len(fr)<2 or not fr[0][\"name\"].startswith(\"site_\"): continue\n"
	"  k=(fr[0][\"symbols\"][-1][\"function\"],fr[0][\"symbols\"][-1][\"line\"],"
	"fr[1][\"symbols\"][-1][\"line\"])\n"
	"  g=got.setdefault(k,[0,{}]); g[0]+=1\n"
	"  for x,y in s[\"estimates\"].items(): g[1][x]=g[1].get(x,0)+y\n"
	"  n+=1\n"
	"for k,(m,e) in got.items():\n"
	"  v=alloc.get(k)\n"
	"  if v is None or any(abs(e[x]-v[x])>(m-1) for x in v): print(\"est\",k,m,e,v)\n"
	"print(\"sites=%d\" % n)\n";

/* A core of a sampled recording (--sample-rate 4096): the capture of the
 * dump says the rate, so `heapprof report CORE` unbiases as the report of
 * the fatal-signal snapshot does, row by row; and the listing of
 * `heapprof core` shows each site's estimates, the same figures. */
HP_TEST(core_sampled_is_unbiased)
{
	char dir[512], *o;
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return; /* no kernel cores here: said there */
	snprintf(dir, sizeof dir, "%s/corerec-sampled", hp_test_tmp());
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "HEAPPROF_SAMPLE_RATE=4096 %s/tests/programs/corerec > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" rec.core",
		       dir, dir, b, dir, b)) {
		expect_true(0, "a kernel core of the sampled program");
		return;
	}
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core --json rec.core > core.json && "
				 "%s/heapprof report --json --top 100 rec.core > r-core.json && "
				 "%s/heapprof report --json --top 100 cap.hpf > r-cap.json",
				 dir, b, b, b),
		      0, "core --json and both reports exit 0");
	o = hp_test_sh_out("cd %s && python3 -c '%s' core.json r-core.json r-cap.json", dir,
			   sampled_py);
	if (!o)
		return;
	printf("%s", o);
	expect_true(strstr(o, "rate=4096,True4096,True4096\n") != NULL,
		    "the root's rate, in the capture of the dump as in the recorder's own");
	expect_true(!strstr(o, "mismatch"), "report CORE: every row and the totals, unbiased, "
					    "as the fatal-signal snapshot's report");
	expect_true(!strstr(o, "est "), "heapprof core: each site's estimates as the report's row");
	/* which small blocks were sampled is chance; both 70,000-byte ones
	 * are, all but surely (1 - e^-17 each) */
	const char *n = strstr(o, "sites=");
	expect_true(n && atoi(n + 6) >= 2, "the sites sampled, site_big's two among them");
	free(o);
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/rec.core | grep -q '^sampled: one "
				 "allocation per 4096 bytes on average; the figures below are "
				 "estimates'", b, dir),
		      0, "the listing says its figures are estimates");
}

/* A threaded program dies while its threads hold credit (aggregate.c:
 * bytes counted in use, not allocated): the bytes in use `heapprof core`
 * reads are the fatal-signal snapshot's, the credit left out through the
 * root's slots (layout 4); with it they read 2-8 KiB more. */
HP_TEST(core_of_threads_leaves_credit_out)
{
	char dir[512], *o, *want;
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return; /* no kernel cores here: said there */
	snprintf(dir, sizeof dir, "%s/corecredit", hp_test_tmp());
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/corecredit > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" rec.core",
		       dir, dir, b, dir, b)) {
		expect_true(0, "a kernel core of the threaded program");
		return;
	}
	o = hp_test_sh_out("cd %s && %s/heapprof core --json rec.core | python3 -c "
			   "'import json,sys; print(json.load(sys.stdin)[\"recorder\"][\"in_use_bytes\"])'",
			   dir, b);
	want = hp_test_sh_out("%s/heapprof inspect %s/cap.hpf | awk '/fatal signal/ {f=1} "
			      "f && $1 == \"in\" && $2 == \"use\" {print $5; exit}'",
			      b, dir);
	if (expect_true(o && want && atoll(want) > 0, "both figures read"))
		expect_eq_u64((uint64_t)atoll(o), (uint64_t)atoll(want),
			      "the core's bytes in use: the fatal-signal snapshot's, no credit");
	free(o);
	free(want);
}

/* A capture of a dump has no clock (the root carries no time): the report
 * leaves out the rates and times ("allocations 9 (0/s)", "at 0.000 s"
 * were shown), JSON has null for them; the recorder's own capture keeps
 * them. */
HP_TEST(core_report_has_no_times)
{
	char dir[512];
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof report rec.core > r-core.txt && "
				 "%s/heapprof report cap.hpf > r-cap.txt", dir, b, b),
		      0, "both reports exit 0");
	expect_eq_u64(hp_test_sh("cd %s && grep -qx '  pid [0-9]*, snapshot 1 of 1 (fatal signal)' "
				 "r-core.txt && grep -qx '  allocations     21' r-core.txt && "
				 "grep -qx '  peak heap       .* in [0-9]* blocks' r-core.txt && "
				 "! grep -Eq ' at [0-9.]+ s|/s\\)' r-core.txt", dir),
		      0, "report CORE: no rate, no snapshot time, no peak time");
	expect_eq_u64(hp_test_sh("cd %s && grep -q '^  pid [0-9]*, snapshot 1 of 1 (fatal signal) "
				 "at [0-9.]* s$' r-cap.txt && grep -q '^  allocations     21 ([0-9,.]*k*/s)$' "
				 "r-cap.txt && grep -q '^  peak heap       .* at [0-9.]* s$' r-cap.txt",
				 dir),
		      0, "the recorder's own capture keeps them");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof report --json rec.core | python3 -c 'import "
				 "json,sys\nr=json.load(sys.stdin)\n"
				 "assert r[\"snapshot\"][\"time_ns\"] is None and r[\"peak_time_ns\"] is None"
				 " and all(x[\"time_ns\"] is None for x in r[\"snapshots\"]), r[\"snapshot\"]\n' && "
				 "%s/heapprof report --json cap.hpf | python3 -c 'import json,sys\n"
				 "r=json.load(sys.stdin)\nassert r[\"snapshot\"][\"time_ns\"] > 0 and "
				 "r[\"peak_time_ns\"] > 0\n'",
				 dir, b, b),
		      0, "JSON: null times for the core, numbers for the recorder's capture");
}

HP_TEST(core_frames_have_file_and_line)
{
	char dir[512];
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return;
	/* the listing's live blocks: each with its allocation site's file:line */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core rec.core > list.txt && "
				 "[ $(grep -c '  1000 bytes  stack [0-9]*  site_mid+0x[0-9a-f]* in "
				 "corerec  tests/programs/corerec.c:24$' list.txt) = 5 ] && "
				 "[ $(grep -c '  24 bytes  stack [0-9]*  site_small+0x[0-9a-f]* in "
				 "corerec  tests/programs/corerec.c:19$' list.txt) = 6 ] && "
				 "grep -q '  70000 bytes  stack [0-9]*  site_big+0x[0-9a-f]* in corerec "
				 " tests/programs/corerec.c:29$' list.txt && "
				 "grep -q '^      main+0x[0-9a-f]* in corerec  tests/programs/corerec.c:52$'"
				 " list.txt",
				 dir, b),
		      0, "site_mid's 5 blocks at corerec.c:24, site_small's 6 at :19, site_big's "
			 "at :29, its caller at :52");
	/* JSON: every frame's symbols; libc's printf path (libc6-dbg) has
	 * inlined frames, each marked and placed before the function holding it */
	expect_eq_u64(hp_test_sh("%s/heapprof core --json %s/rec.core | python3 -c 'import json,sys\n"
				 "r=json.load(sys.stdin)\n"
				 "s={x[\"stack\"]:x for x in r[\"sites\"]}\n"
				 "mid=[x for x in r[\"sites\"] if x[\"frames\"][0][\"name\"]"
				 ".startswith(\"site_mid+\")][0]\n"
				 "f=mid[\"frames\"][0][\"symbols\"]\n"
				 "assert f==[{\"function\":\"site_mid\",\"file\":\"tests/programs/corerec.c\","
				 "\"line\":24,\"inlined\":False}], f\n"
				 "inl=[y for x in r[\"sites\"] for fr in x[\"frames\"] for y in "
				 "fr.get(\"symbols\",[])[:-1]]\n"
				 "assert inl and all(y[\"inlined\"] and y[\"line\"] > 0 for y in inl), inl\n"
				 "'",
				 b, dir),
		      0, "site_mid's frame: site_mid at corerec.c:24; inlined frames marked, with "
			 "their lines");
}

/* Prints "KEY=inuse_objects,inuse_bytes,peak_objects,peak_bytes,alloc_objects"
 * per row of a report --by type --json (argv[1]), then "totals=" the same
 * for its totals. */
static const char bytype_py[] =
	"import json,sys\n"
	"r=json.load(open(sys.argv[1]))\n"
	"f=lambda v: \"%d,%d,%d,%d,%d\" % (v[\"inuse_objects\"],v[\"inuse_bytes\"],"
	"v[\"peak_objects\"],v[\"peak_bytes\"],v[\"alloc_objects\"])\n"
	"for x in r[\"rows\"]: print(\"%s=%s\" % (x[\"key\"],f(x[\"values\"])))\n"
	"print(\"totals=%s\" % f(r[\"totals\"]))\n";

/* A C++ program under heapprof that aborts: the recorder names vtable
 * types only at an ordinary snapshot (none before a fatal signal), so its
 * own capture has every object of unknown type; the core holds the
 * objects, and the capture of the dump reads their vtables
 * (tests/programs/corevt.cpp: 4 Circle x 16, 3 Square x 24, 2 Poly x 40
 * in use; 2 Circles deleted; 5 plain malloc(24)). */
HP_TEST(core_vtable_types)
{
	char dir[512], *o, *c;
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return; /* no kernel cores here: said there */
	snprintf(dir, sizeof dir, "%s/corevt", hp_test_tmp());
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/corevt > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" vt.core",
		       dir, dir, b, dir, b)) {
		expect_true(0, "a kernel core of the aborted C++ program");
		return;
	}
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof report --by type --json vt.core > t-core.json"
				 " && %s/heapprof report --by type --json cap.hpf > t-cap.json && "
				 "%s/heapprof core vt.core -o vt.hpf && "
				 "%s/heapprof report --by type --json vt.hpf > t-o.json",
				 dir, b, b, b, b),
		      0, "report --by type on the core, its capture and -o's file exit 0");
	o = hp_test_sh_out("cd %s && python3 -c '%s' t-core.json", dir, bytype_py);
	c = hp_test_sh_out("cd %s && python3 -c '%s' t-cap.json", dir, bytype_py);
	if (!o || !c) {
		free(o);
		free(c);
		return;
	}
	printf("%s", o);
	{
		/* every line, the first too, after a newline */
		char *lines = malloc(strlen(o) + 2);
		if (!lines) {
			free(o);
			free(c);
			return;
		}
		lines[0] = '\n';
		strcpy(lines + 1, o);
		free(o);
		o = lines;
	}
	expect_true(strstr(o, "\nCircle=4,64,4,64,4\n") != NULL,
		    "Circle: 4 x 16 in use and at the peak (the 2 deleted stay untyped)");
	expect_true(strstr(o, "\nSquare=3,72,3,72,3\n") != NULL, "Square: 3 x 24");
	expect_true(strstr(o, "\nPoly=2,80,2,80,2\n") != NULL, "Poly: 2 x 40");
	expect_true(strstr(o, "\nunknown (avg 24 B)=5,120,5,120,5\n") != NULL,
		    "the 5 plain malloc(24) blocks stay unknown");
	expect_true(strstr(o, "\nunknown (avg 16 B)=0,0,0,0,2\n") != NULL,
		    "the 2 Circles deleted stay in the untyped bucket");
	expect_true(strstr(c, "Circle=4,64,4,64,4\n") != NULL,
		    "the recorder's own fatal-signal snapshot types them too (read in its handler)");
	expect_true(strstr(o, "\ntotals=") && strstr(c, "\ntotals=") &&
			    strcmp(strstr(o, "\ntotals="), strstr(c, "\ntotals=")) == 0,
		    "the totals are the fatal-signal snapshot's: blocks only moved");
	free(o);
	free(c);
	expect_eq_u64(hp_test_sh("cd %s && cmp -s t-core.json t-o.json", dir), 0,
		      "-o's file reports the same types");
	/* the listing, as read in a terminal: C++ names demangled, nothing
	 * below main unless --all-frames, the signal named */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core vt.core > list.txt && "
				 "%s/heapprof core --all-frames vt.core > all.txt && "
				 "grep -q '^program: corevt (pid [0-9]*), dumped on SIGABRT (signal 6)$' "
				 "list.txt && grep -A2 '^ *64 *4 *6 *2 *64  stack [0-9]*$' list.txt > "
				 "circle.txt && sed -n 2p circle.txt | "
				 "grep -qx '        | still reachable 64 bytes in 4 blocks' && "
				 "sed -n 3p circle.txt | grep -q '^      make_circle()+0x[0-9a-f]* in corevt "
				 " tests/programs/corevt.cpp:44$' && ! grep -q '_ZL' list.txt && "
				 "! grep -q '_start\\|__libc_start' list.txt && "
				 "grep -q '^      _start+0x[0-9a-f]* in corevt' all.txt && "
				 "grep -q '__libc_start' all.txt",
				 dir, b, b),
		      0, "core's listing: make_circle() demangled, its reachability on a line of its "
			 "own, no frame below main (but with --all-frames), SIGABRT");
}

/* Threads, contexts, custom heaps and explicit types in a core: the
 * recorder's root (version 2) holds its tag tables, so the capture of the
 * dump names them as the recorder's own fatal-signal snapshot does
 * (tests/programs/corectx.c: "loader" 3 x 100 "struct record" in "load";
 * the main thread 2 x 50 in "serve > parse"; heap "arena" 4 x 32 in a
 * 4096-byte chunk). */
HP_TEST(core_tags)
{
	static const char *const by[] = {"thread", "context", "heap", "type"};
	static const char *const want[] = {
		"\nloader=3,300,3,300,3\n",
		"\ncorectx=3,4196,3,4196,3\n",
		"\nload=3,300,3,300,3\n",
		"\nserve > parse=2,100,2,100,2\n",
		"\nserve=2,100,2,100,2\n",
		"\narena=4,128,4,128,4\n",
		"\nmalloc=6,4496,6,4496,6\n",
		"\nstruct record=3,300,3,300,3\n",
	};
	char dir[512], *all = NULL;
	const char *b = hp_test_build();
	size_t len = 1;

	if (make_core(dir, sizeof dir))
		return; /* no kernel cores here: said there */
	snprintf(dir, sizeof dir, "%s/corectx", hp_test_tmp());
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/corectx > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" ctx.core",
		       dir, dir, b, dir, b)) {
		expect_true(0, "a kernel core of the aborted program");
		return;
	}
	for (size_t i = 0; i < sizeof by / sizeof *by; i++) {
		char *o, *c, *grown;
		expect_eq_u64(hp_test_sh("cd %s && %s/heapprof report --by %s --json ctx.core > "
					 "%s-core.json && %s/heapprof report --by %s --json cap.hpf > "
					 "%s-cap.json",
					 dir, b, by[i], by[i], b, by[i], by[i]),
			      0, "report --by on the core and on the capture");
		o = hp_test_sh_out("cd %s && python3 -c '%s' %s-core.json", dir, bytype_py, by[i]);
		c = hp_test_sh_out("cd %s && python3 -c '%s' %s-cap.json", dir, bytype_py, by[i]);
		printf("  --by %s:\n%s", by[i], o ? o : "");
		expect_true(o && c && strcmp(o, c) == 0,
			    "the core's rows are the recorder's own fatal-signal snapshot's");
		grown = o ? realloc(all, len + strlen(o) + 1) : NULL;
		if (grown) {
			all = grown;
			if (len == 1)
				strcpy(all, "\n");
			strcat(all, o);
			len += strlen(o);
		}
		free(o);
		free(c);
	}
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		expect_true(all && strstr(all, want[i]), want[i] + 1);
	free(all);
	expect_eq_u64(hp_test_sh("cd %s && python3 -c 'import json; r=json.load(open(\"heap-core.json\"));"
				 " h=[x for x in r[\"rows\"] if x[\"key\"]==\"arena\"][0][\"heap_peak\"];"
				 " assert (h[\"bytes\"],h[\"objects\"],h[\"resets\"])==(128,4,0)'",
				 dir),
		      0, "arena's own peak, 128 bytes in 4 blocks, from the core");
}

/* A fork child that is not followed stops recording (recorder.c,
 * fork_child): what it allocates after the fork is not recorded, however
 * the slow path's common case tests that the recorder is on
 * (tests/programs/coreforked.c: the parent's 3 x 300 at site_before,
 * inherited; the child's 7 x 700 at site_after, not recorded). The
 * child's core holds the register as the fork left it. */
HP_TEST(core_of_unfollowed_child)
{
	char dir[512];
	const char *b = hp_test_build();

	if (make_core(dir, sizeof dir))
		return; /* no kernel cores here: said there */
	snprintf(dir, sizeof dir, "%s/coreforked", hp_test_tmp());
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/coreforked > out.txt 2>/dev/null && "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" child.core",
		       dir, dir, b, dir, b)) {
		expect_true(0, "a kernel core of the aborted child");
		return;
	}
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core child.core > core.txt 2>&1", dir, b),
		      0, "heapprof core on the child's core exits 0");
	expect_eq_u64(hp_test_sh("cd %s && grep -q '^live blocks: 3, 900 bytes;' core.txt", dir),
		      0, "the child's register: the parent's 3 x 300, nothing more");
	expect_eq_u64(hp_test_sh("cd %s && grep -q site_before core.txt && "
				 "! grep -q site_after core.txt",
				 dir),
		      0, "site_before's blocks, none of site_after's");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
