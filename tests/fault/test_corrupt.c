/*
 * test_corrupt.c - truncated, corrupt and foreign files, on a real capture.
 *
 * The model: a capture is a header then self-checking records (format.h).
 * Whatever happens to the bytes, hp_capture_load must not crash or hang; it
 * must either refuse the file with one line saying why, or load it and
 * report the damage, keeping every record the damage did not touch. The
 * only damage it cannot see is a cut that falls exactly between two
 * records: the format has no trailer, so that is a valid, shorter capture.
 *
 * The real capture comes from `heapprof run` on tests/programs/known, made
 * once per binary; its record boundaries are found by walking the frames
 * here, independently of the decoder under test. Every scratch file lives
 * under hp_test_tmp().
 *
 * A crash or a hang names the case it was on (a signal handler prints the
 * current case to stderr), so a failure can be replayed by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/format/capture.h"
#include "../../src/format/format.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

/* ---- the case being run, for a crash or a hang ---------------------------- */

static char current_case[640];
static struct sigaction old_segv, old_bus, old_abrt, old_fpe;

static void say_case(int sig)
{
	static const char head[] = "test_corrupt: signal while on case: ";
	ssize_t w = write(2, head, sizeof head - 1);
	w = write(2, current_case, strnlen(current_case, sizeof current_case));
	w = write(2, "\n", 1);
	(void)w;
	(void)sig;
}

static void on_crash(int sig)
{
	say_case(sig);
	/* Hand the signal back to whoever had it (the sanitizer's report, or
	 * the default action): returning re-runs the faulting instruction. */
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGABRT, &old_abrt, NULL);
	sigaction(SIGFPE, &old_fpe, NULL);
	if (sig == SIGABRT)
		raise(sig);
}

static void on_alarm(int sig)
{
	static const char msg[] = "test_corrupt: timed out (an infinite loop?)\n";
	ssize_t w = write(2, msg, sizeof msg - 1);
	(void)w;
	say_case(sig);
	_exit(124);
}

__attribute__((constructor)) static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGABRT, &sa, &old_abrt);
	sigaction(SIGFPE, &sa, &old_fpe);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	snprintf(current_case, sizeof current_case, "(setup)");
}

/* ---- files -------------------------------------------------------------- */

static const char *tmp_path(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof paths[0], "%s/%s", hp_test_tmp(), name);
	return p;
}

/* The whole file, NUL-terminated; NULL when unreadable. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *p = realloc(buf, cap + 65536);
			if (!p)
				break;
			buf = p;
			cap += 65536;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* ---- the real capture, made once ----------------------------------------- */

struct rec {
	unsigned type;
	size_t off;    /* of the frame */
	size_t end;    /* one past the payload */
};

static struct {
	int tried, ok;
	char path[512];
	uint8_t *data;
	size_t size;
	struct rec recs[64];
	size_t nrecs;
	struct hp_capture cap; /* the intact load, for comparison */
} real;

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* Runs heapprof once and indexes the capture's records by hand. Returns 0
 * (with expectations failed) when that is not possible. */
