/*
 * html.c - the HTML report (html.h): the page's skeleton, its assets and
 * the capture's data as one JSON object.
 *
 * The data (docs/html.md lists every field):
 *
 *   heap       the heap shown (--heap, heapview.h: every view by stack
 *              shows its blocks), null for malloc's
 *   strings    every function, file and module name, once (escaped as
 *              text.h says, then as JSON)
 *   frames     [function, file, line, module, inlined]: string indexes
 *              (module -1 when none); one per distinct symbolic frame
 *   stacks     each kept call stack as frame indexes, innermost first
 *              (a location's inlined frames expanded, callee first)
 *   series     the heap and RSS time series, at most HP_HTML_MAX_POINTS
 *              points (a longer series keeps each stretch's highest heap
 *              and highest RSS, so no peak is lost)
 *   sites      the per-site timeline (timeline.h) of the HP_HTML_SITES
 *              sites with the highest bytes in use over the whole run:
 *              {"t": [times], "lines": [{"stack": index in stacks,
 *              "max": highest bytes, "v": [bytes at each time]}]}, at
 *              most HP_HTML_MAX_POINTS times (a longer one keeps each
 *              stretch's highest value per site)
 *   timelines  (with attribution, as "groups") the timeline by type,
 *              context, thread and heap (timeline.h, hp_timeline_by): the
 *              HP_HTML_SITES groups with the highest bytes in use over
 *              the run, then "other", as sites: {"type": {"t": [times],
 *              "lines": [{"key", "source" (type only), "other": true and
 *              "groups": N (the last line, summing N groups, when there
 *              are more), "max", "v": [bytes at each time]}]}, "context",
 *              "thread", "heap"}
 *   events     (with an event log, run --events; else null) the bytes
 *              in use of every block of the log over time, per
 *              millisecond or coarser (events_timeline.h: at most
 *              HP_EVENTS_TL_MAX_BUCKETS buckets, so at most 2,002 times),
 *              in total and by type, thread, context and stack, each the
 *              HP_HTML_SITES highest groups and "other" (write_events)
 *   histograms the size and lifetime histograms (histo.h) of the last
 *              snapshot: {"seq", "total": the whole program's {"allocs",
 *              "frees", "size": [per size class], "life": [per lifetime
 *              class]}, "stacks": per entry of stacks, 0 when it has none,
 *              else [allocs, frees, [class, count, ...], [class, count,
 *              ...]], its nonzero size and lifetime classes}; null when
 *              the capture has no HISTOGRAMS (write_histograms). The
 *              HP_HTML_SITES stacks with the most allocations are kept in
 *              stacks for it.
 *   map        the last snapshot's live blocks (run --live-blocks), at
 *              most HP_HTML_MAX_BLOCKS, by address: {"seq", "total",
 *              "blocks": [[address, size, index in stacks]...], "regions":
 *              [{"start", "end", "kind" (memmap.h's name), "perms", "name",
 *              "rss" (null before format 1.5), "inuse", "count", "first"
 *              (its first block's index in the full list: a region's
 *              blocks are first .. first + count - 1), "gap" (largest
 *              free stretch), "frag" (1 - in use / RSS, null without
 *              RSS), "holders": [[index in stacks, blocks, bytes]...] (up
 *              to HP_HTML_MAP_HOLDERS)}...], "outside": [blocks, bytes]},
 *              or null
 *   snapshots  per snapshot: the record's figures (but its frees and peak,
 *              "free_count", "free_bytes", "peak_bytes", "peak_count":
 *              the model's, unbiased, as report says them), the model's
 *              unbiased totals, and rows [stack, figures...] for the top_stacks
 *              stacks with the largest share of any metric, plus "other":
 *              [stacks left out, their figures summed]; "tables": by
 *              function, line and module over every stack, each {"rows":
 *              [[frame, flat figures..., cumulative figures...]...],
 *              "other": [keys left out, flat..., cumulative...]}, at most
 *              top_stacks rows (write_tables_by); when the capture
 *              has attribution (TAGS), "groups": {"type": [...],
 *              "context", "thread", "heap"}, each group.h's rows in its
 *              order, at most top_stacks: [key, source or "", figures...]
 *              (the suppressed stacks left out, as report --by leaves
 *              them); "suppressed": [0, figures...] of the stacks the
 *              options' suppressions match (hp_model_suppress), all 0
 *              without; their blocks in use are left out of "total", of
 *              their rows and of "other" (in use as report says it)
 *
 * Figures are in the order of COLS: in use (bytes, objects), peak bytes,
 * allocated (bytes, objects), temporary (objects, bytes), as integers
 * (hp_estimate_i64). Each snapshot gets its own model, so a stack's
 * figures are the snapshot's; frames and stacks are shared.
 *
 * The JSON sits in a <script> element: every '<', '>' and '&' in it is
 * written \u003c, \u003e, \u0026, so no string of the capture can close
 * the element or open a comment.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/strtab.h"
#include "../common/table.h"
#include "../common/vec.h"
#include "../common/version.h"
#include "assets/assets.h"
#include "html.h"
#include "../common/text.h"
#include "flame.h"
#include "group.h"
#include "heapview.h"
#include "histo.h"
#include "memmap.h"
#include "timeline.h"
#include "events_timeline.h"

#define HP_HTML_MAX_POINTS 4000   /* timeline points: enough for a 4000 px wide chart */
#define HP_HTML_SITES 10          /* lines of the per-site timeline */
#define HP_HTML_TL_DIMS 4         /* the timeline by type, context, thread and heap */
#define HP_HTML_MAX_BLOCKS 100000 /* blocks of the memory map */
#define HP_HTML_MAP_HOLDERS 5     /* top stacks of each of its regions */
#define HP_HTML_FLAME_MIN 0.0005  /* flame graph nodes kept: at least this share of a metric */

enum {
	COL_INUSE_B,
	COL_INUSE_O,
	COL_PEAK_B,
	COL_ALLOC_B,
	COL_ALLOC_O,
	COL_TEMP_O,
	COL_TEMP_B,
	NCOLS
};

/* The columns a stack is ranked by: its largest share of any of these. */
static const int rank_cols[] = {COL_INUSE_B, COL_PEAK_B, COL_ALLOC_B, COL_ALLOC_O, COL_TEMP_O};

struct frame {
	uint32_t function, file, line;
	int32_t module;
	int inlined, cls; /* cls: model.h's hp_frame_class */
};

/* What the page's data is built from; the frames and stacks of every
 * snapshot go into one table each. */
struct page {
	struct hp_strtab strings;
	struct hp_strtab frame_keys; /* "function\x1ffile\x1fline\x1fmodule\x1finlined" -> frame */
	struct frame *frames;
	size_t nframes, frames_cap;
	struct hp_u64map stack_index; /* capture stack id -> index in stacks */
	uint32_t **stacks;            /* frame indexes; [0] is the count */
	size_t nstacks, stacks_cap;
	char *key;
	size_t key_cap;
	struct hp_frame_names names; /* page_name's: from the first snapshot's model */
	char libname[512];           /* frame_name's */
	struct hp_shown_frame *fbuf; /* hp_frames_shown's */
	int all_frames;              /* --all-frames: every frame kept */
	size_t fbuf_cap;
};

struct ranked {
	uint32_t stack;
	double score;
};

static void cols_of(const struct hp_values *v, double out[NCOLS])
{
	out[COL_INUSE_B] = v->inuse_bytes;
	out[COL_INUSE_O] = v->inuse_objects;
	out[COL_PEAK_B] = v->peak_bytes;
	out[COL_ALLOC_B] = v->alloc_bytes;
	out[COL_ALLOC_O] = v->alloc_objects;
	out[COL_TEMP_O] = v->temp_objects;
	out[COL_TEMP_B] = v->temp_bytes;
}

/* A stack's figures as the page shows them: a suppressed stack's (the
 * runtime's one-time allocations, hp_model_suppress) with nothing in use,
 * as report's leaked section shows it. */
static void inuse_cols_of(const struct hp_model *m, uint32_t stack, double out[NCOLS])
{
	cols_of(&m->stacks[stack].v, out);
	if (m->stacks[stack].suppressed)
		out[COL_INUSE_B] = out[COL_INUSE_O] = 0;
}

static int by_score(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int intern(struct page *p, const char *s, uint32_t *out)
{
	return hp_strtab_intern(&p->strings, s ? s : "", out);
}

/* A function's name as the page shows it, as every view shows it
 * (frames.h: no parameter list unless an overload needs it). */
static const char *page_name(struct page *p, const char *name)
{
	return hp_frame_names_get(&p->names, name);
}

/* A frame's name on the page: page_name's, but a frame without a symbol
 * in a shared library that was read (a stripped library: every address
 * would be a function of its own) is named by its library, "[libfoo.so]", so the
 * flame graph and the tables group its frames as report groups them into
 * one site (report_site.c). A binary gone or changed keeps its address. */
static const char *frame_name(struct page *p, const struct hp_model *m,
			      const struct hp_location *l, const struct hp_sym *sym)
{
	const char *fn = sym->function, *mod, *base;
	enum hp_module_status st;

	if (!(fn[0] == '?' || (fn[0] == '0' && fn[1] == 'x')) || sym->file[0] || l->module < 0 ||
	    l->module == hp_model_main_module(m))
		return page_name(p, fn);
	st = m->modules[l->module].status;
	if (st != HP_MODSYM_OK && st != HP_MODSYM_EMBEDDED && st != HP_MODSYM_NO_SYMBOLS)
		return page_name(p, fn);
	mod = m->modules[l->module].name;
	base = strrchr(mod, '/');
	snprintf(p->libname, sizeof p->libname, "[%s]", base ? base + 1 : mod);
	return p->libname;
}

/* The frame index of one symbolic frame, added on first sight. */
static int frame_of(struct page *p, const struct hp_model *m, const struct hp_location *l,
		    const struct hp_sym *sym, uint32_t *out)
{
	const char *mod = l->module >= 0 ? m->modules[l->module].name : "";
	struct frame fr = {.line = sym->line, .module = -1, .inlined = sym->inlined};
	int n, ret;

	n = snprintf(p->key, p->key_cap, "%s\x1f%s\x1f%u\x1f%s\x1f%d", sym->function, sym->file,
		     sym->line, mod, sym->inlined);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= p->key_cap) {
		char *k = realloc(p->key, (size_t)n + 1);
		if (!k)
			return -ENOMEM;
		p->key = k;
		p->key_cap = (size_t)n + 1;
		snprintf(p->key, p->key_cap, "%s\x1f%s\x1f%u\x1f%s\x1f%d", sym->function, sym->file,
			 sym->line, mod, sym->inlined);
	}
	ret = hp_strtab_intern(&p->frame_keys, p->key, out);
	if (ret || *out < p->nframes)
		return ret;
	/* New: the key's index is the next frame's. */
	fr.cls = (int)hp_model_frame_class(m, l, sym);
	if ((ret = intern(p, frame_name(p, m, l, sym), &fr.function)) ||
	    (ret = intern(p, sym->file, &fr.file)))
		return ret;
	if (l->module >= 0) {
		uint32_t mi;
		if ((ret = intern(p, mod, &mi)))
			return ret;
		fr.module = (int32_t)mi;
	}
	if (hp_vec_grow(&p->frames, &p->frames_cap, p->nframes + 1))
		return -ENOMEM;
	p->frames[p->nframes++] = fr;
	return 0;
}

/* The frames of stack id as the page shows them (hp_frames_shown: the
 * runtime's below main left out unless p->all_frames) into p->fbuf;
 * returns how many, or -ENOMEM. */
static long stack_frames(struct page *p, const struct hp_model *m, uint32_t id)
{
	const struct hp_mstack *s = &m->stacks[id];
	size_t cap = 0;

	for (uint32_t i = 0; i < s->depth; i++)
		cap += m->locations[hp_mstack_location(s, i)].nsyms;
	if (hp_vec_grow(&p->fbuf, &p->fbuf_cap, cap + 1))
		return -ENOMEM;
	return (long)hp_frames_shown(m, s, p->all_frames, p->fbuf);
}

