/*
 * waiter.h - the allocations of tests/programs/waiter.c, a program that
 * allocates on command and waits on a pipe in between (the live endpoints'
 * tests, test_serve.c). Every figure a test expects comes from these.
 */
#ifndef HP_TEST_WAITER_H
#define HP_TEST_WAITER_H

/* At start, in waiter_first: kept. */
#define FIRST_N 10
#define FIRST_SIZE 1000
/* On 's', in waiter_second: kept. */
#define SECOND_N 20
#define SECOND_SIZE 500
/* On 't', in waiter_churn: each freed at once (temporary). */
#define CHURN_N 30
#define CHURN_SIZE 64

#endif
