/*
 * pprof.c - the pprof profile writer (see pprof.h).
 *
 * profile.proto is written by hand, with the field numbers of pprof's
 * proto/profile.proto (the F_* constants below). The whole Profile message
 * is built in memory, then gzipped (zlib with windowBits 31 writes the
 * gzip header pprof expects) to the caller's stream.
 *
 * Nested messages (Function, Mapping, Location, Sample) are encoded in a
 * scratch buffer and appended to the Profile with their length prefix.
 * Everything a message refers to is written before it, on first use: a
 * Sample's Locations, a Location's Functions and Mapping. The string table
 * goes last, because strings are interned while the rest is written;
 * protobuf readers take fields in any order and pprof resolves string
 * indexes after decoding.
 *
 * Ids: functions, locations and mappings are numbered from 1 in the order
 * they are written (0 means "none" in profile.proto). A profile holds up
 * to two models (a diff's NEW and BASE, "slots" 0 and 1); each slot maps
 * its model's location and module-segment indexes to ids.
 *
 * Buffers are format's struct hp_buf (encode.h), with its sticky error:
 * the first failed allocation is remembered, later writes do nothing, and
 * the error is returned once at the end.
 */
#include "pprof.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/strtab.h"
#include "../common/table.h"
#include "../common/varint.h"
#include "../format/encode.h"
#include "diff.h"
#include "group.h"
#include "../common/text.h"

