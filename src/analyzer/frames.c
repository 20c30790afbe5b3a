/*
 * frames.c - which frames of a call stack a reader is shown (frames.h).
 */
#include "frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/vec.h"

#define NAME_CAP 4096 /* a shown name's bytes at most (hp_name_display's) */

size_t hp_frames_count(const struct hp_model *m, const struct hp_mstack *st)
{
	size_t n = 0;

	for (uint32_t i = 0; i < st->depth; i++)
		n += m->locations[hp_mstack_location(st, i)].nsyms;
	return n;
}

size_t hp_frames_shown(const struct hp_model *m, const struct hp_mstack *st, int all,
		       struct hp_shown_frame *out)
{
	size_t n = 0;

	for (uint32_t i = 0; i < st->depth; i++) {
		uint32_t loc = hp_mstack_location(st, i);
		const struct hp_location *l = &m->locations[loc];
		for (uint32_t k = 0; k < l->nsyms; k++) {
			unsigned marks;
			/* A model's location has its classes and marks (model.h):
			 * read here, not through the calls (a million stacks of
			 * ~23 frames ask them of a few locations). */
			enum hp_frame_class cls =
				l->classes ? (enum hp_frame_class)(l->classes[k] & HP_SYM_CLASS)
					   : hp_model_frame_class(m, l, &l->syms[k]);
			out[n++] = (struct hp_shown_frame){loc, k, cls};
			if (all)
				continue;
			marks = hp_location_marks(l, k); /* once per location (model.h) */
			if (marks & HP_SYM_MAIN)
				goto outside_main; /* what is outside main is the runtime's */
			if (marks & HP_SYM_RUST_START) {
				/* Rust's runtime calling the program's main: cut
				 * after the last frame of the program's own */
				size_t with = n--;
				while (n > 0 && out[n - 1].cls != HP_FRAME_OWN)
					n--;
				if (!n) /* std's own start-up: up to its start */
					n = with;
				goto outside_main;
			}
		}
	}
	/* A thread's stack: what is outside the last frame of the program's
	 * own, when it reaches the runtime (start_thread, clone3), is the
	 * thread library's way to it (std::thread's, glibc's). */
	if (!all && n && out[n - 1].cls == HP_FRAME_ENTRY) {
		size_t last_own = n;
		while (last_own > 0 && out[last_own - 1].cls != HP_FRAME_OWN)
			last_own--;
		if (last_own)
			n = last_own;
	}
outside_main:
	if (!all) { /* the runtime's frames left (_start, a thread without frames of its own) */
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (out[i].cls != HP_FRAME_ENTRY)
				out[k++] = out[i];
		n = k;
	}
	return n;
}

/* --- names ------------------------------------------------------------ */

/* Adds name (the model's, or one asked for later) with what it is shown
 * as: display, its hp_name_display form. */
static int add_name(struct hp_frame_names *n, const char *name, const char *display,
		    uint32_t *out)
{
	uint32_t i, d;

	if (hp_strtab_intern(&n->names, name, &i) || hp_strtab_intern(&n->shown, display, &d) ||
	    hp_vec_grow(&n->as, &n->as_cap, (size_t)i + 1))
		return -ENOMEM;
	n->as[i] = d;
	*out = i;
	return 0;
}

