/*
 * inject.c - calling a function inside another running process (inject.h).
 */
#include "inject.h"

#include <dirent.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/say.h"
#include "seccomp.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

/* The stack a borrowed thread must have left below its stack pointer: the
 * loader and the recorder's start use a few pages. */
#define CALL_STACK_ROOM (64 * 1024)
/* Bytes below the stack pointer left alone: the red zone and then some. */
#define SKIP_BELOW_SP 4096
/* How far up a thread's stack the safe-point check looks for return
 * addresses, where its call chain cannot be unwound. */
#define SCAN_BYTES (128 * 1024)
/* The most frames of a call chain looked at; a longer chain is taken as
 * not unwound (a loop of garbage frames). */
#define MAX_FRAMES 1024

struct map {
	uintptr_t lo, hi, off;
	char perms[5];
	char path[4096];
};

/* Calls fn for each line of pid's map; stops when fn returns non-zero and
 * returns that. -errno when the map cannot be read. */
static int each_map(pid_t pid, int (*fn)(const struct map *, void *), void *arg)
{
	char name[64], line[4096 + 128];
	struct map m;
	FILE *f;
	int r = 0;

	snprintf(name, sizeof name, "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (!r && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off;
		memset(&m, 0, sizeof m);
		if (sscanf(line, "%lx-%lx %4s %lx %*s %*s %4095[^\n]", &lo, &hi, m.perms, &off,
			   m.path) < 4)
			continue;
		m.lo = lo;
		m.hi = hi;
		m.off = off;
		r = fn(&m, arg);
	}
	fclose(f);
	return r;
}

/* The first PT_LOAD's page-aligned address of the ELF file at path: its
 * load bias is where that page is mapped minus this. */
