/*
 * overloads.cpp - two overloads of one function allocating different
 * figures, for the views' names (issue 24 item 4): shapes::area(Circle
 * const&) leaks 3 x 1000 bytes, shapes::area(Square const&) 5 x 200;
 * shapes::solo(int, char const*) 7 x 30 has no overload. Every view must
 * keep the two areas apart and tell them by name; solo reads without its
 * parameter list. Functions are noinline and end with a compiler barrier
 * so that each keeps its frame.
 */
#include <cstdlib>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

namespace shapes {
struct Circle {
	int r;
};
struct Square {
	int side;
};

NOINLINE void area(const Circle &c)
{
	for (int i = 0; i < 3; i++)
		KEEP(malloc(1000 + 0 * c.r));
}

NOINLINE void area(const Square &s)
{
	for (int i = 0; i < 5; i++)
		KEEP(malloc(200 + 0 * s.side));
}

NOINLINE void solo(int n, const char *why)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(30));
	KEEP(why);
}
} // namespace shapes

int main()
{
	shapes::area(shapes::Circle{1});
	shapes::area(shapes::Square{2});
	shapes::solo(7, "solo");
	return 0;
}
