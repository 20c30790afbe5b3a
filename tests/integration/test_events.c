/*
 * test_events.c - the event log (heapprof run --events): tests/programs/
 * evlife's blocks of known sizes, lifetimes, times and threads, read back
 * one by one (report --blocks), by lifetime (--lived-under, --lived-over),
 * by window (--between) and by thread (--thread) in report, folded export,
 * flamegraph and diff; the same totals with and without the log; the
 * program's output and status unchanged; one clear line without a log;
 * a capture cut inside the log read with one damage line; the blocks as
 * JSON (report --blocks --json); the charts and report --timeline under a
 * selection; the page's stacked timeline from the log, read in headless
 * Chromium (its data at known times, no script error; a screenshot in
 * build/html-events.png for a person to look at); the log's bytes an event
 * on bench/macro/churn within the budget of 4.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../../src/format/format.h"
#include "../../src/analyzer/events_timeline.h"

/* The capture of evlife with --events (recorded once). */
static const char *with_log(void)
{
	static char hpf[512];

	if (!hpf[0]) {
		snprintf(hpf, sizeof hpf, "%s/evlife.hpf", hp_test_tmp());
		expect_eq_u64(hp_test_sh("%s/heapprof run -q --events -o %s -- "
					 "%s/tests/programs/evlife > %s.out",
					 hp_test_build(), hpf, hp_test_build(), hpf),
			      3, "evlife exits 3 under run --events");
	}
	return hpf;
}

static const char *without_log(void)
{
	static char hpf[512];

	if (!hpf[0]) {
		snprintf(hpf, sizeof hpf, "%s/evlife-nolog.hpf", hp_test_tmp());
		expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/evlife "
					 "> /dev/null",
					 hp_test_build(), hpf, hp_test_build()),
			      3, "evlife exits 3 under run");
	}
	return hpf;
}

/* The value of "key": N in the totals of report --json ARGS FILE. */
static long long total(const char *args, const char *hpf, const char *key)
{
	char *json = hp_test_sh_out("%s/heapprof report --json %s %s", hp_test_build(), args, hpf);
	char want[64];
	const char *t, *k;
	long long v = -1;

	if (!json)
		return -1;
	snprintf(want, sizeof want, "\"%s\": ", key);
	t = strstr(json, "\"totals\": {");
	k = t ? strstr(t, want) : NULL;
	if (k)
		v = atoll(k + strlen(want));
	free(json);
	return v;
}

HP_TEST(events_output_and_status_unchanged)
{
	char out[600];
	char *bare = hp_test_sh_out("%s/tests/programs/evlife; echo status=$?", hp_test_build());

	expect_str(bare, "done\nstatus=3\n", "bare");
	free(bare);
	snprintf(out, sizeof out, "%s.out", with_log());
	char *rec = hp_test_sh_out("cat %s", out);
	expect_str(rec, "done\n", "under run --events: the same output (and status 3, above)");
	free(rec);
}

/* The lines of report --blocks for blocks of size, counted, each matched
 * against re (size, thread and times). */
static void expect_blocks(const char *out, const char *re, unsigned want, const char *why)
{
	regex_t rx;
	unsigned n = 0;
	const char *line = out;

	if (!expect_eq_u64(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB | REG_NEWLINE), 0, re))
		return;
	while (line && *line) {
		const char *end = strchr(line, '\n');
		char buf[512];
		size_t len = end ? (size_t)(end - line) : strlen(line);
		snprintf(buf, sizeof buf, "%.*s", (int)len, line);
		n += regexec(&rx, buf, 0, NULL, 0) == 0;
		line = end ? end + 1 : NULL;
	}
	regfree(&rx);
	expect_eq_u64(n, want, why);
}

HP_TEST(events_blocks_one_by_one)
{
	char *out = hp_test_sh_out("%s/heapprof report --blocks %s", hp_test_build(), with_log());

	if (!out)
		return;
	static const char header[] = "address                  size  type                 thread  "
				     "          allocated s      freed s     lived ms  stack\n";
	expect_true(strncmp(out, header, strlen(header)) == 0, "the header");
	/* address, size, type, thread, allocated, freed, lived (ms), stack id */
#define LT(size, type, thread, alloc, freed, lived)                                  \
	"^0x[0-9a-f]+ +" size "  " type " +" thread " +" alloc " +" freed " +" lived \
	"  [1-9][0-9]*$"
#define L(size, thread, alloc, freed, lived) \
	"^0x[0-9a-f]+ +" size "  unknown +" thread " +" alloc " +" freed " +" lived "  [1-9][0-9]*$"
	expect_blocks(out,
		      L("1001", "evlife", "0\\.[0-4][0-9]{5}", "0\\.[0-4][0-9]{5}",
			"[0-9]\\.[0-9]{3}"),
		      1000, "1,000 x 1001 B by main at once, freed within 10 ms");
	expect_blocks(out,
		      L("5005", "evlife", "0\\.[0-4][0-9]{5}", "1\\.[0-9]{6}",
			"(9[0-9]{2}|1[0-9]{3})\\.[0-9]{3}"),
		      20, "20 x 5005 B by main, freed after 0.9 to 2 s, past 1 s");
	expect_blocks(out,
		      L("2002", "ev-worker", "0\\.[5-6][0-9]{5}", "0\\.[6-9][0-9]{5}",
			"1[0-9]{2}\\.[0-9]{3}"),
		      50, "50 x 2002 B by ev-worker from 0.5 s, freed 100 to 200 ms later");
	expect_blocks(out, LT("3003", "Leak", "ev-worker", "0\\.[5-6][0-9]{5}", "-", "-"), 7,
		      "7 x 3003 B by ev-worker, never freed, typed Leak after their allocation");
	expect_blocks(out, L("4004", "evlife", "1\\.[0-9]{6}", "1\\.[0-9]{6}", "[0-9]\\.[0-9]{3}"),
		      3, "3 x 4004 B by main after 1 s, freed at once");
#undef L
#undef LT
	free(out);
}

