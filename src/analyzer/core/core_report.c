/*
 * core_report.c - the report of a core's heap (text and JSON) and
 * --whatis: what holds an address and what points to it.
 *
 * Figures are exact (no sampling): blocks are malloc's chunks, a block's
 * size its usable bytes (malloc_usable_size: the request rounded up to
 * glibc's size class), which is the size class the tables group by.
 * Whatever the core names (paths, type names) is escaped: \xNN for
 * control characters in text, JSON's escapes in JSON.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "../../common/sort.h"
#include "../../common/text.h"

static const char *state_name[] = {
	[HP_CORE_ALLOCATED] = "allocated",
	[HP_CORE_FREE_TCACHE] = "free (tcache)",
	[HP_CORE_FREE_FASTBIN] = "free (fastbin)",
	[HP_CORE_FREE_BIN] = "free (bin)",
	[HP_CORE_TOP] = "free (top chunk)",
	[HP_CORE_INTERNAL] = "malloc's own (a thread's tcache)",
};

static const char *reach_name[] = {
	[HP_CORE_REACHABLE] = "still reachable",
	[HP_CORE_LOST] = "definitely lost",
	[HP_CORE_INDIRECT] = "indirectly lost",
	[HP_CORE_UNKNOWN] = "unknown", /* a recorded block's only */
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

struct row {
	uint64_t key; /* size, or type index + 1 (0: no type) */
	uint64_t blocks, bytes;
	uint64_t by_reach[3][2]; /* blocks, bytes */
};

struct totals {
	uint64_t alloc[2], reach[3][2], tcache[2], fast[2], bins[2], top, internal[2];
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Rows grouped by size (by_type 0) or type, sorted by key. */
static struct row *group(const struct hp_core *c, int by_type, size_t *n)
{
	struct row *rows = NULL;
	size_t nrows = 0;
	uint64_t *keys;
	size_t nkeys = 0;

	keys = malloc((c->nblocks ? c->nblocks : 1) * sizeof *keys);
	if (!keys)
		return NULL;
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct hp_core_block *b = &c->blocks[i];
		if (b->state != HP_CORE_ALLOCATED)
			continue;
		if (by_type && b->type == UINT32_MAX)
			continue;
		keys[nkeys++] = by_type ? b->type + 1ULL : b->size;
	}
	/* distinct keys: sort them */
	hp_sort(keys, nkeys, sizeof *keys, u64_cmp);
	rows = calloc(nkeys ? nkeys : 1, sizeof *rows);
	if (!rows) {
		free(keys);
		return NULL;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (!nrows || rows[nrows - 1].key != keys[i])
			rows[nrows++].key = keys[i];
	free(keys);
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct hp_core_block *b = &c->blocks[i];
		struct row want, *r;
		if (b->state != HP_CORE_ALLOCATED || (by_type && b->type == UINT32_MAX))
			continue;
		want.key = by_type ? b->type + 1ULL : b->size;
		r = hp_bsearch(&want, rows, nrows, sizeof *rows, row_cmp);
		r->blocks++;
		r->bytes += b->size;
		r->by_reach[b->reach][0]++;
		r->by_reach[b->reach][1] += b->size;
	}
	*n = nrows;
	return rows;
}

static void add_totals(const struct hp_core *c, struct totals *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct hp_core_block *b = &c->blocks[i];
		uint64_t *p = NULL;
		switch (b->state) {
		case HP_CORE_ALLOCATED:
			t->alloc[0]++;
			t->alloc[1] += b->size;
			t->reach[b->reach][0]++;
			t->reach[b->reach][1] += b->size;
			break;
		case HP_CORE_FREE_TCACHE: p = t->tcache; break;
		case HP_CORE_FREE_FASTBIN: p = t->fast; break;
		case HP_CORE_FREE_BIN: p = t->bins; break;
		case HP_CORE_TOP: t->top += b->size; break;
		case HP_CORE_INTERNAL: p = t->internal; break;
		}
		if (p) {
			p[0]++;
			p[1] += b->size;
		}
	}
}

