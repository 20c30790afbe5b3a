/*
 * test_export.c - `heapprof export` checked by the real readers: known
 * (tests/programs/known.h) recorded, exported as pprof, gperftools and
 * folded stacks, and read back with `go tool pprof` and gperftools'
 * `google-pprof`, whose figures must be exactly those of known.h, on the
 * right functions. A sampled capture's pprof must carry unbiased figures.
 *
 * The tools are required: a missing tool fails the test, naming the
 * Debian package to install (scripts/deps.sh installs them all).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../harness/query.h"
#include "../programs/known.h"

/* --- running the tools ------------------------------------------------ */

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

static const char *tmp(const char *name)
{
	static char paths[8][4200];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof paths[0], "%s/%s", hp_test_tmp(), name);
	return p;
}

/* known recorded once (in full) for every test of this binary. */
static const char *known_capture(void)
{
	static char path[4200];
	static int state; /* 0 not run, 1 ok, -1 failed */

	if (!state) {
		snprintf(path, sizeof path, "%s/known.hpf", hp_test_tmp());
		state = hp_test_sh("%s run -q -o %s -- %s/tests/programs/known", hp(), path,
				   hp_test_build()) == 0 ? 1 : -1;
	}
	expect_true(state == 1, "known runs under heapprof");
	return state == 1 ? path : NULL;
}

/* --- reading the tools' outputs --------------------------------------- */

/* A flat figure; a function the listing leaves out has 0. */
static long long top_flat(const char *out, const char *name)
{
	int found;
	return hp_test_pprof_column(out, name, 0, &found);
}

/* Whether a `-traces` listing holds a trace of this value whose frames,
 * innermost first and joined by ';', start with chain. */
static int has_trace(const char *out, double value, const char *chain)
{
	const char *line = out;
	char frames[4096] = "";
	double v = NAN;

	for (;;) {
		const char *end = line ? strchr(line, '\n') : NULL;
		char buf[1024], a[512], b[512];
		size_t len = line ? (end ? (size_t)(end - line) : strlen(line)) : 0;
		int block_end = !line || !*line || strncmp(line, "-----------+", 12) == 0;

		if (block_end) {
			if (v == value && strncmp(frames, chain, strlen(chain)) == 0)
				return 1;
			frames[0] = '\0';
			v = NAN;
			if (!line || !*line)
				return 0;
		} else if (len < sizeof buf) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			if (strchr(buf, ':')) {
				/* a label ("bytes: 100B") or a header line */
			} else if (sscanf(buf, "%511s %511s", a, b) == 2) {
				v = strtod(a, NULL);
				snprintf(frames, sizeof frames, "%s;", b);
			} else if (sscanf(buf, "%511s", a) == 1 && !isnan(v)) {
				size_t fl = strlen(frames);
				snprintf(frames + fl, sizeof frames - fl, "%s;", a);
			}
		}
		line = end ? end + 1 : NULL;
	}
}

/* `go tool pprof -raw`: sample types, and each sample's values with its
 * chain of functions (innermost first, inlined frames included, ';'
 * after each). */
#define RAW_MAX_VALUES 8
#define RAW_MAX_LOCS 4096
#define RAW_MAX_SAMPLES 2048

struct raw {
	char *text;
	int ntypes;
	char types[RAW_MAX_VALUES][48];
	size_t nsamples;
	struct {
		long long v[RAW_MAX_VALUES];
		unsigned locs[64];
		int nlocs;
		char chain[1024];
	} s[RAW_MAX_SAMPLES];
	char loc[RAW_MAX_LOCS][512]; /* by id: "f;g;" */
};

static struct raw *raw_read(const char *file)
{
	struct raw *r = calloc(1, sizeof *r);
	char *line, *save;
	int section = 0; /* 1 samples header, 2 samples, 3 locations, 4 mappings */
	unsigned last = 0;