static int first_load_vaddr(const char *path, uintptr_t *vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n;
	Elf *e;
	int r = -ENOEXEC;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
				*vaddr = ph.p_vaddr & ~(uintptr_t)4095;
				r = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

/* Calls fn for each defined dynamic symbol of the ELF file at path, with
 * whether it is a hidden (non-default) version; stops when fn returns
 * non-zero. */
static int each_dynsym(const char *path,
		       int (*fn)(const char *name, const GElf_Sym *s, int hidden, void *), void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Data *syms = NULL, *vers = NULL;
	size_t strndx = 0, n = 0;
	Elf_Scn *scn = NULL;
	Elf *e;
	int r = 0;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			syms = elf_getdata(scn, NULL);
			strndx = sh.sh_link;
			n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		} else if (sh.sh_type == SHT_GNU_versym) {
			vers = elf_getdata(scn, NULL);
		}
	}
	for (size_t i = 0; syms && i < n && !r; i++) {
		GElf_Sym s;
		GElf_Versym v = 0;
		const char *name;
		if (!gelf_getsym(syms, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(e, strndx, s.st_name);
		if (!name)
			continue;
		if (vers)
			gelf_getversym(vers, (int)i, &v);
		r = fn(name, &s, (v & 0x8000) != 0, arg);
	}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

struct find_sym {
	const char *name;
	uintptr_t value;
	int hidden;
};

static int match_sym(const char *name, const GElf_Sym *s, int hidden, void *arg)
{
	struct find_sym *f = arg;

	if (strcmp(name, f->name) != 0)
		return 0;
	if (!f->value || (f->hidden && !hidden)) {
		f->value = s->st_value;
		f->hidden = hidden;
	}
	return 0;
}

uintptr_t hp_inject_symbol(const char *path, uintptr_t bias, const char *name)
{
	struct find_sym f = {.name = name};

	if (each_dynsym(path, match_sym, &f) < 0 || !f.value)
		return 0;
	return bias + f.value;
}

static void add_unsafe(struct hp_inject_target *t, uintptr_t lo, uintptr_t hi)
{
	if (t->nunsafe < HP_INJECT_MAX_UNSAFE && lo < hi) {
		t->unsafe[t->nunsafe].lo = lo;
		t->unsafe[t->nunsafe].hi = hi;
		t->nunsafe++;
	}
}

/* The libc functions a borrowed thread must not be inside: the allocator
 * (its arena locks), the loader's entry points (the loader's lock), fork
 * and thread creation (which hold both). */
static const char *const unsafe_libc[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_trim", "malloc_stats",
	"malloc_info", "mallinfo", "mallinfo2", "malloc_usable_size", "mallopt", "fork",
	"_Fork", "vfork", "pthread_create", "pthread_exit", "dlopen", "dlmopen", "dlclose",
	"dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo", "dl_iterate_phdr", "exit",
	"__libc_dlopen_mode", "__libc_dlsym", "__libc_dlclose",
};


static int note_unsafe_sym(const char *name, const GElf_Sym *s, int hidden, void *arg)
{
	struct hp_inject_target *t = arg;

	(void)hidden;
	for (size_t i = 0; i < sizeof unsafe_libc / sizeof *unsafe_libc; i++) {
		if (strcmp(name, unsafe_libc[i]) == 0 && s->st_size) {
			add_unsafe(t, t->libc_bias + s->st_value,
				   t->libc_bias + s->st_value + s->st_size);
			break;
		}
	}
	return 0;
}

static int is_libc(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strcmp(b, "libc.so.6") == 0 || (strncmp(b, "libc-2.", 7) == 0 && strstr(b, ".so"));
}

static int is_loader(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-2.", 5) == 0 ||
	       strncmp(b, "ld.so", 5) == 0;
}

/* Another allocator loaded as a library: all of its code is unsafe. */
static int is_allocator(const char *path)
{
	return strstr(path, "jemalloc") || strstr(path, "tcmalloc") || strstr(path, "mimalloc");
}

struct open_scan {
	struct hp_inject_target *t;
	int loader;
	uintptr_t libc_lo;
};

static int scan_open(const struct map *m, void *arg)
{
	struct open_scan *s = arg;
	int exec = m->perms[2] == 'x';

	if (is_libc(m->path) && m->off == 0 && !s->libc_lo) {
		snprintf(s->t->libc_path, sizeof s->t->libc_path, "%s", m->path);
		s->libc_lo = m->lo;
	}
	if (is_loader(m->path)) {
		s->loader = 1;
		if (exec)
			add_unsafe(s->t, m->lo, m->hi);
	}
	if (exec && is_allocator(m->path))
		add_unsafe(s->t, m->lo, m->hi);
	return 0;
}

static int say_ptrace_error(pid_t pid, int err);

/* The identity of pid's image: the address of the 16 random bytes the
 * kernel put on the new stack at its exec (AT_RANDOM) and those bytes. An
 * exec gives new ones (a collision is one chance in 2^128), even where
 * every address stays the same (no ASLR). Returns 0 or -errno. */
static int image_id(pid_t pid, uintptr_t *at, uint64_t id[2])
{
	char name[64];
	uint64_t aux[2];
	struct iovec local = {id, 16}, remote;
	FILE *f;

	snprintf(name, sizeof name, "/proc/%d/auxv", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	*at = 0;
	while (fread(aux, sizeof aux, 1, f) == 1 && aux[0] != AT_NULL)
		if (aux[0] == AT_RANDOM)
			*at = (uintptr_t)aux[1];
	fclose(f);
	if (!*at)
		return -ENOEXEC;
	remote = (struct iovec){(void *)*at, 16};
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != 16)
		return errno ? -errno : -EIO;
	return 0;
}

int hp_inject_same_image(const struct hp_inject_target *t)
{
	uint64_t id[2];
	uintptr_t at;
	int err = image_id(t->pid, &at, id);

	if (err < 0) /* gone, a zombie (no memory left), or in the middle of an exec */
		return err == -ENOENT || err == -ENOEXEC ? -ESRCH : err;
	return at == t->random_at && id[0] == t->random[0] && id[1] == t->random[1];
}

/* What /proc/pid/stat says of pid: its name, state and flags. Returns 0
 * or -errno (-ENOENT: no such process). */
static int proc_stat(pid_t pid, char *comm, size_t cap, char *state, unsigned long *flags)
{
	char name[64], line[1024], *open_paren, *close_paren;
	FILE *f;
	int ok;

	snprintf(name, sizeof name, "/proc/%d/stat", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	open_paren = ok ? strchr(line, '(') : NULL;
	close_paren = ok ? strrchr(line, ')') : NULL;
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EIO;
	snprintf(comm, cap, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	/* After the name: state, ppid, pgrp, session, tty, tpgid, flags. */
	if (sscanf(close_paren + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -EIO;
	return 0;
}

#define PF_KTHREAD_FLAG 0x00200000ul /* include/linux/sched.h */

/* A zombie's exit status, as waitpid gives it (the last field of
 * /proc/PID/stat, Linux 3.5 and later), or -1. */
static int exit_status(pid_t pid)
{
	char name[64], line[1024], *p;
	FILE *f;
	int ok;

	snprintf(name, sizeof name, "/proc/%d/stat", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -1;
	ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	p = ok ? strrchr(line, ' ') : NULL;
	return p ? atoi(p + 1) : -1;
}

/* One reading of pid's map and its libc: 0, or -errno with why in msg. */
static int open_once(struct hp_inject_target *t, pid_t pid, char *msg, size_t cap)
{
	struct open_scan s = {.t = t};
	uintptr_t vaddr = 0;
	unsigned long flags = 0;
	char comm[64], state = 0;
	int err;

	memset(t, 0, sizeof *t);
	t->pid = pid;
	/* An empty map is no static program when the process is a kernel
	 * thread or has exited. */
	if (proc_stat(pid, comm, sizeof comm, &state, &flags) == 0) {
		if (flags & PF_KTHREAD_FLAG) {
			snprintf(msg, cap,
				 "process %d (%s) is a kernel thread: it runs no program to attach to",
				 (int)pid, comm);
			return -EPERM;
		}
		if (state == 'Z' || state == 'X') {
			snprintf(msg, cap,
				 "process %d (%s) has exited (a zombie its parent has not waited for "
				 "yet): there is nothing to attach to",
				 (int)pid, comm);
			return -ESRCH;
		}
	}
	err = each_map(pid, scan_open, &s);
	if (err < 0) {
		if (err == -ENOENT)
			snprintf(msg, cap, "no process %d", (int)pid);
		else if (err == -EACCES || err == -EPERM)
			snprintf(msg, cap,
				 "process %d is another user's: attaching to it needs root (or "
				 "CAP_SYS_PTRACE)",
				 (int)pid);
		else
			snprintf(msg, cap, "process %d: cannot read its memory map: %s", (int)pid,
				 strerror(-err));
		return err == -ENOENT ? -ESRCH : err;
	}
	if (!s.loader || !s.libc_lo) {
		snprintf(msg, cap,
			 "process %d is statically linked (no dynamic loader or no libc.so.6 in "
			 "its map): heapprof attach needs a dynamically linked program",
			 (int)pid);
		return -ENOEXEC;
	}
	err = first_load_vaddr(t->libc_path, &vaddr);
	if (err < 0) {
		snprintf(msg, cap, "process %d: cannot read its libc %s: %s", (int)pid,
			 t->libc_path, strerror(-err));
		return err;
	}
	t->libc_bias = s.libc_lo - vaddr;
	t->dlopen = hp_inject_symbol(t->libc_path, t->libc_bias, "dlopen");
	t->dlsym = hp_inject_symbol(t->libc_path, t->libc_bias, "dlsym");
	t->dlerror = hp_inject_symbol(t->libc_path, t->libc_bias, "dlerror");
	if (!t->dlopen || !t->dlsym) {
		snprintf(msg, cap,
			 "process %d: its libc (%s) has no dlopen (glibc 2.34 or later is needed "
			 "to attach)",
			 (int)pid, t->libc_path);
		return -ENOSYS;
	}
	each_dynsym(t->libc_path, note_unsafe_sym, t);
	return 0;
}

/* Whether pid's executable asks for a dynamic loader (PT_INTERP): 1, 0,
 * or -errno when it cannot be read. */
static int exe_is_dynamic(pid_t pid)
{
	char name[64];
	size_t n;
	Elf *e;
	int fd, r = 0;

	snprintf(name, sizeof name, "/proc/%d/exe", (int)pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &n) != 0)
		r = -ENOEXEC;
	for (size_t i = 0; !r && i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
			r = 1;
	}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

/* Whether pid is in the middle of an exec by a thread other than its
 * leader: the leader is a zombie (or gone from view) while that thread,
 * about to take over the pid, still runs. A process that ended has no
 * thread left but its zombie leader. */
static int execing(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		char state = 0, file[96], line[256];
		FILE *f;
		if (tid <= 0 || tid == pid)
			continue;
		snprintf(file, sizeof file, "/proc/%d/task/%d/status", (int)pid, (int)tid);
		f = fopen(file, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof line, f))
			sscanf(line, "State: %c", &state);
		fclose(f);
		found = state && state != 'Z' && state != 'X';
	}
	closedir(dir);
	return found;
}

/* The map and the libc are read between two readings of the image's
 * identity: an exec in between (what was read may be of either image, or
 * of none) reads them again, as does a new image whose loader has not
 * mapped libc yet (it is starting), for up to a second. */
int hp_inject_open(struct hp_inject_target *t, pid_t pid)
{
	char msg[4200] = "";
	int err = 0;

	for (int tries = 0; tries < 200; tries++) {
		struct timespec ts = {0, 5 * 1000000L};
		uint64_t id[2], again[2];
		uintptr_t at, at2;
		int e = image_id(pid, &at, id);

		if (tries)
			nanosleep(&ts, NULL);
		/* no image to read, but a thread exec'ing: the image is being
		 * replaced, as when the two readings below differ */
		int replacing = (e == -ENOENT || e == -ESRCH) && execing(pid);

		if (!replacing && (e == -EPERM || e == -EACCES || e == -ENOENT || e == -ESRCH)) {
			err = open_once(t, pid, msg, sizeof msg); /* says why, if it can */
			if (!err && e != -ENOENT && e != -ESRCH)
				return say_ptrace_error(pid, EPERM); /* its memory is not ours */
			if (!err) {
				snprintf(msg, sizeof msg, "no process %d", (int)pid);
				err = -ESRCH;
			}
			break;
		}
		if (!replacing && e < 0) { /* its stack is being replaced (an exec) */
			snprintf(msg, sizeof msg,
				 "process %d: cannot read its auxiliary vector (/proc/%d/auxv): %s",
				 (int)pid, (int)pid, strerror(-e));
			err = e;
			continue;
		}
		if (!replacing) {
			err = open_once(t, pid, msg, sizeof msg);
			replacing = image_id(pid, &at2, again) != 0 || at2 != at ||
				    again[0] != id[0] || again[1] != id[1];
		}
		if (replacing) {
			snprintf(msg, sizeof msg,
				 "process %d keeps replacing its program (exec): nothing was done to "
				 "it; attach again",
				 (int)pid);
			err = -ESTALE;
			continue;
		}
		if (err == -ENOEXEC && exe_is_dynamic(pid) == 1) {
			snprintf(msg, sizeof msg,
				 "process %d is starting (its dynamic loader has not loaded libc.so.6 "
				 "yet): attach again in a moment",
				 (int)pid);
			err = -EAGAIN;
			continue;
		}
		if (!err) {
			t->random_at = at;
			t->random[0] = id[0];
			t->random[1] = id[1];
		}
		break;
	}
	if (err < 0)
		hp_say_error("%s", msg);
	return err;
}

struct rec_scan {
	struct hp_inject_target *t;
	const char *name;
	uintptr_t lo;
	int found;
};

static int scan_recorder(const struct map *m, void *arg)
{
	struct rec_scan *s = arg;
	const char *b = strrchr(m->path, '/');

	if (!b || strcmp(b + 1, s->name) != 0)
		return 0;
	if (!s->found) {
		snprintf(s->t->recorder_path, sizeof s->t->recorder_path, "%s", m->path);
		s->lo = m->lo;
		s->found = 1;
	}
	if (m->perms[2] == 'x')
		add_unsafe(s->t, m->lo, m->hi);
	return 0;
}

int hp_inject_find_recorder(struct hp_inject_target *t, const char *name)
{
	struct rec_scan s = {.t = t, .name = name};
	uintptr_t vaddr = 0;
	int err = each_map(t->pid, scan_recorder, &s);

	if (err < 0)
		return err;
	if (!s.found)
		return 0;
	err = first_load_vaddr(t->recorder_path, &vaddr);
	if (err < 0)
		return err;
	t->recorder_bias = s.lo - vaddr;
	return 1;
}

/* --- threads ------------------------------------------------------------ */

static int is_unsafe(const struct hp_inject_target *t, uint64_t a)
{
	for (size_t i = 0; i < t->nunsafe; i++)
		if (a >= t->unsafe[i].lo && a < t->unsafe[i].hi)
			return 1;
	return 0;
}

struct stack_find {
	uintptr_t sp;
	struct map m;
	int found;
};

static int find_stack(const struct map *m, void *arg)
{
	struct stack_find *s = arg;

	if (s->sp >= m->lo && s->sp < m->hi) {
		s->m = *m;
		s->found = 1;
		return 1;
	}
	return 0;
}

/* Whether a word of the stack from sp up (up to its mapping's end hi, at
 * most SCAN_BYTES) lies in an unsafe range: the fallback for the part of a
 * call chain that cannot be unwound, where any word may be a return
 * address (a stale one only costs a retry). Returns 1 when one does, or
 * when the stack cannot be read. */
static int scan_words(const struct hp_inject_target *t, pid_t tid, uint64_t sp, uint64_t hi)
{
	static uint64_t words[SCAN_BYTES / 8];
	struct iovec local, remote;
	ssize_t got;
	size_t n;

	if (sp >= hi)
		return 0;
	n = hi - sp < SCAN_BYTES ? hi - sp : SCAN_BYTES;
	local = (struct iovec){words, n};
	remote = (struct iovec){(void *)(uintptr_t)sp, n};
	got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (got < 8)
		return 1;
	for (size_t i = 0; i < (size_t)got / 8; i++)
		if (is_unsafe(t, words[i]))
			return 1;
	return 0;
}

struct walk {
	const struct hp_inject_target *t;
	int unsafe;       /* a frame's pc lies in an unsafe range */
	size_t frames;
	uint64_t sp;      /* the stack pointer of the last frame unwound */
};

/* One frame of the call chain: its pc (for a caller, its return address
 * minus one: the call itself, even when it is a function's last
 * instruction) checked against the unsafe ranges. */
static int walk_frame(Dwfl_Frame *f, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool activation;

	if (!dwfl_frame_pc(f, &pc, &activation))
		return DWARF_CB_ABORT;
	if (is_unsafe(w->t, activation ? pc : pc - 1)) {
		w->unsafe = 1;
		return DWARF_CB_ABORT;
	}
	if (dwfl_frame_reg(f, 7 /* DWARF's rsp */, &sp) == 0 && sp > w->sp)
		w->sp = sp;
	return ++w->frames < MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether the stopped thread tid, with registers r, may be borrowed: room
 * on its stack, and no unsafe code at its pc or among the return
 * addresses of its call chain. The chain is unwound with each module's
 * CFI (its .eh_frame), and frame pointers where a module has none
 * (libdwfl); the stack's other words (a buffer never written, stale
 * return addresses of calls that ended) do not count. Where the chain
 * cannot be unwound to its end, every word above the last frame counts
 * as a return address. dwfl: attached to the process (NULL: no unwinder;
 * then every word above the stack pointer counts). */
static int safe_point(const struct hp_inject_target *t, Dwfl *dwfl, pid_t tid,
		      const struct user_regs_struct *r)
{
	struct stack_find sf = {.sp = r->rsp};
	struct walk w = {.t = t, .sp = r->rsp};
	int rc;

	if (is_unsafe(t, r->rip))
		return 0;
	if (each_map(t->pid, find_stack, &sf) <= 0 || !sf.found)
		return 0;
	if (r->rsp - sf.m.lo < CALL_STACK_ROOM && strcmp(sf.m.path, "[stack]") != 0)
		return 0;
	if (!dwfl)
		return !scan_words(t, tid, r->rsp, sf.m.hi);
	rc = dwfl_getthread_frames(dwfl, tid, walk_frame, &w);
	if (w.unsafe)
		return 0;
	if (rc == 0)
		return 1; /* unwound to the chain's outermost frame */
	return !scan_words(t, tid, w.sp, sf.m.hi);
}

/* No separate debug information: the CFI a safe point needs is in each
 * module's .eh_frame, and looking further (debuginfod) would take long. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

/* An unwinder for pid's threads (each stopped by us before it unwinds
 * one), or NULL when libdwfl cannot read its modules. */
static Dwfl *unwinder(pid_t pid)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = no_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	if (!dwfl)
		return NULL;
	if (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    dwfl_linux_proc_attach(dwfl, pid, true) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* Waits for a state change of the tracee tid (waitpid, __WALL) without
 * blocking on a thread that is gone: a thread killed by another thread's
 * exec, or an old leader released by it, may never be reported to us,
 * and its id may then be the new image's leader. Returns 0 with *st set,
 * -ESRCH when the thread or the image is gone, -errno on error. */
static int wait_tracee(const struct hp_inject_target *t, pid_t tid, int *st)
{
	for (;;) {
		struct timespec ts = {0, 1000000};
		char task[64];
		pid_t w = waitpid(tid, st, __WALL | WNOHANG);

		if (w == tid)
			return 0;
		if (w < 0 && errno != EINTR)
			return errno == ECHILD ? -ESRCH : -errno;
		snprintf(task, sizeof task, "/proc/%d/task/%d", (int)t->pid, (int)tid);
		if (access(task, F_OK) != 0 || hp_inject_same_image(t) != 1)
			return -ESRCH;
		nanosleep(&ts, NULL);
	}
}

/* Stops tid (already seized). Returns 0 with *pending set to a signal that
 * was on its way (to deliver when we let it go), -errno otherwise. */
static int stop_thread(const struct hp_inject_target *t, pid_t tid, int *pending)
{
	int st, err;

	*pending = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		err = wait_tracee(t, tid, &st);
		if (err < 0)
			return err;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP)
			return 0;
		/* A signal-delivery stop: keep the signal for later; the
		 * interrupt's own stop follows, or this one will do. */
		*pending = WSTOPSIG(st);
		return 0;
	}
}

/* Whether thread tid of pid is on its way out (PF_EXITING in the flags of
 * /proc/PID/task/TID/stat, the ninth field): the kernel refuses to trace
 * such a thread with EPERM before it is a zombie, as it does every thread
 * an exec is killing. */
static int exiting(pid_t pid, pid_t tid)
{
	char path[96], buf[1024], *p;
	unsigned long flags = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 1; /* gone */
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* past the command, which may hold spaces */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & 0x4) != 0; /* PF_EXITING */
}

/* Why thread tid of pid could not be seized (EPERM) when others may be:
 * 1 when it is exiting (a zombie: a thread that ended, or the leader of an
 * image an exec is replacing), to be passed over; otherwise 0, after
 * saying why: a debugger traces it, or the kernel refuses (another user,
 * kernel.yama.ptrace_scope). */
static int seize_refused(pid_t pid, pid_t tid)
{
	char path[96], line[256], state = 0;
	long tracer = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 1; /* gone */
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "State: %c", &state);
		sscanf(line, "TracerPid: %ld", &tracer);
	}
	fclose(f);
	if (state == 'Z' || state == 'X' || exiting(pid, tid))
		return 1;
	if (tracer > 0 && tracer != (long)getpid()) {
		char comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%ld/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		hp_say_error("process %d is being traced by process %ld (%s), a debugger: heapprof "
			     "attach cannot trace it at the same time",
			     (int)pid, tracer, comm);
		return 0;
	}
	say_ptrace_error(pid, EPERM);
	return 0;
}

static int list_threads(pid_t pid, pid_t *tids, size_t max, size_t *n)
{
	char name[64];
	struct dirent *d;
	DIR *dir;

	snprintf(name, sizeof name, "/proc/%d/task", (int)pid);
	dir = opendir(name);
	if (!dir)
		return -errno;
	*n = 0;
	/* The main thread first: the likeliest to be idle in a system call. */
	tids[(*n)++] = pid;
	while ((d = readdir(dir)) && *n < max) {
		pid_t tid = (pid_t)atoi(d->d_name);
		if (tid > 0 && tid != pid)
			tids[(*n)++] = tid;
	}
	closedir(dir);
	return 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static int say_ptrace_error(pid_t pid, int err)
{
	if (err == EPERM) {
		FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
		int scope = -1;
		if (f) {
			if (fscanf(f, "%d", &scope) != 1)
				scope = -1;
			fclose(f);
		}
		if (scope > 0)
			hp_say_error("process %d: ptrace is not permitted (kernel.yama.ptrace_scope "
				     "= %d: run heapprof as root, or with CAP_SYS_PTRACE)",
				     (int)pid, scope);
		else
			hp_say_error("process %d: ptrace is not permitted (another user's process, "
				     "or one already being traced)",
				     (int)pid);
	} else if (err == ESRCH) {
		hp_say_error("process %d is gone", (int)pid);
	} else {
		hp_say_error("process %d: ptrace: %s", (int)pid, strerror(err));
	}
	return -err;
}

/* The end of an attempt whose thread is gone: says why and returns
 * -ESTALE when the process runs another image (an exec, which killed the
 * thread: the new image is not touched), -ESRCH when the process is gone
 * or only the thread ended. An exec takes a moment to replace the image
 * after it kills the other threads: looked at for up to 200 ms. tid (0:
 * none) is let go, in case the exec made it the new image's thread. */
static int thread_gone(const struct hp_inject_target *t, pid_t tid, const char *when)
{
	unsigned long flags;
	char comm[64], state = 0;
	int status = -1;

	if (tid > 0)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	for (int i = 0; i < 200; i++) {
		struct timespec ts = {0, 1000000};
		if (proc_stat(t->pid, comm, sizeof comm, &state, &flags) < 0)
			break;
		/* a zombie leader with a thread still running: an exec by that
		 * thread, which is about to take over the pid */
		if ((state == 'Z' || state == 'X') && !execing(t->pid))
			break;
		if (hp_inject_same_image(t) == 0) {
			hp_say_error("process %d replaced its program (exec) %s: the new program "
				     "is left untouched",
				     (int)t->pid, when);
			return -ESTALE;
		}
		nanosleep(&ts, NULL);
	}
	if (state == 'Z')
		status = exit_status(t->pid);
	if (state && state != 'Z' && state != 'X')
		hp_say_error("process %d: the thread heapprof borrowed ended %s; attach again",
			     (int)t->pid, when);
	else if (status >= 0 && WIFSIGNALED(status))
		hp_say_error("process %d was killed by signal %d (%s) %s", (int)t->pid,
			     WTERMSIG(status), strsignal(WTERMSIG(status)), when);
	else
		hp_say_error("process %d ended %s", (int)t->pid, when);
	return -ESRCH;
}

/* A thread's seccomp mode (0 none, 1 strict, 2 filter) and number of
 * filters, from /proc/PID/task/TID/status; -1 when it cannot be read. */
static int seccomp_mode(pid_t pid, pid_t tid, int *filters)
{
	char path[96], line[256];
	int mode = -1;
	FILE *f;

	*filters = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "Seccomp: %d", &mode);
		sscanf(line, "Seccomp_filters: %d", filters);
	}
	fclose(f);
	return mode;
}

