/*
 * attr_cxx.cpp - polymorphic objects of 3 classes through base pointers
 * (issue 9: types read from their vtables at snapshots), for
 * tests/integration/test_attr.c. Prints each class's vtable address point
 * (the vtable symbol + 16), taken from the mangled symbol itself.
 *
 *   make_shapes: 3 Circle (16 bytes), 2 Square (24), 1 Tri (32), then
 *   heapprof_dump(); one Circle deleted before the dump.
 */
#include <cstdint>
#include <cstdio>

#include "../../include/heapprof.h"

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};
struct Circle : Shape {
	double r = 1;
	double area() const override { return 3 * r * r; }
};
struct Square : Shape {
	double s[2] = {1, 2};
	double area() const override { return s[0] * s[1]; }
};
struct Tri : Shape {
	double a[3] = {1, 2, 3};
	double area() const override { return a[0] + a[1] + a[2]; }
};

extern "C" const char vt_circle[] __asm__("_ZTV6Circle");
extern "C" const char vt_square[] __asm__("_ZTV6Square");
extern "C" const char vt_tri[] __asm__("_ZTV3Tri");

static Shape *shapes[6];

static __attribute__((noinline)) void make_shapes()
{
	for (int i = 0; i < 3; i++)
		shapes[i] = new Circle;
	for (int i = 3; i < 5; i++)
		shapes[i] = new Square;
	shapes[5] = new Tri;
}

int main()
{
	double sum = 0;

	make_shapes();
	delete shapes[0];
	shapes[0] = nullptr;
	for (Shape *s : shapes)
		sum += s ? s->area() : 0;
	if (heapprof_dump)
		heapprof_dump();
	std::printf("circle=%#lx square=%#lx tri=%#lx sum=%g\n", (unsigned long)(uintptr_t)vt_circle + 16,
		    (unsigned long)(uintptr_t)vt_square + 16, (unsigned long)(uintptr_t)vt_tri + 16, sum);
	return 0;
}