	r->text = hp_test_sh_out("go tool pprof -raw %s 2>&1", file);
	if (!r->text) {
		free(r);
		return NULL;
	}
	char *copy = strdup(r->text);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char f[512], *colon;
		unsigned id, map;
		unsigned long long addr;

		if (strncmp(line, "Samples:", 8) == 0) {
			section = 1;
		} else if (strncmp(line, "Locations", 9) == 0) {
			section = 3;
		} else if (strncmp(line, "Mappings", 8) == 0) {
			section = 4;
		} else if (section == 1) {
			char *t, *s2;
			for (t = strtok_r(line, " ", &s2); t && r->ntypes < RAW_MAX_VALUES;
			     t = strtok_r(NULL, " ", &s2))
				snprintf(r->types[r->ntypes++], sizeof r->types[0], "%s", t);
			section = 2;
		} else if (section == 2 && (colon = strchr(line, ':')) && r->nsamples < RAW_MAX_SAMPLES) {
			char *p = line, *e;
			int nv = 0;
			*colon = '\0';
			while (nv < RAW_MAX_VALUES) {
				long long x = strtoll(p, &e, 10);
				if (e == p)
					break;
				r->s[r->nsamples].v[nv++] = x;
				p = e;
			}
			if (nv != r->ntypes)
				continue; /* a label line */
			p = colon + 1;
			while (r->s[r->nsamples].nlocs < 64) {
				unsigned long x = strtoul(p, &e, 10);
				if (e == p)
					break;
				r->s[r->nsamples].locs[r->s[r->nsamples].nlocs++] = (unsigned)x;
				p = e;
			}
			r->nsamples++;
		} else if (section == 3) {
			if (sscanf(line, " %u: 0x%llx M=%u %511s", &id, &addr, &map, f) == 4 ||
			    sscanf(line, " %u: 0x%llx %511s", &id, &addr, f) == 3) {
				last = id < RAW_MAX_LOCS ? id : 0;
			} else if (sscanf(line, " %511s", f) != 1) {
				continue;
			}
			if (last) {
				size_t l = strlen(r->loc[last]);
				snprintf(r->loc[last] + l, sizeof r->loc[0] - l, "%s;", f);
			}
		}
	}
	free(copy);
	for (size_t i = 0; i < r->nsamples; i++)
		for (int k = 0; k < r->s[i].nlocs; k++) {
			size_t l = strlen(r->s[i].chain);
			unsigned id = r->s[i].locs[k];
			snprintf(r->s[i].chain + l, sizeof r->s[i].chain - l, "%s",
				 id < RAW_MAX_LOCS ? r->loc[id] : "?;");
		}
	return r;
}

static void raw_free(struct raw *r)
{
	if (r)
		free(r->text);
	free(r);
}

static int raw_type(const struct raw *r, const char *type)
{
	for (int i = 0; i < r->ntypes; i++)
		if (strncmp(r->types[i], type, strlen(type)) == 0 && r->types[i][strlen(type)] == '/')
			return i;
	return -1;
}

/* The sum of one sample type over the samples whose chain starts with
 * prefix ("" = all), and how many samples that is. */
static long long raw_sum(const struct raw *r, const char *type, const char *prefix, int *nsamples)
{
	int t = raw_type(r, type);
	long long sum = 0;

	if (nsamples)
		*nsamples = 0;
	if (t < 0)
		return -1;
	for (size_t i = 0; i < r->nsamples; i++) {
		if (strncmp(r->s[i].chain, prefix, strlen(prefix)) != 0)
			continue;
		sum += r->s[i].v[t];
		if (nsamples)
			(*nsamples)++;
	}
	return sum;
}

/* --- pprof -------------------------------------------------------------- */

static const char *export_known(const char *format, const char *extra, const char *name)
{
	const char *cap = known_capture(), *out = tmp(name);

	if (!cap)
		return NULL;
	if (!expect_eq_u64(hp_test_sh("%s export %s --format %s %s -o %s", hp(), cap, format, extra,
				      out), 0, "export succeeds"))
		return NULL;
	return out;
}

