/*
 * test_core.c - `heapprof core` on cores of tests/programs/coreheap, a
 * program run without heapprof whose heap is known exactly (its header
 * has the table): counts per size and per C++ type, every printed block's
 * reachability, --whatis, the main_arena heuristic against the symbol,
 * and bad input.
 *
 * Two cores: the kernel's, from abort() with RLIMIT_CORE raised, in the
 * test's directory (when /proc/sys/kernel/core_pattern writes a file
 * there: "core", or "core" with core_uses_pid; a pattern that pipes to a
 * helper such as systemd-coredump or apport, or names another directory,
 * sends the core away, and then this test says so and uses gcore
 * instead), and gdb's gcore of the program while it waits on a pipe,
 * after which the program goes on and checks its blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"

/* The JSON report as "key=value" lines, by python3's json. */
static const char flatten_py[] =
	"import json,sys\n"
	"r=json.load(sys.stdin)\n"
	"h=r[\"heap\"]\n"
	"print(\"walked=%d\" % h[\"walked\"])\n"
	"for k in (\"main_arena\",\"found_by\",\"arenas\",\"heaps\",\"mmapped_chunks\"):\n"
	"  print(\"%s=%s\" % (k, h.get(k)))\n"
	"for k,v in r[\"totals\"].items(): print(\"totals.%s=%s\" % (k, v))\n"
	"for s in r[\"by_size\"]:\n"
	"  for k in (\"blocks\",\"definitely_lost\",\"indirectly_lost\",\"still_reachable\"):\n"
	"    print(\"size.%d.%s=%d\" % (s[\"size\"], k, s[k]))\n"
	"for s in r[\"by_type\"]:\n"
	"  for k in (\"blocks\",\"definitely_lost\",\"indirectly_lost\",\"still_reachable\"):\n"
	"    print(\"type.%s.%s=%d\" % (s[\"type\"], k, s[k]))\n"
	"for b in r[\"blocks\"]:\n"
	"  print(\"block.%s=%s\" % (b[\"address\"], b[\"reachability\"]))\n"
	"  print(\"mmapped.%s=%d\" % (b[\"address\"], b[\"mmapped\"]))\n"
	"  print(\"btype.%s=%s\" % (b[\"address\"], b[\"type\"]))\n";

static const char whatis_py[] =
	"import json,sys\n"
	"r=json.load(sys.stdin)\n"
	"for w in r[\"whatis\"]:\n"
	"  a=w[\"address\"]\n"
	"  for k in (\"block\",\"offset\",\"state\",\"type\",\"reachability\",\"pointers\"):\n"
	"    print(\"%s.%s=%s\" % (a, k, w.get(k)))\n"
	"  print(\"%s.roots=%s\" % (a, \";\".join(p[\"root\"] for p in w.get(\"pointed_by\",[]) "
	"if \"root\" in p)))\n"
	"  print(\"%s.blocks=%s\" % (a, \";\".join(p[\"block\"] for p in w.get(\"pointed_by\",[]) "
	"if \"block\" in p)))\n";

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

static uint64_t num(const char *lines, const char *fmt, const char *a, const char *b)
{
	char key[256];
	snprintf(key, sizeof key, fmt, a, b);
	return strtoull(value(lines, key), NULL, 10);
}

/* The address the program printed for name, "0x..." (static). */
static const char *addr(const char *dir, const char *name)
{
	static char out[32][64];
	static int next;
	char path[512], line[128], *r = out[next++ % 32];
	FILE *f;

	snprintf(path, sizeof path, "%s/addrs.txt", dir);
	r[0] = '\0';
	if (!(f = fopen(path, "r")))
		return r;
	while (fgets(line, sizeof line, f)) {
		size_t n = strlen(name);
		if (strncmp(line, name, n) == 0 && line[n] == ' ') {
			snprintf(r, 64, "%s", line + n + 1);
			r[strcspn(r, "\n")] = '\0';
		}
	}
	fclose(f);
	return r;
}

static char *flat(const char *core, const char *env)
{
	return hp_test_sh_out("%s %s/heapprof core --json %s | python3 -c '%s'", env,
			      hp_test_build(), core, flatten_py);
}

