/*
 * cxx_types.cpp - allocations whose types only the stack tells: the
 * standard containers' nodes and arrays, make_shared and make_unique.
 * Counts are fixed: tests/integration/test_types.c checks them by type.
 *
 *   std::map<int, std::string>       MAP_NODES nodes, kept to the end
 *   std::unordered_map<int, int>     HASH_NODES nodes (and a bucket array)
 *   std::vector<Point>               one reserve of VEC_POINTS
 *   std::make_shared<Widget>         SHARED_WIDGETS control blocks
 *   std::make_unique<Gadget>         UNIQUE_GADGETS objects
 */
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#define MAP_NODES 7
#define HASH_NODES 5
#define VEC_POINTS 100
#define SHARED_WIDGETS 3
#define UNIQUE_GADGETS 4

struct Point {
	double x, y;
};

struct Widget {
	long a[5];
};

struct Gadget {
	int v[3];
};

static std::map<int, std::string> m;
static std::unordered_map<int, int> h;
static std::vector<Point> points;
static std::vector<std::shared_ptr<Widget>> widgets;
static std::vector<std::unique_ptr<Gadget>> gadgets;

int main()
{
	for (int i = 0; i < MAP_NODES; i++)
		m[i] = "x";
	h.reserve(64);
	for (int i = 0; i < HASH_NODES; i++)
		h[i] = i;
	points.reserve(VEC_POINTS);
	widgets.reserve(16);
	gadgets.reserve(16);
	for (int i = 0; i < SHARED_WIDGETS; i++)
		widgets.push_back(std::make_shared<Widget>());
	for (int i = 0; i < UNIQUE_GADGETS; i++)
		gadgets.push_back(std::make_unique<Gadget>());
	std::printf("%zu %zu %zu %zu %zu\n", m.size(), h.size(), points.capacity(), widgets.size(),
		    gadgets.size());
	return 0;
}
