/*
 * tlphases.cpp - phases by type, context, thread and heap (tlphases.h),
 * for the timeline grouped by those dimensions. The pauses keep the
 * recorder ticking (it works at the end of allocations) with temporary
 * blocks freed at once, as phases.c's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "../../include/heapprof.h"
#include "tlphases.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};
struct Circle : Shape {
	double r = 1;
	double area() const override { return 3 * r * r; }
};
struct Square : Shape {
	double s = 1, t = 2;
	double area() const override { return s * t; }
};
static_assert(sizeof(Circle) == TL_CIRCLE_SIZE, "Circle's size");
static_assert(sizeof(Square) == TL_SQUARE_SIZE, "Square's size");

static Shape *circles[TL_CIRCLE_N], *squares[TL_SQUARE_N];
alignas(16) static char arena_buf[TL_ARENA_N * TL_ARENA_SIZE];
static int arena;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINLINE static void pause_busy(void)
{
	uint64_t end = now_ns() + TL_PAUSE_MS * 1000000ull;
	struct timespec tick = {0, 250000};

	while (now_ns() < end) {
		for (int i = 0; i < 64; i++) {
			void *p = malloc(48);
			KEEP(p);
			free(p);
		}
		nanosleep(&tick, nullptr);
	}
}

NOINLINE static void load(void)
{
	heapprof_context_push("load");
	for (int i = 0; i < TL_CIRCLE_N; i++)
		circles[i] = new Circle;
	heapprof_context_pop();
}

NOINLINE static void *serve(void *)
{
	pthread_setname_np(pthread_self(), TL_THREAD);
	heapprof_context_push("serve");
	for (int i = 0; i < TL_SQUARE_N; i++) {
		if (i < TL_CIRCLE_N) {
			delete circles[i];
			circles[i] = nullptr;
		}
		squares[i] = new Square;
	}
	for (int i = 0; i < TL_ARENA_N; i++)
		heapprof_heap_alloc(arena, arena_buf + i * TL_ARENA_SIZE, TL_ARENA_SIZE);
	heapprof_context_pop();
	heapprof_dump();
	return nullptr;
}

int main(void)
{
	pthread_t t;

	if (!heapprof_dump || !heapprof_context_push || !heapprof_heap_create)
		return 2;
	arena = heapprof_heap_create("arena");
	load();
	if (heapprof_dump() != 0)
		return 2;
	pause_busy();
	if (pthread_create(&t, nullptr, serve, nullptr) || pthread_join(t, nullptr))
		return 2;
	pause_busy();
	heapprof_heap_reset(arena);
	for (int i = 0; i < TL_SQUARE_N; i++)
		delete squares[i];
	return 0;
}