/* The index in p->stacks of the model's stack id, added on first sight. */
static int stack_of(struct page *p, const struct hp_model *m, uint32_t id, uint32_t *out)
{
	uint32_t *frames, n;
	long nf;
	int ret;

	if (hp_u64map_get(&p->stack_index, id, out))
		return 0;
	if ((nf = stack_frames(p, m, id)) < 0)
		return (int)nf;
	frames = malloc(((size_t)nf + 1) * sizeof *frames);
	if (!frames)
		return -ENOMEM;
	for (n = 0; n < (uint32_t)nf; n++) {
		const struct hp_location *l = &m->locations[p->fbuf[n].loc];
		ret = frame_of(p, m, l, &l->syms[p->fbuf[n].sym], &frames[1 + n]);
		if (ret) {
			free(frames);
			return ret;
		}
	}
	frames[0] = n;
	if (hp_vec_grow(&p->stacks, &p->stacks_cap, p->nstacks + 1) ||
	    hp_u64map_put(&p->stack_index, id, (uint32_t)p->nstacks)) {
		free(frames);
		return -ENOMEM;
	}
	*out = (uint32_t)p->nstacks;
	p->stacks[p->nstacks++] = frames;
	return 0;
}

static void page_free(struct page *p)
{
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i]);
	free(p->stacks);
	free(p->frames);
	free(p->key);
	free(p->fbuf);
	hp_u64map_free(&p->stack_index);
	hp_strtab_free(&p->strings);
	hp_strtab_free(&p->frame_keys);
	hp_frame_names_free(&p->names);
}

/* A string as JSON, escaped for display first (text.h), then for JSON in
 * a <script> element. */
static void json_str(FILE *f, const char *s)
{
	char *e = hp_text_dup(s ? s : "");
	const unsigned char *c = (const unsigned char *)(e ? e : "");

	fputc('"', f);
	for (; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&')
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
	free(e);
}

static void json_cols(FILE *f, const double v[NCOLS])
{
	for (int c = 0; c < NCOLS; c++)
		fprintf(f, ",%" PRId64, hp_estimate_i64(v[c]));
}

/* Whether the capture says more than call stacks: its TAGS records name
 * a type, a context or a custom heap, or a second thread (every capture
 * names its main thread: that alone would make tables of one row). */
static int has_attribution(const struct hp_capture *cap)
{
	return cap->ntags[HP_TAG_TYPE] > 1 || cap->ntags[HP_TAG_CONTEXT] > 1 ||
	       cap->ntags[HP_TAG_HEAP] > 1 || cap->ntags[HP_TAG_THREAD] > 2;
}

/* The snapshot's figures by type, context, thread and heap (group.h), at
 * most top rows each. Returns 0 or -ENOMEM. */
static int write_groups(FILE *f, const struct hp_model *m, size_t top)
{
	static const enum hp_dim dims[] = {HP_BY_TYPE, HP_BY_CONTEXT, HP_BY_THREAD, HP_BY_HEAP};
	struct hp_groups g;
	double v[NCOLS];
	int ret;

	fputs(",\"groups\":{", f);
	for (size_t d = 0; d < sizeof dims / sizeof *dims; d++) {
		if ((ret = hp_groups_build(&g, m, dims[d])))
			return ret;
		fprintf(f, "%s\"%s\":[", d ? "," : "", hp_dim_name(dims[d]));
		for (size_t i = 0; i < g.n && i < top; i++) {
			fputs(i ? ",[" : "[", f);
			json_str(f, g.rows[i].key);
			fputc(',', f);
			json_str(f, g.rows[i].source ? g.rows[i].source : "");
			cols_of(&g.rows[i].v, v);
			/* A custom heap's peak is its own, as report --by heap says. */
			if (g.rows[i].has_heap_peak)
				v[COL_PEAK_B] = (double)g.rows[i].heap_peak_bytes;
			json_cols(f, v);
			fputc(']', f);
		}
		fputc(']', f);
		hp_groups_free(&g);
	}
	fputc('}', f);
	return 0;
}

/* The time series, at most HP_HTML_MAX_POINTS points: each stretch of
 * samples gives the time of its first, its highest heap and highest RSS. */
static void write_series(FILE *f, const struct hp_capture *cap)
{
	size_t n = cap->nsamples, per = (n + HP_HTML_MAX_POINTS - 1) / HP_HTML_MAX_POINTS;
	static const char *const names[] = {"t", "heap", "rss"};

	if (per == 0)
		per = 1;
	fputs("\"series\":{", f);
	for (int k = 0; k < 3; k++) {
		fprintf(f, "%s\"%s\":[", k ? "," : "", names[k]);
		for (size_t i = 0; i < n; i += per) {
			uint64_t v = 0;
			for (size_t j = i; j < i + per && j < n; j++) {
				const struct hp_rec_sample *s = &cap->samples[j];
				uint64_t x = k == 0   ? cap->samples[i].time_ns
					     : k == 1 ? s->heap_bytes
						      : s->rss_bytes;
				if (x > v)
					v = x;
			}
			fprintf(f, "%s%" PRIu64, i ? "," : "", v);
		}
		fputc(']', f);
	}
	fputs("}", f);
}

/* The histograms of the last snapshot's stacks, kept small: what
 * hp_histo_by_stack gives (histo.h, 350 bytes a stack: 369 MB for 2^20
 * stacks) is computed here one stack at a time, in its order, and only
 * the page's stacks' are kept. */
struct page_hists {
	size_t n;              /* the stacks with histograms */
	struct hist_key *keys; /* those stacks, hp_histo_by_stack's order */
	uint32_t *first;       /* per model stack: its buckets at list[first[s]..first[s+1]) */
	uint32_t *list;        /* bucket indexes, by stack, in bucket order */
	struct hp_stack_hist all;   /* the sum over keys, in their order */
	struct hp_stack_hist *page; /* per page stack */
	uint8_t *has;               /* per page stack: it has histograms */
	size_t npage;
};

struct hist_key {
	double allocs;
	uint32_t stack;
};

/* hp_histo_by_stack's order: the most allocations first, equal ones by
 * stack id (a total order: any sort gives it). */
static int by_hist_key(const void *a, const void *b)
{
	const struct hist_key *x = a, *y = b;

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static void page_hists_free(struct page_hists *h)
{
	free(h->keys);
	free(h->first);
	free(h->list);
	free(h->page);
	free(h->has);
	memset(h, 0, sizeof *h);
}

/* Whether bucket i of m has histograms, and its stack is m's. */
static int bucket_hist(const struct hp_model *m, size_t i, struct hp_rec_hist *r)
{
	const struct hp_mbucket *b = &m->buckets[i];

	return b->stack < m->nstacks &&
	       hp_capture_hist(m->snap, (size_t)(b->raw - m->snap->buckets), r);
}

/* The stacks of m's snapshot with histograms, in order (h->keys), and each
 * one's buckets; none when the snapshot has no HISTOGRAMS. Returns 0 or
 * -ENOMEM. */
static int page_hists_order(struct page_hists *h, const struct hp_model *m)
{
	struct hp_rec_hist r;
	size_t nb = 0, k = 0;

	memset(h, 0, sizeof *h);
	if (!m->snap->hist_first || !m->nstacks)
		return 0;
	h->first = calloc(m->nstacks + 1, sizeof *h->first);
	if (!h->first)
		return -ENOMEM;
	for (size_t i = 0; i < m->nbuckets; i++)
		if (bucket_hist(m, i, &r)) {
			h->first[m->buckets[i].stack + 1]++;
			nb++;
		}
	for (size_t s = 0; s < m->nstacks; s++) {
		k += h->first[s + 1] != 0;
		h->first[s + 1] += h->first[s];
	}
	h->list = malloc((nb ? nb : 1) * sizeof *h->list);
	h->keys = malloc((k ? k : 1) * sizeof *h->keys);
	if (!h->list || !h->keys)
		return -ENOMEM;
	{
		/* first[s] counts up to s's end while the list fills, then
		 * each moves up one place */
		for (size_t i = 0; i < m->nbuckets; i++)
			if (bucket_hist(m, i, &r))
				h->list[h->first[m->buckets[i].stack]++] = (uint32_t)i;
		for (size_t s = m->nstacks; s > 0; s--)
			h->first[s] = h->first[s - 1];
		h->first[0] = 0;
	}
	for (size_t s = 0; s < m->nstacks; s++) {
		double allocs = 0;
		if (h->first[s] == h->first[s + 1])
			continue;
		for (uint32_t j = h->first[s]; j < h->first[s + 1]; j++) {
			struct hp_values bv;
			hp_mbucket_values(m, &m->buckets[h->list[j]], &bv);
			allocs += bv.alloc_objects;
		}
		h->keys[h->n++] = (struct hist_key){allocs, (uint32_t)s};
	}
	hp_sort(h->keys, h->n, sizeof *h->keys, by_hist_key);
	return 0;
}

/* Stack s's histograms, as hp_histo_by_stack sums them. */
static void stack_hist(const struct page_hists *h, const struct hp_model *m, uint32_t s,
		       struct hp_stack_hist *t)
{
	memset(t, 0, sizeof *t);
	t->stack = s;
	for (uint32_t j = h->first[s]; j < h->first[s + 1]; j++) {
		const struct hp_mbucket *b = &m->buckets[h->list[j]];
		struct hp_rec_hist r;
		struct hp_values bv;
		double scale;
		hp_capture_hist(m->snap, (size_t)(b->raw - m->snap->buckets), &r);
		scale = m->sampled ? hp_model_unbias_scale(b->raw, m->sample_rate_bytes) : 1;
		hp_mbucket_values(m, b, &bv);
		t->allocs += bv.alloc_objects;
		t->frees += bv.free_objects;
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			t->size[c] += (double)r.size[c] * scale;
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			t->life[c] += (double)r.life[c] * scale;
	}
}

/* The total and the page's stacks' histograms (every page stack is made
 * by now), from the model. Returns 0 or -ENOMEM. */
static int page_hists_fill(struct page_hists *h, const struct page *p, const struct hp_model *m)
{
	if (!h->n)
		return 0;
	h->npage = p->nstacks;
	h->page = calloc(h->npage ? h->npage : 1, sizeof *h->page);
	h->has = calloc(h->npage ? h->npage : 1, 1);
	if (!h->page || !h->has)
		return -ENOMEM;
	for (size_t k = 0; k < h->n; k++) {
		struct hp_stack_hist t;
		uint32_t idx;
		stack_hist(h, m, h->keys[k].stack, &t);
		h->all.allocs += t.allocs;
		h->all.frees += t.frees;
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			h->all.size[c] += t.size[c];
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			h->all.life[c] += t.life[c];
		if (hp_u64map_get(&p->stack_index, t.stack, &idx) && idx < h->npage) {
			h->page[idx] = t;
			h->has[idx] = 1;
		}
	}
	/* the model goes: its buckets are no longer read */
	free(h->first);
	free(h->list);
	free(h->keys);
	h->first = h->list = NULL;
	h->keys = NULL;
	return 0;
}

/* The histograms of the last snapshot (seq), from h (page_hists_fill):
 * the whole program's, then each of the page's stacks' by its index,
 * sparse (only the nonzero classes). Returns 0. */
static int write_histograms(FILE *f, const struct page *p, const struct page_hists *h,
			    uint64_t seq)
{
	const struct hp_stack_hist all = h->all;

	if (!h->n) {
		fputs(",\"histograms\":null", f);
		return 0;
	}
	fprintf(f, ",\"histograms\":{\"seq\":%" PRIu64 ",\"total\":{\"allocs\":%.0f,\"frees\":%.0f,"
		"\"size\":[", seq, all.allocs, all.frees);
	for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
		fprintf(f, "%s%.0f", c ? "," : "", all.size[c]);
	fputs("],\"life\":[", f);
	for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
		fprintf(f, "%s%.0f", c ? "," : "", all.life[c]);
	fputs("]},\"stacks\":[", f);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct hp_stack_hist *x = i < h->npage && h->has[i] ? &h->page[i] : NULL;
		int first = 1;
		if (i)
			fputc(',', f);
		if (!x) {
			fputc('0', f);
			continue;
		}
		fprintf(f, "[%.0f,%.0f,[", x->allocs, x->frees);
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			if (x->size[c] > 0) {
				fprintf(f, "%s%u,%.0f", first ? "" : ",", c, x->size[c]);
				first = 0;
			}
		fputs("],[", f);
		first = 1;
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			if (x->life[c] > 0) {
				fprintf(f, "%s%u,%.0f", first ? "" : ",", c, x->life[c]);
				first = 0;
			}
		fputs("]]", f);
	}
	fputs("]}", f);
	return 0;
}

/* The regions of the map (memmap.h), each with its top holders:
 * holders[r * HP_HTML_MAP_HOLDERS ..], nholders[r] of them, their stack
 * an index into the page's stacks. */
struct map_page {
	struct hp_map map;
	struct hp_map_holder *holders;
	size_t *nholders;
};

static void map_page_free(struct map_page *mp)
{
	hp_map_free(&mp->map);
	free(mp->holders);
	free(mp->nholders);
}

/* The regions of s and their holders, from the model m of s. 0 or -errno. */
static int map_page_build(struct map_page *mp, struct page *p, const struct hp_model *m,
			  const struct hp_cap_snapshot *s)
{
	int ret = hp_map_build(s, &mp->map);
	size_t n = mp->map.n;

	if (ret)
		return ret;
	mp->holders = calloc(n * HP_HTML_MAP_HOLDERS + 1, sizeof *mp->holders);
	mp->nholders = calloc(n + 1, sizeof *mp->nholders);
	if (!mp->holders || !mp->nholders)
		return -ENOMEM;
	for (size_t r = 0; !ret && r < n; r++) {
		struct hp_map_holder *h = &mp->holders[r * HP_HTML_MAP_HOLDERS];
		size_t k = hp_map_holders(s, &mp->map.regions[r], h, HP_HTML_MAP_HOLDERS), j = 0;
		for (size_t i = 0; !ret && i < k; i++) {
			uint32_t st = h[i].stack;
			if (st >= m->nstacks || !m->stacks[st].depth)
				continue; /* no stack: not in the page's table */
			h[j] = h[i];
			ret = stack_of(p, m, st, &h[j++].stack);
		}
		mp->nholders[r] = j;
	}
	return ret;
}

static void write_regions(FILE *f, const struct hp_cap_snapshot *s, const struct map_page *mp)
{
	char perms[5];

	fputs(",\"regions\":[", f);
	for (size_t r = 0; r < mp->map.n; r++) {
		const struct hp_map_region *g = &mp->map.regions[r];
		fprintf(f, "%s{\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"kind\":\"%s\",",
			r ? "," : "", g->start, g->end, hp_map_kind_name(g->kind));
		if (g->has_rss) {
			hp_map_perms(g->perms, perms);
			fprintf(f, "\"perms\":\"%s\",\"name\":", perms);
			json_str(f, g->name);
			fprintf(f, ",\"rss\":%" PRIu64 ",", g->rss_bytes);
		} else {
			fputs("\"perms\":null,\"name\":null,\"rss\":null,", f);
		}
		fprintf(f, "\"inuse\":%" PRIu64 ",\"count\":%zu,\"first\":%zu,\"gap\":%" PRIu64 ",",
			g->inuse_bytes, g->count, g->first, g->largest_gap_bytes);
		if (g->has_rss)
			fprintf(f, "\"frag\":%.4f,\"holders\":[", hp_map_fragmentation(g));
		else
			fputs("\"frag\":null,\"holders\":[", f);
		for (size_t i = 0; i < mp->nholders[r]; i++) {
			const struct hp_map_holder *h = &mp->holders[r * HP_HTML_MAP_HOLDERS + i];
			fprintf(f, "%s[%" PRIu32 ",%zu,%" PRIu64 "]", i ? "," : "", h->stack,
				h->count, h->bytes);
		}
		fputs("]}", f);
	}
	fprintf(f, "],\"outside\":[%zu,%" PRIu64 "]", mp->map.outside_count, mp->map.outside_bytes);
	(void)s;
}

/* The memory map: the blocks of s (sorted by address), their stacks as
 * indexes into the page's stacks (stacks[i], UINT32_MAX: none), and its
 * regions (mp). */
/* The type of each of the page's stacks (*out[i] for stacks[i], NULL when
 * none): the type of its bucket with the most bytes in use in m (group.h's
 * key by type), for the memory map's hover. Returns 0 or -ENOMEM. */
static int map_types_build(const struct page *p, const struct hp_model *m, char ***out,
			   size_t *n)
{
	double *best = calloc(p->nstacks + 1, sizeof *best);
	char **t = calloc(p->nstacks + 1, sizeof *t);
	char buf[2048];

	if (!best || !t) {
		free(best);
		free(t);
		return -ENOMEM;
	}
	*out = t;
	*n = p->nstacks;
	for (size_t b = 0; b < m->nbuckets; b++) {
		const struct hp_mbucket *bk = &m->buckets[b];
		struct hp_values bv;
		uint32_t idx;
		if (!hp_u64map_get(&p->stack_index, bk->stack, &idx) || idx >= p->nstacks)
			continue;
		hp_mbucket_values(m, bk, &bv);
		if (!(bv.inuse_bytes > best[idx]))
			continue;
		best[idx] = bv.inuse_bytes;
		free(t[idx]);
		if (!(t[idx] = strdup(hp_group_key(m, bk, HP_BY_TYPE, buf, sizeof buf, NULL)))) {
			free(best);
			return -ENOMEM;
		}
	}
	free(best);
	return 0;
}

static void write_map(FILE *f, const struct hp_cap_snapshot *s, const uint32_t *stacks,
		      const struct map_page *mp, char *const *types, size_t ntypes)
{
	size_t n = s && s->has_blocks ? s->nblocks : 0;

	if (!s || !s->has_blocks) {
		fputs(",\"map\":null", f);
		return;
	}
	if (n > HP_HTML_MAX_BLOCKS)
		n = HP_HTML_MAX_BLOCKS;
	fprintf(f, ",\"map\":{\"seq\":%" PRIu64 ",\"total\":%zu,\"blocks\":[", s->seq, s->nblocks);
	for (size_t i = 0; i < n; i++) {
		if (stacks[i] == UINT32_MAX)
			fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",-1]", i ? "," : "",
				s->blocks[i].address, s->blocks[i].size);
		else
			fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu32 "]", i ? "," : "",
				s->blocks[i].address, s->blocks[i].size, stacks[i]);
	}
	fputc(']', f);
	write_regions(f, s, mp);
	/* "types": per entry of stacks (those the page has when the map is
	 * made), the type most of its bytes in use have, "" when none; only
	 * with attribution. */
	if (ntypes) {
		fputs(",\"types\":[", f);
		for (size_t i = 0; i < ntypes; i++) {
			if (i)
				fputc(',', f);
			json_str(f, types[i] ? types[i] : "");
		}
		fputc(']', f);
	}
	fputc('}', f);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A line of a timeline the page draws: its points, and its fields before
 * "v" (written by a write_lines callback). */