static const char *sig_name(int sig, char *buf, size_t cap)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, cap, "%d (SIG%s)", sig, abbrev);
	else
		snprintf(buf, cap, "%d", sig);
	return buf;
}

static int by_bytes_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* --- damage ------------------------------------------------------------- */

static long recorded(const struct hp_core *c, long i, uint64_t a);

/* The one-line summary of the damage (text), or nothing when none. */
static void damage_summary(FILE *f, const struct hp_core *c)
{
	if (!c->ndamage)
		return;
	fprintf(f, "damage: %zu inconsistenc%s in the heap's headers and lists; %llu byte%s not "
		"walked", c->ndamage, c->ndamage == 1 ? "y" : "ies",
		(unsigned long long)c->unwalked_bytes, c->unwalked_bytes == 1 ? "" : "s");
	size_t ranges = 0;
	for (size_t i = 0; i < c->ndamage; i++) {
		const struct hp_core_damage *d = &c->damage[i];
		if (d->skip_hi == d->skip_lo)
			continue;
		if (ranges < 4)
			fprintf(f, "%s0x%llx-0x%llx", ranges ? ", " : " (",
				(unsigned long long)d->skip_lo, (unsigned long long)d->skip_hi);
		ranges++;
	}
	if (ranges > 4)
		fprintf(f, " and %zu more", ranges - 4);
	if (ranges)
		fputc(')', f);
	fprintf(f, " (--damage: each with the block before it)\n");
}

/* One entry of the damage, text (indent: the lines' margin), with its
 * block and the block before it (the likely overrunner: its start, size,
 * how far past its end the damaged word or at (when not 0) lies; under
 * heapprof its allocation stack). */
static void damage_text(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			const struct hp_core_damage *d, uint64_t at)
{
	long bi = d->block ? hp_core_block_at(c, d->block) : -1;
	long pi = d->before ? hp_core_block_at(c, d->before) : -1;
	uint64_t where = at ? at : d->addr;
	/* a chunk's header, a tcache's count (the only damage in malloc's own
	 * block that names it), or a free chunk's link (its first word) */
	const char *whose = d->addr < d->chunk + 16		     ? "header"
			    : bi >= 0 && c->blocks[bi].state == HP_CORE_INTERNAL ? "count"
										   : "link";

	fprintf(f, "damage at 0x%llx: %s: holds 0x%llx; the chunk at 0x%llx (arena %d)",
		(unsigned long long)d->addr, d->what, (unsigned long long)d->value,
		(unsigned long long)d->chunk, d->arena);
	if (d->skip_hi != d->skip_lo)
		fprintf(f, "; %llu bytes not walked as chunks (0x%llx-0x%llx)",
			(unsigned long long)(d->skip_hi - d->skip_lo),
			(unsigned long long)d->skip_lo, (unsigned long long)d->skip_hi);
	if (d->target)
		fprintf(f, "; it leads to block 0x%llx", (unsigned long long)d->target);
	fputc('\n', f);
	if (bi >= 0) {
		const struct hp_core_block *b = &c->blocks[bi];
		fprintf(f, "  the block whose %s it is: 0x%llx (%llu bytes%s), %s\n", whose,
			(unsigned long long)b->addr, (unsigned long long)b->size,
			b->damaged ? ", size inferred from the next plausible chunk" : "",
			state_name[b->state]);
	}
	if (pi >= 0) {
		const struct hp_core_block *b = &c->blocks[pi];
		long ri = recorded(c, pi, b->addr);
		uint64_t end = b->addr + b->size;
		fprintf(f, "  the block before it (the likely overrunner): 0x%llx (%llu bytes), %s; "
			"0x%llx is %llu bytes past its end\n", (unsigned long long)b->addr,
			(unsigned long long)b->size, state_name[b->state],
			(unsigned long long)where,
			(unsigned long long)(where >= end ? where - end : 0));
		if (ri >= 0) {
			const struct hp_core_rec_block *r = &c->rec.blocks[ri];
			if (where >= r->addr + r->size)
				fprintf(f, "  0x%llx is %llu bytes past the %llu bytes it was "
					"allocated with\n", (unsigned long long)where,
					(unsigned long long)(where - r->addr - r->size),
					(unsigned long long)r->size);
			hp_core_rec_whatis(f, c, o, (size_t)ri);
		}
	} else {
		fprintf(f, "  no block right before it\n");
	}
}