HP_TEST(events_lifetimes)
{
	const char *hpf = with_log();

	/* 1,000 x 1001 B and 3 x 4004 B freed at once. */
	expect_eq_u64(total("--focus phase_ --lived-under 100ms", hpf, "alloc_objects"), 1003,
		      "lived under 100 ms: blocks");
	expect_eq_u64(total("--focus phase_ --lived-under 100ms", hpf, "alloc_bytes"),
		      1000 * 1001 + 3 * 4004, "lived under 100 ms: bytes");
	/* 20 x 5005 B (1 s) and the 7 x 3003 B never freed (0.5 s by the end). */
	expect_eq_u64(total("--focus phase_ --lived-over 300ms", hpf, "alloc_objects"), 27,
		      "lived over 300 ms: blocks");
	expect_eq_u64(total("--focus phase_ --lived-over 300ms", hpf, "inuse_bytes"), 7 * 3003,
		      "lived over 300 ms: in use at the end, the 7 never freed");
	/* The 50 x 2002 B lived 100 to 200 ms. */
	expect_eq_u64(total("--focus phase_ --lived-over 90ms --lived-under 300ms", hpf,
			    "alloc_objects"),
		      50, "lived 90 to 300 ms: blocks");
	expect_eq_u64(total("--focus phase_ --lived-under 10min", hpf, "alloc_objects"),
		      1000 + 20 + 50 + 3, "every block freed");
}

HP_TEST(events_time_window)
{
	const char *hpf = with_log();

	/* 0.3 s to 0.8 s: the worker's 57 blocks, 50 freed in it. */
	expect_eq_u64(total("--focus phase_ --between 0.3s 0.8s", hpf, "alloc_objects"), 57,
		      "allocated in the window");
	expect_eq_u64(total("--focus phase_ --between 0.3s 0.8s", hpf, "free_objects"), 50,
		      "freed in the window");
	expect_eq_u64(total("--focus phase_ --between 0.3s,0.8s", hpf, "inuse_bytes"), 7 * 3003,
		      "left at its end (FROM,TO)");
	expect_eq_u64(total("--focus phase_ --between 0.3s,0.8s", hpf, "peak_bytes"),
		      50 * 2002 + 7 * 3003, "the most in use in the window");
	/* 0.55 s to 0.8 s: nothing allocated, the 50 freed. */
	char *out = hp_test_sh_out("%s/heapprof report --focus phase_ --between 550ms 800ms %s | "
				   "grep '^window'",
				   hp_test_build(), hpf);
	expect_true(out && strstr(out, "allocated 0 blocks (0 B), freed 50 (97.8 KiB; 50 "
				       "allocated before it), left 0 (0 B)"),
		    "the window line: freed in it, allocated before it");
	free(out);
	expect_eq_u64(total("--focus phase_ --between 0s 0.3s", hpf, "alloc_objects"), 1020,
		      "the first 0.3 s: main's");
}

HP_TEST(events_threads_in_every_view)
{
	const char *hpf = with_log();
	char *out;

	expect_eq_u64(total("--focus phase_ --thread ev-worker", hpf, "alloc_objects"), 57,
		      "report --thread ev-worker");
	expect_eq_u64(total("--focus phase_ --thread evlife", hpf, "alloc_objects"), 1023,
		      "report --thread evlife");
	expect_eq_u64(total("--thread nosuch", hpf, "alloc_objects"), 0, "no such thread");
	/* Folded: ev-worker's stacks are phase_worker's, and only they. */
	out = hp_test_sh_out(
		"%s/heapprof export --format folded --metric allocated -o - --thread ev-worker %s "
		"| grep -c phase_worker; %s/heapprof export --format folded --metric allocated -o - "
		"--thread ev-worker %s | grep -c -v phase_worker || true",
		hp_test_build(), hpf, hp_test_build(), hpf);
	expect_true(out && strcmp(out, "1\n0\n") == 0,
		    "folded --thread: one line, worker;phase_worker (both its sites)");
	free(out);
	out = hp_test_sh_out("%s/heapprof flamegraph --thread evlife -o - %s | grep -c "
			     "phase_worker || true",
			     hp_test_build(), hpf);
	expect_true(out && strcmp(out, "0\n") == 0, "flamegraph --thread evlife: no worker frame");
	free(out);
	out = hp_test_sh_out("%s/heapprof flamegraph --thread ev-worker -o - %s | grep -c "
			     "phase_short || true",
			     hp_test_build(), hpf);
	expect_true(out && strcmp(out, "0\n") == 0, "flamegraph --thread ev-worker: no main frame");
	free(out);
	/* diff of the capture with itself, the worker's blocks only: nothing
	 * grew. */
	expect_eq_u64(hp_test_sh("%s/heapprof diff --thread ev-worker --fail-if-grew 1 %s %s "
				 "> /dev/null",
				 hp_test_build(), hpf, hpf),
		      0, "diff --thread");
}

