/*
 * vec.c - growing an array (see vec.h).
 */
#include "vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int hp_vec_grow_(void *arrp, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (c > SIZE_MAX / elem)
		return -ENOMEM;
	/* The pointer is read and written as bytes: arrp points to a pointer
	 * of the caller's type, not to a void *. */
	memcpy(&p, arrp, sizeof p);
	p = realloc(p, c * elem);
	if (!p)
		return -ENOMEM;
	memcpy(arrp, &p, sizeof p);
	*cap = c;
	return 0;
}