/* One entry of the damage as a JSON object. */
static void damage_json(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			const struct hp_core_damage *d)
{
	long bi = d->block ? hp_core_block_at(c, d->block) : -1;
	long pi = d->before ? hp_core_block_at(c, d->before) : -1;

	fprintf(f, "{\"address\":\"0x%llx\",\"what\":", (unsigned long long)d->addr);
	json_str(f, d->what);
	fprintf(f, ",\"value\":\"0x%llx\",\"chunk\":\"0x%llx\",\"arena\":%d,"
		"\"unwalked_bytes\":%llu,\"unwalked_from\":\"0x%llx\",\"unwalked_to\":\"0x%llx\","
		"\"in\":\"%s\",\"leads_to\":", (unsigned long long)d->value,
		(unsigned long long)d->chunk, d->arena, (unsigned long long)(d->skip_hi - d->skip_lo),
		(unsigned long long)d->skip_lo, (unsigned long long)d->skip_hi,
		d->addr < d->chunk + 16 ? "header" : "link");
	if (d->target)
		fprintf(f, "\"0x%llx\"", (unsigned long long)d->target);
	else
		fputs("null", f);
	fputs(",\"block\":", f);
	if (bi >= 0)
		fprintf(f, "{\"address\":\"0x%llx\",\"size\":%llu,\"size_inferred\":%s,"
			"\"state\":\"%s\"}", (unsigned long long)c->blocks[bi].addr,
			(unsigned long long)c->blocks[bi].size,
			c->blocks[bi].damaged ? "true" : "false", state_name[c->blocks[bi].state]);
	else
		fputs("null", f);
	fputs(",\"before\":", f);
	if (pi >= 0) {
		const struct hp_core_block *b = &c->blocks[pi];
		long ri = recorded(c, pi, b->addr);
		uint64_t end = b->addr + b->size;
		fprintf(f, "{\"address\":\"0x%llx\",\"size\":%llu,\"state\":\"%s\","
			"\"past_end\":%llu", (unsigned long long)b->addr, (unsigned long long)b->size,
			state_name[b->state],
			(unsigned long long)(d->addr >= end ? d->addr - end : 0));
		if (c->rec.found) {
			fputs(",\"recorded\":", f);
			if (ri >= 0)
				hp_core_rec_whatis(f, c, o, (size_t)ri);
			else
				fputs("null", f);
		}
		fputs("}", f);
	} else {
		fputs("null", f);
	}
	fputs("}", f);
}

/* The damage entry of the damaged block at addr, or -1. */
static long damage_of_block(const struct hp_core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->ndamage; i++)
		if (c->damage[i].block == addr)
			return (long)i;
	return -1;
}

void hp_core_damage_json(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o)
{
	fputc('[', f);
	for (size_t i = 0; i < c->ndamage; i++) {
		fputs(i ? ",\n " : "\n ", f);
		damage_json(f, c, o, &c->damage[i]);
	}
	fputc(']', f);
}

int hp_core_damage_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o)
{
	if (o->json) {
		fprintf(f, "{\"heap_walked\":%s,\"unwalked_bytes\":%llu,\"damage\":",
			c->heap_ok ? "true" : "false", (unsigned long long)c->unwalked_bytes);
		hp_core_damage_json(f, c, o);
		fputs("}\n", f);
	} else if (!c->heap_ok) {
		fprintf(f, "the heap was not walked (see the messages above)\n");
	} else if (!c->ndamage) {
		fprintf(f, "no damage found: every chunk's size, prev_size and free-list link is "
			"consistent\n");
	} else {
		damage_summary(f, c);
		for (size_t i = 0; i < c->ndamage; i++)
			damage_text(f, c, o, &c->damage[i], 0);
	}
	return ferror(f) ? -EIO : 0;
}