static void expect_size(const char *o, unsigned long size, uint64_t blocks, uint64_t lost,
			uint64_t indirect, uint64_t reach)
{
	char s[32], why[128];
	snprintf(s, sizeof s, "%lu", size);
	snprintf(why, sizeof why, "size %lu: blocks", size);
	expect_eq_u64(num(o, "size.%s.%s", s, "blocks"), blocks, why);
	snprintf(why, sizeof why, "size %lu: definitely lost", size);
	expect_eq_u64(num(o, "size.%s.%s", s, "definitely_lost"), lost, why);
	snprintf(why, sizeof why, "size %lu: indirectly lost", size);
	expect_eq_u64(num(o, "size.%s.%s", s, "indirectly_lost"), indirect, why);
	snprintf(why, sizeof why, "size %lu: still reachable", size);
	expect_eq_u64(num(o, "size.%s.%s", s, "still_reachable"), reach, why);
}

static void expect_type(const char *o, const char *type, uint64_t blocks, uint64_t lost,
			uint64_t reach)
{
	char why[128];
	snprintf(why, sizeof why, "%s: blocks", type);
	expect_eq_u64(num(o, "type.%s.%s", type, "blocks"), blocks, why);
	snprintf(why, sizeof why, "%s: definitely lost", type);
	expect_eq_u64(num(o, "type.%s.%s", type, "definitely_lost"), lost, why);
	snprintf(why, sizeof why, "%s: still reachable", type);
	expect_eq_u64(num(o, "type.%s.%s", type, "still_reachable"), reach, why);
}

static void expect_block(const char *o, const char *dir, const char *name, const char *reach)
{
	char key[128], why[128];
	snprintf(key, sizeof key, "block.%s", addr(dir, name));
	snprintf(why, sizeof why, "the block printed as %s (%s)", name, addr(dir, name));
	expect_str(value(o, key), reach, why);
}

/* Everything the figures of a core of coreheap must be. */
static void check_figures(const char *core, const char *dir)
{
	char *o = flat(core, ""), *h;

	if (!o)
		return;
	expect_str(value(o, "walked"), "1", "the heap was walked");
	expect_str(value(o, "found_by"), "symbol", "main_arena by libc6-dbg's symbol");
	expect_str(value(o, "arenas"), "2", "the main arena and the second thread's");
	expect_str(value(o, "mmapped_chunks"), "1", "the 1 MiB block");
	expect_size(o, 104, 5, 5, 0, 0);
	expect_size(o, 88, 3, 1, 2, 0);
	expect_size(o, 152, 4, 0, 0, 4);
	expect_size(o, 1000, 1, 0, 0, 1);
	expect_size(o, 200, 1, 0, 0, 1);
	expect_size(o, 456, 1, 0, 0, 1);
	expect_size(o, 328, 1, 0, 0, 1);
	expect_size(o, 1052656, 1, 0, 0, 1);
	expect_type(o, "Circle", 2, 0, 2);
	expect_type(o, "Square", 3, 2, 1);
	expect_type(o, "geo::Poly<int>", 3, 1, 2);
	static const char *const kept[] = {"global", "big", "list_head", "list_second", "circle",
					   "reg", "stack", "tstack", "poly"};
	static const char *const lost[] = {"lost", "square_lost", "lost_head", "poly_lost"};
	for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
		expect_block(o, dir, kept[i], "still reachable");
	for (size_t i = 0; i < sizeof lost / sizeof *lost; i++)
		expect_block(o, dir, lost[i], "definitely lost");
	expect_block(o, dir, "indirect", "indirectly lost");
	{
		char key[96];
		snprintf(key, sizeof key, "mmapped.%s", addr(dir, "big"));
		expect_str(value(o, key), "1", "the 1 MiB block is an mmapped chunk");
		snprintf(key, sizeof key, "btype.%s", addr(dir, "square_lost"));
		expect_str(value(o, key), "Square", "a Square through a Shape pointer");
	}
	/* The signature heuristic finds the same main_arena and the same
	 * blocks as the symbol does. */
	h = flat(core, "HEAPPROF_CORE_HEURISTIC=1");
	if (h) {
		char *hb = strstr(h, "\nblock."), *ob = strstr(o, "\nblock.");
		expect_str(value(h, "found_by"), "signature", "HEAPPROF_CORE_HEURISTIC=1");
		expect_str(value(h, "main_arena"), value(o, "main_arena"),
			   "the signature finds the main_arena the symbol names");
		expect_true(hb && ob && strcmp(hb, ob) == 0,
			    "the same blocks, types and reachability without mp_ and main_arena");
	}
	free(h);
	free(o);
}

