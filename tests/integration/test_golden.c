/*
 * test_golden.c - every output of heapprof, byte for byte, on two fixed
 * synthetic captures, against the files in tests/golden/.
 *
 * The captures are built here from fixed records (format.h), so that
 * nothing in them depends on the machine, the compiler or the run: pids,
 * times, module paths, load addresses, build-ids, stacks and figures are
 * constants, and the symbols are embedded (a SYMBOLS record), so no binary
 * is opened. NEW is a full recording with two snapshots; BASE a sampled
 * one (unbiased figures), of the same program loaded at other addresses.
 * Between them they hold inlined frames, an allocator frame to hide, two
 * stacks that read the same, a frame without a symbol, a bucket without a
 * stack, a module no frame falls in, names with XML, JSON and folded
 * metacharacters, lost allocations, RSS samples and the recorder's bytes.
 *
 * Each output is one golden file (the list in `outputs` below); pprof's
 * gzipped protobuf is compared as a readable dump of its fields (decoded
 * here, by profile.proto's field numbers), so that a reviewer reads what
 * changed. A change in any output fails this test with a `diff -u`.
 *
 * To accept a change in the outputs, regenerate the files and review the
 * diff before committing it:
 *
 *     make tests && HP_GOLDEN_UPDATE=1 build/tests/integration/test_golden
 *     git diff tests/golden/
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../src/format/encode.h"
#include "../../src/format/format.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

/* Where the golden files are: tests/golden/ of the source tree (the tests
 * run from its root, as `make check` does), or $HP_GOLDEN_DIR. */
static const char *golden_dir(void)
{
	const char *d = getenv("HP_GOLDEN_DIR");
	return d && *d ? d : "tests/golden";
}

/* --- the captures ---------------------------------------------------------- */

#define PF_X 1
#define PF_W 2
#define PF_R 4

struct seg {
	uint64_t vaddr, memsz, offset, flags;
};

struct module {
	const char *path;
	uint8_t build_id[8];
	size_t build_id_len;
	uint64_t bias;
	struct seg seg[3];
	uint32_t nseg;
};

/* One symbolic frame of an address. */
struct frame {
	const char *function, *file;
	uint64_t line, inlined;
};

/* A frame address: its module, its offset there and its symbols (none: not
 * in the SYMBOLS record, so shown as module+offset). */
struct address {
	int module;
	uint64_t offset;
	struct frame frames[2];
	uint32_t nframes;
};

enum {
	A_MAIN_PARSE, A_MAIN_INDEX, A_MAIN_UNKNOWN, A_PARSE_INPUT, A_PARSE_LINE, A_PARSE_LINE_2,
	A_BUILD_INDEX, A_CACHE_INSERT, A_VECTOR_INSERT, A_UNRESOLVED, A_LEGACY_LOADER,
	A_XMALLOC, A_XMALLOC_2, A_ALLOC_BUFFER, A_OPERATOR_NEW, A_COUNT
};

static const char *const src_main = "/home/dev/golden/src/main.c";
static const char *const src_parse = "/home/dev/golden/src/parse.c";
static const char *const src_lib = "/home/dev/libgolden/alloc.c";

static const struct address addresses[A_COUNT] = {
	[A_MAIN_PARSE] = {0, 0x1105, {{"main", src_main, 42, 0}}, 1},
	[A_MAIN_INDEX] = {0, 0x1183, {{"main", src_main, 47, 0}}, 1},
	[A_MAIN_UNKNOWN] = {0, 0x11c7, {{"main", src_main, 51, 0}}, 1},
	[A_PARSE_INPUT] = {0, 0x1411, {{"parse_input", src_parse, 88, 0}}, 1},
	/* tokenize inlined into parse_line */
	[A_PARSE_LINE] = {0, 0x148d, {{"tokenize", src_parse, 12, 1}, {"parse_line", src_parse, 30, 0}}, 2},
	[A_PARSE_LINE_2] = {0, 0x14b1, {{"tokenize", src_parse, 12, 1}, {"parse_line", src_parse, 30, 0}}, 2},
	[A_BUILD_INDEX] = {0, 0x1822, {{"build_index(Index&, unsigned long)", "/home/dev/golden/src/index.cc", 140, 0}}, 1},
	[A_CACHE_INSERT] = {0, 0x1a19, {{"Cache<std::string, Entry&>::insert(std::string const&)", "/home/dev/golden/src/cache.h", 77, 0}}, 1},
	[A_VECTOR_INSERT] = {0, 0x1c40, {{"std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>", "/usr/include/c++/12/bits/vector.tcc", 123, 0}}, 1},
	[A_UNRESOLVED] = {0, 0x2005, {{0}}, 0},
	[A_LEGACY_LOADER] = {0, 0x1e0b, {{"legacy_loader;v1 \"old\"", src_main, 200, 0}}, 1},
	[A_XMALLOC] = {1, 0x2107, {{"xmalloc", src_lib, 20, 0}}, 1},
	[A_XMALLOC_2] = {1, 0x2113, {{"xmalloc", src_lib, 21, 0}}, 1},
	[A_ALLOC_BUFFER] = {1, 0x2304, {{"golden_alloc_buffer", src_lib, 55, 0}}, 1},
	[A_OPERATOR_NEW] = {1, 0x2519, {{"operator new(unsigned long)", "", 0, 0}}, 1},
};