HP_TEST(pprof_raw_has_known_figures)
{
	const char *pb;
	struct raw *r;
	struct hp_capture *cap;
	char hex[200] = "";
	int n;

	if (!hp_test_need_go() || !(pb = export_known("pprof", "", "known.pb.gz")))
		return;
	r = raw_read(pb);
	if (!expect_true(r != NULL, "go tool pprof -raw reads the profile"))
		return;
	expect_true(strstr(r->text, "alloc_objects/count alloc_space/bytes inuse_objects/count "
				    "inuse_space/bytes[dflt]") != NULL,
		    "Go's four sample types in Go's order, inuse_space the default");
	expect_true(strstr(r->text, "PeriodType: space bytes") != NULL, "period type space/bytes");
	expect_true(strstr(r->text, "\nPeriod: 1\n") != NULL, "period 1 for a full recording");

	expect_eq_u64(raw_sum(r, "alloc_objects", "leak_leaf;leak_path;main;", &n), LEAK_N,
		      "leak: objects allocated, on leak_leaf <- leak_path <- main");
	expect_eq_u64(n, 1, "leak: one sample");
	expect_eq_u64(raw_sum(r, "alloc_space", "leak_leaf;leak_path;main;", NULL),
		      LEAK_N * LEAK_SIZE, "leak: bytes allocated");
	expect_eq_u64(raw_sum(r, "inuse_objects", "leak_leaf;leak_path;main;", NULL), LEAK_N,
		      "leak: objects in use at exit");
	expect_eq_u64(raw_sum(r, "inuse_space", "leak_leaf;leak_path;main;", NULL),
		      LEAK_N * LEAK_SIZE, "leak: bytes in use at exit");

	expect_eq_u64(raw_sum(r, "alloc_objects", "peak_leaf;main;", NULL), PEAK_N, "peak: objects");
	expect_eq_u64(raw_sum(r, "alloc_space", "peak_leaf;main;", NULL), PEAK_N * PEAK_SIZE,
		      "peak: bytes");
	expect_eq_u64(raw_sum(r, "inuse_space", "peak_leaf;main;", NULL), 0,
		      "peak: nothing in use at exit");

	expect_eq_u64(raw_sum(r, "alloc_objects", "churn_leaf;main;", NULL), CHURN_N,
		      "churn: objects");
	expect_eq_u64(raw_sum(r, "alloc_space", "churn_leaf;main;", NULL), CHURN_N * CHURN_SIZE,
		      "churn: bytes");
	expect_eq_u64(raw_sum(r, "inuse_objects", "churn_leaf;main;", NULL), 0,
		      "churn: nothing in use");
	expect_eq_u64(raw_sum(r, "alloc_space", "calloc_leaf;main;", NULL),
		      CALLOC_N * CALLOC_NMEMB * CALLOC_SIZE, "calloc: n x size bytes");

	expect_true(strstr(r->text, "bytes:[100 bytes]") != NULL,
		    "the leak's sample has the label bytes = LEAK_SIZE");
	expect_true(strstr(r->text, " leak_leaf tests/programs/known.c:") != NULL ||
			    strstr(r->text, " leak_leaf ") != NULL,
		    "locations carry function names");
	/* The mapping of known, with its path and build id. */
	cap = hpq_load(known_capture());
	if (expect_true(cap != NULL, "the capture loads")) {
		for (size_t i = 0; i < cap->modules[0].build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", cap->modules[0].build_id[i]);
		expect_true(strstr(r->text, "/tests/programs/known ") != NULL,
			    "a mapping names the program");
		expect_true(hex[0] && strstr(r->text, hex) != NULL, "with its build id");
		hpq_free(cap);
	}
	raw_free(r);
}

HP_TEST(pprof_top_and_traces)
{
	const char *pb = NULL;
	char *top, *traces;

	if (!hp_test_need_go() || !(pb = export_known("pprof", "--at end", "known-end.pb.gz")))
		return;
	top = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 "
		     "-sample_index=alloc_space %s 2>&1", pb);
	if (top) {
		expect_eq_u64(top_flat(top, "leak_leaf"), LEAK_N * LEAK_SIZE, "-top alloc_space leak");
		expect_eq_u64(top_flat(top, "peak_leaf"), PEAK_N * PEAK_SIZE, "-top alloc_space peak");
		expect_eq_u64(top_flat(top, "churn_leaf"), CHURN_N * CHURN_SIZE,
			      "-top alloc_space churn");
		free(top);
	}
	top = hp_test_sh_out("go tool pprof -top -nodefraction=0 -nodecount=10000 "
		     "-sample_index=alloc_objects %s 2>&1", pb);
	if (top) {
		expect_eq_u64(top_flat(top, "churn_leaf"), CHURN_N, "-top alloc_objects churn");
		expect_eq_u64(top_flat(top, "peak_leaf"), PEAK_N, "-top alloc_objects peak");
		expect_eq_u64(top_flat(top, "thread_leaf"), THREADS * THREAD_N,
			      "-top alloc_objects threads");
		free(top);
	}
	top = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 %s 2>&1", pb);
	if (top) {
		expect_true(strstr(top, "Type: inuse_space") != NULL, "inuse_space by default");
		expect_eq_u64(top_flat(top, "leak_leaf"), LEAK_N * LEAK_SIZE, "-top inuse leak");
		expect_eq_u64(top_flat(top, "thread_leaf"), THREADS * THREAD_N / 2 * THREAD_SIZE,
			      "-top inuse: half of the threads' blocks leak");
		expect_eq_u64(top_flat(top, "peak_leaf"), 0, "-top inuse: peak freed");
		free(top);
	}
	traces = hp_test_sh_out("go tool pprof -traces -unit=B -sample_index=alloc_space %s 2>&1", pb);
	if (traces) {
		expect_true(has_trace(traces, LEAK_N * LEAK_SIZE, "leak_leaf;leak_path;main;"),
			    "-traces: leak_leaf <- leak_path <- main, LEAK_N x LEAK_SIZE");
		expect_true(has_trace(traces, PEAK_N * PEAK_SIZE, "peak_leaf;main;"),
			    "-traces: peak_leaf <- main, PEAK_N x PEAK_SIZE");
		expect_true(has_trace(traces, CHURN_N * CHURN_SIZE, "churn_leaf;main;"),
			    "-traces: churn_leaf <- main, CHURN_N x CHURN_SIZE");
		free(traces);
	}
}

