/*
 * interpose_mmap.c - anonymous mmap, munmap, mremap, and brk and sbrk
 * called by the program, recorded as the blocks of a heap of their own,
 * "mmap" (HEAPPROF_MMAP=1, heapprof run --mmap), next to malloc's.
 *
 * Model. The heap is a custom heap (attr.h, tags.h) created at start: its
 * blocks have their own bytes in use and peak, kept out of malloc's. A
 * mapping is one block, keyed in the live register by its start, of its
 * length rounded up to the page (what the kernel maps); a brk increment
 * is one block of its exact bytes. The live register is keyed by a
 * block's start, but munmap and mremap take any range: a partial unmap
 * splits a mapping, one call may end several. So this file keeps a range
 * map of the live blocks, a sorted array of [lo, hi) intervals, one per
 * register entry keyed at lo. Ending a range [a, b):
 *
 *   every interval meeting it is taken out of the register and counted
 *   freed (its bytes, one block); what is left of it outside [a, b), at
 *   most a piece on each side, goes back in as blocks of the same bucket
 *   (the stack that mapped it), counted allocated.
 *
 * So the bytes in use and at the peak are exact per stack (the free comes
 * first: the in-use bytes never pass their old value, so a split makes no
 * peak); a piece left by a split counts once more as allocated. mremap is
 * realloc's model: the old range ended as above, the new one a block at
 * the mremap's stack, when the old range was one of ours (anonymous).
 * mmap with MAP_FIXED ends the range it replaces, whatever it maps there.
 *
 * What is not recorded, and why (docs/options.md, README):
 * - file-backed mappings (not allocations; MAP_ANONYMOUS only, private or
 *   shared; a stack the program maps for itself is one);
 * - glibc's own mappings: malloc's big blocks and arenas, and the thread
 *   stacks of pthread_create, go through glibc's internal __mmap, and
 *   malloc's heap through its internal __sbrk, never through the
 *   interposable mmap and sbrk (tests/integration/test_mmap.c checks
 *   both): no double counting with malloc's heap;
 * - the recorder's own mappings (hp_os_map calls the kernel directly) and
 *   those of code it calls (libunwind): t->busy or t->forwarding is set.
 *
 * The option off, each entry point costs one load and a branch before the
 * real call; malloc's fast path is not touched.
 *
 * Locking: the range map has one spinlock, taken with this thread's
 * inside flag raised, so that a signal handler's mmap on top of it passes
 * through (counted lost) instead of waiting. Lock order: this lock, then
 * the live register's shards, then buckets and tables (attr.c). It is held
 * across munmap, mremap and MAP_FIXED mmap (the range must change in the
 * kernel and here as one step, or another thread could get the addresses
 * in between) and across the unwinding of a new block: mmap is rare.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "aggregate.h"
#include "attr.h"
#include "attach.h"
#include "interpose_inline.h"
#include "os.h"
#include "spin.h"
#include "tags.h"

#ifdef HP_STATIC
extern void *__real_mmap(void *, size_t, int, int, int, off_t);
extern void *__real_mmap64(void *, size_t, int, int, int, off_t);
extern int __real_munmap(void *, size_t);
extern void *__real_mremap(void *, size_t, size_t, int, ...);
extern int __real_brk(void *);
extern void *__real_sbrk(intptr_t);
#endif

/* The real functions: set once by hp_interpose_mmap_resolve (from
 * hp_interpose_init), read-only afterwards. Until then mmap, munmap and
 * mremap call the kernel directly. */
static struct {
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*brk)(void *);
	void *(*sbrk)(intptr_t);
} real
#ifdef HP_STATIC
	= {__real_mmap, __real_munmap, __real_mremap, __real_brk, __real_sbrk}
#endif
;

/* The mmap heap's id, 0 while the option is off: written once by
 * hp_interpose_mmap_start, before recording starts. */
static uint32_t heap_id;

/* One live block of the heap: [lo, hi), keyed lo in the register. */
struct range {
	uintptr_t lo, hi;
};

/* The range map: sorted by lo, disjoint; in memory of the recorder's own
 * (hp_os_map), grown by doubling. Guarded by lock. */