int hp_frame_names_build(struct hp_frame_names *n, const struct hp_model *m, int full_names)
{
	struct hp_strtab displays = {0}; /* the hp_name_display forms met */
	uint32_t *first = NULL;          /* per display: the shortened form of its first own name */
	uint8_t *mixed = NULL;           /* per display: 0 none, 1 one own name, 2 two that differ */
	uint32_t *disp = NULL, *shrt = NULL; /* per name: its display, its shortened form */
	uint8_t *own = NULL;             /* per name: a frame of the program's own code has it */
	struct hp_strtab shorts = {0};
	size_t first_cap = 0, mixed_cap = 0, disp_cap = 0, shrt_cap = 0, own_cap = 0;
	char *buf = malloc(NAME_CAP);
	int ret = -ENOMEM;

	memset(n, 0, sizeof *n);
	n->full = full_names;
	if (!buf)
		return -ENOMEM;
	/* Every name once, with its display and shortened forms, and whether
	 * the program's own code has it (model.h hp_model_frame_class). */
	for (size_t l = 0; l < m->nlocations; l++) {
		const struct hp_location *loc = &m->locations[l];
		for (uint32_t k = 0; k < loc->nsyms; k++) {
			const char *fn = loc->syms[k].function;
			size_t before = n->names.count;
			uint32_t i, d, sh;
			if (hp_strtab_intern(&n->names, fn, &i))
				goto out;
			if (full_names) {
				if (i < before)
					continue;
				if (hp_strtab_intern(&n->shown, fn, &d) ||
				    hp_vec_grow(&n->as, &n->as_cap, (size_t)i + 1))
					goto out;
				n->as[i] = d;
				continue;
			}
			if (i >= before) {
				if (hp_strtab_intern(&displays, hp_name_display(buf, NAME_CAP, fn), &d) ||
				    hp_strtab_intern(&shorts, hp_name_shorten(buf, NAME_CAP, fn), &sh) ||
				    hp_vec_grow(&disp, &disp_cap, (size_t)i + 1) ||
				    hp_vec_grow(&shrt, &shrt_cap, (size_t)i + 1) ||
				    hp_vec_grow(&own, &own_cap, (size_t)i + 1))
					goto out;
				disp[i] = d;
				shrt[i] = sh;
				own[i] = 0;
			}
			if (hp_model_frame_class(m, loc, &loc->syms[k]) == HP_FRAME_OWN)
				own[i] = 1;
		}
	}
	if (full_names) {
		ret = 0;
		goto out;
	}
	/* The program's own functions that one display would name alike. */
	if (hp_vec_grow(&first, &first_cap, displays.count + 1) ||
	    hp_vec_grow(&mixed, &mixed_cap, displays.count + 1))
		goto out;
	memset(mixed, 0, displays.count + 1);
	for (uint32_t i = 0; i < n->names.count; i++) {
		if (!own[i])
			continue;
		if (!mixed[disp[i]]) {
			first[disp[i]] = shrt[i];
			mixed[disp[i]] = 1;
		} else if (first[disp[i]] != shrt[i]) {
			mixed[disp[i]] = 2;
		}
	}
	/* What each is shown as: its display, or, for the program's own
	 * overloads, its shortened form (the library's overloads, push_back's
	 * two, read as one name: they are not what a reader tells apart). */
	for (uint32_t i = 0; i < n->names.count; i++) {
		const char *s = own[i] && mixed[disp[i]] == 2 ? hp_strtab_get(&shorts, shrt[i])
							       : hp_strtab_get(&displays, disp[i]);
		uint32_t d;
		if (hp_strtab_intern(&n->shown, s, &d) ||
		    hp_vec_grow(&n->as, &n->as_cap, (size_t)i + 1))
			goto out;
		n->as[i] = d;
	}
	ret = 0;
out:
	hp_strtab_free(&displays);
	hp_strtab_free(&shorts);
	free(first);
	free(mixed);
	free(disp);
	free(shrt);
	free(own);
	free(buf);
	return ret;
}

const char *hp_frame_names_get(struct hp_frame_names *n, const char *function)
{
	size_t before = n->names.count;
	uint32_t i;
	char *buf;

	if (hp_strtab_intern(&n->names, function, &i))
		return function;
	if (i < before)
		return hp_strtab_get(&n->shown, n->as[i]);
	/* A name the model did not have: shown as hp_name_display says. */
	if (n->full)
		return add_name(n, function, function, &i) ? function
							    : hp_strtab_get(&n->shown, n->as[i]);
	if (!(buf = malloc(NAME_CAP)))
		return function;
	if (add_name(n, function, hp_name_display(buf, NAME_CAP, function), &i)) {
		free(buf);
		return function;
	}
	free(buf);
	return hp_strtab_get(&n->shown, n->as[i]);
}

void hp_frame_names_free(struct hp_frame_names *n)
{
	hp_strtab_free(&n->names);
	hp_strtab_free(&n->shown);
	free(n->as);
	memset(n, 0, sizeof *n);
}
