/*
 * cxx_inline.cpp - C++ names to demangle and an inlined frame: make() is
 * always inlined into shapes::Factory<int>::build, which allocates through
 * it; 3 blocks of 16 ints, leaked.
 */
#include <cstddef>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

namespace shapes {

static inline __attribute__((always_inline)) int *make(std::size_t n)
{
	return new int[n];
}

template <typename T> struct Factory {
	__attribute__((noinline)) static T *build(std::size_t n)
	{
		T *p = make(n);
		KEEP(p);
		return p;
	}
};

} // namespace shapes

int main()
{
	for (int i = 0; i < 3; i++)
		KEEP(shapes::Factory<int>::build(16));
	return 0;
}