static void check_whatis(const char *core, const char *dir)
{
	char second20[64];
	unsigned long long s2 = strtoull(addr(dir, "list_second"), NULL, 16);
	char *o;

	snprintf(second20, sizeof second20, "0x%llx", s2 + 20);
	o = hp_test_sh_out("%s/heapprof core %s --json --whatis %s %s %s %s %s %s %s %s %s %s "
			   "| python3 -c '%s'",
			   hp_test_build(), core, addr(dir, "global"), second20, addr(dir, "reg"),
			   addr(dir, "stack"), addr(dir, "tstack"), addr(dir, "circle"),
			   addr(dir, "tcache_free"), addr(dir, "fastbin_free"), addr(dir, "lost"),
			   addr(dir, "indirect"), whatis_py);
	if (!o)
		return;
	char key[128];
#define V(a, field) (snprintf(key, sizeof key, "%s.%s", (a), (field)), value(o, key))
	const char *g = addr(dir, "global");
	expect_str(V(g, "block"), g, "global: its own block");
	expect_str(V(g, "offset"), "0", "global: offset 0");
	expect_str(V(g, "roots"), "g_keep+0 in coreheap", "global: pointed to by g_keep only");
	expect_str(V(second20, "block"), addr(dir, "list_second"), "an interior address");
	expect_str(V(second20, "offset"), "20", "20 bytes into the second node");
	expect_str(V(second20, "blocks"), addr(dir, "list_head"), "pointed to by the first node");
	expect_str(V(second20, "roots"), "", "and by no root");
	expect_true(strncmp(V(addr(dir, "reg"), "roots"), "register r12 of thread ", 23) == 0,
		    "the block only the second thread's r12 holds");
	expect_str(V(addr(dir, "reg"), "pointers"), "1", "and nothing else");
	expect_true(strncmp(V(addr(dir, "stack"), "roots"), "the stack of thread ", 20) == 0,
		    "main's stack holds its block");
	expect_true(strncmp(V(addr(dir, "tstack"), "roots"), "the stack of thread ", 20) == 0,
		    "the second thread's stack holds its block");
	expect_str(V(addr(dir, "circle"), "type"), "Circle", "a Circle");
	expect_str(V(addr(dir, "circle"), "roots"), "g_shapes+0 in coreheap", "in g_shapes[0]");
	expect_str(V(addr(dir, "tcache_free"), "state"), "free (tcache)", "freed into tcache");
	expect_str(V(addr(dir, "fastbin_free"), "state"), "free (fastbin)", "freed into a fastbin");
	expect_str(V(addr(dir, "lost"), "pointers"), "0", "nothing points to a lost block");
	expect_str(V(addr(dir, "lost"), "reachability"), "definitely lost", "lost");
	expect_str(V(addr(dir, "indirect"), "blocks"), addr(dir, "lost_head"),
		   "the indirectly lost node: pointed to by the lost head only");
#undef V
	free(o);
}

/* The kernel's core of `coreheap abort` in dir; its path in core, or 0
 * when core_pattern sends cores elsewhere. */
static int kernel_core(const char *dir, char *core, size_t cap)
{
	char pattern[256] = "";
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "r");

	if (f) {
		if (!fgets(pattern, sizeof pattern, f))
			pattern[0] = '\0';
		fclose(f);
	}
	pattern[strcspn(pattern, "\n")] = '\0';
	if (strcmp(pattern, "core") != 0) {
		printf("  core_pattern is '%s', not 'core': the kernel's core goes elsewhere; "
		       "using gcore\n", pattern);
		return 0;
	}
	hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && %s/tests/programs/coreheap abort "
		   "> addrs.txt 2>/dev/null", dir, dir, hp_test_build());
	if (hp_test_sh("cd %s && set -- core*; [ -f \"$1\" ] && mv \"$1\" kernel.core", dir)) {
		printf("  no core written in %s (a container without core dumps?): using gcore\n",
		       dir);
		return 0;
	}
	snprintf(core, cap, "%s/kernel.core", dir);
	return 1;
}

