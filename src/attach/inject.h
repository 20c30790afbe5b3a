/*
 * inject.h - calling a function inside another running process, the way a
 * debugger does, for `heapprof attach` and `heapprof detach`.
 *
 * A call borrows one thread of the target: the thread is stopped with
 * ptrace, its registers (the vector state included) are saved, it is made
 * to call the function on its own stack, below its red zone, with a return
 * address of 0, and the fault of that return is the end of the call; the
 * registers are then put back as they were and the thread resumes where it
 * was (a system call it was blocked in is restarted, as after any stop).
 * The other threads run on meanwhile.
 *
 * The thread borrowed is one at a safe point: not inside the C allocator,
 * the dynamic loader or heapprof's recorder (none of their functions is in
 * its call chain, unwound with each module's CFI or its frame pointers: a
 * call that allocates or loads a library there would wait for a lock that
 * thread holds), with room on its stack. Stale words of its stack (a buffer
 * never written, the return addresses of calls that ended) do not count;
 * where the chain cannot be unwound, every word above it does. A thread
 * that is not at a safe point is let run a moment and looked at again.
 *
 * x86-64 only. Ordinary CLI C: allocates, not thread-safe; every error is
 * said on stderr in one line and returned as -errno.
 */
#ifndef HP_ATTACH_INJECT_H
#define HP_ATTACH_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HP_INJECT_MAX_UNSAFE 64

/* What the injector knows of a target: its libc's functions, and the
 * address ranges no borrowed thread may be inside. */
struct hp_inject_target {
	pid_t pid;
	/* The image read (its exec's AT_RANDOM bytes, and where they are):
	 * every address below is of that image, and a call is made only on
	 * a thread seen to run it. */
	uintptr_t random_at;
	uint64_t random[2];
	pid_t last_tid; /* the thread of the last call, tried first: 0 none */
	char libc_path[4096];
	uintptr_t libc_bias;
	uintptr_t dlopen, dlsym, dlerror; /* in the target; 0: not found */
	char recorder_path[4096];        /* libheapprof.so, when loaded */
	uintptr_t recorder_bias;
	size_t nunsafe;
	struct {
		uintptr_t lo, hi;
	} unsafe[HP_INJECT_MAX_UNSAFE];
};

/* Reads pid's map and its libc's symbols, and the identity of its image.
 * Returns 0, or -errno after saying why: no such process, not dynamically
 * linked (no libc.so.6 or no dynamic loader: a static program), a libc
 * without dlopen, -ESTALE: it exec'd again each time it was read. */
int hp_inject_open(struct hp_inject_target *t, pid_t pid);

/* Whether pid still runs the image hp_inject_open read: 1, 0 when it runs
 * another (it exec'd since), -ESRCH when it is gone or a zombie, -errno
 * when it cannot be told (in the middle of an exec). */
int hp_inject_same_image(const struct hp_inject_target *t);

/* The address of symbol name in the object at path loaded with bias
 * (its dynamic symbols; the default version when there are several).
 * Returns 0 when it is not there. */
uintptr_t hp_inject_symbol(const char *path, uintptr_t bias, const char *name);

/* Whether a seccomp filter (or strict mode) on one of pid's threads would
 * kill the program, or make it fail, on a system call that doing needs
 * ("loading the recorder", "detaching": hp_seccomp_needed, seccomp.h).
 * Returns 0 when none would, or -EPERM after saying which call and what,
 * or that the filter cannot be read (without CAP_SYS_ADMIN); nothing is
 * done to the program either way. Stops each filtered thread a moment
 * (ptrace) to read its filters. */
int hp_inject_check_seccomp(struct hp_inject_target *t, const char *doing);

/* The NUL-ended string at address at in pid, into buf[0 .. cap) (cut to
 * fit). Returns 0 or -errno. */
int hp_inject_read_string(const struct hp_inject_target *t, uint64_t at, char *buf, size_t cap);

/* Looks again for the recorder in pid's map (after a dlopen): fills
 * recorder_path and recorder_bias and adds its code to the unsafe ranges.
 * Returns 1 when it is loaded, 0 when not, -errno on error. */
int hp_inject_find_recorder(struct hp_inject_target *t, const char *name);

/* Calls fn(args[0], args[1], args[2]) in the target on a thread at a safe
 * point (the thread of the previous call first, when it is at one: a
 * dlerror() after a failed dlopen() reads that thread's message).
 * data[0..len) is copied onto that thread's stack first, and *data_at
 * says where it went (args may point into it: pass args_data
 * with the offsets: an argument equal to HP_INJECT_DATA + k becomes
 * *data_at + k). The call's return value goes to *ret. Waits for it as
 * long as it takes; gives up finding a safe thread after timeout_ms.
 * Returns 0, or -errno after saying why (-EPERM: ptrace not permitted,
 * -ESRCH: the process is gone, -EBUSY: no thread at a safe point,
 * -ESTALE: the process exec'd since hp_inject_open, before the call or
 * during it: the new image is left untouched, nothing of the call is
 * written there; what the call had done to the old image went with it).
 * Every signal that can be blocked is blocked meanwhile (this process
 * killed in the middle would leave the thread to return to address 0);
 * SIGKILL cannot be: do not SIGKILL heapprof during an attach. */
#define HP_INJECT_DATA ((uint64_t)0x8000000000000000ull)
int hp_inject_call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3],
		   const void *data, size_t len, uint64_t *ret, unsigned timeout_ms);

#endif
