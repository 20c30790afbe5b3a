/*
 * report_site.c - the report's sections by allocation site (issue 24):
 * who holds the peak, what leaks, where the allocations are, as
 * heaptrack's bottom-up view and pprof's -top -cum answer it.
 *
 * A stack's site is the first frame of the program's own code (class
 * HP_FRAME_OWN, after the runtime's frames below main are left out) with
 * its file and line: the line that asked for the memory, whatever library
 * frames lie between it and the allocator. A stack without a frame of the
 * program's own has its innermost frame as its site. The frames outside
 * the site are its call path, with recursion merged: a frame whose
 * function is the site's or that of a frame already on the path counts
 * once (the innermost call stays, marked [recursive]), so a tree built by
 * recursion is one site with one path, not one stack per depth.
 *
 * Stacks are grouped by the text of their site (function, file, line),
 * and within a site by the text of their merged path: each stack's
 * figures count once, in one path of one site, so the sites' figures add
 * up to the total and a share is a share of it.
 *
 * Ordinary analyzer C: allocates, not thread-safe.
 */
#include "report_int.h"

#include "../common/hash.h"
#include "../common/sort.h"
#include "../common/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Call paths shown under a site of the first section (the peak's), and of
 * the others; the rest are summed on one line. (clang's report at 80
 * columns: 3 everywhere made it 1,086 lines.) */
#define PATHS_SHOWN_FIRST 3
#define PATHS_SHOWN 1

/* The report's metrics, in its order, with their section titles. */
static const struct {
	const char *title, *json;
	enum hp_metric metric;
} sections[] = {
	{"peak heap consumers by allocation site (in use at the peak)", "peak", HP_METRIC_PEAK},
	{"leaks by allocation site (in use at the snapshot)", "leaked", HP_METRIC_LEAKED},
	{"most allocations by allocation site", "allocations", HP_METRIC_ALLOCATIONS},
	{"most temporary allocations by allocation site", "temporary", HP_METRIC_TEMPORARY},
	{"most bytes allocated by allocation site", "allocated", HP_METRIC_ALLOCATED},
};

/* One stack's place: its site's key and its path's (64-bit hashes of
 * their text; two distinct texts share one with odds of about n^2 / 2^65). */
/* A stack's keys, one per stack with allocations (32 bytes: a million
 * stacks hold a million of them; the figures are the stack's, read when
 * summed). */
struct rec {
	uint64_t site, path;
	uint64_t via; /* the library call the site made (its function's hash), or 0 */
	uint32_t stack;
};

/* The figures of stack id as the sites count them: a suppressed stack's
 * blocks (runtime allocations) are not in use for the leaks. */
static struct hp_values rec_values(const struct hp_model *m, uint32_t id)
{
	struct hp_values v = m->stacks[id].v;

	if (m->stacks[id].suppressed)
		v.inuse_bytes = v.inuse_objects = 0;
	return v;
}

/* A call path of a site: the stacks whose merged path reads the same. */
struct path {
	uint32_t stack; /* the deepest of them (the lowest id of those): what is
			 * shown, its recursion marked */
	struct hp_values v;
};

struct site {
	uint32_t stack;      /* its deepest stack: where its frame is read */
	int one_via;         /* all its stacks reach the allocator through one library
			      * call (the same outermost library frame): shown */
	size_t first, npath; /* its paths: paths[first .. first + npath) */
	struct hp_values v;
};

struct sites {
	size_t nsite, npath;
	struct site *site;
	struct path *path;
};

static uint64_t mix(uint64_t h, const char *s)
{
	return hp_hash_str(h, s) * 0x9e3779b97f4a7c15ULL;
}

static uint64_t sym_frame_hash(const struct hp_sym *s)
{
	return hp_hash_u64(mix(mix(HP_HASH_STR_SEED, s->function), s->file) ^ s->line);
}

static uint64_t frame_hash(const struct hp_report_frame *f)
{
	return sym_frame_hash(f->s);
}

