/*
 * vec.h - growing an array: the one helper every growable array of the
 * analyzer uses.
 *
 *     struct thing *things = NULL;
 *     size_t n = 0, cap = 0;
 *     if (hp_vec_grow(&things, &cap, n + 1))
 *             return -ENOMEM;
 *     things[n++] = x;
 *
 * Ordinary analyzer C: allocates with realloc (never linked into the
 * recorder).
 */
#ifndef HP_COMMON_VEC_H
#define HP_COMMON_VEC_H

#include <stddef.h>

/* Makes *cap >= need for the array at *(void **)arrp of elem-byte
 * elements, doubling from 16: the first need elements keep their values,
 * the new ones are not set. Returns 0, or -ENOMEM (the array unchanged). */
int hp_vec_grow_(void *arrp, size_t *cap, size_t need, size_t elem);

/* hp_vec_grow(&array, &cap, need), for an array of any type. */
#define hp_vec_grow(arrp, cap, need) hp_vec_grow_((arrp), (cap), (need), sizeof **(arrp))

#endif
