/*
 * test_symcache.c - the persistent symbol cache (src/analyzer/symbols/symcache.h)
 * through `heapprof run` and `heapprof symbolize`, each test with a cache
 * directory of its own (HEAPPROF_CACHE_DIR).
 *
 * What a cache hit gives must be what the binaries give: the SYMBOLS
 * records are compared byte for byte (the bytes `heapprof symbolize`
 * appends to copies of one capture) or field for field (two runs of
 * tests/programs/known with address randomization off, setarch -R). That
 * libdw was not asked is seen in the counts `--verbose` prints ("N
 * addresses from the cache, M from debug info (K modules opened)"),
 * checked exactly against the capture's own frame addresses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/analyzer/model/model.h"
#include "../../src/format/capture.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

struct counts {
	size_t cached, debuginfo, opened;
	int found;
};

/* The counts of the --verbose line in out. */
static struct counts counts_of(const char *out)
{
	struct counts c = {0};
	const char *p = out ? strstr(out, "symbols: ") : NULL;

	c.found = p && sscanf(p,
			      "symbols: %zu addresses from the cache, %zu from debug info "
			      "(%zu modules opened)",
			      &c.cached, &c.debuginfo, &c.opened) == 3;
	if (!c.found)
		printf("  no counts in: %s\n", out ? out : "(nothing)");
	return c;
}

/* A scratch path of this test binary (kept until the end: a pool, so
 * that LeakSanitizer has nothing to say). */
static const char *tmp(const char *name)
{
	static char pool[512][512];
	static size_t next;
	char *b = pool[next++ % 512];

	snprintf(b, sizeof pool[0], "%s/%s", hp_test_tmp(), name);
	return b;
}

/* Frame addresses of the capture's SYMBOLS record in modules on disk with
 * a build-id: those the cache can hold. */
static size_t cacheable(const char *path)
{
	struct hp_capture cap;
	char err[256];
	size_t n = 0;

	if (hp_capture_load(path, &cap, err, sizeof err))
		return (size_t)-1;
	for (size_t i = 0; i < cap.symbols.naddrs; i++) {
		const struct hp_cap_module *m =
			hp_capture_module_of(&cap, cap.symbols.addrs[i].address - 1);
		n += m && m->path[0] == '/' && m->build_id_len;
	}
	hp_capture_free(&cap);
	return n;
}

/* The capture's SYMBOLS record, decoded, one line per frame (and the
 * module statuses), or NULL. Addresses are shown relative to their
 * module (module index + offset), so that runs can be compared whatever
 * the load addresses. */
static char *symbols_text(const char *path)
{
	struct hp_capture cap;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (hp_capture_load(path, &cap, err, sizeof err))
		return NULL;
	f = open_memstream(&buf, &len);
	for (size_t i = 0; f && i < cap.symbols.nstatus; i++)
		fprintf(f, "module %zu status %llu\n", i,
			(unsigned long long)cap.symbols.status[i]);
	for (size_t i = 0; f && i < cap.symbols.naddrs; i++) {
		const struct hp_cap_symaddr *a = &cap.symbols.addrs[i];
		for (uint32_t k = 0; k < a->count; k++) {
			const struct hp_rec_symframe *fr = &cap.symbols.frames[a->first + k];
			const struct hp_cap_module *m = hp_capture_module_of(&cap, a->address - 1);
			fprintf(f, "%d+%llx %s %s:%llu %llu\n", m ? (int)(m - cap.modules) : -1,
				(unsigned long long)(a->address - (m ? m->bias : 0)),
				cap.symbols.strings[fr->function], cap.symbols.strings[fr->file],
				(unsigned long long)fr->line, (unsigned long long)fr->flags);
		}
	}
	if (f)
		fclose(f);
	hp_capture_free(&cap);
	return buf;
}

/* A capture of known without symbols, made once; copied to name. */
static const char *plain_copy(const char *name)
{
	static int made;
	const char *b = hp_test_build(), *orig = tmp("plain.hpf"), *out = tmp(name);

	if (!made++)
		hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/tests/programs/known "
			   ">/dev/null",
			   b, orig, b);
	hp_test_sh("cp %s %s", orig, out);
	return out;
}

/* Runs heapprof symbolize -v on a fresh copy named name with the cache at
 * dir (NULL: --no-symbol-cache, with HEAPPROF_CACHE_DIR at "never");
 * returns its counts, and the bytes it appended into *added (malloc'd,
 * in hex). */
