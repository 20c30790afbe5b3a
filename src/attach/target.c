/*
 * target.c - the process an attach calls into (inject.h): its memory map,
 * its modules' symbols, the ranges no thread may be stopped in, the
 * identity of the image it runs and whether an exec is replacing it.
 */
#include "inject.h"
#include "inject_int.h"

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

/* Calls fn for each line of pid's map; stops when fn returns non-zero and
 * returns that. -errno when the map cannot be read. */
int hp_inject_each_map(pid_t pid, int (*fn)(const struct hp_inject_map *, void *), void *arg)
{
	char name[64], line[4096 + 128];
	struct hp_inject_map m;
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
		       int (*fn)(const char *name, const GElf_Sym *s, int hidden, void *),
		       void *arg)
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
	"malloc",
	"free",
	"calloc",
	"realloc",
	"reallocarray",
	"posix_memalign",
	"aligned_alloc",
	"memalign",
	"valloc",
	"pvalloc",
	"malloc_trim",
	"malloc_stats",
	"malloc_info",
	"mallinfo",
	"mallinfo2",
	"malloc_usable_size",
	"mallopt",
	"fork",
	"_Fork",
	"vfork",
	"pthread_create",
	"pthread_exit",
	"dlopen",
	"dlmopen",
	"dlclose",
	"dlsym",
	"dlvsym",
	"dladdr",
	"dladdr1",
	"dlinfo",
	"dl_iterate_phdr",
	"exit",
	"__libc_dlopen_mode",
	"__libc_dlsym",
	"__libc_dlclose",
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

static int scan_open(const struct hp_inject_map *m, void *arg)
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
int hp_inject_proc_stat(pid_t pid, char *comm, size_t cap, char *state, unsigned long *flags)
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
int hp_inject_exit_status(pid_t pid)
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
	if (hp_inject_proc_stat(pid, comm, sizeof comm, &state, &flags) == 0) {
		if (flags & PF_KTHREAD_FLAG) {
			snprintf(
				msg, cap,
				"process %d (%s) is a kernel thread: it runs no program to attach to",
				(int)pid, comm);
			return -EPERM;
		}
		if (state == 'Z' || state == 'X') {
			snprintf(
				msg, cap,
				"process %d (%s) has exited (a zombie its parent has not waited for "
				"yet): there is nothing to attach to",
				(int)pid, comm);
			return -ESRCH;
		}
	}
	err = hp_inject_each_map(pid, scan_open, &s);
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
int hp_inject_execing(pid_t pid)
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
		int replacing = (e == -ENOENT || e == -ESRCH) && hp_inject_execing(pid);

		if (!replacing && (e == -EPERM || e == -EACCES || e == -ENOENT || e == -ESRCH)) {
			err = open_once(t, pid, msg, sizeof msg); /* says why, if it can */
			if (!err && e != -ENOENT && e != -ESRCH)
				return hp_inject_say_ptrace_error(
					pid, EPERM); /* its memory is not ours */
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
			snprintf(
				msg, sizeof msg,
				"process %d keeps replacing its program (exec): nothing was done to "
				"it; attach again",
				(int)pid);
			err = -ESTALE;
			continue;
		}
		if (err == -ENOEXEC && exe_is_dynamic(pid) == 1) {
			snprintf(
				msg, sizeof msg,
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

static int scan_recorder(const struct hp_inject_map *m, void *arg)
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
	int err = hp_inject_each_map(t->pid, scan_recorder, &s);

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