HP_TEST(pprof_at_peak)
{
	const char *pb;
	char *top;

	if (!hp_test_need_go() || !(pb = export_known("pprof", "--at peak", "known-peak.pb.gz")))
		return;
	top = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 "
		     "-sample_index=inuse_space %s 2>&1", pb);
	if (!top)
		return;
	expect_eq_u64(top_flat(top, "peak_leaf"), PEAK_N * PEAK_SIZE,
		      "--at peak: peak_leaf's blocks were all in use at the peak");
	expect_eq_u64(top_flat(top, "leak_leaf"), LEAK_N * LEAK_SIZE, "--at peak: so were the leaks");
	expect_eq_u64(top_flat(top, "churn_leaf"), 0, "--at peak: churn was not");
	free(top);
}

/* A sampled capture: the pprof's figures are the capture's, unbiased per
 * bucket as docs/internals/sampling.md says: count x 1 / (1 - exp(-size /
 * rate)), each bucket rounded. */
HP_TEST(pprof_sampled_is_unbiased)
{
	const char *hpf = tmp("known-sampled.hpf"), *pb = tmp("known-sampled.pb.gz");
	const uint64_t rate = 4096;
	struct hp_capture *cap;
	const struct hp_cap_snapshot *snap;
	struct raw *r;
	long long want_bytes = 0, want_objects = 0, raw_bytes = 0;

	if (!hp_test_need_go())
		return;
	if (!expect_eq_u64(hp_test_sh("%s run -q --sample-rate %llu --seed 7 -o %s -- "
				      "%s/tests/programs/known", hp(), (unsigned long long)rate,
				      hpf, hp_test_build()), 0, "known runs sampled") ||
	    !expect_eq_u64(hp_test_sh("%s export %s --format pprof -o %s", hp(), hpf, pb), 0,
			   "export succeeds"))
		return;
	cap = hpq_load(hpf);
	if (!expect_true(cap != NULL && (snap = hp_capture_last(cap)) != NULL, "capture loads"))
		return;
	for (size_t i = 0; i < snap->nbuckets; i++) {
		const struct hp_rec_bucket *b = &snap->buckets[i];
		double size = b->size ? (double)b->size
				      : b->alloc_count ? (double)b->alloc_bytes / (double)b->alloc_count : 0;
		double scale = size > 0 ? 1 / (1 - exp(-size / (double)rate)) : 1;
		want_bytes += llround((double)b->alloc_bytes * scale);
		want_objects += llround((double)b->alloc_count * scale);
		raw_bytes += (long long)b->alloc_bytes;
	}
	hpq_free(cap);
	r = raw_read(pb);
	if (!expect_true(r != NULL, "go tool pprof -raw reads it"))
		return;
	expect_true(strstr(r->text, "\nPeriod: 4096\n") != NULL, "period = the sample rate");
	expect_true(want_bytes > raw_bytes, "the capture holds sampled figures to unbias");
	expect_eq_u64(raw_sum(r, "alloc_space", "", NULL), want_bytes,
		      "alloc_space = the capture's bytes, unbiased per bucket");
	expect_eq_u64(raw_sum(r, "alloc_objects", "", NULL), want_objects,
		      "alloc_objects = the capture's counts, unbiased per bucket");
	raw_free(r);
}