/* The hashes of a frame's symbol as sites_build uses them, its
 * function's (merged_path's compare) and frame_hash's, worked out once a
 * symbol: a million stacks of a big program reach the same 100,000
 * symbols again and again, and hashing their names each time (and
 * comparing every pair of a path's functions by strcmp) took most of the
 * report's time. One slot a symbol of the model's locations, in their
 * order (first[i]: location i's first; 17 bytes a symbol, 4 a location),
 * filled as stacks reach it. */
struct symh_cache {
	const struct hp_model *m;
	uint32_t *first;
	uint64_t (*h)[2]; /* fn, frame */
	uint8_t *known;
};

static void symh_free(struct symh_cache *c)
{
	free(c->first);
	free(c->h);
	free(c->known);
}

/* Returns 0 or -ENOMEM (nothing held then). */
static int symh_init(struct symh_cache *c, const struct hp_model *m)
{
	size_t n = 0;

	*c = (struct symh_cache){.m = m, .first = calloc(m->nlocations ? m->nlocations : 1,
							    sizeof *c->first)};
	if (!c->first)
		return -ENOMEM;
	for (size_t i = 0; i < m->nlocations; i++) {
		c->first[i] = (uint32_t)n;
		n += m->locations[i].nsyms;
	}
	if (n > UINT32_MAX) {
		symh_free(c);
		return -ENOMEM;
	}
	c->h = malloc((n ? n : 1) * sizeof *c->h);
	c->known = calloc(n ? n : 1, 1);
	if (!c->h || !c->known) {
		symh_free(c);
		return -ENOMEM;
	}
	return 0;
}

/* The hashes of frame f's symbol (f one of hp_report_frames' for c's
 * model) into *fn and *frame. */
static void symh_of(struct symh_cache *c, const struct hp_report_frame *f, uint64_t *fn,
		    uint64_t *frame)
{
	size_t at = c->first[f->l - c->m->locations] + (size_t)(f->s - f->l->syms);

	if (!c->known[at]) {
		c->h[at][0] = hp_hash_str(HP_HASH_STR_SEED, f->s->function);
		c->h[at][1] = sym_frame_hash(f->s);
		c->known[at] = 1;
	}
	*fn = c->h[at][0];
	*frame = c->h[at][1];
}

/* Whether frame f has no symbol: a stripped library's ("0x1126", "??"). */
static int unnamed(const struct hp_report_frame *f)
{
	const char *fn = f->s->function;
	return fn[0] == '?' || (fn[0] == '0' && fn[1] == 'x');
}

/* Whether f is in a library without source: no file, a shared library
 * (the executable's own addresses stay sites of their own, as report has
 * always shown them), its binary read (not one gone or changed since the
 * run, whose addresses are what a reader can still look up). */
static int sourceless(const struct hp_model *m, const struct hp_report_frame *f)
{
	enum hp_module_status st;

	if (f->s->file[0] || f->l->module < 0 || f->l->module == hp_model_main_module(m))
		return 0;
	st = m->modules[f->l->module].status;
	return st == HP_MODSYM_OK || st == HP_MODSYM_EMBEDDED || st == HP_MODSYM_NO_SYMBOLS;
}

/* The index of the site frame in f[0..n): the first of the program's own,
 * else the innermost. A frame without source (a stripped library: every
 * address would be a site of its own) moves the site outward through
 * the frames of its module without source, to the first with a symbol
 * (the exported function the caller called, the nearest one on the
 * stack), else to the module's outermost frame: *grouped set then. */
static size_t site_index(const struct hp_model *m, const struct hp_report_frame *f, size_t n,
			 int *grouped)
{
	size_t i;

	*grouped = 0;
	for (i = 0; i < n && f[i].cls != HP_FRAME_OWN; i++)
		;
	if (i == n)
		return 0;
	if (!sourceless(m, &f[i]) || !unnamed(&f[i]))
		return i;
	*grouped = 1;
	while (i + 1 < n && sourceless(m, &f[i + 1]) && f[i + 1].l->module == f[i].l->module &&
	       unnamed(&f[i]))
		i++;
	return i;
}

