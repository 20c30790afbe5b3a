/*
 * manyrets.c - allocations from 4,096 functions, each its own return
 * address, called in turn ROUNDS times: a program whose walks return
 * through more addresses than the DWARF rule cache's first table holds
 * (1,024 rules), as a compiler's do (gcc's cc1 returns through 5,415, clang
 * through 11,734). For tests/integration/test_unwind.c: with a table that
 * grows, the rules are read from .eh_frame about once each; with the first
 * table alone, again every round.
 *
 * Each site_N allocates 16 + N % 61 bytes (sites differ, so that no
 * compiler folds them into one), keeps the block until its call returns
 * to main, which frees it. Stacks: malloc <- site_N <- call_site <- main.
 */
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 6
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

#define SITE(n)                                                                                    \
	__attribute__((noinline)) static void *site_##n(void)                                      \
	{                                                                                          \
		void *p = malloc(16 + (n) % 61);                                                   \
		KEEP(p);                                                                           \
		return p;                                                                          \
	}
#define ENTRY(n) site_##n,

#define C16(m, p)                                                                                  \
	m(p##0) m(p##1) m(p##2) m(p##3) m(p##4) m(p##5) m(p##6) m(p##7) m(p##8) m(p##9) m(p##a)    \
		m(p##b) m(p##c) m(p##d) m(p##e) m(p##f)
#define B16(m, p)                                                                                  \
	C16(m, p##0) C16(m, p##1) C16(m, p##2) C16(m, p##3) C16(m, p##4) C16(m, p##5) C16(m, p##6) \
	C16(m, p##7) C16(m, p##8) C16(m, p##9) C16(m, p##a) C16(m, p##b) C16(m, p##c)              \
	C16(m, p##d) C16(m, p##e) C16(m, p##f)
#define A16(m, p)                                                                                  \
	B16(m, p##0) B16(m, p##1) B16(m, p##2) B16(m, p##3) B16(m, p##4) B16(m, p##5) B16(m, p##6) \
	B16(m, p##7) B16(m, p##8) B16(m, p##9) B16(m, p##a) B16(m, p##b) B16(m, p##c)              \
	B16(m, p##d) B16(m, p##e) B16(m, p##f)

A16(SITE, 0x)

static void *(*const sites[])(void) = {A16(ENTRY, 0x)};

#define SITES (sizeof sites / sizeof *sites)

__attribute__((noinline)) static void *call_site(size_t i)
{
	void *p = sites[i]();

	KEEP(p);
	return p;
}

int main(void)
{
	unsigned long bytes = 0;

	for (int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < SITES; i++) {
			void *p = call_site(i);

			if (!p)
				return 1;
			bytes += 16 + i % 61;
			free(p);
		}
	}
	printf("%zu sites, %d rounds, %lu bytes\n", SITES, ROUNDS, bytes);
	return 0;
}