HP_TEST(events_same_totals)
{
	static const char *const keys[] = {"alloc_objects", "alloc_bytes", "inuse_objects",
					   "inuse_bytes", "peak_bytes"};

	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		long long a = total("--focus phase_", without_log(), keys[i]);
		long long b = total("--focus phase_", with_log(), keys[i]);
		long long c = total("--focus phase_ --between 0s 1min", with_log(), keys[i]);
		expect_true(a > 0 && a == b, keys[i]);
		expect_true(b == c, keys[i]);
		if (a != b || b != c)
			printf("  %s: without %lld, with %lld, from the log %lld\n", keys[i], a, b,
			       c);
	}
	/* Every block, whatever its stack: the log's totals are the snapshot's. */
	expect_eq_u64((uint64_t)total("--between 0s 1min", with_log(), "alloc_objects"),
		      (uint64_t)total("", with_log(), "alloc_objects"), "all blocks");
}

HP_TEST(events_need_the_log)
{
	static const char *const opts[] = {"report --blocks",
					   "report --lived-under 1ms",
					   "report --lived-over 1ms",
					   "report --between 0s 1s",
					   "report --thread x",
					   "flamegraph -o - --thread x",
					   "export --format folded -o - --lived-under 1ms"};
	const char *hpf = without_log();
	char want[700];

	snprintf(want, sizeof want,
		 "heapprof: %s: the capture has no event log: record with heapprof run --events\n",
		 hpf);
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
		char *err = hp_test_sh_out("%s/heapprof %s %s 2>&1 >/dev/null; echo status=$?",
					   hp_test_build(), opts[i], hpf);
		char full[800];
		snprintf(full, sizeof full, "%sstatus=1\n", want);
		expect_str(err, full, opts[i]);
		free(err);
	}
}

HP_TEST(events_not_with_a_snapshot)
{
	char want[800];
	char *err;

	snprintf(want, sizeof want,
		 "heapprof: %s: a snapshot (--snapshot N, FILE@N) and the event log's options "
		 "(--lived-under, --lived-over, --between, --thread) are not taken together\n"
		 "status=1\n",
		 with_log());
	err = hp_test_sh_out("%s/heapprof report --snapshot 1 --thread x %s 2>&1 >/dev/null; echo "
			     "status=$?",
			     hp_test_build(), with_log());
	expect_str(err, want, "report --snapshot 1 --thread");
	free(err);
	err = hp_test_sh_out("%s/heapprof diff --thread x %s@1 %s 2>&1 >/dev/null; echo status=$?",
			     hp_test_build(), with_log(), with_log());
	expect_str(err, want, "diff FILE@1 --thread");
	free(err);
}

/* The offset of the first record of type in a capture, or 0. */
static size_t record_at(const char *path, unsigned type)
{
	FILE *f = fopen(path, "rb");
	unsigned char h[HP_FORMAT_FRAME_BYTES];
	size_t off = HP_FORMAT_FILE_HEADER_BYTES;

	if (!f)
		return 0;
	while (fseek(f, (long)off, SEEK_SET) == 0 && fread(h, 1, sizeof h, f) == sizeof h) {
		unsigned t = h[4] | h[5] << 8;
		size_t stored = h[8] | h[9] << 8 | (size_t)h[10] << 16 | (size_t)h[11] << 24;
		if (t == type) {
			fclose(f);
			return off;
		}
		off += sizeof h + stored;
	}
	fclose(f);
	return 0;
}

HP_TEST(events_truncated_log)
{
	char cut[600];
	size_t at = record_at(with_log(), HP_REC_EVENTS_BITS);
	char *out;

	if (!expect_true(at > 0, "the capture has an EVENTS record"))
		return;
	snprintf(cut, sizeof cut, "%s/cut.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("head -c %zu %s > %s", at + HP_FORMAT_FRAME_BYTES + 40, with_log(),
				 cut),
		      0, "cut inside the first chunk");
	out = hp_test_sh_out("%s/heapprof report --blocks %s 2>&1 >/dev/null; echo status=$?",
			     hp_test_build(), cut);
	expect_true(out && strstr(out, ": damaged, showing what is readable: ") &&
			    strchr(out, '\n') && strcmp(strchr(out, '\n'), "\nstatus=0\n") == 0,
		    "one damage line, then the blocks before the cut");
	if (out)
		printf("  %s", out);
	free(out);
	/* A chunk flipped in the middle: that chunk lost alone. */
	snprintf(cut, sizeof cut, "%s/flip.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("cp %s %s && printf '\\377' | dd of=%s bs=1 seek=%zu conv=notrunc "
				 "2>/dev/null",
				 with_log(), cut, cut, at + HP_FORMAT_FRAME_BYTES + 30),
		      0, "a byte flipped inside the first chunk");
	out = hp_test_sh_out("%s/heapprof report --focus phase_ --json %s 2>&1 >/dev/null; "
			     "echo status=$?",
			     hp_test_build(), cut);
	expect_true(out && strstr(out, "EVENTS") == NULL && strstr(out, "status=0"),
		    "report without a selection reads the snapshots as ever");
	free(out);
	out = hp_test_sh_out("%s/heapprof report --blocks %s 2>&1 >/dev/null | grep -c damaged",
			     hp_test_build(), cut);
	expect_str(out, "1\n", "--blocks: one damage line");
	free(out);
}

