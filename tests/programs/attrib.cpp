/*
 * attrib.cpp - allocations whose type, context, thread and heap are known,
 * for tests/integration/test_attrib.c: each figure below is what the
 * report must say, per type, context, thread and heap.
 *
 * Nothing here is freed by a destructor at exit: containers are leaked on
 * purpose, and a last 8 MiB block makes the global peak the state at exit,
 * so "in use" and "at the peak" are the same figures (the custom heap has
 * a peak of its own, before its reset).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../include/heapprof.hpp"

/* --- polymorphic objects through base pointers: typed by their vtable --- */

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};
struct Circle : Shape { /* 16 bytes */
	double r = 1;
	double area() const override { return 3 * r * r; }
};
struct Square : Shape { /* 24 bytes */
	double s = 1, t = 2;
	double area() const override { return s * t; }
};
struct Triangle : Shape { /* 32 bytes */
	double a = 1, b = 2, c = 3;
	double area() const override { return a * b * c; }
};

__attribute__((noinline)) static Shape *make_shape(int kind)
{
	if (kind == 0)
		return new Circle;
	if (kind == 1)
		return new Square;
	return new Triangle;
}

static Shape *shapes[15];

/* 3 circles, 5 squares, 7 triangles; after the snapshot that reads their
 * vtables, 2 squares are deleted: Square allocated 5, in use 3. */
static void polymorphic(void)
{
	int n = 0;

	for (int i = 0; i < 3; i++)
		shapes[n++] = make_shape(0);
	for (int i = 0; i < 5; i++)
		shapes[n++] = make_shape(1);
	for (int i = 0; i < 7; i++)
		shapes[n++] = make_shape(2);
}

static void delete_two_squares(void)
{
	delete shapes[3];
	delete shapes[4];
	shapes[3] = shapes[4] = nullptr;
}

/* --- templates in the stack: typed from the allocator's frames --------- */

struct Point { /* 12 bytes */
	int x, y, z;
};
struct Big { /* 40 bytes */
	long v[5];
};
struct Bigger { /* 56 bytes */
	long v[7];
};

static std::vector<Point> *points;
static std::map<int, std::string> *names;
static std::unordered_map<int, int> *counts;
static std::vector<std::shared_ptr<Big>> *shared;
static std::vector<std::unique_ptr<Bigger>> *unique;

/* vector<Point>: 100 push_backs from empty grow it through capacities 1,
 * 2, 4, ... 128: 8 blocks, 255 Points allocated, 128 in use. map: 10
 * nodes (short strings: no block of their own). unordered_map: 10 nodes.
 * make_shared<Big> 4 times, make_unique<Bigger> 2 times (the vectors
 * holding them reserve first, so their own blocks are one each). */
static void templates(void)
{
	points = new std::vector<Point>;
	for (int i = 0; i < 100; i++)
		points->push_back(Point{i, i, i});
	names = new std::map<int, std::string>;
	for (int i = 0; i < 10; i++)
		(*names)[i] = "n" + std::to_string(i);
	counts = new std::unordered_map<int, int>;
	for (int i = 0; i < 10; i++)
		(*counts)[i] = i;
	shared = new std::vector<std::shared_ptr<Big>>;
	shared->reserve(4);
	for (int i = 0; i < 4; i++)
		shared->push_back(std::make_shared<Big>());
	unique = new std::vector<std::unique_ptr<Bigger>>;
	unique->reserve(2);
	for (int i = 0; i < 2; i++)
		unique->push_back(std::make_unique<Bigger>());
}

/* --- explicit types ----------------------------------------------------- */

struct Widget { /* 24 bytes, a destructor: new Widget[6] has a cookie */
	long a = 0, b = 0, c = 0;
	~Widget() { a = -1; }
};
struct Record { /* 48 bytes, a C struct */
	char key[16];
	long value[4];
};

static Widget *widgets;
static Record *records[5];

/* new Widget[6]: one block of 8 + 6 x 24 bytes, named Widget through its
 * first element. 5 malloc'd Records, named Record; 2 freed. */
static void explicit_types(void)
{
	widgets = new Widget[6];
	heapprof::set_type_array(widgets);
	for (int i = 0; i < 5; i++) {
		records[i] = static_cast<Record *>(malloc(sizeof(Record)));
		memset(records[i], 0, sizeof(Record));
		heapprof::set_type<Record>(records[i]);
	}
	free(records[0]);
	free(records[1]);
}