/* A site's key: its frame's function, file and line; a site grouped by
 * its module (site_index) without a symbol, the module's. */
static uint64_t site_hash(const struct hp_model *m, const struct hp_report_frame *f, int grouped)
{
	if (grouped && unnamed(f))
		return hp_hash_u64(mix(mix(HP_HASH_STR_SEED, "[module]"),
				       m->modules[f->l->module].name));
	return frame_hash(f);
}

/* The call path of the site f[si]: f[si + 1 .. n) with recursion merged,
 * into g (room for n frames); returns its length. *site_recursive is set
 * when the site's own function is called again outside it. With fh (the
 * function hashes of f[0..n), symh_of's), two functions are compared by
 * strcmp only when their hashes are equal, and gi[j] gets the index in f
 * of g[j]; without, by strcmp alone (gi unused). */
static size_t merged_path(const struct hp_report_frame *f, const uint64_t *fh, size_t n,
			  size_t si, struct hp_report_frame *g, size_t *gi, int *site_recursive)
{
	size_t k = 0;

#define SAME(a, b, x, y) ((!fh || fh[x] == fh[y]) && strcmp((a).s->function, (b).s->function) == 0)
	*site_recursive = 0;
	for (size_t i = si + 1; i < n; i++) {
		size_t j;
		if (SAME(f[i], f[si], i, si)) {
			*site_recursive = 1;
			continue;
		}
		for (j = 0; j < k && !SAME(g[j], f[i], fh ? gi[j] : 0, i); j++)
			;
		if (j < k) {
			g[j].recursive = 1;
			continue;
		}
		if (fh)
			gi[k] = i;
		g[k] = f[i];
		g[k++].recursive = 0;
	}
#undef SAME
	return k;
}

/* Whether x sorts before y: by site, path, stack. */
static int rec_before(const struct rec *x, const struct rec *y)
{
	if (x->site != y->site)
		return x->site < y->site;
	if (x->path != y->path)
		return x->path < y->path;
	return x->stack < y->stack;
}

static void rec_swap(struct rec *a, struct rec *b)
{
	struct rec t = *a;
	*a = *b;
	*b = t;
}

/* Moves r[i] down the heap r[0..n) (the largest on top) to its place. */
static void rec_sift(struct rec *r, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && rec_before(&r[c], &r[c + 1]))
			c++;
		if (!rec_before(&r[i], &r[c]))
			break;
		rec_swap(&r[i], &r[c]);
	}
}

/* Heap sort of r[0..n), the fallback of rec_sort. */
static void rec_heapsort(struct rec *r, size_t n)
{
	for (size_t k = n / 2; k-- > 0;)
		rec_sift(r, k, n);
	for (size_t end = n; end-- > 1;) {
		rec_swap(&r[0], &r[end]);
		rec_sift(r, 0, end);
	}
}

/* Sorts r[0..n) by site, path, stack in place: no element is equal to
 * another (stack ids differ), so the order is the one any sort gives;
 * the C library's qsort would take a copy of the array (a million stacks:
 * 32 MB at the report's peak). Quicksort on the median of three, the
 * smaller side first, heap sort past 2 log2 n levels (introsort): n log n
 * whatever the capture holds. */