/* Stacks, innermost first, ids from 1. */
static const int stacks[][6] = {
	/* 1 */ {A_XMALLOC, A_PARSE_LINE, A_PARSE_INPUT, A_MAIN_PARSE, -1},
	/* 2 */ {A_ALLOC_BUFFER, A_BUILD_INDEX, A_MAIN_INDEX, -1},
	/* 3 */ {A_OPERATOR_NEW, A_CACHE_INSERT, A_BUILD_INDEX, A_MAIN_INDEX, -1},
	/* 4 */ {A_UNRESOLVED, A_MAIN_UNKNOWN, -1},
	/* 5: reads as stack 1 once the allocator frame is hidden */
	/* 5 */ {A_XMALLOC_2, A_PARSE_LINE, A_PARSE_INPUT, A_MAIN_PARSE, -1},
	/* 6 */ {A_VECTOR_INSERT, A_BUILD_INDEX, A_MAIN_INDEX, -1},
	/* 7 */ {A_ALLOC_BUFFER, A_LEGACY_LOADER, A_MAIN_INDEX, -1},
	/* 8: the same functions as 1, another line of parse_line */
	/* 8 */ {A_XMALLOC, A_PARSE_LINE_2, A_PARSE_INPUT, A_MAIN_PARSE, -1},
};
#define NSTACKS (sizeof stacks / sizeof *stacks)

struct bucket {
	uint64_t stack, size;
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
	uint64_t peak_count, peak_bytes, temp_count, temp_bytes;
};

struct snapshot {
	uint64_t seq, time_ns, reason, peak_time_ns, recorder_bytes;
	uint64_t lost[HP_LOST_KINDS][2];
	const struct bucket *buckets;
	size_t nbuckets;
};

struct capture {
	uint64_t pid, rate, realtime_ns;
	const char *const *argv;
	size_t argc;
	uint64_t bias[3];
	const struct snapshot *snaps;
	size_t nsnaps;
	const uint64_t (*rss)[3]; /* time, heap, rss */
	size_t nrss;
};

static const struct module modules[3] = {
	{"/opt/golden/bin/golden", {0xde, 0xad, 0xbe, 0xef, 0x00, 0x11, 0x22, 0x33}, 8, 0,
	 {{0x0, 0x1000, 0x0, PF_R}, {0x1000, 0x5000, 0x1000, PF_R | PF_X}, {0x7000, 0x800, 0x6000, PF_R | PF_W}}, 3},
	{"/usr/lib/x86_64-linux-gnu/libgolden.so.1", {0x01, 0x23, 0x45, 0x67, 0x89, 0xab}, 6, 0,
	 {{0x0, 0x2000, 0x0, PF_R}, {0x2000, 0x3000, 0x2000, PF_R | PF_X}}, 2},
	{"[vdso]", {0}, 0, 0, {{0x0, 0x2000, 0x0, PF_R | PF_X}}, 1},
};

static const struct bucket new_early[] = {
	{1, 0, 400, 25600, 380, 24320, 20, 1280, 350, 22400},
	{2, 0, 1, 1048576, 0, 0, 1, 1048576, 0, 0},
	{3, 0, 90, 5760, 70, 4480, 20, 1280, 5, 320},
};