/* gcore of `coreheap wait`, run from a copy in dir (removed after the
 * dump when remove_exe): returns 0, the program's exit status checked. */
static int gcore_core(const char *dir, char *core, size_t cap, int remove_exe)
{
	int st;

	if (!hp_test_need("gcore", "gdb"))
		return -1;
	st = hp_test_sh(
		"set -e; mkdir -p %s; cd %s; rm -f in gc.* status; cp %s/tests/programs/coreheap .; "
		"mkfifo in; ./coreheap wait < in > addrs.txt & p=$!; exec 3>in; i=0; "
		"while ! grep -q '^ready' addrs.txt; do i=$((i+1)); [ $i -lt 600 ] || exit 9; "
		"sleep 0.1; done; gcore -o gc $p > gcore.log 2>&1; mv gc.$p gcore.core; %s "
		"echo go >&3; exec 3>&-; wait $p; grep -q '^alive' addrs.txt",
		dir, dir, hp_test_build(), remove_exe ? "rm coreheap;" : "");
	expect_eq_u64(st, 0, "gcore dumped coreheap, which then went on and exited 0");
	snprintf(core, cap, "%s/gcore.core", dir);
	return st ? -1 : 0;
}

static const char *core_dir(const char *what)
{
	static char dir[512];
	snprintf(dir, sizeof dir, "%s/%s", hp_test_tmp(), what);
	return dir;
}

HP_TEST(core_abort_exact_figures_and_whatis)
{
	char core[600];
	const char *dir = core_dir("abort");

	if (!kernel_core(dir, core, sizeof core) && gcore_core(dir, core, sizeof core, 0))
		return;
	check_figures(core, dir);
	check_whatis(core, dir);
}

HP_TEST(core_gcore_running_program)
{
	char core[600];
	const char *dir = core_dir("gcore");

	if (gcore_core(dir, core, sizeof core, 0))
		return;
	check_figures(core, dir);
	check_whatis(core, dir);
}

/* A static program's core (gdb's gcore): its heap is walked all the same,
 * main_arena found by its symbol in the program itself; 3 blocks of 1000
 * bytes it keeps in a global (reachable), 2 of 3000 whose pointers it
 * dropped (a stale copy in a register or on the stack may keep one
 * "reachable": a conservative scan cannot know). */
HP_TEST(core_static_program)
{
	const char *dir = core_dir("static");

	if (!hp_test_need("gdb", "gdb"))
		return;
	expect_eq_u64(hp_test_sh("mkdir -p %s && cd %s && printf '%%s\\n' '#include <stdlib.h>' '#include <unistd.h>' "
				 "'#include <string.h>' 'void *volatile keep[3];' "
				 "'int main(void){ for (int i = 0; i < 3; i++) keep[i] = malloc(1000);' "
				 "'for (int i = 0; i < 2; i++) { char *volatile p = malloc(3000); "
				 "memset(p, 0, 3000); p = 0; }' 'sleep(30); return 0; }' > st.c && "
				 "cc -static -O1 -g -o st st.c && (./st & echo $! > pid) && sleep 0.5 && "
				 "gcore -o st.core $(cat pid) > /dev/null 2>&1; kill $(cat pid); "
				 "%s/heapprof core st.core.$(cat pid) > out.txt 2> err.txt",
				 dir, dir, hp_test_build()),
		      0, "heapprof core reads a static program's core");
	if (!expect_eq_u64(hp_test_sh("cd %s && grep -q 'main_arena at 0x[0-9a-f]* (found by its symbol)' "
				 "out.txt && grep -Eq '^ +1000 +3 +3000 +0 +0 +3$' out.txt && "
				 "grep -Eq '^ +3000 +2 +6000 ' out.txt",
				 dir),
		      0, "its blocks by size: 3 x 1000 reachable, 2 x 3000"))
		hp_test_sh("cat %s/out.txt %s/err.txt", dir, dir);
}

