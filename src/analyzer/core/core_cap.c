/*
 * core_cap.c - a capture of the dump: what the recorder held when a
 * process that ran under heapprof dumped core (core_rec.c), written as a
 * capture file (format 1.3, format.h) with the schema's encoders
 * (src/format/records.h), the records the recorder's own writer would
 * have written had it made a snapshot at that moment:
 *
 *   META      the pid and program from the core (NT_PRPSINFO, the module
 *             holding AT_PHDR), the sampling rate from the recorder;
 *             start times, arguments and the other options are not in
 *             the recorder's root and are 0
 *   MODULES   one load event per ELF module of NT_FILE with its PT_LOADs
 *             and build-id (core_mods.c: from its headers in the core,
 *             else from the file), so the analyzer's symbolizer opens the
 *             same files and refuses the same changed ones
 *   STACKS    every stack id below the table's count, the same ids
 *   TAGS      the recorder's tags (types, contexts, threads, heaps,
 *             origins: its root's tag tables, version 2), then one TYPE
 *             tag (source HP_TYPE_VTABLE) per vtable address found below
 *   SNAPSHOT  one, seq 1, reason HP_SNAP_FATAL with the core's signal
 *             (HP_SNAP_SIGNAL, signal 0, for a core without one, gcore's);
 *             its buckets as the recorder's table holds them, the totals
 *             their sums (as the writer's); no lost counts (the root does
 *             not carry them) and no peak time
 *
 * So the per-site figures of the capture are exactly those of a
 * fatal-signal snapshot taken at the dump, but for one thing the recorder
 * does only at an ordinary snapshot (not at a fatal one, nor before a
 * core): it reads each untyped live block's first word and, when it
 * points into a vtable, moves the block into a bucket of that type. The
 * core holds the objects' memory, so the conversion does it (vtables):
 * each live recorded block of a bucket without a type whose first word
 * points into a _ZTV symbol of a module of the core (hp_core_vtable_at,
 * the test --whatis names types with) moves into a bucket of the same
 * stack, origin and size with a TYPE tag of that address; alloc and
 * in-use counts and bytes move with the blocks. What was in use at the
 * peak is not known per block: min(blocks moved, the bucket's peak_count)
 * move, with the moved blocks' mean bytes (docs/core.md). The TYPE ids
 * start above the recorder's own type ids.
 *
 * A stack whose frames are not in
 * the core is written with one frame, 0 (a stack needs one), and a deeper
 * one than the reader accepts is cut at HP_CAP_MAX_DEPTH.
 *
 * Ordinary analyzer C: the payload grows with realloc; not thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../format/records.h"
#include "../../format/capture.h"
#include "core.h"
#include "../../common/sort.h"

static void put_meta(struct hp_buf *p, const struct hp_core *c)
{
	const char *program = c->program;
	struct hp_rec_meta m = {
		.pid = c->pid > 0 ? (uint64_t)c->pid : 0,
		.page_size = 4096,
	};
	struct hp_rec_meta_options o = {
		.recorder_version = hp_rec_str_of("heapprof core"),
		.sample_rate_bytes = c->rec.sample_rate ? c->rec.sample_rate : 1,
	};

	for (size_t i = 0; i < c->nmods; i++)
		if (c->mods[i].is_exe)
			program = c->mods[i].file;
	m.program = hp_rec_str_of(program);
	hp_rec_meta_put(p, &m);
	hp_rec_count_put(p, 0); /* argc */
	hp_rec_meta_options_put(p, &o);
}

