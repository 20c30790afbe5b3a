/*
 * core_rec_report.c - the listing of what the recorder held at the dump
 * (core_rec.c): totals, the sites (one per stack, its buckets summed)
 * by bytes in use with their frames, and every live block with its stack.
 * Frames are named from the core's modules' symbols (function+offset in
 * module) and, with a symbolizer of the capture of the dump (o->sym), get
 * the analyzer's functions, files and lines, inlined frames included, as a
 * capture's report has them; text or JSON.
 *
 * The text is read in a terminal, as the report's: names demangled and
 * shortened (hp_name_shorten), the runtime's frames below main and a
 * thread's start left out unless o->all_frames (the report's rules,
 * hp_model_frame_class), each site's reachability on lines of its own
 * without its zero figures, "1 block" and "2 blocks". JSON keeps every
 * frame and the symbols as they are in the modules.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../../format/records.h"
#include "../../format/capture.h"
#include "core.h"
#include "../symbols/demangle.h"
#include "../model/model.h"
#include "../symbols/symbolize.h"
#include "../../common/sort.h"

#define MAX_INLINED 16 /* symbolic frames per address */

struct site {
	uint32_t stack;
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes, peak_count, peak_bytes;
	int torn;
	/* its live blocks by enum hp_core_reach: objects, bytes */
	uint64_t reach[HP_CORE_UNKNOWN + 1][2];
	/* Sampled (rate > 1): the figures unbiased per bucket as the model
	 * does (hp_model_unbias_scale), summed in bucket order as a capture's
	 * report sums a stack's; and the reachability's, each block weighted
	 * by its bucket's scale. Full recording: the figures themselves. */
	struct hp_values est;
	double est_reach[HP_CORE_UNKNOWN + 1][2];
};

static const char *reach_name[] = {
	[HP_CORE_REACHABLE] = "still reachable",
	[HP_CORE_LOST] = "definitely lost",
	[HP_CORE_INDIRECT] = "indirectly lost",
	[HP_CORE_UNKNOWN] = "not in the heap walk",
};

static const char *reach_key[] = {
	[HP_CORE_REACHABLE] = "reachable",
	[HP_CORE_LOST] = "lost",
	[HP_CORE_INDIRECT] = "indirect",
	[HP_CORE_UNKNOWN] = "unknown",
};

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* "function+0xoff in module", or "0xaddr" (into buf). */
static const char *frame_name(const struct hp_core *c, uint64_t pc, char *buf, size_t cap)
{
	const struct hp_core_module *m = hp_core_module_at(c, pc);
	const struct hp_core_sym *s = m ? hp_core_symbol_at(m, pc - 1) : NULL;
	const char *base = m ? strrchr(m->path, '/') : NULL;

	base = base ? base + 1 : m ? m->path : NULL;
	if (s)
		snprintf(buf, cap, "%s+0x%" PRIx64 " in %s", s->name, pc - s->addr, base);
	else if (m)
		snprintf(buf, cap, "0x%" PRIx64 " in %s", pc - m->bias, base);
	else
		snprintf(buf, cap, "0x%" PRIx64, pc);
	return buf;
}

/* The symbolic frames at return address pc, innermost (inlined) first,
 * into out; how many, 0 without a symbolizer or on failure. */
