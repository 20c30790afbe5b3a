/*
 * allocmix.cpp - a running program for `heapprof attach` under any
 * allocator: glibc's, or jemalloc, tcmalloc or mimalloc preloaded
 * (LD_PRELOAD) or linked in. Two threads call every function of the
 * allocation family that the program's allocator defines, and the C++
 * operators (plain, array, sized, aligned), strdup and a std::string
 * (whose allocations libc and libstdc++ make), each from a site of its own
 * (mix_<function>), and keep each site's blocks in a ring across rounds:
 * blocks allocated before an attach are freed, grown and sized during it,
 * and blocks allocated during it after its detach, which crashes a
 * program whose calls reach two allocators. Every block's contents and
 * malloc_usable_size are checked before it is freed. Alignments stay at
 * 64 and 128: Debian's mimalloc 2.0.9 misaligns 256 to 1024 bare.
 *
 * Like attachee.c, mix_kept reads the malloc and free pointers out of the
 * GOT at each call and counts the calls that went to the recorder (the
 * entry no longer held the program's allocator), which is what a capture
 * taken with --sample-rate 1 must hold at that site.
 *
 *   allocmix      runs until a line "stop" on standard input (or its end)
 *
 * Standard output, the same whether it is attached or not: "ready" once
 * its threads run; at the end "uses F..." (the C functions its allocator
 * defines, which it calls), then "ok", or a line per block found wrong.
 * Standard error: "kept allocs N frees M" (the calls of mix_kept that
 * reached the recorder) and "patched P" (1 when the GOT still pointed at
 * the recorder at the end). Exits 0, or 1 when a block was wrong.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <new>
#include <string>

/* The sites are C functions with external linkage: their symbols are
 * their names (a static C++ function's is mangled). */
#define NOINLINE extern "C" __attribute__((noinline))
#define RING 8

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static malloc_fn prog_malloc;
static free_fn prog_free;
static volatile int stopping;
static int wrong;
static pthread_mutex_t wrong_lock = PTHREAD_MUTEX_INITIALIZER;

/* The C functions besides malloc, calloc, realloc and free, used only
 * when the object that defines malloc defines them too (jemalloc has no
 * pvalloc: glibc's would allocate from glibc's heap, which the program's
 * free cannot take, attached or not). */
enum { F_REALLOCARRAY, F_POSIX_MEMALIGN, F_ALIGNED_ALLOC, F_MEMALIGN, F_VALLOC, F_PVALLOC, NF };
static const char *const fnames[NF] = {"reallocarray", "posix_memalign", "aligned_alloc",
				       "memalign",     "valloc",         "pvalloc"};
static int uses[NF];

static malloc_fn got_malloc(void)
{
	malloc_fn m;
	__asm__ volatile("mov malloc@GOTPCREL(%%rip), %0" : "=r"(m));
	return m;
}

static free_fn got_free(void)
{
	free_fn f;
	__asm__ volatile("mov free@GOTPCREL(%%rip), %0" : "=r"(f));
	return f;
}

struct block {
	unsigned char *p;
	size_t size;
	unsigned char fill;
};

static void say_wrong(const char *site, const char *what)
{
	pthread_mutex_lock(&wrong_lock);
	if (wrong++ < 10)
		printf("%s: %s\n", site, what);
	pthread_mutex_unlock(&wrong_lock);
}

/* Fills a new block (size bytes, aligned to align) and checks what the
 * allocator says of it. */
static void fill(const char *site, struct block *b, void *p, size_t size, size_t align,
		 unsigned char c)
{
	if (!p) {
		say_wrong(site, "allocation failed");
		return;
	}
	if ((uintptr_t)p % align)
		say_wrong(site, "misaligned");
	if (malloc_usable_size(p) < size)
		say_wrong(site, "malloc_usable_size below the size asked for");
	memset(p, c, size);
	b->p = (unsigned char *)p;
	b->size = size;
	b->fill = c;
}

/* Whether a block still holds its fill (its first size bytes). */
static void check(const char *site, const struct block *b, size_t size)
{
	for (size_t i = 0; i < size && i < b->size; i++)
		if (b->p[i] != b->fill) {
			say_wrong(site, "a block's contents changed");
			return;
		}
}

struct worker {
	pthread_t thread;
	unsigned seed;
	unsigned long kept_allocs, kept_frees;
	struct block kept[RING], c[RING], re[RING], ra[RING], pm[RING], aa[RING], ma[RING],
		va[RING], pv[RING], nw[RING], na[RING], sz[RING], al[RING], sd[RING];
	int kept_recorded[RING];
	std::string str[RING];
};

static size_t size_of(struct worker *w)
{
	w->seed = w->seed * 1103515245u + 12345u;
	return 16 + (w->seed >> 8) % 3000;
}