static struct counts symbolize(const char *name, const char *dir, char **added)
{
	const char *path = plain_copy(name);
	char *out, *tail;
	struct counts c;

	out = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s %s/heapprof symbolize -v %s %s 2>&1",
			     dir ? dir : tmp("never"), hp_test_build(),
			     dir ? "" : "--no-symbol-cache", path);
	c = counts_of(out);
	free(out);
	tail = hp_test_sh_out("tail -c +$(($(stat -c %%s %s) + 1)) %s | od -An -tx1 | tr -d ' \\n'",
			      tmp("plain.hpf"), path);
	if (added)
		*added = tail;
	else
		free(tail);
	return c;
}

HP_TEST(symcache_hit_appends_the_same_bytes)
{
	const char *dir = tmp("cache-bytes");
	char *first = NULL, *second = NULL, *none = NULL, *tail;
	struct counts a, b, n;
	size_t want;

	a = symbolize("b1.hpf", dir, &first);
	b = symbolize("b2.hpf", dir, &second);
	n = symbolize("b3.hpf", NULL, &none);
	want = cacheable(tmp("b1.hpf"));
	expect_true(want > 3 && want != (size_t)-1, "known has frames in modules with build-ids");
	expect_eq_u64(a.cached, 0, "an empty cache answers nothing");
	expect_eq_u64(a.debuginfo, want, "every address read from debug info");
	expect_eq_u64(b.cached, want, "the second time, every address from the cache");
	expect_eq_u64(b.debuginfo, 0, "none from debug info");
	expect_eq_u64(b.opened, 0, "and no module opened by libdw");
	expect_eq_u64(n.cached, 0, "--no-symbol-cache reads nothing from it");
	expect_eq_u64(n.debuginfo, want, "but everything from the binaries");
	tail = hp_test_sh_out("ls -A %s/symbols 2>/dev/null | wc -l", tmp("never"));
	expect_str(tail, "0\n", "and stores nothing");
	free(tail);
	expect_true(first && second && none && strlen(first) > 100, "symbols were appended");
	if (first && second && none) {
		expect_str(second, first, "a hit appends the very bytes a miss appends");
		expect_str(none, first, "and those of a run without the cache");
	}
	free(first);
	free(second);
	free(none);
}

HP_TEST(symcache_second_run_same_symbols)
{
	const char *b = hp_test_build(), *dir = tmp("cache-runs");
	char *out, *s1, *s2, *s3;
	struct counts c1, c2, c3;
	const char *cap[3] = {tmp("r1.hpf"), tmp("r2.hpf"), tmp("r3.hpf")};
	const char *opt[3] = {"", "", "--no-symbol-cache"};
	struct counts *c[3] = {&c1, &c2, &c3};

	if (!hp_test_need("setarch", "util-linux"))
		return;
	/* Without address randomization the two runs have the same
	 * addresses, so their records can be compared whole. */
	for (int i = 0; i < 3; i++) {
		out = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s setarch \"$(uname -m)\" -R "
				     "%s/heapprof run -v %s -o %s -- %s/tests/programs/known "
				     "2>&1 >/dev/null",
				     dir, b, opt[i], cap[i], b);
		*c[i] = counts_of(out);
		free(out);
	}
	s1 = symbols_text(cap[0]);
	s2 = symbols_text(cap[1]);
	s3 = symbols_text(cap[2]);
	expect_eq_u64(c1.cached, 0, "the first run reads debug info");
	expect_eq_u64(c1.debuginfo, cacheable(cap[0]), "for each address");
	expect_eq_u64(c2.cached, cacheable(cap[1]), "the second, the cache alone");
	expect_eq_u64(c2.debuginfo, 0, "no address from debug info");
	expect_eq_u64(c2.opened, 0, "no module opened");
	expect_eq_u64(c3.cached, 0, "--no-symbol-cache: not the cache");
	expect_true(s1 && s2 && s3 && strstr(s1, "known.c:"), "the records name known.c");
	if (s1 && s2 && s3) {
		expect_str(s2, s1, "the second run's SYMBOLS record is the first's");
		expect_str(s3, s1, "and that of a run without the cache");
	}
	free(s1);
	free(s2);
	free(s3);
}

/* The cache file of the capture's program (the module of build-id id). */
static void cache_file_of(const char *dir, const char *capture, char *out, size_t cap)
{
	char *id = hp_test_sh_out("%s/heapprof inspect %s | awk '$1 ~ /known$/ {print $5; exit}'",
				  hp_test_build(), capture);
	if (id)
		id[strcspn(id, "\n")] = '\0';
	snprintf(out, cap, "%s/symbols/%s.hpsym", dir, id ? id : "none");
	free(id);
}