struct line {
	const struct hp_site_point *points;
	size_t npoints;
};

/* Timelines as the page draws them: {"t": [times], "lines": [{head(i)
 * "v": [bytes at each time]}...]}: one time axis for every line (the
 * union of their points' times, at most HP_HTML_MAX_POINTS: a longer one
 * keeps each stretch's highest value per line), each line's value carried
 * forward to each time. Returns 0 or -ENOMEM. */
static int write_lines(FILE *f, const struct line *lines, size_t nlines,
		       void (*head)(FILE *f, size_t i, const void *arg), const void *arg)
{
	size_t n = 0, nt = 0, per;
	uint64_t *t;
	double *v;

	for (size_t i = 0; i < nlines; i++)
		n += lines[i].npoints;
	t = malloc((n ? n : 1) * sizeof *t);
	v = malloc((n ? n : 1) * sizeof *v);
	if (!t || !v) {
		free(t);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0, k = 0; i < nlines; i++)
		for (size_t j = 0; j < lines[i].npoints; j++)
			t[k++] = lines[i].points[j].time_ns;
	hp_sort(t, n, sizeof *t, by_u64);
	for (size_t i = 0; i < n; i++)
		if (!nt || t[i] != t[nt - 1])
			t[nt++] = t[i];
	per = (nt + HP_HTML_MAX_POINTS - 1) / HP_HTML_MAX_POINTS;
	if (!per)
		per = 1;
	fputs("{\"t\":[", f);
	for (size_t i = 0; i < nt; i += per)
		fprintf(f, "%s%" PRIu64, i ? "," : "", t[i]);
	fputs("],\"lines\":[", f);
	for (size_t i = 0; i < nlines; i++) {
		const struct line *s = &lines[i];
		size_t j = 0;
		double now = 0;
		/* The value at each time: the last point at or before it. */
		for (size_t k = 0; k < nt; k++) {
			while (j < s->npoints && s->points[j].time_ns <= t[k])
				now = s->points[j++].inuse_bytes;
			v[k] = now;
		}
		fputs(i ? ",{" : "{", f);
		head(f, i, arg);
		fputs("\"v\":[", f);
		for (size_t k = 0; k < nt; k += per) {
			double x = 0;
			for (size_t q = k; q < k + per && q < nt; q++)
				if (v[q] > x)
					x = v[q];
			fprintf(f, "%s%.0f", k ? "," : "", x);
		}
		fputs("]}", f);
	}
	fputs("]}", f);
	free(t);
	free(v);
	return 0;
}

struct sites_arg {
	const struct hp_site_series *sites;
	const uint32_t *stacks;
};

static void site_head(FILE *f, size_t i, const void *arg)
{
	const struct sites_arg *a = arg;

	fprintf(f, "\"stack\":%" PRIu32 ",\"max\":%.0f,", a->stacks[i], a->sites[i].max_bytes);
}

/* The per-site timeline: stacks[i] is sites[i]'s index in the page's
 * stacks. Returns 0 or -ENOMEM. */
static int write_sites(FILE *f, const struct hp_site_series *sites, size_t nsites,
		       const uint32_t *stacks)
{
	struct sites_arg a = {sites, stacks};
	struct line *lines = calloc(nsites + 1, sizeof *lines);
	int ret;

	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < nsites; i++)
		lines[i] = (struct line){sites[i].points, sites[i].npoints};
	fputs(",\"sites\":", f);
	ret = write_lines(f, lines, nsites, site_head, &a);
	free(lines);
	return ret;
}

/* The timeline by type, context, thread and heap (timeline.h,
 * hp_timeline_by), as the page draws it. */
static const enum hp_dim tl_dims[HP_HTML_TL_DIMS] = {HP_BY_TYPE, HP_BY_CONTEXT, HP_BY_THREAD,
						    HP_BY_HEAP};

static void group_head(FILE *f, size_t i, const void *arg)
{
	const struct hp_tl_group *g = &((const struct hp_tl_groups *)arg)->groups[i];

	fputs("\"key\":", f);
	json_str(f, g->key);
	if (g->source) {
		fputs(",\"source\":", f);
		json_str(f, g->source);
	}
	if (g->other)
		fprintf(f, ",\"other\":true,\"groups\":%zu", g->members);
	fprintf(f, ",\"max\":%.0f,", g->max_bytes);
}

