/*
 * diff.c - matching two profiles' stacks by function chain (see diff.h).
 *
 * Each side's buckets come summed per stack (the model's hp_mstack.v).
 * Every stack of NEW, then of BASE, is looked up by the hash of its chain
 * in a hash index of the entries (struct chain_index); a hash hit is
 * confirmed by comparing the chains name by name, so a hash collision
 * never merges two chains.
 * NEW goes first so that an entry found on both sides is shown with NEW's
 * locations (its file:line are the current ones).
 */
#include "diff.h"
#include "report_int.h"

#include "../common/sort.h"
#include "../common/units.h"
#include "../common/text.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/strtab.h"

/* A model's function names hashed once each, as each location's part of
 * a chain hash (fold[l]: a million stacks share far fewer locations than
 * they have frames), and id[base[l] + k], symbolic frame k of location l, its index
 * in a table of the names of both models: two names are the same string
 * when their ids are equal. */
struct names {
	size_t *base;
	/* fold[l]: location l's names' part of a chain hash (chain_hash). */
	struct fold {
		uint64_t mul, add;
	} *fold;
	uint32_t *id;
	/* lid[l]: location l's names as one id, in a table of both models'
	 * locations' name lists: equal lists, equal ids. */
	uint32_t *lid;
};

static void names_free(struct names *n)
{
	free(n->base);
	free(n->fold);
	free(n->id);
	free(n->lid);
}

/* An odd multiplier (the golden ratio's 64 bits) for chain_hash. */
#define CHAIN_MUL 0x9e3779b97f4a7c15ULL

#define MAX_LIST_KEY 1024 /* a location's list of name ids as text */

static int names_build(struct names *n, const struct hp_model *m, struct hp_strtab *ids,
		       struct hp_strtab *lids)
{
	size_t nsyms = 0;

	n->fold = NULL;
	n->id = NULL;
	n->lid = NULL;
	if (!(n->base = malloc((m->nlocations + 1) * sizeof *n->base)))
		return -ENOMEM;
	for (size_t l = 0; l < m->nlocations; l++) {
		n->base[l] = nsyms;
		nsyms += m->locations[l].nsyms;
	}
	if (!(n->fold = malloc((m->nlocations ? m->nlocations : 1) * sizeof *n->fold)) ||
	    !(n->id = malloc((nsyms ? nsyms : 1) * sizeof *n->id)))
		return -ENOMEM;
	for (size_t l = 0; l < m->nlocations; l++) {
		struct fold f = {1, 0};
		for (uint32_t k = 0; k < m->locations[l].nsyms; k++) {
			const char *fn = m->locations[l].syms[k].function;
			f.mul *= CHAIN_MUL;
			f.add = f.add * CHAIN_MUL + hp_hash_u64(hp_hash_str(HP_HASH_STR_SEED, fn));
			if (hp_strtab_intern(ids, fn, &n->id[n->base[l] + k]))
				return -ENOMEM;
		}
		n->fold[l] = f;
	}
	if (!(n->lid = malloc((m->nlocations ? m->nlocations : 1) * sizeof *n->lid)))
		return -ENOMEM;
	for (size_t l = 0; l < m->nlocations; l++) {
		/* The list as text: each name's id in hex and a comma. */
		char key[MAX_LIST_KEY];
		size_t o = 0;
		for (uint32_t k = 0; k < m->locations[l].nsyms && o + 10 < sizeof key; k++)
			o += (size_t)snprintf(key + o, sizeof key - o, "%x,",
					      n->id[n->base[l] + k]);
		if (o + 10 >= sizeof key) /* too long to be keyed: a list of its own */
			snprintf(key, sizeof key, "@%zx:%p", l, (const void *)m);
		if (hp_strtab_intern(lids, key, &n->lid[l]))
			return -ENOMEM;
	}
	return 0;
}

/* The hash of a stack's chain: h * CHAIN_MUL + x for each of its function
 * names' hashes x in order (mod 2^64), mixed at the end. Where the
 * locations split the names does not count: location l's names fold to
 * h * fold[l].mul + fold[l].add, one step a frame. */