/* malloc and free through the GOT entries read at the call. */
NOINLINE void mix_kept(struct worker *w, int i)
{
	struct block *b = &w->kept[i];

	if (b->p) {
		free_fn f = got_free();
		check("mix_kept", b, b->size);
		w->kept_frees += (unsigned long)(w->kept_recorded[i] && f != prog_free);
		f(b->p);
	}
	{
		malloc_fn m = got_malloc();
		size_t n = 64;
		fill("mix_kept", b, m(n), n, 16, (unsigned char)(i + 1));
		w->kept_recorded[i] = m != prog_malloc;
		w->kept_allocs += (unsigned long)w->kept_recorded[i];
	}
}

NOINLINE void mix_calloc(struct worker *w, struct block *b)
{
	size_t n = size_of(w);
	unsigned char *p;

	if (b->p) {
		check("mix_calloc", b, b->size);
		free(b->p);
	}
	p = (unsigned char *)calloc(1, n);
	for (size_t k = 0; p && k < n; k++)
		if (p[k]) {
			say_wrong("mix_calloc", "not zeroed");
			break;
		}
	fill("mix_calloc", b, p, n, 16, 0xc1);
}

/* Grows (or shrinks) the block it made a round before, which may have
 * been made before the attach, or by the recorder. */
NOINLINE void mix_realloc(struct worker *w, struct block *b)
{
	size_t n = size_of(w);

	if (!b->p) {
		fill("mix_realloc", b, malloc(n), n, 16, 0x7e);
		return;
	}
	check("mix_realloc", b, n);
	{
		size_t kept = n < b->size ? n : b->size;
		unsigned char *p = (unsigned char *)realloc(b->p, n);
		struct block nb = {p, kept, b->fill};
		if (!p) {
			say_wrong("mix_realloc", "realloc failed");
			return;
		}
		check("mix_realloc", &nb, kept);
		fill("mix_realloc", b, p, n, 16, 0x7e);
	}
}

NOINLINE void mix_reallocarray(struct worker *w, struct block *b)
{
	size_t n = size_of(w);

	if (!b->p) {
		fill("mix_reallocarray", b, malloc(n), n, 16, 0x5a);
		return;
	}
	fill("mix_reallocarray", b, reallocarray(b->p, n / 8, 8), n / 8 * 8, 16, 0x5a);
}

NOINLINE void mix_posix_memalign(struct worker *w, struct block *b)
{
	size_t n = size_of(w);
	void *p = NULL;

	if (b->p) {
		check("mix_posix_memalign", b, b->size);
		free(b->p);
	}
	if (posix_memalign(&p, 64, n) != 0)
		p = NULL;
	fill("mix_posix_memalign", b, p, n, 64, 0x64);
}