static const struct bucket new_exit[] = {
	{1, 0, 1000, 64000, 990, 63360, 12, 768, 900, 57600},
	{2, 0, 3, 3145728, 1, 1048576, 3, 3145728, 0, 0},
	{3, 0, 250, 16000, 200, 12800, 80, 5120, 10, 640},
	{4, 0, 7, 700, 0, 0, 7, 700, 0, 0},
	{5, 0, 500, 32000, 500, 32000, 4, 256, 450, 28800},
	{6, 0, 40, 81920, 39, 77824, 20, 40960, 30, 61440},
	{8, 0, 60, 3840, 60, 3840, 2, 128, 55, 3520},
	{0, 0, 2, 128, 0, 0, 2, 128, 0, 0},
};

static const struct snapshot new_snaps[] = {
	{1, 500000000, HP_SNAP_INTERVAL, 400000000, 1048576, {{0}}, new_early,
	 sizeof new_early / sizeof *new_early},
	{2, 1250000000, HP_SNAP_EXIT, 900000000, 1572864,
	 {[HP_LOST_UNWIND_FAILED] = {2, 128}, [HP_LOST_UNKNOWN_FREE] = {3, 96}}, new_exit,
	 sizeof new_exit / sizeof *new_exit},
};

static const uint64_t new_rss[][3] = {
	{100000000, 65536, 4194304},
	{500000000, 1200000, 6291456},
	{900000000, 3300000, 9437184},
	{1250000000, 120000, 8388608},
};

/* Sampled at one sample per 4096 bytes: raw counts of sampled
 * allocations, per allocation size. */
static const struct bucket base_exit[] = {
	{1, 64, 30, 1920, 29, 1856, 2, 128, 25, 1600},
	{1, 32, 10, 320, 10, 320, 0, 0, 9, 288},
	{2, 1048576, 2, 2097152, 0, 0, 2, 2097152, 0, 0},
	{3, 64, 8, 512, 8, 512, 3, 192, 1, 64},
	{7, 8192, 5, 40960, 2, 16384, 4, 32768, 0, 0},
	{6, 2048, 4, 8192, 4, 8192, 2, 4096, 3, 6144},
};

static const struct snapshot base_snaps[] = {
	{1, 2000000000, HP_SNAP_EXIT, 1500000000, 2097152, {{0}}, base_exit,
	 sizeof base_exit / sizeof *base_exit},
};

static const uint64_t base_rss[][3] = {
	{1000000000, 2000000, 7340032},
	{2000000000, 1000000, 6291456},
};

static const char *const new_argv[] = {"golden", "--input", "data<1>.txt"};
static const char *const base_argv[] = {"/opt/golden/bin/golden", "--input", "data.txt"};

static const struct capture new_cap = {
	4242, 1, 1700000000000000000ull, new_argv, 3,
	{0x555555554000, 0x7f1234500000, 0x7ffff7fc1000},
	new_snaps, 2, new_rss, 4,
};

static const struct capture base_cap = {
	4141, 4096, 1699990000000000000ull, base_argv, 3,
	{0x563412340000, 0x7f5678900000, 0x7ffd12345000},
	base_snaps, 1, base_rss, 2,
};

static uint64_t address_of(const struct capture *c, int a)
{
	return c->bias[addresses[a].module] + addresses[a].offset;
}

static void emit(struct hp_buf *file, struct hp_buf *p, unsigned type)
{
	hp_format_put_record(file, type, p->data, p->len, NULL);
	p->len = 0;
}

static void put_meta(struct hp_buf *p, const struct capture *c)
{
	hp_buf_put_u(p, c->pid);
	hp_buf_put_u(p, 1);       /* ppid */
	hp_buf_put_u(p, c->realtime_ns);
	hp_buf_put_u(p, 123456789); /* start_monotonic_ns */
	hp_buf_put_u(p, 4096);    /* page_size */
	hp_buf_put_str(p, modules[0].path);
	hp_buf_put_u(p, c->argc);
	for (size_t i = 0; i < c->argc; i++)
		hp_buf_put_str(p, c->argv[i]);
	hp_buf_put_str(p, "0.1.0");
	hp_buf_put_u(p, c->rate);
	hp_buf_put_u(p, HP_UNWIND_FP);
	hp_buf_put_u(p, 64);      /* max_depth */
	hp_buf_put_u(p, 0);       /* flags */
	hp_buf_put_u(p, 12);      /* dump_signal */
	hp_buf_put_u(p, 500);     /* interval_ms */
	hp_buf_put_u(p, 0);       /* dump_every_bytes */
	hp_buf_put_u(p, 0);       /* dump_high_water_bytes */
}

