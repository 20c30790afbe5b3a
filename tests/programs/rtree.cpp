// rtree.cpp - a tree built by recursion and an index of std::map, whose
// allocation sites are known (tests/integration/test_report.c, issue 24):
// each recursion depth is a stack of its own, so the report's first entry
// names the tree only when stacks are grouped by allocation site.
//
//   the tree:  build() allocates one Node (RTREE_NODE_SIZE bytes) per
//              call, 1 root + RTREE_FANOUT chains of RTREE_DEPTH nodes:
//              RTREE_NODES nodes, on RTREE_DEPTH + 1 stacks (4 nodes a
//              stack below the root);
//   the index: index_value() inserts one std::map<std::string,
//              std::string> entry per node (a key and a value longer than
//              std::string's inline buffer), walked by recursion too.
// Everything is held at once (the peak), then freed.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "rtree.h"

struct Node {
	Node *kids[RTREE_FANOUT];
	int nkids;
	int depth;
	char payload[RTREE_NODE_SIZE - RTREE_FANOUT * sizeof(Node *) - 2 * sizeof(int)];
};
static_assert(sizeof(Node) == RTREE_NODE_SIZE, "a node is RTREE_NODE_SIZE bytes");

namespace store
{

struct Value {
	std::string text;
};

// One entry of the index: a map node, its key and its value.
__attribute__((noinline)) void index_value(std::map<std::string, std::string> &index,
					   const Value *v, int id)
{
	char key[64];
	snprintf(key, sizeof key, "node-key-%06d-padded-to-be-long-enough", id);
	index[key] = v->text;
}

} // namespace store

// A subtree: the root has RTREE_FANOUT children, every other node one,
// down to RTREE_DEPTH.
__attribute__((noinline)) static Node *build(int depth, int fanout)
{
	Node *n = new Node();
	n->depth = depth;
	n->nkids = depth < RTREE_DEPTH ? fanout : 0;
	for (int i = 0; i < n->nkids; i++)
		n->kids[i] = build(depth + 1, 1);
	return n;
}

__attribute__((noinline)) static void index_tree(std::map<std::string, std::string> &index,
						 const Node *n, const store::Value *v, int *id)
{
	store::index_value(index, v, (*id)++);
	for (int i = 0; i < n->nkids; i++)
		index_tree(index, n->kids[i], v, id);
}

__attribute__((noinline)) static int destroy(Node *n)
{
	int count = 1;
	for (int i = 0; i < n->nkids; i++)
		count += destroy(n->kids[i]);
	delete n;
	return count;
}

int main()
{
	std::map<std::string, std::string> index;
	store::Value v{std::string(100, 'v')};
	int id = 0;
	Node *root = build(0, RTREE_FANOUT);

	index_tree(index, root, &v, &id);
	int nodes = destroy(root);
	index.clear();
	return nodes == RTREE_NODES && id == RTREE_NODES ? 0 : 1;
}
