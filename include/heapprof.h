/*
 * heapprof.h - the public C API of the heapprof recorder.
 *
 * A program running under heapprof (`heapprof run`, or LD_PRELOAD of
 * libheapprof.so) can ask for a snapshot of its heap at a moment of its
 * choosing. The functions are declared weak: a program built with this
 * header runs unchanged without heapprof, where they are NULL, so call them
 * as
 *
 *     if (heapprof_dump)
 *             heapprof_dump();
 *
 * Thread-safe. Not async-signal-safe (send the dump signal instead, SIGUSR2
 * by default).
 */
#ifndef HEAPPROF_H
#define HEAPPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Appends a snapshot of the heap to the capture file now. Returns 0, or a
 * negative errno when the recorder is not recording or the write failed. */
int heapprof_dump(void) __attribute__((weak));

/* Returns 1 when the recorder is recording this process, 0 otherwise. */
int heapprof_active(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
