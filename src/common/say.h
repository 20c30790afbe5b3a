/*
 * say.h - the heapprof process's one-line messages on stderr, as
 * "heapprof: <message>", for the command line and the subsystems it
 * drives (the live endpoints, attach).
 *
 * Uses stdio: ordinary C, never linked into the recorder (whose logger is
 * log.h, through fmt.h and write(2)).
 */
#ifndef HP_COMMON_SAY_H
#define HP_COMMON_SAY_H

/* Prints "heapprof: <message>" and a newline on stderr. */
void hp_say_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
