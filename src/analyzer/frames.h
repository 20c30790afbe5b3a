/*
 * frames.h - which frames of a call stack a reader is shown: the one rule
 * the report, the diff, the flame graph and the page share.
 *
 * A stack's frames, innermost first (in a location, the inlined callee
 * before its caller), less the runtime's: what is outside main (_start,
 * __libc_start_main), Rust's runtime starting the program's main
 * (std::rt::lang_start and __rust_begin_short_backtrace, cut after the
 * last frame of the program's own), a thread's way to its function below
 * the last frame of the program's own when the stack ends in the runtime
 * (start_thread, clone3, std::thread's helpers), and the runtime's entry
 * frames left. `--all-frames` keeps every frame.
 *
 * Ordinary analyzer C: allocates nothing, not thread-safe only as the
 * model is not.
 */
#ifndef HP_ANALYZER_FRAMES_H
#define HP_ANALYZER_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "../common/strtab.h"
#include "model/model.h"

/* One symbolic frame of a stack: m->locations[loc].syms[sym], and its class
 * (model.h hp_model_frame_class). */
struct hp_shown_frame {
	uint32_t loc, sym;
	enum hp_frame_class cls;
};

/* The frames of st a reader is shown (above), every frame when all, into
 * out (room for every symbolic frame of st: hp_frames_count). Returns how
 * many. Allocates nothing. */
size_t hp_frames_shown(const struct hp_model *m, const struct hp_mstack *st, int all,
		       struct hp_shown_frame *out);

/* The symbolic frames of st: the room hp_frames_shown needs. */
size_t hp_frames_count(const struct hp_model *m, const struct hp_mstack *st);

/*
 * Frame names as every view shows them (the SVG flame graph, the page, the
 * folded export): a function named without its parameter list, template
 * arguments elided (hp_name_display), unless two functions of the
 * program's own code would then read the same and differ by more than
 * template arguments (overloads: "shapes::area(shapes::Circle const&)" and
 * "shapes::area(shapes::Square const&)" both read "shapes::area"): those
 * keep their parameter lists, templates elided (hp_name_shorten), so no
 * view merges two of the program's functions or names them alike. A
 * library's overloads (std::vector's two push_back) read as one name, and
 * functions differing only by template arguments read the same, as they
 * do in the report.
 */
struct hp_frame_names {
	int full;                /* --full-names: every name as it is */
	struct hp_strtab names;  /* the model's function names */
	struct hp_strtab shown;  /* what each is shown as */
	uint32_t *as;            /* names index -> shown index */
	size_t as_cap;
};

/* The names of every frame of m (full_names: as they are). 0 or -ENOMEM;
 * free with hp_frame_names_free even on failure. */
int hp_frame_names_build(struct hp_frame_names *n, const struct hp_model *m, int full_names);

/* How function is shown; a name the model did not have is shown as
 * hp_name_display says (and remembered). Never NULL: on -ENOMEM,
 * function itself. The string lives as long as n. */
const char *hp_frame_names_get(struct hp_frame_names *n, const char *function);

void hp_frame_names_free(struct hp_frame_names *n);

#endif