static void text_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			struct row *sizes, size_t nsizes, struct row *types, size_t ntypes)
{
	struct totals t;
	char buf[1024], sig[64];

	add_totals(c, &t);
	fprintf(f, "core: %s\n", hp_text_escape(buf, sizeof buf, c->path));
	fprintf(f, "program: %s (pid %d), %zu thread%s, dumped on signal %s\n",
		hp_text_escape(buf, sizeof buf, c->program), c->pid, c->nthreads,
		c->nthreads == 1 ? "" : "s", sig_name(c->signal, sig, sizeof sig));
	if (!c->heap_ok) {
		fprintf(f, "glibc heap: not walked (see the messages above)\n");
		return;
	}
	fprintf(f, "glibc heap: main_arena at 0x%llx (found by its %s), %zu arena%s, %zu heap%s, "
		"%zu mmapped chunk%s\n", (unsigned long long)c->main_arena,
		c->arena_by_heuristic ? "signature" : "symbol", c->narenas,
		c->narenas == 1 ? "" : "s", c->nheaps, c->nheaps == 1 ? "" : "s", c->nmmapped,
		c->nmmapped == 1 ? "" : "s");
	fprintf(f, "in use: %llu block%s, %llu byte%s\n", (unsigned long long)t.alloc[0],
		t.alloc[0] == 1 ? "" : "s", (unsigned long long)t.alloc[1],
		t.alloc[1] == 1 ? "" : "s");
	fprintf(f, "free: %llu chunks in tcache, %llu in fastbins, %llu in bins (%llu bytes); top "
		"chunk %llu bytes\n", (unsigned long long)t.tcache[0], (unsigned long long)t.fast[0],
		(unsigned long long)t.bins[0],
		(unsigned long long)(t.tcache[1] + t.fast[1] + t.bins[1]),
		(unsigned long long)t.top);
	damage_summary(f, c);
	for (int r = 0; r < 3; r++) {
		static const int order[3] = {HP_CORE_LOST, HP_CORE_INDIRECT, HP_CORE_REACHABLE};
		fprintf(f, "%s: %llu block%s, %llu byte%s\n", reach_name[order[r]],
			(unsigned long long)t.reach[order[r]][0], t.reach[order[r]][0] == 1 ? "" : "s",
			(unsigned long long)t.reach[order[r]][1], t.reach[order[r]][1] == 1 ? "" : "s");
	}
	hp_sort(sizes, nsizes, sizeof *sizes, by_bytes_desc);
	if (o->top == UINT_MAX)
		fprintf(f, "\nin-use blocks by size (all, by bytes):\n");
	else
		fprintf(f, "\nin-use blocks by size (top %u by bytes):\n", o->top);
	fprintf(f, "%12s %10s %14s %10s %10s %10s\n", "size", "blocks", "bytes", "def. lost",
		"ind. lost", "reachable");
	for (size_t i = 0; i < nsizes && i < o->top; i++)
		fprintf(f, "%12llu %10llu %14llu %10llu %10llu %10llu\n",
			(unsigned long long)sizes[i].key, (unsigned long long)sizes[i].blocks,
			(unsigned long long)sizes[i].bytes,
			(unsigned long long)sizes[i].by_reach[HP_CORE_LOST][0],
			(unsigned long long)sizes[i].by_reach[HP_CORE_INDIRECT][0],
			(unsigned long long)sizes[i].by_reach[HP_CORE_REACHABLE][0]);
	hp_sort(types, ntypes, sizeof *types, by_bytes_desc);
	if (o->top == UINT_MAX)
		fprintf(f, "\nin-use C++ objects by dynamic type (all, by bytes):\n");
	else
		fprintf(f, "\nin-use C++ objects by dynamic type (top %u by bytes):\n", o->top);
	if (!ntypes)
		fprintf(f, "  (none: no block starts with a vtable pointer of a named class)\n");
	else
		fprintf(f, "%10s %14s %10s %10s %10s  %s\n", "blocks", "bytes", "def. lost",
			"ind. lost", "reachable", "type");
	for (size_t i = 0; i < ntypes && i < o->top; i++)
		fprintf(f, "%10llu %14llu %10llu %10llu %10llu  %s\n",
			(unsigned long long)types[i].blocks, (unsigned long long)types[i].bytes,
			(unsigned long long)types[i].by_reach[HP_CORE_LOST][0],
			(unsigned long long)types[i].by_reach[HP_CORE_INDIRECT][0],
			(unsigned long long)types[i].by_reach[HP_CORE_REACHABLE][0],
			hp_text_escape(buf, sizeof buf, c->types[types[i].key - 1]));
	/* the largest definitely lost blocks, by address within a size */
	unsigned shown = 0;
	if (o->top == UINT_MAX)
		fprintf(f, "\ndefinitely lost blocks (all):\n");
	else
		fprintf(f, "\ndefinitely lost blocks (first %u):\n", o->top);
	for (size_t i = 0; i < c->nblocks && shown < o->top; i++) {
		const struct hp_core_block *b = &c->blocks[i];
		if (b->state != HP_CORE_ALLOCATED || b->reach != HP_CORE_LOST)
			continue;
		fprintf(f, "  0x%llx %llu bytes%s%s\n", (unsigned long long)b->addr,
			(unsigned long long)b->size, b->type == UINT32_MAX ? "" : " ",
			b->type == UINT32_MAX ? "" : hp_text_escape(buf, sizeof buf,
								    c->types[b->type]));
		shown++;
	}
	if (!shown)
		fprintf(f, "  (none)\n");
}