static void put_modules(struct hp_buf *p, const struct capture *c)
{
	hp_buf_put_u(p, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct module *m = &modules[i];
		hp_buf_put_u(p, HP_MOD_LOAD);
		hp_buf_put_u(p, 1000 * i); /* time */
		hp_buf_put_u(p, i + 1);    /* module id */
		hp_buf_put_str(p, m->path);
		hp_buf_put_blob(p, m->build_id, m->build_id_len);
		hp_buf_put_u(p, c->bias[i]);
		hp_buf_put_u(p, m->nseg);
		for (uint32_t s = 0; s < m->nseg; s++) {
			hp_buf_put_u(p, m->seg[s].vaddr);
			hp_buf_put_u(p, m->seg[s].memsz);
			hp_buf_put_u(p, m->seg[s].offset);
			hp_buf_put_u(p, m->seg[s].flags);
		}
	}
}

static void put_stacks(struct hp_buf *p, const struct capture *c)
{
	hp_buf_put_u(p, 1);
	hp_buf_put_u(p, NSTACKS);
	for (size_t i = 0; i < NSTACKS; i++) {
		uint32_t depth = 0;
		while (stacks[i][depth] >= 0)
			depth++;
		hp_buf_put_u(p, depth);
		hp_buf_put_u(p, address_of(c, stacks[i][0]));
		for (uint32_t f = 1; f < depth; f++)
			hp_buf_put_s(p, (int64_t)(address_of(c, stacks[i][f]) -
						  address_of(c, stacks[i][f - 1])));
	}
}

static void put_timeseries(struct hp_buf *p, const struct capture *c)
{
	uint64_t prev = 0;

	hp_buf_put_u(p, c->nrss);
	for (size_t i = 0; i < c->nrss; i++) {
		hp_buf_put_s(p, (int64_t)(c->rss[i][0] - prev));
		hp_buf_put_u(p, c->rss[i][1]);
		hp_buf_put_u(p, c->rss[i][2]);
		prev = c->rss[i][0];
	}
}

static void put_snapshot(struct hp_buf *p, const struct snapshot *s)
{
	uint64_t t[6] = {0}, top = 0, nlost = 0;

	for (size_t i = 0; i < s->nbuckets; i++) {
		const struct bucket *b = &s->buckets[i];
		t[0] += b->alloc_count;
		t[1] += b->alloc_bytes;
		t[2] += b->free_count;
		t[3] += b->free_bytes;
		t[4] += b->peak_bytes;
		t[5] += b->peak_count;
		top = b->stack > top ? b->stack : top;
	}
	hp_buf_put_u(p, s->seq);
	hp_buf_put_u(p, s->time_ns);
	hp_buf_put_u(p, s->reason);
	hp_buf_put_u(p, 0); /* signal */
	for (int k = 0; k < 6; k++)
		hp_buf_put_u(p, t[k]);
	hp_buf_put_u(p, s->peak_time_ns);
	hp_buf_put_u(p, top + 1);
	for (int k = 1; k < HP_LOST_KINDS; k++)
		nlost += s->lost[k][0] != 0;
	hp_buf_put_u(p, nlost);
	for (int k = 1; k < HP_LOST_KINDS; k++) {
		if (!s->lost[k][0])
			continue;
		hp_buf_put_u(p, (uint64_t)k);
		hp_buf_put_u(p, s->lost[k][0]);
		hp_buf_put_u(p, s->lost[k][1]);
	}
	hp_buf_put_u(p, s->nbuckets);
	for (size_t i = 0; i < s->nbuckets; i++) {
		const struct bucket *b = &s->buckets[i];
		const uint64_t f[12] = {b->stack, 0, 0, b->size, b->alloc_count, b->alloc_bytes,
					b->free_count, b->free_bytes, b->peak_count, b->peak_bytes,
					b->temp_count, b->temp_bytes};
		for (int k = 0; k < 12; k++)
			hp_buf_put_u(p, f[k]);
	}
	hp_buf_put_u(p, s->recorder_bytes);
}

/* The string index of s in strs[0..*n), added when missing. */
static uint64_t string_index(const char **strs, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(strs[i], s) == 0)
			return i;
	strs[*n] = s;
	return (*n)++;
}

