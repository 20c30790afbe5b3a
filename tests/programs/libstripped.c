/*
 * libstripped.c - a library shipped stripped (strip --strip-all: .dynsym
 * alone names its exported functions), for the report's sites of frames
 * without symbols (issue 24): stripped_work(n) leaks n blocks of 100 bytes
 * from each of three static functions (no symbol left for any) and n of
 * 50 from itself (exported: named by .dynsym); stripped_callback() returns
 * a static function, hidden_d, that leaks n blocks of 70 bytes from each
 * of two lines (called through the pointer: no frame of the library on
 * the stack has a symbol). Functions are noinline and
 * end with a compiler barrier so that each keeps its frame.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE static void hidden_a(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(100));
}

NOINLINE static void hidden_b(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(100));
}

NOINLINE static void hidden_c(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(100));
}

NOINLINE void stripped_work(int n)
{
	hidden_a(n);
	hidden_b(n);
	hidden_c(n);
	for (int i = 0; i < n; i++)
		KEEP(malloc(50));
}

NOINLINE static void hidden_d(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(70));
	for (int i = 0; i < n; i++)
		KEEP(malloc(70));
}

void (*stripped_callback(void))(int)
{
	return hidden_d;
}