static uint64_t chain_hash(const struct names *n, const struct hp_model *m, uint32_t stack)
{
	const struct hp_mstack *st = &m->stacks[stack];
	uint64_t h = HP_HASH_STR_SEED;

	for (uint32_t f = 0; f < st->depth; f++) {
		const struct fold *x = &n->fold[hp_mstack_location(st, f)];
		h = h * x->mul + x->add;
	}
	return hp_hash_u64(h);
}

/* A cursor over a stack's function names, innermost first. */
struct cursor {
	const struct hp_model *m;
	const struct names *n;
	const struct hp_mstack *st;
	uint32_t f, s;
};

/* The next name's id (struct names); UINT32_MAX at the end. */
static uint32_t next_name(struct cursor *c)
{
	while (c->f < c->st->depth) {
		uint32_t loc = hp_mstack_location(c->st, c->f);
		if (c->s < c->m->locations[loc].nsyms)
			return c->n->id[c->n->base[loc] + c->s++];
		c->f++;
		c->s = 0;
	}
	return UINT32_MAX;
}

/* Whether two stacks read the same function names (their ids): at
 * once when their locations read the same lists one by one (the usual
 * match), else name by name (the same names split otherwise among
 * locations are the same chain). */
static int chain_equal(const struct hp_model *ma, const struct names *na, uint32_t sa,
		       const struct hp_model *mb, const struct names *nb, uint32_t sb)
{
	struct cursor a = {ma, na, &ma->stacks[sa], 0, 0}, b = {mb, nb, &mb->stacks[sb], 0, 0};

	if (a.st->depth == b.st->depth) {
		uint32_t f = 0;
		while (f < a.st->depth &&
		       na->lid[hp_mstack_location(a.st, f)] == nb->lid[hp_mstack_location(b.st, f)])
			f++;
		if (f == a.st->depth)
			return 1;
	}
	for (;;) {
		uint32_t x = next_name(&a), y = next_name(&b);
		if (x != y)
			return 0;
		if (x == UINT32_MAX)
			return 1;
	}
}

void hp_diff_figures(const struct hp_values *v, enum hp_metric metric, double *figure,
		     double *companion)
{
	switch (metric) {
	case HP_METRIC_PEAK: *figure = v->peak_bytes; *companion = v->peak_objects; break;
	case HP_METRIC_ALLOCATED: *figure = v->alloc_bytes; *companion = v->alloc_objects; break;
	case HP_METRIC_ALLOCATIONS: *figure = v->alloc_objects; *companion = v->alloc_bytes; break;
	case HP_METRIC_TEMPORARY: *figure = v->temp_objects; *companion = v->temp_bytes; break;
	case HP_METRIC_LEAKED:
	default: *figure = v->inuse_bytes; *companion = v->inuse_objects; break;
	}
}

#define SUMS_BLOCK 4096 /* sums a block */
#define OWN_BASE 1u
#define OWN_NEW 2u

static const struct hp_values zeros;

/* Room for a sum, in the diff's blocks; NULL when out of memory. */
static struct hp_values *new_sum(struct hp_diff *d)
{
	if (!d->sums_left) {
		struct hp_values **grown = realloc(d->sums, (d->nsums + 1) * sizeof *grown);
		if (!grown)
			return NULL;
		d->sums = grown;
		if (!(d->sums[d->nsums] = malloc(SUMS_BLOCK * sizeof **d->sums)))
			return NULL;
		d->nsums++;
		d->sums_left = SUMS_BLOCK;
	}
	return &d->sums[d->nsums - 1][SUMS_BLOCK - d->sums_left--];
}

/* Side which (0 = NEW, 1 = BASE) of e as a sum the diff holds, writable:
 * made from what it points to the first time. NULL when out of memory. */
static struct hp_values *own_side(struct hp_diff *d, struct hp_diff_entry *e, int which)
{
	unsigned bit = which ? OWN_BASE : OWN_NEW;
	const struct hp_values **side = which ? &e->base : &e->new;
	struct hp_values *v;