/* Field numbers of profile.proto. */
enum {
	F_PROFILE_SAMPLE_TYPE = 1, F_PROFILE_SAMPLE = 2, F_PROFILE_MAPPING = 3,
	F_PROFILE_LOCATION = 4, F_PROFILE_FUNCTION = 5, F_PROFILE_STRING_TABLE = 6,
	F_PROFILE_TIME_NANOS = 9, F_PROFILE_DURATION_NANOS = 10, F_PROFILE_PERIOD_TYPE = 11,
	F_PROFILE_PERIOD = 12, F_PROFILE_COMMENT = 13, F_PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	F_VALUETYPE_TYPE = 1, F_VALUETYPE_UNIT = 2,
	F_SAMPLE_LOCATION_ID = 1, F_SAMPLE_VALUE = 2, F_SAMPLE_LABEL = 3,
	F_LABEL_KEY = 1, F_LABEL_STR = 2, F_LABEL_NUM = 3, F_LABEL_NUM_UNIT = 4,
	F_MAPPING_ID = 1, F_MAPPING_MEMORY_START = 2, F_MAPPING_MEMORY_LIMIT = 3,
	F_MAPPING_FILE_OFFSET = 4, F_MAPPING_FILENAME = 5, F_MAPPING_BUILD_ID = 6,
	F_MAPPING_HAS_FUNCTIONS = 7, F_MAPPING_HAS_FILENAMES = 8,
	F_MAPPING_HAS_LINE_NUMBERS = 9, F_MAPPING_HAS_INLINE_FRAMES = 10,
	F_LOCATION_ID = 1, F_LOCATION_MAPPING_ID = 2, F_LOCATION_ADDRESS = 3, F_LOCATION_LINE = 4,
	F_LINE_FUNCTION_ID = 1, F_LINE_LINE = 2,
	F_FUNCTION_ID = 1, F_FUNCTION_NAME = 2, F_FUNCTION_SYSTEM_NAME = 3,
	F_FUNCTION_FILENAME = 4,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

#define MAX_VALUES 8 /* sample types of a diff */
#define PF_X 1       /* ELF segment flag: executable */

struct pp {
	/* Buffers (format's, grown with realloc) keep the first error. */
	struct hp_buf out;  /* the Profile message */
	struct hp_buf msg;  /* the nested message being built */
	struct hp_buf line; /* a Line, Label or packed field inside msg */
	struct hp_strtab st; /* the string table: [0] is "" */
	struct hp_u64map funcs; /* (name, file) string indexes -> function id */
	uint64_t nfuncs, nlocs, nmaps;
	const struct hp_model *models[2];
	uint64_t *locid[2]; /* per model location: its id, 0 = not written */
	uint64_t *mapid[2]; /* per module x segment: its mapping id, 0 = not written */
	/* Per model and attribution label (attr_labels): the string index of
	 * the value of each id (type index, context, thread, heap tag), so a
	 * million buckets name each value once. */
	struct hp_u64map label[2][4];
	/* The Profile is gzipped to file as it is made: out holds the fields
	 * not yet deflated (a Profile is its fields in any order, so it is cut
	 * between two), at most about FLUSH_BYTES. */
	FILE *file;
	z_stream z;
	int z_on;
	int z_err; /* 0, or the first -errno of deflating or writing */
};

#define FLUSH_BYTES (1u << 20)

static int pp_flush(struct pp *pp, int finish);

static void put_tag(struct hp_buf *b, unsigned field, unsigned wire)
{
	hp_buf_put_u(b, (uint64_t)field << 3 | wire);
}

/* An integer field; zero is the default and is left out, as proto3 does.
 * int64 fields are the same varint of the two's complement. */
static void put_uint(struct hp_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_tag(b, field, WIRE_VARINT);
	hp_buf_put_u(b, v);
}

static void put_len(struct hp_buf *b, unsigned field, const void *d, size_t n)
{
	put_tag(b, field, WIRE_LEN);
	hp_buf_put_u(b, n);
	hp_buf_put_bytes(b, d, n);
}

/* Appends sub as a length-delimited field of b and empties sub. */
static void put_sub(struct hp_buf *b, unsigned field, struct hp_buf *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	put_len(b, field, sub->data, sub->len);
	sub->len = 0;
}

static void put_packed(struct hp_buf *b, unsigned field, const uint64_t *v, size_t n)
{
	uint8_t tmp[HP_VARINT_MAX_BYTES];
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += hp_varint_put(tmp, v[i]);
	put_tag(b, field, WIRE_LEN);
	hp_buf_put_u(b, len);
	for (size_t i = 0; i < n; i++)
		hp_buf_put_u(b, v[i]);
}

/* The index of s in the string table, added on first use; 0 on failure
 * (the error is kept in the output buffer). */
static uint64_t intern(struct pp *pp, const char *s)
{
	uint32_t i;

	if (pp->out.err)
		return 0;
	if (hp_strtab_intern(&pp->st, s, &i)) {
		pp->out.err = -ENOMEM;
		return 0;
	}
	return i;
}

/* The id of the Function (name, file), written on first use. pprof has
 * no mangled names from us: system_name repeats the name. */
static uint64_t function_id(struct pp *pp, const struct hp_sym *s)
{
	uint64_t name = intern(pp, s->function), file = intern(pp, s->file), id;
	uint64_t key = name << 32 | file;
	uint32_t known;

	if (pp->out.err)
		return 0;
	if (hp_u64map_get(&pp->funcs, key, &known))
		return known;
	id = ++pp->nfuncs;
	if (hp_u64map_put(&pp->funcs, key, (uint32_t)id)) {
		pp->out.err = -ENOMEM;
		return 0;
	}
	put_uint(&pp->msg, F_FUNCTION_ID, id);
	put_uint(&pp->msg, F_FUNCTION_NAME, name);
	put_uint(&pp->msg, F_FUNCTION_SYSTEM_NAME, name);
	put_uint(&pp->msg, F_FUNCTION_FILENAME, file);
	put_sub(&pp->out, F_PROFILE_FUNCTION, &pp->msg);
	return id;
}

/* The Mapping of segment seg of module mod, written on first use: the
 * range the kernel mapped for it (whole pages) and its file offset, which
 * is what pprof needs to turn an address back into an ELF address. */
static uint64_t mapping_id(struct pp *pp, int slot, int mod, uint32_t seg)
{
	const struct hp_model *m = pp->models[slot];
	const struct hp_mmodule *mm = &m->modules[mod];
	const struct hp_rec_segment *s = &mm->cap->seg[seg];
	uint64_t *id = &pp->mapid[slot][(size_t)mod * HP_CAP_MAX_SEGMENTS + seg];
	uint64_t page = m->cap->page_size ? m->cap->page_size : 4096;
	uint64_t lo = mm->cap->bias + s->vaddr, start = lo & ~(page - 1);
	int symbolized = mm->status == HP_MODSYM_OK || mm->status == HP_MODSYM_EMBEDDED;
	char hex[2 * sizeof mm->cap->build_id + 1];

	if (*id)
		return *id;
	for (size_t i = 0; i < mm->cap->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mm->cap->build_id[i]);
	hex[2 * mm->cap->build_id_len] = '\0';
	*id = ++pp->nmaps;
	put_uint(&pp->msg, F_MAPPING_ID, *id);
	put_uint(&pp->msg, F_MAPPING_MEMORY_START, start);
	put_uint(&pp->msg, F_MAPPING_MEMORY_LIMIT, (lo + s->memsz + page - 1) & ~(page - 1));
	put_uint(&pp->msg, F_MAPPING_FILE_OFFSET,
		 s->offset >= lo - start ? s->offset - (lo - start) : 0);
	put_uint(&pp->msg, F_MAPPING_FILENAME, intern(pp, mm->cap->path));
	put_uint(&pp->msg, F_MAPPING_BUILD_ID, intern(pp, hex));
	/* Modules we could not symbolize leave pprof free to try (with
	 * PPROF_BINARY_PATH, say); the lines we give are then placeholders. */
	put_uint(&pp->msg, F_MAPPING_HAS_FUNCTIONS, symbolized);
	put_uint(&pp->msg, F_MAPPING_HAS_FILENAMES, symbolized);
	put_uint(&pp->msg, F_MAPPING_HAS_LINE_NUMBERS, symbolized);
	put_uint(&pp->msg, F_MAPPING_HAS_INLINE_FRAMES, symbolized);
	put_sub(&pp->out, F_PROFILE_MAPPING, &pp->msg);
	return *id;
}

/* Writes the mapping of the program's own executable segment (of each
 * model) before any other: pprof takes the first mapping for the main
 * binary and titles the profile with its file ("File: prog"), so a mapping
 * written on first use (libstdc++ for a C++ program) would name the
 * profile after a library. */
static void put_main_mappings(struct pp *pp)
{
	for (int slot = 0; slot < 2 && pp->models[slot]; slot++) {
		const struct hp_model *m = pp->models[slot];
		int mod = hp_model_main_module(m);
		const struct hp_cap_module *cm;
		uint32_t nseg, seg = 0;

		if (mod < 0)
			continue;
		cm = m->modules[mod].cap;
		nseg = cm->nseg < HP_CAP_MAX_SEGMENTS ? cm->nseg : HP_CAP_MAX_SEGMENTS;
		while (seg < nseg && !(cm->seg[seg].flags & PF_X))
			seg++;
		if (nseg) /* the executable segment, else the first */
			mapping_id(pp, slot, mod, seg < nseg ? seg : 0);
	}
}

/* The mapping of an address: its module's executable segment that holds
 * it (any segment if none is executable), or 0. */
static uint64_t mapping_of(struct pp *pp, int slot, const struct hp_location *l, uint64_t addr)
{
	const struct hp_model *m = pp->models[slot];
	const struct hp_cap_module *cm;
	int any = -1;

	if (l->module < 0 || (size_t)l->module >= m->nmodules)
		return 0;
	cm = m->modules[l->module].cap;
	for (uint32_t s = 0; s < cm->nseg && s < HP_CAP_MAX_SEGMENTS; s++) {
		uint64_t lo = cm->bias + cm->seg[s].vaddr;
		if (addr < lo || addr >= lo + cm->seg[s].memsz)
			continue;
		if (cm->seg[s].flags & PF_X)
			return mapping_id(pp, slot, l->module, s);
		any = (int)s;
	}
	return any >= 0 ? mapping_id(pp, slot, l->module, (uint32_t)any) : 0;
}

/* The id of a model location, written on first use with one Line per
 * symbolic frame, innermost (the inlined callee) first, as pprof wants. */
static uint64_t location_id(struct pp *pp, int slot, uint32_t loc)
{
	const struct hp_location *l = &pp->models[slot]->locations[loc];
	uint64_t *id = &pp->locid[slot][loc], fn[64], map;
	/* The model keeps return addresses; pprof wants an address inside the
	 * call instruction, as its own legacy readers make with - 1. */
	uint64_t addr = l->address ? l->address - 1 : 0;
	uint32_t n = l->nsyms < 64 ? l->nsyms : 64;

	if (*id)
		return *id;
	for (uint32_t i = 0; i < n; i++)
		fn[i] = function_id(pp, &l->syms[i]);
	map = mapping_of(pp, slot, l, addr);
	*id = ++pp->nlocs;
	put_uint(&pp->msg, F_LOCATION_ID, *id);
	put_uint(&pp->msg, F_LOCATION_MAPPING_ID, map);
	put_uint(&pp->msg, F_LOCATION_ADDRESS, addr);
	for (uint32_t i = 0; i < n; i++) {
		put_uint(&pp->line, F_LINE_FUNCTION_ID, fn[i]);
		put_uint(&pp->line, F_LINE_LINE, l->syms[i].line);
		put_sub(&pp->msg, F_LOCATION_LINE, &pp->line);
	}
	put_sub(&pp->out, F_PROFILE_LOCATION, &pp->msg);
	return *id;
}

/* The string labels of a bucket (issue 9): its type, context, thread
 * and heap, as report --by names them (group.h). */
static const struct {
	const char *key;
	enum hp_dim dim;
} attr_labels[] = {
	{"type", HP_BY_TYPE},
	{"context", HP_BY_CONTEXT},
	{"thread", HP_BY_THREAD},
	{"heap", HP_BY_HEAP},
};
_Static_assert(sizeof attr_labels / sizeof *attr_labels == 4, "struct pp's label[][4]");

/* Bucket b's figures, in *bv: bv (an initializer's). */
static const struct hp_values *bucket_values(const struct hp_model *m,
					     const struct hp_mbucket *b, struct hp_values *bv)
{
	hp_mbucket_values(m, b, bv);
	return bv;
}

static void put_attr_labels(struct pp *pp, int slot, const struct hp_mbucket *b)
{
	const struct hp_model *m = pp->models[slot];
	char buf[2048], esc[2048];
	struct hp_values bv;

	for (size_t i = 0; i < sizeof attr_labels / sizeof *attr_labels; i++) {
		/* What the label's value depends on: the bucket's id of its
		 * dimension. */
		uint64_t id = attr_labels[i].dim == HP_BY_TYPE	   ? b->type
			      : attr_labels[i].dim == HP_BY_CONTEXT ? b->context
			      : attr_labels[i].dim == HP_BY_THREAD  ? b->thread
								    : b->heap;
		uint64_t key = intern(pp, attr_labels[i].key); /* first: the table's order */
		uint32_t str;
		if (!hp_u64map_get(&pp->label[slot][i], id, &str)) {
			const char *v = hp_group_key(m, b, attr_labels[i].dim, buf, sizeof buf, NULL);
			/* Escaped (text.h): go tool pprof prints labels as they are. */
			str = (uint32_t)intern(pp, hp_text_escape(esc, sizeof esc, v));
			if (hp_u64map_put(&pp->label[slot][i], id, str))
				pp->out.err = -ENOMEM;
		}
		put_uint(&pp->line, F_LABEL_KEY, key);
		put_uint(&pp->line, F_LABEL_STR, str);
		put_sub(&pp->msg, F_SAMPLE_LABEL, &pp->line);
	}
	/* An array type's elements a block (issue 26), as "bytes" is its
	 * size: a sampled bucket's one size, else the mean of its blocks. */
	if (b->elem_bytes)
		hp_mbucket_values(m, b, &bv);
	if (b->elem_bytes && (b->raw->size || bv.alloc_objects > 0)) {
		double size = b->raw->size ? (double)b->raw->size : bv.alloc_bytes / bv.alloc_objects;
		double n = (size - (double)b->cookie_bytes) / (double)b->elem_bytes;
		put_uint(&pp->line, F_LABEL_KEY, intern(pp, "elements"));
		put_uint(&pp->line, F_LABEL_NUM, (uint64_t)(n > 0 ? n + 0.5 : 0));
		put_sub(&pp->msg, F_SAMPLE_LABEL, &pp->line);
	}
}

/* One Sample: the stack of a model with values[0..n), and a "bytes"
 * label when size is not 0, and the attribution labels of bucket b when
 * not NULL. */
static void put_sample(struct pp *pp, int slot, uint32_t stack, const int64_t *values, int n,
		       int64_t size, const struct hp_mbucket *b)
{
	const struct hp_mstack *st = &pp->models[slot]->stacks[stack];
	uint64_t ids[HP_CAP_MAX_DEPTH], v[MAX_VALUES];
	uint32_t depth = st->depth < HP_CAP_MAX_DEPTH ? st->depth : HP_CAP_MAX_DEPTH;

	for (uint32_t i = 0; i < depth; i++)
		ids[i] = location_id(pp, slot, hp_mstack_location(st, i));
	for (int i = 0; i < n; i++)
		v[i] = (uint64_t)values[i];
	put_packed(&pp->msg, F_SAMPLE_LOCATION_ID, ids, depth);
	put_packed(&pp->msg, F_SAMPLE_VALUE, v, (size_t)n);
	if (size) {
		put_uint(&pp->line, F_LABEL_KEY, intern(pp, "bytes"));
		put_uint(&pp->line, F_LABEL_NUM, (uint64_t)size);
		put_uint(&pp->line, F_LABEL_NUM_UNIT, intern(pp, "bytes"));
		put_sub(&pp->msg, F_SAMPLE_LABEL, &pp->line);
	}
	if (b)
		put_attr_labels(pp, slot, b);
	put_sub(&pp->out, F_PROFILE_SAMPLE, &pp->msg);
	/* Whole fields go to the gzip stream as they pile up: a million
	 * samples are never held at once. */
	if (pp->out.len >= FLUSH_BYTES && !pp->out.err)
		pp_flush(pp, 0);
}

static void put_value_type(struct pp *pp, unsigned field, const char *type, const char *unit)
{
	put_uint(&pp->msg, F_VALUETYPE_TYPE, intern(pp, type));
	put_uint(&pp->msg, F_VALUETYPE_UNIT, intern(pp, unit));
	put_sub(&pp->out, field, &pp->msg);
}

/* The header fields: sample types ("name/unit" pairs), the period, the
 * time and duration (from since, a delta's first snapshot, to the model's;
 * since NULL: from the program's start), one comment line. */
static void put_header(struct pp *pp, const char *const (*types)[2], int ntypes,
		       int default_type, const char *comment, const struct hp_cap_snapshot *since)
{
	const struct hp_model *m = pp->models[0];
	uint64_t from = since && since->time_ns <= m->snap->time_ns ? since->time_ns : 0;

	intern(pp, ""); /* string_table[0] must be "" */
	for (int i = 0; i < ntypes; i++)
		put_value_type(pp, F_PROFILE_SAMPLE_TYPE, types[i][0], types[i][1]);
	put_value_type(pp, F_PROFILE_PERIOD_TYPE, "space", "bytes");
	put_uint(&pp->out, F_PROFILE_PERIOD, m->sample_rate_bytes);
	put_uint(&pp->out, F_PROFILE_TIME_NANOS,
		 m->cap->start_realtime_ns + (since ? from : m->snap->time_ns));
	put_uint(&pp->out, F_PROFILE_DURATION_NANOS, m->snap->time_ns - from);
	put_uint(&pp->out, F_PROFILE_COMMENT, intern(pp, comment));
	if (m->sampled)
		put_uint(&pp->out, F_PROFILE_COMMENT,
			 intern(pp, "sampled: values are unbiased estimates (period = sample rate)"));
	put_uint(&pp->out, F_PROFILE_DEFAULT_SAMPLE_TYPE, intern(pp, types[default_type][0]));
	put_main_mappings(pp);
}

static int pp_init(struct pp *pp, FILE *file, const struct hp_model *m0, const struct hp_model *m1)
{
	const struct hp_model *ms[2] = {m0, m1};

	memset(pp, 0, sizeof *pp);
	pp->file = file;
	pp->out.grow = pp->msg.grow = pp->line.grow = hp_buf_grow_heap;
	for (int s = 0; s < 2 && ms[s]; s++) {
		pp->models[s] = ms[s];
		pp->locid[s] = calloc(ms[s]->nlocations + 1, sizeof(uint64_t));
		pp->mapid[s] = calloc((ms[s]->nmodules + 1) * HP_CAP_MAX_SEGMENTS, sizeof(uint64_t));
		if (!pp->locid[s] || !pp->mapid[s])
			return -ENOMEM;
	}
	return 0;
}

static void pp_free(struct pp *pp)
{
	hp_strtab_free(&pp->st);
	hp_u64map_free(&pp->funcs);
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < 4; i++)
			hp_u64map_free(&pp->label[s][i]);
	for (int s = 0; s < 2; s++) {
		free(pp->locid[s]);
		free(pp->mapid[s]);
	}
	free(pp->out.data);
	free(pp->msg.data);
	free(pp->line.data);
	if (pp->z_on)
		deflateEnd(&pp->z);
}