HP_TEST(pprof_peak_sample_types)
{
	const char *pb;
	struct raw *r;
	char *top;

	if (!hp_test_need_go() || !(pb = export_known("pprof", "", "known-types.pb.gz")))
		return;
	r = raw_read(pb);
	if (expect_true(r != NULL, "go tool pprof -raw reads the profile")) {
		expect_true(strstr(r->text, "alloc_objects/count alloc_space/bytes inuse_objects/count "
					    "inuse_space/bytes[dflt] peak_objects/count "
					    "peak_space/bytes\n") != NULL,
			    "Go's four sample types, inuse_space the default, then the peak's two");
		expect_eq_u64(raw_sum(r, "peak_space", "", NULL), KNOWN_PEAK_BYTES,
			      "peak_space sums to known's peak");
		expect_eq_u64(raw_sum(r, "peak_objects", "", NULL), LEAK_N + PEAK_N,
			      "peak_objects: the leaks and the peak blocks");
		raw_free(r);
	}
	top = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 "
			     "-sample_index=peak_space %s 2>&1", pb);
	if (top) {
		expect_true(strstr(top, "Type: peak_space") != NULL, "-sample_index=peak_space");
		expect_eq_u64(top_flat(top, "peak_leaf"), PEAK_N * PEAK_SIZE,
			      "peak_space: peak_leaf's blocks were all in use at the peak");
		expect_eq_u64(top_flat(top, "leak_leaf"), LEAK_N * LEAK_SIZE, "peak_space: leaks");
		expect_eq_u64(top_flat(top, "churn_leaf"), 0, "peak_space: churn was not in use");
		free(top);
	}
	top = hp_test_sh_out("go tool pprof -top -nodefraction=0 -nodecount=10000 "
			     "-sample_index=peak_objects %s 2>&1", pb);
	if (top) {
		expect_eq_u64(top_flat(top, "peak_leaf"), PEAK_N, "peak_objects: peak_leaf");
		expect_eq_u64(top_flat(top, "leak_leaf"), LEAK_N, "peak_objects: leak_leaf");
		free(top);
	}
	top = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 %s 2>&1", pb);
	if (top) {
		expect_true(strstr(top, "Type: inuse_space") != NULL, "still inuse_space by default");
		expect_eq_u64(top_flat(top, "peak_leaf"), 0, "default: peak_leaf freed by exit");
		free(top);
	}
}