/* "timelines": {"type": {"t", "lines"}, "context", "thread", "heap"}, each
 * line {"key", "source" (type), "other" and "groups" (the last, when
 * other groups held memory), "max", "v"}. Returns 0 or -ENOMEM. */
static int write_tgroups(FILE *f, const struct hp_tl_groups *tg)
{
	int ret = 0;

	fputs(",\"timelines\":{", f);
	for (size_t d = 0; d < HP_HTML_TL_DIMS && !ret; d++) {
		struct line *lines = calloc(tg[d].n + 1, sizeof *lines);
		if (!lines)
			return -ENOMEM;
		for (size_t i = 0; i < tg[d].n; i++)
			lines[i] = (struct line){tg[d].groups[i].points, tg[d].groups[i].npoints};
		fprintf(f, "%s\"%s\":", d ? "," : "", hp_dim_name(tl_dims[d]));
		ret = write_lines(f, lines, tg[d].n, group_head, &tg[d]);
		free(lines);
	}
	fputc('}', f);
	return ret;
}

/* --- the event log's timeline (events_timeline.h) --------------------- */

/* The groupings of the log's timeline, in the page's "events"."by": the
 * total first (written as "total"), then by type, thread, context and
 * call stack, each the HP_HTML_SITES highest groups and "other". */
#define HP_HTML_EV_DIMS 5
static const int ev_dims[HP_HTML_EV_DIMS] = {HP_EVENTS_TL_TOTAL, HP_BY_TYPE, HP_BY_THREAD,
					     HP_BY_CONTEXT, HP_BY_STACK};

struct ev_page {
	int on, selected;
	uint64_t from_ns, to_ns, bucket_ns;
	struct hp_tl_groups g[HP_HTML_EV_DIMS];
	uint32_t *stacks; /* by stack: each line's index in the page's stacks */
};

static void ev_page_free(struct ev_page *e)
{
	for (size_t d = 0; d < HP_HTML_EV_DIMS; d++)
		hp_timeline_by_free(&e->g[d]);
	free(e->stacks);
	memset(e, 0, sizeof *e);
}

/* The log's timelines of every block, or of sel's (the caller's
 * selection, hp_html_options.events), named by m (the last snapshot's
 * model, suppressions and heap applied); nothing without a log. Returns 0
 * or -ENOMEM. */
static int ev_page_build(struct ev_page *e, struct page *p, const struct hp_model *m,
			 const struct hp_events_select *sel)
{
	struct hp_events_tl *t;
	const struct hp_tl_groups *st = &e->g[HP_HTML_EV_DIMS - 1];
	int ret = hp_events_tl_open(m, sel && sel->on ? sel : NULL, &t);

	if (ret == -ENODATA)
		return 0;
	if (ret)
		return ret;
	e->on = 1;
	e->selected = sel && sel->on;
	hp_events_tl_span(t, &e->from_ns, &e->to_ns, &e->bucket_ns);
	for (size_t d = 0; d < HP_HTML_EV_DIMS && !ret; d++)
		ret = hp_events_tl_by(t, ev_dims[d], d ? HP_HTML_SITES : 1, &e->g[d]);
	hp_events_tl_close(t);
	if (!ret && !(e->stacks = calloc(st->n + 1, sizeof *e->stacks)))
		ret = -ENOMEM;
	for (size_t k = 0; !ret && k < st->n; k++)
		if (!st->groups[k].other)
			ret = stack_of(p, m, st->groups[k].stack, &e->stacks[k]);
	return ret;
}

/* A line's values at each of times[0..nt): its last point at or before
 * each, as integers. */
static void ev_values(FILE *f, const struct hp_tl_group *g, const uint64_t *times, size_t nt)
{
	size_t j = 0;
	double now = 0;

	fputs("\"v\":[", f);
	for (size_t k = 0; k < nt; k++) {
		while (j < g->npoints && g->points[j].time_ns <= times[k])
			now = g->points[j++].inuse_bytes;
		fprintf(f, "%s%.0f", k ? "," : "", now);
	}
	fputc(']', f);
}

/* "events": null, or {"bucket_ns", "from_ns", "to_ns", "selected" (the
 * blocks of the command's selection, else every block), "t": [times, ns:
 * every time any line has a point, at most HP_EVENTS_TL_MAX_BUCKETS + 2],
 * "total": {"max", "v"}, "by": {"type": {"lines": [{"key", "source",
 * "other" and "groups", "max", "v"}]}, "thread", "context", "stack":
 * {"lines": [{"stack": index in stacks, or "other"..., "max", "v"}]}}}:
 * the bytes in use of the log's blocks per bucket (events_timeline.h),
 * each line's value at each time. Returns 0 or -ENOMEM. */