static int symbols(const struct hp_core_report_options *o, uint64_t pc, struct hp_sym *out)
{
	const struct hp_cap_module *m;
	int n = 0;

	if (!o->sym || !o->cap)
		return 0;
	m = hp_capture_module_of(o->cap, pc - 1);
	if (hp_symbolizer_lookup(o->sym, m ? (int)(m - o->cap->modules) : -1, pc, out,
				 MAX_INLINED, &n))
		return 0;
	return n;
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "function+0xoff in module" as frame_name, the function demangled and
 * shortened; without a symbol in the core, the symbolizer's function
 * (sym, may be NULL) "in module". Into buf. */
static const char *frame_text(const struct hp_core *c, uint64_t pc, const struct hp_sym *sym,
			      char *buf, size_t cap)
{
	const struct hp_core_module *m = hp_core_module_at(c, pc);
	const struct hp_core_sym *s = m ? hp_core_symbol_at(m, pc - 1) : NULL;
	const char *base = m ? strrchr(m->path, '/') : NULL;
	char name[256]; /* shortened, so this is room enough; cut past it */
	char *dm;

	base = base ? base + 1 : m ? m->path : NULL;
	if (!s && (!sym || !sym->function || !sym->function[0]))
		return frame_name(c, pc, buf, cap);
	if (s) {
		dm = hp_demangle(s->name);
		hp_name_shorten(name, sizeof name, dm ? dm : s->name);
		free(dm);
		snprintf(buf, cap, "%s+0x%" PRIx64 " in %s", name, pc - s->addr, base);
	} else {
		hp_name_shorten(name, sizeof name, sym->function);
		snprintf(buf, cap, "%s in %s", name, base ? base : "?");
	}
	return buf;
}

/* One text line per frame: its symbol, then where, "  file:line", each
 * inlined frame a line of its own before it, marked so. */
static void text_frame(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
		       uint64_t pc)
{
	struct hp_sym syms[MAX_INLINED];
	int n = symbols(o, pc, syms);
	char buf[512], name[512];

	for (int i = 0; i < n - 1; i++)
		fprintf(f, "      %s  %s:%u (inlined)\n",
			hp_name_shorten(name, sizeof name, syms[i].function ? syms[i].function : ""),
			syms[i].file ? syms[i].file : "", syms[i].line);
	fprintf(f, "      %s", frame_text(c, pc, n ? &syms[n - 1] : NULL, buf, sizeof buf));
	if (n && syms[n - 1].file && syms[n - 1].file[0])
		fprintf(f, "  %s:%u", syms[n - 1].file, syms[n - 1].line);
	fputc('\n', f);
}

/* How the report classes the frame at pc (hp_model_frame_class on its
 * outermost symbol: the symbolizer's, else the core's), and whether one
 * of its symbols is main. A module of the system's (under /lib, /usr/lib)
 * is a library's whatever its symbols say, as in the report. */
static enum hp_frame_class frame_class(const struct hp_core *c,
				       const struct hp_core_report_options *o, uint64_t pc,
				       int *is_main)
{
	static const struct hp_location none = {.module = -1};
	const struct hp_core_module *m = hp_core_module_at(c, pc);
	const struct hp_core_sym *s = m ? hp_core_symbol_at(m, pc - 1) : NULL;
	struct hp_sym syms[MAX_INLINED];
	int n = symbols(o, pc, syms);
	enum hp_frame_class k;

	*is_main = 0;
	for (int i = 0; i < n; i++)
		*is_main |= syms[i].function && hp_model_is_main(&syms[i]);
	if (!n && s) {
		syms[0] = (struct hp_sym){.function = s->name, .file = ""};
		*is_main = hp_model_is_main(&syms[0]);
		n = 1;
	}
	if (!n || !syms[n - 1].function)
		return m ? HP_FRAME_LIBRARY : HP_FRAME_OWN;
	if (!syms[n - 1].file)
		syms[n - 1].file = "";
	/* no model: a location without a module, the module judged here */
	k = hp_model_frame_class(NULL, &none, &syms[n - 1]);
	if (k == HP_FRAME_OWN && m &&
	    (strncmp(m->path, "/lib/", 5) == 0 || strncmp(m->path, "/lib64/", 7) == 0 ||
	     strncmp(m->path, "/usr/lib/", 9) == 0 || strncmp(m->path, "/usr/lib64/", 11) == 0))
		k = HP_FRAME_LIBRARY;
	return k;
}

/* The frames of st as text lines; unless o->all_frames, as the report
 * shows them: none below main, and in a thread's stack (one that ends in
 * the runtime: start_thread, clone3) none past the program's last own
 * frame; the runtime's (_start, __libc_start_main...) never. */
static void text_frames(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			const struct hp_core_rec_stack *st)
{
	uint32_t n = st->frames ? st->depth : 0, last_own = 0;
	int is_main, entry_last = 0;

	if (!o->all_frames) {
		for (uint32_t d = 0; d < n; d++) {
			enum hp_frame_class k = frame_class(c, o, st->frames[d], &is_main);
			if (k == HP_FRAME_OWN)
				last_own = d + 1;
			entry_last = k == HP_FRAME_ENTRY;
			if (is_main) {
				n = d + 1;
				entry_last = 0;
				break;
			}
		}
		if (entry_last && last_own)
			n = last_own;
	}
	for (uint32_t d = 0; d < n; d++)
		if (o->all_frames || frame_class(c, o, st->frames[d], &is_main) != HP_FRAME_ENTRY)
			text_frame(f, c, o, st->frames[d]);
}

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	uint64_t ux = x->alloc_bytes - x->free_bytes, uy = y->alloc_bytes - y->free_bytes;
	if (x->est.inuse_bytes != y->est.inuse_bytes) /* the estimates: raw in a full recording */
		return x->est.inuse_bytes > y->est.inuse_bytes ? -1 : 1;
	if (ux != uy)
		return ux > uy ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The allocations one recorded allocation of bucket b stands for: 1 in a
 * full recording; in a sampled one, as the model unbiases a capture's
 * bucket (docs/internals/sampling.md). */
static double scale_of(const struct hp_core_rec *r, const struct hp_core_rec_bucket *b)
{
	struct hp_rec_bucket rb = {
		.size = b->size,
		.alloc_count = b->alloc_count,
		.alloc_bytes = b->alloc_bytes,
	};
	return hp_model_unbias_scale(&rb, r->sample_rate);
}

static int cmp_bucket_id(const void *a, const void *b)
{
	const struct hp_core_rec_bucket *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The sites, one per stack with counts, sorted by bytes in use. */
static struct site *sites(const struct hp_core_rec *r, size_t *n)
{
	struct site *by_stack = calloc(r->nstacks ? r->nstacks : 1, sizeof *by_stack), *out;
	size_t k = 0;

	if (!by_stack)
		return NULL;
	for (size_t i = 0; i < r->nbuckets; i++) {
		const struct hp_core_rec_bucket *b = &r->buckets[i];
		struct site *s = &by_stack[b->stack < r->nstacks ? b->stack : 0];
		s->alloc_count += b->alloc_count;
		s->alloc_bytes += b->alloc_bytes;
		s->free_count += b->free_count;
		s->free_bytes += b->free_bytes;
		s->peak_count += b->peak_count;
		s->peak_bytes += b->peak_bytes;
		s->torn |= b->torn;
		double k = scale_of(r, b);
		s->est.alloc_objects += k * (double)b->alloc_count;
		s->est.alloc_bytes += k * (double)b->alloc_bytes;
		s->est.free_objects += k * (double)b->free_count;
		s->est.free_bytes += k * (double)b->free_bytes;
		s->est.peak_objects += k * (double)b->peak_count;
		s->est.peak_bytes += k * (double)b->peak_bytes;
		s->est.temp_objects += k * (double)b->temp_count;
		s->est.temp_bytes += k * (double)b->temp_bytes;
		s->est.inuse_objects = s->est.alloc_objects - s->est.free_objects;
		s->est.inuse_bytes = s->est.alloc_bytes - s->est.free_bytes;
	}
	for (size_t i = 0; i < r->nblocks; i++) {
		const struct hp_core_rec_block *b = &r->blocks[i];
		struct site *s = &by_stack[b->stack < r->nstacks ? b->stack : 0];
		unsigned k = b->reach <= HP_CORE_UNKNOWN ? b->reach : HP_CORE_UNKNOWN;
		s->reach[k][0]++;
		s->reach[k][1] += b->size;
		struct hp_core_rec_bucket want = {.id = b->bucket};
		const struct hp_core_rec_bucket *bk =
			r->nbuckets ? hp_bsearch(&want, r->buckets, r->nbuckets, sizeof *r->buckets,
					      cmp_bucket_id)
				    : NULL;
		double w = bk ? scale_of(r, bk) : 1;
		s->est_reach[k][0] += w;
		s->est_reach[k][1] += w * (double)b->size;
	}
	out = by_stack;
	for (uint32_t id = 0; id < r->nstacks; id++) {
		if (!by_stack[id].alloc_count)
			continue;
		out[k] = by_stack[id];
		out[k++].stack = id;
	}
	hp_sort(out, k, sizeof *out, site_cmp);
	*n = k;
	return out;
}

/* "        | definitely lost 440 bytes in 5 blocks": the site's live
 * blocks by reachability, a line each under the site's figures, the kinds
 * it has none of left out (each line fits 80 columns). */
static void text_reach(FILE *f, const struct site *x, int sampled)
{
	static const int order[] = {HP_CORE_LOST, HP_CORE_INDIRECT, HP_CORE_REACHABLE,
				    HP_CORE_UNKNOWN};

	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		uint64_t v[2] = {x->reach[order[i]][0], x->reach[order[i]][1]};
		if (sampled) {
			v[0] = (uint64_t)hp_estimate_i64(x->est_reach[order[i]][0]);
			v[1] = (uint64_t)hp_estimate_i64(x->est_reach[order[i]][1]);
		}
		if (!v[0] && !v[1])
			continue;
		fprintf(f, "        | %s %" PRIu64 " byte%s in %" PRIu64 " block%s\n",
			reach_name[order[i]], v[1], plural(v[1]), v[0], plural(v[0]));
	}
}

/* "SIGABRT (signal 6)", or "signal N" for a number without a name. */
static const char *signal_name(int sig, char *buf, size_t cap)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, cap, "SIG%s (signal %d)", abbrev, sig);
	else
		snprintf(buf, cap, "signal %d", sig);
	return buf;
}

