/*
 * attr.h - attribution, the model's side (issue 9): each bucket's type
 * (explicit, vtable, template, string, new, else unknown by size) and its origin
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
struct hp_mstack;
struct hp_symbolizer;

/* A location's new-expression type: state 0 not read yet, 1 none, 2 name
 * (interned in hp_attr_state.pool) with its element and cookie bytes. */
struct hp_attr_new {
	const char *name;
	uint64_t elem, cookie;
	int state;
};

struct hp_attr_state {
	struct hp_strtab keys;  /* "<source>\t<name>" per type, indexes m->types */
	struct hp_strpool pool; /* inferred names */
	size_t types_cap;
	/* What each location's frames name (a million stacks share far
	 * fewer locations): loc_type[l] is the name, ATTR_NONE when no frame
	 * names a type, NULL before the location is read. */
	const char **loc_type;
	uint8_t *loc_src; /* then its source (HP_TYPESRC_*), as many as loc_type */
	size_t loc_type_cap;
	/* The new-expression's type read from the DWARF at each location
	 * (hp_attr_infer's first_own frame), once per location: a million
	 * stacks through one new-expression ask the DWARF once. */
	struct hp_attr_new *loc_new;
	size_t loc_new_cap;
	/* Type index of each inferred name (keyed by its interned pointer)
	 * and of each unknown size (the size, the top bit set for a mean). */
	struct hp_u64map by_name, by_size;
};

/* Fills stack's inferred type from its frames locs[0..depth) (innermost
 * first, every symbolic frame, inlined ones first), the first that names
 * one (the stack keeps that location's index; st its type): an allocator template frame (HP_TYPESRC_TEMPLATE),
 * a string class's member (HP_TYPESRC_STRING: its character type); else
 * the DWARF of the first frame past the allocator's, first_own, at the
 * new-expression (HP_TYPESRC_NEW, sym's hp_symbolizer_new_type; sym may
 * be NULL). Leaves it NULL when none does, or out of memory. */
void hp_attr_infer(struct hp_attr_state *st, const struct hp_model *m, struct hp_symbolizer *sym,
		   const uint32_t *locs, uint32_t depth, uint32_t first_own,
		   struct hp_mstack *stack);

/* What hp_mstack_inferred returns (model.h), from st's locations. */
const char *hp_attr_stack_type(const struct hp_attr_state *st, const struct hp_mstack *stack,
			       uint64_t *elem, uint64_t *cookie);

/* Fills every bucket's type, context, thread and heap, and m->types.
 * Returns 0 or -ENOMEM. */
int hp_attr_buckets(struct hp_attr_state *st, struct hp_model *m, struct hp_symbolizer *sym);

void hp_attr_free(struct hp_attr_state *st);

#endif