static void put_symbols(struct hp_buf *p, const struct capture *c)
{
	const char *strs[2 * A_COUNT + 1];
	uint64_t idx[A_COUNT][2][2];
	size_t n = 0, naddrs = 0;

	string_index(strs, &n, "");
	for (int a = 0; a < A_COUNT; a++) {
		for (uint32_t f = 0; f < addresses[a].nframes; f++) {
			idx[a][f][0] = string_index(strs, &n, addresses[a].frames[f].function);
			idx[a][f][1] = string_index(strs, &n, addresses[a].frames[f].file);
		}
		naddrs += addresses[a].nframes > 0;
	}
	hp_buf_put_u(p, n);
	for (size_t i = 0; i < n; i++)
		hp_buf_put_str(p, strs[i]);
	hp_buf_put_u(p, 3); /* modules: the program and the library symbolized, the vdso not */
	hp_buf_put_u(p, HP_SYMSTATUS_OK);
	hp_buf_put_u(p, HP_SYMSTATUS_OK);
	hp_buf_put_u(p, HP_SYMSTATUS_MISSING);
	hp_buf_put_u(p, naddrs);
	for (int a = 0; a < A_COUNT; a++) {
		if (!addresses[a].nframes)
			continue;
		hp_buf_put_u(p, address_of(c, a));
		hp_buf_put_u(p, addresses[a].nframes);
		for (uint32_t f = 0; f < addresses[a].nframes; f++) {
			hp_buf_put_u(p, idx[a][f][0]);
			hp_buf_put_u(p, idx[a][f][1]);
			hp_buf_put_u(p, addresses[a].frames[f].line);
			hp_buf_put_u(p, addresses[a].frames[f].inlined);
		}
	}
	hp_buf_put_u(p, 0); /* image */
}

/* Writes capture c to path. Returns 0 or -errno. */
static int write_capture(const struct capture *c, const char *path)
{
	struct hp_buf file = {.grow = hp_buf_grow_heap}, p = {.grow = hp_buf_grow_heap};
	int ret;

	hp_format_put_file_header(&file);
	put_meta(&p, c);
	emit(&file, &p, HP_REC_META);
	put_modules(&p, c);
	emit(&file, &p, HP_REC_MODULES);
	put_stacks(&p, c);
	emit(&file, &p, HP_REC_STACKS);
	put_timeseries(&p, c);
	emit(&file, &p, HP_REC_TIMESERIES);
	for (size_t i = 0; i < c->nsnaps; i++) {
		put_snapshot(&p, &c->snaps[i]);
		emit(&file, &p, HP_REC_SNAPSHOT);
	}
	put_symbols(&p, c);
	emit(&file, &p, HP_REC_SYMBOLS);
	ret = file.err ? file.err : p.err;
	if (!ret)
		ret = hp_test_write_file(path, file.data, file.len);
	free(file.data);
	free(p.data);
	return ret;
}

/* --- pprof as text ------------------------------------------------------ */

/* profile.proto's messages, as far as a dump needs them: which fields hold
 * a nested message, which a string, which packed varints. */
enum msg { M_PROFILE, M_VALUETYPE, M_SAMPLE, M_LABEL, M_MAPPING, M_LOCATION, M_LINE, M_FUNCTION };

struct field {
	enum msg msg;
	unsigned num;
	const char *name;
	int kind; /* 0 varint, 1 message, 2 string, 3 packed varints */
	enum msg sub;
};