static void json_rows(FILE *f, const char *name, const struct hp_core *c, const struct row *rows,
		      size_t n, int by_type)
{
	fprintf(f, ",\n\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		fprintf(f, "%s\n {", i ? "," : "");
		if (by_type) {
			fputs("\"type\":", f);
			json_str(f, c->types[r->key - 1]);
		} else {
			fprintf(f, "\"size\":%llu", (unsigned long long)r->key);
		}
		fprintf(f, ",\"blocks\":%llu,\"bytes\":%llu,\"definitely_lost\":%llu,"
			"\"indirectly_lost\":%llu,\"still_reachable\":%llu}",
			(unsigned long long)r->blocks, (unsigned long long)r->bytes,
			(unsigned long long)r->by_reach[HP_CORE_LOST][0],
			(unsigned long long)r->by_reach[HP_CORE_INDIRECT][0],
			(unsigned long long)r->by_reach[HP_CORE_REACHABLE][0]);
	}
	fputs("]", f);
}

static void json_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o,
			struct row *sizes, size_t nsizes,
			struct row *types, size_t ntypes)
{
	struct totals t;

	add_totals(c, &t);
	fputs("{\"core\":", f);
	json_str(f, c->path);
	fputs(",\"program\":", f);
	json_str(f, c->program);
	fprintf(f, ",\"pid\":%d,\"signal\":%d,\"threads\":[", c->pid, c->signal);
	for (size_t i = 0; i < c->nthreads; i++)
		fprintf(f, "%s{\"tid\":%d,\"rsp\":\"0x%llx\"}", i ? "," : "", c->threads[i].tid,
			(unsigned long long)c->threads[i].regs[HP_CORE_REG_RSP]);
	fprintf(f, "],\n\"heap\":{\"walked\":%s", c->heap_ok ? "true" : "false");
	if (c->heap_ok)
		fprintf(f, ",\"main_arena\":\"0x%llx\",\"found_by\":\"%s\",\"arenas\":%zu,"
			"\"heaps\":%zu,\"mmapped_chunks\":%zu",
			(unsigned long long)c->main_arena,
			c->arena_by_heuristic ? "signature" : "symbol", c->narenas, c->nheaps,
			c->nmmapped);
	fprintf(f, ",\"unwalked_bytes\":%llu,\"damage\":", (unsigned long long)c->unwalked_bytes);
	hp_core_damage_json(f, c, o);
	fputs("},\n\"totals\":{", f);
	fprintf(f, "\"blocks\":%llu,\"bytes\":%llu,", (unsigned long long)t.alloc[0],
		(unsigned long long)t.alloc[1]);
	fprintf(f, "\"definitely_lost_blocks\":%llu,\"definitely_lost_bytes\":%llu,",
		(unsigned long long)t.reach[HP_CORE_LOST][0],
		(unsigned long long)t.reach[HP_CORE_LOST][1]);
	fprintf(f, "\"indirectly_lost_blocks\":%llu,\"indirectly_lost_bytes\":%llu,",
		(unsigned long long)t.reach[HP_CORE_INDIRECT][0],
		(unsigned long long)t.reach[HP_CORE_INDIRECT][1]);
	fprintf(f, "\"still_reachable_blocks\":%llu,\"still_reachable_bytes\":%llu,",
		(unsigned long long)t.reach[HP_CORE_REACHABLE][0],
		(unsigned long long)t.reach[HP_CORE_REACHABLE][1]);
	fprintf(f, "\"free_tcache\":%llu,\"free_fastbin\":%llu,\"free_bin\":%llu,"
		"\"free_bytes\":%llu,\"top_bytes\":%llu,\"tcaches\":%llu}",
		(unsigned long long)t.tcache[0], (unsigned long long)t.fast[0],
		(unsigned long long)t.bins[0],
		(unsigned long long)(t.tcache[1] + t.fast[1] + t.bins[1]),
		(unsigned long long)t.top, (unsigned long long)t.internal[0]);
	json_rows(f, "by_size", c, sizes, nsizes, 0);
	json_rows(f, "by_type", c, types, ntypes, 1);
	fputs(",\n\"blocks\":[", f);
	int first = 1;
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct hp_core_block *b = &c->blocks[i];
		if (b->state != HP_CORE_ALLOCATED)
			continue;
		fprintf(f, "%s\n {\"address\":\"0x%llx\",\"size\":%llu,\"mmapped\":%s,\"type\":",
			first ? "" : ",", (unsigned long long)b->addr, (unsigned long long)b->size,
			b->mmapped ? "true" : "false");
		if (b->type == UINT32_MAX)
			fputs("null", f);
		else
			json_str(f, c->types[b->type]);
		fprintf(f, ",\"reachability\":\"%s\",\"damaged\":%s}", reach_name[b->reach],
			b->damaged ? "true" : "false");
		first = 0;
	}
	fputs("],\n\"notes\":[", f);
	for (size_t i = 0; i < c->nnotes; i++) {
		fputs(i ? ",\n " : "\n ", f);
		json_str(f, c->notes[i]);
	}
	fputs("]}\n", f);
}

