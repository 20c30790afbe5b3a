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

/* write(2) until done or a real error; returns 0 or -errno. Async-signal-safe,
 * no allocation, no lock; a cancellation point (see hp_os_cancel_off). */
int hp_os_write_all(int fd, const void *p, size_t n);

/* pwrite(2) of all n bytes at offset off; returns 0 or -errno. Same
 * properties as hp_os_write_all; the descriptor's offset is not used. */
int hp_os_pwrite_all(int fd, const void *p, size_t n, uint64_t off);

/* Disables cancellation of the calling thread and returns the previous
 * state, for hp_os_cancel_restore: a recorder lock is never held across a
 * cancellation point (write, open, read) with cancellation enabled, so a
 * pthread_cancel can never leave one held. Async-signal-safe in glibc (an
 * atomic on the thread's descriptor), no allocation, no lock. */
int hp_os_cancel_off(void);
void hp_os_cancel_restore(int old);

struct sigaction;
/* sigaction(2) as the kernel sees it, bypassing the library's own
 * interposer, which hides the recorder's handlers from the program.
 * Returns 0 or -errno. Async-signal-safe. */
int hp_os_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* What a descriptor refers to: the file's device and inode. */
struct hp_os_file_id {
	uint64_t dev, ino;
};

/* fstat(2) identity of fd. Returns 0 or -errno. Async-signal-safe. */
int hp_os_file_id(int fd, struct hp_os_file_id *id);

/* Whether two identities name the same file. */
static inline int hp_os_same_file(const struct hp_os_file_id *a, const struct hp_os_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* Moves the recorder's own descriptor fd to a high number (close-on-exec),
 * out of the range programs reuse, and returns the new number (fd itself
 * when no higher number is free). Async-signal-safe. */
int hp_os_fd_high(int fd);

/* Opens an existing path for writing, never following a symlink in its
 * last component and never creating it. Returns the fd (close-on-exec) or
 * -errno. Async-signal-safe. */
int hp_os_open_existing(const char *path);

/* The size of the file fd refers to, or 0. Async-signal-safe. */
uint64_t hp_os_file_size(int fd);

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

/* getpid(2): the kernel's answer, never a cached one, so that a vfork or a
 * raw clone child sees its own pid. Async-signal-safe. */
pid_t hp_os_getpid(void);
pid_t hp_os_getppid(void);
size_t hp_os_page_size(void);

/* The bounds [*lo, *hi) of the signal stack the calling thread is running
 * on, if it is on one (sigaltstack). Returns 0, or -ENOENT when not on a
 * signal stack. Async-signal-safe. */
int hp_os_altstack(uintptr_t *lo, uintptr_t *hi);

/* The absolute path of the file mapped at addr, from /proc/self/maps, into
 * buf (NUL-terminated). scratch (at least 4 KiB) holds what is read.
 * Returns 0, or -ENOENT when no file is mapped there. No allocation, no
 * lock; not async-signal-safe only in that it may take a while. */
int hp_os_mapped_path(uintptr_t addr, char *buf, size_t cap, char *scratch, size_t scratch_cap);

/* Reads /proc/self/cmdline into buf; returns its length (arguments separated
 * by NULs). Async-signal-safe. */
size_t hp_os_cmdline(char *buf, size_t cap);

/* The bounds [*lo, *hi) of the calling thread's stack. May allocate (glibc
 * reads /proc/self/maps for the main thread): call only with the recorder's
 * reentrancy flag set. Returns 0 or -errno. */
int hp_os_thread_stack(uintptr_t *lo, uintptr_t *hi);


/* Removes, in place, every entry of LD_PRELOAD in the environment whose
 * file name is name, so that programs this process execs do not load it
 * (the variable goes when nothing else is left in it), and every
 * HEAPPROF_* variable: they see the environment they would see bare. The other entries
 * keep their order. No allocation, no lock (setenv takes one that a fork
 * child may find held). Not thread-safe against setenv, like getenv:
 * called at start and in fork children. */
void hp_os_unpreload(const char *name);

/* Adds "NAME=value" to the environment without the program's allocator:
 * environ becomes an array of the recorder's own (mapped, never freed),
 * which glibc's setenv copies rather than frees. Returns 0 or -ENOMEM.
 * Not thread-safe against setenv; called at start. */
int hp_os_env_add(const char *entry);

/* getenv without allocation; NULL when unset. Not thread-safe against
 * setenv, like getenv. */
const char *hp_os_getenv(const char *name);

#endif
