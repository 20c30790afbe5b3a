/*
 * os.h - every contact of the recorder with libc, the loader, the kernel and
 * the CPU.
 *
 * The rest of the recorder calls these instead of libc so that the rules of
 * running inside malloc are kept in one place: nothing here calls the
 * target's malloc or stdio, and every function says whether it is
 * async-signal-safe, whether it may allocate and whether it may lock
 * ("no allocation, no lock" unless it says otherwise; the libc calls behind
 * them are system calls or the vDSO). The memory calls (hp_os_map,
 * hp_os_unmap, hp_os_release, hp_os_populate, hp_os_protect) leave errno
 * as they found it, success or failure: a recorded allocation's common
 * path does not save it (interpose.c), and maps memory only through them.
 *
 * The seam (jemalloc's JET_MUTABLE): the host test binaries build the
 * recorder's core with HP_OS_MUTABLE, and there every function declared
 * with HP_OS_FN is a pointer, initialised to the real function, that a test
 * may swap to make a write fail half way, a disk fill up or mmap fail
 * (tests/unit/test_rec_*.c, tests/unit/rec_seam.h). In libheapprof.so they
 * are plain functions called directly: the seam costs nothing there.
 */
#ifndef HP_RECORDER_OS_H
#define HP_RECORDER_OS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef HP_OS_MUTABLE
#define HP_OS_FN(ret, name, params) extern ret(*name) params
#else
#define HP_OS_FN(ret, name, params) ret name params
#endif

/* Maps n bytes of zeroed, private, read-write memory, reserved lazily (pages
 * cost nothing until touched). Returns NULL on failure. Async-signal-safe,
 * no allocation, no lock (mmap(2), the system call itself: never the interposed
 * mmap of interpose_mmap.c). */
HP_OS_FN(void *, hp_os_map, (size_t n));
/* Unmaps what hp_os_map returned (NULL: nothing). Async-signal-safe, no
 * allocation, no lock. */
HP_OS_FN(void, hp_os_unmap, (void *p, size_t n));

/* Gives the pages of [p, p + n) back to the kernel (madvise(2),
 * MADV_DONTNEED): the range stays mapped, and reads of it see zeros again,
 * as freshly mapped memory, without a fault that costs memory. p and n are
 * rounded inwards to whole pages (nothing when none is whole). Returns 0 or
 * -errno. Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_release, (void *p, size_t n));

/* Backs every page of [p, p + n) (page-aligned, from hp_os_map) with
 * writable memory now, in one call (madvise(2), MADV_POPULATE_WRITE), for a
 * table about to be written all over: fresh anonymous memory read before it
 * is written takes two faults a page (the zero page, then its copy), and a
 * fault a page costs more than the kernel filling them in one pass. Returns
 * 0 or -errno (-EINVAL before Linux 5.14: the pages then come as they are
 * touched, as without it). Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_populate, (void *p, size_t n));

/* Makes [p, p + n) (page-aligned) readable, and writable when writable is
 * set: mprotect(2). Returns 0 or -errno. Async-signal-safe, no allocation,
 * no lock. */
HP_OS_FN(int, hp_os_protect, (void *p, size_t n, int writable));

/* Monotonic and wall clocks in nanoseconds. Async-signal-safe (vDSO), no
 * allocation, no lock. */
HP_OS_FN(uint64_t, hp_os_now_ns, (void));
HP_OS_FN(uint64_t, hp_os_realtime_ns, (void));

/* write(2) until done or a real error; returns 0 or -errno. Async-signal-safe,
 * no allocation, no lock; a cancellation point (see hp_os_cancel_off). */
HP_OS_FN(int, hp_os_write_all, (int fd, const void *p, size_t n));

/* pwrite(2) of all n bytes at offset off; returns 0 or -errno. Same
 * properties as hp_os_write_all; the descriptor's offset is not used. */
HP_OS_FN(int, hp_os_pwrite_all, (int fd, const void *p, size_t n, uint64_t off));

/* One read(2) and one write(2), for callers that pass a call through
 * (unwind.c's shims for libunwind): the byte count, or -1 with errno set,
 * as libc's. Async-signal-safe, no allocation, no lock; cancellation
 * points. */