/* python3 reading JSON on standard input: prints what prog prints. */
static char *py(const char *cmd, const char *prog)
{
	return hp_test_sh_out("%s | python3 -c '%s'", cmd, prog);
}

HP_TEST(events_blocks_json)
{
	char cmd[1200];
	char *out;

	/* The worker's 57 blocks, each with its stack's frames. */
	snprintf(cmd, sizeof cmd, "%s/heapprof report --blocks --json --thread ev-worker %s",
		 hp_test_build(), with_log());
	out = py(cmd, "import json,sys\n"
		      "d = json.load(sys.stdin)\n"
		      "b = d[\"blocks\"]\n"
		      "print(d[\"listed\"], d[\"shown\"], len(b))\n"
		      "print(sorted(set((x[\"size\"], x[\"type\"], x[\"thread\"]) for x in b)))\n"
		      "mid = [x for x in b if x[\"size\"] == 2002]\n"
		      "print(len(mid), all(x[\"lifetime_ns\"] == x[\"free_ns\"] - x[\"alloc_ns\"] and\n"
		      "    100e6 <= x[\"lifetime_ns\"] < 200e6 for x in mid))\n"
		      "leak = [x for x in b if x[\"size\"] == 3003]\n"
		      "print(len(leak), all(x[\"free_ns\"] is None and x[\"lifetime_ns\"] is None\n"
		      "    for x in leak))\n"
		      "print(all(0.5e9 <= x[\"alloc_ns\"] < 0.7e9 for x in b),\n"
		      "    [x[\"alloc_ns\"] for x in b] == sorted(x[\"alloc_ns\"] for x in b))\n"
		      "print(all(x[\"address\"].startswith(\"0x\") for x in b),\n"
		      "    len(set(x[\"address\"] for x in b)))\n"
		      "print(sorted(set(d[\"stacks\"][str(x[\"stack_id\"])][0][\"function\"]\n"
		      "    for x in b)), sorted(d[\"stacks\"]) == sorted(set(str(x[\"stack_id\"])\n"
		      "    for x in b)))\n");
	expect_str(out,
		   "57 57 57\n"
		   "[(2002, 'unknown', 'ev-worker'), (3003, 'Leak', 'ev-worker')]\n"
		   "50 True\n"
		   "7 True\n"
		   "True True\n"
		   "True 57\n"
		   "['phase_worker'] True\n",
		   "report --blocks --json --thread ev-worker: 50 x 2002 B freed 100 to 200 ms "
		   "later, 7 x 3003 B Leak never freed, by allocation time, phase_worker's");
	free(out);
	/* Bounded: --top 5 shows the first 5 of the 1,080 blocks of phase_*
	 * and glibc's (main's 20 and 1,000 first), and says how many matched. */
	snprintf(cmd, sizeof cmd, "%s/heapprof report --blocks --json --top 5 --between 0s 0.3s %s",
		 hp_test_build(), with_log());
	out = py(cmd, "import json,sys\n"
		      "d = json.load(sys.stdin)\n"
		      "print(d[\"listed\"] >= 1020, d[\"shown\"], len(d[\"blocks\"]),\n"
		      "    [x[\"size\"] for x in d[\"blocks\"]], d[\"window\"])\n");
	expect_str(out,
		   "True 5 5 [5005, 5005, 5005, 5005, 5005] {'from_ns': 0, 'to_ns': 300000000}\n",
		   "--top 5: the first five, main's 5005 B blocks; the window");
	free(out);
	out = hp_test_sh_out("%s/heapprof report --blocks --top 2 --thread ev-worker %s | tail -n 1",
			     hp_test_build(), with_log());
	expect_str(out, "... 55 more blocks (--top 0 lists them all)\n",
		   "the text listing: --top 2, then how many more");
	free(out);
}

/* The peak RSS (KiB) of heapprof ARGS, and its exit status in *status. */
static long long peak_rss(const char *args, int *status)
{
	char *out = hp_test_sh_out(
		"python3 -c 'import resource,subprocess,sys\n"
		"r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
		"print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "
		"%s/heapprof %s",
		hp_test_build(), args);
	long long kib = -1;

	*status = -1;
	if (out && sscanf(out, "%d %lld", status, &kib) != 2)
		kib = -1;
	free(out);
	return kib;
}

/* The log's readers hold little beside the capture's events: on
 * tests/programs/threads' 2,000,000 events (8 threads' chunks interleaved
 * in the file, each block freed 16 allocations after it, often in a later
 * chunk), each reader's peak RSS stays within 8 bytes an event (16 MiB)
 * of report's, which reads no log; a reader that held every block (48
 * bytes each and more) passes it by 100 MiB and more. And every block is
 * matched across the chunks: thread_alloc's 1,000,000, all freed. */