static int get_real(void)
{
	char err[512];

	if (real.tried)
		return real.ok;
	real.tried = 1;
	snprintf(real.path, sizeof real.path, "%s/known.hpf", hp_test_tmp());
	int st = hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/tests/programs/known", hp_test_build(),
			    real.path, hp_test_build());
	if (!expect_eq_u64(st, 0, "heapprof run on tests/programs/known succeeds"))
		return 0;
	real.data = (uint8_t *)slurp(real.path, &real.size);
	if (!expect_true(real.data && real.size > 32, "the capture is readable"))
		return 0;
	for (size_t at = 32; at < real.size && real.nrecs < 64;) {
		if (!expect_true(at + 24 <= real.size && memcmp(real.data + at, "HPRC", 4) == 0,
				 "the capture is a chain of whole frames"))
			return 0;
		struct rec *r = &real.recs[real.nrecs++];
		r->type = real.data[at + 4] | real.data[at + 5] << 8;
		r->off = at;
		r->end = at + 24 + le32(real.data + at + 8);
		at = r->end;
	}
	if (!expect_true(real.recs[real.nrecs - 1].end == real.size, "the last record ends the file"))
		return 0;
	if (!expect_eq_u64(hp_capture_load(real.path, &real.cap, err, sizeof err), 0,
			   "the intact capture loads"))
		return 0;
	expect_eq_u64(real.cap.ndamage, 0, "the intact capture has no damage");
	expect_eq_u64(real.cap.nrecords, real.nrecs, "every record is read");
	expect_true(real.cap.has_meta, "it has a META record");
	expect_true(real.cap.nmodules > 0, "and modules");
	expect_true(real.cap.nstacks > 1, "and stacks");
	expect_true(real.cap.nsnapshots > 0, "and a snapshot");
	expect_eq_u64(real.recs[0].type, HP_REC_META, "META comes first");
	real.ok = real.cap.ndamage == 0 && real.cap.nrecords == real.nrecs && real.cap.has_meta &&
		  real.cap.nsnapshots > 0;
	return real.ok;
}

/* The index of the record containing file offset off, or -1 (the header). */
static int rec_at(size_t off)
{
	for (size_t i = 0; i < real.nrecs; i++)
		if (off >= real.recs[i].off && off < real.recs[i].end)
			return (int)i;
	return -1;
}

/* How many records lie wholly in the first len bytes. */
static size_t recs_before(size_t len)
{
	size_t n = 0;
	while (n < real.nrecs && real.recs[n].end <= len)
		n++;
	return n;
}

static int has_type_before(unsigned type, size_t nrecs)
{
	for (size_t i = 0; i < nrecs; i++)
		if (real.recs[i].type == type)
			return 1;
	return 0;
}

static int one_line(const char *s)
{
	return s && *s && !strchr(s, '\n');
}

/* A refusal: non-zero, one line, starting with the path. */
static int expect_refused(int ret, const char *err, const char *path, const char *why)
{
	int ok = expect_true(ret < 0, why);
	ok &= expect_true(one_line(err), "the error is one non-empty line");
	ok &= expect_true(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':',
			  "the error starts with the path");
	return ok;
}

/* ---- truncation ---------------------------------------------------------- */

/* Truncation at every length: step 1 for the first 200 bytes (the header
 * and the META record), then a step that keeps a large capture to about
 * 3000 loads. */
HP_TEST(truncate_every_length)
{
	const char *path = tmp_path("trunc.hpf");
	char err[512];
	size_t step, len, ntried = 0;

	if (!get_real())
		return;
	alarm(60);
	step = real.size > 3200 ? (real.size - 200) / 3000 : 1;
	for (len = 0; len <= real.size; len += len < 200 ? 1 : step) {
		struct hp_capture cap;
		size_t whole = recs_before(len);
		int boundary = len == 32 || (whole && real.recs[whole - 1].end == len);
		int ret, ok = 1;

		ntried++;
		snprintf(current_case, sizeof current_case, "%s cut to %zu of %zu bytes", real.path,
			 len, real.size);
		if (hp_test_write_file(path, real.data, len)) {
			expect_true(0, "cannot write the scratch file");
			break;
		}
		err[0] = '\0';
		ret = hp_capture_load(path, &cap, err, sizeof err);
		if (len < 32) {
			ok &= expect_refused(ret, err, path, "a file cut in its header is refused");
		} else if (expect_eq_u64((uint64_t)ret, 0, "a file with a whole header loads")) {
			ok &= expect_eq_u64(cap.nrecords, whole, "every whole record before the cut is read");
			if (boundary) {
				/* Undetectable by design; only a missing META shows. */
				ok &= expect_eq_u64(cap.ndamage, whole ? 0 : 1,
						    "a cut between records is a shorter capture");
			} else {
				ok &= expect_true(cap.ndamage > 0, "a cut inside a record is damage");
				ok &= expect_true(cap.ndamage && strstr(cap.damage[0], "truncated"),
						  "and is called truncated");
			}
			ok &= expect_eq_u64(cap.has_meta, whole > 0, "META is kept once whole");
			if (has_type_before(HP_REC_MODULES, whole))
				ok &= expect_true(cap.nmodules > 0, "modules before the cut are kept");
			if (whole == real.nrecs)
				ok &= expect_eq_u64(cap.nsnapshots, real.cap.nsnapshots,
						    "the whole file has every snapshot");
			hp_capture_free(&cap);
		} else {
			ok = 0;
		}
		if (!ok) {
			printf("  (at length %zu of %zu)\n", len, real.size);
			break;
		}
		if (len == real.size)
			break;
		if (len >= 200 && len + step > real.size)
			len = real.size - step; /* always try the whole file last */
	}
	if (len >= real.size)
		expect_true(ntried > 200, "enough lengths were tried");
	alarm(0);
}