	if (e->own & bit)
		return (struct hp_values *)*side;
	if (!(v = new_sum(d)))
		return NULL;
	*v = **side;
	*side = v;
	e->own |= bit;
	return v;
}

/* The entries by their chain's hash while the sides are added: open
 * addressing with linear probing, each slot an entry's index + 1 (0:
 * empty), at most half full. A slot is 4 bytes: the hashes are the
 * entries' own (entry_hash), where a general index (table.h) keeps each
 * item's hash beside it, 12 bytes a slot: at 2^20 chains 8 MiB, not
 * 48 MiB and, as it grows, the old table beside the new. */
struct chain_index {
	uint32_t *slots;
	size_t mask;  /* slots - 1; 0 before the first add */
	size_t count; /* entries indexed */
};

/* An entry's chain hash, held in its change (as bits: it is not a
 * number) from its making until the entries are ranked, which sets
 * change. */
static uint64_t entry_hash(const struct hp_diff_entry *e)
{
	uint64_t h;

	memcpy(&h, &e->change, sizeof h);
	return h;
}

static void slot_place(uint32_t *slots, size_t mask, uint64_t h, uint32_t item1)
{
	size_t k = (size_t)h & mask;

	while (slots[k])
		k = (k + 1) & mask;
	slots[k] = item1;
}

/* Indexes entry i of entries (its hash set), the table grown first when
 * the entry would take it past half full. Returns 0 or -ENOMEM. */
static int index_add(struct chain_index *t, const struct hp_diff_entry *entries, uint32_t i)
{
	if ((t->count + 1) * 2 > t->mask + 1) {
		size_t mask = t->mask ? t->mask * 2 + 1 : 63;
		uint32_t *slots = calloc(mask + 1, sizeof *slots);
		if (!slots)
			return -ENOMEM;
		for (size_t k = 0; t->slots && k <= t->mask; k++)
			if (t->slots[k])
				slot_place(slots, mask, entry_hash(&entries[t->slots[k] - 1]),
					   t->slots[k]);
		free(t->slots);
		t->slots = slots;
		t->mask = mask;
	}
	slot_place(t->slots, t->mask, entry_hash(&entries[i]), i + 1);
	t->count++;
	return 0;
}

static void index_free(struct chain_index *t)
{
	free(t->slots);
	memset(t, 0, sizeof *t);
}

/* How far ahead add_side hashes the stacks (a power of 2): the slot of
 * stack s + AHEAD is fetched, and the entry that slot names for stack s +
 * AHEAD / 2, so that stack s finds both in the cache (a million chains:
 * each a cache miss otherwise, two a stack). */
#define AHEAD 16u

static inline void fetch(const void *p)
{
#if defined(__GNUC__)
	__builtin_prefetch(p);
#else
	(void)p;
#endif
}

/* Adds the stacks of m that have buckets to the entries, which have room
 * for every stack of both sides. which: 0 = NEW, 1 = BASE. Returns 0 or
 * -ENOMEM. */