static const struct field fields[] = {
	{M_PROFILE, 1, "sample_type", 1, M_VALUETYPE}, {M_PROFILE, 2, "sample", 1, M_SAMPLE},
	{M_PROFILE, 3, "mapping", 1, M_MAPPING},        {M_PROFILE, 4, "location", 1, M_LOCATION},
	{M_PROFILE, 5, "function", 1, M_FUNCTION},      {M_PROFILE, 6, "string_table", 2, 0},
	{M_PROFILE, 7, "drop_frames", 0, 0},            {M_PROFILE, 8, "keep_frames", 0, 0},
	{M_PROFILE, 9, "time_nanos", 0, 0},             {M_PROFILE, 10, "duration_nanos", 0, 0},
	{M_PROFILE, 11, "period_type", 1, M_VALUETYPE}, {M_PROFILE, 12, "period", 0, 0},
	{M_PROFILE, 13, "comment", 0, 0},               {M_PROFILE, 14, "default_sample_type", 0, 0},
	{M_VALUETYPE, 1, "type", 0, 0},                 {M_VALUETYPE, 2, "unit", 0, 0},
	{M_SAMPLE, 1, "location_id", 3, 0},             {M_SAMPLE, 2, "value", 3, 0},
	{M_SAMPLE, 3, "label", 1, M_LABEL},             {M_LABEL, 1, "key", 0, 0},
	{M_LABEL, 2, "str", 0, 0},                      {M_LABEL, 3, "num", 0, 0},
	{M_LABEL, 4, "num_unit", 0, 0},                 {M_MAPPING, 1, "id", 0, 0},
	{M_MAPPING, 2, "memory_start", 0, 0},           {M_MAPPING, 3, "memory_limit", 0, 0},
	{M_MAPPING, 4, "file_offset", 0, 0},            {M_MAPPING, 5, "filename", 0, 0},
	{M_MAPPING, 6, "build_id", 0, 0},               {M_MAPPING, 7, "has_functions", 0, 0},
	{M_MAPPING, 8, "has_filenames", 0, 0},          {M_MAPPING, 9, "has_line_numbers", 0, 0},
	{M_MAPPING, 10, "has_inline_frames", 0, 0},     {M_LOCATION, 1, "id", 0, 0},
	{M_LOCATION, 2, "mapping_id", 0, 0},            {M_LOCATION, 3, "address", 0, 0},
	{M_LOCATION, 4, "line", 1, M_LINE},             {M_LOCATION, 5, "is_folded", 0, 0},
	{M_LINE, 1, "function_id", 0, 0},               {M_LINE, 2, "line", 0, 0},
	{M_FUNCTION, 1, "id", 0, 0},                    {M_FUNCTION, 2, "name", 0, 0},
	{M_FUNCTION, 3, "system_name", 0, 0},           {M_FUNCTION, 4, "filename", 0, 0},
	{M_FUNCTION, 5, "start_line", 0, 0},
};

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Dumps the message p[0..end) one field a line, nested messages indented.
 * Returns 0, or -1 on bytes that are not well-formed protobuf. */
static int dump_msg(FILE *out, enum msg msg, const uint8_t *p, const uint8_t *end, int indent,
		    size_t *nstrings)
{
	while (p < end) {
		const struct field *f = NULL;
		uint64_t key, v, len;

		if (get_varint(&p, end, &key))
			return -1;
		for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
			if (fields[i].msg == msg && fields[i].num == key >> 3)
				f = &fields[i];
		fprintf(out, "%*s", indent, "");
		if ((key & 7) == 0) {
			if (get_varint(&p, end, &v))
				return -1;
			fprintf(out, "%s: %" PRIu64 "\n", f ? f->name : "?", v);
			continue;
		}
		if ((key & 7) != 2 || get_varint(&p, end, &len) || len > (uint64_t)(end - p))
			return -1;
		if (f && f->kind == 1) {
			fprintf(out, "%s {\n", f->name);
			if (dump_msg(out, f->sub, p, p + len, indent + 2, nstrings))
				return -1;
			fprintf(out, "%*s}\n", indent, "");
		} else if (f && f->kind == 3) {
			const uint8_t *q = p;
			fprintf(out, "%s: [", f->name);
			while (q < p + len) {
				if (get_varint(&q, p + len, &v))
					return -1;
				/* int64 values: two's complement */
				fprintf(out, "%" PRId64 "%s", (int64_t)v, q < p + len ? ", " : "");
			}
			fputs("]\n", out);
		} else {
			fprintf(out, "%s[%zu]: \"", f ? f->name : "?", (*nstrings)++);
			for (uint64_t i = 0; i < len; i++) {
				if (p[i] == '"' || p[i] == '\\')
					fprintf(out, "\\%c", p[i]);
				else if (p[i] < 0x20 || p[i] == 0x7f)
					fprintf(out, "\\x%02x", p[i]);
				else
					fputc(p[i], out);
			}
			fputs("\"\n", out);
		}
		p += len;
	}
	return 0;
}

/* Writes the text dump of the gzipped profile in path to out_path.
 * Returns 0 or -1. */
static int dump_pprof(const char *path, const char *out_path)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16, len = 0, nstrings = 0;
	uint8_t *data = malloc(cap);
	FILE *out = NULL;
	int n, ret = -1;

	if (!gz || !data)
		goto out;
	while ((n = gzread(gz, data + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap) {
			uint8_t *q = realloc(data, cap * 2);
			if (!q)
				goto out;
			data = q;
			cap *= 2;
		}
	}
	if (n < 0 || !(out = fopen(out_path, "w")))
		goto out;
	ret = dump_msg(out, M_PROFILE, data, data + len, 0, &nstrings);
	if (fclose(out) != 0)
		ret = -1;
out:
	if (gz)
		gzclose(gz);
	free(data);
	return ret;
}