/* The most severe action of tid's filters (stopped, ours) for any call the
 * attach needs: 0 with *nr, *action, *depends set (*nr < 0: every call
 * allowed), or -errno when the filters cannot be read or run. */
static int filters_verdict(pid_t tid, int *nr, uint32_t *action, int *depends)
{
	static struct sock_filter prog[4096];

	*nr = -1;
	*action = SECCOMP_RET_ALLOW;
	*depends = 0;
	for (long idx = 0;; idx++) {
		long count = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, NULL);

		if (count < 0 && errno == ENOENT)
			return 0; /* no more filters */
		if (count < 0)
			return -errno;
		if (count > (long)(sizeof prog / sizeof *prog))
			return -E2BIG;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, prog) != count)
			return -EIO;
		for (size_t i = 0; hp_seccomp_needed[i].name; i++) {
			uint32_t act;
			int dep, err = hp_seccomp_worst(prog, (size_t)count, hp_seccomp_needed[i].nr,
							&act, &dep);
			if (err < 0)
				return err;
			if (hp_seccomp_more_severe(act, *action) &&
			    hp_seccomp_more_severe(act, SECCOMP_RET_LOG)) {
				*nr = hp_seccomp_needed[i].nr;
				*action = act;
				*depends = dep;
			}
		}
	}
}

