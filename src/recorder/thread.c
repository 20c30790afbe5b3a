/*
 * thread.c - the recorder's one thread-local (thread.h). On its own so
 * that the recorder's tables, which the unit tests build without the
 * interposers, can reach it (live.c counts a thread's births there).
 */
#include "thread.h"

__thread struct hp_thread hp_self __attribute__((tls_model("initial-exec"))) = {
	.countdown_bytes = 0, /* the first allocation takes the slow path */
};