/* --- the outputs ------------------------------------------------------------ */

/* Each golden file and the command that makes it, run in the scratch
 * directory that holds the captures new.hpf and base.hpf (so that paths
 * in the outputs are these names). A command writes the file named by
 * the golden file, "$out"; a pprof output is dumped to text afterwards. */
static const struct {
	const char *name, *cmd;
	int pprof;
} outputs[] = {
	{"report.txt", "$hp report --width 100 new.hpf > $out", 0},
	{"report-frames.txt", "$hp report --width 60 --top 3 --frames 2 new.hpf > $out", 0},
	{"report-snapshot1.txt", "$hp report --width 100 --snapshot 1 new.hpf > $out", 0},
	{"report.json", "$hp report --json new.hpf > $out", 0},
	{"inspect.txt", "$hp inspect new.hpf > $out", 0},
	{"inspect-stacks.txt", "$hp inspect --stacks new.hpf > $out", 0},
	{"export-pprof.txt", "$hp export new.hpf --format pprof -o $out.pb.gz", 1},
	{"export-pprof-peak.txt", "$hp export new.hpf --format pprof --at peak -o $out.pb.gz", 1},
	{"export-gperftools.txt", "$hp export new.hpf --format gperftools -o $out", 0},
	{"export-gperftools-peak.txt", "$hp export new.hpf --format gperftools --at peak -o $out", 0},
	{"export-folded.txt", "$hp export new.hpf --format folded -o $out", 0},
	{"export-folded-allocations.txt", "$hp export new.hpf --format folded --metric allocations -o $out", 0},
	{"flamegraph.svg", "$hp flamegraph new.hpf -o $out", 0},
	{"flamegraph-leaked.svg", "$hp flamegraph new.hpf --metric leaked --width 500 -o $out", 0},
	{"base-report.txt", "$hp report --width 100 base.hpf > $out", 0},
	{"base-report.json", "$hp report --json base.hpf > $out", 0},
	{"base-export-pprof.txt", "$hp export base.hpf --format pprof -o $out.pb.gz", 1},
	{"base-export-gperftools.txt", "$hp export base.hpf --format gperftools -o $out", 0},
	{"base-export-folded.txt", "$hp export base.hpf --format folded --metric allocated -o $out", 0},
	{"base-flamegraph.svg", "$hp flamegraph base.hpf --metric allocations -o $out", 0},
	{"diff.txt", "$hp diff --width 100 --metric leaked base.hpf new.hpf > $out", 0},
	{"diff-peak.txt", "$hp diff --width 100 --metric peak --top 0 --frames 0 base.hpf new.hpf > $out", 0},
	{"diff-allocations.txt", "$hp diff --width 80 --metric allocations base.hpf new.hpf > $out", 0},
	{"diff-pprof.txt", "$hp diff --metric leaked --format pprof -o $out.pb.gz base.hpf new.hpf", 1},
};

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (data = malloc((size_t)n + 1)) && fread(data, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
		data[n] = '\0';
	} else {
		free(data);
		data = NULL;
	}
	fclose(f);
	return data;
}

/* Writes both captures into the scratch directory, once. */
static int captures(void)
{
	static int state; /* 0 not yet, 1 written, -1 failed */
	char path[4400];

	if (!state) {
		snprintf(path, sizeof path, "%s/new.hpf", hp_test_tmp());
		state = write_capture(&new_cap, path) ? -1 : 1;
		snprintf(path, sizeof path, "%s/base.hpf", hp_test_tmp());
		if (state == 1 && write_capture(&base_cap, path))
			state = -1;
	}
	return expect_true(state == 1, "the synthetic captures are written");
}

/* Runs output i and compares it with its golden file (or, with
 * HP_GOLDEN_UPDATE=1, writes the golden file). */