static void rec_sort(struct rec *r, size_t n)
{
	int budget = 0;

	for (size_t k = n; k > 1; k >>= 1)
		budget += 2;
	while (n > 16) {
		size_t mid = n / 2, i = 0, j = n - 1;
		if (budget-- <= 0) {
			rec_heapsort(r, n);
			return;
		}
		if (rec_before(&r[mid], &r[0]))
			rec_swap(&r[mid], &r[0]);
		if (rec_before(&r[n - 1], &r[0]))
			rec_swap(&r[n - 1], &r[0]);
		if (rec_before(&r[n - 1], &r[mid]))
			rec_swap(&r[n - 1], &r[mid]);
		struct rec pivot = r[mid];
		/* Hoare's partition: r[0..j] <= pivot <= r[j+1..n) */
		for (;;) {
			while (rec_before(&r[i], &pivot))
				i++;
			while (rec_before(&pivot, &r[j]))
				j--;
			if (i >= j)
				break;
			rec_swap(&r[i++], &r[j--]);
		}
		/* the smaller side by recursion (at most log2 n deep), the
		 * larger by the loop */
		if (j + 1 < n - j - 1) {
			rec_sort(r, j + 1);
			r += j + 1;
			n -= j + 1;
		} else {
			rec_sort(r + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) /* insertion sort of the short rest */
		for (size_t k = i; k > 0 && rec_before(&r[k], &r[k - 1]); k--)
			rec_swap(&r[k], &r[k - 1]);
}

static void sites_free(struct sites *s)
{
	free(s->site);
	free(s->path);
}

/* Groups m's stacks with allocations by site and path. The blocks of a
 * suppressed stack (runtime allocations) are not in use for the leaks:
 * their in-use figures count 0. Returns 0 or -ENOMEM. */
static int sites_build(struct sites *out, const struct hp_model *m)
{
	struct rec *r = calloc(m->nstacks ? m->nstacks : 1, sizeof *r);
	struct symh_cache cache;
	size_t nr = 0;
	int ret = -ENOMEM;

	memset(out, 0, sizeof *out);
	if (!r)
		return -ENOMEM;
	if (symh_init(&cache, m)) {
		free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct hp_mstack *st = &m->stacks[i];
		struct hp_report_frame *f, *g;
		size_t n, si, k, *gi;
		int rec_site, grouped;
		uint64_t ph = HP_HASH_STR_SEED, *fh, *frh;

		if (!(st->v.alloc_objects > 0))
			continue;
		r[nr] = (struct rec){.stack = (uint32_t)i};
		f = hp_report_frames(m, (uint32_t)i, 0, &n);
		/* g, then each frame's function hash, frame hash and g's
		 * indexes in f, in one block */
		g = malloc((n ? n : 1) * (sizeof *g + 2 * sizeof *fh + sizeof *gi));
		if (!f || !g) {
			free(f);
			free(g);
			goto out;
		}
		fh = (uint64_t *)(g + (n ? n : 1));
		frh = fh + (n ? n : 1);
		gi = (size_t *)(frh + (n ? n : 1));
		for (size_t j = 0; j < n; j++)
			symh_of(&cache, &f[j], &fh[j], &frh[j]);
		if (n) { /* else: no stack, site 0 */
			si = site_index(m, f, n, &grouped);
			k = merged_path(f, fh, n, si, g, gi, &rec_site);
			for (size_t j = 0; j < k; j++)
				ph = hp_hash_u64(ph ^ frh[gi[j]]) + j;
			r[nr].site = site_hash(m, &f[si], grouped) | 1; /* never 0, no stack's */
			if (!grouped && si > 0 && f[si - 1].cls == HP_FRAME_LIBRARY)
				r[nr].via = fh[si - 1] | 1;
			r[nr].path = ph ^ k;
		}
		free(f);
		free(g);
		nr++;
	}
	rec_sort(r, nr);
	/* As many sites and paths as the sorted keys have: far fewer sites
	 * than stacks. */
	size_t nsite = 0, npath = 0;
	for (size_t i = 0; i < nr; i++) {
		int new_site = !i || r[i].site != r[i - 1].site;
		nsite += new_site;
		npath += new_site || r[i].path != r[i - 1].path;
	}
	out->site = calloc(nsite ? nsite : 1, sizeof *out->site);
	out->path = calloc(npath ? npath : 1, sizeof *out->path);
	if (!out->site || !out->path)
		goto out;
	uint64_t first_via = 0;
	for (size_t i = 0; i < nr; i++) {
		int new_site = !i || r[i].site != r[i - 1].site;
		if (new_site) {
			out->site[out->nsite++] = (struct site){.stack = r[i].stack,
								.first = out->npath,
								.one_via = r[i].via != 0};
			first_via = r[i].via;
		} else if (r[i].via != first_via) {
			out->site[out->nsite - 1].one_via = 0;
		}
		if (new_site || r[i].path != r[i - 1].path) {
			out->path[out->npath++] = (struct path){.stack = r[i].stack};
			out->site[out->nsite - 1].npath++;
		}
		if (m->stacks[r[i].stack].depth > m->stacks[out->path[out->npath - 1].stack].depth)
			out->path[out->npath - 1].stack = r[i].stack;
		if (m->stacks[r[i].stack].depth > m->stacks[out->site[out->nsite - 1].stack].depth)
			out->site[out->nsite - 1].stack = r[i].stack;
		struct hp_values v = rec_values(m, r[i].stack);
		hp_values_add(&out->path[out->npath - 1].v, &v);
		hp_values_add(&out->site[out->nsite - 1].v, &v);
	}
	ret = 0;
out:
	symh_free(&cache);
	free(r);
	if (ret)
		sites_free(out);
	return ret;
}

/* Orders indexes of sites or paths by a metric: larger first, then lower
 * stack id (a capture reads the same each time). */
struct order {
	const struct hp_values *v;
	uint32_t stack;
	size_t index;
};

static enum hp_metric order_metric; /* the metric by_metric sorts by: set just before hp_sort */

static int by_metric(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	double p = hp_values_metric(x->v, order_metric), q = hp_values_metric(y->v, order_metric);
	if (p != q)
		return p > q ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* A path's figures, and its share of its site's. */
static const char *path_text(char *buf, size_t cap, const struct hp_values *v,
			     const struct hp_values *site, enum hp_metric m)
{
	char a[32], b[32];
	double x = hp_values_metric(v, m), w = hp_values_metric(site, m);
	double pct = w > 0 ? 100 * x / w : 0;
	double n = m == HP_METRIC_PEAK     ? v->peak_objects
		   : m == HP_METRIC_LEAKED ? v->inuse_objects
					   : v->alloc_objects;
	const char *unit = m == HP_METRIC_PEAK || m == HP_METRIC_LEAKED ? "block" : "allocation";
	int one = hp_estimate_i64(n) == 1;

	switch (m) {
	case HP_METRIC_PEAK:
	case HP_METRIC_LEAKED:
	case HP_METRIC_ALLOCATED:
		snprintf(buf, cap, "%s in %s %s%s (%.1f%%)", hp_units_bytes(a, sizeof a, x),
			 hp_units_count(b, sizeof b, n), unit, one ? "" : "s", pct);
		break;
	case HP_METRIC_TEMPORARY:
		snprintf(buf, cap, "%s temporary (%.1f%%)", hp_units_count(a, sizeof a, x), pct);
		break;
	default:
		snprintf(buf, cap, "%s allocation%s (%.1f%%)", hp_units_count(a, sizeof a, x),
			 hp_estimate_i64(x) == 1 ? "" : "s", pct);
	}
	return buf;
}

/* Prints the site frame of stack, then (call path given) its merged call
 * path under indent. */
static void print_site_frame(FILE *out, const struct hp_model *m, uint32_t stack,
			     const struct hp_report_options *o, int path, int via,
			     const char *indent)
{
	struct hp_report_frame *f, *g;
	size_t n, si, k;
	int rec_site, grouped;

	if (!m->stacks[stack].depth) {
		if (!path)
			fprintf(out,
				"      (no stack: unwinding failed or the stack table was full)\n");
		return;
	}
	f = hp_report_frames(m, stack, 0, &n);
	g = f ? malloc((n ? n : 1) * sizeof *g) : NULL;
	if (!g) {
		free(f);
		return; /* out of memory: left out, the report goes on */
	}
	if (!n) {
		if (!path)
			fprintf(out, "      (only the runtime's frames)\n");
	} else {
		si = site_index(m, f, n, &grouped);
		k = merged_path(f, NULL, n, si, g, NULL, &rec_site);
		if (!path && grouped && unnamed(&f[si])) {
			/* a library without symbols: the site is the module */
			const char *mod = m->modules[f[si].l->module].name;
			const char *base = strrchr(mod, '/');
			fprintf(out, "      [%s: no symbols, its frames grouped]\n",
				base ? base + 1 : mod);
		} else if (!path && grouped) {
			hp_report_print_frame(out, m, f[si].l, f[si].s,
					      "  [no symbols below it: grouped]", o, "      ");
		} else if (!path && via && si > 0) {
			/* the library call the site made, its run folded */
			size_t lib = si - 1, first = lib;
			char note[64] = "";
			while (first > 0 && f[first - 1].cls == HP_FRAME_LIBRARY)
				first--;
			if (lib > first)
				snprintf(note, sizeof note, "  [+%zu library frame%s]", lib - first,
					 lib - first == 1 ? "" : "s");
			hp_report_print_frame(out, m, f[lib].l, f[lib].s, note, o, "      ");
		}
		if (!path && !grouped)
			hp_report_print_frame(out, m, f[si].l, f[si].s,
					      rec_site ? "  [recursive]" : "", o, "      ");
		else if (path)
			hp_report_print_frames(out, m, g, k, o, indent);
	}
	free(f);
	free(g);
}

static void print_site(FILE *out, const struct hp_model *m, const struct sites *s,
		       const struct site *st, enum hp_metric metric,
		       const struct hp_report_options *o, size_t paths_shown)
{
	struct order *ord = calloc(st->npath ? st->npath : 1, sizeof *ord);
	size_t k = 0;
	char line[256];

	print_site_frame(out, m, st->stack, o, 0, st->one_via && !(o && o->all_frames), NULL);
	if (!ord)
		return;
	for (size_t i = 0; i < st->npath; i++) {
		const struct path *p = &s->path[st->first + i];
		if (hp_values_metric(&p->v, metric) > 0.5)
			ord[k++] = (struct order){&p->v, p->stack, st->first + i};
	}
	order_metric = metric;
	hp_sort(ord, k, sizeof *ord, by_metric);
	if (k == 1) { /* one path: the site and its callers read as one stack */
		print_site_frame(out, m, ord[0].stack, o, 1, 0, "      ");
		free(ord);
		return;
	}
	/* Several paths: each shows half the frames a stack would (--frames),
	 * so that a site fits a screen. */
	struct hp_report_options half = o ? *o : (struct hp_report_options){.frames = 8};
	if (half.frames > 1)
		half.frames /= 2;
	if (k == paths_shown + 1) /* one more: shown, as short as a line saying so */
		paths_shown = k;
	fprintf(out, "      called from %s paths:\n", hp_units_count(line, sizeof line, (double)k));
	for (size_t i = 0; i < k && i < paths_shown; i++) {
		fprintf(out, "      %c) %s\n", (int)('a' + i),
			path_text(line, sizeof line, ord[i].v, &st->v, metric));
		print_site_frame(out, m, ord[i].stack, &half, 1, 0, "         ");
	}
	if (k > paths_shown) {
		struct hp_values rest = {0};
		for (size_t i = paths_shown; i < k; i++)
			hp_values_add(&rest, ord[i].v);
		char more[32];
		fprintf(out, "      and %s more path%s: %s\n",
			hp_units_count(more, sizeof more, (double)(k - paths_shown)),
			k - paths_shown == 1 ? "" : "s",
			path_text(line, sizeof line, &rest, &st->v, metric));
	}
	free(ord);
}

/* The top sites by metric, into ord; returns how many. */
static size_t top_sites(const struct sites *s, enum hp_metric metric, size_t top, struct order *ord)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nsite; i++)
		if (hp_values_metric(&s->site[i].v, metric) > 0.5)
			ord[k++] = (struct order){&s->site[i].v, s->site[i].stack, i};
	order_metric = metric;
	hp_sort(ord, k, sizeof *ord, by_metric);
	return k < top ? k : top;
}

int hp_report_site_sections(FILE *out, const struct hp_model *m, const struct hp_report_options *o)
{
	struct sites s;
	struct order *ord;
	unsigned top = o && o->top ? o->top : 10;
	int at_exit = m->snap->reason == HP_SNAP_EXIT;

	if (sites_build(&s, m))
		return -ENOMEM;
	ord = calloc(s.nsite ? s.nsite : 1, sizeof *ord);
	if (!ord) {
		sites_free(&s);
		return -ENOMEM;
	}
	for (size_t sec = 0; sec < sizeof sections / sizeof *sections; sec++) {
		enum hp_metric metric = sections[sec].metric;
		double total = hp_values_metric(&m->total, metric);
		size_t shown = top_sites(&s, metric, top, ord);
		char line[256];

		if (metric == HP_METRIC_LEAKED)
			total -= m->suppressed.inuse_bytes;
		fprintf(out, "\n%s\n", sections[sec].title);
		for (size_t i = 0; i < shown; i++) {
			const struct site *st = &s.site[ord[i].index];
			hp_report_print_heading(out, i + 1,
						hp_report_metric_text(line, sizeof line, &st->v,
								      metric, total, at_exit,
								      "site"),
						o ? o->width : 0);
			print_site(out, m, &s, st, metric, o,
				   sec == 0 ? PATHS_SHOWN_FIRST : PATHS_SHOWN);
		}
		if (!shown)
			fprintf(out, "  none\n");
	}
	free(ord);
	sites_free(&s);
	return 0;
}

int hp_report_site_json(FILE *out, const struct hp_model *m, unsigned top)
{
	struct sites s;
	struct order *ord, *pord;

	if (sites_build(&s, m))
		return -ENOMEM;
	ord = calloc(s.nsite ? s.nsite : 1, sizeof *ord);
	pord = calloc(s.npath ? s.npath : 1, sizeof *pord);
	if (!ord || !pord) {
		free(ord);
		free(pord);
		sites_free(&s);
		return -ENOMEM;
	}
	fputc('{', out);
	for (size_t sec = 0; sec < sizeof sections / sizeof *sections; sec++) {
		enum hp_metric metric = sections[sec].metric;
		size_t shown = top_sites(&s, metric, top, ord);

		fprintf(out, "%s\n    \"%s\": [", sec ? "," : "", sections[sec].json);
		for (size_t i = 0; i < shown; i++) {
			const struct site *st = &s.site[ord[i].index];
			const struct hp_mstack *ms = &m->stacks[st->stack];
			struct hp_report_frame *f;
			size_t n = 0, k = 0;

			fprintf(out, "%s\n      {\"values\": ", i ? "," : "");
			hp_report_json_values(out, &st->v);
			fprintf(out, ", \"site\": ");
			f = ms->depth ? hp_report_frames(m, st->stack, 0, &n) : NULL;
			if (f && n) {
				int grouped;
				const struct hp_report_frame *x = &f[site_index(m, f, n, &grouped)];
				fprintf(out, "{\"function\": ");
				hp_report_json_str(out, x->s->function);
				fprintf(out, ", \"file\": ");
				hp_report_json_str(out, x->s->file);
				fprintf(out, ", \"line\": %u}", x->s->line);
			} else {
				fputs("null", out);
			}
			free(f);
			for (size_t p = 0; p < st->npath; p++) {
				const struct path *pp = &s.path[st->first + p];
				if (hp_values_metric(&pp->v, metric) > 0.5)
					pord[k++] =
						(struct order){&pp->v, pp->stack, st->first + p};
			}
			order_metric = metric;
			hp_sort(pord, k, sizeof *pord, by_metric);
			fprintf(out, ", \"paths\": [");
			for (size_t p = 0; p < k; p++) {
				fprintf(out, "%s{\"values\": ", p ? ", " : "");
				hp_report_json_values(out, pord[p].v);
				fprintf(out, ", \"stack\": ");
				hp_report_json_stack(out, m, pord[p].stack);
				fputc('}', out);
			}
			fprintf(out, "]}");
		}
		fprintf(out, "%s]", shown ? "\n    " : "");
	}
	fprintf(out, "\n  }");
	free(ord);
	free(pord);
	sites_free(&s);
	return ferror(out) ? -EIO : 0;
}