HP_OS_FN(ssize_t, hp_os_read, (int fd, void *p, size_t n));
HP_OS_FN(ssize_t, hp_os_write, (int fd, const void *p, size_t n));

/* syscall(2) with six arguments, as libc's syscall (-1 and errno on
 * failure), for the same shims. Async-signal-safe, no allocation, no lock
 * (what the system call itself does aside). */
HP_OS_FN(long, hp_os_syscall6, (long n, long a0, long a1, long a2, long a3, long a4, long a5));

/* Copies n bytes of this process's memory at addr into buf with
 * process_vm_readv(2), which fails instead of faulting on an unmapped
 * address: returns 0, or -errno (-EFAULT). Async-signal-safe, no
 * allocation, no lock, no descriptor. */
HP_OS_FN(int, hp_os_read_self, (void *buf, const void *addr, size_t n));

/* Disables cancellation of the calling thread and returns the previous
 * state, for hp_os_cancel_restore: a recorder lock is never held across a
 * cancellation point (write, open, read) with cancellation enabled, so a
 * pthread_cancel can never leave one held. Async-signal-safe in glibc (an
 * atomic on the thread's descriptor), no allocation, no lock. */
HP_OS_FN(int, hp_os_cancel_off, (void));
HP_OS_FN(void, hp_os_cancel_restore, (int old));

struct sigaction;
/* sigaction(2) as the kernel sees it, bypassing the library's own
 * interposer, which hides the recorder's handlers from the program.
 * Returns 0 or -errno. Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_sigaction, (int sig, const struct sigaction *act, struct sigaction *old));

/* Sets sig's handler (a plain one, no SA_SIGINFO) with flags and an empty
 * mask, or the default action with handler NULL, through hp_os_sigaction.
 * Returns 0 or -errno. Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_set_handler, (int sig, void (*handler)(int), int flags));

/* raise(3): sends sig to the calling thread. Returns 0 or -errno.
 * Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_raise, (int sig));

/* pthread_atfork(3). Returns 0 or -errno. May allocate (glibc's handler
 * list, through the program's malloc: call with the thread's forwarding
 * flag set) and takes glibc's atfork lock; not async-signal-safe. At start
 * only. */
HP_OS_FN(int, hp_os_atfork, (void (*prepare)(void), void (*parent)(void), void (*child)(void)));

/* Registers fn(arg) to run at exit, after the handlers already registered
 * (__cxa_atexit with no DSO). Returns 0 or -errno. May allocate (call with
 * the forwarding flag set) and takes glibc's exit-handler lock; not
 * async-signal-safe. */
HP_OS_FN(int, hp_os_at_exit, (void (*fn)(void *), void *arg));

/* Registers fn(arg) as a destructor of the calling thread, run first
 * thing in exit() on the main thread (__cxa_thread_atexit_impl, tied to
 * this library). Returns 0 or -errno. May allocate (forwarding flag set),
 * no lock; not async-signal-safe. */
HP_OS_FN(int, hp_os_at_thread_exit, (void (*fn)(void *), void *arg));

/* pthread_key_create(3): a key whose non-NULL value fn(value) receives at
 * the exit of each thread that set one (not at exit(): the main thread's
 * is never called). Create it at init, while the key's index is low:
 * glibc allocates nothing for the first 32 keys, neither here nor in
 * hp_os_thread_key_set (a later key's first set in a thread callocs a
 * second-level array, freed at the thread's exit). Returns 0 or -errno.
 * Takes glibc's key lock; not async-signal-safe. */
HP_OS_FN(int, hp_os_thread_key_create, (unsigned *key, void (*fn)(void *)));
/* pthread_setspecific(3) for a key from hp_os_thread_key_create. Returns
 * 0 or -errno. No lock; allocates nothing for the first 32 keys. */
HP_OS_FN(int, hp_os_thread_key_set, (unsigned key, void *value));

struct dl_phdr_info;
/* dl_iterate_phdr(3): calls fn for every loaded object and returns what
 * the last call returned (a non-zero return stops the walk). Takes the
 * loader's lock and may allocate (call with the reentrancy flag set); not
 * async-signal-safe. */