HP_TEST(core_binary_gone_changed_or_given)
{
	char core[600], *o;
	const char *dir = core_dir("gone");

	if (gcore_core(dir, core, sizeof core, 1))
		return;
	/* gone: sizes and reachability stay, the types go, one line says why */
	o = hp_test_sh_out("%s/heapprof core --json %s 2>%s/err.txt | python3 -c '%s'",
			   hp_test_build(), core, dir, flatten_py);
	if (o) {
		expect_size(o, 104, 5, 5, 0, 0);
		expect_size(o, 88, 3, 1, 2, 0);
		expect_size(o, 1052656, 1, 0, 0, 1);
		expect_eq_u64(num(o, "type.%s.%s", "Circle", "blocks"), 0, "no type named");
	}
	free(o);
	expect_eq_u64(hp_test_sh("grep -qx 'heapprof: %s/coreheap: is gone: its C++ types and "
				 "globals are not named' %s/err.txt", dir, dir), 0,
		      "one line says the program is gone");
	/* --exe names it again */
	o = hp_test_sh_out("%s/heapprof core --json --exe %s/tests/programs/coreheap %s | "
			   "python3 -c '%s'", hp_test_build(), hp_test_build(), core, flatten_py);
	if (o)
		expect_type(o, "Square", 3, 2, 1);
	free(o);
	/* another program is refused by its build-id */
	expect_eq_u64(hp_test_sh("%s/heapprof core --exe %s/heapprof %s 2>&1 >/dev/null | grep -qx "
				 "'heapprof: %s/heapprof: has changed since the dump (build-id "
				 "differs): its C++ types and globals are not named'",
				 hp_test_build(), hp_test_build(), core, hp_test_build()),
		      0, "a changed binary is said in one line");
}

HP_TEST(core_bad_input)
{
	char core[600];
	const char *dir = core_dir("bad");
	const char *b = hp_test_build();

	if (gcore_core(dir, core, sizeof core, 0))
		return;
	/* another architecture: e_machine 183 (aarch64) */
	hp_test_sh("cp %s %s/arm.core && printf '\\267\\000' | dd of=%s/arm.core bs=1 seek=18 "
		   "conv=notrunc 2>/dev/null", core, dir, dir);
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/arm.core > %s/out.txt 2> %s/err.txt", b, dir,
				 dir, dir), 1, "another architecture: exit 1");
	expect_eq_u64(hp_test_sh("grep -qx 'heapprof: %s/arm.core: a core of aarch64 (ELF machine "
				 "183, 64-bit): heapprof reads x86-64 cores' %s/err.txt && "
				 "[ $(wc -l < %s/err.txt) = 1 ]", dir, dir, dir), 0,
		      "one line names the architecture");
	/* truncated: the kernel's core (notes first: gcore writes them last,
	 * where a cut takes them) cut at 90%: the last segments (libc's data,
	 * the stack) are gone; the program and its threads are still shown */
	char kcore[600];
	const char *cut = core;
	if (kernel_core(core_dir("bad-kernel"), kcore, sizeof kcore))
		cut = kcore;
	hp_test_sh("head -c $(( $(stat -c %%s %s) * 9 / 10 )) %s > %s/cut.core", cut, cut, dir);
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/cut.core > %s/out.txt 2> %s/err.txt", b, dir,
				 dir, dir), 1, "a truncated core: exit 1");
	expect_eq_u64(hp_test_sh("grep -q '^heapprof: %s/cut.core: truncated: [0-9]* of its [0-9]* "
				 "bytes are missing; what they held is not shown$' %s/err.txt && "
				 "grep -q '^core: ' %s/out.txt", dir, dir, dir), 0,
		      "truncation said in one line, the rest shown");
	if (cut == kcore)
		expect_eq_u64(hp_test_sh("grep -q '^program: coreheap (pid [0-9]*), 2 threads, "
					 "dumped on signal 6 (SIGABRT)$' %s/out.txt", dir), 0,
			      "the program and its threads, from the notes at its start");
	/* cut inside the program headers */
	hp_test_sh("head -c 100 %s > %s/tiny.core", core, dir);
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/tiny.core 2>&1 | grep -qx 'heapprof: "
				 "%s/tiny.core: truncated or damaged: its program headers are not "
				 "all there (100 bytes)'", b, dir, dir), 0, "headers cut off");
	/* not a core */
	expect_eq_u64(hp_test_sh("%s/heapprof core %s/heapprof 2>&1 | grep -qx 'heapprof: "
				 "%s/heapprof: an ELF program or library, not a core dump'", b, b, b),
		      0, "a program is not a core");
	expect_eq_u64(hp_test_sh("%s/heapprof core %s --whatis 0xzz 2>/dev/null", b, core), 2,
		      "a bad address is a usage error");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
