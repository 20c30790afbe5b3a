/*
 * unwind.c - DWARF and frame-pointer unwinding (see unwind.h).
 */
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>

#include "../common/hash.h"
#include "../format/format.h"
#include "cfa_cache.h"
#include "config.h"
#include "got.h"
#include "log.h"
#include "os.h"
#include "roots.h"

/* Set once at init, read-only afterwards. */
static unsigned mode;
static int use_cache, check; /* HEAPPROF_UNWIND_CACHE, HEAPPROF_UNWIND_CHECK */
static int fp_memo; /* HEAPPROF_UNWIND_CACHE in fp mode: remembered walks */

/* HEAPPROF_UNWIND_CHECK=1 only: walks, those the rule cache finished,
 * and those where its stack differed from unw_backtrace's. Any thread,
 * relaxed atomics. */
static uint64_t walks, cached_walks, differed;
static uintptr_t own_lo, own_hi; /* the recorder's executable segment */

#ifdef HP_STATIC
/* Linked into a static program (libheapprof.a), the recorder shares the
 * program's segment: its code is the output section heapprof_text instead,
 * into which the archive's objects had their text sections renamed
 * (Makefile, objcopy). The linker defines these bounds. */
extern const char __start_heapprof_text[], __stop_heapprof_text[];
#endif

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t self = (uintptr_t)arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= lo &&
		    self < lo + ph->p_memsz) {
			own_lo = lo;
			own_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/*
 * libunwind (1.6) checks that a guessed frame's memory is readable by
 * writing a byte of it into a pipe it opens on first use and keeps on two
 * descriptor numbers; when the read end fails it closes both and opens a
 * new pipe. A program that closes its descriptors and opens files gets
 * those numbers: libunwind would then read the program's input, write into
 * its output and close them. Its imports of pipe2, read, write, close and
 * syscall are redirected here: the "pipe" is two numbers no descriptor can
 * have, and the readability check is a process_vm_readv of our own memory,
 * which needs no descriptor at all. Every other call passes through.
 */
#define FAKE_READ_FD (-1000)
#define FAKE_WRITE_FD (-1001)

/* The check itself: 1 when one byte at addr can be read, else -1 with
 * errno EFAULT (the answer libunwind's write would give). */
static long readable(const void *addr)
{
	char byte;

	if (hp_os_read_self(&byte, addr, 1) == 0) {
		errno = 0; /* libunwind loops while errno is EINTR */
		return 1;
	}
	errno = EFAULT;
	return -1;
}

static int unw_pipe2(int fds[2], int flags)
{
	(void)flags;
	fds[0] = FAKE_READ_FD;
	fds[1] = FAKE_WRITE_FD;
	return 0;
}

static ssize_t unw_read(int fd, void *buf, size_t n)
{
	if (fd == FAKE_READ_FD) { /* an empty pipe: nothing to drain */
		errno = EAGAIN;
		return -1;
	}
	return hp_os_read(fd, buf, n);
}

static ssize_t unw_write(int fd, const void *buf, size_t n)
{
	if (fd == FAKE_WRITE_FD)
		return readable(buf);
	return hp_os_write(fd, buf, n);
}

static int unw_close(int fd)
{
	if (fd == FAKE_READ_FD || fd == FAKE_WRITE_FD)
		return 0;
	return (int)hp_os_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
}

static long unw_syscall(long n, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++) /* as glibc's syscall reads them */
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_write && (int)a[0] == FAKE_WRITE_FD)
		return readable((const void *)a[1]);
	return hp_os_syscall6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* hp_unwind as an hp_unwind_walk_fn (it never fails: 0 frames when it
 * cannot walk). */
static int unwind_any(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
		      uint32_t *stack, uintptr_t entry)
{
	int saved = errno; /* libunwind's readability check sets it */
	int n = (int)hp_unwind(t, frames, max, hash, stack, entry);

	errno = saved;
	return n;
}

/* unwind.h. Written by hp_unwind_init only. */
hp_unwind_walk_fn *hp_unwind_direct = unwind_any;
int hp_unwind_recall;