HP_TEST(events_readers_bounded)
{
	static const char *const readers[] = {
		"html -o %s.html %s",
		"report --between 0s 1min %s%s",
		"report --blocks --json --top 1 %s%s",
		"report --timeline --lived-under 1min --thread threads %s%s",
		"flamegraph --lived-over 0s -o %s.svg %s",
	};
	char hpf[512], args[1200];
	long long base, rss;
	int status;
	char *out;

	snprintf(hpf, sizeof hpf, "%s/threads-events.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --events -o %s -- %s/tests/programs/threads",
				 hp_test_build(), hpf, hp_test_build()),
		      0, "threads runs under run --events");
	snprintf(args, sizeof args, "report %s", hpf);
	base = peak_rss(args, &status);
	expect_eq_u64((uint64_t)status, 0, "report");
	expect_true(base > 0, "report's peak RSS");
	for (size_t i = 0; i < sizeof readers / sizeof *readers; i++) {
		snprintf(args, sizeof args, readers[i], i == 0 || i == 4 ? hpf : "", hpf);
		rss = peak_rss(args, &status);
		expect_eq_u64((uint64_t)status, 0, readers[i]);
		printf("heapprof %s: peak RSS %lld KiB (report's %lld KiB)\n", args, rss, base);
		expect_true(rss > 0 && rss <= base + 16 * 1024,
			    "within 16 MiB (8 bytes an event) of report's peak RSS");
	}
	expect_eq_u64(total("--focus thread_alloc --between 0s 1min", hpf, "alloc_objects"),
		      1000000, "every block of the threads");
	expect_eq_u64(total("--focus thread_alloc --between 0s 1min", hpf, "free_objects"),
		      1000000, "every one freed: each free matched across chunks");
	expect_eq_u64(total("--focus thread_alloc --lived-over 1min", hpf, "alloc_objects"), 0,
		      "none lived a minute");
	snprintf(args, sizeof args, "%s/heapprof report --blocks --json --top 1 %s",
		 hp_test_build(), hpf);
	out = py(args, "import json,sys\n"
		       "d = json.load(sys.stdin)\n"
		       "print(d[\"listed\"] >= 1000000, d[\"shown\"])\n");
	expect_str(out, "True 1\n", "--blocks: every block listed, the first shown");
	free(out);
}

/* The log's size on bench/macro/churn (1 thread, random sizes of 8 to 512
 * bytes in a ring of 1,024 blocks, 44 stacks): the capture with --events
 * less the capture without, over its events (two an operation), within
 * the budget of 4 bytes an event (issue 26; bench/macro/events.sh gives
 * the figure and the CPU: 3.73 for 2,000,000 operations). */
HP_TEST(events_bytes_an_event_on_churn)
{
	char prog[512], hpf[2][600];
	struct stat st[2];
	const long ops = 200000;

	snprintf(prog, sizeof prog, "%s/churn", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("cc -std=c11 -O2 -g -pthread -o %s bench/macro/churn.c", prog),
			   0, "bench/macro/churn builds"))
		return;
	for (int e = 0; e < 2; e++) {
		snprintf(hpf[e], sizeof hpf[e], "%s/churn-%d.hpf", hp_test_tmp(), e);
		expect_eq_u64(hp_test_sh("%s/heapprof run -q %s -o %s -- %s 1 %ld > /dev/null",
					 hp_test_build(), e ? "--events" : "", hpf[e], prog, ops),
			      0, "churn runs");
		if (stat(hpf[e], &st[e]) != 0)
			return;
	}
	double per = (double)(st[1].st_size - st[0].st_size) / (double)(2 * ops);
	printf("  %.3f bytes an event (%lld bytes for %ld events)\n", per,
	       (long long)(st[1].st_size - st[0].st_size), 2 * ops);
	expect_true(per > 1 && per <= 4, "at most 4 bytes an event");
}