static void text(FILE *f, const struct hp_core *c, const struct site *s, size_t ns,
		 const struct hp_core_report_options *o)
{
	const struct hp_core_rec *r = &c->rec;
	uint64_t bytes = 0;
	char buf[512];
	int sampled = r->sample_rate > 1;

	for (size_t i = 0; i < r->nblocks; i++)
		bytes += r->blocks[i].size;
	fprintf(f, "core: %s\n", c->path);
	if (c->signal > 0)
		fprintf(f, "program: %s (pid %d), dumped on %s\n", c->program, c->pid,
			signal_name(c->signal, buf, sizeof buf));
	else
		fprintf(f, "program: %s (pid %d), dumped without a signal (gcore)\n", c->program,
			c->pid);
	fprintf(f, "recorder: %s, heapprof_root at 0x%" PRIx64 "\n", r->lib, r->root);
	fprintf(f, "live blocks: %zu, %" PRIu64 " byte%s; in use %" PRIu64 " byte%s, peak %" PRIu64
		   " byte%s; %u stack%s, %zu bucket%s%s\n",
		r->nblocks, bytes, plural(bytes), r->in_use_bytes, plural(r->in_use_bytes),
		r->peak_bytes, plural(r->peak_bytes), r->nstacks ? r->nstacks - 1 : 0,
		plural(r->nstacks ? r->nstacks - 1 : 0), r->nbuckets, plural(r->nbuckets),
		r->sample_rate > 1 ? " (as sampled)" : "");
	if (r->sample_rate > 1)
		fprintf(f, "sampled: one allocation per %" PRIu64 " bytes on average; the figures "
			   "below are estimates, unbiased per allocation size as `heapprof report` "
			   "does\n", r->sample_rate);
	if (r->joined) {
		uint64_t t[HP_CORE_UNKNOWN + 1][2] = {{0}};
		for (size_t i = 0; i < ns; i++)
			for (int k = 0; k <= HP_CORE_UNKNOWN; k++) {
				t[k][0] += sampled ? (uint64_t)hp_estimate_i64(s[i].est_reach[k][0])
						   : s[i].reach[k][0];
				t[k][1] += sampled ? (uint64_t)hp_estimate_i64(s[i].est_reach[k][1])
						   : s[i].reach[k][1];
			}
		static const int order[] = {HP_CORE_LOST, HP_CORE_INDIRECT, HP_CORE_REACHABLE};
		fprintf(f, "reachability of the live blocks (a conservative scan, as memcheck's):\n");
		for (size_t k = 0; k < sizeof order / sizeof *order; k++)
			fprintf(f, "  %s: %" PRIu64 " byte%s in %" PRIu64 " block%s\n",
				reach_name[order[k]], t[order[k]][1], plural(t[order[k]][1]),
				t[order[k]][0], plural(t[order[k]][0]));
		if (t[HP_CORE_UNKNOWN][0])
			fprintf(f, "  not in the heap walk: %" PRIu64 " byte%s in %" PRIu64
				   " block%s\n", t[HP_CORE_UNKNOWN][1], plural(t[HP_CORE_UNKNOWN][1]),
				t[HP_CORE_UNKNOWN][0], plural(t[HP_CORE_UNKNOWN][0]));
	} else {
		fprintf(f, "reachability: unknown (glibc's heap was not walked)\n");
	}
	fprintf(f, "\nsites by bytes in use:\n");
	fprintf(f, "%14s %10s %12s %10s %14s\n", "in use bytes", "objects", "allocated", "freed",
		"peak bytes");
	for (size_t i = 0; i < ns && i < o->top; i++) {
		const struct site *x = &s[i];
		const struct hp_core_rec_stack *st = &r->stacks[x->stack];
		if (sampled)
			fprintf(f, "%14" PRId64 " %10" PRId64 " %12" PRId64 " %10" PRId64
				   " %14" PRId64 "  stack %u%s",
				hp_estimate_i64(x->est.inuse_bytes), hp_estimate_i64(x->est.inuse_objects),
				hp_estimate_i64(x->est.alloc_objects),
				hp_estimate_i64(x->est.free_objects), hp_estimate_i64(x->est.peak_bytes),
				x->stack, x->torn ? " (torn)" : "");
		else
			fprintf(f, "%14" PRIu64 " %10" PRIu64 " %12" PRIu64 " %10" PRIu64
				   " %14" PRIu64 "  stack %u%s",
				x->alloc_bytes - x->free_bytes, x->alloc_count - x->free_count,
				x->alloc_count, x->free_count, x->peak_bytes, x->stack,
				x->torn ? " (torn)" : "");
		fputc('\n', f);
		if (r->joined)
			text_reach(f, x, sampled);
		text_frames(f, c, o, st);
	}
	if (o->top == UINT_MAX)
		fprintf(f, "\nlive blocks (all, by address):\n");
	else
		fprintf(f, "\nlive blocks (first %u by address):\n", o->top);
	for (size_t i = 0; i < r->nblocks && i < o->top; i++) {
		const struct hp_core_rec_block *b = &r->blocks[i];
		const struct hp_core_rec_stack *st = &r->stacks[b->stack];
		struct hp_sym syms[MAX_INLINED];
		int n = st->frames && st->depth ? symbols(o, st->frames[0], syms) : 0;
		/* its reachability first: a column of 15 characters */
		if (r->joined)
			fprintf(f, "  %s", b->reach < HP_CORE_UNKNOWN ? reach_name[b->reach]
								 : "not in the heap");
		fprintf(f, "  0x%" PRIx64 " %10" PRIu64 " byte%s  stack %u  %s", b->addr, b->size,
			plural(b->size), b->stack,
			st->frames && st->depth
				? frame_text(c, st->frames[0], n ? &syms[n - 1] : NULL, buf, sizeof buf)
				: "");
		/* where it was allocated: the innermost symbolic frame's line */
		if (n && syms[0].file && syms[0].file[0])
			fprintf(f, "  %s:%u", syms[0].file, syms[0].line);
		fputc('\n', f);
	}
}

