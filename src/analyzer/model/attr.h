/*
 * attr.h - attribution, the model's side (issue 9): each bucket's type
 * (explicit, vtable, template, else unknown by size) and its origin
 * (context, thread, heap), from the capture's TAGS and the stacks' frames.
 * Internal to the model (model.c builds with it); the public view is
 * hp_mbucket.type/context/thread/heap and hp_model.types (model.h).
 *
 * Ordinary analyzer C: allocates, not thread-safe.
 */
#ifndef HP_ANALYZER_ATTR_H
#define HP_ANALYZER_ATTR_H

#include <stdint.h>

#include "../../common/strtab.h"
#include "../../common/table.h"

/* Only pointers to these: attr.h is included by model.c, which defines
 * what attr.c implements of model.h. */
struct hp_model;
struct hp_symbolizer;

struct hp_attr_state {
	struct hp_strtab keys;  /* "<source>\t<name>" per type, indexes m->types */
	struct hp_strpool pool; /* inferred names */
	size_t types_cap;
	/* What each location's frames name (a million stacks share far
	 * fewer locations): loc_type[l] is the name, ATTR_NONE when no frame
	 * names a type, NULL before the location is read. */
	const char **loc_type;
	size_t loc_type_cap;
	/* Type index of each inferred name (keyed by its interned pointer)
	 * and of each unknown size (the size, the top bit set for a mean). */
	struct hp_u64map by_name, by_size;
};

/* The type the innermost allocator template frame of locs[0..depth)
 * (innermost first, every symbolic frame, inlined ones first) names,
 * interned in st; NULL when none does, or out of memory. */
const char *hp_attr_infer(struct hp_attr_state *st, const struct hp_model *m,
			  const uint32_t *locs, uint32_t depth);

/* Fills every bucket's type, context, thread and heap, and m->types.
 * Returns 0 or -ENOMEM. */
int hp_attr_buckets(struct hp_attr_state *st, struct hp_model *m, struct hp_symbolizer *sym);

void hp_attr_free(struct hp_attr_state *st);

#endif