/* "kills it on openat (SECCOMP_RET_KILL_PROCESS)", "denies openat
 * (SECCOMP_RET_ERRNO: Operation not permitted)". */
static void say_action(char *out, size_t cap, int nr, uint32_t action, int depends)
{
	const char *call = hp_seccomp_name(nr), *maybe = depends ? ", for some arguments" : "";
	uint32_t act = action & SECCOMP_RET_ACTION_FULL, data = action & SECCOMP_RET_DATA;

	if (act == SECCOMP_RET_KILL_PROCESS || act == SECCOMP_RET_KILL_THREAD)
		snprintf(out, cap, "kills it on %s (SECCOMP_RET_KILL_%s%s)", call,
			 act == SECCOMP_RET_KILL_PROCESS ? "PROCESS" : "THREAD", maybe);
	else if (act == SECCOMP_RET_TRAP)
		snprintf(out, cap, "sends it SIGSYS on %s (SECCOMP_RET_TRAP%s)", call, maybe);
	else if (act == SECCOMP_RET_ERRNO)
		snprintf(out, cap, "denies %s (SECCOMP_RET_ERRNO: %s%s)", call,
			 strerror((int)data), maybe);
	else if (act == SECCOMP_RET_TRACE)
		snprintf(out, cap, "hands %s to a tracer (SECCOMP_RET_TRACE%s)", call, maybe);
	else
		snprintf(out, cap, "hands %s to a supervisor (SECCOMP_RET_USER_NOTIF%s)", call,
			 maybe);
}