HP_TEST(symcache_damaged_file_is_a_miss)
{
	static const char *const damage[] = {
		/* truncated */
		"truncate -s $(($(stat -c %%s %s) / 2)) %s",
		/* a byte flipped in the middle (the CRC no longer matches) */
		"f=%s; n=$(($(stat -c %%s $f) / 2)); "
		"printf '\\377' | dd of=$f bs=1 seek=$n conv=notrunc status=none; : %s",
		/* another module's file under this build-id */
		"f=%s; for o in $(dirname $f)/*.hpsym; do [ $o != $f ] && cp $o $f && break; done; "
		": %s",
		/* not a cache file at all */
		"head -c 4000 /dev/urandom > %s; : %s",
		/* empty */
		": > %s; : %s",
	};
	const char *dir = tmp("cache-damage");
	char file[4400], *want = NULL, *got = NULL;
	struct counts c;

	symbolize("d0.hpf", NULL, &want);
	symbolize("d1.hpf", dir, NULL);
	cache_file_of(dir, tmp("d1.hpf"), file, sizeof file);
	for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
		char name[32];
		struct stat st;
		expect_eq_u64(stat(file, &st), 0, "the program's cache file is there");
		hp_test_sh(damage[i], file, file);
		snprintf(name, sizeof name, "d%zu.hpf", i + 2);
		c = symbolize(name, dir, &got);
		expect_true(c.found && c.debuginfo > 0,
			    "a damaged file: those addresses are read again");
		expect_true(want && got && strcmp(got, want) == 0,
			    "and the symbols are the binaries' all the same");
		free(got);
		/* The file was written again: a hit once more. */
		snprintf(name, sizeof name, "e%zu.hpf", i + 2);
		c = symbolize(name, dir, NULL);
		expect_eq_u64(c.debuginfo, 0, "the file was made whole again");
	}
	free(want);
}

/* heapprof run -v of prog with the cache at dir; its counts, and the
 * capture's SYMBOLS text in *text. */
static struct counts run_prog(const char *dir, const char *prog, const char *capture, char **text)
{
	char *out = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s %s/heapprof run -v -o %s -- %s 2>&1 "
				   ">/dev/null",
				   dir, hp_test_build(), capture, prog);
	struct counts c = counts_of(out);

	free(out);
	if (text)
		*text = symbols_text(capture);
	return c;
}

/* Frame addresses of the capture in the module whose path ends in name. */
static size_t addresses_in(const char *capture, const char *name)
{
	struct hp_capture cap;
	char err[256];
	size_t n = 0, len = strlen(name);

	if (hp_capture_load(capture, &cap, err, sizeof err))
		return (size_t)-1;
	for (size_t i = 0; i < cap.symbols.naddrs; i++) {
		const struct hp_cap_module *m =
			hp_capture_module_of(&cap, cap.symbols.addrs[i].address - 1);
		size_t pl = m ? strlen(m->path) : 0;
		n += m && pl >= len && strcmp(m->path + pl - len, name) == 0;
	}
	hp_capture_free(&cap);
	return n;
}

HP_TEST(symcache_changed_binary_refreshes)
{
	const char *dir = tmp("cache-stamp"), *b = hp_test_build();
	const char *k1 = tmp("k1/known"), *k2 = tmp("k2/known");
	struct counts c;
	size_t in_k;

	hp_test_sh("mkdir -p %s/k1 %s/k2 && cp %s/tests/programs/known %s", hp_test_tmp(),
		   hp_test_tmp(), b, k1);
	run_prog(dir, k1, tmp("s1.hpf"), NULL);
	c = run_prog(dir, k1, tmp("s2.hpf"), NULL);
	expect_eq_u64(c.debuginfo, 0, "a second run: all from the cache");
	in_k = addresses_in(tmp("s2.hpf"), "/k1/known");
	expect_true(in_k > 2 && in_k != (size_t)-1, "frames fall in the program");

	/* Rebuilt without a new build-id: its mtime changed. */
	hp_test_sh("touch -d '+1 minute' %s", k1);
	c = run_prog(dir, k1, tmp("s3.hpf"), NULL);
	expect_eq_u64(c.debuginfo, addresses_in(tmp("s3.hpf"), "/k1/known"),
		      "a touched binary: its addresses read again, no others");
	c = run_prog(dir, k1, tmp("s4.hpf"), NULL);
	expect_eq_u64(c.debuginfo, 0, "then cached again");

	/* The same build-id at another path. */
	hp_test_sh("cp %s %s", k1, k2);
	c = run_prog(dir, k2, tmp("s5.hpf"), NULL);
	expect_eq_u64(c.debuginfo, addresses_in(tmp("s5.hpf"), "/k2/known"),
		      "a copy elsewhere: its addresses read again");
	expect_true(c.cached > 0, "libc's from the cache");
}

