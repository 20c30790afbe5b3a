/*
 * arena.c - an arena allocator that reports its objects to heapprof, so
 * that they get call stacks, types, contexts, peaks and leaks of their
 * own, apart from the malloc'd chunks they live in.
 *
 *     cc -O2 -g -I include examples/arena.c -o arena
 *     heapprof run -o arena.hpf -- ./arena
 *     heapprof report arena.hpf --by heap
 *     heapprof report arena.hpf --by context
 *
 * The heapprof functions are weak (include/heapprof.h): without heapprof
 * they are NULL and the arena works as it would anyway.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/heapprof.h"

#define CHUNK_BYTES 65536

struct chunk {
	struct chunk *next;
	size_t used;
	_Alignas(16) char data[CHUNK_BYTES];
};

struct arena {
	struct chunk *chunks;
	int heap; /* heapprof's id for this arena, 0 without heapprof */
};

static void arena_init(struct arena *a, const char *name)
{
	a->chunks = NULL;
	a->heap = heapprof_heap_create ? heapprof_heap_create(name) : 0;
	if (a->heap < 0)
		a->heap = 0;
}

static void *arena_alloc(struct arena *a, size_t size)
{
	struct chunk *c = a->chunks;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (size > CHUNK_BYTES)
		return NULL;
	if (!c || c->used + size > CHUNK_BYTES) {
		c = malloc(sizeof *c);
		if (!c)
			return NULL;
		c->next = a->chunks;
		c->used = 0;
		a->chunks = c;
	}
	p = c->data + c->used;
	c->used += size;
	if (a->heap && heapprof_heap_alloc)
		heapprof_heap_alloc(a->heap, p, size);
	return p;
}

/* Frees every object at once, and every chunk but the newest. */
static void arena_reset(struct arena *a)
{
	struct chunk *c = a->chunks;

	if (!c)
		return;
	while (c->next) {
		struct chunk *next = c->next->next;
		free(c->next);
		c->next = next;
	}
	c->used = 0;
	if (a->heap && heapprof_heap_reset)
		heapprof_heap_reset(a->heap);
}

struct token {
	int kind;
	char text[28];
};

struct node {
	struct node *left, *right;
	struct token *token;
	long value;
};

/* A request: its tokens and its syntax tree live in the request arena,
 * reset when the request is done. */
static long handle_request(struct arena *a, int n)
{
	struct node *root = NULL;
	long sum = 0;

	if (heapprof_context_push)
		heapprof_context_push("tokenize");
	struct token **tokens = arena_alloc(a, n * sizeof *tokens);
	for (int i = 0; i < n; i++) {
		tokens[i] = arena_alloc(a, sizeof **tokens);
		if (heapprof_set_type)
			heapprof_set_type(tokens[i], "struct token");
		tokens[i]->kind = i % 7;
		snprintf(tokens[i]->text, sizeof tokens[i]->text, "t%d", i);
	}
	if (heapprof_context_pop)
		heapprof_context_pop();

	if (heapprof_context_push)
		heapprof_context_push("parse");
	for (int i = 0; i < n; i++) {
		struct node *x = arena_alloc(a, sizeof *x);
		if (heapprof_set_type)
			heapprof_set_type(x, "struct node");
		x->left = root;
		x->right = NULL;
		x->token = tokens[i];
		x->value = tokens[i]->kind;
		root = x;
	}
	if (heapprof_context_pop)
		heapprof_context_pop();

	for (struct node *x = root; x; x = x->left)
		sum += x->value;
	return sum;
}

int main(void)
{
	struct arena requests, config;
	long total = 0;

	arena_init(&requests, "requests");
	arena_init(&config, "config");
	/* Configuration that lives for the whole run. */
	for (int i = 0; i < 100; i++)
		memset(arena_alloc(&config, 200), 0, 200);
	for (int r = 0; r < 50; r++) {
		total += handle_request(&requests, 200 + 10 * r);
		arena_reset(&requests);
	}
	printf("processed 50 requests, checksum %ld\n", total);
	return 0;
}