static struct hp_spin lock;
static struct range *ranges;
static size_t nranges, cap_ranges;

/* Raised while this thread is in this file's recording (holding lock or
 * about to): nested calls, from a signal handler or from what the
 * recording calls, pass through. */
static __thread uint32_t inside __attribute__((tls_model("initial-exec")));

void hp_interpose_mmap_resolve(void)
{
#ifndef HP_STATIC
	__atomic_store_n(&real.mmap, (__typeof__(real.mmap))hp_attach_next("mmap"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real.munmap, (__typeof__(real.munmap))hp_attach_next("munmap"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real.mremap, (__typeof__(real.mremap))hp_attach_next("mremap"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real.brk, (__typeof__(real.brk))hp_attach_next("brk"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real.sbrk, (__typeof__(real.sbrk))hp_attach_next("sbrk"),
			 __ATOMIC_RELEASE);
#endif
}

int hp_interpose_mmap_start(void)
{
	uint32_t id = hp_tags_heap_new("mmap");

	if (!id)
		return -ENOSPC;
	__atomic_store_n(&heap_id, id, __ATOMIC_RELEASE);
	return 0;
}

int hp_interpose_mmap_on(void)
{
	return __atomic_load_n(&heap_id, __ATOMIC_ACQUIRE) != 0;
}

void hp_interpose_mmap_lock(void)
{
	if (heap_id)
		hp_spin_lock(&lock);
}

void hp_interpose_mmap_unlock(void)
{
	if (heap_id)
		hp_spin_unlock(&lock);
}

/* The next functions, or the kernel's while they are not known. */
static void *next_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*fn)(void *, size_t, int, int, int, off_t) =
		__atomic_load_n(&real.mmap, __ATOMIC_ACQUIRE);
	if (fn)
		return fn(addr, len, prot, flags, fd, off);
	return (void *)hp_os_syscall6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);
}

static int next_munmap(void *addr, size_t len)
{
	int (*fn)(void *, size_t) = __atomic_load_n(&real.munmap, __ATOMIC_ACQUIRE);
	if (fn)
		return fn(addr, len);
	return (int)hp_os_syscall6(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
}

static void *next_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	void *(*fn)(void *, size_t, size_t, int, ...) =
		__atomic_load_n(&real.mremap, __ATOMIC_ACQUIRE);
	if (fn)
		return fn(old, old_len, new_len, flags, new_addr);
	return (void *)hp_os_syscall6(SYS_mremap, (long)old, (long)old_len, (long)new_len, flags,
				      (long)new_addr, 0);
}

/* brk and sbrk keep glibc's idea of the break (__curbrk): never the bare
 * kernel call. Looked up here if called before the recorder started. */
static int resolve_brk(void)
{
#ifndef HP_STATIC
	if (!__atomic_load_n(&real.sbrk, __ATOMIC_ACQUIRE)) {
		hp_self.forwarding++;
		hp_interpose_mmap_resolve();
		hp_self.forwarding--;
	}
#endif
	return real.sbrk && real.brk ? 0 : -1;
}

/* Whether this call is to be recorded: the option on, recording, not the
 * recorder's own call nor one nested in this file's recording. */
static inline int watching(void)
{
	const struct hp_thread *t = &hp_self;

	return hp_unlikely(__atomic_load_n(&heap_id, __ATOMIC_RELAXED) != 0) &&
	       __atomic_load_n(&hp_state, __ATOMIC_RELAXED) == HP_STATE_ACTIVE && !t->busy &&
	       !t->forwarding && !inside;
}

static size_t page_bytes(void)
{
	return hp_os_page_size();
}

static uintptr_t round_up_page(uintptr_t n)
{
	uintptr_t p = page_bytes();
	return (n + p - 1) & ~(p - 1);
}

/* Room for one more range. Under lock. Returns 0 or -ENOMEM. */
static int grow(void)
{
	size_t cap = cap_ranges ? cap_ranges * 2 : 4096;
	struct range *r;

	if (nranges < cap_ranges)
		return 0;
	r = hp_os_map(cap * sizeof *r);
	if (!r)
		return -ENOMEM;
	if (ranges) {
		memcpy(r, ranges, nranges * sizeof *r);
		hp_os_unmap(ranges, cap_ranges * sizeof *r);
	}
	ranges = r;
	cap_ranges = cap;
	return 0;
}

/* The index of the first range whose hi is above a. Under lock. */
static size_t first_above(uintptr_t a)
{
	size_t lo = 0, hi = nranges;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ranges[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Inserts [lo, hi) at index i, which keeps the order. Under lock. */
static int insert_at(size_t i, uintptr_t lo, uintptr_t hi)
{
	if (grow() < 0)
		return -ENOMEM;
	memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof *ranges);
	ranges[i] = (struct range){lo, hi};
	nranges++;
	return 0;
}

/* A piece [lo, hi) left of a block of bucket: back in the register and
 * counted allocated. Under lock, with busy raised. */
static void keep_piece(uint32_t bucket, uintptr_t lo, uintptr_t hi)
{
	struct hp_live_block stale;
	int r = hp_live_insert(hp_attr_key((void *)lo, heap_id), bucket, hi - lo, &stale);

	if (r < 0) {
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, hi - lo);
		return;
	}
	if (r == 1)
		hp_agg_heap_free(stale.bucket, stale.size, heap_id);
	hp_agg_heap_alloc(bucket, hi - lo, heap_id);
}

/* Ends [a, b) (see the model at the top). Returns the bytes of our blocks
 * it met. Under lock. */
static uint64_t end_range(uintptr_t a, uintptr_t b)
{
	struct hp_thread *t = &hp_self;
	size_t i = first_above(a), j = i;
	uint64_t met = 0;
	int left = 0, right = 0;
	struct range l = {0, 0}, rt = {0, 0};

	if (a >= b)
		return 0;
	t->busy++;
	for (; j < nranges && ranges[j].lo < b; j++) {
		struct range r = ranges[j];
		struct hp_live_block blk;
		int found = hp_live_remove(hp_attr_key((void *)r.lo, heap_id), &blk, 1) == 1;

		met += (r.hi < b ? r.hi : b) - (r.lo > a ? r.lo : a);
		if (found)
			hp_agg_heap_free(blk.bucket, blk.size, heap_id);
		if (r.lo < a) {
			l = (struct range){r.lo, a};
			left = 1;
			if (found)
				keep_piece(blk.bucket, r.lo, a);
		}
		if (r.hi > b) {
			rt = (struct range){b, r.hi};
			right = 1;
			if (found)
				keep_piece(blk.bucket, b, r.hi);
		}
	}
	t->busy--;
	/* ranges[i..j) met [a, b): replace them by the pieces left (an
	 * unrecorded mapping's pieces too: sampled mode). */
	memmove(&ranges[i], &ranges[j], (nranges - j) * sizeof *ranges);
	nranges -= j - i;
	if (right && insert_at(i, rt.lo, rt.hi) < 0)
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, rt.hi - rt.lo);
	if (left && insert_at(i, l.lo, l.hi) < 0)
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, l.hi - l.lo);
	return met;
}