/* pprof titles a profile with its first mapping's file: the program's,
 * even when the first frame recorded is in a library (libstdc++ for
 * cxx_all, whose operator new frames are hidden). */
HP_TEST(pprof_program_is_the_first_mapping)
{
	const char *hpf = tmp("cxx_all.hpf"), *pb = tmp("cxx_all.pb.gz");
	char *out;

	if (!hp_test_need_go())
		return;
	if (!expect_eq_u64(hp_test_sh("%s run -q -o %s -- %s/tests/programs/cxx_all", hp(), hpf,
				      hp_test_build()), 0, "cxx_all runs under heapprof") ||
	    !expect_eq_u64(hp_test_sh("%s export %s --format pprof -o %s", hp(), hpf, pb), 0,
			   "export succeeds"))
		return;
	out = hp_test_sh_out("go tool pprof -raw %s 2>&1 | sed -n '/^Mappings/{n;p}'", pb);
	expect_true(out && strncmp(out, "1: ", 3) == 0 &&
			    strstr(out, "/tests/programs/cxx_all ") != NULL,
		    "mapping 1 is the program");
	if (out && !strstr(out, "cxx_all"))
		printf("  mapping 1: %s", out);
	free(out);
	out = hp_test_sh_out("go tool pprof -top %s 2>&1 | head -n 1", pb);
	expect_str(out, "File: cxx_all\n", "go tool pprof names the profile after the program");
	free(out);
}

/* --- gperftools ------------------------------------------------------- */

HP_TEST(gperftools_google_pprof)
{
	const char *heap;
	char bin[4200], *out;
	int found;

	if (!hp_test_need("google-pprof", "google-perftools") || !hp_test_need("addr2line", "binutils") ||
	    !(heap = export_known("gperftools", "", "known.heap")))
		return;
	snprintf(bin, sizeof bin, "%s/tests/programs/known", hp_test_build());
	out = hp_test_sh_out("google-pprof --text --show_bytes --inuse_space %s %s 2>/dev/null", bin, heap);
	if (out) {
		expect_eq_u64(top_flat(out, "leak_leaf"), LEAK_N * LEAK_SIZE, "inuse_space: leak");
		expect_eq_u64(hp_test_pprof_column(out, "leak_path", 1, &found), LEAK_N * LEAK_SIZE,
			      "inuse_space: leak_path's cumulative (leak_leaf's caller)");
		expect_true(found, "leak_path is on the stack");
		expect_eq_u64(top_flat(out, "thread_leaf"), THREADS * THREAD_N / 2 * THREAD_SIZE,
			      "inuse_space: threads");
		expect_eq_u64(top_flat(out, "peak_leaf"), 0, "inuse_space: peak freed");
		free(out);
	}
	out = hp_test_sh_out("google-pprof --text --alloc_objects %s %s 2>/dev/null", bin, heap);
	if (out) {
		expect_eq_u64(top_flat(out, "leak_leaf"), LEAK_N, "alloc_objects: leak");
		expect_eq_u64(top_flat(out, "peak_leaf"), PEAK_N, "alloc_objects: peak");
		expect_eq_u64(top_flat(out, "churn_leaf"), CHURN_N, "alloc_objects: churn");
		free(out);
	}
	out = hp_test_sh_out("google-pprof --text --show_bytes --alloc_space %s %s 2>/dev/null", bin, heap);
	if (out) {
		expect_eq_u64(top_flat(out, "peak_leaf"), PEAK_N * PEAK_SIZE, "alloc_space: peak");
		expect_eq_u64(top_flat(out, "churn_leaf"), CHURN_N * CHURN_SIZE, "alloc_space: churn");
		free(out);
	}
}

