/*
 * test_core_damage.c - `heapprof core` on a damaged heap (issue 27):
 * tests/programs/overflow overruns its 40-byte block (alloc_parser) by
 * 16 bytes of 0x41, over the size field of the next chunk (the victim's),
 * then aborts in free() of the victim. Its heap holds 8 blocks: the
 * parser (40), the victim (64 asked, 72 usable), 5 x 100 (104 usable) and
 * stdio's 4 KiB buffer (4104 usable).
 *
 * Three cores: the kernel's of the abort (bare, and under heapprof,
 * LD_PRELOAD=libheapprof.so), and gdb's gcore of the bare program stopped
 * after the overrun, before the free. In each: all 8 blocks found (the
 * victim's size inferred), one damage entry at the victim's size field
 * (the byte address: 8 bytes before the victim), 80 bytes not walked, the
 * parser named as the block before it; under heapprof, --whatis and
 * --damage on that address name alloc_parser at its line in overflow.c.
 *
 * The kernel's core needs /proc/sys/kernel/core_pattern to be "core" (as
 * test_core_rec.c): otherwise the test says so, and fails in CI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

/* The JSON report's figures as "key=value" lines. */
static const char flatten_py[] =
	"import json,sys\n"
	"r=json.load(sys.stdin)\n"
	"t=r[\"totals\"]; h=r[\"heap\"]\n"
	"print(\"blocks=%d\" % t[\"blocks\"])\n"
	"print(\"bytes=%d\" % t[\"bytes\"])\n"
	"print(\"unwalked=%d\" % h[\"unwalked_bytes\"])\n"
	"print(\"ndamage=%d\" % len(h[\"damage\"]))\n"
	"for s in r[\"by_size\"]: print(\"size.%d=%d\" % (s[\"size\"], s[\"blocks\"]))\n"
	"for d in h[\"damage\"]:\n"
	"  print(\"damage=%s\" % d[\"address\"])\n"
	"  print(\"what=%s\" % d[\"what\"])\n"
	"  print(\"value=%s\" % d[\"value\"])\n"
	"  print(\"block=%s\" % (d[\"block\"] or {}).get(\"address\"))\n"
	"  print(\"before=%s\" % (d[\"before\"] or {}).get(\"address\"))\n"
	"  print(\"past_end=%s\" % (d[\"before\"] or {}).get(\"past_end\"))\n"
	"for b in r[\"blocks\"]:\n"
	"  if b[\"damaged\"]: print(\"damaged=%s,%d\" % (b[\"address\"], b[\"size\"]))\n";

/* The value of "key=" in lines (a static copy), or "" when absent. */
static const char *value(const char *lines, const char *key)
{
	static char buf[4096];
	size_t klen = strlen(key);

	for (const char *p = lines; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(buf, sizeof buf, "%.*s", (int)(len - klen - 1), p + klen + 1);
			return buf;
		}
		p = eol ? eol + 1 : NULL;
	}
	buf[0] = '\0';
	return buf;
}

/* The address the program printed for name, as a number (0: none). */
static unsigned long long addr(const char *dir, const char *name)
{
	char path[600], line[128];
	unsigned long long r = 0;
	size_t n = strlen(name);
	FILE *f;

	snprintf(path, sizeof path, "%s/addrs.txt", dir);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, name, n) == 0 && line[n] == ' ')
			r = strtoull(line + n + 1, NULL, 16);
	fclose(f);
	return r;
}

static const char *core_dir(const char *what)
{
	static char dir[512];
	snprintf(dir, sizeof dir, "%s/%s", hp_test_tmp(), what);
	return dir;
}

/* The kernel's core of `overflow MODE` in dir (under heapprof when
 * preload), as dir/kernel.core. Returns 0, or -1 after saying why not. */
