/*
 * test_events.c - the event log (heapprof run --events): tests/programs/
 * evlife's blocks of known sizes, lifetimes, times and threads, read back
 * one by one (report --blocks), by lifetime (--lived-under, --lived-over),
 * by window (--between) and by thread (--thread) in report, folded export,
 * flamegraph and diff; the same totals with and without the log; the
 * program's output and status unchanged; one clear line without a log;
 * a capture cut inside the log read with one damage line.
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
	size_t at = record_at(with_log(), HP_REC_EVENTS);
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

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