HP_OS_FN(int, hp_os_dl_iterate, (int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg));

/* dlsym(RTLD_NEXT, name): the next definition after this library, or
 * NULL. Takes the loader's lock and may allocate (dlsym's error buffer:
 * served by the bootstrap buffer until the real allocator is known); not
 * async-signal-safe. In the static archive (HP_STATIC): always NULL, no
 * lock, no allocation. */
HP_OS_FN(void *, hp_os_dlsym_next, (const char *name));

/* dlsym(RTLD_DEFAULT, name): the definition the program's own references
 * reach. Same properties as hp_os_dlsym_next. */
HP_OS_FN(void *, hp_os_dlsym_default, (const char *name));

/* The path of the loaded object containing addr (dladdr), or NULL. Takes
 * the loader's lock, no allocation; not async-signal-safe. */
HP_OS_FN(const char *, hp_os_object_of, (const void *addr));

/* Whether addr, a symbol's address as dlsym answers it, is a definition:
 * not when it is a non-PIE executable's canonical PLT entry (an undefined
 * symbol with a value, given so that the function's address is the same
 * everywhere: the entry jumps to the real definition). Takes the
 * loader's lock, no allocation; not async-signal-safe. */
HP_OS_FN(int, hp_os_is_definition, (const void *addr));


/* Gives up the CPU (sched_yield(2)), for spinning waits. Async-signal-safe,
 * no allocation, no lock. */
HP_OS_FN(void, hp_os_yield, (void));

/* Ends the process at once with status (exit_group(2)), never returning.
 * Async-signal-safe, no allocation, no lock. */
HP_OS_FN(void, hp_os_exit_group, (int status));

/* The CPU's spin-wait hint (x86's pause), inline: it stays an instruction
 * in every build. Async-signal-safe, no allocation, no lock. */
static inline void hp_os_cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* Whether this process has one thread: glibc's __libc_single_threaded
 * (2.32+; 0, "maybe not", without it), which pthread_create clears on the
 * creating thread before the new thread exists, so a thread that reads 1
 * is alone, and only its own signal handlers can run between two of its
 * instructions. glibc's malloc makes the same bet (threads made with a
 * raw clone(CLONE_VM) are not supported by it either). Inline, read on
 * every lock: one load. Async-signal-safe, no allocation, no lock. */
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define HP_OS_HAVE_SINGLE_THREADED 1
#endif
#endif
static inline int hp_os_single_threaded(void)
{
#ifdef HP_OS_HAVE_SINGLE_THREADED
	return __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED) != 0;
#else
	return 0;
#endif
}

/* What a descriptor refers to: the file's device and inode. */
struct hp_os_file_id {
	uint64_t dev, ino;
};

/* fstat(2) identity of fd. Returns 0 or -errno. Async-signal-safe, no
 * allocation, no lock. */
HP_OS_FN(int, hp_os_file_id, (int fd, struct hp_os_file_id *id));