HP_TEST(truncate_inside_last_record)
{
	const struct rec *last;
	const char *path = tmp_path("cut-last.hpf");
	struct hp_capture cap;
	char err[512];

	if (!get_real())
		return;
	/* The exit snapshot: the last record, or the one before the last
	 * when its HISTOGRAMS (format 1.4) follow it, which a cut inside it
	 * loses too. */
	last = &real.recs[real.nrecs - 1];
	if (last->type == HP_REC_HISTOGRAMS)
		last--;
	expect_eq_u64(last->type, HP_REC_SNAPSHOT, "the last snapshot is the exit snapshot");

	/* Cut in the middle of the payload, then in the middle of the frame. */
	size_t cuts[2] = {last->off + 24 + (last->end - last->off - 24) / 2, last->off + 12};
	for (int i = 0; i < 2; i++) {
		snprintf(current_case, sizeof current_case, "cut to %zu", cuts[i]);
		hp_test_write_file(path, real.data, cuts[i]);
		if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0,
				   "a file cut in its last record loads"))
			continue;
		expect_eq_u64(cap.ndamage, 1, "one damage: the cut");
		expect_true(cap.ndamage && strstr(cap.damage[0], "truncated"), "called truncated");
		expect_eq_u64(cap.nrecords, (size_t)(last - real.recs), "every record before it is read");
		expect_true(cap.has_meta, "META is kept");
		expect_str(cap.program, real.cap.program, "with the program's path");
		expect_eq_u64(cap.argc, real.cap.argc, "and its arguments");
		expect_eq_u64(cap.nmodules, real.cap.nmodules, "the modules are kept");
		expect_true(cap.nmodules > 0 && strcmp(cap.modules[0].path, real.cap.modules[0].path) == 0,
			    "with their paths");
		expect_eq_u64(cap.nstacks, real.cap.nstacks, "the stacks are kept");
		expect_eq_u64(cap.nsamples, real.cap.nsamples, "the time series is kept");
		expect_eq_u64(cap.nsnapshots, real.cap.nsnapshots - 1, "only the cut snapshot is lost");
		hp_capture_free(&cap);
	}
}

/* ---- bit flips ------------------------------------------------------------ */