HP_TEST(gperftools_header_and_go_pprof)
{
	const char *heap;
	char *out, want[256];
	struct hp_capture *cap;
	struct hpq_sum t;

	if (!hp_test_need_go() || !(heap = export_known("gperftools", "", "known-go.heap")))
		return;
	out = hp_test_sh_out("head -n 1 %s", heap);
	cap = hpq_load(known_capture());
	if (out && expect_true(cap != NULL, "capture loads")) {
		t = hpq_total(cap);
		snprintf(want, sizeof want, "heap profile: %6llu: %8llu [%6llu: %8llu] @ heapprofile\n",
			 (unsigned long long)(t.alloc_count - t.free_count),
			 (unsigned long long)(t.alloc_bytes - t.free_bytes),
			 (unsigned long long)t.alloc_count, (unsigned long long)t.alloc_bytes);
		expect_str(out, want, "the header holds the capture's totals");
	}
	hpq_free(cap);
	free(out);
	out = hp_test_sh_out("grep -c '^MAPPED_LIBRARIES:$' %s && grep -c ' r-xp .* /.*/tests/programs/known$' %s",
		     heap, heap);
	expect_true(out && strcmp(out, "1\n1\n") == 0, "one maps section, with known's text");
	free(out);

	out = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 "
		     "-sample_index=inuse_space %s 2>&1", heap);
	if (out) {
		expect_eq_u64(top_flat(out, "leak_leaf"), LEAK_N * LEAK_SIZE, "go, legacy: inuse leak");
		expect_eq_u64(top_flat(out, "thread_leaf"), THREADS * THREAD_N / 2 * THREAD_SIZE,
			      "go, legacy: inuse threads");
		free(out);
	}
	out = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=10000 "
		     "-sample_index=alloc_space %s 2>&1", heap);
	if (out) {
		expect_eq_u64(top_flat(out, "peak_leaf"), PEAK_N * PEAK_SIZE, "go, legacy: alloc peak");
		expect_eq_u64(top_flat(out, "churn_leaf"), CHURN_N * CHURN_SIZE,
			      "go, legacy: alloc churn");
		free(out);
	}
	out = hp_test_sh_out("go tool pprof -top -nodefraction=0 -nodecount=10000 "
		     "-sample_index=alloc_objects %s 2>&1", heap);
	if (out) {
		expect_eq_u64(top_flat(out, "churn_leaf"), CHURN_N, "go, legacy: alloc_objects churn");
		free(out);
	}
	out = hp_test_sh_out("go tool pprof -traces -unit=B -sample_index=inuse_space %s 2>&1", heap);
	if (out) {
		expect_true(has_trace(out, LEAK_N * LEAK_SIZE, "leak_leaf;leak_path;main;"),
			    "go, legacy -traces: leak_leaf <- leak_path <- main, symbolized");
		free(out);
	}
}

/* --- folded ------------------------------------------------------------- */

/* The value of the one line of a folded file that ends in suffix (the
 * innermost frames), -1 if none, -2 if several. */
static long long folded_value(const char *text, const char *suffix)
{
	long long value = -1;
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n'), *sp;
		size_t len = end ? (size_t)(end - line) : strlen(line), sl = strlen(suffix);
		for (sp = line + len; sp > line && sp[-1] != ' '; sp--)
			;
		if (sp > line && (size_t)(sp - 1 - line) >= sl &&
		    memcmp(sp - 1 - sl, suffix, sl) == 0 &&
		    (sp - 1 - sl == line || sp[-2 - (long)sl] == ';'))
			value = value == -1 ? strtoll(sp, NULL, 10) : -2;
		line = end ? end + 1 : NULL;
	}
	return value;
}