HP_TEST(symcache_installed_debug_info_refreshes)
{
	const char *dir = tmp("cache-dbg"), *b = hp_test_build();
	const char *prog = tmp("dbg/known");
	char *text = NULL, *fresh = NULL;
	struct counts c;

	if (!hp_test_need("objcopy", "binutils"))
		return;
	/* A stripped binary with a debuglink, its debug file put aside: a
	 * package without its -dbg. */
	hp_test_sh("mkdir -p %s/dbg && cd %s/dbg && "
		   "objcopy --only-keep-debug %s/tests/programs/known known.debug && "
		   "objcopy --strip-debug --add-gnu-debuglink=known.debug "
		   "%s/tests/programs/known known && mv known.debug aside.debug",
		   hp_test_tmp(), hp_test_tmp(), b, b);
	run_prog(dir, prog, tmp("g1.hpf"), &text);
	expect_true(text && !strstr(text, "known.c:"), "no lines without the debug file");
	free(text);
	c = run_prog(dir, prog, tmp("g2.hpf"), NULL);
	expect_eq_u64(c.debuginfo, 0, "cached so");

	/* The -dbg is installed: beside the binary, as its debuglink says. */
	hp_test_sh("mv %s/dbg/aside.debug %s/dbg/known.debug", hp_test_tmp(), hp_test_tmp());
	c = run_prog(dir, prog, tmp("g3.hpf"), &text);
	expect_eq_u64(c.debuginfo, addresses_in(tmp("g3.hpf"), "/dbg/known"),
		      "the debug file appeared: the program's addresses read again");
	expect_true(text && strstr(text, "known.c:"), "now with files and lines");
	run_prog("off", prog, tmp("g4.hpf"), &fresh);
	expect_true(text && fresh && strcmp(text, fresh) == 0,
		    "as the binaries say without the cache");
	free(fresh);
	/* The capture made before, symbolized again: from the binaries as
	 * they are now, not from the record it carries. */
	hp_test_sh("cp %s %s && %s/heapprof symbolize --no-symbol-cache %s 2>/dev/null",
		   tmp("g1.hpf"), tmp("g5.hpf"), b, tmp("g5.hpf"));
	fresh = symbols_text(tmp("g5.hpf"));
	expect_true(fresh && strstr(fresh, "known.c:"),
		    "symbolize reads the binaries, not the capture's old record");
	free(text);
	free(fresh);
}

HP_TEST(symcache_unusable_directory_changes_nothing)
{
	const char *b = hp_test_build();
	const char *file = tmp("not-a-dir"), *open_dir = tmp("cache-open");
	char *want = NULL, *got = NULL, *out;
	struct counts c;
	char dir[4400];

	symbolize("u0.hpf", NULL, &want);
	hp_test_sh("echo x > %s", file);
	snprintf(dir, sizeof dir, "%s/cache", file);
	c = symbolize("u1.hpf", dir, &got);
	expect_eq_u64(c.cached + c.debuginfo > 0, 1, "symbolized");
	expect_true(want && got && strcmp(want, got) == 0,
		    "a cache directory that cannot be made: the same symbols");
	free(got);

	/* A directory others may write is not used. */
	hp_test_sh("mkdir -p %s/symbols && chmod 777 %s/symbols", open_dir, open_dir);
	out = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s %s/heapprof run -v -o %s -- "
			     "%s/tests/programs/known 2>&1 >/dev/null",
			     open_dir, b, tmp("u2.hpf"), b);
	expect_true(out && strstr(out, "no symbol cache: the cache directory is not a "
				       "directory of this user alone"),
		    "--verbose says why there is no cache");
	expect_true(out && strstr(out, "heapprof: wrote "), "and the run goes on");
	free(out);
	out = hp_test_sh_out("ls -A %s/symbols | wc -l", open_dir);
	expect_str(out, "0\n", "nothing was written there");
	free(out);
	out = symbols_text(tmp("u2.hpf"));
	expect_true(out && strstr(out, "known.c:"), "with symbols");
	free(out);
	free(want);
}

