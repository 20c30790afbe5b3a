/*
 * record_path.c - the allocation and free paths in one translation unit.
 *
 * A full recording's slow path goes recorder.c -> cfa_cache.c (a
 * remembered walk) -> live.c (the register) -> aggregate.c (the bucket,
 * the bytes in use) on every allocation and every free, and a free comes
 * from interpose.c. Compiled apart, each hop is a call, a prologue saving the
 * callee-saved registers and an epilogue restoring them, and each file
 * loads again what the caller already knew (whether the process has one
 * thread, the sampling mode). libheapprof.so and libheapprof.a compile
 * the three files here, as one unit, so that the compiler inlines the
 * register's and the buckets' hot functions into the slow paths
 * (live_insert, agg_alloc and the like: always_inline bodies of
 * hp_live_insert, hp_agg_alloc...), the look for a remembered walk
 * (hp_cfa_recall_entry: no call, no prologue a remembered walk) into the
 * allocation's and a free's (record_free) into hp_free_slow; the unit
 * tests' build (librectest.a) still compiles cfa_cache.c, live.c and
 * aggregate.c alone. The files share no static name or macro;
 * interpose.c comes last, as its visibility pragma applies to what
 * follows it.
 */
#include "cfa_cache.c"
#include "aggregate.c"
#include "live.c"
#include "recorder.c"
#include "interpose.c"
