/* libplugin.c - a library loaded with dlopen: 4 x 444 bytes, leaked. */
#include <stdlib.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void plugin_alloc(void)
{
	for (int i = 0; i < 4; i++)
		KEEP(malloc(444));
}
