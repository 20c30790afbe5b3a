/*
 * group.c - figures by dimension (see group.h).
 */
#include "group.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/vec.h"

static const char *const dim_names[HP_BY_COUNT] = {
	"stack", "function", "line", "module", "type", "context", "thread", "heap",
};

int hp_dim_parse(const char *name, enum hp_dim *out)
{
	for (int i = 0; i < HP_BY_COUNT; i++) {
		if (strcmp(name, dim_names[i]) == 0) {
			*out = (enum hp_dim)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *hp_dim_name(enum hp_dim d)
{
	return d < HP_BY_COUNT ? dim_names[d] : "?";
}

/* The frame a bucket is charged to by function, line and module: the
 * first symbolic frame of the program's own code (hp_model_frame_class),
 * the line that asked for the memory whatever library frames lie between
 * it and the allocator (std::, Rust's alloc::, libc), as report's sites
 * (report_site.c); else the innermost. Its location in *loc; NULL when the
 * stack is empty. */
static const struct hp_sym *charged(const struct hp_model *m, const struct hp_mbucket *b,
				    const struct hp_location **loc)
{
	const struct hp_mstack *st = &m->stacks[b->stack];

	if (!st->depth)
		return NULL;
	for (uint32_t i = 0; i < st->depth; i++) {
		const struct hp_location *l = &m->locations[hp_mstack_location(st, i)];
		for (uint32_t k = 0; k < l->nsyms; k++) {
			if (hp_model_frame_class(m, l, &l->syms[k]) == HP_FRAME_OWN) {
				*loc = l;
				return &l->syms[k];
			}
		}
	}
	*loc = &m->locations[hp_mstack_location(st, 0)];
	return &(*loc)->syms[0];
}

const char *hp_group_key(const struct hp_model *m, const struct hp_mbucket *b, enum hp_dim dim,
			 char *buf, size_t cap, const char **source)
{
	const struct hp_location *l = NULL;
	const struct hp_sym *sym;
	char where[512];

	if (source)
		*source = NULL;
	switch (dim) {
	case HP_BY_FUNCTION:
		sym = charged(m, b, &l);
		return sym ? sym->function : "(no stack)";
	case HP_BY_LINE:
		sym = charged(m, b, &l);
		if (!sym)
			return "(no stack)";
		if (sym->file[0] && sym->line)
			snprintf(buf, cap, "%s %s:%u", sym->function, sym->file, sym->line);
		else
			snprintf(buf, cap, "%s %s", sym->function,
				 hp_location_where(m, l, where, sizeof where));
		return buf;
	case HP_BY_MODULE:
		sym = charged(m, b, &l);
		return sym && l->module >= 0 ? m->modules[l->module].name : "(no module)";
	case HP_BY_TYPE:
		if (source)
			*source = hp_type_origin_name(m->types[b->type].source);
		return m->types[b->type].name;
	case HP_BY_CONTEXT:
		return hp_model_context_path(m, b->context, buf, cap);
	case HP_BY_THREAD:
		return hp_model_thread_name(m, b->thread, buf, cap);
	case HP_BY_HEAP:
		return hp_model_heap_name(m, b->heap, buf, cap);
	default:
		return "?";
	}
}

/* The row of key (and source), added on first sight. */
static int row_of(struct hp_groups *g, const char *key, const char *source, size_t *out)
{
	char k[2048];
	uint32_t i;

	/* A type's source is part of its key: one name, two sources, two rows. */
	snprintf(k, sizeof k, "%s%s%s", key, source ? "\t" : "", source ? source : "");
	if (hp_strtab_intern(&g->keys, k, &i))
		return -ENOMEM;
	if (i == g->n) {
		if (hp_vec_grow(&g->rows, &g->cap, g->n + 1))
			return -ENOMEM;
		memset(&g->rows[g->n], 0, sizeof g->rows[g->n]);
		g->rows[g->n].source = source;
		g->n++;
	}
	*out = i;
	return 0;
}

static int by_rank(const void *pa, const void *pb)
{
	const struct hp_group_row *a = pa, *b = pb;

	if (a->v.peak_bytes != b->v.peak_bytes)
		return a->v.peak_bytes > b->v.peak_bytes ? -1 : 1;
	if (a->v.alloc_bytes != b->v.alloc_bytes)
		return a->v.alloc_bytes > b->v.alloc_bytes ? -1 : 1;
	if (a->v.inuse_bytes != b->v.inuse_bytes)
		return a->v.inuse_bytes > b->v.inuse_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

#define MAX_CONTEXT_DEPTH 64

int hp_groups_build(struct hp_groups *g, const struct hp_model *m, enum hp_dim dim)
{
	char buf[2048];
	size_t r;

	memset(g, 0, sizeof *g);
	g->dim = dim;
	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		struct hp_values bv;
		const char *source, *key;

		if (b->heap != m->view_heap && dim != HP_BY_HEAP)
			continue;
		/* The runtime's one-off allocations (hp_model_suppress): not in
		 * these views, as not in the report's figures in use. */
		if (m->stacks[b->stack].suppressed)
			continue;
		key = hp_group_key(m, b, dim, buf, sizeof buf, &source);
		if (row_of(g, key, source, &r))
			goto nomem;
		hp_mbucket_values(m, b, &bv);
		hp_values_add(&g->rows[r].v, &bv);
		hp_values_add(&g->rows[r].self, &bv);
		{
			struct hp_values e;
			hp_mbucket_elements(m, b, &e);
			hp_values_add(&g->rows[r].elems, &e);
			g->rows[r].has_elems |= b->elem_bytes != 0;
		}
		if (dim != HP_BY_CONTEXT || !b->context)
			continue;
		/* The parents' totals include their children's. */
		uint64_t c = hp_model_context_parent(m, b->context);
		for (int d = 0; c && d < MAX_CONTEXT_DEPTH; d++) {
			if (row_of(g, hp_model_context_path(m, c, buf, sizeof buf), NULL, &r))
				goto nomem;
			hp_values_add(&g->rows[r].v, &bv);
			c = hp_model_context_parent(m, c);
		}
	}
	for (size_t i = 0; i < g->n; i++) {
		const char *k = hp_strtab_get(&g->keys, (uint32_t)i);
		char *tab;
		g->rows[i].key = k;
		/* The key without its source. */
		if (g->rows[i].source && (tab = strrchr(k, '\t')) != NULL)
			*tab = '\0';
	}
	if (dim == HP_BY_HEAP) {
		for (size_t h = 0; h < m->snap->nheaps; h++) {
			const struct hp_rec_heap_peak *p = &m->snap->heaps[h];
			if (!p->heap)
				continue;
			if (row_of(g, hp_model_heap_name(m, p->heap, buf, sizeof buf), NULL, &r))
				goto nomem;
			g->rows[r].key = hp_strtab_get(&g->keys, (uint32_t)r);
			g->rows[r].has_heap_peak = 1;
			g->rows[r].heap_peak_bytes = p->peak_bytes;
			g->rows[r].heap_peak_count = p->peak_count;
			g->rows[r].heap_peak_time_ns = p->peak_time_ns;
			g->rows[r].heap_resets = p->resets;
		}
	}
	hp_sort(g->rows, g->n, sizeof *g->rows, by_rank);
	return 0;
nomem:
	hp_groups_free(g);
	return -ENOMEM;
}

void hp_groups_free(struct hp_groups *g)
{
	free(g->rows);
	hp_strtab_free(&g->keys);
	memset(g, 0, sizeof *g);
}

void hp_group_heap_total(const struct hp_model *m, struct hp_values *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < m->nbuckets; i++)
		if (m->buckets[i].heap == m->view_heap && !m->stacks[m->buckets[i].stack].suppressed) {
			struct hp_values bv;
			hp_mbucket_values(m, &m->buckets[i], &bv);
			hp_values_add(out, &bv);
		}
}

void hp_group_typed(const struct hp_model *m, double *inuse_bytes, double *peak_bytes)
{
	*inuse_bytes = *peak_bytes = 0;
	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		struct hp_values bv;
		if (b->heap != m->view_heap || m->stacks[b->stack].suppressed ||
		    m->types[b->type].source == HP_TYPESRC_UNKNOWN)
			continue;
		hp_mbucket_values(m, b, &bv);
		*inuse_bytes += bv.inuse_bytes;
		*peak_bytes += bv.peak_bytes;
	}
}

void hp_group_typed_by_source(const struct hp_model *m, double inuse_bytes[HP_TYPESRC_COUNT],
			      double peak_bytes[HP_TYPESRC_COUNT])
{
	for (int k = 0; k < HP_TYPESRC_COUNT; k++)
		inuse_bytes[k] = peak_bytes[k] = 0;
	for (size_t i = 0; i < m->nbuckets; i++) {
		const struct hp_mbucket *b = &m->buckets[i];
		struct hp_values bv;
		unsigned src = (unsigned)m->types[b->type].source;
		if (b->heap != m->view_heap || m->stacks[b->stack].suppressed ||
		    src >= HP_TYPESRC_COUNT)
			continue;
		hp_mbucket_values(m, b, &bv);
		inuse_bytes[src] += bv.inuse_bytes;
		peak_bytes[src] += bv.peak_bytes;
	}
}

int hp_group_context_chain(const struct hp_model *m, uint64_t context, uint64_t *out, int max)
{
	int n = 0;

	for (uint64_t c = context; c && n < max; c = hp_model_context_parent(m, c))
		out[n++] = c;
	for (int i = 0; i < n / 2; i++) {
		uint64_t t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}