static int add_side(struct hp_diff *d, struct chain_index *t, const struct names *names,
		    const struct hp_model *m, int which)
{
	uint64_t ahead[AHEAD] = {0}; /* the chain hash of stack s at s % AHEAD */

	for (uint32_t s = 0; s < AHEAD && s < m->nstacks; s++)
		if (m->stacks[s].nbuckets) {
			ahead[s] = chain_hash(&names[which], m, s);
			if (t->slots)
				fetch(&t->slots[(size_t)ahead[s] & t->mask]);
		}
	for (uint32_t s = 0; s < m->nstacks; s++) {
		struct hp_diff_entry *e = NULL;
		const struct hp_values **side;
		struct hp_values *sum;
		uint64_t h;

		/* Hints only: the index may grow before those stacks come. */
		if (t->slots && s + AHEAD / 2 < m->nstacks && m->stacks[s + AHEAD / 2].nbuckets) {
			uint32_t slot = t->slots[(size_t)ahead[(s + AHEAD / 2) % AHEAD] & t->mask];
			if (slot)
				fetch(&d->entries[slot - 1].change);
		}
		h = ahead[s % AHEAD]; /* set when stack s has buckets */
		if (s + AHEAD < m->nstacks && m->stacks[s + AHEAD].nbuckets) {
			uint64_t later = chain_hash(&names[which], m, s + AHEAD);
			ahead[s % AHEAD] = later;
			if (t->slots)
				fetch(&t->slots[(size_t)later & t->mask]);
		}
		if (!m->stacks[s].nbuckets)
			continue;
		for (size_t k = (size_t)h & t->mask; t->slots && t->slots[k];
		     k = (k + 1) & t->mask) {
			struct hp_diff_entry *o = &d->entries[t->slots[k] - 1];
			if (entry_hash(o) == h &&
			    chain_equal(o->model, &names[o->model == m ? which : !which], o->stack,
					m, &names[which], s)) {
				e = o;
				break;
			}
		}
		if (!e) {
			if (d->nentries >= UINT32_MAX - 1)
				return -ENOMEM;
			e = &d->entries[d->nentries];
			memset(e, 0, sizeof *e);
			e->model = m;
			e->stack = s;
			e->base = e->new = &zeros;
			memcpy(&e->change, &h, sizeof h);
			if (index_add(t, d->entries, (uint32_t)d->nentries))
				return -ENOMEM;
			d->nentries++;
		}
		side = which ? &e->base : &e->new;
		if (*side == &zeros && !m->stacks[s].suppressed) {
			*side = &m->stacks[s].v; /* the chain's first stack of this side */
			continue;
		}
		/* A sum of this side's stacks, or a suppressed stack's figures
		 * without its blocks in use (the runtime's, as report counts
		 * them): zeros plus the figures, as they were always summed. */
		struct hp_values v = m->stacks[s].v;
		if (m->stacks[s].suppressed)
			v.inuse_bytes = v.inuse_objects = 0;
		if (!(sum = own_side(d, e, which)))
			return -ENOMEM;
		hp_values_add(sum, &v);
	}
	return 0;
}

/* An entry's rank: its absolute change, and its index (first seen first
 * among equals). 16 bytes, not the entry's 184: a million chains. */
struct ranked {
	double change;
	uint32_t order;
};

static int by_change(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->change != b->change)
		return a->change > b->change ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* r[i]'s sort key: its change's bits complemented (a change is an
 * absolute value, not negative: its bits rank as the number does), so
 * that the largest change has the smallest key. */
static uint64_t rank_key(const struct ranked *r)
{
	uint64_t bits;

	memcpy(&bits, &r->change, sizeof bits);
	return ~bits;
}

/* r[0..n), each order its index, into by_change's order: a stable radix
 * sort of the keys a byte at a time, least significant first, a byte
 * that all the keys share skipped (equal changes keep their order: the
 * first seen first). A million chains: 8 passes at most, where qsort
 * compares 20 million times. Allocates; qsort when out of memory. */
static void rank_sort(struct ranked *r, size_t n)
{
	size_t count[8][256] = {{0}};
	struct ranked *tmp, *from = r, *to;
	uint64_t first;

	if (n < 2)
		return;
	if (!(tmp = malloc(n * sizeof *tmp))) {
		hp_sort(r, n, sizeof *r, by_change);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = rank_key(&r[i]);
		for (unsigned b = 0; b < 8; b++)
			count[b][(k >> (8 * b)) & 0xff]++;
	}
	first = rank_key(&r[0]);
	to = tmp;
	for (unsigned b = 0; b < 8; b++) {
		size_t at = 0;
		if (count[b][(first >> (8 * b)) & 0xff] == n)
			continue; /* one byte for all: the order stays */
		for (unsigned v = 0; v < 256; v++) {
			size_t c = count[b][v];
			count[b][v] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[b][(rank_key(&from[i]) >> (8 * b)) & 0xff]++] = from[i];
		to = from;
		from = from == r ? tmp : r;
	}
	if (from != r)
		memcpy(r, from, n * sizeof *r);
	free(tmp);
}