/* Loads the real capture with one bit flipped and checks the outcome. */
static int check_flip(const char *path, size_t off, int bit)
{
	struct hp_capture cap;
	char err[512], want[64];
	int r = rec_at(off), ret, ok = 1;

	snprintf(current_case, sizeof current_case, "%s with bit %d of byte %zu flipped", real.path,
		 bit, off);
	real.data[off] ^= (uint8_t)(1u << bit);
	int werr = hp_test_write_file(path, real.data, real.size);
	real.data[off] ^= (uint8_t)(1u << bit);
	if (werr)
		return expect_true(0, "cannot write the scratch file");

	err[0] = '\0';
	ret = hp_capture_load(path, &cap, err, sizeof err);
	if (r < 0) /* the file header: checked as a whole */
		return expect_refused(ret, err, path, "a corrupt file header is refused");
	if (!expect_eq_u64((uint64_t)ret, 0, "a capture with a corrupt record loads"))
		return 0;

	const struct rec *bad = &real.recs[r];
	ok &= expect_true(cap.ndamage > 0, "a flipped bit is damage");
	ok &= expect_eq_u64(cap.nrecords, real.nrecs - 1, "only the damaged record is lost");
	snprintf(want, sizeof want, "offset %zu:", bad->off);
	ok &= expect_true(cap.ndamage && strncmp(cap.damage[0], want, strlen(want)) == 0,
			  "the damage names the damaged record's offset");
	/* What the other records hold is still there. */
	if (bad->type != HP_REC_META) {
		ok &= expect_true(cap.has_meta, "META survives");
		ok &= expect_eq_u64(cap.pid, real.cap.pid, "with its pid");
	} else {
		ok &= expect_true(!cap.has_meta, "a damaged META is gone");
	}
	if (bad->type != HP_REC_MODULES)
		ok &= expect_eq_u64(cap.nmodules, real.cap.nmodules, "the modules survive");
	if (bad->type != HP_REC_STACKS)
		ok &= expect_eq_u64(cap.nstacks, real.cap.nstacks, "the stacks survive");
	if (bad->type != HP_REC_TIMESERIES)
		ok &= expect_eq_u64(cap.nsamples, real.cap.nsamples, "the time series survives");
	/* Buckets name stacks, so a snapshot needs its STACKS record. */
	if (bad->type != HP_REC_SNAPSHOT && bad->type != HP_REC_STACKS) {
		ok &= expect_eq_u64(cap.nsnapshots, real.cap.nsnapshots, "the snapshots survive");
		if (cap.nsnapshots == real.cap.nsnapshots)
			ok &= expect_eq_u64(hp_capture_last(&cap)->alloc_bytes,
					    hp_capture_last(&real.cap)->alloc_bytes,
					    "with their figures");
	}
	hp_capture_free(&cap);
	return ok;
}

HP_TEST(flip_bits)
{
	const char *path = tmp_path("flip.hpf");
	size_t off, step, nflips = 0;
	int ok = 1;

	if (!get_real())
		return;
	alarm(60);
	/* Every bit of the first 64 bytes: the header and the first frame. */
	for (off = 0; off < 64 && off < real.size && ok; off++)
		for (int bit = 0; bit < 8 && ok; bit++, nflips++)
			ok = check_flip(path, off, bit);
	/* Every bit of every other frame: the fields that steer the reader. */
	for (size_t i = 1; i < real.nrecs && ok; i++)
		for (off = real.recs[i].off; off < real.recs[i].off + 24 && ok; off++)
			for (int bit = 0; bit < 8 && ok; bit++, nflips++)
				ok = check_flip(path, off, bit);
	/* Then spread over the rest, one bit a byte, varying which. */
	step = real.size > 3064 ? (real.size - 64) / 3000 : 1;
	for (off = 64; off < real.size && ok; off += step, nflips++)
		ok = check_flip(path, off, (int)(off * 5 % 8));
	if (!ok)
		printf("  (%s)\n", current_case);
	else
		expect_true(nflips > 500, "enough flips were tried");
	alarm(0);
}

