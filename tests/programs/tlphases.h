/*
 * tlphases.h - the known phases of tests/programs/tlphases.cpp, shared
 * with the test that checks its timeline by type, context, thread and
 * heap (tests/integration/test_timeline.c):
 *
 *   1: the main thread, in context "load", allocates TL_CIRCLE_N Circles
 *      (TL_CIRCLE_SIZE bytes, typed by their vtable); snapshot 1; a pause
 *      of TL_PAUSE_MS (busy with temporary blocks, outside any context);
 *   2: a thread named TL_THREAD, in context "serve", frees each Circle and
 *      allocates a Square (TL_SQUARE_SIZE bytes) in its place, then
 *      TL_SQUARE_N - TL_CIRCLE_N more, and fills the custom heap "arena"
 *      with TL_ARENA_N blocks of TL_ARENA_SIZE (carved from a static
 *      buffer: nothing of malloc's); it ends with snapshot 2; a pause;
 *   3: the main thread resets the arena and frees the Squares; exit
 *      (snapshot 3).
 */
#ifndef HP_TEST_TLPHASES_H
#define HP_TEST_TLPHASES_H

#define TL_CIRCLE_N 200
#define TL_CIRCLE_SIZE 16
#define TL_SQUARE_N 300
#define TL_SQUARE_SIZE 24
#define TL_ARENA_N 40
#define TL_ARENA_SIZE 64
#define TL_PAUSE_MS 200
#define TL_THREAD "server"

#endif
