/*
 * coreheap.cpp - a program whose heap is known exactly, for `heapprof
 * core` (tests/integration/test_core.c), run without heapprof.
 *
 * Every size below is a glibc size class (8 mod 16), so the usable size
 * the core shows is the size asked for. What it holds when dumped:
 *
 *   size      blocks  where                                   reachability
 *   1000      1       g_keep (bss)                            still reachable
 *   152       4       a list from g_list (heap -> heap)       still reachable
 *   200       1       main's stack                            still reachable
 *   456       1       the second thread's stack               still reachable
 *   328       1       only the second thread's r12            still reachable
 *   1 MiB     1       g_big (an mmapped chunk: 1052656)       still reachable
 *   104       5       pointers dropped                        definitely lost
 *   88        3       a list whose head was dropped           1 definitely, 2 indirectly lost
 *   Circle    2       g_shapes[0..1] (24 bytes)               still reachable
 *   Square    3       g_shapes[2]; 2 dropped (56 bytes)       1 reachable, 2 definitely lost
 *   geo::Poly<int> 3  in the second thread's arena: 2 on its  2 reachable, 1 definitely lost
 *                     stack, 1 dropped (40 bytes)
 *   72        10      freed: 7 in tcache, 3 in the fastbin    free
 *
 * It prints "NAME 0xADDR" lines for the test's --whatis, then "ready",
 * and then, with argument "abort", aborts (core dumps enabled, into the
 * current directory); with "wait", waits for a line on standard input
 * (while the test runs gcore), checks its blocks are intact and exits 0.
 *
 * Output goes through write(2): stdio would add a buffer to the heap.
 * Functions that drop pointers are noinline and the stack below main's
 * frame is scrubbed after them, so no stale copy keeps a lost block.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};
struct Circle : Shape {
	double r = 1;
	double area() const override { return 3.14159 * r * r; }
};
struct Square : Shape {
	double s[6] = {2, 0, 0, 0, 0, 0};
	double area() const override { return s[0] * s[0]; }
};
namespace geo {
template <class T> struct Poly : Shape {
	T pts[8] = {};
	double area() const override { return (double)pts[0]; }
};
} // namespace geo

struct Node {
	Node *next;
	char pad[144]; /* 152 bytes */
};
struct LostNode {
	LostNode *next;
	char pad[80]; /* 88 bytes */
};

static_assert(sizeof(Circle) == 16 && sizeof(Square) == 56 && sizeof(geo::Poly<int>) == 40,
	      "the sizes the test expects");

void *g_keep;
void *g_big;
Node *g_list;
Shape *g_shapes[3];
void *volatile g_handoff; /* main -> the second thread's r12 */
static volatile int g_thread_ready;
static int g_pipe[2];

static void say(const char *name, const void *p)
{
	char line[64];
	int n = snprintf(line, sizeof line, "%s %p\n", name, p);
	if (write(1, line, (size_t)n) != n)
		_exit(3);
}

NOINLINE static void scrub(void)
{
	volatile char junk[64 * 1024];
	memset((char *)junk, 0, sizeof junk);
	KEEP(junk);
}

NOINLINE static void make_lost(void)
{
	void *p[5];
	for (int i = 0; i < 5; i++)
		p[i] = malloc(104);
	say("lost", p[2]);
	KEEP(p);
	memset(p, 0, sizeof p);
	KEEP(p);
	Shape *a = new Square, *b = new Square;
	say("square_lost", a);
	KEEP(a);
	KEEP(b);
	LostNode *n = nullptr;
	for (int i = 0; i < 3; i++) {
		LostNode *x = static_cast<LostNode *>(calloc(1, sizeof *x));
		x->next = n;
		n = x;
	}
	say("lost_head", n);
	say("indirect", n->next);
	KEEP(n);
}

NOINLINE static void make_kept(void)
{
	g_keep = malloc(1000);
	say("global", g_keep);
	g_big = malloc(1 << 20);
	memset(g_big, 0x5a, 1 << 20);
	say("big", g_big);
	for (int i = 0; i < 4; i++) {
		Node *x = static_cast<Node *>(calloc(1, sizeof *x));
		x->next = g_list;
		g_list = x;
	}
	say("list_head", g_list);
	say("list_second", g_list->next);
	g_shapes[0] = new Circle;
	g_shapes[1] = new Circle;
	g_shapes[2] = new Square;
	say("circle", g_shapes[0]);
	g_handoff = malloc(328);
	say("reg", g_handoff);
}

NOINLINE static void make_free(void)
{
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = malloc(72);
	say("tcache_free", p[0]);
	say("fastbin_free", p[9]);
	for (int i = 0; i < 10; i++)
		free(p[i]);
}

NOINLINE static void make_poly_lost(void)
{
	Shape *lost = new geo::Poly<int>;
	say("poly_lost", lost);
	KEEP(lost);
}

/* The second thread: blocks of its own arena on its stack, one only in
 * r12, then waits in read(2) on a pipe nobody writes to. */
static void *second(void *)
{
	geo::Poly<int> *kept[2];
	void *volatile on_stack = malloc(456);
	kept[0] = new geo::Poly<int>;
	kept[1] = new geo::Poly<int>;
	KEEP(kept);
	say("tstack", on_stack);
	say("poly", kept[0]);
	make_poly_lost();
	scrub();
	register void *r12 __asm__("r12") = g_handoff;
	g_handoff = nullptr;
	g_thread_ready = 1;
	char c;
	long ret;
	/* read(2) as a bare syscall: r12 is the only copy of the pointer */
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_read), "D"((long)g_pipe[0]), "S"(&c), "d"(1L), "r"(r12)
			 : "rcx", "r11", "memory");
	KEEP(r12);
	KEEP(kept);
	return (void *)ret;
}

int main(int argc, char **argv)
{
	int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
	void *volatile on_main_stack;
	pthread_t t;

	if (abort_mode) {
		struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};
		setrlimit(RLIMIT_CORE, &r);
	}
	if (pipe(g_pipe))
		return 2;
	make_kept();
	make_lost();
	make_free();
	on_main_stack = malloc(200);
	say("stack", on_main_stack);
	if (pthread_create(&t, nullptr, second, nullptr))
		return 2;
	while (!g_thread_ready)
		usleep(1000);
	scrub();
	say("ready", nullptr);
	if (abort_mode)
		abort();
	char line[16];
	if (read(0, line, sizeof line) < 0)
		return 2;
	/* still running, its blocks intact */
	int ok = g_shapes[0]->area() > 3 && static_cast<unsigned char *>(g_big)[12345] == 0x5a &&
		 on_main_stack != nullptr;
	say(ok ? "alive" : "broken", on_main_stack);
	return ok ? 0 : 1;
}