HP_TEST(symcache_default_places_and_modes)
{
	const char *b = hp_test_build(), *xdg = tmp("xdg"), *home = tmp("home");
	char *out;

	out = hp_test_sh_out("env -u HEAPPROF_CACHE_DIR XDG_CACHE_HOME=%s %s/heapprof symbolize %s "
			     ">/dev/null 2>&1; stat -c '%%a %%n' %s/heapprof %s/heapprof/symbols "
			     "%s/heapprof/symbols/*.hpsym | sed 's|%s/||' | sort -u -k1,1",
			     xdg, b, plain_copy("p1.hpf"), xdg, xdg, xdg, xdg);
	expect_true(out && strstr(out, "700 heapprof\n") && strstr(out, "600 heapprof/symbols/"),
		    "$XDG_CACHE_HOME/heapprof/symbols, directories 0700, files 0600");
	free(out);
	out = hp_test_sh_out("env -u HEAPPROF_CACHE_DIR -u XDG_CACHE_HOME HOME=%s %s/heapprof "
			     "symbolize %s >/dev/null 2>&1; ls %s/.cache/heapprof/symbols | "
			     "grep -c 'hpsym$'",
			     home, b, plain_copy("p2.hpf"), home);
	expect_true(out && atoi(out) >= 2, "else $HOME/.cache/heapprof/symbols");
	free(out);
	out = hp_test_sh_out("env -u HEAPPROF_CACHE_DIR -u XDG_CACHE_HOME -u HOME %s/heapprof "
			     "symbolize -v %s 2>&1",
			     b, plain_copy("p3.hpf"));
	expect_true(out && strstr(out, "no symbol cache: no HOME"), "no HOME: no cache");
	free(out);
	for (int i = 0; i < 2; i++) {
		out = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s %s/heapprof symbolize -v %s 2>&1",
				     i ? "off" : "''", b, plain_copy("p4.hpf"));
		expect_true(out && strstr(out, "no symbol cache: HEAPPROF_CACHE_DIR is off"),
			    "HEAPPROF_CACHE_DIR empty or off: no cache");
		free(out);
	}
}

HP_TEST(symcache_concurrent_writers)
{
	const char *dir = tmp("cache-many"), *b = hp_test_build();
	char *want = NULL, *out;
	struct counts c;

	symbolize("m0.hpf", NULL, &want);
	for (int i = 1; i <= 6; i++) {
		char name[16];
		snprintf(name, sizeof name, "m%d.hpf", i);
		plain_copy(name);
	}
	/* Six at once, as --follow-fork's processes may be. */
	expect_eq_u64(hp_test_sh("cd %s && for i in 1 2 3 4 5 6; do HEAPPROF_CACHE_DIR=%s "
				 "%s/heapprof symbolize m$i.hpf 2>/dev/null & done; wait",
				 hp_test_tmp(), dir, b),
		      0, "six symbolize at once");
	out = hp_test_sh_out("ls -A %s/symbols | grep -v 'hpsym$' | wc -l", dir);
	expect_str(out, "0\n", "no temporary file left");
	free(out);
	c = symbolize("m7.hpf", dir, &out);
	expect_eq_u64(c.debuginfo, 0, "what they wrote is whole: all hits");
	expect_true(want && out && strcmp(want, out) == 0, "the same symbols");
	free(out);
	free(want);
}

HP_TEST(symcache_directory_bound)
{
	const char *dir = tmp("cache-bound"), *b = hp_test_build();
	char *out;

	/* An old 100 KiB file (used long ago), a bound of 64 KiB. */
	hp_test_sh("mkdir -p %s/symbols && head -c 102400 /dev/zero > %s/symbols/00.hpsym && "
		   "touch -d 2001-01-01 %s/symbols/00.hpsym",
		   dir, dir, dir);
	out = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s HEAPPROF_CACHE_MAX=64K %s/heapprof symbolize "
			     "%s 2>/dev/null; ls %s/symbols | tr '\\n' ' '",
			     dir, b, plain_copy("x1.hpf"), dir);
	expect_true(out && !strstr(out, "00.hpsym"), "the oldest file is removed");
	expect_true(out && strstr(out, ".hpsym"), "the new ones stay");
	free(out);
}