int hp_core_report(FILE *f, const struct hp_core *c, const struct hp_core_report_options *o)
{
	size_t nsizes = 0, ntypes = 0;
	struct row *sizes = group(c, 0, &nsizes), *types = group(c, 1, &ntypes);
	int ret = 0;

	if (!sizes || !types) {
		ret = -ENOMEM;
		goto out;
	}
	if (o->json)
		json_report(f, c, o, sizes, nsizes, types, ntypes);
	else
		text_report(f, c, o, sizes, nsizes, types, ntypes);
	if (ferror(f))
		ret = -EIO;
out:
	free(sizes);
	free(types);
	return ret;
}

/* --- --whatis ----------------------------------------------------------- */

#define WHATIS_MAX_REFS 32

struct whatis_refs {
	FILE *f;
	const struct hp_core *c;
	int json;
	size_t n;
};

static void print_ref(void *arg, uint64_t at, long from_block, const char *what)
{
	struct whatis_refs *w = arg;
	const struct hp_core *c = w->c;
	char buf[1024];

	if (w->n++ >= WHATIS_MAX_REFS)
		return;
	if (w->json) {
		fprintf(w->f, "%s{\"at\":", w->n > 1 ? "," : "");
		if (at)
			fprintf(w->f, "\"0x%llx\"", (unsigned long long)at);
		else
			fputs("null", w->f);
		if (from_block >= 0) {
			const struct hp_core_block *b = &c->blocks[from_block];
			fprintf(w->f, ",\"block\":\"0x%llx\",\"offset\":%llu,\"type\":",
				(unsigned long long)b->addr, (unsigned long long)(at - b->addr));
			if (b->type == UINT32_MAX)
				fputs("null", w->f);
			else
				json_str(w->f, c->types[b->type]);
			fprintf(w->f, ",\"reachability\":\"%s\"}", reach_name[b->reach]);
		} else {
			fputs(",\"root\":", w->f);
			json_str(w->f, what);
			fputs("}", w->f);
		}
		return;
	}
	if (from_block >= 0) {
		const struct hp_core_block *b = &c->blocks[from_block];
		fprintf(w->f, "  pointed to from block 0x%llx+%llu (%llu bytes%s%s, %s)\n",
			(unsigned long long)b->addr, (unsigned long long)(at - b->addr),
			(unsigned long long)b->size, b->type == UINT32_MAX ? "" : ", ",
			b->type == UINT32_MAX ? "" : hp_text_escape(buf, sizeof buf,
								    c->types[b->type]),
			reach_name[b->reach]);
	} else if (at) {
		fprintf(w->f, "  pointed to from %s at 0x%llx\n",
			hp_text_escape(buf, sizeof buf, what), (unsigned long long)at);
	} else {
		fprintf(w->f, "  pointed to from %s\n", hp_text_escape(buf, sizeof buf, what));
	}
}

