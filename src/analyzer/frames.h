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

#endif