static int kernel_core_of(const char *dir, const char *mode, int preload)
{
	const char *b = hp_test_build();

	if (hp_test_sh("grep -qx core /proc/sys/kernel/core_pattern")) {
		printf("  core_pattern is not 'core': the kernel's core goes elsewhere\n");
		expect_true(!getenv("CI"), "kernel core dumps in the working directory (CI)");
		return -1;
	}
	if (hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && %s%s%s "
		       "%s/tests/programs/overflow %s > addrs.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" kernel.core",
		       dir, dir, preload ? "LD_PRELOAD=" : "", preload ? b : "",
		       preload ? "/libheapprof.so HEAPPROF_OUTPUT=cap.hpf" : "", b, mode)) {
		printf("  no core written in %s (a container without core dumps?)\n", dir);
		expect_true(!getenv("CI"), "a kernel core of the aborted program (CI)");
		return -1;
	}
	return 0;
}

static int kernel_core(const char *dir, int preload)
{
	return kernel_core_of(dir, "abort", preload);
}

/* gdb's gcore of `overflow wait` after the overrun, as dir/gcore.core;
 * the program then goes on and exits 0. Returns 0 or -1. */
static int gcore_core(const char *dir)
{
	int st;

	if (!hp_test_need("gcore", "gdb"))
		return -1;
	st = hp_test_sh(
		"set -e; mkdir -p %s; cd %s; rm -f in gc.*; mkfifo in; "
		"%s/tests/programs/overflow wait < in > addrs.txt & p=$!; exec 3>in; i=0; "
		"while ! grep -q '^ready' addrs.txt; do i=$((i+1)); [ $i -lt 600 ] || exit 9; "
		"sleep 0.1; done; gcore -o gc $p > gcore.log 2>&1; mv gc.$p gcore.core; "
		"echo go >&3; exec 3>&-; wait $p; grep -q '^alive' addrs.txt",
		dir, dir, hp_test_build());
	expect_eq_u64(st, 0, "gcore dumped overflow, which then went on and exited 0");
	return st ? -1 : 0;
}

/* The bare program's figures: 8 blocks, the damage to the byte. */
static void check_bare(const char *dir, const char *core)
{
	unsigned long long parser = addr(dir, "parser"), victim = addr(dir, "victim");
	char want[64];
	char *o;

	expect_true(parser && victim == parser + 48, "the victim's chunk follows the parser's");
	o = hp_test_sh_out("cd %s && %s/heapprof core --json %s 2>err.txt | python3 -c '%s'", dir,
			   hp_test_build(), core, flatten_py);
	if (!o)
		return;
	expect_str(value(o, "blocks"), "8", "all 8 blocks: parser, victim, 5 rows, stdio's buffer");
	expect_str(value(o, "bytes"), "4736", "40 + 72 + 5 x 104 + 4104 bytes");
	expect_str(value(o, "size.40"), "1", "the parser");
	expect_str(value(o, "size.72"), "1", "the victim, its size inferred");
	expect_str(value(o, "size.104"), "5", "the 5 rows");
	expect_str(value(o, "size.4104"), "1", "stdio's buffer");
	expect_str(value(o, "ndamage"), "1", "one inconsistency");
	snprintf(want, sizeof want, "0x%llx", victim - 8);
	expect_str(value(o, "damage"), want, "the damage: the victim's size field, to the byte");
	expect_str(value(o, "value"), "0x4141414141414141", "holding the overrun's bytes");
	expect_str(value(o, "what"), "bad chunk size", "a bad chunk size");
	snprintf(want, sizeof want, "0x%llx", victim);
	expect_str(value(o, "block"), want, "the block whose header it is: the victim");
	snprintf(want, sizeof want, "0x%llx,72", victim);
	expect_str(value(o, "damaged"), want, "the victim, marked damaged, 72 bytes");
	snprintf(want, sizeof want, "0x%llx", parser);
	expect_str(value(o, "before"), want, "the block before it: the parser");
	expect_str(value(o, "past_end"), "0", "the size field starts right at the parser's end");
	expect_str(value(o, "unwalked"), "80", "the victim's 80-byte chunk was not walked");
	free(o);
	/* the text report says it on stdout, the exit status is 1 */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core %s > out.txt 2>/dev/null", dir,
				 hp_test_build(), core), 1, "a damaged heap: exit 1");
	expect_eq_u64(hp_test_sh("cd %s && grep -q '^in use: 8 blocks, 4736 bytes$' out.txt && "
				 "grep -q \"^damage: 1 inconsistency in the heap's headers and lists; "
				 "80 bytes not walked (0x%llx-0x%llx)\" out.txt",
				 dir, victim - 16, victim + 64), 0,
		      "the summary: 8 blocks, 80 bytes not walked and where");
	/* --whatis on the damaged size field names both blocks */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core %s --whatis 0x%llx > whatis.txt "
				 "2>/dev/null; grep -q '^  the block before it (the likely "
				 "overrunner): 0x%llx (40 bytes), allocated; 0x%llx is 0 bytes past "
				 "its end$' whatis.txt && grep -q '^  the block whose header it is: "
				 "0x%llx (72 bytes' whatis.txt",
				 dir, hp_test_build(), core, victim - 8, parser, victim - 8, victim),
		      0, "--whatis at the damaged header: the parser before it, the victim");
}

