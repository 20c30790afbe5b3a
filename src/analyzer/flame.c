/*
 * flame.c - the flame graph's merged tree (see flame.h; the SVG is written
 * by flame_svg.c).
 *
 * Building takes each stack's buckets summed (the model's hp_mstack.v: a
 * sampled capture has one bucket per allocation size), then walks every
 * stack once from the root, finding each child in one hash index keyed by
 * (parent, frame) (table.h). A frame's
 * hash is computed once per symbolic frame of a location, not once per
 * stack, so a stack costs one probe per frame and no string hashing.
 */
#include "flame_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/sort.h"
#include "../common/vec.h"
#include "group.h"

static int same_str(const char *a, const char *b)
{
	return a == b || strcmp(a, b) == 0;
}

static int add_node(struct hp_flame *f, const struct node *n, uint32_t *out)
{
	if (f->n >= NONE - 1 || hp_vec_grow(&f->nodes, &f->cap, f->n + 1))
		return -ENOMEM;
	f->nodes[f->n] = *n;
	*out = (uint32_t)f->n++;
	return 0;
}

/* The child of parent for one symbolic frame (sym_hash: its function, file,
 * module and inlined flag hashed), created when missing. */
static int child_of(struct hp_flame *f, uint32_t parent, const struct hp_sym *s, int module,
		    uint64_t module_offset, uint64_t sym_hash, uint32_t *out)
{
	uint64_t h = hp_hash_u64(sym_hash ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ULL));
	struct hp_hindex_probe it;
	struct node n = {0};
	uint32_t i;
	int ret;

	hp_hindex_probe(&f->index, h, &it);
	while ((i = hp_hindex_next(&f->index, &it)) != HP_HINDEX_NONE) {
		const struct node *c = &f->nodes[i];
		if (c->parent == parent && c->module == module && c->inlined == !!s->inlined &&
		    same_str(c->function, s->function) && same_str(c->file, s->file)) {
			*out = i;
			return 0;
		}
	}
	n.function = s->function;
	n.file = s->file;
	n.module = module;
	n.module_offset = module_offset;
	n.parent = parent;
	n.depth = f->nodes[parent].depth + 1;
	n.inlined = !!s->inlined;
	if ((ret = add_node(f, &n, out)) < 0)
		return ret;
	return hp_hindex_add(&f->index, h, *out);
}

static void add_line(struct node *n, uint32_t line)
{
	if (!line)
		return;
	for (unsigned i = 0; i < n->nlines; i++)
		if (n->lines[i] == line)
			return;
	if (n->nlines < MAX_LINES)
		n->lines[n->nlines++] = line;
	else
		n->more_lines = 1;
}

static uint64_t sym_hash(const struct hp_sym *s, int module)
{
	uint64_t h = hp_hash_str(hp_hash_str(HP_HASH_STR_SEED, s->function) * 31, s->file);
	return hp_hash_u64(h ^ ((uint64_t)(uint32_t)module << 1) ^ !!s->inlined);
}

struct kid {
	uint32_t parent, node;
	double value;
	const char *function;
};

/* Siblings together, the largest first; equal values by name, then by
 * creation, so that a capture always draws the same. */
