/*
 * root.h - the recorder's side of its root (the layout, read by heapprof
 * core, is src/format/root.h): the functions that fill heapprof_root.
 */
#ifndef HP_RECORDER_ROOT_H
#define HP_RECORDER_ROOT_H

#include "../format/root.h"

/* In the recorder: each module describes its own tables (their struct bodies are its own).
 * Called once by hp_root_fill. No allocation, no lock. */
void hp_stacks_root(struct hp_root *r);
void hp_agg_root(struct hp_root *r);
void hp_live_root(struct hp_root *r);
void hp_tags_root(struct hp_root *r);
/* Fills heapprof_root: once, at init, after the tables are set up and
 * before recording starts. Not thread-safe; no allocation, no lock. */
void hp_root_fill(void);

#endif
