/*
 * os.h - every contact of the recorder with libc and the kernel.
 *
 * The rest of the recorder calls these instead of libc so that the rules of
 * running inside malloc are kept in one place: nothing here calls the
 * target's malloc or stdio, and every function says whether it is
 * async-signal-safe.
 */
#ifndef HP_RECORDER_OS_H
#define HP_RECORDER_OS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Maps n bytes of zeroed, private, read-write memory, reserved lazily (pages
 * cost nothing until touched). Returns NULL on failure. Async-signal-safe. */
void *hp_os_map(size_t n);
void hp_os_unmap(void *p, size_t n);

/* Monotonic and wall clocks in nanoseconds. Async-signal-safe (vDSO). */
uint64_t hp_os_now_ns(void);
uint64_t hp_os_realtime_ns(void);

/* write(2) until done or a real error; returns 0 or -errno. Async-signal-safe. */
int hp_os_write_all(int fd, const void *p, size_t n);

/* Creates path for writing, mode 0600, never following a symlink in its last
 * component. exclusive: fail with -EEXIST if it exists; otherwise truncate an
 * existing regular file. Returns the fd (close-on-exec) or -errno.
 * Async-signal-safe. */
int hp_os_create(const char *path, int exclusive);
void hp_os_close(int fd);

/* ftruncate, retried on EINTR. Async-signal-safe. */
void hp_os_truncate(int fd, uint64_t size);

/* Resident set size in bytes from /proc/self/statm, or 0. Async-signal-safe. */
uint64_t hp_os_rss_bytes(void);

/* readlink(/proc/self/exe) into buf (NUL-terminated, "" on failure). */
void hp_os_exe_path(char *buf, size_t cap);

pid_t hp_os_getpid(void);
pid_t hp_os_getppid(void);
size_t hp_os_page_size(void);

/* Reads /proc/self/cmdline into buf; returns its length (arguments separated
 * by NULs). Async-signal-safe. */
size_t hp_os_cmdline(char *buf, size_t cap);

/* The bounds [*lo, *hi) of the calling thread's stack. May allocate (glibc
 * reads /proc/self/maps for the main thread): call only with the recorder's
 * reentrancy flag set. Returns 0 or -errno. */
int hp_os_thread_stack(uintptr_t *lo, uintptr_t *hi);


/* Blanks out, in place, every entry of LD_PRELOAD in the environment that
 * ends in name, so that programs this process execs do not load it. No
 * allocation, no lock (setenv takes one that a fork child may find held);
 * ld.so ignores the blanks. */
void hp_os_unpreload(const char *name);

/* getenv without allocation; NULL when unset. Not thread-safe against
 * setenv, like getenv. */
const char *hp_os_getenv(const char *name);

#endif
