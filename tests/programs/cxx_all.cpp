/*
 * cxx_all.cpp - every operator new and delete, each pair from its own
 * function, every block freed; a throwing new that fails; then one more
 * allocation to show recording goes on after the exception.
 */
#include <cstdio>
#include <cstdlib>
#include <new>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

struct alignas(64) Wide {
	char bytes[128];
};

/* extern "C": the tests name these functions by their ELF symbols. */
extern "C" {
NOINLINE void new_plain() { int *p = new int; KEEP(p); delete p; }
NOINLINE void new_array() { int *p = new int[10]; KEEP(p); delete[] p; }
NOINLINE void new_nothrow() { int *p = new (std::nothrow) int; KEEP(p); delete p; }
NOINLINE void new_array_nothrow() { int *p = new (std::nothrow) int[20]; KEEP(p); delete[] p; }
NOINLINE void new_aligned() { Wide *p = new Wide; KEEP(p); delete p; }
NOINLINE void new_aligned_array() { Wide *p = new Wide[3]; KEEP(p); delete[] p; }
NOINLINE void new_aligned_nothrow() { Wide *p = new (std::nothrow) Wide; KEEP(p); delete p; }
NOINLINE void new_aligned_array_nothrow()
{
	Wide *p = new (std::nothrow) Wide[2];
	KEEP(p);
	delete[] p;
}
NOINLINE void explicit_operators()
{
	/* The remaining delete variants, called by name. */
	void *a = operator new(24);
	operator delete(a, std::nothrow);
	void *b = operator new[](40);
	operator delete[](b, std::nothrow);
	void *c = operator new(96, std::align_val_t(32));
	operator delete(c, std::align_val_t(32), std::nothrow);
	void *d = operator new[](160, std::align_val_t(32));
	operator delete[](d, std::align_val_t(32), std::nothrow);
	void *e = operator new(56);
	operator delete(e, 56);
	void *f = operator new[](72);
	operator delete[](f, 72);
	void *g = operator new(88, std::align_val_t(64));
	operator delete(g, 88, std::align_val_t(64));
	void *h = operator new[](104, std::align_val_t(64));
	operator delete[](h, 104, std::align_val_t(64));
	void *i = operator new(120, std::align_val_t(16));
	operator delete(i, std::align_val_t(16));
	void *j = operator new[](136, std::align_val_t(16));
	operator delete[](j, std::align_val_t(16));
}
NOINLINE int new_fails()
{
	try {
		volatile size_t huge = (size_t)-1 / 2;
		char *p = new char[huge];
		KEEP(p);
		return 1;
	} catch (const std::bad_alloc &) {
		return 0;
	}
}
NOINLINE void after_exception() { int *p = new int[5]; KEEP(p); delete[] p; }
}

int main()
{
	new_plain();
	new_array();
	new_nothrow();
	new_array_nothrow();
	new_aligned();
	new_aligned_array();
	new_aligned_nothrow();
	new_aligned_array_nothrow();
	explicit_operators();
	if (new_fails())
		return 1;
	after_exception();
	return 0;
}
