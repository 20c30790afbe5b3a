/* execd.c - run by forker's child through exec: allocates 6 x 601 bytes. */
#include <stdlib.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void execd_work(void)
{
	for (int i = 0; i < 6; i++)
		KEEP(malloc(601));
}

int main(void)
{
	execd_work();
	return 0;
}
