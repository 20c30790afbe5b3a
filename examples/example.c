/*
 * example.c - a small program with the usual heap problems, for `make demo`:
 * a cache that grows and is never trimmed (the peak), a leak in request
 * handling, and churn from temporary strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUESTS 20000

struct entry {
	char key[32];
	char *value;
	struct entry *next;
};

static struct entry *cache;

/* Formats a key into a temporary buffer: allocated, used, freed at once. */
static __attribute__((noinline)) char *make_key(int id)
{
	char *key = malloc(32);
	snprintf(key, 32, "request-%d", id);
	return key;
}

/* Caches one value per 10 requests; the cache is never trimmed. */
static __attribute__((noinline)) void cache_put(const char *key, size_t size)
{
	struct entry *e = malloc(sizeof *e);
	strncpy(e->key, key, sizeof e->key - 1);
	e->key[sizeof e->key - 1] = '\0';
	e->value = calloc(1, size);
	e->next = cache;
	cache = e;
}

/* Handles a request: leaks its scratch buffer on one path in a hundred. */
static __attribute__((noinline)) size_t handle(int id)
{
	char *key = make_key(id);
	char *scratch = malloc(256);
	size_t len = (size_t)snprintf(scratch, 256, "reply to %s", key);

	if (id % 10 == 0)
		cache_put(key, 1024);
	if (id % 100 != 0) /* the bug: the early path forgets the scratch buffer */
		free(scratch);
	free(key);
	return len;
}

static void cache_clear(void)
{
	while (cache) {
		struct entry *next = cache->next;
		free(cache->value);
		free(cache);
		cache = next;
	}
}

int main(void)
{
	size_t bytes = 0;

	for (int id = 0; id < REQUESTS; id++)
		bytes += handle(id);
	cache_clear();
	printf("handled %d requests, %zu bytes of replies\n", REQUESTS, bytes);
	return 0;
}