/* In use at the peak: the peak figures as the in-use ones. */
static void at_peak(struct hp_values *v)
{
	v->inuse_bytes = v->peak_bytes;
	v->inuse_objects = v->peak_objects;
}

int hp_diff_build(struct hp_diff *d, const struct hp_model *base, const struct hp_model *new,
		  enum hp_metric metric)
{
	return hp_diff_build_at(d, base, 0, new, 0, metric);
}

int hp_diff_build_at(struct hp_diff *d, const struct hp_model *base, int base_at_peak,
		     const struct hp_model *new, int new_at_peak, enum hp_metric metric)
{
	struct chain_index t = {0};
	struct names names[2] = {{0}}; /* NEW's, BASE's */
	struct hp_strtab ids = {0};    /* their function names */
	struct hp_strtab lids = {0};   /* their locations' lists of names */
	struct ranked *r = NULL;
	size_t most;
	int ret;

	memset(d, 0, sizeof *d);
	d->base = base;
	d->new = new;
	d->metric = metric;
	/* In use: the runtime's suppressed blocks left out, as report counts
	 * them (hp_model_suppress; none when no suppression was applied). */
	d->base_total = base->total;
	d->base_total.inuse_bytes -= base->suppressed.inuse_bytes;
	d->base_total.inuse_objects -= base->suppressed.inuse_objects;
	d->new_total = new->total;
	d->new_total.inuse_bytes -= new->suppressed.inuse_bytes;
	d->new_total.inuse_objects -= new->suppressed.inuse_objects;
	most = base->nstacks + new->nstacks;
	d->entries = calloc(most ? most : 1, sizeof *d->entries);
	if (!d->entries) {
		ret = -ENOMEM;
		goto err;
	}
	ret = names_build(&names[0], new, &ids, &lids);
	if (!ret)
		ret = names_build(&names[1], base, &ids, &lids);
	if (!ret)
		ret = add_side(d, &t, names, new, 0);
	if (!ret)
		ret = add_side(d, &t, names, base, 1);
	/* Matched: the index and the names go before the ranking's arrays
	 * come. */
	index_free(&t);
	names_free(&names[0]);
	names_free(&names[1]);
	memset(names, 0, sizeof names);
	hp_strtab_free(&ids);
	hp_strtab_free(&lids);
	if (ret)
		goto err;
	if (base_at_peak)
		at_peak(&d->base_total);
	if (new_at_peak)
		at_peak(&d->new_total);
	for (size_t i = 0; i < d->nentries && (base_at_peak || new_at_peak); i++) {
		struct hp_diff_entry *e = &d->entries[i];
		struct hp_values *v;
		/* zeros stay zeros at the peak */
		if (base_at_peak && e->base != &zeros) {
			if (!(v = own_side(d, e, 1))) {
				ret = -ENOMEM;
				goto err;
			}
			at_peak(v);
		}
		if (new_at_peak && e->new != &zeros) {
			if (!(v = own_side(d, e, 0))) {
				ret = -ENOMEM;
				goto err;
			}
			at_peak(v);
		}
	}

	r = calloc(d->nentries ? d->nentries : 1, sizeof *r);
	if (!r) {
		ret = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < d->nentries; i++) {
		double fb, fn, unused;
		hp_diff_figures(d->entries[i].base, metric, &fb, &unused);
		hp_diff_figures(d->entries[i].new, metric, &fn, &unused);
		d->entries[i].change = fn - fb;
		r[i].change = fabs(d->entries[i].change);
		r[i].order = (uint32_t)i; /* nentries < UINT32_MAX (add_side) */
	}
	rank_sort(r, d->nentries);
	/* The entries into their ranks in place, one cycle of the
	 * permutation at a time (entry r[i].order goes to i); a placed
	 * one's order becomes its own index. */
	for (size_t i = 0; i < d->nentries; i++) {
		struct hp_diff_entry held;
		size_t j = i;
		if (r[i].order == i)
			continue;
		held = d->entries[i];
		while (r[j].order != i) {
			size_t from = r[j].order;
			d->entries[j] = d->entries[from];
			r[j].order = (uint32_t)j;
			j = from;
		}
		d->entries[j] = held;
		r[j].order = (uint32_t)j;
	}
	/* The room for both sides' stacks, given back past the entries. */
	if (d->nentries) {
		struct hp_diff_entry *fit = realloc(d->entries, d->nentries * sizeof *fit);
		if (fit)
			d->entries = fit;
	}
	ret = 0;
	goto out;

err:
	hp_diff_free(d);
out:
	free(r);
	names_free(&names[0]);
	names_free(&names[1]);
	hp_strtab_free(&ids);
	hp_strtab_free(&lids);
	index_free(&t);
	return ret;
}