HP_TEST(corrupt_meta_keeps_snapshots)
{
	const char *path = tmp_path("meta-corrupt.hpf");
	struct hp_capture cap;
	char err[512];
	size_t at;

	if (!get_real())
		return;
	at = real.recs[0].off + 24 + 5; /* inside the pid / start time fields */
	snprintf(current_case, sizeof current_case, "META payload byte %zu changed", at);
	real.data[at] ^= 0x5a;
	hp_test_write_file(path, real.data, real.size);
	real.data[at] ^= 0x5a;
	if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "loads"))
		return;
	expect_eq_u64(cap.ndamage, 2, "two problems: the corrupt record and the missing META");
	expect_true(cap.ndamage && strstr(cap.damage[0], "checksum"), "the first is a checksum");
	expect_true(!cap.has_meta, "META is gone");
	expect_eq_u64(cap.nmodules, real.cap.nmodules, "modules are read");
	expect_eq_u64(cap.nsnapshots, real.cap.nsnapshots, "snapshots are read");
	if (cap.nsnapshots && real.cap.nsnapshots) {
		const struct hp_cap_snapshot *a = hp_capture_last(&cap), *b = hp_capture_last(&real.cap);
		expect_eq_u64(a->alloc_count, b->alloc_count, "with their allocation count");
		expect_eq_u64(a->alloc_bytes, b->alloc_bytes, "and bytes");
		expect_eq_u64(a->peak_bytes, b->peak_bytes, "and peak");
		expect_eq_u64(a->nbuckets, b->nbuckets, "and buckets");
	}
	hp_capture_free(&cap);
}

HP_TEST(garbage_between_records)
{
	/* Bytes that are not a frame, inserted between two records (a torn
	 * append, a bad sector): skipped, named, and everything else read. */
	const char *path = tmp_path("garbage.hpf");
	struct hp_capture cap;
	char err[512];
	static const char junk[] = "HPRC not a frame, HPRC neither, 0123456789";
	size_t at, n;
	uint8_t *buf;

	if (!get_real())
		return;
	at = real.recs[1].off;
	n = real.size + sizeof junk;
	buf = malloc(n);
	memcpy(buf, real.data, at);
	memcpy(buf + at, junk, sizeof junk);
	memcpy(buf + at + sizeof junk, real.data + at, real.size - at);
	hp_test_write_file(path, buf, n);
	free(buf);
	snprintf(current_case, sizeof current_case, "%zu junk bytes at %zu", sizeof junk, at);
	if (!expect_eq_u64(hp_capture_load(path, &cap, err, sizeof err), 0, "loads"))
		return;
	expect_eq_u64(cap.ndamage, 1, "one damage");
	expect_eq_u64(cap.nrecords, real.nrecs, "every record is read");
	expect_eq_u64(cap.nsnapshots, real.cap.nsnapshots, "with every snapshot");
	hp_capture_free(&cap);
}

/* ---- files that are not captures ----------------------------------------- */

/* hp_capture_load and `heapprof inspect` both refuse path with one line
 * that contains want. */
static void check_refused(const char *path, const char *want, const char *why)
{
	struct hp_capture cap;
	char err[512] = "";
	int ret;

	snprintf(current_case, sizeof current_case, "refusing %s", path);
	ret = hp_capture_load(path, &cap, err, sizeof err);
	if (expect_refused(ret, err, path, why))
		expect_true(strstr(err, want) != NULL, "the error says why");
	if (strstr(err, want) == NULL)
		printf("  error was: %s\n", err);

	const char *out = tmp_path("inspect.out"), *errf = tmp_path("inspect.err");
	int st = hp_test_sh("%s/heapprof inspect '%s' >%s 2>%s", hp_test_build(), path, out, errf);
	expect_eq_u64(st, 1, "heapprof inspect exits 1");
	char *e = slurp(errf, NULL);
	expect_true(e && strncmp(e, "heapprof: ", 10) == 0, "its stderr starts with \"heapprof: \"");
	expect_true(e && strchr(e, '\n') && strchr(e, '\n')[1] == '\0',
		    "and is exactly one line");
	expect_true(e && strstr(e, want), "and says why");
	if (e && (!strstr(e, want) || strncmp(e, "heapprof: ", 10) != 0))
		printf("  stderr was: %s", e);
	free(e);
}

HP_TEST(empty_file)
{
	const char *path = tmp_path("empty.hpf");
	hp_test_write_file(path, "", 0);
	check_refused(path, "not a heapprof capture", "an empty file is refused");
}