HP_TEST(folded_known_lines)
{
	static const struct {
		const char *metric, *suffix;
		long long value;
	} want[] = {
		{"", "main;leak_path;leak_leaf", LEAK_N * LEAK_SIZE},
		{"leaked", "thread_main;thread_leaf", THREADS * THREAD_N / 2 * THREAD_SIZE},
		{"peak", "main;peak_leaf", PEAK_N * PEAK_SIZE},
		{"peak", "main;leak_path;leak_leaf", LEAK_N * LEAK_SIZE},
		{"allocated", "main;churn_leaf", CHURN_N * CHURN_SIZE},
		{"allocated", "main;calloc_leaf", CALLOC_N * CALLOC_NMEMB * CALLOC_SIZE},
		{"allocations", "main;churn_leaf", CHURN_N},
		{"allocations", "thread_main;thread_leaf", THREADS * THREAD_N},
		{"temporary", "main;churn_leaf", CHURN_N},
		{"temporary", "main;realloc_leaf", 3},
	};
	const char *cap = known_capture();
	char *out, why[256];

	if (!cap)
		return;
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		out = hp_test_sh_out("%s export %s --format folded %s%s -o - | sort", hp(), cap,
			     want[i].metric[0] ? "--metric " : "", want[i].metric);
		if (!out)
			continue;
		snprintf(why, sizeof why, "folded %s: one line ending in %s, value %lld",
			 want[i].metric[0] ? want[i].metric : "(default leaked)", want[i].suffix,
			 want[i].value);
		expect_eq_u64(folded_value(out, want[i].suffix), want[i].value, why);
		free(out);
	}
	/* Root first: the line of the leak starts at the outermost frame, and
	 * no line is printed twice (identical stacks are merged). */
	out = hp_test_sh_out("%s export %s --format folded -o - | grep ';leak_leaf ' | cut -d';' -f1", hp(),
		     cap);
	expect_true(out && (strcmp(out, "_start\n") == 0 || strcmp(out, "main\n") == 0),
		    "the leak's line starts at the root");
	free(out);
	out = hp_test_sh_out("%s export %s --format folded --metric allocations -o - | sed 's/ [0-9]*$//'"
		     " | sort | uniq -d | wc -l", hp(), cap);
	expect_true(out && strcmp(out, "0\n") == 0, "identical stacks merged into one line");
	free(out);
}

HP_TEST(export_usage_errors)
{
	const char *cap = known_capture();

	if (!cap)
		return;
	expect_eq_u64(hp_test_sh("%s export %s -o /dev/null 2>/dev/null", hp(), cap), 2,
		      "no --format: usage error");
	expect_eq_u64(hp_test_sh("%s export %s --format svg -o x 2>/dev/null", hp(), cap), 2,
		      "unknown format: usage error");
	expect_eq_u64(hp_test_sh("%s export %s --format pprof --metric peak -o x 2>/dev/null", hp(),
				 cap), 2, "--metric is for folded");
	expect_eq_u64(hp_test_sh("%s export %s --format folded --at peak -o x 2>/dev/null", hp(),
				 cap), 2, "--at is for pprof and gperftools");
	expect_eq_u64(hp_test_sh("%s export /nonexistent.hpf --format pprof -o %s 2>/dev/null", hp(),
				 tmp("none.pb.gz")), 1, "a missing capture: exit 1");
	expect_eq_u64(hp_test_sh("%s export %s --format folded -o /nonexistent/dir/x 2>/dev/null",
				 hp(), cap), 1, "an unwritable output: exit 1");
	expect_eq_u64(hp_test_sh("%s export %s --format pprof -o /dev/full 2>/dev/null", hp(), cap),
		      1, "a failed write: exit 1");
	expect_eq_u64(hp_test_sh("%s export %s --format folded -o /dev/full 2>/dev/null", hp(), cap),
		      1, "a failed write at close: exit 1");
	expect_eq_u64(hp_test_sh("test -c /dev/full"), 0,
		      "the device written to is left in place, not removed as a partial file");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