void hp_diff_free(struct hp_diff *d)
{
	for (size_t i = 0; i < d->nsums; i++)
		free(d->sums[i]);
	free(d->sums);
	free(d->entries);
	memset(d, 0, sizeof *d);
}

static const char *metric_title(enum hp_metric m)
{
	switch (m) {
	case HP_METRIC_PEAK: return "peak: bytes in use at the global peak";
	case HP_METRIC_LEAKED: return "leaked: bytes in use at the snapshot (at exit: leaked)";
	case HP_METRIC_ALLOCATED: return "allocated: bytes allocated";
	case HP_METRIC_ALLOCATIONS: return "allocations: number of allocations";
	case HP_METRIC_TEMPORARY: return "temporary: allocations freed before their thread allocated again";
	default: return "?";
	}
}

/* A figure of the metric's unit: bytes human-readable ("1.2 KiB"),
 * objects grouped ("1,200 objects"); with a sign when signed. */
static const char *figure(char *buf, size_t cap, double v, int bytes, int sign)
{
	char t[32];

	if (bytes)
		hp_units_bytes(t, sizeof t, v);
	else
		snprintf(t, sizeof t, "%s %s", hp_units_count(buf, cap, v),
			 hp_estimate_i64(v) == 1 || hp_estimate_i64(v) == -1 ? "object" : "objects");
	snprintf(buf, cap, "%s%s", sign && hp_estimate_i64(v) >= 0 ? "+" : "", t);
	return buf;
}

/* The size as people read it first, then the exact figures for scripts:
 * "+1.2 KiB (+1200 bytes, +12 objects)" for a bytes metric, "+12
 * objects, +1.2 KiB (+12 objects, +1200 bytes)" for a count metric, with
 * signs when signed ("1 object": the unit's singular for one). */
static int print_figures(FILE *out, enum hp_metric m, double fig, double comp, int sign)
{
	int bytes_metric = hp_metric_is_bytes(m);
	const char *fu = bytes_metric ? "bytes" : "objects";
	const char *cu = bytes_metric ? "objects" : "bytes";
	double bytes = bytes_metric ? fig : comp;
	char h[48], k[48];
	int n = 0;
	long long f = (long long)hp_estimate_i64(fig), c = (long long)hp_estimate_i64(comp);
	long long b = (long long)hp_estimate_i64(bytes);

	hp_units_bytes(h, sizeof h, bytes);
	if (bytes_metric) {
		n += fprintf(out, "%s%s", sign && b >= 0 ? "+" : "", h);
	} else {
		hp_units_count(k, sizeof k, fig);
		n += fprintf(out, "%s%s object%s, %s%s", sign && f >= 0 ? "+" : "", k,
			     f == 1 || f == -1 ? "" : "s", sign && b >= 0 ? "+" : "", h);
	}
	return n + fprintf(out, sign ? " (%+lld %.*s, %+lld %.*s)" : " (%lld %.*s, %lld %.*s)", f,
			   (int)strlen(fu) - (f == 1 || f == -1), fu, c,
			   (int)strlen(cu) - (c == 1 || c == -1), cu);
}