HP_TEST(foreign_file)
{
	check_refused("/bin/true", "not a heapprof capture", "an ELF file is refused");
	const char *path = tmp_path("text.hpf");
	static const char text[] = "HEAPPROFILER? no, a text file that only starts like one\n";
	hp_test_write_file(path, text, sizeof text - 1);
	check_refused(path, "corrupt", "text starting with the magic is refused");
}

HP_TEST(directory)
{
	check_refused(hp_test_tmp(), "directory", "a directory is refused");
}

HP_TEST(missing_file)
{
	check_refused(tmp_path("no-such-file.hpf"), "No such file", "a missing file is refused");
}

HP_TEST(wrong_major_version)
{
	const char *path = tmp_path("major2.hpf");
	uint8_t *copy;

	if (!get_real())
		return;
	copy = malloc(real.size);
	memcpy(copy, real.data, real.size);
	copy[8] = HP_FORMAT_MAJOR + 1;
	copy[9] = 0;
	uint32_t c = crc(copy, 28); /* only the version is wrong */
	for (int i = 0; i < 4; i++)
		copy[28 + i] = (uint8_t)(c >> (8 * i));
	hp_test_write_file(path, copy, real.size);
	free(copy);
	char want[64];
	snprintf(want, sizeof want, "version %d.%d", HP_FORMAT_MAJOR + 1, HP_FORMAT_MINOR);
	check_refused(path, want, "another major version is refused");
}

HP_TEST(not_a_regular_file)
{
	/* /dev/null is neither a file nor a directory: refused, with a
	 * message about that, not a leftover errno from an earlier call. */
	struct hp_capture cap;
	char err[512] = "";
	int ret;

	errno = ENOENT;
	ret = hp_capture_load("/dev/null", &cap, err, sizeof err);
	expect_refused(ret, err, "/dev/null", "a character device is refused");
	expect_true(strstr(err, "No such file") == NULL,
		    "the error is not a stale errno (\"No such file or directory\")");
	if (strstr(err, "No such file"))
		printf("  error was: %s\n", err);
}

HP_TEST(inspect_damaged_and_intact)
{
	const char *out = tmp_path("inspect.out"), *errf = tmp_path("inspect.err");
	const char *path = tmp_path("inspect-cut.hpf");
	char *e;
	int st;

	if (!get_real())
		return;
	st = hp_test_sh("%s/heapprof inspect %s >%s 2>%s", hp_test_build(), real.path, out, errf);
	expect_eq_u64(st, 0, "inspect on the intact capture exits 0");
	e = slurp(errf, NULL);
	expect_true(e && !*e, "and writes nothing to stderr");
	free(e);

	hp_test_write_file(path, real.data, real.size - 3);
	st = hp_test_sh("%s/heapprof inspect %s >%s 2>%s", hp_test_build(), path, out, errf);
	expect_eq_u64(st, 1, "inspect on a truncated capture exits 1");
	e = slurp(errf, NULL);
	expect_true(e && strncmp(e, "heapprof: ", 10) == 0 && strstr(e, "truncated"),
		    "its stderr says \"heapprof: ...truncated...\"");
	expect_true(e && strchr(e, '\n') && strchr(e, '\n')[1] == '\0', "in one line");
	free(e);
	e = slurp(out, NULL);
	expect_true(e && strstr(e, "damage"), "stdout still shows what is readable, and the damage");
	free(e);
}

HP_TEST(inspect_usage)
{
	const char *errf = tmp_path("usage.err");

	expect_eq_u64(hp_test_sh("%s/heapprof inspect >/dev/null 2>%s", hp_test_build(), errf), 2,
		      "inspect with no file exits 2");
	expect_eq_u64(hp_test_sh("%s/heapprof inspect a.hpf b.hpf >/dev/null 2>%s", hp_test_build(),
				 errf),
		      2, "inspect with two files exits 2");
	char *e = slurp(errf, NULL);
	expect_true(e && strncmp(e, "heapprof: ", 10) == 0, "the usage error starts \"heapprof: \"");
	free(e);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
