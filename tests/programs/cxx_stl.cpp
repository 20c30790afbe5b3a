// cxx_stl.cpp - a C++ program that allocates through the standard
// library's containers (vector, string, map, unordered_map, deque, list,
// shared_ptr, a std::thread), from functions of its own whose names start
// with "stl_", for the report's readability tests (test_readable.c): each
// stack's first frame of the program's own must be among the report's
// first lines, and nothing below main.
//
// It leaks one block on purpose, stl_leak's STL_LEAK_SIZE bytes, and the
// rest is freed before exit (the runtime's own allocations aside).
#include <cstdio>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#define NOINLINE __attribute__((noinline))
#define STL_LEAK_SIZE 4242

template <typename T> NOINLINE void keep(T &x)
{
	__asm__ volatile("" : : "r"(&x) : "memory");
}

struct Record {
	std::string name;
	std::vector<double> values;
};

NOINLINE void stl_vector_of_strings()
{
	std::vector<std::string> v;
	for (int i = 0; i < 200; i++)
		v.push_back(std::string(40 + i % 7, 'x'));
	keep(v);
}

NOINLINE void stl_map_of_vectors()
{
	std::map<int, std::vector<int>> m;
	for (int i = 0; i < 100; i++)
		m[i].resize(10 + i);
	keep(m);
}

NOINLINE void stl_unordered_map()
{
	std::unordered_map<std::string, Record> u;
	for (int i = 0; i < 100; i++)
		u.emplace(std::to_string(i * 1000003), Record{std::string(30, 'r'), {1.0, 2.0}});
	keep(u);
}

NOINLINE void stl_deque_and_list()
{
	std::deque<int> d;
	std::list<Record> l;
	for (int i = 0; i < 1000; i++)
		d.push_back(i);
	for (int i = 0; i < 50; i++)
		l.push_back(Record{std::string(25, 'l'), std::vector<double>(5)});
	keep(d);
	keep(l);
}

NOINLINE void stl_shared()
{
	std::vector<std::shared_ptr<Record>> v;
	for (int i = 0; i < 30; i++)
		v.push_back(std::make_shared<Record>());
	keep(v);
}

NOINLINE void stl_thread_body()
{
	std::vector<long> v(1000);
	keep(v);
}

NOINLINE void stl_thread()
{
	std::thread t(stl_thread_body);
	t.join();
}

NOINLINE void stl_leak()
{
	char *p = new char[STL_LEAK_SIZE];
	keep(p);
}

int main()
{
	stl_vector_of_strings();
	stl_map_of_vectors();
	stl_unordered_map();
	stl_deque_and_list();
	stl_shared();
	stl_thread();
	stl_leak();
	std::printf("cxx_stl done\n"); // stdout's buffer: a runtime allocation
	return 0;
}