/* Where an address outside the heap is, in words. */
static void describe_elsewhere(const struct hp_core *c, uint64_t a, char *buf, size_t cap)
{
	const struct hp_core_module *m = hp_core_module_at(c, a);
	char shown[1024];

	for (size_t t = 0; t < c->nthreads; t++) {
		const struct hp_core_seg *s = hp_core_seg_at(c, c->threads[t].regs[HP_CORE_REG_RSP]);
		if (s && a >= s->vaddr && a - s->vaddr < s->memsz) {
			snprintf(buf, cap, "on the stack of thread %d", c->threads[t].tid);
			return;
		}
	}
	if (m) {
		snprintf(buf, cap, "in %s", hp_text_escape(shown, sizeof shown, m->path));
		return;
	}
	snprintf(buf, cap, hp_core_seg_at(c, a) ? "in anonymous memory" : "not in the core");
}

/* The recorded block for address a, in heap block i (-1: none): the one
 * starting where the heap's allocated block does (a may lie in the bytes
 * malloc rounded up), else, outside the heap's blocks, the one holding a;
 * -1 without. */
static long recorded(const struct hp_core *c, long i, uint64_t a)
{
	long r;

	if (!c->rec.found)
		return -1;
	if (i < 0)
		return hp_core_rec_block_at(c, a);
	if (c->blocks[i].state != HP_CORE_ALLOCATED)
		return -1;
	r = hp_core_rec_block_at(c, c->blocks[i].addr);
	return r >= 0 && c->rec.blocks[r].addr == c->blocks[i].addr ? r : -1;
}

