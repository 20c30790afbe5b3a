/*
 * mmapper.c - a program whose mappings are known exactly, for heapprof run
 * --mmap (tests/integration/test_mmap.c): anonymous mappings from known
 * sites, unmapped whole, in part, several at once, replaced by MAP_FIXED,
 * grown and shrunk by mremap; a stack it maps for itself; the break moved
 * with sbrk; leaks. And what must stay out of the mmap heap: a file
 * mapping, malloc's own big block, a thread (its stack, its arena).
 *
 * The mmap heap in use (KiB), step by step; the peak is 256, once:
 *   leak_map 128 | map_whole 64, unmapped | map_partial 64, the middle 16
 *   unmapped then the first 16 (32 left, leaked) | pair_a 64, its upper
 *   half replaced by pair_b 32 (MAP_FIXED), both unmapped by one munmap |
 *   grow_map 16, grown by grow_remap to 64, shrunk by shrink_remap to 32,
 *   unmapped | own_stack 64, unmapped | sbrk_grow 96 (the peak: 128 + 32 +
 *   96), then 16 given back (sbrk_shrink): 240 left at exit.
 * Functions are noinline and end with a compiler barrier so that each
 * keeps its frame. Exits 1 when a call fails.
 *
 * With --attach (tests/integration/test_mmap.c, heapprof attach --mmap):
 * prints "ready", waits until its GOT entries of the mmap family point
 * away from libc's (the recorder patched them), does the same, prints
 * "done", and exits when its standard input ends.
 *
 * With --threads: only THREADS threads, each ROUNDS times mapping 64 KiB
 * at thread_map, unmapping its upper half, then the rest.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")
#define KIB 1024

static int broken;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "mmapper: %s\n", what);
		broken = 1;
	}
}

#define ANON(n) mmap(NULL, (n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)

NOINLINE char *leak_map(void)
{
	char *p = ANON(128 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *map_whole(void)
{
	char *p = ANON(64 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *map_partial(void)
{
	char *p = ANON(64 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *pair_a(void)
{
	char *p = ANON(64 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *pair_b(char *at)
{
	char *p = mmap(at, 32 * KIB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	KEEP(p);
	return p;
}

NOINLINE char *grow_map(void)
{
	char *p = ANON(16 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *grow_remap(char *p)
{
	char *q = mremap(p, 16 * KIB, 64 * KIB, MREMAP_MAYMOVE);
	KEEP(q);
	return q;
}

NOINLINE char *shrink_remap(char *p)
{
	char *q = mremap(p, 64 * KIB, 32 * KIB, 0);
	KEEP(q);
	return q;
}

NOINLINE char *own_stack(void)
{
	char *p = mmap(NULL, 64 * KIB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	KEEP(p);
	return p;
}

NOINLINE char *sbrk_grow(void)
{
	char *p = sbrk(96 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *sbrk_shrink(void)
{
	char *p = sbrk(-16 * KIB);
	KEEP(p);
	return p;
}

NOINLINE char *map_file(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	char *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

	if (fd >= 0)
		close(fd);
	KEEP(p);
	return p;
}

NOINLINE char *big_malloc(void)
{
	char *p = malloc(1024 * KIB); /* glibc maps it itself (__mmap) */
	KEEP(p);
	return p;
}

static void *thread_main(void *arg)
{
	char *p = malloc(100); /* the thread's own arena: glibc's __mmap */
	KEEP(p);
	free(p);
	return arg;
}

#define THREADS 4
#define ROUNDS 2000

NOINLINE char *thread_map(void)
{
	char *p = ANON(64 * KIB);
	KEEP(p);
	return p;
}

static void *mapper(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		char *p = thread_map();
		check(p != MAP_FAILED, "thread_map");
		p[0] = 1;
		check(munmap(p + 32 * KIB, 32 * KIB) == 0, "munmap the upper half");
		check(munmap(p, 32 * KIB) == 0, "munmap the rest");
	}
	return arg;
}

static int threads(void)
{
	pthread_t th[THREADS];

	for (int i = 0; i < THREADS; i++)
		check(pthread_create(&th[i], NULL, mapper, NULL) == 0, "pthread_create");
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	return broken;
}

/* The GOT's entries, read each time. */
#define GOT(name)                                                                \
	static void *got_##name(void)                                            \
	{                                                                        \
		void *f;                                                         \
		__asm__ volatile("mov " #name "@GOTPCREL(%%rip), %0" : "=r"(f)); \
		return f;                                                        \
	}
GOT(mmap)
GOT(munmap)
GOT(mremap)
GOT(sbrk)

/* Waits (up to 30 s) until every entry points away from libc's. */
static int wait_patched(void)
{
	struct timespec ms = {0, 1000000};

	for (int i = 0; i < 30000; i++) {
		if (got_mmap() != dlsym(RTLD_NEXT, "mmap") &&
		    got_munmap() != dlsym(RTLD_NEXT, "munmap") &&
		    got_mremap() != dlsym(RTLD_NEXT, "mremap") &&
		    got_sbrk() != dlsym(RTLD_NEXT, "sbrk"))
			return 1;
		nanosleep(&ms, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *leaked, *p, *q, *brk0, buf[64];
	int attach = argc > 1 && strcmp(argv[1], "--attach") == 0;
	pthread_t th;

	if (argc > 1 && strcmp(argv[1], "--threads") == 0)
		return threads();
	if (attach) {
		printf("ready\n");
		fflush(stdout);
		if (!wait_patched())
			return 2;
	}

	leaked = leak_map();
	check(leaked != MAP_FAILED, "leak_map");

	p = map_whole();
	check(p != MAP_FAILED && munmap(p, 64 * KIB) == 0, "map_whole");

	p = map_partial();
	check(p != MAP_FAILED, "map_partial");
	check(munmap(p + 16 * KIB, 16 * KIB) == 0, "munmap the middle");
	check(munmap(p, 16 * KIB) == 0, "munmap the first piece");

	p = pair_a();
	check(p != MAP_FAILED, "pair_a");
	check(pair_b(p + 32 * KIB) == p + 32 * KIB, "pair_b");
	check(munmap(p, 64 * KIB) == 0, "munmap both");

	p = grow_map();
	check(p != MAP_FAILED, "grow_map");
	/* Something right after it, so that growing moves it. */
	q = mmap(p + 16 * KIB, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	p = grow_remap(p);
	check(p != MAP_FAILED, "grow_remap");
	if (q != MAP_FAILED)
		munmap(q, 4096);
	p = shrink_remap(p);
	check(p != MAP_FAILED && munmap(p, 32 * KIB) == 0, "shrink_remap");

	p = own_stack();
	check(p != MAP_FAILED && munmap(p, 64 * KIB) == 0, "own_stack");

	p = map_file();
	check(p != MAP_FAILED && munmap(p, 4096) == 0, "map_file");
	p = big_malloc();
	check(p != NULL, "big_malloc");
	free(p);
	check(pthread_create(&th, NULL, thread_main, NULL) == 0 && pthread_join(th, NULL) == 0,
	      "thread");

	brk0 = sbrk_grow();
	check(brk0 != (char *)-1, "sbrk_grow");
	check(sbrk_shrink() == brk0 + 96 * KIB, "sbrk_shrink");
	if (attach) {
		printf("done\n");
		fflush(stdout);
		while (fgets(buf, sizeof buf, stdin))
			;
	}
	return broken;
}
