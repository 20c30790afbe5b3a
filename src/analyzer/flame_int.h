/*
 * flame_int.h - the flame graph's tree, shared by its builder (flame.c)
 * and its SVG writer (flame_svg.c). Not for other modules: they use flame.h.
 */
#ifndef HP_ANALYZER_FLAME_INT_H
#define HP_ANALYZER_FLAME_INT_H

#include <stdint.h>

#include "../common/strtab.h"
#include "../common/table.h"
#include "flame.h"

#define NONE UINT32_MAX
#define MAX_LINES 4 /* call lines listed in a frame's tooltip */

/* Geometry, in pixels. The labels are monospace so that their width is
 * known without measuring: DejaVu Sans Mono's advance is 0.602 em. */
#define PAD_PX 10
#define HEAD_PX 88     /* title, two subtitles, the controls line */
#define FOOT_PX 58     /* the details: up to three lines, wrapped, never cut */
#define FRAME_PX 16    /* one level, with a 1 px gap */
#define CHAR_PX 6.7    /* 11 px monospace (the style sets 11px), rounded up */
#define SUBCHAR_PX 7.3 /* 12 px monospace */
#define SEARCH_PX 260  /* the search box */

struct node {
	const char *function, *file; /* the model's strings */
	int module;
	uint64_t module_offset; /* of the first location seen, for frames without a file */
	uint32_t parent, depth;
	uint32_t kids, nkids; /* the children: order[kids .. kids + nkids) */
	uint32_t lines[MAX_LINES];
	uint8_t nlines, more_lines, inlined;
	double value;
};

struct hp_flame {
	const struct hp_model *m;
	enum hp_metric metric;
	size_t n, cap;
	struct node *nodes;  /* nodes[0] is the root */
	uint32_t *order;     /* every non-root node, grouped by parent, largest first */
	struct hp_hindex index; /* the non-root nodes by hash, while merging */
	struct hp_strtab keys;  /* hp_flame_build_by: the root frames' names */
};

#endif
