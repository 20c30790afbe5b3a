/*
 * frames.c - which frames of a call stack a reader is shown (frames.h).
 */
#include "frames.h"

#include <string.h>

/* Whether fn is Rust's runtime starting the program's main (std::rt's
 * lang_start and what it calls it through), as __libc_start_main is C's. */
static int rust_start(const char *fn)
{
	return strncmp(fn, "std::rt::lang_start", 19) == 0 ||
	       strstr(fn, "__rust_begin_short_backtrace") != NULL;
}

size_t hp_frames_count(const struct hp_model *m, const struct hp_mstack *st)
{
	size_t n = 0;

	for (uint32_t i = 0; i < st->depth; i++)
		n += m->locations[st->locations[i]].nsyms;
	return n;
}

size_t hp_frames_shown(const struct hp_model *m, const struct hp_mstack *st, int all,
		       struct hp_shown_frame *out)
{
	size_t n = 0;

	for (uint32_t i = 0; i < st->depth; i++) {
		const struct hp_location *l = &m->locations[st->locations[i]];
		for (uint32_t k = 0; k < l->nsyms; k++) {
			out[n++] = (struct hp_shown_frame){st->locations[i], k,
							   hp_model_frame_class(m, l, &l->syms[k])};
			if (all)
				continue;
			if (hp_model_is_main(&l->syms[k]))
				goto outside_main; /* what is outside main is the runtime's */
			if (rust_start(l->syms[k].function)) {
				/* Rust's runtime calling the program's main: cut
				 * after the last frame of the program's own */
				size_t with = n--;
				while (n > 0 && out[n - 1].cls != HP_FRAME_OWN)
					n--;
				if (!n) /* std's own start-up: up to its start */
					n = with;
				goto outside_main;
			}
		}
	}
	/* A thread's stack: what is outside the last frame of the program's
	 * own, when it reaches the runtime (start_thread, clone3), is the
	 * thread library's way to it (std::thread's, glibc's). */
	if (!all && n && out[n - 1].cls == HP_FRAME_ENTRY) {
		size_t last_own = n;
		while (last_own > 0 && out[last_own - 1].cls != HP_FRAME_OWN)
			last_own--;
		if (last_own)
			n = last_own;
	}
outside_main:
	if (!all) { /* the runtime's frames left (_start, a thread without frames of its own) */
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (out[i].cls != HP_FRAME_ENTRY)
				out[k++] = out[i];
		n = k;
	}
	return n;
}