static int write_events(FILE *f, const struct ev_page *e)
{
	size_t n = 0, nt = 0;
	uint64_t *t;

	if (!e->on) {
		fputs(",\"events\":null", f);
		return 0;
	}
	for (size_t d = 0; d < HP_HTML_EV_DIMS; d++)
		for (size_t i = 0; i < e->g[d].n; i++)
			n += e->g[d].groups[i].npoints;
	if (!(t = malloc((n + 1) * sizeof *t)))
		return -ENOMEM;
	for (size_t d = 0; d < HP_HTML_EV_DIMS; d++)
		for (size_t i = 0; i < e->g[d].n; i++)
			for (size_t k = 0; k < e->g[d].groups[i].npoints; k++)
				t[nt++] = e->g[d].groups[i].points[k].time_ns;
	hp_sort(t, nt, sizeof *t, by_u64);
	n = nt;
	nt = 0;
	for (size_t i = 0; i < n; i++)
		if (!nt || t[i] != t[nt - 1])
			t[nt++] = t[i];
	fprintf(f,
		",\"events\":{\"bucket_ns\":%" PRIu64 ",\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64
		",\"selected\":%s,\"t\":[",
		e->bucket_ns, e->from_ns, e->to_ns, e->selected ? "true" : "false");
	for (size_t i = 0; i < nt; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", t[i]);
	fputs("],\"total\":{", f);
	if (e->g[0].n) {
		fprintf(f, "\"max\":%.0f,", e->g[0].groups[0].max_bytes);
		ev_values(f, &e->g[0].groups[0], t, nt);
	} else {
		fputs("\"max\":0,\"v\":[]", f);
	}
	fputs("},\"by\":{", f);
	for (size_t d = 1; d < HP_HTML_EV_DIMS; d++) {
		const struct hp_tl_groups *g = &e->g[d];
		fprintf(f, "%s\"%s\":{\"lines\":[", d > 1 ? "," : "",
			hp_dim_name((enum hp_dim)ev_dims[d]));
		for (size_t i = 0; i < g->n; i++) {
			fputs(i ? ",{" : "{", f);
			if (ev_dims[d] == HP_BY_STACK && !g->groups[i].other)
				fprintf(f, "\"stack\":%" PRIu32 ",\"max\":%.0f,", e->stacks[i],
					g->groups[i].max_bytes);
			else
				group_head(f, i, g);
			ev_values(f, &g->groups[i], t, nt);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("}}", f);
	free(t);
	return 0;
}

/*
 * The snapshot's flame graph (write_flame): every stack merged into one
 * tree by function name along each path, outermost first, then cut by
 * node size. A node is kept when it holds at least HP_HTML_FLAME_MIN of
 * the root in one of rank_cols and its parent is kept; a child holds no
 * more than its parent, so nothing under a node cut is kept. The tree is
 * therefore walked from the root, not built whole (a node a distinct
 * path: deep stacks of distinct paths make millions): each kept node's
 * items (the stacks through it, by context the buckets; in id order) are
 * split by their next frame into its children, each child's figures
 * summed over its items in that order, as adding the stacks one by one
 * sums them, and only a kept child's items split further (two levels a
 * scan of the items: ftree_split). What is held:
 * an item (12 bytes) a stack, its copy and its group (16) while a node is
 * split, and the kept nodes (at a depth at most 1 / HP_HTML_FLAME_MIN for
 * each of rank_cols: the nodes of a depth hold disjoint items).
 */

/* A stack (by context a bucket) on its way down the tree: its next frame
 * outermost first, its stack's locations[i]'s symbolic frame FITEM_K (i
 * FITEM_END: none left); by context its contexts first, FITEM_CD of them
 * placed. 12 bytes: a million of them, and their copy while split. */
struct fitem {
	uint32_t id; /* the stack's id; by context the bucket's index */
	uint32_t i;
	uint32_t kcd; /* k in bits 0-23 (a location of the model has at most
			 MAX_SYMS, 64, model.c), the contexts placed in 24-31
			 (at most HP_GROUP_MAX_CONTEXT_DEPTH, 64) */
};
#define FITEM_END UINT32_MAX
#define FITEM_K(it) ((it)->kcd & 0xffffffu)
#define FITEM_CD(it) ((it)->kcd >> 24)

/* A kept node. Written in the order in which adding the items one by one
 * makes the nodes: by the first item through it (first), then by depth. */
struct fkept {
	uint32_t first, depth, self; /* self: its index as kept, before the sort */
	uint32_t parent;   /* its index in ftree.kept (0: the root; the root's UINT32_MAX) */
	uint32_t loc, sym; /* the first item's symbolic frame there, for its frame;
			      loc UINT32_MAX: a context's frame, sym its tag */
	double v[NCOLS];
};

/* A child or grandchild while a node's items are split: its key (its
 * name's page string, bit 63 set for a context's; a grandchild's with its
 * parent's index above bit 32), its first item's frame there and id, its
 * parent (a grandchild's: its child's index), its figures, its node as
 * kept (UINT32_MAX: cut), and its items' span. */
struct fgroup {
	uint64_t key;
	uint32_t loc, sym, first, parent, kept;
	size_t lo, n;
	double v[NCOLS];
};

/* The children (or grandchildren) of a split, found by key: a look at
 * the last one found, then at each (up to FGROUP_SCAN), then in index
 * (filled from FGROUP_SCAN on). */
struct fgroups {
	struct fgroup *g;
	size_t n, cap;
	struct hp_u64map index;
	uint32_t last;
};

/* A kept node whose items are to be split: its items items[lo, hi). */
struct fwork {
	uint32_t node;
	size_t lo, hi;
};

/* The tables by function, file:line and module (write_tables_by), fed
 * their first pass by the stack tree's walk over the stacks
 * (tables_add): each stack's shown frames are found once for both. */
struct tables;
static int tables_add(struct tables *ts, struct page *p, const struct hp_model *m, size_t id,
		      long nf, const double v[NCOLS]);

struct ftree {
	struct page *p;
	const struct hp_model *m;
	int by_context;
	size_t *sym_base;      /* names[sym_base[loc] + sym]: each symbolic frame's */
	uint32_t *names;       /* page string, UINT32_MAX until needed */
	struct fitem *items;   /* in id order, each node's a span, split in place */
	struct fitem *split;   /* a node's items while split */
	uint32_t *group;       /* each item's grandchild while its node is split */
	size_t nitems;
	struct fkept *kept;
	size_t nkept, kept_cap;
	struct fwork *work;
	size_t nwork, work_cap;
	struct fgroups child, grand; /* a split's, kept for the next */
	double root[NCOLS];
	struct tables *tabs; /* the stack tree's: the tables' first pass, fed */
};

/* Whether symbolic frame k of location l is one hp_frames_shown shows
 * when it falls above its cut: every frame with all frames, else all but
 * the runtime's entry frames. */
static int fshown(const struct ftree *t, const struct hp_location *l, uint32_t k)
{
	if (t->p->all_frames)
		return 1;
	if (l->classes) /* hp_model_frame_class's, without the call */
		return (l->classes[k] & HP_SYM_CLASS) != HP_FRAME_ENTRY;
	return hp_model_frame_class(t->m, l, &l->syms[k]) != HP_FRAME_ENTRY;
}

/* Moves it to the frame hp_frames_shown shows next inward of its current
 * one, FITEM_END past the innermost: those shown are every frame fshown
 * says from the stack's first (innermost) to its outermost shown. */
static void fitem_step(const struct ftree *t, const struct hp_mstack *st, struct fitem *it)
{
	const struct hp_model *m = t->m;
	uint32_t i = it->i, k = FITEM_K(it);

	for (;;) {
		if (k) {
			k--;
		} else {
			do {
				if (!i) {
					it->i = FITEM_END;
					return;
				}
				i--;
			} while (!m->locations[hp_mstack_location(st, i)].nsyms);
			k = m->locations[hp_mstack_location(st, i)].nsyms - 1;
		}
		if (fshown(t, &m->locations[hp_mstack_location(st, i)], k)) {
			it->i = i;
			it->kcd = (it->kcd & ~0xffffffu) | k;
			return;
		}
	}
}

/* The page string of location loc's symbolic frame sym, interned on first
 * sight. 0 or -ENOMEM. */
static int fname(struct ftree *t, uint32_t loc, uint32_t sym, uint32_t *out)
{
	uint32_t *nm = &t->names[t->sym_base[loc] + sym];

	if (*nm == UINT32_MAX) {
		const struct hp_location *l = &t->m->locations[loc];
		if (intern(t->p, frame_name(t->p, t->m, l, &l->syms[sym]), nm))
			return -ENOMEM;
	}
	*out = *nm;
	return 0;
}

/* Item id's start: its frames' names interned outermost first, as the
 * tree built stack by stack interns them (the page's strings keep that
 * order), and its outermost frame shown: of the frames hp_frames_shown
 * shows (nf of them, outermost last), which are every frame fshown says
 * below its cut, the nf-th in the stack's order. Returns nf, its frames
 * left in p->fbuf, or -ENOMEM. */
static long fitem_start(struct ftree *t, uint32_t stack, struct fitem *it)
{
	const struct hp_mstack *st = &t->m->stacks[stack];
	long nf = stack_frames(t->p, t->m, stack);
	uint32_t nm;

	if (nf < 0)
		return -ENOMEM;
	for (long i = nf; i-- > 0;)
		if (fname(t, t->p->fbuf[i].loc, t->p->fbuf[i].sym, &nm))
			return -ENOMEM;
	it->i = FITEM_END;
	for (uint32_t i = 0, seen = 0; seen < (uint32_t)nf && i < st->depth; i++) {
		const struct hp_location *l = &t->m->locations[hp_mstack_location(st, i)];
		for (uint32_t k = 0; k < l->nsyms; k++)
			if (fshown(t, l, k) && ++seen == (uint32_t)nf) {
				it->i = i;
				it->kcd = (it->kcd & ~0xffffffu) | k;
				break;
			}
	}
	return nf;
}

/* Item it's figures as the tree adds them: its stack's (inuse_cols_of),
 * by context its bucket's, a suppressed stack's with nothing in use. */
static void fitem_cols(const struct ftree *t, const struct fitem *it, double v[NCOLS])
{
	const struct hp_model *m = t->m;
	const struct hp_mbucket *b;
	struct hp_values bv;

	if (!t->by_context) {
		inuse_cols_of(m, it->id, v);
		return;
	}
	b = &m->buckets[it->id];
	hp_mbucket_values(m, b, &bv);
	cols_of(&bv, v);
	if (m->stacks[b->stack].suppressed)
		v[COL_INUSE_B] = v[COL_INUSE_O] = 0;
}

/* Item it's next frame: its key among a node's children (its name's page
 * string, bit 63 set for a context's), its frame (loc, sym; loc
 * UINT32_MAX for a context, sym its tag), it moved past it. 1 when it had
 * one, 0 when its path ends, or -ENOMEM. */
static int fitem_next(struct ftree *t, struct fitem *it, uint64_t *key, uint32_t *loc,
		      uint32_t *sym)
{
	const struct hp_mstack *st;
	uint32_t nm;

	if (t->by_context) {
		const struct hp_mbucket *b = &t->m->buckets[it->id];
		uint64_t chain[HP_GROUP_MAX_CONTEXT_DEPTH];
		char path[1024];
		uint32_t cd = FITEM_CD(it);
		int k = hp_group_context_chain(t->m, b->context, chain, HP_GROUP_MAX_CONTEXT_DEPTH);
		if (!k)
			chain[k++] = 0;
		if (cd < (uint32_t)k) {
			if (intern(t->p, hp_model_context_path(t->m, chain[cd], path, sizeof path),
				   &nm))
				return -ENOMEM;
			*key = (uint64_t)1 << 63 | nm;
			*loc = UINT32_MAX;
			*sym = (uint32_t)chain[cd];
			it->kcd += 1u << 24;
			return 1;
		}
	}
	if (it->i == FITEM_END)
		return 0;
	st = &t->m->stacks[t->by_context ? t->m->buckets[it->id].stack : it->id];
	*loc = hp_mstack_location(st, it->i);
	*sym = FITEM_K(it);
	if (fname(t, *loc, *sym, &nm))
		return -ENOMEM;
	*key = nm;
	fitem_step(t, st, it);
	return 1;
}

/* The items, in id order, with the root's figures summed over them, and
 * every name the tree shows interned in the order the tree built stack by
 * stack interns them: by context each bucket's contexts, then its stack's
 * frames; each stack, with its shown frames, into t->tabs when it has
 * them. 0 or -ENOMEM. */
static int ftree_items(struct ftree *t)
{
	const struct hp_model *m = t->m;
	size_t cap = t->by_context ? m->nbuckets : m->nstacks;
	double v[NCOLS];
	long nf;

	if (!(t->items = malloc((cap ? cap : 1) * sizeof *t->items)))
		return -ENOMEM;
	for (size_t id = t->by_context ? 0 : 1; id < cap; id++) {
		struct fitem *it = &t->items[t->nitems];
		uint32_t stack = (uint32_t)id;
		*it = (struct fitem){.id = (uint32_t)id};
		if (t->by_context) {
			const struct hp_mbucket *b = &m->buckets[id];
			uint64_t chain[HP_GROUP_MAX_CONTEXT_DEPTH];
			int k;
			if (b->heap) /* malloc's, as the stacks' figures */
				continue;
			k = hp_group_context_chain(m, b->context, chain, HP_GROUP_MAX_CONTEXT_DEPTH);
			if (!k)
				chain[k++] = 0;
			for (int i = 0; i < k; i++) {
				char path[1024];
				uint32_t nm;
				if (intern(t->p, hp_model_context_path(m, chain[i], path, sizeof path),
					   &nm))
					return -ENOMEM;
			}
			stack = b->stack;
		} else if (!m->stacks[id].nbuckets) {
			continue;
		}
		fitem_cols(t, it, v);
		for (int c = 0; c < NCOLS; c++)
			t->root[c] += v[c];
		if ((nf = fitem_start(t, stack, it)) < 0 ||
		    (t->tabs && tables_add(t->tabs, t->p, m, id, nf, v)))
			return -ENOMEM;
		t->nitems++;
	}
	return 0;
}

/* Whether a node of figures v is kept: at least HP_HTML_FLAME_MIN of the
 * root in one of rank_cols. */
static int fkeep(const struct ftree *t, const double v[NCOLS])
{
	for (size_t k = 0; k < sizeof rank_cols / sizeof *rank_cols; k++) {
		int c = rank_cols[k];
		if (t->root[c] > 0 && v[c] >= HP_HTML_FLAME_MIN * t->root[c])
			return 1;
	}
	return 0;
}

/* The prefetch distances of a split's scan, in items: a stack's struct
 * (FPREFETCH_STACK ahead), then the frame its location list holds next
 * (FPREFETCH_FRAME ahead, its pointer read from the struct fetched). */
#define FPREFETCH_STACK 32
#define FPREFETCH_FRAME 16

/* Asks for p's cache line, to be read soon. On x86-64 an instruction of
 * its own: GCC 12 drops or hoists __builtin_prefetch out of the scan
 * below (two of them on one struct: none emitted at -O2). */
static inline void fetch(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
#endif
}

/* Asks the memory for what the scan of items[j, hi) reads ahead of j:
 * each item's stack and next frame are a cache miss each (deep stacks'
 * lists and structs are hundreds of MB, met in id order but strided,
 * one a stack), which the scan otherwise waits for in turn. By context
 * the bucket's record only. Allocates nothing. */
static inline void fprefetch(const struct ftree *t, size_t j, size_t hi)
{
	const struct hp_model *m = t->m;

	if (t->by_context) {
		if (j + FPREFETCH_FRAME < hi)
			fetch(&m->buckets[t->items[j + FPREFETCH_FRAME].id]);
		return;
	}
	if (j + FPREFETCH_STACK < hi) {
		const struct hp_mstack *s = &m->stacks[t->items[j + FPREFETCH_STACK].id];
		fetch(s);
		fetch((const char *)s + sizeof *s - 1);
	}
	if (j + FPREFETCH_FRAME < hi) {
		const struct fitem *it = &t->items[j + FPREFETCH_FRAME];
		if (it->i != FITEM_END) {
			const struct hp_mstack *s = &m->stacks[it->id];
			fetch(!s->wide_locations    ? (const void *)&s->locations.narrow[it->i]
			      : s->packed_locations ? (const void *)&s->locations.packed[3 * it->i]
						    : (const void *)&s->locations.wide[it->i]);
		}
	}
}

#define FGROUP_SCAN 8

/* The group of gs keyed key, made (from the frame loc, sym of item id,
 * under parent) when new. Its index, or -ENOMEM. */
static long fgroups_get(struct fgroups *gs, uint64_t key, uint32_t loc, uint32_t sym,
			uint32_t id, uint32_t parent)
{
	uint32_t g;

	if (gs->last < gs->n && gs->g[gs->last].key == key)
		return gs->last;
	if (gs->n <= FGROUP_SCAN) {
		for (size_t i = 0; i < gs->n; i++)
			if (gs->g[i].key == key)
				return gs->last = (uint32_t)i;
		if (gs->n == FGROUP_SCAN) /* index them from here on */
			for (size_t i = 0; i < gs->n; i++)
				if (hp_u64map_put(&gs->index, gs->g[i].key, (uint32_t)i))
					return -ENOMEM;
	} else if (hp_u64map_get(&gs->index, key, &g)) {
		return gs->last = g;
	}
	if (gs->n >= UINT32_MAX / 2 || hp_vec_grow(&gs->g, &gs->cap, gs->n + 1) ||
	    (gs->n >= FGROUP_SCAN && hp_u64map_put(&gs->index, key, (uint32_t)gs->n)))
		return -ENOMEM;
	gs->g[gs->n] = (struct fgroup){
		.key = key, .loc = loc, .sym = sym, .first = id, .parent = parent};
	return gs->last = (uint32_t)gs->n++;
}

static void fgroups_clear(struct fgroups *gs)
{
	hp_u64map_free(&gs->index);
	gs->n = 0;
	gs->last = UINT32_MAX;
}

/* A kept node made of group gr, under kept node parent, at depth. Its
 * index, or UINT32_MAX for no memory. */
static uint32_t fkept_add(struct ftree *t, const struct fgroup *gr, uint32_t parent,
			  uint32_t depth)
{
	if (t->nkept >= UINT32_MAX - 1 || hp_vec_grow(&t->kept, &t->kept_cap, t->nkept + 1))
		return UINT32_MAX;
	t->kept[t->nkept] = (struct fkept){
		.first = gr->first, .depth = depth, .parent = parent, .loc = gr->loc, .sym = gr->sym};
	memcpy(t->kept[t->nkept].v, gr->v, sizeof gr->v);
	return (uint32_t)t->nkept++;
}

/* Splits node w's items by their next two frames into its children and
 * their children, in one scan (each item's stack and frames are a cache
 * miss or two a scan: two levels a scan halve them), each group's
 * figures summed over its items in id order as they are met; keeps the
 * children fkeep keeps, and their children fkeep keeps, each of these
 * with its items (in id order) a span to be split in turn (t->work).
 * 0 or -ENOMEM. */
static int ftree_split(struct ftree *t, struct fwork w)
{
	struct fgroups *cs = &t->child, *gs = &t->grand;
	uint32_t depth = t->kept[w.node].depth;
	size_t at = w.lo, n;
	double v[NCOLS];
	int ret = -ENOMEM;

	fgroups_clear(cs);
	fgroups_clear(gs);
	for (size_t j = w.lo; j < w.hi; j++) {
		struct fitem *it = &t->items[j];
		uint64_t key;
		uint32_t loc, sym;
		long c, g;
		int more;
		fprefetch(t, j, w.hi);
		t->group[j] = UINT32_MAX;
		if ((more = fitem_next(t, it, &key, &loc, &sym)) <= 0) {
			if (more < 0)
				goto out;
			continue;
		}
		if ((c = fgroups_get(cs, key, loc, sym, it->id, 0)) < 0)
			goto out;
		fitem_cols(t, it, v);
		for (int k = 0; k < NCOLS; k++)
			cs->g[c].v[k] += v[k];
		if ((more = fitem_next(t, it, &key, &loc, &sym)) <= 0) {
			if (more < 0)
				goto out;
			continue;
		}
		key = (uint64_t)c << 33 | (key >> 63) << 32 | (uint32_t)key;
		if ((g = fgroups_get(gs, key, loc, sym, it->id, (uint32_t)c)) < 0)
			goto out;
		for (int k = 0; k < NCOLS; k++)
			gs->g[g].v[k] += v[k];
		gs->g[g].n++;
		t->group[j] = (uint32_t)g;
	}
	/* The children kept, then theirs, each with its span (in the order
	 * they were first met); a group cut takes none: nothing under it is
	 * kept, its items go. */
	for (size_t c = 0; c < cs->n; c++) {
		struct fgroup *gr = &cs->g[c];
		gr->kept = UINT32_MAX;
		if (fkeep(t, gr->v) && (gr->kept = fkept_add(t, gr, w.node, depth + 1)) == UINT32_MAX)
			goto out;
	}
	for (size_t g = 0; g < gs->n; g++) {
		struct fgroup *gr = &gs->g[g];
		uint32_t parent = cs->g[gr->parent].kept;
		size_t items = gr->n;
		gr->kept = UINT32_MAX;
		gr->lo = at;
		gr->n = 0;
		if (parent == UINT32_MAX || !fkeep(t, gr->v))
			continue;
		if ((gr->kept = fkept_add(t, gr, parent, depth + 2)) == UINT32_MAX)
			goto out;
		at += items;
	}
	n = at - w.lo;
	for (size_t j = w.lo; j < w.hi; j++) {
		struct fgroup *gr;
		if (t->group[j] == UINT32_MAX || (gr = &gs->g[t->group[j]])->kept == UINT32_MAX)
			continue;
		t->split[gr->lo + gr->n++] = t->items[j];
	}
	memcpy(&t->items[w.lo], &t->split[w.lo], n * sizeof *t->items);
	for (size_t g = 0; g < gs->n; g++) {
		const struct fgroup *gr = &gs->g[g];
		if (gr->kept == UINT32_MAX || !gr->n)
			continue;
		if (hp_vec_grow(&t->work, &t->work_cap, t->nwork + 1))
			goto out;
		t->work[t->nwork++] = (struct fwork){gr->kept, gr->lo, gr->lo + gr->n};
	}
	ret = 0;
out:
	return ret;
}

/* The kept nodes in the order adding the items one by one makes them. */
static int by_made(const void *a, const void *b)
{
	const struct fkept *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static void ftree_free(struct ftree *t)
{
	free(t->sym_base);
	free(t->names);
	free(t->items);
	free(t->split);
	free(t->group);
	free(t->kept);
	free(t->work);
	free(t->child.g);
	free(t->grand.g);
	hp_u64map_free(&t->child.index);
	hp_u64map_free(&t->grand.index);
}

/* The page frame of a context's node: its path as the function, in no
 * file, "(context)" as its module, so that no function frame shares it. */
static int context_frame(struct page *p, const struct hp_model *m, uint32_t context, uint32_t *out)
{
	struct hp_location l = {.module = -1, .nsyms = 1};
	char path[1024];
	struct hp_sym sym = {hp_model_context_path(m, context, path, sizeof path), "(context)", 0, 0};

	l.syms = &sym;
	return frame_of(p, m, &l, &sym, out);
}

/* The snapshot's flame graph: every stack with figures (not only the
 * top_stacks kept as rows) merged into one tree by function name along
 * each path, outermost first, then cut by node size (above ftree's): a
 * node cut leaves its figures in its ancestors, so no byte is lost: the
 * root holds every stack. "flame": {"v": [0, the root's figures...],
 * "n": [[parent (-1: the root), frame, figures...]...]}, a node after
 * its parent. With contexts (by_context): malloc's buckets under their
 * contexts' frames, as "flame_context". The stack tree (tabs non-NULL)
 * feeds tabs its stacks as it walks them (tables_add). Returns 0 or
 * -ENOMEM. */
static int write_flame(FILE *f, struct page *p, const struct hp_model *m, int by_context,
		       struct tables *tabs)
{
	struct ftree t = {.p = p, .m = m, .by_context = by_context, .tabs = tabs};
	size_t nsyms = 0;
	uint32_t *out = NULL;
	int ret = -ENOMEM;

	if (!(t.sym_base = calloc(m->nlocations + 1, sizeof *t.sym_base)))
		goto out;
	for (size_t l = 0; l < m->nlocations; l++) {
		t.sym_base[l] = nsyms;
		nsyms += m->locations[l].nsyms;
	}
	if (!(t.names = malloc((nsyms ? nsyms : 1) * sizeof *t.names)))
		goto out;
	memset(t.names, 0xff, (nsyms ? nsyms : 1) * sizeof *t.names);
	if ((ret = ftree_items(&t)))
		goto out;
	ret = -ENOMEM;
	if (!(t.split = malloc((t.nitems ? t.nitems : 1) * sizeof *t.split)) ||
	    !(t.group = malloc((t.nitems ? t.nitems : 1) * sizeof *t.group)))
		goto out;
	/* The root: node 0 while split, not written as a node. */
	if (hp_vec_grow(&t.kept, &t.kept_cap, 1) || hp_vec_grow(&t.work, &t.work_cap, 1))
		goto out;
	t.kept[0] = (struct fkept){.parent = UINT32_MAX};
	t.nkept = 1;
	t.work[t.nwork++] = (struct fwork){0, 0, t.nitems};
	while (t.nwork)
		if ((ret = ftree_split(&t, t.work[--t.nwork])))
			goto out;
	ret = -ENOMEM;
	free(t.split);
	free(t.group);
	free(t.items);
	t.split = t.items = NULL;
	t.group = NULL;
	/* Written in the order made, each node's parent before it; out: each
	 * kept node's index in the data, by its index as kept (self). */
	if (!(out = malloc(t.nkept * sizeof *out)))
		goto out;
	for (size_t i = 0; i < t.nkept; i++)
		t.kept[i].self = (uint32_t)i;
	hp_sort(t.kept + 1, t.nkept - 1, sizeof *t.kept, by_made);
	fprintf(f, ",\"%s\":{\"v\":[0", by_context ? "flame_context" : "flame");
	json_cols(f, t.root);
	fputs("],\"n\":[", f);
	for (size_t i = 1; i < t.nkept; i++) {
		const struct fkept *x = &t.kept[i];
		uint32_t frame;
		if ((ret = x->loc == UINT32_MAX
				   ? context_frame(p, m, x->sym, &frame)
				   : frame_of(p, m, &m->locations[x->loc],
					      &m->locations[x->loc].syms[x->sym], &frame)))
			goto out;
		ret = -ENOMEM;
		fprintf(f, "%s%" PRId64 ",%" PRIu32, i > 1 ? ",[" : "[",
			x->parent ? (int64_t)out[x->parent] : (int64_t)-1, frame);
		json_cols(f, x->v);
		fputc(']', f);
		out[x->self] = (uint32_t)(i - 1);
	}
	fputs("]}", f);
	ret = 0;
out:
	free(out);
	ftree_free(&t);
	return ret;
}

/* The tables by function, file:line and module (write_tables_by). */
enum { TAB_FUNCTION, TAB_LINE, TAB_MODULE, NTABS };
static const char *const tab_names[NTABS] = {"function", "line", "module"};

/* One key of such a table: a frame it was first seen in, its figures. */
struct tkey {
	uint32_t loc, sym;  /* the first symbolic frame with this key */
	int empty;          /* the key of the stacks without frames */
	uint32_t seen;      /* the last stack counted in cum, + 1 */
	int other;          /* ranked past top */
	double flat[NCOLS]; /* the stacks whose innermost frame has it */
	double cum[NCOLS];  /* the stacks with a frame of it, once each */
	double score;
};

/* The key of frame fr in table t, into buf, as the page's keyOf names it
 * (tables.js): the function's shown name; "file:line" (or "module name"
 * without a file); the module's file name. */
static const char *tab_key(struct page *p, const struct hp_model *m, int t,
			   const struct hp_shown_frame *fr, char *buf, size_t cap)
{
	const struct hp_location *l = &m->locations[fr->loc];
	const struct hp_sym *sym = &l->syms[fr->sym];
	const char *mod = l->module >= 0 ? m->modules[l->module].name : "";

	if (t == TAB_FUNCTION)
		return frame_name(p, m, l, sym);
	if (t == TAB_LINE && sym->file[0])
		snprintf(buf, cap, "%s:%u", sym->file, sym->line);
	else if (t == TAB_LINE)
		snprintf(buf, cap, "%s %s", mod[0] ? mod : "??", frame_name(p, m, l, sym));
	else
		snprintf(buf, cap, "%s", mod[0] ? mod : "(unknown module)");
	return buf;
}

static int by_tkey_score(const void *a, const void *b)
{
	const struct tkey *x = *(const struct tkey *const *)a, *y = *(const struct tkey *const *)b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* One table of write_tables_by while it is made. */
struct table {
	struct hp_strtab keys;
	struct tkey *k, **order;
	size_t cap, kept;
	uint32_t *key_of; /* per symbolic frame: its key's index, UINT32_MAX until seen */
	int pass2;        /* keys past top: "other" needs a second pass */
	double other_flat[NCOLS], other_cum[NCOLS];
};

/* The key in table t of frame fr (NULL: the stacks without frames) into
 * *out, made on first sight; *cached (the frame's key_of, NULL for none)
 * set to it. Returns 0 or -ENOMEM. */
static int table_key(struct table *tb, int t, struct page *p, const struct hp_model *m,
		     const struct hp_shown_frame *fr, uint32_t *cached, uint32_t *out)
{
	char buf[8192];
	size_t before = tb->keys.count;
	const char *key = fr ? tab_key(p, m, t, fr, buf, sizeof buf) : "\x1f(no stack)";

	if (hp_strtab_intern(&tb->keys, key, out))
		return -ENOMEM;
	if (cached)
		*cached = *out;
	if (*out >= before) {
		if (hp_vec_grow(&tb->k, &tb->cap, (size_t)*out + 1))
			return -ENOMEM;
		memset(&tb->k[*out], 0, sizeof tb->k[*out]);
		if (fr) {
			tb->k[*out].loc = fr->loc;
			tb->k[*out].sym = fr->sym;
		} else {
			tb->k[*out].empty = 1;
		}
	}
	return 0;
}

/* Stack id (its frames in p->fbuf[0..nf), its figures v) into table t,
 * pass 0 (flat and cumulative figures; tables_add's, three tables at
 * once) or 1 (the "other" keys' stacks). Returns 0 or -ENOMEM. */
static int table_add(struct table *tb, int t, struct page *p, const struct hp_model *m,
		     const size_t *sym_base, size_t id, long nf, const double v[NCOLS], int pass)
{
	int in_other = 0;

	for (long i = 0; i < (nf ? nf : 1); i++) {
		uint32_t ki, *cached = nf ? &tb->key_of[sym_base[p->fbuf[i].loc] + p->fbuf[i].sym]
					  : NULL;
		if (cached && *cached != UINT32_MAX)
			ki = *cached; /* the frame's key, found before */
		else if (table_key(tb, t, p, m, nf ? &p->fbuf[i] : NULL, cached, &ki))
			return -ENOMEM;
		if (pass == 1) {
			in_other |= tb->k[ki].other;
			continue;
		}
		if (i == 0)
			for (int c = 0; c < NCOLS; c++)
				tb->k[ki].flat[c] += v[c];
		if (tb->k[ki].seen == id + 1)
			continue;
		tb->k[ki].seen = (uint32_t)id + 1;
		for (int c = 0; c < NCOLS; c++)
			tb->k[ki].cum[c] += v[c];
	}
	if (in_other)
		for (int c = 0; c < NCOLS; c++)
			tb->other_cum[c] += v[c];
	return 0;
}

/* The three tables while they are made: their first pass (flat and
 * cumulative figures) rides on the stack flame graph's walk over the
 * stacks (tables_add from ftree_items: each stack's shown frames found
 * once for both), a second walk for the stacks of "other" keys
 * (write_tables_by). */
struct tables {
	struct table tab[NTABS];
	size_t *sym_base; /* key_of[sym_base[loc] + sym]: each symbolic frame's */
};

static void tables_free(struct tables *ts)
{
	for (int t = 0; t < NTABS; t++) {
		free(ts->tab[t].k);
		free(ts->tab[t].order);
		free(ts->tab[t].key_of);
		hp_strtab_free(&ts->tab[t].keys);
	}
	free(ts->sym_base);
	memset(ts, 0, sizeof *ts);
}

/* The tables of m, empty. 0 or -ENOMEM; free with tables_free even on
 * failure. */
static int tables_init(struct tables *ts, const struct hp_model *m)
{
	size_t nsyms = 0;

	memset(ts, 0, sizeof *ts);
	if (!(ts->sym_base = calloc(m->nlocations + 1, sizeof *ts->sym_base)))
		return -ENOMEM;
	for (size_t l = 0; l < m->nlocations; l++) {
		ts->sym_base[l] = nsyms;
		nsyms += m->locations[l].nsyms;
	}
	for (int t = 0; t < NTABS; t++) {
		if (!(ts->tab[t].key_of = malloc((nsyms ? nsyms : 1) * sizeof *ts->tab[t].key_of)))
			return -ENOMEM;
		memset(ts->tab[t].key_of, 0xff, (nsyms ? nsyms : 1) * sizeof *ts->tab[t].key_of);
	}
	return 0;
}

/* The first pass of stack id (a stack with figures v, its nf shown frames
 * in p->fbuf), into every table; the stacks come in id order. 0 or
 * -ENOMEM. */
static int tables_add(struct tables *ts, struct page *p, const struct hp_model *m, size_t id,
		      long nf, const double v[NCOLS])
{
	if (!nf) { /* the stacks without frames: a key of their own */
		for (int t = 0; t < NTABS; t++)
			if (table_add(&ts->tab[t], t, p, m, ts->sym_base, id, nf, v, 0))
				return -ENOMEM;
		return 0;
	}
	/* table_add's first pass, the three tables frame by frame: a
	 * frame's place in key_of found once for the three. Each table
	 * meets the frames and adds the figures in table_add's order. */
	for (long i = 0; i < nf; i++) {
		size_t at = ts->sym_base[p->fbuf[i].loc] + p->fbuf[i].sym;
		for (int t = 0; t < NTABS; t++) {
			struct table *tb = &ts->tab[t];
			uint32_t ki = tb->key_of[at];
			struct tkey *k;
			if (ki == UINT32_MAX) { /* the frame first seen */
				if (table_key(tb, t, p, m, &p->fbuf[i], &tb->key_of[at], &ki))
					return -ENOMEM;
			}
			k = &tb->k[ki];
			if (i == 0)
				for (int c = 0; c < NCOLS; c++)
					k->flat[c] += v[c];
			if (k->seen == id + 1)
				continue;
			k->seen = (uint32_t)id + 1;
			for (int c = 0; c < NCOLS; c++)
				k->cum[c] += v[c];
		}
	}
	return 0;
}

/* "tables": the snapshot's figures by function, file:line and module over
 * every stack with figures, not only the rows kept: each {"rows": [[frame
 * (-1: the stacks without frames), flat figures..., cumulative
 * figures...]...], "other": [keys left out, their flat figures summed,
 * the figures of the stacks through any of them (each once)...]}, at most
 * top rows, ranked as the stacks are (their largest share of any
 * metric, cumulative). A stack is counted flat in the key of its
 * innermost frame and cumulatively once in each key it passes through, so
 * the flat figures of a table, "other" included, add up to the total.
 * ts holds the first pass (tables_add); a second walk over the stacks
 * sums those through "other" keys. Returns 0 or -ENOMEM. */
static int write_tables_by(FILE *f, struct page *p, const struct hp_model *m, size_t top,
			   const double total[NCOLS], struct tables *ts)
{
	struct table *tabs = ts->tab;
	const size_t *sym_base = ts->sym_base;
	double v[NCOLS];
	int ret = -ENOMEM, pass2 = 0;

	/* The first pass is the flame graph's walk (tables_add). */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t id = 1; pass == 1 && id < m->nstacks; id++) {
			long nf;
			if (!m->stacks[id].nbuckets)
				continue;
			inuse_cols_of(m, (uint32_t)id, v);
			if ((nf = stack_frames(p, m, (uint32_t)id)) < 0)
				goto err;
			for (int t = 0; t < NTABS; t++)
				if (tabs[t].pass2 &&
				    table_add(&tabs[t], t, p, m, sym_base, id, nf, v, pass))
					goto err;
		}
		if (pass == 1)
			break;
		/* Rank each table's keys; those past top are "other". */
		for (int t = 0; t < NTABS; t++) {
			struct table *tb = &tabs[t];
			size_t n = tb->keys.count;
			if (!(tb->order = malloc((n ? n : 1) * sizeof *tb->order)))
				goto err;
			for (size_t i = 0; i < n; i++) {
				tb->k[i].score = 0;
				for (size_t r = 0; r < sizeof rank_cols / sizeof *rank_cols; r++) {
					int c = rank_cols[r];
					double share = total[c] > 0 ? tb->k[i].cum[c] / total[c] : 0;
					if (total[c] > 0 && share > tb->k[i].score)
						tb->k[i].score = share;
				}
				tb->order[i] = &tb->k[i];
			}
			hp_sort(tb->order, n, sizeof *tb->order, by_tkey_score);
			tb->kept = n < top ? n : top;
			for (size_t i = tb->kept; i < n; i++) {
				tb->order[i]->other = 1;
				for (int c = 0; c < NCOLS; c++)
					tb->other_flat[c] += tb->order[i]->flat[c];
			}
			tb->pass2 = tb->kept < n;
			pass2 |= tb->pass2;
		}
		if (!pass2)
			break; /* no other: no second pass */
	}
	fputs(",\"tables\":{", f);
	for (int t = 0; t < NTABS; t++) {
		const struct table *tb = &tabs[t];
		fprintf(f, "%s\"%s\":{\"rows\":[", t ? "," : "", tab_names[t]);
		for (size_t i = 0; i < tb->kept; i++) {
			const struct tkey *x = tb->order[i];
			uint32_t frame;
			if (x->empty) {
				fputs(i ? ",[-1" : "[-1", f);
			} else {
				const struct hp_location *l = &m->locations[x->loc];
				if ((ret = frame_of(p, m, l, &l->syms[x->sym], &frame)))
					goto err;
				ret = -ENOMEM;
				fprintf(f, "%s%" PRIu32, i ? ",[" : "[", frame);
			}
			json_cols(f, x->flat);
			json_cols(f, x->cum);
			fputc(']', f);
		}
		fprintf(f, "],\"other\":[%zu", tb->keys.count - tb->kept);
		json_cols(f, tb->other_flat);
		json_cols(f, tb->other_cum);
		fputs("]}", f);
	}
	fputc('}', f);
	ret = 0;
err:
	return ret;
}

/* The snapshot's rows, ranked, and its flame graphs. The stacks' rank
 * (16 bytes a stack) is made here and freed before the flame graphs,
 * which hold their items (28 bytes a stack while split, ftree). */
static int write_snapshot(FILE *f, struct page *p, const struct hp_model *m, size_t top)
{
	const struct hp_cap_snapshot *s = m->snap;
	double total[NCOLS], v[NCOLS], other[NCOLS] = {0};
	size_t n = 0, kept;
	uint64_t lost = 0;
	uint64_t peak_ns = s->peak_time_ns;
	struct ranked *rank = malloc((m->nstacks ? m->nstacks : 1) * sizeof *rank);
	struct tables tabs;
	int ret;

	if (!rank)
		return -ENOMEM;
	hp_heapview_peak_time(m, &peak_ns); /* --heap: the heap's own peak */
	cols_of(&m->total, total);
	for (size_t id = 1; id < m->nstacks; id++) {
		double score = 0;
		if (!m->stacks[id].nbuckets)
			continue;
		cols_of(&m->stacks[id].v, v);
		for (size_t k = 0; k < sizeof rank_cols / sizeof *rank_cols; k++) {
			int c = rank_cols[k];
			if (total[c] > 0 && v[c] / total[c] > score)
				score = v[c] / total[c];
		}
		rank[n++] = (struct ranked){(uint32_t)id, score};
	}
	hp_sort(rank, n, sizeof *rank, by_score);
	kept = n < top ? n : top;
	for (int r = 0; r < HP_LOST_KINDS; r++)
		lost += s->lost_count[r];

	fprintf(f, "{\"seq\":%" PRIu64 ",\"time_ns\":%" PRIu64 ",\"reason\":", s->seq, s->time_ns);
	json_str(f, hp_capture_reason_name(s->reason));
	fprintf(f,
		",\"alloc_count\":%" PRIu64 ",\"alloc_bytes\":%" PRIu64 ",\"free_count\":%" PRIu64
		",\"free_bytes\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"peak_count\":%" PRIu64
		",\"peak_time_ns\":%" PRIu64 ",\"lost_count\":%" PRIu64 ",\"nstacks\":%zu",
		s->alloc_count, s->alloc_bytes, (uint64_t)hp_estimate_i64(m->total.free_objects),
		(uint64_t)hp_estimate_i64(m->total.free_bytes),
		(uint64_t)hp_estimate_i64(m->total.peak_bytes),
		(uint64_t)hp_estimate_i64(m->total.peak_objects), peak_ns, lost, n);
	/* In use as report says it: the suppressed stacks' blocks left out
	 * (of the total, their rows and "other"), as report's summary and its
	 * leaked section leave them out (hp_model_suppress). */
	total[COL_INUSE_B] -= m->suppressed.inuse_bytes;
	total[COL_INUSE_O] -= m->suppressed.inuse_objects;
	fputs(",\"total\":[0", f);
	json_cols(f, total);
	cols_of(&m->suppressed, v);
	fputs("],\"suppressed\":[0", f);
	json_cols(f, v);
	/* Stacks deeper than max-depth (model.h): count, then their figures */
	fprintf(f, "],\"cut\":[%zu", m->cut_stacks);
	cols_of(&m->cut, v);
	json_cols(f, v);
	fputs("],\"rows\":[", f);
	for (size_t i = 0; i < kept; i++) {
		uint32_t idx;
		if ((ret = stack_of(p, m, rank[i].stack, &idx))) {
			free(rank);
			return ret;
		}
		inuse_cols_of(m, rank[i].stack, v);
		fprintf(f, "%s[%" PRIu32, i ? "," : "", idx);
		json_cols(f, v);
		fputc(']', f);
	}
	for (size_t i = kept; i < n; i++) {
		inuse_cols_of(m, rank[i].stack, v);
		for (int c = 0; c < NCOLS; c++)
			other[c] += v[c];
	}
	free(rank);
	fprintf(f, "],\"other\":[%zu", n - kept);
	json_cols(f, other);
	fputc(']', f);
	if ((ret = tables_init(&tabs, m)) || (ret = write_flame(f, p, m, 0, &tabs))) {
		tables_free(&tabs);
		return ret;
	}
	/* Contexts nest as frames (issue 26): a second tree when the
	 * capture names any. */
	if (m->cap->ntags[HP_TAG_CONTEXT] > 1 && (ret = write_flame(f, p, m, 1, NULL))) {
		tables_free(&tabs);
		return ret;
	}
	ret = write_tables_by(f, p, m, top, total, &tabs);
	tables_free(&tabs);
	if (ret)
		return ret;
	if (has_attribution(m->cap) && (ret = write_groups(f, m, top)))
		return ret;
	fputc('}', f);
	return 0;
}

static void write_tables(FILE *f, const struct page *p)
{
	fputs(",\"strings\":[", f);
	for (size_t i = 0; i < p->strings.count; i++) {
		if (i)
			fputc(',', f);
		json_str(f, hp_strtab_get(&p->strings, (uint32_t)i));
	}
	fputs("],\"frames\":[", f);
	for (size_t i = 0; i < p->nframes; i++) {
		const struct frame *fr = &p->frames[i];
		fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRId32 ",%d,%d]", i ? "," : "",
			fr->function, fr->file, fr->line, fr->module, fr->inlined, fr->cls);
	}
	fputs("],\"stacks\":[", f);
	for (size_t i = 0; i < p->nstacks; i++) {
		fputs(i ? ",[" : "[", f);
		for (uint32_t j = 0; j < p->stacks[i][0]; j++)
			fprintf(f, "%s%" PRIu32, j ? "," : "", p->stacks[i][1 + j]);
		fputc(']', f);
	}
	fputc(']', f);
}

static void write_meta(FILE *f, const struct hp_capture *cap, const struct hp_model *m, size_t top)
{
	char heap[256];

	fputs("\"version\":1,\"heapprof\":", f);
	json_str(f, HP_VERSION);
	/* "heap": the heap shown (--heap), null for malloc's. */
	fputs(",\"heap\":", f);
	if (m->view_heap)
		json_str(f, hp_model_heap_name(m, m->view_heap, heap, sizeof heap));
	else
		fputs("null", f);
	fputs(",\"program\":", f);
	json_str(f, hp_model_program_name(cap));
	fputs(",\"path\":", f);
	json_str(f, cap->program ? cap->program : "");
	fputs(",\"argv\":[", f);
	for (size_t i = 0; i < cap->argc; i++) {
		if (i)
			fputc(',', f);
		json_str(f, cap->argv[i]);
	}
	fprintf(f,
		"],\"pid\":%" PRIu64 ",\"start_realtime_ns\":%" PRIu64 ",\"sampled\":%s,"
		"\"sample_rate_bytes\":%" PRIu64 ",\"max_depth\":%" PRIu64
		",\"top\":%zu,\"damaged\":%zu,",
		cap->pid, cap->start_realtime_ns, m->sampled ? "true" : "false",
		m->sample_rate_bytes, cap->max_depth, top, cap->ndamage);
}

/* Writes an asset inside an element; the caller has checked it. */
static void put_asset(FILE *f, const unsigned char *data, size_t len)
{
	fwrite(data, 1, len, f);
}

int hp_html_write(FILE *f, const struct hp_capture *cap, const struct hp_html_options *opts,
		  char *err, size_t errlen)
{
	size_t top = opts && opts->top_stacks ? opts->top_stacks : HP_HTML_TOP_DEFAULT;
	struct hp_model_options mo = {.debug_dir = opts ? opts->debug_dir : NULL,
				      .embedded_only = opts && opts->embedded_only};
	struct page p = {0};
	struct hp_model m;
	struct hp_model *last = opts ? opts->last_model : NULL;
	struct hp_site_series *sites = NULL;
	struct hp_tl_groups tgroups[HP_HTML_TL_DIMS] = {0};
	struct ev_page ev = {0};
	int has_tgroups = has_attribution(cap);
	uint32_t *site_stacks = NULL, *map_stacks = NULL;
	char **map_types = NULL; /* per page stack, the type most of its bytes in use have */
	size_t nmap_types = 0;
	const struct hp_cap_snapshot *map_snap = NULL;
	struct map_page map_page = {0};
	size_t nmap = 0;
	struct page_hists hists = {0};
	size_t nsites = 0;
	const char *title = opts ? opts->title : NULL;
	char deftitle[512];
	int ret = 0;

	p.all_frames = opts && opts->all_frames;
	if (!cap->nsnapshots) {
		snprintf(err, errlen, "the capture has no snapshot");
		ret = -ENOENT;
		goto out;
	}
	if (!title) {
		snprintf(deftitle, sizeof deftitle, "heapprof: %s", hp_model_program_name(cap));
		title = deftitle;
	}

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>",
	      f);
	{
		/* The title as HTML text: escaped for display, then for markup. */
		char *e = hp_text_dup(title);
		for (const char *c = e ? e : ""; *c; c++) {
			if (*c == '<')
				fputs("&lt;", f);
			else if (*c == '>')
				fputs("&gt;", f);
			else if (*c == '&')
				fputs("&amp;", f);
			else
				fputc(*c, f);
		}
		free(e);
	}
	fputs("</title>\n<style>\n", f);
	put_asset(f, hp_asset_uplot_min_css, hp_asset_uplot_min_css_len);
	fputs("\n</style>\n<style>\n", f);
	put_asset(f, hp_asset_report_css, hp_asset_report_css_len);
	fputs("</style>\n</head>\n<body>\n<!--\nThe timeline is drawn by uPlot "
	      "(https://github.com/leeoniya/uPlot), embedded below under its licence:\n\n",
	      f);
	put_asset(f, hp_asset_uplot_LICENSE, hp_asset_uplot_LICENSE_len);
	fputs("-->\n<noscript>This report needs JavaScript.</noscript>\n"
	      "<script type=\"application/json\" id=\"hp-data\">{",
	      f);

	for (size_t i = 0; i < cap->nsnapshots; i++) {
		if (i + 1 == cap->nsnapshots && last) { /* the caller's */
			m = *last;
			last = NULL;
		} else {
			mo.snapshot = (long)i;
			/* the last model built releases the frames (html.h) */
			mo.release_frames = opts && i + 1 == cap->nsnapshots - (last != NULL)
						    ? opts->release_frames
						    : NULL;
			ret = hp_model_build(&m, cap, &mo, err, errlen);
			if (ret)
				goto out;
		}
		if (opts && opts->suppressions && (ret = hp_model_suppress(&m, opts->suppressions))) {
			hp_model_free(&m);
			snprintf(err, errlen, "%s", strerror(-ret));
			goto out;
		}
		if (opts && opts->heap) { /* one heap's blocks (heapview.h) */
			int64_t h = hp_model_find_heap(&m, opts->heap);
			if (h < 0) {
				hp_model_free(&m);
				snprintf(err, errlen, "no heap named '%s' (report --by heap lists its heaps)",
					 opts->heap);
				ret = -ENOENT;
				goto out;
			}
			hp_heapview_select(&m, (uint64_t)h);
		}
		if (i == 0 && (ret = hp_frame_names_build(&p.names, &m, 0))) {
			hp_model_free(&m);
			snprintf(err, errlen, "%s", strerror(-ret));
			goto out;
		}
		if (i == 0) {
			write_meta(f, cap, &m, top);
			write_series(f, cap);
			fputs(",\"snapshots\":[", f);
		} else {
			fputc(',', f);
		}
		ret = write_snapshot(f, &p, &m, top);
		/* The sites over the whole run: from the last snapshot's model,
		 * their stacks in the page's table. */
		if (!ret && i + 1 == cap->nsnapshots) {
			ret = hp_timeline_sites(&m, HP_HTML_SITES, &sites, &nsites);
			if (!ret && !(site_stacks = calloc(nsites + 1, sizeof *site_stacks)))
				ret = -ENOMEM;
			for (size_t k = 0; !ret && k < nsites; k++)
				ret = stack_of(&p, &m, sites[k].stack, &site_stacks[k]);
			for (size_t d = 0; !ret && has_tgroups && d < HP_HTML_TL_DIMS; d++)
				ret = hp_timeline_by(&m, tl_dims[d], HP_HTML_SITES, &tgroups[d]);
			if (!ret)
				ret = ev_page_build(&ev, &p, &m, opts ? opts->events : NULL);
			if (!ret)
				ret = page_hists_order(&hists, &m);
			for (size_t k = 0; !ret && k < hists.n && k < HP_HTML_SITES; k++) {
				uint32_t idx;
				ret = stack_of(&p, &m, hists.keys[k].stack, &idx);
			}
			map_snap = &cap->snapshots[i];
			nmap = map_snap->has_blocks ? map_snap->nblocks : 0;
			if (nmap > HP_HTML_MAX_BLOCKS)
				nmap = HP_HTML_MAX_BLOCKS;
			if (!ret && !(map_stacks = calloc(nmap + 1, sizeof *map_stacks)))
				ret = -ENOMEM;
			for (size_t k = 0; !ret && k < nmap; k++) {
				uint32_t st = map_snap->blocks[k].stack_id;
				map_stacks[k] = UINT32_MAX;
				if (st < m.nstacks && m.stacks[st].depth)
					ret = stack_of(&p, &m, st, &map_stacks[k]);
			}
			if (!ret && map_snap->has_blocks)
				ret = map_page_build(&map_page, &p, &m, map_snap);
			if (!ret && map_snap->has_blocks && has_tgroups)
				ret = map_types_build(&p, &m, &map_types, &nmap_types);
			if (!ret)
				ret = page_hists_fill(&hists, &p, &m);
		}
		hp_model_free(&m);
		if (ret) {
			snprintf(err, errlen, "%s", strerror(-ret));
			goto out;
		}
	}
	fputc(']', f);
	ret = write_sites(f, sites, nsites, site_stacks);
	if (!ret && has_tgroups)
		ret = write_tgroups(f, tgroups);
	if (!ret)
		ret = write_events(f, &ev);
	write_map(f, map_snap, map_stacks, &map_page, map_types, nmap_types);
	if (!ret)
		ret = write_histograms(f, &p, &hists, cap->snapshots[cap->nsnapshots - 1].seq);
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		goto out;
	}
	write_tables(f, &p);
	fputs("}</script>\n<script>\n", f);
	put_asset(f, hp_asset_uplot_min_js, hp_asset_uplot_min_js_len);
	fputs("\n</script>\n<script>\n", f);
	put_asset(f, hp_asset_report_js, hp_asset_report_js_len);
	fputs("</script>\n</body>\n</html>\n", f);
	if (ferror(f)) {
		snprintf(err, errlen, "write error");
		ret = -EIO;
	}
out:
	if (last) /* not taken: an earlier snapshot failed */
		hp_model_free(last);
	hp_timeline_free(sites, nsites);
	for (size_t d = 0; d < HP_HTML_TL_DIMS; d++)
		hp_timeline_by_free(&tgroups[d]);
	ev_page_free(&ev);
	free(site_stacks);
	page_hists_free(&hists);
	free(map_stacks);
	for (size_t k = 0; k < nmap_types; k++)
		free(map_types[k]);
	free(map_types);
	map_page_free(&map_page);
	page_free(&p);
	return ret;
}