/* A side's name after its figures ("  base    FIGURES  NAME"), on a line
 * of its own under them when the line would pass width (used columns
 * already). */
static void print_name(FILE *out, int used, const char *name, unsigned width)
{
	if (!name || !*name) {
		fputc('\n', out);
		return;
	}
	if (width && (size_t)used + 2 + strlen(name) > width)
		fprintf(out, "\n          %s\n", name);
	else
		fprintf(out, "  %s\n", name);
}

/* A chain's stack as the report shows one (report_int.h): the runtime's
 * frames below main left out, library runs folded, names shortened,
 * fitted to the width by cutting names only. */
static void print_frames(FILE *out, const struct hp_model *m, uint32_t stack, unsigned max,
			 unsigned width)
{
	struct hp_report_options ro = {.frames = max, .width = width};
	struct hp_report_frame *f;
	size_t n;

	if (!m->stacks[stack].depth) {
		fprintf(out, "      [no stack]\n");
		return;
	}
	f = hp_report_frames(m, stack, 0, &n);
	if (!f)
		return; /* out of memory: the stack is left out, the diff goes on */
	hp_report_print_frames(out, m, f, n, &ro, "      ");
	free(f);
}

/* The other figure beside the metric's: for leaked (and the count
 * metrics), the bytes at the peak; for peak, the bytes in use. One line,
 * "  peak    3.0 MiB -> 31.0 MiB: +28.0 MiB, +3 blocks". */
static void print_beside(FILE *out, const struct hp_diff *d)
{
	int peak = d->metric != HP_METRIC_PEAK;
	const struct hp_values *b = &d->base_total, *n = &d->new_total;
	double bb = peak ? b->peak_bytes : b->inuse_bytes, nb = peak ? n->peak_bytes : n->inuse_bytes;
	double bo = peak ? b->peak_objects : b->inuse_objects;
	double no = peak ? n->peak_objects : n->inuse_objects;
	char x[32], y[32], z[32];
	long long dc = (long long)hp_estimate_i64(no - bo);

	fprintf(out, "  %-8s%s -> %s: %s%s, %+lld block%s\n", peak ? "peak" : "in use",
		hp_units_bytes(x, sizeof x, bb), hp_units_bytes(y, sizeof y, nb),
		hp_estimate_i64(nb - bb) >= 0 ? "+" : "", hp_units_bytes(z, sizeof z, nb - bb), dc,
		dc == 1 || dc == -1 ? "" : "s");
}