HP_TEST(symcache_report_fills_the_cache)
{
	const char *dir = tmp("cache-report"), *b = hp_test_build();
	char *want, *got;
	struct counts c;

	want = hp_test_sh_out("HEAPPROF_CACHE_DIR=off %s/heapprof report %s", b,
			      plain_copy("q1.hpf"));
	got = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s %s/heapprof report %s", dir, b,
			     plain_copy("q2.hpf"));
	expect_true(want && got && strcmp(want, got) == 0 && strstr(want, "known.c:"),
		    "a report through the cache reads the same");
	free(got);
	got = hp_test_sh_out("HEAPPROF_CACHE_DIR=%s %s/heapprof report %s", dir, b,
			     plain_copy("q3.hpf"));
	expect_true(want && got && strcmp(want, got) == 0, "from a filled cache too");
	free(got);
	c = symbolize("q4.hpf", dir, NULL);
	expect_eq_u64(c.debuginfo, 0, "the report filled the cache");
	free(want);
}

HP_TEST(symcache_live_server_fills_the_cache)
{
	const char *dir = tmp("cache-live"), *b = hp_test_build();
	char *out;

	if (!hp_test_need("curl", "curl"))
		return;
	/* Without symbols at the end: only the server symbolizes. */
	out = hp_test_sh_out(
		"cd %s && (HEAPPROF_CACHE_DIR=%s %s/heapprof run --no-symbols --http 127.0.0.1:0 "
		"-o live.hpf -- sleep 2 2>live.err &) && for i in $(seq 100); do "
		"port=$(sed -n 's/.*(port \\([0-9]*\\)).*/\\1/p' live.err); "
		"[ -n \"$port\" ] && break; sleep 0.05; done; "
		"curl -sf -o live.prof http://127.0.0.1:$port/debug/pprof/heap && "
		"ls %s/symbols | grep -c 'hpsym$'; sleep 2.5",
		hp_test_tmp(), dir, b, dir);
	expect_true(out && atoi(out) >= 1, "the server's symbols went through the cache");
	free(out);
}

/* The model of path with embedded_only (or not) and the user's cache at
 * dir: how many of its locations name a function of known.c, how many
 * read "0x..." (module+offset). */
static void embedded_only_counts(const char *path, const char *dir, int embedded_only,
				 size_t *named, size_t *raw)
{
	struct hp_model_options mo = {.snapshot = -1, .embedded_only = embedded_only};
	struct hp_capture cap;
	struct hp_model m;
	char err[256];

	*named = *raw = 0;
	setenv("HEAPPROF_CACHE_DIR", dir, 1);
	if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "the capture loads"))
		return;
	if (expect_eq_u64(hp_model_build(&m, &cap, &mo, err, sizeof err), 0, "a model")) {
		for (size_t i = 0; i < m.nlocations; i++) {
			const struct hp_sym *s = &m.locations[i].syms[0];
			*named += strstr(s->file, "known.c") != NULL;
			*raw += strncmp(s->function, "0x", 2) == 0;
		}
		hp_model_free(&m);
	}
	hp_capture_free(&cap);
	unsetenv("HEAPPROF_CACHE_DIR");
}

HP_TEST(model_embedded_only_opens_no_file)
{
	/* hp_model_options.embedded_only (the fuzz targets, tests/fuzz/views.h):
	 * symbols from the SYMBOLS record alone; no binary and no symbol cache
	 * is opened, so a capture without the record shows module+offset even
	 * where its binaries are on this machine, and leaves no cache behind. */
	const char *plain = plain_copy("eo-plain.hpf"), *dir = tmp("cache-eo");
	const char *with = tmp("eo-symbols.hpf"), *b = hp_test_build();
	size_t named, raw;
	struct stat st;

	embedded_only_counts(plain, dir, 1, &named, &raw);
	expect_eq_u64(named, 0, "without SYMBOLS: no function of known.c");
	expect_true(raw > 0, "module+offset instead");
	expect_true(stat(dir, &st) != 0, "no symbol cache was made");
	/* The same capture, binaries allowed: the test would see them. */
	embedded_only_counts(plain, dir, 0, &named, &raw);
	expect_true(named > 0, "read from the binary, known.c is named");
	expect_true(stat(dir, &st) == 0, "and the cache is filled");
	/* With the record: its names, as without the option. */
	hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/known >/dev/null", b, with, b);
	embedded_only_counts(with, tmp("cache-eo2"), 1, &named, &raw);
	expect_true(named > 0, "with SYMBOLS: known.c is named");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