static void put_modules(struct hp_buf *p, const struct hp_core *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nmods; i++)
		n += c->mods[i].nseg > 0;
	hp_rec_count_put(p, n);
	for (size_t i = 0, id = 1; i < c->nmods; i++) {
		const struct hp_core_module *m = &c->mods[i];
		struct hp_rec_module_event e = {
			.kind = HP_MOD_LOAD,
			.module_id = id,
			.path = hp_rec_str_of(m->file ? m->file : m->path),
			.build_id = {(const char *)m->build_id, m->build_id_len},
			.bias = m->bias,
			.segment_count = (uint64_t)m->nseg,
		};
		if (!m->nseg)
			continue;
		id++;
		hp_rec_module_event_put(p, &e);
		for (int s = 0; s < m->nseg; s++)
			hp_rec_segment_put(p, &(struct hp_rec_segment){m->seg[s].vaddr,
									m->seg[s].memsz,
									m->seg[s].offset,
									m->seg[s].flags});
	}
}

static void put_stacks(struct hp_buf *p, const struct hp_core_rec *r)
{
	static const uint64_t none[1] = {0};

	hp_rec_stacks_put(p, &(struct hp_rec_stacks){.first_id = 1,
						     .count = r->nstacks ? r->nstacks - 1 : 0});
	for (uint32_t id = 1; id < r->nstacks; id++) {
		const struct hp_core_rec_stack *s = &r->stacks[id];
		uint32_t depth = s->depth < HP_CAP_MAX_DEPTH ? s->depth : HP_CAP_MAX_DEPTH;
		if (s->frames && depth)
			hp_rec_stack_put(p, s->frames, depth);
		else
			hp_rec_stack_put(p, none, 1);
	}
}

/* The recorder's buckets with the live blocks of vtable types moved out
 * of their untyped buckets (vtables), and the TYPE tags they name. */
struct typed {
	struct hp_core_rec_bucket *buckets;
	size_t nbuckets;
	uint64_t *vptrs; /* sorted; vptrs[i] is TYPE id first_tag + i */
	size_t nvptrs;
	uint32_t first_tag;
};

/* One live block to move: its bucket (an index into r->buckets) and its
 * first word. */
struct move {
	size_t from;
	uint64_t vptr, bytes;
};

