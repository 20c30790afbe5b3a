/* rtree.h - the figures of rtree.cpp, which the tests check. */
#ifndef HP_TESTS_RTREE_H
#define HP_TESTS_RTREE_H

#define RTREE_FANOUT 4
#define RTREE_DEPTH 24
#define RTREE_NODE_SIZE 8192
#define RTREE_NODES (1 + RTREE_FANOUT * RTREE_DEPTH) /* 97 */
/* The index: per node, a map node (std::pair<const std::string,
 * std::string> and the tree's 32-byte header: 96 bytes), its key (40
 * characters: 41 bytes) and its value (100 characters: 101 bytes). */
#define RTREE_INDEX_BYTES (RTREE_NODES * (96 + 41 + 101))
#define RTREE_INDEX_BLOCKS (3 * RTREE_NODES)

#endif