HP_TEST(events_timeline_follows_the_selection)
{
	static const char chart[] = "heap in use (#) over time: the selected blocks, from the "
				    "event log per 1 ms\n118.3 KiB |";
	char cmd[1200];
	char *out;

	/* --thread ev-worker by type: its two types alone, from the log. */
	snprintf(cmd, sizeof cmd,
		 "%s/heapprof report --json --by type --focus phase_ --thread ev-worker %s",
		 hp_test_build(), with_log());
	out = py(cmd, "import json,sys\n"
		      "for g in json.load(sys.stdin)[\"timeline\"]:\n"
		      "    s = g[\"series\"]\n"
		      "    print(g[\"key\"], g[\"max_inuse_bytes\"], max(p[1:] for p in s), s[-1][1:],\n"
		      "          all(p[0] % 1000000 == 0 for p in s[:-1]),\n"
		      "          0.5e9 <= s[0][0] < 0.7e9)\n");
	expect_str(out,
		   "unknown (avg 2.0 KiB) 100100 [100100, 50] [0, 0] True True\n"
		   "Leak 21021 [21021, 7] [21021, 7] True True\n",
		   "report --json --by type --thread ev-worker: timeline from the log, per ms");
	free(out);
	/* --lived-under 100ms by stack: main's short blocks, one at a time. */
	snprintf(cmd, sizeof cmd,
		 "%s/heapprof report --json --by function --focus phase_ --lived-under 100ms %s",
		 hp_test_build(), with_log());
	out = py(cmd, "import json,sys\n"
		      "for g in json.load(sys.stdin)[\"timeline\"]:\n"
		      "    print(g[\"key\"], g[\"max_inuse_bytes\"], g[\"series\"][-1][1:])\n");
	expect_str(out, "phase_late 4004 [0, 0]\nphase_short 1001 [0, 0]\n",
		   "--lived-under 100ms: the blocks freed at once, one in use at a time");
	free(out);
	/* Text: --between 0.3s 0.8s by thread, the chart from 0.3 s. */
	out = hp_test_sh_out("%s/heapprof report --width 100 --timeline --by thread --focus phase_ "
			     "--between 0.3s 0.8s %s | sed -n '/^bytes in use over time/,$p'",
			     hp_test_build(), with_log());
	expect_true(out && strstr(out, "bytes in use over time, by thread (the selected blocks, "
				       "from the event\nlog per 1 ms;") &&
			    strstr(out, "    highest       at  0.300 s  ") &&
			    strstr(out, "  0.800 s\n  118.3 KiB  0.5") &&
			    strstr(out, "| ev-worker\n") &&
			    !strstr(out, "| evlife") && strstr(out, "  at the end (0.800 s): 20.5 KiB\n"),
		    "report --timeline --between 0.3s 0.8s --by thread: ev-worker's 118.3 KiB "
		    "(50 x 2002 + 7 x 3003 B) alone, 20.5 KiB at the end");
	if (out)
		printf("%s", out);
	free(out);
	/* The heap chart of the text report: the selected blocks only (no
	 * RSS), its scale topped by their peak, 118.3 KiB. */
	out = hp_test_sh_out("%s/heapprof report --width 100 --focus phase_ --thread ev-worker %s "
			     "| sed -n '/^heap in use/,/points$/p'",
			     hp_test_build(), with_log());
	expect_true(out && strncmp(out, chart, strlen(chart)) == 0 &&
			    !strchr(strchr(out, '\n') + 1, ':') && /* no RSS */
			    strstr(out, "^ the peak, 118.3 KiB at 0.5"),
		    "the heap chart: the worker's blocks from the log, topped by their 118.3 KiB");
	if (out)
		printf("%s", out);
	free(out);
}

/* The buckets' rule (docs/events.md "Over time, from the log"): 1 ms,
 * or the smallest of 2, 5, 10, 20, 50 ms... that makes fewer than 2,000
 * buckets. */
HP_TEST(events_timeline_bucket_rule)
{
	static const struct {
		double span_s, bucket_ms;
	} want[] = {{0, 1},      {1.0, 1},   {1.999, 1},  {2.0, 2},     {3.999, 2},
		    {4.0, 5},    {9.999, 5}, {10.0, 10},  {19.99, 10},  {20.0, 20},
		    {99.9, 50},  {100, 100}, {3600, 2000}, {86400, 50000}};

	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		uint64_t span = (uint64_t)(want[i].span_s * 1e9 + 0.5);
		uint64_t w = hp_events_tl_bucket_ns(span);
		char why[96];
		snprintf(why, sizeof why, "a span of %g s: buckets of %g ms", want[i].span_s,
			 want[i].bucket_ms);
		expect_eq_u64(w, (uint64_t)(want[i].bucket_ms * 1e6), why);
		expect_true(span / w < HP_EVENTS_TL_MAX_BUCKETS, "fewer than 2,000 buckets");
	}
}

/* --- the page, in headless Chromium -------------------------------------- */

static const char chromium_flags[] =
	"--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
	"--disable-background-networking --disable-component-update --disable-sync "
	"--hide-scrollbars --window-size=1400,1000";

/* The page's data and chart at known times of evlife, as key=value lines
 * in <pre id="hp-result"> (test_html.c's way). */
static const char page_driver[] =
	"var out = [];\n"
	"function put(k, v) { out.push(k + '=' + v); }\n"
	"try {\n"
	"var E = hpReport.data.events, at = hpReport.eventsAt;\n"
	"put('bucket_ns', E.bucket_ns);\n"
	"put('times', E.t.length <= 2002 && E.t.every(function (t, i) {\n"
	"\treturn (t % 1000000 === 0 || t === E.to_ns) && (!i || E.t[i - 1] < t); }));\n"
	"put('groupings', hpReport.eventGroups().map(function (g) { return g.id; }).join(','));\n"
	"var L = 'unknown (avg 4.9 KiB) [unknown]', M = 'unknown (avg 2.0 KiB) [unknown]',\n"
	"\tK = 'Leak [explicit]', end = E.to_ns / 1e9;\n"
	"put('long', [0.3, 0.58, 0.7, end].map(function (s) { return at('type', L, s); }));\n"
	"put('mid', [0.3, 0.58, 0.7, end].map(function (s) { return at('type', M, s); }));\n"
	"put('leak', [0.3, 0.58, 0.7, end].map(function (s) { return at('type', K, s); }));\n"
	"put('worker', [0.3, 0.58, 0.7].map(function (s) { return at('thread', 'ev-worker', s); }));\n"
	"put('main', [0.3, 0.58, 0.7].map(function (s) { return at('thread', 'evlife', s); }));\n"
	"var i58 = E.t.filter(function (t) { return t <= 0.58e9; }).length - 1;\n"
	"put('total_058', E.total.v[i58]);\n"
	"put('total_max', E.total.max);\n"
	"var p = hpReport.eventsPlot();\n"
	"put('stack_top_058', p.data[1][i58]);\n"
	"put('series', p.series.length - 1);\n"
	"put('canvas', document.querySelectorAll('#hp-events canvas').length);\n"
	"hpReport.set({evby: 'thread'});\n"
	"put('by_thread', hpReport.eventsPlot().series.slice(1).map(function (s) {\n"
	"\treturn s.label; }).join(','));\n"
	"put('hash', location.hash.indexOf('evby=thread') >= 0);\n"
	"} catch (e) { hpErrors.push('driver: ' + e); }\n"
	"put('errors', hpErrors.length ? hpErrors.join(' | ') : 'none');\n"
	"document.getElementById('hp-result').textContent = '\\n' + out.join('\\n') + '\\n';\n";

