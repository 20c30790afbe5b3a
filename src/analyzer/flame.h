/*
 * flame.h - the flame graph: a model's call stacks merged into a tree of
 * function chains, drawn as one self-contained interactive SVG.
 *
 * The tree: the root ("all") holds every bucket; below it each symbolic
 * frame of a stack is one level, outermost first, and inside a location the
 * containing function comes before the functions inlined into it (the
 * order of folded.h). Two frames merge when they have the same parent and
 * the same function, file, module and inlined flag, so a function called
 * from two lines of its caller is one frame (its tooltip lists the lines).
 * A node's value is the sum of one metric (model.h) over the stacks
 * passing through it; a stack without frames hangs under "[no stack]".
 * The runtime's frames below main (_start, __libc_start_main) and a
 * thread's way to its function (start_thread, clone, std::thread's
 * helpers) are left out, as report leaves them out (frames.h), so
 * a stack's outermost frame is main or the thread's function; their bytes
 * stay in every frame above them and in the root.
 * Invariants: a child's value never exceeds its parent's, the root's value
 * is the sum over all buckets, and a node's index is larger than its
 * parent's.
 *
 * The drawing: root at the bottom, the innermost frames on top; each
 * frame's width is its share of the root, siblings sorted by value (the
 * largest on the left). Frames narrower than a fraction of the total
 * (default 0.1%) are left out with their subtrees, and counted in the
 * subtitle. Frames are coloured by module (a hue hashed from the module's
 * file name, the shade from the function's name), inlined frames are pale
 * with italic labels, frames without symbols grey. The inline script adds:
 * hover details (function, file:line, the figure and its share), zoom on
 * click (the ancestors stay, faded; "Reset zoom", a click on the root or
 * Escape goes back), and a search (the Search button or Ctrl-F: a regular
 * expression over function names, typed in a search box in the page; Ctrl-F
 * goes to it) that colours matching frames and shows the share they cover.
 * The details of the hovered frame wrap onto three lines under the frames
 * and are cut in the middle past that: never at the image's edge. With
 * icicle, the root is at the top and callees below. Nothing is fetched: the file works offline and as
 * an <img> (without interaction).
 *
 * For scripts and tests the page exposes window.hpFlame = {search(re),
 * zoom(frameIndex), reset()}, marks matching frames with class "m" and the
 * ancestors of a zoomed frame with class "a", names the search box (an
 * HTML <input> in a <foreignObject>) class "hp-q", and sets data-ready="1" on
 * its <svg> once the script has run. Each frame is a <g class="f"> with
 * data-n (function), data-d (depth, the root 0), data-p (the parent
 * frame's index in document order), data-x and data-v (its offset and
 * value in the metric's units), holding a <title>, a <rect> and a <text>.
 * data-n is the function's whole name (what the search matches); the
 * label and the hover say its name as every view shows it (frames.h,
 * hp_frame_names: no parameter list unless two overloads would read the
 * same, template arguments elided), also in data-l when it differs.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_FLAME_H
#define HP_ANALYZER_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "model/model.h"

struct hp_flame; /* the merged tree of one model and one metric */

struct hp_flame_options {
	const char *title;   /* NULL: "<Metric>: <program>" */
	unsigned width_px;   /* the image's width; 0: 1200, at least 200 */
	double min_fraction; /* frames below this share of the total are not drawn;
				0: 0.001 (0.1%) */
	int icicle;          /* the root at the top, the innermost frames below */
};

/* Merges m's stacks into a tree by metric. Returns 0 with *out set (free it
 * with hp_flame_free), or -ENOMEM. m must outlive the tree: names are the
 * model's strings. */
int hp_flame_build(const struct hp_model *m, enum hp_metric metric, struct hp_flame **out);

/* The same with each stack under a root frame of its bucket's key in dim
 * (group.h: HP_BY_TYPE or HP_BY_CONTEXT; HP_BY_STACK: none). */
int hp_flame_build_by(const struct hp_model *m, enum hp_metric metric, int dim,
		      struct hp_flame **out);

/* The same, with every frame kept when all_frames (the runtime's below
 * main and a thread's start included). */
int hp_flame_build_all(const struct hp_model *m, enum hp_metric metric, int dim, int all_frames,
		       struct hp_flame **out);

/* The same for the blocks of heap (model.h: HP_HEAP_ALL or a heap id;
 * hp_flame_build_by draws malloc's, 0), every frame kept when all_frames.
 * When the model has a custom heap's blocks (hp_model_heap_marked), each
 * stack hangs under a root frame naming its heap ("[heap arena]"), above
 * the frame of its key in dim. */
int hp_flame_build_heap(const struct hp_model *m, enum hp_metric metric, int dim, int64_t heap,
			int all_frames, struct hp_flame **out);

void hp_flame_free(struct hp_flame *f);

/* The root's value: the metric summed over every bucket. */
double hp_flame_total(const struct hp_flame *f);

/* Writes the SVG. Every text taken from the capture (names, paths, the
 * program's arguments, the title) is escaped for XML and made valid UTF-8.
 * Returns 0, or -EIO when a write failed (out is not closed), or -ENOMEM.
 * On success *drawn_count, when not NULL, is the number of frames drawn. */
int hp_flame_write_svg(FILE *out, const struct hp_flame *f, const struct hp_flame_options *o,
		       size_t *drawn_count);

#endif
