/*
 * waiter.c - allocates known blocks (waiter.h) on command and otherwise
 * sits idle, blocked in read(2) on its standard input: the program the
 * live endpoints are asked about (test_serve.c).
 *
 * Commands, one byte each on stdin: 's' runs waiter_second, 't'
 * waiter_churn, 'q' ends the program; each is acknowledged with "ok\n" on
 * stdout once done. "ready\n" says waiter_first has run. Acknowledgements
 * are written with write(2): stdio would allocate a buffer of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waiter.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *first[FIRST_N], *second[SECOND_N];

NOINLINE void waiter_first(void)
{
	for (int i = 0; i < FIRST_N; i++)
		first[i] = malloc(FIRST_SIZE);
	KEEP(first);
}

NOINLINE void waiter_second(void)
{
	for (int i = 0; i < SECOND_N; i++)
		second[i] = malloc(SECOND_SIZE);
	KEEP(second);
}

NOINLINE void waiter_churn(void)
{
	for (int i = 0; i < CHURN_N; i++) {
		void *p = malloc(CHURN_SIZE);
		KEEP(p);
		free(p);
	}
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		exit(2);
}

int main(void)
{
	char c;

	waiter_first();
	say("ready\n");
	while (read(0, &c, 1) == 1) {
		if (c == 'q')
			break;
		if (c == 's')
			waiter_second();
		else if (c == 't')
			waiter_churn();
		else
			continue;
		say("ok\n");
	}
	return 0;
}
