/* dtorfree.c - frees made after main by a linked library's destructor and
 * by an exit handler registered during exit (see libdtorfree.c); leaks 2
 * blocks of 777 bytes, nothing else. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

extern void *dtorfree_late[3];
static void *kept[5];

NOINLINE void main_alloc(void)
{
	for (int i = 0; i < 3; i++)
		dtorfree_late[i] = malloc(500);
	for (int i = 0; i < 5; i++)
		kept[i] = malloc(60);
	KEEP(malloc(777));
	KEEP(malloc(777));
}

static void at_exit(void)
{
	for (int i = 0; i < 5; i++)
		free(kept[i]);
}

int main(void)
{
	atexit(at_exit);
	main_alloc();
	return 0;
}
