/*
 * memmap.h - the memory map of a snapshot: where its live blocks lie
 * (BLOCKS record, `heapprof run --live-blocks`) in the regions of the
 * address space that hold the heap (MAPS record, format 1.5: glibc's brk
 * heap, its other arenas' heaps, its mmap'd chunks, any other mapping
 * holding a block), each with its size, its resident bytes (RSS), the
 * bytes in use in it, its largest free stretch, its fragmentation (1 - in
 * use / RSS) and the stacks that hold most of it.
 *
 * A capture from before format 1.5 has no MAPS: its regions are gathered
 * from the blocks alone (blocks less than HP_MAP_GAP_BYTES apart), with no
 * kind and no RSS.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_MEMMAP_H
#define HP_ANALYZER_MEMMAP_H

#include <stdio.h>

#include "model/model.h"
#include "report.h"

#define HP_MAP_GAP_BYTES (1u << 20)

struct hp_map_region {
	uint64_t start, end; /* [start, end) */
	uint32_t kind;       /* HP_MAP_*; 0: gathered from the blocks (no MAPS) */
	uint32_t perms;      /* HP_MAP_PERM_* */
	const char *name;    /* the mapping's (the capture's string), "" */
	int has_rss;         /* from a MAPS record */
	uint64_t rss_bytes;
	size_t first, count; /* its blocks: s->blocks[first .. first + count) */
	uint64_t inuse_bytes;
	/* The largest stretch of it that no live block covers: between two
	 * blocks, or before the first, or after the last (glibc's top chunk,
	 * an mmap'd chunk's tail). */
	uint64_t largest_gap_bytes;
};

struct hp_map {
	struct hp_map_region *regions; /* by address; owned */
	size_t n;
	int from_maps; /* the regions are the MAPS record's */
	/* Blocks that lie in no region (a MAPS record written while another
	 * thread unmapped one): their count and bytes. */
	size_t outside_count;
	uint64_t outside_bytes;
};

/* The regions of snapshot s (which has_blocks) and the blocks in each,
 * into *map (free with hp_map_free). Returns 0 or -ENOMEM. */
int hp_map_build(const struct hp_cap_snapshot *s, struct hp_map *map);
void hp_map_free(struct hp_map *map);

/* 1 - in use / RSS: the share of a region's resident bytes that no live
 * block uses, 0 when the blocks use all of it (or more: blocks not yet
 * touched), and when it has no RSS figure. */
double hp_map_fragmentation(const struct hp_map_region *r);

/* A stack's share of a region. */
struct hp_map_holder {
	uint32_t stack;
	size_t count;
	uint64_t bytes;
};

/* The stacks holding most bytes of r (ties: lower stack id first): up to
 * max into top; returns how many. Returns 0 (none) when out of memory. */
size_t hp_map_holders(const struct hp_cap_snapshot *s, const struct hp_map_region *r,
		      struct hp_map_holder *top, size_t max);

/* "brk", "arena", "mmap", "other", or "blocks" (kind 0). */
const char *hp_map_kind_name(uint32_t kind);

/* perms as /proc/self/maps has them ("rw-p") into buf. */
void hp_map_perms(uint32_t perms, char buf[5]);

/* report --map: the regions of m's snapshot, with their top stacks (text),
 * or every block and the regions (json). A snapshot without blocks says
 * so (text) or gives "blocks": null. Returns 0 or -errno. */
int hp_report_map(FILE *out, const struct hp_model *m, const struct hp_report_options *o, int json);

#endif