/* A new block [lo, hi) at the caller's stack. Under lock. */
static void add_range(uintptr_t lo, uintptr_t hi)
{
	size_t i;

	if (lo >= hi)
		return;
	end_range(lo, hi); /* nothing there, unless the program raced */
	i = first_above(lo);
	if (insert_at(i, lo, hi) < 0) {
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, hi - lo);
		return;
	}
	if (hp_record_heap_alloc(&hp_self, (void *)lo, hi - lo, heap_id) < 0) {
		/* Not in the register (counted lost): not ours either. */
		memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
		nranges--;
	}
}

static void enter(void)
{
	inside = 1;
	hp_spin_lock(&lock);
}

static void leave(void)
{
	hp_spin_unlock(&lock);
	inside = 0;
}

/* Counts a call that could not be recorded: a signal handler's over this
 * file's recording. */
static void nested_lost(int flags, size_t len)
{
	if (inside && (flags & MAP_ANONYMOUS) && heap_id && hp_state == HP_STATE_ACTIVE &&
	    !hp_self.busy && !hp_self.forwarding)
		hp_agg_lost(HP_LOST_REENTRANT, 1, len);
}

/* The entry points. Everything this file defines with external linkage is
 * exported (the version script then keeps just these names). */
#pragma GCC visibility push(default)

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (!watching()) {
		nested_lost(flags, len);
		return next_mmap(addr, len, prot, flags, fd, off);
	}
	if (!(flags & MAP_FIXED)) {
		if (!(flags & MAP_ANONYMOUS))
			return next_mmap(addr, len, prot, flags, fd, off);
		/* A fresh range: the kernel's call needs no lock. */
		p = next_mmap(addr, len, prot, flags, fd, off);
		if (p != MAP_FAILED) {
			int saved = errno;
			enter();
			add_range((uintptr_t)p, (uintptr_t)p + round_up_page(len));
			leave();
			errno = saved;
		}
		return p;
	}
	/* MAP_FIXED replaces what was there, one of ours maybe. */
	enter();
	p = next_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		int saved = errno;
		end_range((uintptr_t)p, (uintptr_t)p + round_up_page(len));
		if (flags & MAP_ANONYMOUS)
			add_range((uintptr_t)p, (uintptr_t)p + round_up_page(len));
		errno = saved;
	}
	leave();
	return p;
}