int hp_unwind_init(unsigned m, int cache, int check_it)
{
	static const struct hp_got_patch fds[] = {
		{"pipe2", (void *)unw_pipe2}, {"read", (void *)unw_read},
		{"write", (void *)unw_write}, {"close", (void *)unw_close},
		{"syscall", (void *)unw_syscall},
	};

	mode = m;
	use_cache = cache && m == HP_UNWIND_DWARF && hp_cfa_init() == 0;
	fp_memo = cache && m == HP_UNWIND_FP && hp_cfa_init() == 0;
	check = check_it && (use_cache || fp_memo);
	hp_unwind_direct = check ? unwind_any : use_cache ? hp_cfa_walk : fp_memo ? hp_cfa_walk_fp : unwind_any;
	hp_unwind_recall = check ? 0 : use_cache ? 1 : fp_memo ? 2 : 0;
#ifdef HP_STATIC
	(void)find_own;
	(void)fds;
	own_lo = (uintptr_t)__start_heapprof_text;
	own_hi = (uintptr_t)__stop_heapprof_text;
#else
	hp_os_dl_iterate(find_own, (void *)(uintptr_t)&hp_unwind_init);
#endif
	if (mode == HP_UNWIND_DWARF) {
#ifndef HP_STATIC
		/* Before libunwind's first use, which opens its pipe. A
		 * static program has no GOT: libunwind keeps its own. */
		if (hp_got_patch((uintptr_t)&unw_backtrace, fds, sizeof fds / sizeof *fds) < 3)
			hp_log("cannot keep libunwind off the program's descriptors: it may use "
			       "two of them");
#endif
		/* The per-thread cache keeps unw_backtrace on its fast path: the
		 * global cache would mask signals around every lookup. */
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	}
	return own_hi ? 0 : -ENOENT;
}

int hp_unwind_is_own(uintptr_t addr)
{
	return addr >= own_lo && addr < own_hi;
}

/* Walks saved frame pointers from our own frame. Each frame must lie inside
 * the thread's stack, above the previous one and aligned, so a frame of
 * code built without frame pointers ends the walk instead of crashing it.
 * Two loops: the recorder's own frames first (skipped), then the
 * program's, where a frame above the previous one is above the stack's
 * low bound already, so each frame costs one bounds compare, the
 * alignment test, two loads, the store and the hash's two instructions. */
static uint32_t walk_fp(struct hp_thread *t, uint64_t *out, uint32_t max, uint64_t *hash)
{
	const uintptr_t lo = t->stack_lo, hi = t->stack_hi;
	uintptr_t at = (uintptr_t)__builtin_frame_address(0), next, ret;
	uint64_t h = HP_HASH_STACK_SEED;
	uint32_t n = 0;

	/* The thread's bounds are set by its first slow path (recorder.c);
	 * unknown bounds (1, 1) stop the walk at once. */
	if (!max)
		goto out;
	for (;;) {
		if (at < lo || at + 2 * sizeof(uintptr_t) > hi || (at & 7))
			goto out;
		next = ((const uintptr_t *)at)[0];
		ret = ((const uintptr_t *)at)[1];
		if (!ret)
			goto out;
		if (!hp_unwind_is_own(ret))
			break;
		if (next <= at)
			goto out;
		at = next;
	}
	for (;;) { /* frame at is valid: its return address ret is the next */
		out[n++] = ret;
		h = hp_hash_stack_step(h, ret);
		if (next <= at || next + 2 * sizeof(uintptr_t) > hi || (next & 7))
			break;
		if (n >= max) {
			if (max < 2)
				break;
			n = hp_roots_fp(out, max, next, hi); /* deeper, perhaps (roots.h) */
			*hash = hp_hash_stack(out, n);
			return n;
		}
		at = next;
		next = ((const uintptr_t *)at)[0];
		ret = ((const uintptr_t *)at)[1];
		if (!ret)
			break;
	}
out:
	*hash = hp_hash_stack_end(h, n);
	return n;
}