static void check_output(size_t i)
{
	const char *update = getenv("HP_GOLDEN_UPDATE");
	char got[4400], want[4400], raw[4500];
	char *g, *w;
	size_t glen = 0, wlen = 0;
	int st;

	if (!captures())
		return;
	snprintf(got, sizeof got, "%s/%s", hp_test_tmp(), outputs[i].name);
	snprintf(want, sizeof want, "%s/%s", golden_dir(), outputs[i].name);
	snprintf(raw, sizeof raw, "%s.pb.gz", got);
	st = hp_test_sh("cd '%s' && hp='%s/heapprof' out='%s' && %s", hp_test_tmp(), hp_test_build(),
			outputs[i].name, outputs[i].cmd);
	if (!expect_eq_u64((uint64_t)st, 0, outputs[i].cmd))
		return;
	if (outputs[i].pprof && !expect_eq_u64((uint64_t)dump_pprof(raw, got), 0,
						"the pprof output is gzipped protobuf"))
		return;
	if (update && strcmp(update, "1") == 0) {
		expect_eq_u64((uint64_t)hp_test_sh("cp '%s' '%s' && chmod 644 '%s'", got, want, want), 0,
			      "the golden file is updated");
		return;
	}
	g = read_all(got, &glen);
	w = read_all(want, &wlen);
	if (!expect_true(g != NULL, "the output is read") ||
	    !expect_true(w != NULL, "the golden file is there (HP_GOLDEN_UPDATE=1 writes it)")) {
		free(g);
		free(w);
		return;
	}
	if (glen != wlen || memcmp(g, w, glen) != 0) {
		hp_test_sh("diff -u '%s' '%s' | head -n 60 >&2", want, got);
		expect_true(0, "the output is the golden file, byte for byte "
			       "(HP_GOLDEN_UPDATE=1 regenerates tests/golden/: see test_golden.c)");
	}
	free(g);
	free(w);
}

/* One test per output, so that HP_TEST_NAME picks one. */
#define GOLDEN(name, i) \
	HP_TEST(name) { check_output(i); }

GOLDEN(golden_report, 0)
GOLDEN(golden_report_frames, 1)
GOLDEN(golden_report_snapshot1, 2)
GOLDEN(golden_report_json, 3)
GOLDEN(golden_inspect, 4)
GOLDEN(golden_inspect_stacks, 5)
GOLDEN(golden_export_pprof, 6)
GOLDEN(golden_export_pprof_peak, 7)
GOLDEN(golden_export_gperftools, 8)
GOLDEN(golden_export_gperftools_peak, 9)
GOLDEN(golden_export_folded, 10)
GOLDEN(golden_export_folded_allocations, 11)
GOLDEN(golden_flamegraph, 12)
GOLDEN(golden_flamegraph_leaked, 13)
GOLDEN(golden_base_report, 14)
GOLDEN(golden_base_report_json, 15)
GOLDEN(golden_base_export_pprof, 16)
GOLDEN(golden_base_export_gperftools, 17)
GOLDEN(golden_base_export_folded, 18)
GOLDEN(golden_base_flamegraph, 19)
GOLDEN(golden_diff, 20)
GOLDEN(golden_diff_peak, 21)
GOLDEN(golden_diff_allocations, 22)
GOLDEN(golden_diff_pprof, 23)

/* Every golden file has its test, and every file in tests/golden/ is one
 * of them (a stale file would never be compared). */
HP_TEST(golden_files_listed)
{
	enum { N = sizeof outputs / sizeof *outputs };
	char *ls = hp_test_sh_out("ls '%s'", golden_dir());
	size_t files = 0;

	expect_eq_u64(N, 24, "each output has a GOLDEN test above");
	if (!ls)
		return;
	for (char *line = strtok(ls, "\n"); line; line = strtok(NULL, "\n")) {
		int known = strcmp(line, "README.md") == 0;
		if (known)
			continue;
		for (size_t i = 0; i < N; i++)
			known |= strcmp(line, outputs[i].name) == 0;
		if (!known)
			fprintf(stderr, "  tests/golden/%s: not an output of test_golden.c\n", line);
		expect_true(known, "a golden file is an output of this test");
		files++;
	}
	expect_eq_u64(files, N, "one golden file per output");
	free(ls);
}

/* The golden pprof profiles are read by go tool pprof, not only by the dump
 * above: the golden text is of a profile pprof accepts. */
HP_TEST(golden_pprof_read_by_go)
{
	char *raw;

	if (!captures() || !hp_test_need_go())
		return;
	expect_eq_u64((uint64_t)hp_test_sh("cd '%s' && '%s/heapprof' export new.hpf --format pprof "
					   "-o go.pb.gz", hp_test_tmp(), hp_test_build()), 0,
		      "export pprof");
	raw = hp_test_sh_out("go tool pprof -raw '%s/go.pb.gz' 2>&1", hp_test_tmp());
	expect_true(raw && strstr(raw, "parse_line"), "go tool pprof reads the golden profile");
	free(raw);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
