/*
 * attr.c - each bucket's type and origin (see attr.h).
 *
 * A bucket's type, first found wins:
 *   1. its TYPE tag: explicit (the name given, a template's
 *      __PRETTY_FUNCTION__ naming its T), or vtable (the ELF symbol that
 *      holds the address, "vtable for X", names X; resolved once per tag);
 *   2. its stack's frames (hp_mstack.inferred, hp_mstack_inferred): the innermost allocator
 *      template frame, else string class frame (its characters), else the
 *      DWARF of the new-expression's frame (the pointer declared on the
 *      call's line) when the bucket's sizes fit that type;
 *   3. unknown, by object size: the bucket's size in a sampled capture
 *      (buckets are split by size), else its bytes over its objects
 *      allocated (a full capture's bucket may mix sizes: their mean).
 */
#include "attr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/sort.h"
#include "../../common/units.h"

#include "../../common/vec.h"
#include "../symbols/symbolize.h"
#include "../symbols/typename.h"
#include "model.h"

#define NAME_MAX_BYTES 1024

/* A location's entry in loc_type when none of its frames names a type. */
static const char ATTR_NONE[] = "";

/* The bytes of a string class's character type (what its buffer is an
 * array of), 0 when not one of the standard's. */
static uint64_t char_bytes(const char *type)
{
	if (!strcmp(type, "char") || !strcmp(type, "char8_t") || !strcmp(type, "signed char") ||
	    !strcmp(type, "unsigned char"))
		return 1;
	if (!strcmp(type, "char16_t"))
		return 2;
	if (!strcmp(type, "char32_t") || !strcmp(type, "wchar_t"))
		return 4;
	return 0;
}

/* The type location id's frames name (its innermost one that does: an
 * allocator template frame, or a string class's member), with its source
 * in *src; NULL when none does. Read once per location. */
static const char *location_type(struct hp_attr_state *st, const struct hp_model *m,
				 uint32_t id, int *src)
{
	const struct hp_location *l = &m->locations[id];
	char name[NAME_MAX_BYTES];
	size_t have = st->loc_type_cap;

	if (id >= have) {
		/* both arrays grown before the room is counted: one that could
		 * not grow leaves the other's extra room unused */
		size_t cap = have ? have * 2 : 64;
		uint8_t *src_grown;
		const char **type_grown;
		while (cap <= id)
			cap *= 2;
		if (!(src_grown = realloc(st->loc_src, cap)))
			return NULL;
		st->loc_src = src_grown;
		if (!(type_grown = realloc(st->loc_type, cap * sizeof *type_grown)))
			return NULL;
		st->loc_type = type_grown;
		memset(st->loc_type + have, 0, (cap - have) * sizeof *st->loc_type);
		memset(st->loc_src + have, 0, cap - have);
		st->loc_type_cap = cap;
	}
	if (!st->loc_type[id]) {
		st->loc_type[id] = ATTR_NONE;
		for (uint32_t s = 0; s < l->nsyms; s++) {
			int source = 0;
			if (hp_typename_from_frame(l->syms[s].function, name, sizeof name))
				source = HP_TYPESRC_TEMPLATE;
			else if (hp_typename_from_string_frame(l->syms[s].function, name,
							       sizeof name))
				source = HP_TYPESRC_STRING;
			if (!source)
				continue;
			const char *dup = hp_strpool_dup(&st->pool, name);
			if (!dup) {
				st->loc_type[id] = NULL; /* read again */
				return NULL;
			}
			st->loc_type[id] = dup;
			st->loc_src[id] = (uint8_t)source;
			break;
		}
	}
	*src = st->loc_src[id];
	return st->loc_type[id] == ATTR_NONE ? NULL : st->loc_type[id];
}

/* The type the DWARF names at the new-expression of location id (see
 * hp_attr_new), read on the first call for that location; NULL when out
 * of memory. */