/* Drops the recorder's own frames from the got frames of a walk, keeping
 * at most max of the rest at the front. Returns how many were kept, and
 * how many of the program's the walk gave in *all. */
static uint32_t drop_own(uint64_t *frames, int got, uint32_t max, int *all)
{
	int skip = 0;

	while (skip < got && hp_unwind_is_own((uintptr_t)frames[skip]))
		skip++;
	*all = got - skip;
	if (got - skip < (int)max)
		max = (uint32_t)(got - skip);
	if (skip)
		memmove(frames, frames + skip, max * sizeof *frames);
	return max;
}

/* libunwind's walk of a stack that may be deeper than max, step by step:
 * the program's frames into frames[0..max), then its roots (roots.h).
 * Returns the frames kept, or 0 when libunwind cannot start. Its cursor
 * and context take about what unw_backtrace's do of the stack. */
static __attribute__((noinline)) uint32_t walk_libunwind_roots(uint64_t *frames, uint32_t max)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_word_t ip;
	struct hp_roots g;
	uint32_t n = 0;
	int own = 1;

	if (unw_getcontext(&uc) < 0 || unw_init_local(&c, &uc) < 0)
		return 0;
	for (;;) {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			return n;
		/* the recorder's frames at the start: dropped, as drop_own */
		if (!own || !(own = hp_unwind_is_own((uintptr_t)ip))) {
			if (n == max)
				break;
			frames[n++] = ip;
		}
		if (unw_step(&c) <= 0)
			return n;
	}
	hp_roots_begin(&g, frames, max);
	for (;;) {
		if (hp_roots_add(&g, ip))
			return hp_roots_end(&g, 0);
		if (unw_step(&c) <= 0 || unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			return hp_roots_end(&g, 1);
	}
}

/* unw_backtrace's walk with room for limit frames (of which the
 * recorder's own, at least one, are dropped), at most max kept; a stack
 * deeper than max is walked again by walk_libunwind_roots. Its frames'
 * hash into *hash. Inlined: unw_backtrace starts in its caller's frame,
 * as the rule cache's walk does. */
static inline __attribute__((always_inline)) uint32_t walk_libunwind(uint64_t *frames, uint32_t max,
								     uint32_t limit, uint64_t *hash)
{
	int got = unw_backtrace((void **)frames, (int)limit), all;
	uint32_t n = drop_own(frames, got, max, &all), deep;

	/* More than max of the program's, or a full buffer: perhaps deeper */
	if (max >= 2 && (all > (int)max || (n == max && got == (int)limit))) {
		deep = walk_libunwind_roots(frames, max);
		if (deep)
			n = deep;
	}
	*hash = hp_hash_stack(frames, n);
	return n;
}

/* HEAPPROF_UNWIND_CHECK: the cache's n frames (of at most max) and their
 * hash against unw_backtrace's. Called one frame deeper than the cache's
 * walk was, so libunwind is given room for that one more frame of ours,
 * which drop_own drops. */
static __attribute__((noinline)) void check_walk(const uint64_t *frames, uint32_t n, uint32_t max,
						 uint64_t hash)
{
	uint64_t theirs[HP_CONFIG_MAX_DEPTH_LIMIT + HP_UNWIND_SLACK + 1];
	uint64_t h;
	uint32_t m;

	m = walk_libunwind(theirs, max, max + HP_UNWIND_SLACK + 1, &h);
	if (m == n && memcmp(frames, theirs, n * sizeof *frames) == 0 && hash == h)
		return;
	if (__atomic_fetch_add(&differed, 1, __ATOMIC_RELAXED) < 8) {
		uint32_t i = 0;

		while (i < n && i < m && frames[i] == theirs[i])
			i++;
		hp_log("unwind check: the rule cache gave %u frames, libunwind %u; first "
		       "difference at frame %u (0x%lx, 0x%lx)",
		       n, m, i, i < n ? (unsigned long)frames[i] : 0UL,
		       i < m ? (unsigned long)theirs[i] : 0UL);
	}
}