int hp_inject_read_string(const struct hp_inject_target *t, uint64_t at, char *buf, size_t cap)
{
	size_t got = 0;

	/* A page at a time: the string may end just before an unmapped one. */
	while (got + 1 < cap) {
		size_t room = cap - 1 - got, to_page = 4096 - (size_t)((at + got) & 4095);
		size_t n = room < to_page ? room : to_page;
		struct iovec local = {buf + got, n}, remote = {(void *)(uintptr_t)(at + got), n};
		ssize_t k = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);

		if (k <= 0)
			break;
		if (memchr(buf + got, '\0', (size_t)k)) {
			got += (size_t)k;
			break;
		}
		got += (size_t)k;
	}
	buf[got] = '\0';
	return got ? 0 : -EFAULT;
}

int hp_inject_check_seccomp(struct hp_inject_target *t, const char *doing)
{
	pid_t tids[1024];
	size_t n = 0;

	if (list_threads(t->pid, tids, sizeof tids / sizeof *tids, &n) < 0)
		return 0; /* gone: the attach says so */
	for (size_t i = 0; i < n; i++) {
		int filters, mode = seccomp_mode(t->pid, tids[i], &filters), pending = 0, nr = -1;
		int depends = 0, err;
		uint32_t action = SECCOMP_RET_ALLOW;
		char what[256];

		if (mode == 1) {
			hp_say_error("process %d runs in seccomp strict mode (thread %d): it may make "
				     "no system call but read, write, exit and sigreturn, and %s "
				     "would get it killed; refused, nothing was done to it",
				     (int)t->pid, (int)tids[i], doing);
			return -EPERM;
		}
		if (mode != 2)
			continue;
		if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0) {
			if (errno == ESRCH || (errno == EPERM && seize_refused(t->pid, tids[i])))
				continue; /* ended */
			return errno == EPERM ? -EPERM : say_ptrace_error(t->pid, errno);
		}
		err = stop_thread(t, tids[i], &pending);
		if (!err)
			err = filters_verdict(tids[i], &nr, &action, &depends);
		ptrace(PTRACE_DETACH, tids[i], 0, (void *)(uintptr_t)pending);
		if (err == -ESRCH)
			continue; /* the thread ended meanwhile */
		if (err == -EACCES || err == -EPERM) {
			hp_say_error("process %d has a seccomp filter (%d on thread %d) that heapprof "
				     "can read only with CAP_SYS_ADMIN (as root): unread, it could get "
				     "the program killed or denied when %s; refused, nothing was done "
				     "to it",
				     (int)t->pid, filters, (int)tids[i], doing);
			return -EPERM;
		}
		if (err < 0) {
			hp_say_error("process %d has a seccomp filter (%d on thread %d) that heapprof "
				     "cannot read (%s): it could get the program killed or denied when "
				     "%s; refused, nothing was done to it",
				     (int)t->pid, filters, (int)tids[i],
				     err == -EINVAL ? "the kernel lacks CONFIG_CHECKPOINT_RESTORE"
				     : err == -E2BIG ? "too many paths to follow"
						     : strerror(-err),
				     doing);
			return -EPERM;
		}
		if (nr >= 0) {
			say_action(what, sizeof what, nr, action, depends);
			hp_say_error("process %d: its seccomp filter %s, a call that %s needs; "
				     "refused, nothing was done to it",
				     (int)t->pid, what, doing);
			return -EPERM;
		}
	}
	return 0;
}

