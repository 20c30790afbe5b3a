/* libdtorfree.c - a library that allocates 100 blocks in its constructor
 * and frees them in its destructor (gnutls does this with its tables), and
 * registers, from that destructor, an exit handler that frees more. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *blocks[100];
void *dtorfree_late[3]; /* filled by the program, freed at the very end */

NOINLINE void lib_ctor_alloc(void)
{
	for (int i = 0; i < 100; i++)
		blocks[i] = malloc(40);
}

static void late_handler(void)
{
	for (int i = 0; i < 3; i++)
		free(dtorfree_late[i]);
}

__attribute__((constructor)) static void lib_init(void) { lib_ctor_alloc(); }

__attribute__((destructor)) static void lib_fini(void)
{
	for (int i = 0; i < 100; i++)
		free(blocks[i]);
	atexit(late_handler); /* registered while exit is running */
}
