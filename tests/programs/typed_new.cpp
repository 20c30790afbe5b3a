/*
 * typed_new.cpp - new-expressions whose types and counts are known, for
 * types with and without include/heapprof/typed_new.hpp (test_typed_new):
 * the paper's three templates, a struct, std::string buffers, char
 * arrays and an array of a class with a destructor. Every block is kept
 * to the end (in use at the snapshot).
 *
 * The standard headers come after the typed_new.hpp that -include puts
 * first: that order is what the header must survive.
 */
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

struct Point {
	double x, y;
};

struct A {
	~A() { member = 0; }
	int member;
};

/* Kept here so that nothing is freed before the end. */
static std::vector<void *> kept;

__attribute__((noinline)) static void make_templates()
{
	for (int i = 0; i < 3; i++) {
		std::vector<std::string> *v = new std::vector<std::string>;
		kept.push_back(v);
	}
	for (int i = 0; i < 4; i++) {
		std::set<int> *s = new std::set<int>;
		kept.push_back(s);
	}
	for (int i = 0; i < 5; i++) {
		std::pair<unsigned long, bool> *p = new std::pair<unsigned long, bool>(i, true);
		kept.push_back(p);
	}
}

__attribute__((noinline)) static void make_points()
{
	for (int i = 0; i < 6; i++) {
		Point *p = new Point{1.0 * i, 2.0};
		kept.push_back(p);
	}
}

/* Seven strings of 40 characters: a buffer of 41 bytes each, built by
 * libstdc++'s own (compiled, not inlined) string functions. */
static std::vector<std::string> *strings;

__attribute__((noinline)) static void make_strings()
{
	strings = new std::vector<std::string>;
	strings->reserve(7);
	for (int i = 0; i < 7; i++)
		strings->push_back(std::string(40, static_cast<char>('a' + i)));
}

__attribute__((noinline)) static void make_arrays()
{
	for (int i = 0; i < 2; i++) {
		char *buf = new char[4096];
		buf[0] = 0;
		kept.push_back(buf);
	}
	A *fiveAs = new A[5];
	kept.push_back(fiveAs);
}

int main()
{
	kept.reserve(64);
	make_templates();
	make_points();
	make_strings();
	make_arrays();
	std::printf("%zu blocks kept\n", kept.size());
	return 0;
}