/* Deflates the fields in pp->out to pp->file and empties it; with finish,
 * ends the gzip stream. Returns 0, -ENOMEM or -EIO (kept in z_err). */
static int pp_flush(struct pp *pp, int finish)
{
	const uint8_t *p = pp->out.data;
	size_t n = pp->out.len;
	uint8_t chunk[1 << 16];
	int zr;

	if (pp->z_err)
		return pp->z_err;
	if (!pp->z_on) {
		/* windowBits 15 + 16: a gzip header and trailer instead of
		 * zlib's. Level 1, as Go's runtime/pprof writes its profiles
		 * (BestSpeed): a million samples compress in a third of the
		 * default's time. */
		if (deflateInit2(&pp->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			return pp->z_err = -ENOMEM;
		pp->z_on = 1;
	}
	pp->z.next_in = (Bytef *)p;
	pp->z.avail_in = 0;
	do {
		/* avail_in is 32 bits: feed a large buffer in pieces. */
		size_t piece = n > (1u << 30) ? (1u << 30) : n;
		if (!pp->z.avail_in) {
			pp->z.avail_in = (uInt)piece;
			n -= piece;
		}
		pp->z.next_out = chunk;
		pp->z.avail_out = sizeof chunk;
		zr = deflate(&pp->z, n || pp->z.avail_in > 0 || !finish ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			return pp->z_err = -EIO;
		if (fwrite(chunk, 1, sizeof chunk - pp->z.avail_out, pp->file) !=
		    sizeof chunk - pp->z.avail_out)
			return pp->z_err = -EIO;
		/* Without finish: until deflate has taken every byte and has
		 * nothing more to give now. */
	} while (finish ? zr != Z_STREAM_END : n || pp->z.avail_in || !pp->z.avail_out);
	pp->out.len = 0;
	return 0;
}

/* Appends the string table, gzips the rest of the Profile to pp->file,
 * frees pp. */
static int pp_finish(struct pp *pp)
{
	int ret;

	for (size_t i = 0; i < pp->st.count; i++) {
		const char *s = hp_strtab_get(&pp->st, (uint32_t)i);
		put_len(&pp->out, F_PROFILE_STRING_TABLE, s, strlen(s));
	}
	ret = pp->out.err ? pp->out.err : pp->msg.err ? pp->msg.err : pp->line.err;
	if (!ret)
		ret = pp_flush(pp, 1);
	pp_free(pp);
	return ret;
}

/* A figure as pprof's integer: rounded and clamped (hp_estimate_i64), so a
 * hostile capture's figure never converts out of range. */
static int64_t rounded(double v)
{
	return hp_estimate_i64(v);
}

/* new - base of two rounded figures, saturated at the int64 range (both
 * may be clamped figures of opposite signs). */
static int64_t rounded_diff(double new_v, double base_v)
{
	int64_t d;

	if (__builtin_sub_overflow(rounded(new_v), rounded(base_v), &d))
		return rounded(new_v) > 0 ? INT64_MAX : INT64_MIN;
	return d;
}

int hp_pprof_write(FILE *out, const struct hp_model *m, const struct hp_pprof_options *o)
{
	/* Go's four first, in Go's order, so every pprof view works as for a
	 * Go profile; then the figures at the global peak, one -sample_index
	 * (or one click in -http's SAMPLE menu) away. */
	static const char *const types[][2] = {
		{"alloc_objects", "count"}, {"alloc_space", "bytes"},
		{"inuse_objects", "count"}, {"inuse_space", "bytes"},
		{"peak_objects", "count"},  {"peak_space", "bytes"},
	};
	enum { NTYPES = sizeof types / sizeof *types };
	static const struct hp_pprof_options defaults;
	struct pp pp;
	char comment[1024], name[256], heaps[320];
	int64_t sel;
	int ret;

	if (!o)
		o = &defaults;
	ret = pp_init(&pp, out, m, NULL);
	if (ret)
		goto err;
	/* The name escaped (text.h): go tool pprof prints the comment as it is. */
	sel = o->one_heap ? (int64_t)o->heap : HP_HEAP_ALL;
	heaps[0] = '\0';
	if (hp_model_heap_marked(m, sel)) {
		char hn[256], esc[300];
		if (sel == HP_HEAP_ALL)
			snprintf(heaps, sizeof heaps, ", every heap (label heap)");
		else
			snprintf(heaps, sizeof heaps, ", heap %s",
				 hp_text_escape(esc, sizeof esc,
						hp_model_heap_name(m, (uint64_t)sel, hn, sizeof hn)));
	}
	snprintf(comment, sizeof comment, "heapprof: %s, pid %llu, snapshot %llu (%s)%s%s",
		 hp_text_escape(name, sizeof name, hp_model_program_name(m->cap)),
		 (unsigned long long)m->cap->pid,
		 (unsigned long long)m->snap->seq, hp_capture_reason_name(m->snap->reason),
		 o->at_peak ? ", inuse = at the global peak" : "", heaps);
	put_header(&pp, types, NTYPES, o->alloc_default ? 1 : 3, comment, o->since);
	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		struct hp_values bv;
		const struct hp_values *v = bucket_values(m, b, &bv);
		int64_t vals[NTYPES] = {
			rounded(v->alloc_objects), rounded(v->alloc_bytes),
			rounded(o->at_peak ? v->peak_objects : v->inuse_objects),
			rounded(o->at_peak ? v->peak_bytes : v->inuse_bytes),
			rounded(v->peak_objects), rounded(v->peak_bytes),
		};
		int zero = 1;
		/* The size of the bucket's allocations when they all had one,
		 * else their average, as Go's profiles label a sample. */
		int64_t size = b->raw->size ? (int64_t)b->raw->size
			       : v->alloc_objects > 0 ? rounded(v->alloc_bytes / v->alloc_objects) : 0;

		for (int k = 0; k < NTYPES; k++)
			zero &= vals[k] == 0;
		if (!zero && hp_heap_selected(sel, b->heap))
			put_sample(&pp, 0, b->stack, vals, NTYPES, size, b);
	}
	return pp_finish(&pp);

err:
	pp_free(&pp);
	return ret;
}

int hp_pprof_write_diff(FILE *out, const struct hp_diff *d)
{
	static const char *const types[][2] = {
		{"alloc_objects", "count"}, {"alloc_space", "bytes"},
		{"inuse_objects", "count"}, {"inuse_space", "bytes"},
		{"peak_objects", "count"},  {"peak_space", "bytes"},
		{"temp_objects", "count"},  {"temp_space", "bytes"},
	};
	/* The sample type a metric is read from, indexed by enum hp_metric. */
	static const int default_of[HP_METRIC_COUNT] = {
		[HP_METRIC_PEAK] = 5, [HP_METRIC_LEAKED] = 3, [HP_METRIC_ALLOCATED] = 1,
		[HP_METRIC_ALLOCATIONS] = 0, [HP_METRIC_TEMPORARY] = 6,
	};
	struct pp pp;
	char comment[256];
	int ret;

	ret = pp_init(&pp, out, d->new, d->base);
	if (ret)
		goto err;
	snprintf(comment, sizeof comment,
		 "heapprof diff: NEW minus BASE, stacks matched by function; ranked by %s",
		 hp_metric_name(d->metric));
	put_header(&pp, types, MAX_VALUES, default_of[d->metric], comment, NULL);
	for (size_t i = 0; i < d->nentries; i++) {
		const struct hp_diff_entry *e = &d->entries[i];
		const struct hp_values *a = e->base, *b = e->new;
		/* Each side rounded as its own export rounds it, then subtracted:
		 * the diff of two exports is the export of the diff. */
		int64_t vals[MAX_VALUES] = {
			rounded_diff(b->alloc_objects, a->alloc_objects),
			rounded_diff(b->alloc_bytes, a->alloc_bytes),
			rounded_diff(b->inuse_objects, a->inuse_objects),
			rounded_diff(b->inuse_bytes, a->inuse_bytes),
			rounded_diff(b->peak_objects, a->peak_objects),
			rounded_diff(b->peak_bytes, a->peak_bytes),
			rounded_diff(b->temp_objects, a->temp_objects),
			rounded_diff(b->temp_bytes, a->temp_bytes),
		};
		int zero = 1;

		for (int k = 0; k < MAX_VALUES; k++)
			zero &= vals[k] == 0;
		if (!zero)
			put_sample(&pp, e->model == d->new ? 0 : 1, e->stack, vals, MAX_VALUES, 0, NULL);
	}
	return pp_finish(&pp);

err:
	pp_free(&pp);
	return ret;
}