/* --- contexts and threads ----------------------------------------------- */

/* "request" > "parse": 7 blocks of 300 bytes, kept. */
static void *volatile parsed[7];

static void nested_contexts(void)
{
	HEAPPROF_SCOPE("request");
	HEAPPROF_SCOPE("parse");
	for (int i = 0; i < 7; i++)
		parsed[i] = malloc(300);
}

/* Two threads, "producer" in context "produce" and "consumer" in context
 * "consume", free each other's blocks: the producer allocates 20 x 100
 * bytes, the consumer frees them; the consumer allocates 30 x 200 bytes,
 * the producer frees them. Every block counts for the thread and context
 * that allocated it. */
static void *made_by_producer[20], *made_by_consumer[30];
static pthread_barrier_t barrier;

static void *producer(void *)
{
	pthread_setname_np(pthread_self(), "producer");
	{
		HEAPPROF_SCOPE("produce");
		for (int i = 0; i < 20; i++)
			made_by_producer[i] = malloc(100);
	}
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < 30; i++)
		free(made_by_consumer[i]);
	return nullptr;
}

static void *consumer(void *)
{
	pthread_setname_np(pthread_self(), "consumer");
	{
		HEAPPROF_SCOPE("consume");
		for (int i = 0; i < 30; i++)
			made_by_consumer[i] = malloc(200);
	}
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < 20; i++)
		free(made_by_producer[i]);
	return nullptr;
}

static void threads(void)
{
	pthread_t a, b;

	pthread_barrier_init(&barrier, nullptr, 2);
	pthread_create(&a, nullptr, producer, nullptr);
	pthread_create(&b, nullptr, consumer, nullptr);
	pthread_join(a, nullptr);
	pthread_join(b, nullptr);
	pthread_barrier_destroy(&barrier);
}

/* --- a custom heap ------------------------------------------------------ */

/* A bump arena over 4 KiB chunks from malloc, reporting its objects to
 * heapprof as heap "arena". */
struct Arena {
	int heap;
	char *chunks[64];
	int nchunks;
	size_t used;
};

static void *arena_alloc(Arena *a, size_t size)
{
	size = (size + 15) & ~size_t(15);
	if (!a->nchunks || a->used + size > 4096) {
		a->chunks[a->nchunks++] = static_cast<char *>(malloc(4096));
		a->used = 0;
	}
	void *p = a->chunks[a->nchunks - 1] + a->used;
	a->used += size;
	if (heapprof_heap_alloc)
		heapprof_heap_alloc(a->heap, p, size);
	return p;
}

static void arena_reset(Arena *a)
{
	for (int i = 1; i < a->nchunks; i++)
		free(a->chunks[i]);
	a->nchunks = a->nchunks ? 1 : 0;
	a->used = 0;
	if (heapprof_heap_reset)
		heapprof_heap_reset(a->heap);
}

static Arena arena;

/* Keeps the last block: a block nothing reads could be optimised away. */
void *volatile attrib_sink;

/* 50 objects of 48 bytes (its peak: 2400 bytes, 50 objects), a reset, then
 * 10 of 64 bytes kept (2 freed one by one): allocated 60 / 3040 bytes,
 * in use 8 / 512. */
static void custom_heap(void)
{
	void *kept[10];

	arena.heap = heapprof_heap_create ? heapprof_heap_create("arena") : 0;
	for (int i = 0; i < 50; i++)
		arena_alloc(&arena, 48);
	arena_reset(&arena);
	for (int i = 0; i < 10; i++)
		kept[i] = arena_alloc(&arena, 64);
	if (heapprof_heap_free) {
		heapprof_heap_free(arena.heap, kept[3]);
		heapprof_heap_free(arena.heap, kept[7]);
	}
}

int main()
{
	polymorphic();
	templates();
	explicit_types();
	nested_contexts();
	threads();
	custom_heap();
	if (heapprof_dump)
		heapprof_dump(); /* reads the shapes' vtables */
	delete_two_squares();
	/* The global peak, at the end: everything above is in use at it. */
	void *big = malloc(8 << 20);
	memset(big, 1, 8 << 20);
	attrib_sink = big;
	return 0;
}