/* Whether two identities name the same file. Pure. */
static inline int hp_os_same_file(const struct hp_os_file_id *a, const struct hp_os_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* Moves the recorder's own descriptor fd to a high number (close-on-exec),
 * out of the range programs reuse, and returns the new number (fd itself
 * when no higher number is free). Async-signal-safe, no allocation, no
 * lock. */
HP_OS_FN(int, hp_os_fd_high, (int fd));

/* Opens an existing path for writing, never following a symlink in its
 * last component and never creating it. Returns the fd (close-on-exec) or
 * -errno. Async-signal-safe, no allocation, no lock; a cancellation
 * point. */
HP_OS_FN(int, hp_os_open_existing, (const char *path));

/* Appends len bytes (at most PIPE_BUF: one write, never interleaved with
 * another process's) to an existing file, opened and closed again, never
 * following a symlink in its last component. Returns 0 or -errno.
 * Async-signal-safe, no allocation, no lock; a cancellation point. */
HP_OS_FN(int, hp_os_append, (const char *path, const void *buf, size_t len));

/* The size of the file fd refers to, or 0. Async-signal-safe, no
 * allocation, no lock. */
HP_OS_FN(uint64_t, hp_os_file_size, (int fd));

/* The file size limit (RLIMIT_FSIZE's soft limit, ulimit -f) in bytes,
 * UINT64_MAX when none. A write past it would raise SIGXFSZ, which kills
 * by default: the recorder never writes past it. Async-signal-safe, no
 * allocation, no lock. */
HP_OS_FN(uint64_t, hp_os_file_size_limit, (void));

/* Whether n more bytes written to fd at its offset (its end, for an
 * append-only file) stay within the file size limit: always for what is
 * not a regular file. Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_write_fits, (int fd, size_t n));

/* Creates path for writing, mode 0600, never following a symlink in its last
 * component, never blocking in open (a FIFO with no reader: -ENXIO).
 * exclusive: fail with -EEXIST if it exists; otherwise an existing regular
 * file is made 0600 and emptied (-EPERM, untouched, when it cannot be made
 * 0600). Returns the fd (close-on-exec, O_NONBLOCK) or -errno.
 * Async-signal-safe, no allocation, no lock; a cancellation point. */
HP_OS_FN(int, hp_os_create, (const char *path, int exclusive));
/* close(2) of fd when fd >= 0. Async-signal-safe, no allocation, no lock;
 * a cancellation point. */
HP_OS_FN(void, hp_os_close, (int fd));

/* ftruncate, retried on EINTR. Async-signal-safe, no allocation, no lock;
 * a cancellation point. */
HP_OS_FN(void, hp_os_truncate, (int fd, uint64_t size));

/* Set once the program installs a seccomp filter (hp_recorder_sandbox,
 * seen through prctl or syscall: interpose_sandbox.c); never cleared. A
 * filter may kill the process at a system call the program itself never
 * makes: from then on the functions below open nothing and ask the kernel
 * nothing new (no /proc reads, no thread names, no new capture file); the
 * capture already open is written as before. */
extern int hp_os_sandboxed;

/* Resident set size in bytes from /proc/self/statm, or 0; once
 * sandboxed, the last one read. Async-signal-safe, no allocation, no
 * lock. */
HP_OS_FN(uint64_t, hp_os_rss_bytes, (void));

/* readlink(/proc/self/exe) into buf (NUL-terminated, "" on failure).
 * Async-signal-safe, no allocation, no lock. */
HP_OS_FN(void, hp_os_exe_path, (char *buf, size_t cap));

/* getpid(2): the kernel's answer, never a cached one, so that a vfork or a
 * raw clone child sees its own pid. getppid(2). The page size (sysconf,
 * read once; every caller stores the same value). All async-signal-safe,
 * no allocation, no lock. */
HP_OS_FN(pid_t, hp_os_getpid, (void));
HP_OS_FN(pid_t, hp_os_getppid, (void));
HP_OS_FN(size_t, hp_os_page_size, (void));
/* gettid(2), the calling thread's kernel id; and its name (prctl
 * PR_GET_NAME, as pthread_setname_np sets it from any thread) into
 * buf[16], NUL-terminated (empty when it cannot be read). Both
 * async-signal-safe, no allocation, no lock. */
HP_OS_FN(pid_t, hp_os_gettid, (void));
HP_OS_FN(void, hp_os_thread_name, (char buf[16]));

/* The bounds [*lo, *hi) of the signal stack the calling thread is running
 * on, if it is on one (sigaltstack). Returns 0, or -ENOENT when not on a
 * signal stack. Async-signal-safe, no allocation, no lock. */
HP_OS_FN(int, hp_os_altstack, (uintptr_t *lo, uintptr_t *hi));

/* The absolute path of the file mapped at addr, from /proc/self/maps, into
 * buf (NUL-terminated). scratch (at least 4 KiB) holds what is read.
 * Returns 0, or -ENOENT when no file is mapped there. No allocation, no
 * lock; not async-signal-safe only in that it may take a while. */
HP_OS_FN(int, hp_os_mapped_path,
	 (uintptr_t addr, char *buf, size_t cap, char *scratch, size_t scratch_cap));

/* One mapping of the process, a line of /proc/self/maps: [lo, hi), its
 * protection (HP_OS_MAP_*: the r, w, x and s letters) and its name. */
enum {
	HP_OS_MAP_READ = 1,
	HP_OS_MAP_WRITE = 2,
	HP_OS_MAP_EXEC = 4,
	HP_OS_MAP_SHARED = 8,
};

struct hp_os_mapping {
	uint64_t lo, hi;
	unsigned perms;
	const char *path; /* not NUL-terminated; "" when anonymous */
	size_t path_len;
};

/* Calls fn on each mapping of the process (/proc/self/maps, a descriptor
 * of its own, opened and closed here), in address order, until fn returns
 * non-zero; returns that, 0 at the end, or -errno. scratch[cap] holds the
 * lines being read (a line longer than it is skipped); e->path points
 * into it, valid during the call only. Async-signal-safe (open, read,
 * close), no allocation, no lock; a cancellation point. */
HP_OS_FN(int, hp_os_maps_each,
	 (char *scratch, size_t cap, int (*fn)(const struct hp_os_mapping *e, void *arg),
	  void *arg));

/* The resident bytes of the pages of [lo, hi) (lo rounded down to a page),
 * with mincore(2): a page counts when the process's page table maps it
 * (for anonymous memory: written, or read since it was mapped). Pages
 * that are not mapped end the count there. Async-signal-safe, no
 * allocation, no lock, no descriptor; 1 KiB of stack. */
HP_OS_FN(uint64_t, hp_os_resident_bytes, (uintptr_t lo, uintptr_t hi));

/* Reads /proc/self/cmdline into buf; returns its length (arguments separated
 * by NULs). Async-signal-safe, no allocation, no lock. */
HP_OS_FN(size_t, hp_os_cmdline, (char *buf, size_t cap));

/* The bounds [*lo, *hi) of the calling thread's stack: the mapping its
 * stack pointer is in, from /proc/self/maps (the main thread's [stack] down
 * to RLIMIT_STACK). Not pthread_getattr_np: it allocates while holding the
 * thread's lock, and a program that calls it (Rust's runtime does, at
 * start) would find that lock held by itself when its allocation reaches
 * the recorder. A stack the program placed inside a larger mapping of its
 * own gets that mapping's bounds. No allocation, no lock, 512 bytes of
 * stack. Returns 0 or -errno. */
HP_OS_FN(int, hp_os_thread_stack, (uintptr_t *lo, uintptr_t *hi));

/* Removes, in place, every entry of LD_PRELOAD in the environment whose
 * file name is name, so that programs this process execs do not load it
 * (the variable goes when nothing else is left in it), and every
 * HEAPPROF_* variable: they see the environment they would see bare. The other entries
 * keep their order. No allocation, no lock (setenv takes one that a fork
 * child may find held). Not thread-safe against setenv, like getenv:
 * called at start and in fork children. */
HP_OS_FN(void, hp_os_unpreload, (const char *name));

/* envp without the entries hp_os_unpreload takes out of environ (every
 * HEAPPROF_* variable, the library file name in LD_PRELOAD, an LD_PRELOAD
 * left empty): a NULL-terminated array and strings in memory of its own
 * (mapped; freed by the exec that follows, or leaked when it fails), or
 * envp itself when it holds none. For a fork child that execs with an
 * environment the program built before the fork. No allocation through
 * malloc, no lock. */
HP_OS_FN(char *const *, hp_os_env_without, (char *const envp[], const char *name));

/* Adds "NAME=value" to the environment without the program's allocator:
 * environ becomes an array of the recorder's own (mapped, never freed),
 * which glibc's setenv copies rather than frees. Returns 0 or -ENOMEM.
 * No allocation, no lock. Not thread-safe against setenv; called at start. */
HP_OS_FN(int, hp_os_env_add, (const char *entry));

/* getenv without allocation; NULL when unset. No lock; not thread-safe
 * against setenv, like getenv. Async-signal-safe otherwise. */
HP_OS_FN(const char *, hp_os_getenv, (const char *name));

#endif