/* Finds a thread at a safe point and leaves it seized and stopped. */
static int borrow_thread(struct hp_inject_target *t, Dwfl *dwfl, unsigned timeout_ms, pid_t *out,
			 int *pending, struct user_regs_struct *regs)
{
	pid_t tids[1024];
	size_t n = 0;
	unsigned waited = 0;
	int any_seized = 0;

	for (;;) {
		int err = list_threads(t->pid, tids, sizeof tids / sizeof *tids, &n);
		if (err < 0)
			return say_ptrace_error(t->pid, ESRCH);
		if (hp_inject_same_image(t) != 1)
			return thread_gone(t, 0, "before heapprof's call");
		/* The thread of the last call first: what it left (dlerror's
		 * message) is per thread. */
		for (size_t i = 1; t->last_tid && i < n; i++)
			if (tids[i] == t->last_tid) {
				tids[i] = tids[0];
				tids[0] = t->last_tid;
			}
		for (size_t i = 0; i < n; i++) {
			if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0) {
				if (errno == ESRCH)
					continue; /* a thread that just ended */
				/* An exec from another thread makes that thread the
				 * leader, under the pid just refused: the image says. */
				if (errno == EPERM && hp_inject_same_image(t) != 1)
					return thread_gone(t, 0, "before heapprof's call");
				if (errno == EPERM && !seize_refused(t->pid, tids[i]))
					return -EPERM;
				if (errno != EPERM && !any_seized)
					return say_ptrace_error(t->pid, errno);
				continue;
			}
			any_seized = 1;
			if (stop_thread(t, tids[i], pending) < 0) {
				ptrace(PTRACE_DETACH, tids[i], 0, 0);
				continue;
			}
			if (ptrace(PTRACE_GETREGS, tids[i], 0, regs) == 0 &&
			    safe_point(t, dwfl, tids[i], regs)) {
				*out = tids[i];
				return 0;
			}
			ptrace(PTRACE_DETACH, tids[i], 0, (void *)(uintptr_t)*pending);
		}
		if (waited >= timeout_ms) {
			hp_say_error("process %d: no thread came to a safe point in %u ms (each was "
				     "inside the allocator, the dynamic loader or the recorder, or "
				     "short of stack)",
				     (int)t->pid, timeout_ms);
			return -EBUSY;
		}
		sleep_ms(2);
		waited += 2;
	}
}

