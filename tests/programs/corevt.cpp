/*
 * corevt.cpp - polymorphic objects of three classes under heapprof, then
 * abort() with a core (tests/integration/test_core_rec.c,
 * core_vtable_types): each class from its own noinline site,
 *   Circle  16 bytes (vptr, double)          6 made, 2 deleted -> 4 x 16
 *   Square  24 bytes (vptr, 2 doubles)       3 made            -> 3 x 24
 *   Poly    40 bytes (vptr, 4 doubles)       2 made            -> 2 x 40
 * and 5 plain malloc(24) blocks, no vtable, that stay of unknown type.
 * The recorder names types by vtable only at an ordinary snapshot, and
 * writes none before the core: the capture of the dump reads them from
 * the objects' memory in the core. RLIMIT_CORE is raised so the kernel
 * writes the core in the current directory.
 */
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};

struct Circle : Shape {
	double r = 1;
	double area() const override { return 3 * r * r; }
};

struct Square : Shape {
	double w = 2, h = 2;
	double area() const override { return w * h; }
};

struct Poly : Shape {
	double x[4] = {1, 2, 3, 4};
	double area() const override { return x[0] * x[3]; }
};

static_assert(sizeof(Circle) == 16 && sizeof(Square) == 24 && sizeof(Poly) == 40,
	      "the sizes the test expects");

static Shape *keep[32];
static void *plain[8];

__attribute__((noinline)) static Shape *make_circle() { return new Circle; }
__attribute__((noinline)) static Shape *make_square() { return new Square; }
__attribute__((noinline)) static Shape *make_poly() { return new Poly; }
__attribute__((noinline)) static void *make_plain() { return malloc(24); }

int main()
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	double sum = 0;
	int n = 0;

	if (setrlimit(RLIMIT_CORE, &rl) != 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	for (int i = 0; i < 6; i++)
		keep[n++] = make_circle();
	for (int i = 0; i < 2; i++)
		delete keep[--n];
	for (int i = 0; i < 3; i++)
		keep[n++] = make_square();
	for (int i = 0; i < 2; i++)
		keep[n++] = make_poly();
	for (int i = 0; i < 5; i++)
		plain[i] = make_plain();
	for (int i = 0; i < n; i++)
		sum += keep[i]->area();
	std::printf("kept %d, area %g\n", n, sum);
	std::fflush(stdout);
	abort();
}