/* ,"symbols":[{function, file, line, inlined}...] when symbolized. */
static void json_symbols(FILE *f, const struct hp_core_report_options *o, uint64_t pc)
{
	struct hp_sym syms[MAX_INLINED];
	int n = symbols(o, pc, syms);

	if (!n)
		return;
	fprintf(f, ",\"symbols\":[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"function\":", i ? "," : "");
		json_str(f, syms[i].function ? syms[i].function : "");
		fprintf(f, ",\"file\":");
		json_str(f, syms[i].file ? syms[i].file : "");
		fprintf(f, ",\"line\":%u,\"inlined\":%s}", syms[i].line,
			syms[i].inlined ? "true" : "false");
	}
	fputc(']', f);
}

/* ,"estimates":{...}: a sampled site's figures unbiased, as the capture's
 * report has them (alloc_objects ... as its "values"), and its
 * reachability's. */
static void json_estimates(FILE *f, const struct site *x, int joined)
{
	const struct hp_values *v = &x->est;

	fprintf(f, ",\"estimates\":{\"alloc_objects\":%" PRId64 ",\"alloc_bytes\":%" PRId64
		   ",\"free_objects\":%" PRId64 ",\"free_bytes\":%" PRId64
		   ",\"inuse_objects\":%" PRId64 ",\"inuse_bytes\":%" PRId64
		   ",\"peak_objects\":%" PRId64 ",\"peak_bytes\":%" PRId64
		   ",\"temp_objects\":%" PRId64 ",\"temp_bytes\":%" PRId64,
		hp_estimate_i64(v->alloc_objects), hp_estimate_i64(v->alloc_bytes),
		hp_estimate_i64(v->free_objects), hp_estimate_i64(v->free_bytes),
		hp_estimate_i64(v->inuse_objects), hp_estimate_i64(v->inuse_bytes),
		hp_estimate_i64(v->peak_objects), hp_estimate_i64(v->peak_bytes),
		hp_estimate_i64(v->temp_objects), hp_estimate_i64(v->temp_bytes));
	for (int k = 0; joined && k <= HP_CORE_UNKNOWN; k++)
		fprintf(f, ",\"%s_count\":%" PRId64 ",\"%s_bytes\":%" PRId64, reach_key[k],
			hp_estimate_i64(x->est_reach[k][0]), reach_key[k],
			hp_estimate_i64(x->est_reach[k][1]));
	fputc('}', f);
}