int hp_core_whatis(FILE *f, const struct hp_core *c, const uint64_t *addrs, size_t n,
		   const struct hp_core_report_options *o)
{
	char buf[1024];
	int json = o->json;

	if (json)
		fputs("{\"whatis\":[", f);
	for (size_t k = 0; k < n; k++) {
		uint64_t a = addrs[k];
		long i = hp_core_block_at(c, a);
		int header = 0;
		if (i < 0) {
			long j = hp_core_block_at(c, a + 16);
			if (j >= 0 && a < c->blocks[j].addr) {
				i = j;
				header = 1;
			}
		}
		long ri = recorded(c, i, a);
		/* damage at a, or in the header of a's block */
		long di = hp_core_damage_at(c, a);
		if (di < 0 && i >= 0 && c->blocks[i].damaged)
			di = damage_of_block(c, c->blocks[i].addr);
		if (json) {
			fprintf(f, "%s\n {\"address\":\"0x%llx\"", k ? "," : "", (unsigned long long)a);
			if (di >= 0) {
				fputs(",\"damage\":", f);
				damage_json(f, c, o, &c->damage[di]);
			}
			if (c->rec.found) {
				fputs(",\"recorded\":", f);
				if (ri >= 0)
					hp_core_rec_whatis(f, c, o, (size_t)ri);
				else
					fputs("null", f);
			}
		}
		if (i < 0) {
			describe_elsewhere(c, a, buf, sizeof buf);
			if (json) {
				fputs(",\"block\":null,\"where\":", f);
				json_str(f, buf);
				fputs("}", f);
			} else if (ri >= 0) {
				fprintf(f, "0x%llx: not among the heap's blocks (%s), in a block the "
					"recorder holds live, at offset %llu\n", (unsigned long long)a,
					c->heap_ok ? "not found by the heap walk" : "the heap was not walked",
					(unsigned long long)(a - c->rec.blocks[ri].addr));
				hp_core_rec_whatis(f, c, o, (size_t)ri);
			} else {
				fprintf(f, "0x%llx: not in a heap block: %s\n", (unsigned long long)a, buf);
			}
			if (!json && di >= 0)
				damage_text(f, c, o, &c->damage[di], a);
			continue;
		}
		const struct hp_core_block *b = &c->blocks[i];
		struct whatis_refs w = {.f = f, .c = c, .json = json};
		if (json) {
			fprintf(f, ",\"block\":\"0x%llx\",\"size\":%llu,\"offset\":%lld,"
				"\"in_header\":%s,\"state\":", (unsigned long long)b->addr,
				(unsigned long long)b->size, (long long)(a - b->addr),
				header ? "true" : "false");
			json_str(f, state_name[b->state]);
			fputs(",\"type\":", f);
			if (b->type == UINT32_MAX)
				fputs("null", f);
			else
				json_str(f, c->types[b->type]);
			fputs(",\"reachability\":", f);
			if (b->state == HP_CORE_ALLOCATED)
				fprintf(f, "\"%s\"", reach_name[b->reach]);
			else
				fputs("null", f);
			fputs(",\"pointed_by\":[", f);
		} else {
			if (header)
				fprintf(f, "0x%llx: in the header of the chunk of block 0x%llx (%llu "
					"bytes), %s", (unsigned long long)a,
					(unsigned long long)b->addr, (unsigned long long)b->size,
					state_name[b->state]);
			else
				fprintf(f, "0x%llx: in block 0x%llx (%llu bytes) at offset %llu, %s",
					(unsigned long long)a, (unsigned long long)b->addr,
					(unsigned long long)b->size,
					(unsigned long long)(a - b->addr), state_name[b->state]);
			if (b->type != UINT32_MAX)
				fprintf(f, ", %s", hp_text_escape(buf, sizeof buf, c->types[b->type]));
			if (b->state == HP_CORE_ALLOCATED)
				fprintf(f, ", %s", reach_name[b->reach]);
			fputc('\n', f);
			if (ri >= 0)
				hp_core_rec_whatis(f, c, o, (size_t)ri);
			if (di >= 0)
				damage_text(f, c, o, &c->damage[di], a);
		}
		if (b->state == HP_CORE_ALLOCATED)
			hp_core_refs(c, (size_t)i, print_ref, &w);
		if (json) {
			fprintf(f, "],\"pointers\":%zu}", w.n);
		} else {
			if (b->state == HP_CORE_ALLOCATED && !w.n)
				fprintf(f, "  nothing points to it\n");
			if (w.n > WHATIS_MAX_REFS)
				fprintf(f, "  ... and %zu more\n", w.n - WHATIS_MAX_REFS);
		}
	}
	if (json)
		fputs("\n]}\n", f);
	return ferror(f) ? -EIO : 0;
}