static const struct hp_attr_new *location_new(struct hp_attr_state *st, const struct hp_model *m,
					      struct hp_symbolizer *sym, uint32_t id)
{
	const struct hp_location *l = &m->locations[id];
	struct hp_attr_new *n;
	char raw[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
	uint64_t elem = 0, cookie = 0;

	if (id >= st->loc_new_cap) {
		size_t cap = st->loc_new_cap ? st->loc_new_cap * 2 : 64;
		struct hp_attr_new *grown;
		while (cap <= id)
			cap *= 2;
		if (!(grown = realloc(st->loc_new, cap * sizeof *grown)))
			return NULL;
		memset(grown + st->loc_new_cap, 0, (cap - st->loc_new_cap) * sizeof *grown);
		st->loc_new = grown;
		st->loc_new_cap = cap;
	}
	n = &st->loc_new[id];
	if (n->state)
		return n;
	n->state = 1;
	/* The program's own code only: the runtime's libraries (libc's stdio
	 * buffers) are not read for it. */
	if (l->nsyms && l->syms[0].line &&
	    hp_model_frame_class(m, l, &l->syms[0]) == HP_FRAME_OWN &&
	    hp_symbolizer_new_type(sym, l->module, l->address, l->syms[0].file, l->syms[0].line,
				   raw, sizeof raw, &elem, &cookie)) {
		hp_typename_drop_defaults(name, sizeof name, raw);
		n->name = hp_strpool_dup(&st->pool, name);
		if (!n->name) { /* out of memory: read again for the next stack */
			n->state = 0;
			return NULL;
		}
		n->state = 2;
		n->elem = elem;
		n->cookie = cookie;
	}
	return n;
}

void hp_attr_infer(struct hp_attr_state *st, const struct hp_model *m, struct hp_symbolizer *sym,
		   const uint32_t *locs, uint32_t depth, uint32_t first_own,
		   struct hp_mstack *stack)
{
	for (uint32_t f = 0; f < depth; f++) {
		int src = 0;
		const char *t;
		if (locs[f] < st->loc_type_cap && st->loc_type[locs[f]] == ATTR_NONE)
			continue; /* read before: it names no type (location_type) */
		t = location_type(st, m, locs[f], &src);
		if (t) {
			stack->inferred = locs[f] + 1;
			stack->inferred_source = (uint8_t)src;
			return;
		}
	}
	/* The new-expression's own frame: the first past the allocator's,
	 * innermost (inlined) function first; read once per location. */
	if (sym && first_own < depth) {
		const struct hp_attr_new *n = location_new(st, m, sym, locs[first_own]);
		if (n && n->state == 2) {
			stack->inferred = locs[first_own] + 1;
			stack->inferred_source = HP_TYPESRC_NEW;
		}
	}
}

const char *hp_attr_stack_type(const struct hp_attr_state *st, const struct hp_mstack *stack,
			       uint64_t *elem, uint64_t *cookie)
{
	uint32_t l = stack->inferred - 1;
	const char *t;

	*elem = *cookie = 0;
	if (!stack->inferred)
		return NULL;
	if (stack->inferred_source == HP_TYPESRC_NEW) {
		*elem = st->loc_new[l].elem;
		*cookie = st->loc_new[l].cookie;
		return st->loc_new[l].name;
	}
	t = st->loc_type[l];
	if (stack->inferred_source == HP_TYPESRC_STRING)
		*elem = char_bytes(t);
	return t;
}

/* Whether a bucket's blocks can be arrays of elem bytes after cookie
 * bytes each: a sampled bucket's size, else its bytes allocated over its
 * objects (each block at least one element). */
static int fits(const struct hp_rec_bucket *r, uint64_t elem, uint64_t cookie)
{
	if (!elem)
		return 0;
	if (r->size)
		return r->size >= cookie + elem && (r->size - cookie) % elem == 0;
	return r->alloc_bytes >= r->alloc_count * (cookie + elem) &&
	       (r->alloc_bytes - r->alloc_count * cookie) % elem == 0;
}

/* The elements of objects blocks of bytes in all; never below 0 (a
 * capture's type whose cookie outweighs its blocks: damage). */
static double elements(double bytes, double objects, double cookie, double elem)
{
	double n = (bytes - objects * cookie) / elem;
	return n > 0 ? n : 0;
}

void hp_mbucket_elements(const struct hp_model *m, const struct hp_mbucket *b,
			 struct hp_values *out)
{
	struct hp_values vb;
	const struct hp_values *v = &vb;
	double e = (double)b->elem_bytes, c = (double)b->cookie_bytes;