int hp_diff_text(FILE *out, const struct hp_diff *d, const struct hp_diff_text_options *o)
{
	double bf, bc, nf, nc;
	size_t changed = 0, shown = 0;

	hp_diff_figures(&d->base_total, d->metric, &bf, &bc);
	hp_diff_figures(&d->new_total, d->metric, &nf, &nc);
	{
		/* The title, its tail on a second line when it would pass the width. */
		const char *tail = d->base->sampled || d->new->sampled
					   ? "NEW minus BASE; sampled figures are estimates"
					   : "NEW minus BASE";
		size_t len = strlen("heapprof diff: , ") + strlen(metric_title(d->metric)) + strlen(tail);
		fprintf(out, "heapprof diff: %s,%s%s\n", metric_title(d->metric),
			o->width && len > o->width ? "\n  " : " ", tail);
	}
	if (d->new->view_heap) { /* --heap: one custom heap's blocks (heapview.h) */
		char name[256];
		fputs("  heap    ", out);
		hp_text_fputs(hp_model_heap_name(d->new, d->new->view_heap, name, sizeof name), out);
		fputs(" alone (--heap): its blocks, its own peak\n", out);
	}
	fprintf(out, "  base    ");
	print_name(out, 10 + print_figures(out, d->metric, bf, bc, 0), o->base_name, o->width);
	fprintf(out, "  new     ");
	print_name(out, 10 + print_figures(out, d->metric, nf, nc, 0), o->new_name, o->width);
	fprintf(out, "  change  ");
	print_figures(out, d->metric, nf - bf, nc - bc, 1);
	fputc('\n', out);
	print_beside(out, d);

	for (size_t i = 0; i < d->nentries; i++) {
		hp_diff_figures(d->entries[i].base, d->metric, &bf, &bc);
		hp_diff_figures(d->entries[i].new, d->metric, &nf, &nc);
		changed += hp_estimate_i64(nf - bf) != 0 || hp_estimate_i64(nc - bc) != 0;
	}
	fprintf(out, "\n%zu of %zu stacks changed", changed, d->nentries);
	if (changed)
		fprintf(out, ", most changed first");
	fprintf(out, ":\n");
	for (size_t i = 0; i < d->nentries && (!o->top || shown < o->top); i++) {
		const struct hp_diff_entry *e = &d->entries[i];
		hp_diff_figures(e->base, d->metric, &bf, &bc);
		hp_diff_figures(e->new, d->metric, &nf, &nc);
		if (hp_estimate_i64(nf - bf) == 0 && hp_estimate_i64(nc - bc) == 0)
			continue;
		int used = fprintf(out, "%4zu. ", ++shown);
		used += print_figures(out, d->metric, nf - bf, nc - bc, 1);
		char x[48], y[48], was[160];
		snprintf(was, sizeof was, "(%s -> %s%s)",
			 figure(x, sizeof x, bf, hp_metric_is_bytes(d->metric), 0),
			 figure(y, sizeof y, nf, hp_metric_is_bytes(d->metric), 0),
			 e->model == d->base ? ", only in BASE"
			 : e->base->alloc_objects == 0 ? ", only in NEW" : "");
		print_name(out, used, was, o->width);
		print_frames(out, e->model, e->stack, o->frames, o->width);
	}
	return ferror(out) ? -EIO : 0;
}

int hp_diff_json(FILE *out, const struct hp_diff *d, unsigned top, const char *base_name,
		 const char *new_name)
{
	size_t shown = 0;
	char heap[256];

	fprintf(out, "{\n  \"by\": \"stack\",\n  \"metric\": \"%s\",\n  \"heap\": ",
		hp_metric_name(d->metric));
	hp_report_json_str(out, hp_model_heap_name(d->new, d->new->view_heap, heap, sizeof heap));
	fprintf(out, ",\n  \"base\": ");
	hp_report_json_str(out, base_name ? base_name : "");
	fprintf(out, ",\n  \"new\": ");
	hp_report_json_str(out, new_name ? new_name : "");
	fprintf(out, ",\n  \"base_totals\": ");
	hp_report_json_values(out, &d->base_total);
	fprintf(out, ",\n  \"new_totals\": ");
	hp_report_json_values(out, &d->new_total);
	fprintf(out, ",\n  \"stacks\": [");
	for (size_t i = 0; i < d->nentries && (!top || shown < top); i++) {
		const struct hp_diff_entry *e = &d->entries[i];
		double bf, bc, nf, nc;
		hp_diff_figures(e->base, d->metric, &bf, &bc);
		hp_diff_figures(e->new, d->metric, &nf, &nc);
		if (hp_estimate_i64(nf - bf) == 0 && hp_estimate_i64(nc - bc) == 0)
			continue;
		fprintf(out, "%s\n    {\"change\": %.0f, \"only_in\": %s, \"base\": ",
			shown++ ? "," : "", e->change,
			e->model == d->base ? "\"base\""
			: e->base->alloc_objects == 0 ? "\"new\""
						     : "null");
		hp_report_json_values(out, e->base);
		fprintf(out, ", \"new\": ");
		hp_report_json_values(out, e->new);
		fprintf(out, ",\n     \"stack\": ");
		hp_report_json_stack(out, e->model, e->stack);
		fputc('}', out);
	}
	fprintf(out, "%s]\n}\n", shown ? "\n  " : "");
	return ferror(out) ? -EIO : 0;
}