HP_TEST(core_damage_kernel_core)
{
	const char *dir = core_dir("kernel");
	char core[600];

	if (kernel_core(dir, 0))
		return;
	snprintf(core, sizeof core, "%s/kernel.core", dir);
	check_bare(dir, core);
}

HP_TEST(core_damage_gcore)
{
	const char *dir = core_dir("gcore");
	char core[600];

	if (gcore_core(dir))
		return;
	snprintf(core, sizeof core, "%s/gcore.core", dir);
	check_bare(dir, core);
}

/* Under heapprof: the same damage, and the overrunner's stack from the
 * recorder's tables: alloc_parser at the line of its malloc(40). */
HP_TEST(core_damage_under_heapprof_names_the_overrunner)
{
	const char *dir = core_dir("rec");
	const char *b = hp_test_build();
	unsigned long long parser, victim;
	char *line;

	if (kernel_core(dir, 1))
		return;
	parser = addr(dir, "parser");
	victim = addr(dir, "victim");
	line = hp_test_sh_out("grep -n 'alloc_parser(void) { return malloc(40)' "
			      "tests/programs/overflow.c | cut -d: -f1");
	if (!line)
		return;
	line[strcspn(line, "\n")] = '\0';
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --whatis 0x%llx > whatis.txt "
				 "2>/dev/null; grep -q '^  recorded by heapprof: block 0x%llx of 40 "
				 "bytes (as requested)' whatis.txt && grep -q "
				 "'^      alloc_parser+0x[0-9a-f]* in overflow  .*overflow.c:%s$' "
				 "whatis.txt && grep -q '^  0x%llx is 0 bytes past the 40 bytes it was "
				 "allocated with$' whatis.txt",
				 dir, b, victim - 8, parser, line, victim - 8), 0,
		      "--whatis at the damaged header: alloc_parser overflow.c:LINE");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --damage > damage.txt "
				 "2>/dev/null; grep -q '^damage at 0x%llx: bad chunk size: holds "
				 "0x4141414141414141' damage.txt && grep -q "
				 "'^      alloc_parser+0x[0-9a-f]* in overflow  .*overflow.c:%s$' "
				 "damage.txt",
				 dir, b, victim - 8, line), 0,
		      "--damage: the damage and the overrunner's stack");
	/* the listing is the recorder's; the damage follows it, and its
	 * JSON has it with the recorded stack */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core 2>/dev/null | grep -q "
				 "\"^damage: 1 inconsistency in the heap's headers and lists; 80 "
				 "bytes not walked\" && %s/heapprof core --json kernel.core "
				 "2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); "
				 "d=r[\"damage\"]; assert len(d)==1 and d[0][\"address\"]==\"0x%llx\", d; "
				 "f=d[0][\"before\"][\"recorded\"][\"frames\"][0][\"symbols\"][0]; "
				 "assert f[\"function\"]==\"alloc_parser\" and f[\"line\"]==%s, f'",
				 dir, b, b, victim - 8, line), 0,
		      "the recorder's listing and JSON carry the damage and the stack");
	free(line);
	/* The free glibc aborted in never happened: the victim is in use, in
	 * the core (the thread's slot, heapprof_root version 5) and in the
	 * fatal snapshot, as in the heap */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core > live.txt 2> notes.txt; "
				 "grep -q '^live blocks: 8, 4700 bytes; in use 4700 bytes' live.txt && "
				 "grep -q '^heapprof: 1 block(s) being freed when the process died' "
				 "notes.txt && grep -q '^  still reachable  0x%llx         64 bytes  "
				 "stack [0-9]*  alloc_victim' live.txt",
				 dir, b, victim), 0,
		      "core: 8 blocks, 4,700 bytes in use, the victim among them (was 7, 4,636)");
	{
		char path[700];
		struct hp_capture *cap;
		struct hpq_sum v, all;

		snprintf(path, sizeof path, "%s/cap.hpf", dir);
		cap = hpq_load(path);
		if (!expect_true(cap != NULL, "the fatal snapshot's capture loads"))
			return;
		v = hpq_match(cap, (const char *const[]){"alloc_victim", "main", NULL});
		all = hpq_total(cap);
		expect_eq_u64(v.alloc_count, 1, "fatal snapshot: the victim allocated once");
		expect_eq_u64(v.free_count, 0, "and not freed (glibc aborted in its free)");
		expect_eq_u64(all.alloc_count - all.free_count, 8, "8 blocks in use at the crash");
		expect_eq_u64(all.alloc_bytes - all.free_bytes, 4700, "4,700 bytes");
		hpq_free(cap);
	}
}