/* The frames of stack st, as JSON objects separated by commas. */
static void json_frames(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			const struct hp_core_rec_stack *st)
{
	char buf[512];

	for (uint32_t d = 0; st->frames && d < st->depth; d++) {
		fprintf(f, "%s{\"address\":\"0x%" PRIx64 "\",\"name\":", d ? "," : "",
			st->frames[d]);
		json_str(f, frame_name(c, st->frames[d], buf, sizeof buf));
		json_symbols(f, o, st->frames[d]);
		fputc('}', f);
	}
}

static void json(FILE *f, const struct hp_core *c, const struct site *s, size_t ns,
		 const struct hp_core_report_options *o)
{
	const struct hp_core_rec *r = &c->rec;

	fprintf(f, "{\"core\":");
	json_str(f, c->path);
	fprintf(f, ",\n\"program\":");
	json_str(f, c->program);
	fprintf(f, ",\"pid\":%d,\"signal\":%d,\n\"recorder\":{\"library\":", c->pid, c->signal);
	json_str(f, r->lib ? r->lib : "");
	fprintf(f, ",\"root\":\"0x%" PRIx64 "\",\"stacks\":%u,\"buckets\":%zu,\"in_use_bytes\":%" PRIu64
		   ",\"peak_bytes\":%" PRIu64 ",\"sample_rate\":%" PRIu64 ",\"torn_buckets\":%zu,"
		   "\"locked_shards\":%zu,\"dropped_entries\":%zu,\"duplicate_entries\":%zu,"
		   "\"reachability\":%s},\n",
		r->root, r->nstacks ? r->nstacks - 1 : 0, r->nbuckets, r->in_use_bytes,
		r->peak_bytes, r->sample_rate, r->torn_buckets, r->locked_shards, r->bad_entries,
		r->duplicates, r->joined ? "true" : "false");
	fprintf(f, "\"sites\":[");
	for (size_t i = 0; i < ns; i++) {
		const struct site *x = &s[i];
		const struct hp_core_rec_stack *st = &r->stacks[x->stack];
		fprintf(f, "%s\n{\"stack\":%u,\"alloc_count\":%" PRIu64 ",\"alloc_bytes\":%" PRIu64
			   ",\"free_count\":%" PRIu64 ",\"free_bytes\":%" PRIu64
			   ",\"in_use_count\":%" PRIu64 ",\"in_use_bytes\":%" PRIu64
			   ",\"peak_count\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"torn\":%d,"
			   "\"frames\":[",
			i ? "," : "", x->stack, x->alloc_count, x->alloc_bytes, x->free_count,
			x->free_bytes, x->alloc_count - x->free_count, x->alloc_bytes - x->free_bytes,
			x->peak_count, x->peak_bytes, x->torn);
		json_frames(f, c, o, st);
		fprintf(f, "]");
		if (r->joined)
			for (int k = 0; k <= HP_CORE_UNKNOWN; k++)
				fprintf(f, ",\"%s_count\":%" PRIu64 ",\"%s_bytes\":%" PRIu64,
					reach_key[k], x->reach[k][0], reach_key[k], x->reach[k][1]);
		if (r->sample_rate > 1)
			json_estimates(f, x, r->joined);
		fprintf(f, "}");
	}
	fprintf(f, "],\n\"blocks\":[");
	for (size_t i = 0; i < r->nblocks; i++) {
		const struct hp_core_rec_block *b = &r->blocks[i];
		fprintf(f, "%s\n{\"address\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"stack\":%u",
			i ? "," : "", b->addr, b->size, b->stack);
		if (r->joined)
			fprintf(f, ",\"reachability\":\"%s\"",
				reach_name[b->reach <= HP_CORE_UNKNOWN ? b->reach : HP_CORE_UNKNOWN]);
		fputc('}', f);
	}
	/* the glibc heap's damage, checked against the recorded blocks */
	fprintf(f, "],\n\"heap_walked\":%s,\"unwalked_bytes\":%" PRIu64 ",\"damage\":",
		c->heap_ok ? "true" : "false", c->unwalked_bytes);
	hp_core_damage_json(f, c, o);
	fprintf(f, "}\n");
}