	hp_mbucket_values(m, b, &vb);
	*out = *v;
	if (!b->elem_bytes)
		return;
	out->alloc_objects = elements(v->alloc_bytes, v->alloc_objects, c, e);
	out->free_objects = elements(v->free_bytes, v->free_objects, c, e);
	out->inuse_objects = elements(v->inuse_bytes, v->inuse_objects, c, e);
	out->peak_objects = elements(v->peak_bytes, v->peak_objects, c, e);
	out->temp_objects = elements(v->temp_bytes, v->temp_objects, c, e);
}

/* The index in m->types of (source, name), added on first sight. */
static int type_index(struct hp_attr_state *st, struct hp_model *m, enum hp_type_origin source,
		      const char *name, uint32_t *out)
{
	char key[NAME_MAX_BYTES + 4];
	int ret;

	snprintf(key, sizeof key, "%d\t%s", (int)source, name);
	ret = hp_strtab_intern(&st->keys, key, out);
	if (ret)
		return ret;
	if (*out < m->ntypes)
		return 0;
	if (hp_vec_grow(&m->types, &st->types_cap, m->ntypes + 1))
		return -ENOMEM;
	/* The name is the key's, past the source and the tab. */
	m->types[m->ntypes].name = strchr(hp_strtab_get(&st->keys, *out), '\t') + 1;
	m->types[m->ntypes].source = source;
	m->ntypes++;
	return 0;
}

/* The type a TYPE tag names, or 0 when it names none (a vtable address
 * in no symbol of the form "vtable for X"). */
static int tag_type(const struct hp_model *m, struct hp_symbolizer *sym, uint64_t id,
		    enum hp_type_origin *source, char *name, size_t cap, uint64_t *elem,
		    uint64_t *cookie)
{
	const struct hp_cap_tag *t = hp_capture_tag(m->cap, HP_TAG_TYPE, id);
	const struct hp_cap_module *mod;
	const char *s;

	if (!t)
		return 0;
	*elem = *cookie = 0;
	if (t->a == HP_TYPE_EXPLICIT && t->name[0]) {
		*source = HP_TYPESRC_EXPLICIT;
		/* An array type (heapprof_set_type_array): b, the cookie; c,
		 * the element bytes. */
		if (t->c) {
			*elem = t->c;
			*cookie = t->b;
		}
		hp_typename_explicit(name, cap, t->name);
		return 1;
	}
	if (t->a == HP_TYPE_VTABLE && (mod = hp_capture_module_of(m->cap, t->b)) != NULL &&
	    (s = hp_symbolizer_data_symbol(sym, (int)(mod - m->cap->modules), t->b)) != NULL &&
	    hp_typename_from_vtable(s, name, cap)) {
		*source = HP_TYPESRC_VTABLE;
		return 1;
	}
	return 0;
}

static const struct hp_capture *sort_cap;

static int by_thread_name(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	int c = strcmp(sort_cap->tags[HP_TAG_THREAD][a].name, sort_cap->tags[HP_TAG_THREAD][b].name);

	return c ? c : (a > b) - (a < b);
}

/* Marks the thread tags whose name another one has too. */
static int mark_shared_threads(struct hp_model *m)
{
	size_t n = m->cap->ntags[HP_TAG_THREAD], k = 0;
	uint64_t *ids;

	if (!n)
		return 0;
	m->thread_shared = calloc(n, 1);
	ids = malloc(n * sizeof *ids);
	if (!m->thread_shared || !ids) {
		free(ids);
		return -ENOMEM;
	}
	m->nthread_shared = n;
	for (uint64_t id = 1; id < n; id++)
		if (m->cap->tags[HP_TAG_THREAD][id].defined && m->cap->tags[HP_TAG_THREAD][id].name[0])
			ids[k++] = id;
	sort_cap = m->cap;
	hp_sort(ids, k, sizeof *ids, by_thread_name);
	for (size_t i = 1; i < k; i++) {
		if (strcmp(m->cap->tags[HP_TAG_THREAD][ids[i]].name,
			   m->cap->tags[HP_TAG_THREAD][ids[i - 1]].name) == 0)
			m->thread_shared[ids[i]] = m->thread_shared[ids[i - 1]] = 1;
	}
	free(ids);
	return 0;
}

int hp_attr_buckets(struct hp_attr_state *st, struct hp_model *m, struct hp_symbolizer *sym)
{
	size_t ntypetags = m->cap->ntags[HP_TAG_TYPE];
	uint32_t *by_tag = calloc(ntypetags ? ntypetags : 1, sizeof *by_tag); /* type + 1 */
	/* Each tag's element and cookie bytes. */
	uint64_t(*shape)[2] = calloc(ntypetags ? ntypetags : 1, sizeof *shape);
	char name[NAME_MAX_BYTES];
	int ret = 0;

	if (!by_tag || !shape || mark_shared_threads(m)) {
		free(by_tag);
		free(shape);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hp_mbucket *b = &m->buckets[i];
		const struct hp_rec_bucket *r = b->raw;
		const struct hp_cap_tag *o = hp_capture_tag(m->cap, HP_TAG_ORIGIN, r->origin_tag);
		const struct hp_mstack *stk = &m->stacks[b->stack];
		uint64_t inferred_elem, inferred_cookie;
		const char *inferred = hp_attr_stack_type(st, stk, &inferred_elem, &inferred_cookie);
		enum hp_type_origin source;

		if (o) {
			b->context = o->a;
			b->thread = o->b;
			b->heap = o->c;
		}
		if (r->type_tag && r->type_tag < ntypetags) {
			if (!by_tag[r->type_tag] &&
			    tag_type(m, sym, r->type_tag, &source, name, sizeof name,
				     &shape[r->type_tag][0], &shape[r->type_tag][1])) {
				uint32_t t;
				if ((ret = type_index(st, m, source, name, &t)) != 0)
					goto out;
				by_tag[r->type_tag] = t + 1;
			}
			if (by_tag[r->type_tag]) {
				b->type = by_tag[r->type_tag] - 1;
				b->elem_bytes = shape[r->type_tag][0];
				b->cookie_bytes = shape[r->type_tag][1];
				continue;
			}
		}
		/* A new-expression's type only for blocks that can be what it
		 * allocates: one T, or an array of T, with T's cookie or none
		 * (a pointer declared on the line of a call that allocates
		 * something else: the size tells). */
		if (inferred && stk->inferred_source == HP_TYPESRC_NEW) {
			uint64_t e = inferred_elem, c = inferred_cookie;
			if (fits(r, e, c)) {
				b->elem_bytes = e;
				b->cookie_bytes = c;
			} else if (c && fits(r, e, 0)) {
				b->elem_bytes = e; /* new T of a T with a destructor: no cookie */
			} else {
				inferred = NULL;
			}
		} else if (inferred) {
			b->elem_bytes = inferred_elem;
			b->cookie_bytes = inferred_cookie;
		}
		if (inferred) {
			/* Interned once per location (or stack, for a
			 * new-expression's): the pointer names it. */
			if (hp_u64map_get(&st->by_name, (uintptr_t)inferred, &b->type))
				continue;
			ret = type_index(st, m, (enum hp_type_origin)stk->inferred_source, inferred,
					 &b->type);
			if (!ret)
				ret = hp_u64map_put(&st->by_name, (uintptr_t)inferred, b->type);
		} else {
			uint64_t size = r->size ? r->size
						: r->alloc_count ? (r->alloc_bytes + r->alloc_count / 2) /
									r->alloc_count
								 : 0;
			/* Sizes below 2^63 (any real one) are named once. */
			int cached = !(size >> 63);
			uint64_t key = size | (r->size ? 0 : 1ull << 63);
			/* A sampled bucket has one size; a full one, a stack's
			 * blocks of any size: their mean. */
			char bytes[32];
			if (cached && hp_u64map_get(&st->by_size, key, &b->type))
				continue;
			hp_units_bytes(bytes, sizeof bytes, (double)size);
			snprintf(name, sizeof name, r->size ? "unknown (%s)" : "unknown (avg %s)",
				 bytes);
			ret = type_index(st, m, HP_TYPESRC_UNKNOWN, name, &b->type);
			if (!ret && cached)
				ret = hp_u64map_put(&st->by_size, key, b->type);
		}
		if (ret)
			goto out;
	}
out:
	free(by_tag);
	free(shape);
	return ret;
}

void hp_attr_free(struct hp_attr_state *st)
{
	hp_strtab_free(&st->keys);
	hp_strpool_free(&st->pool);
	free(st->loc_type);
	free(st->loc_src);
	free(st->loc_new);
	hp_u64map_free(&st->by_name);
	hp_u64map_free(&st->by_size);
	memset(st, 0, sizeof *st);
}

const char *hp_type_origin_name(enum hp_type_origin o)
{
	switch (o) {
	case HP_TYPESRC_EXPLICIT:
		return "explicit";
	case HP_TYPESRC_VTABLE:
		return "vtable";
	case HP_TYPESRC_TEMPLATE:
		return "template";
	case HP_TYPESRC_STRING:
		return "string";
	case HP_TYPESRC_NEW:
		return "new";
	default:
		return "unknown";
	}
}

#define MAX_CONTEXT_DEPTH 64 /* a cycle in a hostile capture stops here */

uint64_t hp_model_context_parent(const struct hp_model *m, uint64_t context)
{
	const struct hp_cap_tag *t = hp_capture_tag(m->cap, HP_TAG_CONTEXT, context);

	return t ? t->a : 0;
}

const char *hp_model_context_path(const struct hp_model *m, uint64_t context, char *buf,
				  size_t cap)
{
	uint64_t chain[MAX_CONTEXT_DEPTH];
	size_t n = 0, len = 0;

	if (!context) {
		snprintf(buf, cap, "(no context)");
		return buf;
	}
	for (uint64_t c = context; c && n < MAX_CONTEXT_DEPTH; c = hp_model_context_parent(m, c))
		chain[n++] = c;
	buf[0] = '\0';
	while (n-- > 0 && len < cap) {
		const struct hp_cap_tag *t = hp_capture_tag(m->cap, HP_TAG_CONTEXT, chain[n]);
		int w;
		if (t && t->name[0])
			w = snprintf(buf + len, cap - len, "%s%s", len ? " > " : "", t->name);
		else
			w = snprintf(buf + len, cap - len, "%scontext %" PRIu64, len ? " > " : "",
				     chain[n]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}

const char *hp_model_thread_name(const struct hp_model *m, uint64_t thread, char *buf, size_t cap)
{
	const struct hp_cap_tag *t = hp_capture_tag(m->cap, HP_TAG_THREAD, thread);

	if (!thread)
		snprintf(buf, cap, "(no thread)");
	else if (t && t->name[0] && thread < m->nthread_shared && m->thread_shared[thread])
		snprintf(buf, cap, "%s (tid %" PRIu64 ")", t->name, t->a);
	else if (t && t->name[0])
		snprintf(buf, cap, "%s", t->name);
	else if (t)
		snprintf(buf, cap, "tid %" PRIu64, t->a);
	else
		snprintf(buf, cap, "thread %" PRIu64, thread);
	return buf;
}

const char *hp_model_heap_name(const struct hp_model *m, uint64_t heap, char *buf, size_t cap)
{
	const struct hp_cap_tag *t = hp_capture_tag(m->cap, HP_TAG_HEAP, heap);

	if (!heap)
		snprintf(buf, cap, "malloc");
	else if (t && t->name[0])
		snprintf(buf, cap, "%s", t->name);
	else
		snprintf(buf, cap, "heap %" PRIu64, heap);
	return buf;
}

int64_t hp_model_find_heap(const struct hp_model *m, const char *name)
{
	char buf[256];

	if (strcmp(name, "malloc") == 0)
		return 0;
	for (uint64_t h = 1; h < m->cap->ntags[HP_TAG_HEAP]; h++)
		if (hp_capture_tag(m->cap, HP_TAG_HEAP, h) &&
		    strcmp(hp_model_heap_name(m, h, buf, sizeof buf), name) == 0)
			return (int64_t)h;
	return -1;
}

int hp_model_parse_heap(const struct hp_model *m, const char *value, int64_t *heap, char *err,
			size_t errlen)
{
	uint64_t ids[64];
	size_t n, used = 0;
	char name[256];

	if (strcmp(value, "all") == 0) {
		*heap = HP_HEAP_ALL;
		return 0;
	}
	*heap = hp_model_find_heap(m, value);
	if (*heap >= 0)
		return 0;
	used = (size_t)snprintf(err, errlen, "no heap named '%s' (its heaps: all", value);
	n = hp_model_heaps(m, ids, sizeof ids / sizeof *ids);
	for (size_t i = 0; i < n && i < sizeof ids / sizeof *ids && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, ", %s",
					 hp_model_heap_name(m, ids[i], name, sizeof name));
	if (used < errlen)
		snprintf(err + used, errlen - used, ")");
	return -ENOENT;
}

size_t hp_model_heaps(const struct hp_model *m, uint64_t *out, size_t cap)
{
	size_t n = 0;
	uint64_t last = 0;

	/* Heap ids are few: one pass per distinct id, in increasing order. */
	if (cap)
		out[0] = 0;
	n = 1;
	for (;;) {
		uint64_t next = UINT64_MAX;
		for (size_t i = 0; i < m->nbuckets; i++)
			if (m->buckets[i].heap > last && m->buckets[i].heap < next)
				next = m->buckets[i].heap;
		if (next == UINT64_MAX)
			break;
		if (n < cap)
			out[n] = next;
		n++;
		last = next;
	}
	return n;
}

int hp_model_heap_marked(const struct hp_model *m, int64_t sel)
{
	if (sel > 0)
		return 1;
	for (size_t i = 0; i < m->nbuckets; i++)
		if (m->buckets[i].heap)
			return 1;
	return 0;
}

const char *hp_model_heap_frame(const struct hp_model *m, uint64_t heap, char *buf, size_t cap)
{
	char name[256];

	snprintf(buf, cap, "[heap %s]", hp_model_heap_name(m, heap, name, sizeof name));
	return buf;
}