/* The value of key in the dumped DOM's result, or "". */
static void result(const char *dom, const char *key, char *buf, size_t cap)
{
	char want[64];
	const char *p;
	size_t n;

	buf[0] = '\0';
	snprintf(want, sizeof want, "\n%s=", key);
	p = dom ? strstr(dom, "<pre id=\"hp-result\">") : NULL;
	if (!p || !(p = strstr(p, want)))
		return;
	p += strlen(want);
	n = strcspn(p, "\n");
	snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

/* page run in headless Chromium with driver (a script that writes
 * "\nkey=value" lines into #hp-result) after it, and a recorder of script
 * errors before it: the DOM it dumps, or NULL (said). */
static char *drive_page(const char *page, const char *driver)
{
	char driven[700], dom_path[700];
	char *html;
	const char *head, *end;
	FILE *f;

	snprintf(driven, sizeof driven, "%s-driven.html", page);
	snprintf(dom_path, sizeof dom_path, "%s.dom", page);
	html = hp_test_sh_out("cat %s", page);
	head = html ? strstr(html, "<head>\n") : NULL;
	end = html ? strstr(html, "</body>") : NULL;
	if (!expect_true(head && end && (f = fopen(driven, "w")) != NULL, "the page's parts")) {
		free(html);
		return NULL;
	}
	head += strlen("<head>\n");
	fwrite(html, 1, (size_t)(head - html), f);
	fputs("<script>\nwindow.hpErrors = [];\nwindow.onerror = function (msg, src, line, col) "
	      "{\n\thpErrors.push(msg + ' at ' + line + ':' + col);\n};\n</script>\n",
	      f);
	fwrite(head, 1, (size_t)(end - head), f);
	fprintf(f, "<pre id=\"hp-result\"></pre>\n<script>\n%s</script>\n", driver);
	fputs(end, f);
	fclose(f);
	free(html);
	if (!expect_eq_u64(hp_test_sh("rm -rf %s/ev.profile && timeout 60 chromium %s "
				      "--user-data-dir=%s/ev.profile --dump-dom 'file://%s' > %s "
				      "2>/dev/null",
				      hp_test_tmp(), chromium_flags, hp_test_tmp(), driven, dom_path),
			   0, "chromium runs the page"))
		return NULL;
	return hp_test_sh_out("cat %s", dom_path);
}

HP_TEST(events_page_timeline_in_browser)
{
	char page[600], shot[600];
	char *dom = NULL, v[512];

	if (!hp_test_need("chromium", "chromium"))
		return;
	snprintf(page, sizeof page, "%s/evlife.html", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof html -o %s %s", hp_test_build(), page,
				      with_log()),
			   0, "heapprof html"))
		return;
	if (!(dom = drive_page(page, page_driver)))
		return;
	result(dom, "errors", v, sizeof v);
	expect_str(v, "none", "no script error");
	result(dom, "bucket_ns", v, sizeof v);
	expect_str(v, "1000000", "a 1 s run: per millisecond");
	result(dom, "times", v, sizeof v);
	expect_str(v, "true", "times on the milliseconds (or the log's end), at most 2,002");
	result(dom, "groupings", v, sizeof v);
	expect_str(v, "type,thread,context,stack", "stacked by type, thread, context, stack");
	/* 20 x 5005 B from 0 s to 1 s; 50 x 2002 B from 0.5 s to 0.6 s; 7 x
	 * 3003 B Leak from 0.5 s on; at 0.3, 0.58, 0.7 s and the log's end. */
	result(dom, "long", v, sizeof v);
	expect_str(v, "100100,100100,100100,0", "type unknown (avg 4.9 KiB): main's 20 x 5005 B");
	result(dom, "mid", v, sizeof v);
	expect_str(v, "0,100100,0,0", "type unknown (avg 2.0 KiB): the worker's 50 x 2002 B");
	result(dom, "leak", v, sizeof v);
	expect_str(v, "0,21021,21021,21021", "type Leak: 7 x 3003 B, never freed");
	result(dom, "worker", v, sizeof v);
	expect_str(v, "0,121121,21021", "thread ev-worker");
	result(dom, "main", v, sizeof v);
	expect_str(v, "100100,100100,100100", "thread evlife");
	result(dom, "total_058", v, sizeof v);
	expect_str(v, "221221", "in use at 0.58 s: 100,100 + 100,100 + 21,021");
	result(dom, "total_max", v, sizeof v);
	expect_str(v, "221221", "the highest: the same");
	result(dom, "stack_top_058", v, sizeof v);
	expect_str(v, "221221", "the stacked chart's top at 0.58 s: the total");
	result(dom, "series", v, sizeof v);
	expect_str(v, "5", "five types stacked (the runtime's suppressed)");
	result(dom, "canvas", v, sizeof v);
	expect_true(atoi(v) >= 1, "the chart is drawn");
	result(dom, "by_thread", v, sizeof v);
	expect_str(v, "evlife,ev-worker", "by thread: two areas (drawn top first)");
	result(dom, "hash", v, sizeof v);
	expect_str(v, "true", "the grouping in the URL");
	free(dom);
	/* For a person to look at. */
	snprintf(shot, sizeof shot, "%s/html-events.png", hp_test_build());
	hp_test_sh("rm -rf %s/shot.profile && timeout 60 chromium %s --window-size=1400,1200 "
		   "--user-data-dir=%s/shot.profile --virtual-time-budget=3000 --screenshot=%s "
		   "'file://%s' >/dev/null 2>&1",
		   hp_test_tmp(), chromium_flags, hp_test_tmp(), shot, page);
}