static int call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3],
		const void *data, size_t len, uint64_t *ret, unsigned timeout_ms);

int hp_inject_call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3],
		   const void *data, size_t len, uint64_t *ret, unsigned timeout_ms)
{
	sigset_t all, old;
	int err;

	/* Killed in the middle of the call, we would leave the thread to
	 * return to address 0: the signals that can wait, wait. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	err = call(t, fn, args, data, len, ret, timeout_ms);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* Writes data[0..len) at addr of the stopped tracee tid, a word at a time
 * through ptrace, which reaches only our tracee: a write racing an exec
 * fails (ESRCH) where process_vm_writev would reach whatever process then
 * holds the id, the new image. The last word is padded with zeros (the
 * bytes after data are the call's own frame). */
static int poke(pid_t tid, uint64_t addr, const void *data, size_t len)
{
	for (size_t at = 0; at < len; at += 8) {
		uint64_t w = 0;
		memcpy(&w, (const char *)data + at, len - at < 8 ? len - at : 8);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)(addr + at), (void *)w) < 0)
			return -errno;
	}
	return 0;
}

/* Whether the stopped tracee tid runs t's image: its AT_RANDOM bytes are
 * those hp_inject_open read. Read through ptrace: only our tracee. Returns
 * 1 or 0, or -errno when they cannot be read (-ESRCH: an exec by another
 * thread killed it, or the process ended). */