int hp_core_rec_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o)
{
	size_t ns = 0;
	struct site *s = sites(&c->rec, &ns);

	if (!s)
		return -ENOMEM;
	if (o->json)
		json(f, c, s, ns, o);
	else
		text(f, c, s, ns, o);
	free(s);
	return ferror(f) ? -EIO : 0;
}

long hp_core_rec_block_at(const struct hp_core *c, uint64_t addr)
{
	const struct hp_core_rec *r = &c->rec;
	size_t lo = 0, hi = r->nblocks;

	/* the first block starting after addr; the one before may hold it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->blocks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr - r->blocks[lo - 1].addr < (r->blocks[lo - 1].size ? r->blocks[lo - 1].size
									 : 1))
		return (long)lo - 1;
	return -1;
}

void hp_core_rec_whatis(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			size_t i)
{
	const struct hp_core_rec_block *b = &c->rec.blocks[i];
	const struct hp_core_rec_stack *st =
		&c->rec.stacks[b->stack < c->rec.nstacks ? b->stack : 0];

	if (o->json) {
		fprintf(f, "{\"address\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
			   ",\"stack\":%u,\"frames\":[",
			b->addr, b->size, b->stack);
		json_frames(f, c, o, st);
		fprintf(f, "]}");
		return;
	}
	fprintf(f, "  recorded by heapprof: block 0x%" PRIx64 " of %" PRIu64
		   " byte%s (as requested), stack %u, allocated at:\n",
		b->addr, b->size, plural(b->size), b->stack);
	text_frames(f, c, o, st);
	if (!st->frames || !st->depth)
		fprintf(f, "      (no frames in the core)\n");
}