/* A write after free over a tcache link: reported where it is (the
 * freed block's first word), the list not followed into the garbage. */
HP_TEST(core_damage_write_after_free)
{
	const char *dir = core_dir("uaf");
	unsigned long long freed2;
	char *o;

	if (kernel_core_of(dir, "uaf", 0))
		return;
	freed2 = addr(dir, "freed2");
	o = hp_test_sh_out("cd %s && %s/heapprof core --json kernel.core 2>err.txt | python3 -c "
			   "'%s'", dir, hp_test_build(), flatten_py);
	if (!o)
		return;
	char want[64];
	snprintf(want, sizeof want, "0x%llx", freed2);
	expect_str(value(o, "ndamage"), "1", "one inconsistency");
	expect_str(value(o, "what"), "a damaged tcache link", "a damaged tcache link");
	expect_str(value(o, "damage"), want, "at the freed block's first word");
	expect_str(value(o, "block"), want, "in the freed block");
	expect_str(value(o, "value"), "0x4242424242424242", "holding the bytes written");
	expect_str(value(o, "unwalked"), "0", "every chunk walked");
	free(o);
	expect_eq_u64(hp_test_sh("grep -qx 'heapprof: tcache: a damaged link 0x4242424242424242 at "
				 "0x%llx (in the free chunk 0x%llx): the list is not followed "
				 "further' %s/err.txt", freed2, freed2, dir), 0,
		      "one line on stderr says it");
}

/* A write after free of zeros over a tcache link: the list ends early,
 * one chunk where the bin counts two; the count says it, and the lost
 * chunk is found free by the key every tcache element carries. */