void *HP_ENTRY(mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(addr, len, prot, flags, fd, off);
}

void *HP_ENTRY(mmap64)(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(addr, len, prot, flags, fd, off);
}

int HP_ENTRY(munmap)(void *addr, size_t len)
{
	int r;

	if (!watching() || (uintptr_t)addr & (page_bytes() - 1) || !len)
		return next_munmap(addr, len);
	enter();
	r = next_munmap(addr, len);
	if (r == 0) {
		int saved = errno;
		end_range((uintptr_t)addr, (uintptr_t)addr + round_up_page(len));
		errno = saved;
	}
	leave();
	return r;
}

void *HP_ENTRY(mremap)(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!watching())
		return next_mremap(old, old_len, new_len, flags, new_addr);
	enter();
	p = next_mremap(old, old_len, new_len, flags, new_addr);
	if (p != MAP_FAILED) {
		int saved = errno;
		uint64_t ours = 0;
		/* old_len 0 duplicates a shared mapping: the old one stays;
		 * MREMAP_DONTUNMAP leaves the old range mapped (empty). */
		if (old_len && !(flags & MREMAP_DONTUNMAP))
			ours = end_range((uintptr_t)old, (uintptr_t)old + round_up_page(old_len));
		else
			ours = first_above((uintptr_t)old) < nranges &&
			       ranges[first_above((uintptr_t)old)].lo <= (uintptr_t)old;
		if (ours) {
			end_range((uintptr_t)p, (uintptr_t)p + round_up_page(new_len));
			add_range((uintptr_t)p, (uintptr_t)p + round_up_page(new_len));
		}
		errno = saved;
	}
	leave();
	return p;
}

/* The break moves by incr from cur (glibc's sbrk(0)): a block of the
 * bytes added, or the end of those given back. Under lock. */
static void moved_break(uintptr_t cur, intptr_t incr)
{
	if (incr > 0)
		add_range(cur, cur + (uintptr_t)incr);
	else if (incr < 0)
		end_range(cur - (uintptr_t)-incr, cur);
}

void *HP_ENTRY(sbrk)(intptr_t incr)
{
	void *p;

	if (resolve_brk() < 0) {
		errno = ENOMEM;
		return (void *)-1;
	}
	if (!watching() || !incr)
		return real.sbrk(incr);
	enter();
	p = real.sbrk(incr);
	if (p != (void *)-1) {
		int saved = errno;
		moved_break((uintptr_t)p, incr);
		errno = saved;
	}
	leave();
	return p;
}

int HP_ENTRY(brk)(void *addr)
{
	uintptr_t cur;
	int r;

	if (resolve_brk() < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (!watching())
		return real.brk(addr);
	enter();
	cur = (uintptr_t)real.sbrk(0);
	r = real.brk(addr);
	if (r == 0 && cur != (uintptr_t)-1) {
		int saved = errno;
		moved_break(cur, (intptr_t)((uintptr_t)addr - cur));
		errno = saved;
	}
	leave();
	return r;
}

#pragma GCC visibility pop
