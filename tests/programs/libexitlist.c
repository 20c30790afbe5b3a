/*
 * libexitlist.c - a library whose constructor registers EXITFNS exit
 * functions before the program starts, as C++ libraries do for their
 * static objects' destructors (clang's libLLVM registers ~3,100): glibc
 * keeps them in blocks of 32 entries, the first in a static block, the
 * rest in blocks of 1,040 bytes it allocates, and frees each block at
 * exit once its last entry has run.
 */
#include <stdlib.h>

#define EXITFNS 200

static volatile int ran;

static void nothing(void)
{
	ran++;
}

__attribute__((constructor)) static void register_many(void)
{
	for (int i = 0; i < EXITFNS; i++)
		atexit(nothing);
}