HP_TEST(core_damage_tcache_count)
{
	const char *dir = core_dir("uafzero");
	unsigned long long freed1, freed2, keep;
	char *o;

	if (kernel_core_of(dir, "uafzero", 0))
		return;
	freed1 = addr(dir, "freed1");
	freed2 = addr(dir, "freed2");
	keep = addr(dir, "keep");
	expect_true(freed1 && freed2 == freed1 + 48 && keep == freed2 + 48,
		    "freed1, freed2 and keep follow each other");
	o = hp_test_sh_out("cd %s && %s/heapprof core --json kernel.core 2>err.txt | python3 -c "
			   "'%s'", dir, hp_test_build(), flatten_py);
	if (!o)
		return;
	expect_str(value(o, "ndamage"), "1", "one inconsistency");
	expect_str(value(o, "what"), "a tcache bin whose count is not its list's length",
		   "the bin's count against its list");
	expect_str(value(o, "value"), "0x2", "the count: 2");
	expect_str(value(o, "unwalked"), "0", "every chunk walked");
	free(o);
	expect_eq_u64(hp_test_sh("grep -qx 'heapprof: tcache: the bin of 48-byte chunks counts 2 "
				 "but its list holds 1 (a link written over?): 1 more found free by "
				 "the tcache key 0x[0-9a-f]*' %s/err.txt", dir), 0,
		      "one line on stderr says it, and the chunk found by its key");
	/* freed1 is free, not in use: only keep is the program's 40-byte block */
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --whatis 0x%llx "
				 "2>/dev/null | grep -q 'free (tcache)' && %s/heapprof core "
				 "kernel.core --whatis 0x%llx 2>/dev/null | grep -q 'allocated'",
				 dir, hp_test_build(), freed1, hp_test_build(), keep), 0,
		      "freed1 free (tcache), keep allocated");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --damage 2>/dev/null | "
				 "grep -q '^  the block whose count it is: 0x[0-9a-f]* (648 bytes), "
				 "malloc.s own (a thread.s tcache)$'", dir, hp_test_build()), 0,
		      "--damage names the tcache whose count it is");
}

/* A tcache link written over with a chunk of another size (keep, 112
 * bytes, in the list of 48-byte chunks): reported at the link. */
HP_TEST(core_damage_link_to_another_size)
{
	const char *dir = core_dir("uafsize");
	unsigned long long freed2, keep;

	if (kernel_core_of(dir, "uafsize", 0))
		return;
	freed2 = addr(dir, "freed2");
	keep = addr(dir, "keep");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --damage > damage.txt "
				 "2>err.txt; grep -q '^damage at 0x%llx: a free list.s chunk of "
				 "another size than its bin.s: holds 0x[0-9a-f]*; the chunk at "
				 "0x%llx (arena 0); it leads to block 0x%llx$' damage.txt && grep -qx "
				 "'heapprof: tcache: 0x%llx (at 0x%llx) is a chunk of 112 bytes in the "
				 "list of 48-byte chunks: the list is not followed further' err.txt",
				 dir, hp_test_build(), freed2, freed2 - 16, keep, keep, freed2), 0,
		      "--damage: freed2's link leads to keep, 112 bytes, not 48");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --whatis 0x%llx "
				 "2>/dev/null | grep -q 'allocated'", dir, hp_test_build(), keep), 0,
		      "keep stays allocated");
}

/* A double free glibc let through (a fastbin loop x -> y -> x): reported
 * at y's link, which leads back to x; the loop is not followed. */
HP_TEST(core_damage_double_free)
{
	const char *dir = core_dir("double");
	unsigned long long x, y;

	if (kernel_core_of(dir, "double", 0))
		return;
	x = addr(dir, "x");
	y = addr(dir, "y");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core --damage > damage.txt "
				 "2>/dev/null; grep -q '^damage at 0x%llx: a chunk listed twice (a "
				 "double free, or a loop): holds 0x[0-9a-f]*; the chunk at 0x%llx "
				 "(arena 0); it leads to block 0x%llx$' damage.txt",
				 dir, hp_test_build(), y, y - 16, x), 0,
		      "--damage: y's link leads back to x, listed twice");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof core kernel.core 2>/dev/null | grep -q "
				 "'^free: 7 chunks in tcache, 2 in fastbins, 0 in bins (360 bytes)'",
				 dir, hp_test_build()), 0,
		      "x and y in the fastbin once each, the 7 in tcache");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