#define ALIGNED(site, call, align, c)                         \
	NOINLINE void site(struct worker *w, struct block *b) \
	{                                                     \
		size_t n = size_of(w);                        \
		if (b->p) {                                   \
			check(#site, b, b->size);             \
			free(b->p);                           \
		}                                             \
		fill(#site, b, call, n, align, c);            \
	}

ALIGNED(mix_aligned_alloc, aligned_alloc(128, (n + 127) / 128 * 128), 128, 0xa1)
ALIGNED(mix_memalign, memalign(64, n), 64, 0x3e)
ALIGNED(mix_valloc, valloc(n), 4096, 0x4a)
ALIGNED(mix_pvalloc, pvalloc(n), 4096, 0x9a)

NOINLINE void mix_new(struct worker *w, struct block *b)
{
	size_t n = size_of(w);

	if (b->p) {
		check("mix_new", b, b->size);
		::operator delete(b->p); /* delete of a char * would say size 1 */
	}
	fill("mix_new", b, ::operator new(n), n, 16, 0x11);
}

NOINLINE void mix_new_array(struct worker *w, struct block *b)
{
	size_t n = size_of(w);

	if (b->p) {
		check("mix_new_array", b, b->size);
		delete[] static_cast<char *>(static_cast<void *>(b->p));
	}
	fill("mix_new_array", b, new char[n], n, 1, 0x22);
}

NOINLINE void mix_new_sized(struct worker *w, struct block *b)
{
	size_t n = size_of(w);

	if (b->p) {
		check("mix_new_sized", b, b->size);
		::operator delete(b->p, b->size);
	}
	fill("mix_new_sized", b, ::operator new(n, std::nothrow), n, 16, 0x33);
}

NOINLINE void mix_new_aligned(struct worker *w, struct block *b)
{
	size_t n = size_of(w);

	if (b->p) {
		check("mix_new_aligned", b, b->size);
		if (b->size & 1)
			::operator delete(b->p, std::align_val_t(64));
		else
			::operator delete(b->p, b->size, std::align_val_t(64));
	}
	fill("mix_new_aligned", b, ::operator new(n, std::align_val_t(64)), n, 64, 0x44);
}

/* A std::string grown by libstdc++'s own code (its basic_string is
 * instantiated in libstdc++.so), whose operator new goes through
 * libstdc++'s GOT. */
NOINLINE void mix_string(struct worker *w, int i)
{
	size_t n = size_of(w);
	std::string s;

	if (w->str[i].find_first_not_of('s') != std::string::npos)
		say_wrong("mix_string", "a string's contents changed");
	s.append(n, 's');
	w->str[i].swap(s);
}

NOINLINE void mix_strdup(struct worker *w, struct block *b)
{
	static const char text[] = "allocated by libc, through its own GOT entry for malloc";
	(void)w;

	if (b->p) {
		if (strcmp((char *)b->p, text) != 0)
			say_wrong("mix_strdup", "a block's contents changed");
		free(b->p);
	}
	b->p = (unsigned char *)strdup(text);
	b->size = 0;
}

static void round_of(struct worker *w, unsigned r)
{
	int i = (int)(r % RING);

	mix_kept(w, i);
	mix_calloc(w, &w->c[i]);
	mix_realloc(w, &w->re[i]);
	if (uses[F_REALLOCARRAY])
		mix_reallocarray(w, &w->ra[i]);
	if (uses[F_POSIX_MEMALIGN])
		mix_posix_memalign(w, &w->pm[i]);
	if (uses[F_ALIGNED_ALLOC])
		mix_aligned_alloc(w, &w->aa[i]);
	if (uses[F_MEMALIGN])
		mix_memalign(w, &w->ma[i]);
	if (uses[F_VALLOC])
		mix_valloc(w, &w->va[i]);
	if (uses[F_PVALLOC])
		mix_pvalloc(w, &w->pv[i]);
	mix_new(w, &w->nw[i]);
	mix_new_array(w, &w->na[i]);
	mix_new_sized(w, &w->sz[i]);
	mix_new_aligned(w, &w->al[i]);
	mix_strdup(w, &w->sd[i]);
	mix_string(w, i);
}

static void *work(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct timespec ts = {0, 200 * 1000};
	unsigned r = 0;

	for (; !stopping; r++) {
		round_of(w, r);
		nanosleep(&ts, NULL);
	}
	/* Whole rounds to the end of the ring, then everything freed. */
	for (; r % RING; r++)
		round_of(w, r);
	for (int i = 0; i < RING; i++) {
		if (w->kept[i].p) {
			free_fn f = got_free();
			w->kept_frees += (unsigned long)(w->kept_recorded[i] && f != prog_free);
			f(w->kept[i].p);
		}
		free(w->c[i].p);
		free(w->re[i].p);
		free(w->ra[i].p);
		free(w->pm[i].p);
		free(w->aa[i].p);
		free(w->ma[i].p);
		free(w->va[i].p);
		free(w->pv[i].p);
		::operator delete(w->nw[i].p);
		delete[] static_cast<char *>(static_cast<void *>(w->na[i].p));
		::operator delete(w->sz[i].p);
		if (w->al[i].p)
			::operator delete(w->al[i].p, std::align_val_t(64));
		free(w->sd[i].p);
		std::string().swap(w->str[i]);
	}
	return NULL;
}

int main()
{
	static struct worker w[2];
	Dl_info m, f;
	char line[64];

	prog_malloc = got_malloc();
	prog_free = got_free();
	if (!dladdr((void *)prog_malloc, &m)) {
		fprintf(stderr, "allocmix: cannot tell which object defines malloc\n");
		return 2;
	}
	for (int i = 0; i < NF; i++) {
		void *fn = dlsym(RTLD_DEFAULT, fnames[i]);
		uses[i] = fn && dladdr(fn, &f) && f.dli_fbase == m.dli_fbase;
	}
	for (int i = 0; i < 2; i++) {
		w[i].seed = 17u + (unsigned)i;
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin) && strcmp(line, "stop\n") != 0)
		;
	stopping = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	printf("uses malloc calloc realloc free");
	for (int i = 0; i < NF; i++)
		if (uses[i])
			printf(" %s", fnames[i]);
	printf(" malloc_usable_size strdup new delete\n");
	if (!wrong)
		printf("ok\n");
	fprintf(stderr, "kept allocs %lu frees %lu\n", w[0].kept_allocs + w[1].kept_allocs,
		w[0].kept_frees + w[1].kept_frees);
	fprintf(stderr, "patched %d\n", got_malloc() != prog_malloc);
	return wrong ? 1 : 0;
}