void hp_unwind_remember(struct hp_thread *t, uint32_t stack)
{
	hp_cfa_remember(t, stack); /* t->cfa_memo: only with a table */
}

void hp_unwind_remember_bucket(struct hp_thread *t, uint32_t origin, uint32_t bucket, void *at)
{
	hp_cfa_remember_bucket(t, origin, bucket, at);
}

/* HEAPPROF_UNWIND_CHECK in fp mode: the remembered walks' n frames and
 * hash against walk_fp's. */
static __attribute__((noinline)) void check_walk_fp(struct hp_thread *t, const uint64_t *frames,
						    uint32_t n, uint32_t max, uint64_t hash)
{
	uint64_t theirs[HP_CONFIG_MAX_DEPTH_LIMIT + HP_UNWIND_SLACK];
	uint64_t h;
	uint32_t m = walk_fp(t, theirs, max, &h);

	if (m == n && memcmp(frames, theirs, n * sizeof *frames) == 0 && h == hash)
		return;
	if (__atomic_fetch_add(&differed, 1, __ATOMIC_RELAXED) < 8)
		hp_log("unwind check: the remembered walk gave %u frames, the frame-pointer walk %u",
		       n, m);
}

uint32_t hp_unwind(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
		   uint32_t *stack, uintptr_t entry)
{
	int got;

	if (stack)
		*stack = 0;
	if (mode == HP_UNWIND_FP) {
		if (fp_memo) {
			got = hp_cfa_walk_fp(t, frames, max, hash, check ? NULL : stack, entry);
			if (check) {
				__atomic_fetch_add(&walks, 1, __ATOMIC_RELAXED);
				if (got >= 0) {
					__atomic_fetch_add(&cached_walks, 1, __ATOMIC_RELAXED);
					check_walk_fp(t, frames, (uint32_t)got, max, *hash);
				}
			}
			if (got >= 0)
				return (uint32_t)got;
		}
		return walk_fp(t, frames, max, hash);
	}
	/* The rule cache first, called from this frame as unw_backtrace is
	 * below, so that both walks start from the same return address. With
	 * the check, every walk gives its frames, to be compared. */
	if (use_cache) {
		got = hp_cfa_walk(t, frames, max, hash, check ? NULL : stack, entry);
		if (check) {
			__atomic_fetch_add(&walks, 1, __ATOMIC_RELAXED);
			if (got >= 0) {
				__atomic_fetch_add(&cached_walks, 1, __ATOMIC_RELAXED);
				check_walk(frames, (uint32_t)got, max, *hash);
			}
		}
		if (got >= 0)
			return (uint32_t)got;
	}
	/* In place: frames has room for the recorder's own frames too, which
	 * are then dropped. */
	_Static_assert(sizeof(void *) == sizeof(uint64_t), "frames hold pointers");
	return walk_libunwind(frames, max, max + HP_UNWIND_SLACK, hash);
}


__attribute__((noinline)) uint32_t hp_unwind_fallback(struct hp_thread *t, uint64_t *frames,
						      uint32_t max, uint64_t *hash)
{
	int saved = errno; /* libunwind's readability check sets it */
	uint32_t n;

	if (mode == HP_UNWIND_FP)
		n = walk_fp(t, frames, max, hash);
	else
		n = walk_libunwind(frames, max, max + HP_UNWIND_SLACK, hash);
	errno = saved;
	return n;
}

void hp_unwind_report(void)
{
	uint64_t read, largest;

	if (!check)
		return;
	hp_cfa_rule_stats(&read, &largest);
	hp_log("unwind check: %lu walks, %lu by the rule cache, %lu differed from libunwind; "
	       "%lu rules read from .eh_frame, tables of up to %lu rules",
	       (unsigned long)__atomic_load_n(&walks, __ATOMIC_RELAXED),
	       (unsigned long)__atomic_load_n(&cached_walks, __ATOMIC_RELAXED),
	       (unsigned long)__atomic_load_n(&differed, __ATOMIC_RELAXED), (unsigned long)read,
	       (unsigned long)largest);
}
