/*
 * os.c - the recorder's only contact with libc, the loader, the kernel and
 * the CPU (see os.h, which also explains the test seam).
 */
#include "os.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* In a test build each function is a static *_real behind a pointer of
 * the public name, initialised to it (os.h); in the library, the function
 * itself. */
#ifdef HP_OS_MUTABLE
#define HP_OS_DEFINE(ret, name, params)  \
	static ret name##_real params;   \
	ret(*name) params = name##_real; \
	static ret name##_real params
#else
#define HP_OS_DEFINE(ret, name, params) ret name params
#endif

/* 0 or -errno for a call's result r (negative: failed, errno set), with
 * errno set back to saved: the memory calls below keep the program's
 * errno (os.h), so that the slow paths of malloc need not save it. */
static int kept_errno(long r, int saved)
{
	int err = r < 0 ? -errno : 0;

	errno = saved;
	return err;
}

HP_OS_DEFINE(void *, hp_os_map, (size_t n))
{
	int saved = errno;
	/* The kernel's call, not mmap: the recorder's own memory must not
	 * reach its mmap interposer (interpose_mmap.c), under --wrap too. */
#ifdef __SANITIZE_THREAD__
	/* Under ThreadSanitizer (the unit tests only, which have no
	 * interposer), libc's, which it watches: memory one thread unmapped
	 * and another mapped again is otherwise reported as a race. */
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
#else
	void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
#endif
	errno = saved;
	return p == MAP_FAILED ? NULL : p;
}

HP_OS_DEFINE(void, hp_os_unmap, (void *p, size_t n))
{
	int saved = errno;

#ifdef __SANITIZE_THREAD__
	if (p)
		munmap(p, n); /* see hp_os_map */
#else
	if (p)
		syscall(SYS_munmap, p, n); /* not munmap: see hp_os_map */
#endif
	errno = saved;
}

