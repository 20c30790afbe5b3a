/*
 * memmap.h - the memory map of a snapshot: where its live blocks lie
 * (BLOCKS record, `heapprof run --live-blocks`), gathered into regions of
 * the address space (blocks less than HP_MAP_GAP_BYTES apart), each with
 * its span, the bytes in use in it (fragmentation at a glance: in use
 * against span), its largest gap and the stacks that hold most of it.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_MEMMAP_H
#define HP_ANALYZER_MEMMAP_H

#include <stdio.h>

#include "model.h"
#include "report.h"

#define HP_MAP_GAP_BYTES (1u << 20)

/* report --map: the regions of m's snapshot, with their top stacks (text),
 * or every block and the regions (json). A snapshot without blocks says
 * so (text) or gives "blocks": null. Returns 0 or -errno. */
int hp_report_map(FILE *out, const struct hp_model *m, const struct hp_report_options *o, int json);

#endif