static int by_parent_value(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	int c;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	if ((c = strcmp(x->function, y->function)))
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int sort_children(struct hp_flame *f)
{
	size_t nk = f->n - 1;
	struct kid *k = calloc(nk ? nk : 1, sizeof *k);

	f->order = calloc(nk ? nk : 1, sizeof *f->order);
	if (!k || !f->order) {
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 1; i < f->n; i++)
		k[i - 1] = (struct kid){f->nodes[i].parent, (uint32_t)i, f->nodes[i].value,
					f->nodes[i].function};
	hp_sort(k, nk, sizeof *k, by_parent_value);
	for (size_t i = 0; i < nk; i++) {
		struct node *p = &f->nodes[k[i].parent];
		if (!p->nkids)
			p->kids = (uint32_t)i;
		p->nkids++;
		f->order[i] = k[i].node;
	}
	free(k);
	return 0;
}

/* Adds v along a stack under node cur: outermost frame first (frames:
 * hp_frames_shown, room for every symbolic frame of the stack). */
static int add_stack(struct hp_flame *f, const struct hp_mstack *st, double v, uint32_t cur,
		     const size_t *sym_base, const uint64_t *hashes, int all,
		     struct hp_shown_frame *frames)
{
	static const struct hp_sym no_stack = {"[no stack]", "", 0, 0};
	const struct hp_model *m = f->m;
	size_t n = hp_frames_shown(m, st, all, frames);
	int ret;

	if (!n) {
		if ((ret = child_of(f, cur, &no_stack, -1, 0, sym_hash(&no_stack, -1), &cur)))
			return ret;
		f->nodes[cur].value += v;
		return 0;
	}
	for (size_t i = n; i-- > 0;) {
		uint32_t li = frames[i].loc, j = frames[i].sym;
		const struct hp_location *l = &m->locations[li];
		ret = child_of(f, cur, &l->syms[j], l->module, l->module_offset,
			       hashes[sym_base[li] + j], &cur);
		if (ret)
			return ret;
		f->nodes[cur].value += v;
		add_line(&f->nodes[cur], l->syms[j].line);
	}
	return 0;
}

int hp_flame_build(const struct hp_model *m, enum hp_metric metric, struct hp_flame **out)
{
	return hp_flame_build_by(m, metric, HP_BY_STACK, out);
}

int hp_flame_build_by(const struct hp_model *m, enum hp_metric metric, int dim,
		      struct hp_flame **out)
{
	return hp_flame_build_all(m, metric, dim, 0, out);
}

/* Adds the root frame named key under node parent with value v; *cur is
 * the frame. */
static int add_root(struct hp_flame *f, uint32_t parent, const char *key, double v,
		    uint32_t *cur)
{
	uint32_t k;
	int ret;

	if (hp_strtab_intern(&f->keys, key, &k))
		return -ENOMEM;
	struct hp_sym root_sym = {hp_strtab_get(&f->keys, k), "", 0, 0};
	if ((ret = child_of(f, parent, &root_sym, -1, 0, sym_hash(&root_sym, -1), cur)))
		return ret;
	f->nodes[*cur].value += v;
	return 0;
}

static int build(const struct hp_model *m, enum hp_metric metric, int dim, int all,
		 int64_t heap, struct hp_flame **out);

int hp_flame_build_all(const struct hp_model *m, enum hp_metric metric, int dim, int all,
		       struct hp_flame **out)
{
	return build(m, metric, dim, all, 0, out);
}

int hp_flame_build_heap(const struct hp_model *m, enum hp_metric metric, int dim, int64_t heap,
			int all_frames, struct hp_flame **out)
{
	return build(m, metric, dim, all_frames, heap, out);
}

/* The tree of the blocks of heap, every frame kept when all. */
static int build(const struct hp_model *m, enum hp_metric metric, int dim, int all,
		 int64_t heap, struct hp_flame **out)
{
	int marked = hp_model_heap_marked(m, heap);
	struct hp_flame *f = calloc(1, sizeof *f);
	size_t *sym_base = NULL, nsyms = 0, maxsyms = 0;
	struct hp_shown_frame *frames = NULL;
	uint64_t *hashes = NULL;
	struct node root = {.function = "all", .file = "", .module = -1, .parent = NONE};
	uint32_t cur;
	int ret = -ENOMEM;

	if (!f)
		return -ENOMEM;
	f->m = m;
	f->metric = metric;
	sym_base = calloc(m->nlocations + 1, sizeof *sym_base);
	if (!sym_base || add_node(f, &root, &cur) < 0)
		goto err;
	for (size_t l = 0; l < m->nlocations; l++) {
		sym_base[l] = nsyms;
		nsyms += m->locations[l].nsyms;
	}
	sym_base[m->nlocations] = nsyms;
	if (!(hashes = calloc(nsyms ? nsyms : 1, sizeof *hashes)))
		goto err;
	for (size_t s = 0; s < m->nstacks; s++) {
		size_t k = 0;
		for (uint32_t i = 0; i < m->stacks[s].depth; i++)
			k += m->locations[hp_mstack_location(&m->stacks[s], i)].nsyms;
		if (k > maxsyms)
			maxsyms = k;
	}
	if (!(frames = calloc(maxsyms + 1, sizeof *frames)))
		goto err;
	for (size_t l = 0; l < m->nlocations; l++)
		for (uint32_t j = 0; j < m->locations[l].nsyms; j++)
			hashes[sym_base[l] + j] =
				sym_hash(&m->locations[l].syms[j], m->locations[l].module);

	/* By bucket: under root frames of its heap ("[heap arena]", when the
	 * model has a custom heap's blocks) and of its key in dim. */
	if (dim != HP_BY_STACK || marked) {
		for (size_t b = 0; b < m->nbuckets; b++) {
			const struct hp_mbucket *bk = &m->buckets[b];
			struct hp_values bv;
			double v;
			char buf[2048];

			hp_mbucket_values(m, bk, &bv);
			v = hp_values_metric(&bv, metric);

			if (!(v > 0) || !hp_heap_selected(heap, bk->heap))
				continue;
			f->nodes[0].value += v;
			cur = 0;
			if (marked && (ret = add_root(f, cur, hp_model_heap_frame(m, bk->heap, buf,
										   sizeof buf),
						      v, &cur)))
				goto err;
			/* By context, the enclosing contexts first: they nest as
			 * frames ("frame" holding "frame > layout"). */
			if (dim == HP_BY_CONTEXT) {
				uint64_t chain[HP_GROUP_MAX_CONTEXT_DEPTH];
				int n = hp_group_context_chain(m, bk->context, chain,
							       HP_GROUP_MAX_CONTEXT_DEPTH);
				for (int i = 0; i + 1 < n; i++)
					if ((ret = add_root(f, cur,
							    hp_model_context_path(m, chain[i], buf,
										  sizeof buf),
							    v, &cur)))
						goto err;
			}
			if (dim != HP_BY_STACK &&
			    (ret = add_root(f, cur,
					    hp_group_key(m, bk, (enum hp_dim)dim, buf, sizeof buf, NULL),
					    v, &cur)))
				goto err;
			if ((ret = add_stack(f, &m->stacks[bk->stack], v, cur, sym_base, hashes, all, frames)))
				goto err;
		}
		goto built;
	}
	for (size_t s = 0; s < m->nstacks; s++) {
		const struct hp_mstack *st = &m->stacks[s];
		double v = hp_values_metric(&st->v, metric); /* its buckets' sum */

		if (!(v > 0)) /* nothing for this metric (or NaN from a broken estimate) */
			continue;
		f->nodes[0].value += v;
		if ((ret = add_stack(f, st, v, 0, sym_base, hashes, all, frames)))
			goto err;
	}
built:
	if ((ret = sort_children(f)))
		goto err;
	hp_hindex_free(&f->index); /* only needed while merging */
	free(sym_base);
	free(hashes);
	free(frames);
	*out = f;
	return 0;

err:
	free(sym_base);
	free(hashes);
	free(frames);
	hp_flame_free(f);
	return ret;
}

void hp_flame_free(struct hp_flame *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->order);
	hp_hindex_free(&f->index);
	hp_strtab_free(&f->keys);
	free(f);
}

double hp_flame_total(const struct hp_flame *f)
{
	return f->nodes[0].value;
}