static int tracee_runs(const struct hp_inject_target *t, pid_t tid)
{
	for (int i = 0; i < 2; i++) {
		long w;
		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, (void *)(t->random_at + 8 * (uintptr_t)i), 0);
		if (errno)
			return -errno;
		if ((uint64_t)w != t->random[i])
			return 0;
	}
	return 1;
}

static int call(struct hp_inject_target *t, uintptr_t fn, const uint64_t args[3],
		const void *data, size_t len, uint64_t *ret, unsigned timeout_ms)
{
	static uint8_t xstate[16384];
	struct user_regs_struct saved, r;
	struct iovec xs = {xstate, sizeof xstate};
	uint64_t zero = 0, base;
	pid_t tid = 0;
	int pending = 0, st, err = 0, have_xstate;
	Dwfl *dwfl = unwinder(t->pid);

	err = borrow_thread(t, dwfl, timeout_ms, &tid, &pending, &saved);
	if (dwfl)
		dwfl_end(dwfl);
	if (err < 0)
		return err;
	/* Stopped, the thread cannot exec, and an exec by another one kills
	 * it: from here on every ptrace request reaches this image or fails. */
	int runs = tracee_runs(t, tid);
	if (runs != 1) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)pending);
		/* Killed under us (-ESRCH), the image not yet replaced: an exec
		 * on its way, or the end; thread_gone watches which. */
		if (runs != -ESRCH && hp_inject_same_image(t) == 1) {
			hp_say_error("process %d: cannot read its stack through ptrace", (int)t->pid);
			return -EIO;
		}
		return thread_gone(t, tid, "before heapprof's call");
	}
	have_xstate = ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &xs) == 0;
	/* The call's frame: below the red zone, the data, 16-aligned, then
	 * the return address 0, so that the callee sees rsp + 8 aligned. */
	base = (saved.rsp - SKIP_BELOW_SP - len) & ~(uint64_t)15;
	r = saved;
	r.rsp = base - 8;
	err = poke(tid, base, data, len);
	if (!err)
		err = poke(tid, r.rsp, &zero, 8);
	if (err) {
		if (err == -ESRCH)
			return thread_gone(t, tid, "before heapprof's call");
		hp_say_error("process %d: cannot write to its stack: %s", (int)t->pid,
			     strerror(-err));
		goto out;
	}
	{
		uint64_t a[3];
		for (int i = 0; i < 3; i++)
			a[i] = args[i] >= HP_INJECT_DATA ? base + (args[i] - HP_INJECT_DATA)
							 : args[i];
		r.rdi = a[0];
		r.rsi = a[1];
		r.rdx = a[2];
	}
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1; /* no system call restart over our call */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 || ptrace(PTRACE_CONT, tid, 0, 0) < 0) {
		err = -errno;
		if (err == -ESRCH)
			return thread_gone(t, tid, "before heapprof's call");
		hp_say_error("process %d: ptrace: %s", (int)t->pid, strerror(-err));
		goto out;
	}
	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
		int sig;

		if (w == 0) {
			/* Still in the call. An exec by another thread ends
			 * this one, and a thread that was the leader may be
			 * released without a word to us: look. */
			struct timespec ts = {0, 1000000};
			if (hp_inject_same_image(t) != 1)
				return thread_gone(t, tid, "during heapprof's call");
			nanosleep(&ts, NULL);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			return thread_gone(t, tid, "during heapprof's call");
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		if (st >> 16 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && r.rip == 0)
			break; /* our return */
		/* The program's own signal, during the call: its handler runs
		 * now, as it would have. */
		ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)sig);
	}
	*ret = r.rax;
	t->last_tid = tid;
out:
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	if (have_xstate)
		ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xs);
	ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)pending);
	return err;
}
