/* ctor_dtor.c - allocations before main (constructor) and after it
 * (destructor, atexit handler), all leaked. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE void ctor_alloc(void) { for (int i = 0; i < 3; i++) KEEP(malloc(111)); }
NOINLINE void dtor_alloc(void) { for (int i = 0; i < 2; i++) KEEP(malloc(222)); }
NOINLINE void atexit_alloc(void) { KEEP(malloc(333)); }

__attribute__((constructor)) static void before_main(void) { ctor_alloc(); }
__attribute__((destructor)) static void after_main(void) { dtor_alloc(); }
static void at_exit(void) { atexit_alloc(); }

int main(void)
{
	atexit(at_exit);
	return 0;
}