/* The page of a selection (html --thread ev-worker): the selection is its
 * snapshot, and the log's chart shows the selected blocks alone, each
 * line held to the end of the run. */
static const char selection_driver[] =
	"var out = [];\n"
	"function put(k, v) { out.push(k + '=' + v); }\n"
	"try {\n"
	"var E = hpReport.data.events, at = hpReport.eventsAt;\n"
	"put('selected', E.selected);\n"
	"var L = 'unknown (avg 4.9 KiB) [unknown]', M = 'unknown (avg 2.0 KiB) [unknown]',\n"
	"\tK = 'Leak [explicit]', end = E.to_ns / 1e9;\n"
	"put('long', at('type', L, 0.3));\n"
	"put('mid', [0.3, 0.58, 0.7, end].map(function (s) { return at('type', M, s); }));\n"
	"put('leak', [0.3, 0.58, 0.7, end].map(function (s) { return at('type', K, s); }));\n"
	"put('threads', hpReport.eventGroups().filter(function (g) { return g.id === 'thread'; })"
	"[0].lines.map(function (l) { return l.label; }).join(','));\n"
	"var p = hpReport.eventsPlot(), x = p.data[0], y = p.data[1];\n"
	"put('plot_end', x[x.length - 1] >= end);\n"
	"put('top_end', y[y.length - 1]);\n"
	"put('hint', document.getElementById('hp-events').previousSibling.textContent"
	".indexOf('The blocks of the selection') === 0);\n"
	"} catch (e) { hpErrors.push('driver: ' + e); }\n"
	"put('errors', hpErrors.length ? hpErrors.join(' | ') : 'none');\n"
	"document.getElementById('hp-result').textContent = '\\n' + out.join('\\n') + '\\n';\n";

HP_TEST(events_page_follows_the_selection)
{
	char page[600], v[512];
	char *dom, *html;

	if (!hp_test_need("chromium", "chromium"))
		return;
	snprintf(page, sizeof page, "%s/evlife-worker.html", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof html --thread ev-worker -o %s %s",
				      hp_test_build(), page, with_log()),
			   0, "heapprof html --thread ev-worker"))
		return;
	html = hp_test_sh_out("cat %s", page);
	expect_true(html && strstr(html, "\"selected\":true"), "the page says its chart is a selection");
	free(html);
	if (!(dom = drive_page(page, selection_driver)))
		return;
	result(dom, "errors", v, sizeof v);
	expect_str(v, "none", "no script error");
	result(dom, "selected", v, sizeof v);
	expect_str(v, "true", "events.selected");
	result(dom, "long", v, sizeof v);
	expect_str(v, "null", "main's 20 x 5005 B are not the worker's: no line");
	result(dom, "mid", v, sizeof v);
	expect_str(v, "0,100100,0,0", "the worker's 50 x 2002 B from 0.5 s to 0.6 s");
	result(dom, "leak", v, sizeof v);
	expect_str(v, "0,21021,21021,21021", "the worker's Leak, 7 x 3003 B, to the end");
	result(dom, "threads", v, sizeof v);
	expect_str(v, "ev-worker", "one thread");
	result(dom, "plot_end", v, sizeof v);
	expect_str(v, "true", "the chart runs to the end of the run");
	result(dom, "top_end", v, sizeof v);
	expect_str(v, "21021", "at the end the chart's top is the Leak still in use");
	result(dom, "hint", v, sizeof v);
	expect_str(v, "true", "the chart's line says it shows the selection");
	free(dom);
	/* Without a selection the page says so too. */
	snprintf(page, sizeof page, "%s/evlife-all.html", hp_test_tmp());
	html = hp_test_sh_out("%s/heapprof html -o %s %s >/dev/null && cat %s", hp_test_build(),
			      page, with_log(), page);
	expect_true(html && strstr(html, "\"selected\":false"), "every block: events.selected false");
	free(html);
	/* A capture without a log: one line, exit 1. */
	html = hp_test_sh_out("%s/heapprof html --thread x -o %s/none.html %s 2>&1; echo rc=$?",
			      hp_test_build(), hp_test_tmp(), without_log());
	expect_true(html && strstr(html, "has no event log") && strstr(html, "rc=1"),
		    "html --thread on a capture without a log");
	free(html);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