static int cmp_move(const void *a, const void *b)
{
	const struct move *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->vptr < y->vptr ? -1 : x->vptr > y->vptr;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_bucket_id(const void *a, const void *b)
{
	const struct hp_core_rec_bucket *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void typed_free(struct typed *t)
{
	free(t->buckets);
	free(t->vptrs);
}

/* Fills t (see the file's comment). Returns 0 or -ENOMEM (t freed). */
static int vtables(const struct hp_core *c, struct typed *t)
{
	const struct hp_core_rec *r = &c->rec;
	struct move *mv = malloc((r->nblocks ? r->nblocks : 1) * sizeof *mv);
	size_t nmv = 0, ngroups = 0;
	uint64_t last_vptr = 0;
	int last_ok = 0;

	*t = (struct typed){.first_tag = 1};
	/* at most one new bucket per block moved */
	t->buckets = malloc((r->nbuckets + r->nblocks + 1) * sizeof *t->buckets);
	t->vptrs = malloc((r->nblocks ? r->nblocks : 1) * sizeof *t->vptrs);
	if (!mv || !t->buckets || !t->vptrs) {
		free(mv);
		typed_free(t);
		return -ENOMEM;
	}
	if (r->nbuckets)
		memcpy(t->buckets, r->buckets, r->nbuckets * sizeof *t->buckets);
	t->nbuckets = r->nbuckets;
	if (r->types > t->first_tag)
		t->first_tag = r->types;
	for (size_t i = 0; i < r->nbuckets; i++)
		if (r->buckets[i].type_tag >= t->first_tag)
			t->first_tag = r->buckets[i].type_tag + 1;
	for (size_t i = 0; i < r->nblocks && r->nbuckets; i++) {
		const struct hp_core_rec_block *b = &r->blocks[i];
		struct hp_core_rec_bucket want = {.id = b->bucket};
		const struct hp_core_rec_bucket *k =
			hp_bsearch(&want, r->buckets, r->nbuckets, sizeof *r->buckets, cmp_bucket_id);
		uint64_t w;
		int ok;
		/* Every block, a typed bucket's too: the recorder's own TYPE
		 * tags are not in the core's root, so its vtable types (a
		 * snapshot's, a crash's) are read again here. */
		if (!k || b->size < 8)
			continue;
		w = hp_core_word(c, b->addr, &ok);
		if (!ok || w < 4096)
			continue;
		if (w != last_vptr) {
			last_vptr = w;
			last_ok = hp_core_vtable_at(c, w) != NULL;
		}
		if (last_ok)
			mv[nmv++] = (struct move){(size_t)(k - r->buckets), w, b->size};
	}
	hp_sort(mv, nmv, sizeof *mv, cmp_move);
	for (size_t i = 0; i < nmv; i++)
		t->vptrs[i] = mv[i].vptr;
	hp_sort(t->vptrs, nmv, sizeof *t->vptrs, cmp_u64);
	for (size_t i = 0; i < nmv; i++)
		if (!t->nvptrs || t->vptrs[t->nvptrs - 1] != t->vptrs[i])
			t->vptrs[t->nvptrs++] = t->vptrs[i];
	/* TYPE ids past what the reader takes: leave them untyped */
	if (t->nvptrs > HP_CAP_MAX_TAG_ID || t->first_tag > HP_CAP_MAX_TAG_ID - t->nvptrs)
		nmv = t->nvptrs = 0;
	for (size_t i = 0, j; i < nmv; i = j) {
		struct hp_core_rec_bucket *from = &t->buckets[mv[i].from], *to;
		uint64_t n = 0, bytes = 0, peak_n, peak_bytes;
		const uint64_t *v =
			hp_bsearch(&mv[i].vptr, t->vptrs, t->nvptrs, sizeof *t->vptrs, cmp_u64);
		for (j = i; j < nmv && mv[j].from == mv[i].from && mv[j].vptr == mv[i].vptr; j++) {
			n++;
			bytes += mv[j].bytes;
		}
		/* a torn bucket may hold fewer in use than its blocks say */
		if (from->alloc_count - from->free_count < n ||
		    from->alloc_bytes - from->free_bytes < bytes || from->alloc_count < n ||
		    from->alloc_bytes < bytes)
			continue;
		peak_n = n < from->peak_count ? n : from->peak_count;
		peak_bytes = (uint64_t)((unsigned __int128)bytes * peak_n / n);
		if (peak_bytes > from->peak_bytes)
			peak_bytes = from->peak_bytes;
		to = &t->buckets[r->nbuckets + ngroups++];
		*to = (struct hp_core_rec_bucket){
			.id = UINT32_MAX,
			.stack = from->stack,
			.type_tag = t->first_tag + (uint32_t)(v - t->vptrs),
			.origin_tag = from->origin_tag,
			.size = from->size,
			.alloc_count = n,
			.alloc_bytes = bytes,
			.peak_count = peak_n,
			.peak_bytes = peak_bytes,
			.torn = from->torn,
		};
		from->alloc_count -= n;
		from->alloc_bytes -= bytes;
		from->peak_count -= peak_n;
		from->peak_bytes -= peak_bytes;
	}
	free(mv);
	/* a bucket whose every block moved, nothing freed, is left out */
	size_t k = 0;
	for (size_t i = 0; i < r->nbuckets + ngroups; i++) {
		const struct hp_core_rec_bucket *b = &t->buckets[i];
		if (i < r->nbuckets && !b->alloc_count && !b->free_count && !b->temp_count &&
		    r->buckets[i].alloc_count)
			continue;
		t->buckets[k++] = *b;
	}
	t->nbuckets = k;
	return 0;
}

static void put_tags(struct hp_buf *p, const struct hp_core_rec *r, const struct typed *t)
{
	hp_rec_count_put(p, r->ntags + t->nvptrs);
	for (size_t i = 0; i < r->ntags; i++) {
		const struct hp_core_rec_tag *g = &r->tags[i];
		hp_rec_tag_put(p, &(struct hp_rec_tag){
			.kind = g->kind,
			.id = g->id,
			.a = g->a,
			.b = g->b,
			.c = g->c,
			.name = {g->name, g->len},
		});
	}
	for (size_t i = 0; i < t->nvptrs; i++)
		hp_rec_tag_put(p, &(struct hp_rec_tag){
			.kind = HP_TAG_TYPE,
			.id = t->first_tag + i,
			.a = HP_TYPE_VTABLE,
			.b = t->vptrs[i],
			.name = hp_rec_str_of(""),
		});
}

static void put_snapshot(struct hp_buf *p, const struct hp_core *c, const struct typed *t)
{
	const struct hp_core_rec *r = &c->rec;
	struct hp_rec_snapshot s = {
		.seq = 1,
		.reason = c->signal ? HP_SNAP_FATAL : HP_SNAP_SIGNAL,
		.signo = c->signal > 0 ? (uint64_t)c->signal : 0,
		.peak_bytes = r->peak_bytes,
		.stack_count = r->nstacks ? r->nstacks : 1,
	};

	for (size_t i = 0; i < t->nbuckets; i++) {
		const struct hp_core_rec_bucket *b = &t->buckets[i];
		s.alloc_count += b->alloc_count;
		s.alloc_bytes += b->alloc_bytes;
		s.free_count += b->free_count;
		s.free_bytes += b->free_bytes;
		s.peak_count += b->peak_count;
	}
	hp_rec_snapshot_put(p, &s);
	hp_rec_count_put(p, 0); /* lost kinds: not in the root */
	hp_rec_count_put(p, t->nbuckets);
	for (size_t i = 0; i < t->nbuckets; i++) {
		const struct hp_core_rec_bucket *b = &t->buckets[i];
		hp_rec_bucket_put(p, &(struct hp_rec_bucket){
			.stack_id = b->stack,
			.type_tag = b->type_tag,
			.origin_tag = b->origin_tag,
			.size = b->size,
			.alloc_count = b->alloc_count,
			.alloc_bytes = b->alloc_bytes,
			.free_count = b->free_count,
			.free_bytes = b->free_bytes,
			.peak_count = b->peak_count,
			.peak_bytes = b->peak_bytes,
			.temp_count = b->temp_count,
			.temp_bytes = b->temp_bytes,
		});
	}
	hp_rec_snapshot_tail_put(p, &(struct hp_rec_snapshot_tail){0});
	/* The custom heaps' own peaks, with no time (the root has no start) */
	hp_rec_count_put(p, r->nheaps);
	for (uint32_t h = 1; h <= r->nheaps; h++)
		hp_rec_heap_peak_put(p, &(struct hp_rec_heap_peak){
			.heap = h,
			.peak_bytes = r->heap_peaks[h - 1].peak_bytes,
			.peak_count = r->heap_peaks[h - 1].peak_count,
			.resets = r->heap_peaks[h - 1].resets,
		});
}

int hp_core_capture(const struct hp_core *c, struct hp_buf *out)
{
	struct hp_buf p = {.grow = hp_buf_grow_heap};
	struct typed t;
	int ret = 0;

	if (!c->rec.found)
		return -ENOENT;
	if ((ret = vtables(c, &t)))
		return ret;
	hp_format_put_file_header(out);
	put_meta(&p, c);
	if (!(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_META, p.data, p.len, NULL);
	p.len = 0;
	put_modules(&p, c);
	if (!ret && !(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_MODULES, p.data, p.len, NULL);
	p.len = 0;
	put_stacks(&p, &c->rec);
	if (!ret && !(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_STACKS, p.data, p.len, NULL);
	p.len = 0;
	if (c->rec.ntags || t.nvptrs) {
		put_tags(&p, &c->rec, &t);
		if (!ret && !(ret = p.err))
			ret = hp_format_put_record(out, HP_REC_TAGS, p.data, p.len, NULL);
		p.len = 0;
	}
	put_snapshot(&p, c, &t);
	if (!ret && !(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_SNAPSHOT, p.data, p.len, NULL);
	free(p.data);
	typed_free(&t);
	return ret ? ret : out->err;
}