HP_OS_DEFINE(int, hp_os_release, (void *p, size_t n))
{
	int saved = errno;
	uintptr_t page = (uintptr_t)hp_os_page_size();
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(page - 1);

	if (hi <= lo)
		return 0;
	/* The kernel's call, as hp_os_map's: nothing the program interposes. */
	return kept_errno(syscall(SYS_madvise, lo, hi - lo, MADV_DONTNEED), saved);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* linux/mman.h, Linux 5.14 */
#endif

HP_OS_DEFINE(int, hp_os_populate, (void *p, size_t n))
{
	int saved = errno;

	/* The kernel's call, as hp_os_map's. */
	return kept_errno(syscall(SYS_madvise, p, n, MADV_POPULATE_WRITE), saved);
}

HP_OS_DEFINE(int, hp_os_protect, (void *p, size_t n, int writable))
{
	int saved = errno;

	return kept_errno(mprotect(p, n, PROT_READ | (writable ? PROT_WRITE : 0)), saved);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

HP_OS_DEFINE(uint64_t, hp_os_now_ns, (void))
{
	return clock_ns(CLOCK_MONOTONIC);
}

HP_OS_DEFINE(uint64_t, hp_os_realtime_ns, (void))
{
	return clock_ns(CLOCK_REALTIME);
}

HP_OS_DEFINE(int, hp_os_write_all, (int fd, const void *p, size_t n))
{
	const char *q = p;
	while (n) {
		ssize_t w = write(fd, q, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

HP_OS_DEFINE(int, hp_os_pwrite_all, (int fd, const void *p, size_t n, uint64_t off))
{
	const char *q = p;
	while (n) {
		ssize_t w = pwrite(fd, q, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		q += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

HP_OS_DEFINE(ssize_t, hp_os_read, (int fd, void *p, size_t n))
{
	return read(fd, p, n);
}

HP_OS_DEFINE(ssize_t, hp_os_write, (int fd, const void *p, size_t n))
{
	return write(fd, p, n);
}

HP_OS_DEFINE(long, hp_os_syscall6, (long n, long a0, long a1, long a2, long a3, long a4, long a5))
{
	return syscall(n, a0, a1, a2, a3, a4, a5);
}

HP_OS_DEFINE(int, hp_os_read_self, (void *buf, const void *addr, size_t n))
{
	struct iovec local = {buf, n}, remote = {(void *)addr, n};
	ssize_t r = process_vm_readv(hp_os_getpid(), &local, 1, &remote, 1, 0);

	if (r == (ssize_t)n)
		return 0;
	return r < 0 ? -errno : -EFAULT;
}

HP_OS_DEFINE(int, hp_os_cancel_off, (void))
{
	int old = PTHREAD_CANCEL_ENABLE;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

HP_OS_DEFINE(void, hp_os_cancel_restore, (int old))
{
	if (old == PTHREAD_CANCEL_ENABLE)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}

HP_OS_DEFINE(int, hp_os_file_id, (int fd, struct hp_os_file_id *id))
{
	struct stat st;

	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st) < 0)
		return -errno;
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	return 0;
}

HP_OS_DEFINE(uint64_t, hp_os_file_size_limit, (void))
{
	struct rlimit r;

	if (getrlimit(RLIMIT_FSIZE, &r) < 0 || r.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)r.rlim_cur;
}

HP_OS_DEFINE(int, hp_os_write_fits, (int fd, size_t n))
{
	uint64_t limit = hp_os_file_size_limit(), at;
	struct stat st;
	off_t pos;
	int fl;

	if (limit == UINT64_MAX || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 1;
	fl = fcntl(fd, F_GETFL);
	pos = lseek(fd, 0, SEEK_CUR);
	at = (fl >= 0 && (fl & O_APPEND)) || pos < 0 ? (uint64_t)st.st_size : (uint64_t)pos;
	return at <= limit && n <= limit - at;
}

HP_OS_DEFINE(uint64_t, hp_os_file_size, (int fd))
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

HP_OS_DEFINE(int, hp_os_fd_high, (int fd))
{
	struct rlimit lim;
	long floor = 1024;
	int high;

	/* Just under the soft limit, at most ~1000 numbers up: far above
	 * what programs open, below what close-everything loops reach only
	 * when they use the real limit (and the writer checks anyway). */
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
		floor = (long)lim.rlim_cur;
	if (floor > 65536)
		floor = 65536;
	floor -= 32;
	if (fd < 0 || floor <= fd)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

int hp_os_sandboxed;

static int sandboxed(void)
{
	return __atomic_load_n(&hp_os_sandboxed, __ATOMIC_RELAXED);
}

HP_OS_DEFINE(int, hp_os_open_existing, (const char *path))
{
	int fd;

	if (sandboxed())
		return -EPERM;

	do
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

HP_OS_DEFINE(int, hp_os_append, (const char *path, const void *buf, size_t len))
{
	ssize_t n;
	int fd, err = 0;

	if (sandboxed())
		return -EPERM;
	do
		fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

/* glibc's own name for sigaction: the exported sigaction is our
 * interposer (interpose_signal.c), which hides the recorder's handlers. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

HP_OS_DEFINE(int, hp_os_sigaction, (int sig, const struct sigaction *act, struct sigaction *old))
{
	return __sigaction(sig, act, old) < 0 ? -errno : 0;
}

HP_OS_DEFINE(int, hp_os_set_handler, (int sig, void (*handler)(int), int flags))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler ? handler : SIG_DFL;
	sa.sa_flags = handler ? flags : 0;
	sigemptyset(&sa.sa_mask);
	return hp_os_sigaction(sig, &sa, NULL);
}

HP_OS_DEFINE(int, hp_os_raise, (int sig))
{
	return raise(sig) ? -errno : 0;
}

HP_OS_DEFINE(int, hp_os_atfork, (void (*prepare)(void), void (*parent)(void), void (*child)(void)))
{
	return -pthread_atfork(prepare, parent, child);
}

/* glibc's registration functions behind atexit and C++'s thread_local
 * destructors; __dso_handle names this library. */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;

HP_OS_DEFINE(int, hp_os_at_exit, (void (*fn)(void *), void *arg))
{
	return __cxa_atexit(fn, arg, NULL) ? -ENOMEM : 0;
}

HP_OS_DEFINE(int, hp_os_at_thread_exit, (void (*fn)(void *), void *arg))
{
	return __cxa_thread_atexit_impl(fn, arg, &__dso_handle) ? -ENOMEM : 0;
}

HP_OS_DEFINE(int, hp_os_thread_key_create, (unsigned *key, void (*fn)(void *)))
{
	pthread_key_t k;
	int r = pthread_key_create(&k, fn);

	if (r)
		return -r;
	*key = (unsigned)k;
	return 0;
}

HP_OS_DEFINE(int, hp_os_thread_key_set, (unsigned key, void *value))
{
	return -pthread_setspecific((pthread_key_t)key, value);
}

HP_OS_DEFINE(int, hp_os_dl_iterate,
	     (int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg))
{
	return dl_iterate_phdr(fn, arg);
}

/* In the static archive (HP_STATIC) there is nothing to look up: the
 * interposers' next functions come from the link (__real_X), and a static
 * program has no loader to ask. NULL, without linking libc.a's dlsym. */
HP_OS_DEFINE(void *, hp_os_dlsym_next, (const char *name))
{
#ifdef HP_STATIC
	(void)name;
	return NULL;
#else
	return dlsym(RTLD_NEXT, name);
#endif
}

HP_OS_DEFINE(void *, hp_os_dlsym_default, (const char *name))
{
#ifdef HP_STATIC
	(void)name;
	return NULL;
#else
	return dlsym(RTLD_DEFAULT, name);
#endif
}

HP_OS_DEFINE(const char *, hp_os_object_of, (const void *addr))
{
	Dl_info info;

	if (dladdr(addr, &info) && info.dli_fname && *info.dli_fname)
		return info.dli_fname;
	return NULL;
}

HP_OS_DEFINE(int, hp_os_is_definition, (const void *addr))
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	/* dladdr matches undefined symbols that have a value too: a
	 * canonical PLT entry reads as its symbol, undefined. */
	if (!dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return 1;
	return !(sym->st_shndx == SHN_UNDEF && sym->st_value &&
		 info.dli_saddr == addr);
}

HP_OS_DEFINE(void, hp_os_yield, (void))
{
	sched_yield();
}

HP_OS_DEFINE(void, hp_os_exit_group, (int status))
{
	syscall(SYS_exit_group, status);
}

HP_OS_DEFINE(int, hp_os_create, (const char *path, int exclusive))
{
	/* Non-blocking: a FIFO with no reader fails at once (ENXIO) instead
	 * of stopping the program in open. */
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	struct stat st;
	int fd, err;

	if (sandboxed())
		return -EPERM;
	flags |= exclusive ? O_EXCL : 0;
	do
		fd = open(path, flags, 0600);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	if (exclusive || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return fd;
	/* An existing file becomes 0600, as a new one is, before it is
	 * emptied: a capture holds the program's paths, arguments and
	 * symbols. One that cannot be made so (another user's) is left as
	 * it was. */
	if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
		goto fail;
	while (st.st_size && ftruncate(fd, 0) < 0)
		if (errno != EINTR)
			goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

HP_OS_DEFINE(void, hp_os_truncate, (int fd, uint64_t size))
{
	while (ftruncate(fd, (off_t)size) < 0 && errno == EINTR)
		;
}

HP_OS_DEFINE(void, hp_os_close, (int fd))
{
	if (fd >= 0)
		close(fd);
}

static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = sandboxed() ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return -1;
	while (len < cap) {
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	return (ssize_t)len;
}

HP_OS_DEFINE(uint64_t, hp_os_rss_bytes, (void))
{
	static uint64_t last; /* any thread, relaxed: the last value read */
	char buf[128];
	ssize_t n;
	uint64_t pages = 0;
	const char *p = buf;

	if (sandboxed())
		return __atomic_load_n(&last, __ATOMIC_RELAXED);
	n = read_file("/proc/self/statm", buf, sizeof buf - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	while (*p && *p != ' ') /* skip the total size, the second field is RSS */
		p++;
	while (*p == ' ')
		p++;
	while (*p >= '0' && *p <= '9')
		pages = pages * 10 + (uint64_t)(*p++ - '0');
	__atomic_store_n(&last, pages * hp_os_page_size(), __ATOMIC_RELAXED);
	return pages * hp_os_page_size();
}

HP_OS_DEFINE(void, hp_os_exe_path, (char *buf, size_t cap))
{
	ssize_t n = sandboxed() ? -1 : readlink("/proc/self/exe", buf, cap - 1);
	buf[n > 0 ? n : 0] = '\0';
}

HP_OS_DEFINE(pid_t, hp_os_getpid, (void))
{
	return (pid_t)syscall(SYS_getpid);
}

HP_OS_DEFINE(pid_t, hp_os_gettid, (void))
{
	return (pid_t)syscall(SYS_gettid);
}

HP_OS_DEFINE(void, hp_os_thread_name, (char buf[16]))
{
	if (sandboxed())
		return; /* buf as the caller filled it */
	if (prctl(PR_GET_NAME, buf, 0, 0, 0) != 0)
		buf[0] = '\0';
	buf[15] = '\0';
}

HP_OS_DEFINE(pid_t, hp_os_getppid, (void))
{
	return getppid();
}

HP_OS_DEFINE(size_t, hp_os_page_size, (void))
{
	static size_t page; /* written once; every writer stores the same value */
	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

HP_OS_DEFINE(int, hp_os_altstack, (uintptr_t *lo, uintptr_t *hi))
{
	stack_t ss;

	if (sigaltstack(NULL, &ss) < 0 || !(ss.ss_flags & SS_ONSTACK))
		return -ENOENT;
	*lo = (uintptr_t)ss.ss_sp;
	*hi = (uintptr_t)ss.ss_sp + ss.ss_size;
	return 0;
}

static uint64_t parse_hex(const char **s)
{
	uint64_t v = 0;
	for (;; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps: "lo-hi perms offset dev inode   path". */
static int maps_parse(const char *line, const char *end, struct hp_os_mapping *e)
{
	const char *p = line, *path;
	static const char flag[4] = {'r', 'w', 'x', 's'};

	e->lo = parse_hex(&p);
	if (*p++ != '-')
		return -1;
	e->hi = parse_hex(&p);
	e->perms = 0;
	if (p < end && *p == ' ')
		p++;
	for (unsigned i = 0; i < 4 && p + i < end; i++)
		if (p[i] == flag[i])
			e->perms |= 1u << i; /* HP_OS_MAP_READ .. _SHARED */
	/* The path follows perms, offset, dev and inode. */
	for (int field = 0; field < 4 && p < end; field++) {
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	path = p;
	e->path = path;
	e->path_len = (size_t)(end - path);
	return 0;
}

HP_OS_DEFINE(int, hp_os_maps_each,
	     (char *scratch, size_t cap, int (*fn)(const struct hp_os_mapping *, void *),
	      void *arg))
{
	int fd = sandboxed() ? -1 : open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	int ret = 0, skipping = 0;

	if (fd < 0)
		return sandboxed() ? -EPERM : -errno;
	while (!ret) {
		ssize_t r = read(fd, scratch + have, cap - have);
		char *line = scratch, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		while (!ret && (nl = memchr(line, '\n', have - (size_t)(line - scratch)))) {
			struct hp_os_mapping e;
			if (!skipping && maps_parse(line, nl, &e) == 0)
				ret = fn(&e, arg);
			skipping = 0;
			line = nl + 1;
		}
		have -= (size_t)(line - scratch);
		memmove(scratch, line, have);
		if (have == cap) { /* a line longer than the buffer: skip it */
			have = 0;
			skipping = 1;
		}
	}
	close(fd);
	return ret;
}

struct path_find {
	uintptr_t addr;
	char *buf;
	size_t cap;
};

static int find_path(const struct hp_os_mapping *e, void *arg)
{
	struct path_find *f = arg;

	if (f->addr < e->lo || f->addr >= e->hi)
		return 0;
	if (!e->path_len || e->path[0] != '/' || e->path_len >= f->cap)
		return -ENOENT;
	memcpy(f->buf, e->path, e->path_len);
	f->buf[e->path_len] = '\0';
	return 1;
}

HP_OS_DEFINE(int, hp_os_mapped_path,
	     (uintptr_t addr, char *buf, size_t cap, char *scratch, size_t scratch_cap))
{
	struct path_find f = {addr, buf, cap};
	int r = hp_os_maps_each(scratch, scratch_cap, find_path, &f);

	return r == 1 ? 0 : (r < 0 ? r : -ENOENT);
}

struct stack_find {
	uintptr_t sp, below, lo, hi;
	/* The process's initial stack grows down: [stack], or under valgrind
	 * (which maps the client's stack itself, unnamed, a few pages at a
	 * time: the mapping around rsp may be only 12 KiB of it, too little
	 * room for any allocation to be recorded) the mapping that holds
	 * __libc_stack_end, the top of the stack the program started on. */
	uintptr_t initial;
	int grows;
};

extern void *__libc_stack_end; /* ld.so's, set before any code of ours runs */

static int find_stack(const struct hp_os_mapping *e, void *arg)
{
	struct stack_find *f = arg;

	if (f->sp < e->lo || f->sp >= e->hi) {
		f->below = e->hi;
		return 0;
	}
	f->lo = e->lo;
	f->hi = e->hi;
	f->grows = (f->initial >= e->lo && f->initial < e->hi) ||
		   (e->path_len == 7 && memcmp(e->path, "[stack]", 7) == 0);
	return 1;
}

HP_OS_DEFINE(int, hp_os_thread_stack, (uintptr_t *lo, uintptr_t *hi))
{
	char scratch[512]; /* a line at a time: stacks have short lines */
	struct stack_find f = {(uintptr_t)__builtin_frame_address(0), 0, 0, 0,
			       (uintptr_t)__libc_stack_end, 0};
	struct rlimit lim;
	int r = hp_os_maps_each(scratch, sizeof scratch, find_stack, &f);

	if (r != 1)
		return r < 0 ? r : -ENOENT;
	*lo = f.lo;
	*hi = f.hi;
	if (f.grows) { /* down to the stack limit, and never into the mapping below */
		*lo = f.below;
		if (getrlimit(RLIMIT_STACK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
		    lim.rlim_cur < f.hi - f.below)
			*lo = f.hi - lim.rlim_cur;
	}
	return 0;
}

HP_OS_DEFINE(uint64_t, hp_os_resident_bytes, (uintptr_t lo, uintptr_t hi))
{
	/* A vector on the stack: 1 KiB asks about 4 MiB of 4 KiB pages a
	 * call, so a 64 MiB arena takes 16 calls. */
	unsigned char vec[1024];
	size_t page = hp_os_page_size();
	uint64_t bytes = 0;

	lo &= ~(uintptr_t)(page - 1);
	while (lo < hi) {
		size_t pages = (hi - lo + page - 1) / page;
		if (pages > sizeof vec)
			pages = sizeof vec;
		if (mincore((void *)lo, pages * page, vec) != 0)
			break; /* unmapped since (ENOMEM): what was counted */
		for (size_t i = 0; i < pages; i++)
			bytes += vec[i] & 1 ? page : 0;
		lo += pages * page;
	}
	/* The last page may reach past hi (hi not page-aligned). */
	return bytes;
}

HP_OS_DEFINE(size_t, hp_os_cmdline, (char *buf, size_t cap))
{
	ssize_t n = read_file("/proc/self/cmdline", buf, cap);
	return n > 0 ? (size_t)n : 0;
}

HP_OS_DEFINE(const char *, hp_os_getenv, (const char *name))
{
	return getenv(name);
}

/* Removes entry i of the NULL-terminated environment, in place. */
static void env_remove(char **env, size_t i)
{
	for (; env[i]; i++)
		env[i] = env[i + 1];
}

/* Whether LD_PRELOAD entry e (within its value) names the library file
 * name (n bytes). */
static int names_lib(const char *e, size_t len, const char *name, size_t n)
{
	return len >= n && memcmp(e + len - n, name, n) == 0 && (len == n || e[len - n - 1] == '/');
}

HP_OS_DEFINE(void, hp_os_unpreload, (const char *name))
{
	extern char **environ;
	size_t n = strlen(name);

	for (size_t i = 0; environ && environ[i]; i++) {
		char *value, *in, *out;

		if (strncmp(environ[i], "HEAPPROF_", 9) == 0) {
			env_remove(environ, i--);
			continue;
		}
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			continue;
		/* Copy the entries that are not ours over themselves, with
		 * one separator between them, as the loader reads them. */
		value = out = environ[i] + 11;
		for (in = value; *in;) {
			size_t len;

			in += strspn(in, ": ");
			len = strcspn(in, ": ");
			if (!len)
				break;
			if (!names_lib(in, len, name, n)) {
				if (out != value)
					*out++ = ':';
				memmove(out, in, len);
				out += len;
			}
			in += len;
		}
		*out = '\0';
		if (!*value) /* nothing else was preloaded: as if never set */
			env_remove(environ, i--);
	}
}

HP_OS_DEFINE(char *const *, hp_os_env_without, (char *const envp[], const char *name))
{
	size_t count = 0, bytes = 0, n = strlen(name), k = 0;
	int ours = 0;
	char **out, *text;

	for (; envp && envp[count]; count++) {
		if (strncmp(envp[count], "HEAPPROF_", 9) == 0 ||
		    strncmp(envp[count], "LD_PRELOAD=", 11) == 0)
			ours = 1;
		if (strncmp(envp[count], "LD_PRELOAD=", 11) == 0)
			bytes += strlen(envp[count]) + 1;
	}
	if (!ours)
		return envp;
	out = hp_os_map((count + 1) * sizeof *out + bytes);
	if (!out)
		return envp;
	text = (char *)(out + count + 1);
	for (size_t i = 0; i < count; i++) {
		const char *in;
		char *start = text;

		if (strncmp(envp[i], "HEAPPROF_", 9) == 0)
			continue;
		if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0) {
			out[k++] = envp[i];
			continue;
		}
		/* The entries that are not ours, one separator between. */
		memcpy(text, "LD_PRELOAD=", 11);
		text += 11;
		for (in = envp[i] + 11; *in;) {
			size_t len;

			in += strspn(in, ": ");
			len = strcspn(in, ": ");
			if (!len)
				break;
			if (!names_lib(in, len, name, n)) {
				if (text != start + 11)
					*text++ = ':';
				memcpy(text, in, len);
				text += len;
			}
			in += len;
		}
		*text++ = '\0';
		if (text - start > 12) /* something else was preloaded */
			out[k++] = start;
	}
	out[k] = NULL;
	return out;
}

HP_OS_DEFINE(int, hp_os_env_add, (const char *entry))
{
	extern char **environ;
	size_t n = 0, len = strlen(entry) + 1;
	char **env, *copy;

	while (environ && environ[n])
		n++;
	env = hp_os_map((n + 2) * sizeof *env + len);
	if (!env)
		return -ENOMEM;
	copy = (char *)(env + n + 2);
	memcpy(copy, entry, len);
	if (n)
		memcpy(env, environ, n * sizeof *env);
	env[n] = copy;
	env[n + 1] = NULL;
	environ = env;
	return 0;
}
