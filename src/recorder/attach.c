/*
 * attach.c - heapprof_attach and heapprof_detach (see attach.h).
 */
#include "attach.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <stdint.h>

#include "../format/format.h"
#include "config.h"
#include "got.h"
#include "interpose_inline.h"
#include "log.h"
#include "os.h"
#include "recorder.h"

/* 0: never attached; 1: heapprof_attach running; 2: attached; 3: detached.
 * Written by heapprof_attach and heapprof_detach only, which `heapprof`
 * calls one at a time. */
static int phase;

static struct hp_got_log log_;

static void *(*next_dlopen)(const char *, int);

/* What the program's imports are pointed at: the names the recorder
 * defines (interpose.c, interpose_cxx.c, interpose_exit.c), looked up in
 * the library itself, and dlopen, which patches what it loads. */
static const char *const names[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "dlclose", "_exit", "_Exit",
	"execve", "execv", "execvp", "execvpe", "fexecve", "execveat", "execl", "execlp", "execle",
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
	"_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
	"_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
	"_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvSt11align_val_t",
	"_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
	"_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
	/* Last, patched only with HEAPPROF_MMAP=1 (see drop_mmap). */
	"mmap", "mmap64", "munmap", "mremap", "brk", "sbrk",
};
#define NMMAP_NAMES 6

/* The allocators' own names for the standard functions, which a program
 * may call directly (tcmalloc's tc_*, jemalloc's je_* in a prefixed
 * build, mimalloc's mi_*): an import of one is routed to the recorder's
 * standard function when it is bound to the very function that standard
 * name reaches (tcmalloc's malloc is an alias of tc_malloc); otherwise
 * it is left alone. */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{"tc_malloc", "malloc"}, {"tc_free", "free"}, {"tc_calloc", "calloc"},
	{"tc_realloc", "realloc"}, {"tc_memalign", "memalign"},
	{"tc_posix_memalign", "posix_memalign"}, {"tc_valloc", "valloc"},
	{"tc_pvalloc", "pvalloc"}, {"tc_new", "_Znwm"}, {"tc_newarray", "_Znam"},
	{"tc_new_nothrow", "_ZnwmRKSt9nothrow_t"}, {"tc_newarray_nothrow", "_ZnamRKSt9nothrow_t"},
	{"tc_delete", "_ZdlPv"}, {"tc_deletearray", "_ZdaPv"},
	{"tc_delete_nothrow", "_ZdlPvRKSt9nothrow_t"},
	{"tc_deletearray_nothrow", "_ZdaPvRKSt9nothrow_t"}, {"tc_delete_sized", "_ZdlPvm"},
	{"tc_deletearray_sized", "_ZdaPvm"}, {"je_malloc", "malloc"}, {"je_free", "free"},
	{"je_calloc", "calloc"}, {"je_realloc", "realloc"}, {"je_memalign", "memalign"},
	{"je_posix_memalign", "posix_memalign"}, {"je_aligned_alloc", "aligned_alloc"},
	{"je_valloc", "valloc"}, {"mi_malloc", "malloc"}, {"mi_free", "free"},
	{"mi_calloc", "calloc"}, {"mi_realloc", "realloc"}, {"mi_reallocarray", "reallocarray"},
	{"mi_posix_memalign", "posix_memalign"}, {"mi_aligned_alloc", "aligned_alloc"},
	{"mi_memalign", "memalign"}, {"mi_valloc", "valloc"}, {"mi_pvalloc", "pvalloc"},
};
#define NNAMES (sizeof names / sizeof *names)
#define NALIASES (sizeof aliases / sizeof *aliases)
#define NPATCHES (NNAMES + NALIASES + 1)

/* patches[0 .. npatches): names[], then the aliases, then dlopen; written
 * by find_own and drop_mmap in the first heapprof_attach, read-only after. */
static struct hp_got_route patches[NPATCHES];
static size_t npatches;
/* GOT entries left alone by the last patch_all: bound to another function
 * than the one the recorder forwards to (another allocator, a library
 * with a malloc of its own). For a debugger: nothing reads it. */
static size_t skipped_entries;

/* 1 from the first heapprof_attach on: the library was loaded by dlopen
 * (not preloaded), and the program's calls reach it only through the GOT
 * entries it rewrites. Written once, before anything reads it. */
static int loaded_by_attach;

struct order {
	int index, self, libc;
};

static int find_order(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct order *o = arg;
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	(void)size;

	base = base ? base + 1 : name;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, me = (uintptr_t)hp_attach_preloaded;
		if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz && o->self < 0)
			o->self = o->index;
	}
	if (base && strcmp(base, "libc.so.6") == 0 && o->libc < 0)
		o->libc = o->index;
	o->index++;
	return 0;
}

int hp_attach_preloaded(void)
{
	/* The loader lists the objects it loaded at start in their lookup
	 * order, the preloaded ones before libc, and appends those dlopen
	 * loads later. */
	struct order o = {0, -1, -1};

	hp_os_dl_iterate(find_order, &o);
	return o.self >= 0 && (o.libc < 0 || o.self < o.libc);
}

int hp_attach_starting(void)
{
	return __atomic_load_n(&phase, __ATOMIC_RELAXED) == 1;
}

/* Whether address a lies in this library. */
static int own(const void *a)
{
	const char *at = a ? hp_os_object_of(a) : NULL;
	const char *me = hp_os_object_of((const void *)own);

	return at && me && strcmp(at, me) == 0;
}

void *hp_attach_next(const char *name)
{
	void *fn;

	if (!__atomic_load_n(&loaded_by_attach, __ATOMIC_ACQUIRE))
		return hp_os_dlsym_next(name);
	/* Loaded with RTLD_LOCAL, the recorder is in no scope but its own,
	 * after the global one: the default lookup finds the definition the
	 * program's objects are bound to, the program's allocator. It never
	 * finds the recorder's own, unless the program has none at all. */
	fn = hp_os_dlsym_default(name);
	return own(fn) ? NULL : fn;
}

static int patch_all(void)
{
	int r = hp_got_patch_all((uintptr_t)hp_attach_preloaded, patches, npatches, &log_,
				 &skipped_entries);

	if (r == -ENOMEM)
		hp_log("attach: no memory for the GOT log; some calls are not recorded");
	return r;
}

/* dlopen, for the program: what it loads calls the allocator through its
 * own GOT, which is patched before the call returns. */
static void *attach_dlopen(const char *file, int flags)
{
	void *h = next_dlopen(file, flags);

	if (h && __atomic_load_n(&phase, __ATOMIC_ACQUIRE) == 2) {
		hp_self.forwarding++;
		patch_all();
		hp_self.forwarding--;
	}
	return h;
}

/* The program's allocator library: the object that defines the malloc the
 * program calls, when it is not libc (jemalloc, tcmalloc, mimalloc); NULL
 * for glibc's. */
static const char *allocator_library(void)
{
	void *m = hp_attach_next("malloc");
	const char *path = m ? hp_os_object_of(m) : NULL, *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && strcmp(base, "libc.so.6") != 0 ? path : NULL;
}

/* Whether fn is defined by the allocator library lib, whose calls to its
 * own functions through its GOT (tcmalloc's valloc calls its memalign so)
 * are part of the call the program made, recorded once already: routing
 * them would record one allocation twice. glibc's allocator makes no such
 * calls (it calls its internal names), and the calls of libc's other
 * functions (strdup, fopen) and of libstdc++ (std::string's operator new)
 * are the program's: their entries are routed. */
static int in_allocator(const char *lib, const void *fn)
{
	const char *path = lib ? hp_os_object_of(fn) : NULL;

	return path && strcmp(path, lib) == 0;
}

/* patches[]: for each name the recorder defines, its own definition
 * (looked up in the library itself: taking its address in C would reach
 * the program's, the first definition in the lookup order), and the
 * function it forwards to (hp_attach_next: the program's), which the
 * GOT entries it rewrites must be bound to; a name nothing in the program
 * defines is not patched. Then the allocators' aliases, and dlopen. */
static int find_own(void)
{
	const char *lib = allocator_library();
	Dl_info self;
	void *h;

	if (npatches)
		return 0;
	if (!dladdr((void *)find_own, &self) || !self.dli_fname)
		return -ENOENT;
	h = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return -ENOENT;
	for (size_t i = 0; i < NNAMES; i++) {
		void *fn = dlsym(h, names[i]), *next = hp_attach_next(names[i]);
		if (fn && next)
			patches[npatches++] =
				(struct hp_got_route){names[i], fn, next, next,
						      in_allocator(lib, next)};
	}
	for (size_t i = 0; i < NALIASES; i++) {
		void *fn = dlsym(h, aliases[i].name), *next = hp_attach_next(aliases[i].name);
		void *def = hp_os_dlsym_default(aliases[i].alias);
		if (fn && next && def && !own(def))
			patches[npatches++] = (struct hp_got_route){
				aliases[i].alias, fn, next, def, in_allocator(lib, next)};
	}
	dlclose(h);
	next_dlopen = (void *(*)(const char *, int))hp_attach_next("dlopen");
	if (next_dlopen)
		patches[npatches++] = (struct hp_got_route){"dlopen", (void *)attach_dlopen,
							    (void *)next_dlopen,
							    (void *)next_dlopen, 0};
	return npatches ? 0 : -ENOENT;
}

/* Without the mmap heap, the program's mmap family is left alone: its
 * names (the last of names[]) come out of patches[]. */
static void drop_mmap(void)
{
	size_t kept = 0;

	if (hp_interpose_mmap_on())
		return;
	for (size_t i = 0; i < npatches; i++) {
		int is_mmap = 0;
		for (size_t k = NNAMES - NMMAP_NAMES; k < NNAMES; k++)
			is_mmap |= strcmp(patches[i].name, names[k]) == 0;
		if (!is_mmap)
			patches[kept++] = patches[i];
	}
	npatches = kept;
}

/* Starts recording the process that loaded us, with the options in block
 * (HEAPPROF_* variables: config.h). Returns 0, -EBUSY when it is being
 * recorded by an attach already, -EEXIST when the recorder was preloaded
 * (it records from the start, until the exit), -EINVAL when a later attach
 * asks for another sampling rate, unwinder or depth than the first,
 * -EIO when the recorder could not start (the capture cannot be
 * written). Called by `heapprof attach` on a thread it stopped outside the
 * allocator and the loader; takes the loader's lock and every recorder
 * lock in turn; allocates through libc (dlopen, dlsym). */
__attribute__((visibility("default"))) int heapprof_attach(const char *block)
{
	int err = 0;

	if (phase == 2)
		return -EBUSY;
	hp_self.forwarding++;
	if (hp_attach_preloaded()) {
		hp_self.forwarding--;
		return -EEXIST;
	}
	if (hp_state == HP_STATE_ACTIVE) {
		hp_self.forwarding--;
		return -EBUSY;
	}
	if (phase == 3) { /* attached before: the same tables, emptied */
		hp_config_set_source(block);
		err = hp_recorder_restart();
		hp_config_set_source(NULL);
		if (!err) {
			__atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
			patch_all();
		}
		hp_self.forwarding--;
		return err;
	}
	__atomic_store_n(&loaded_by_attach, 1, __ATOMIC_RELEASE);
	err = find_own();
	if (!err) {
		hp_config_set_source(block);
		__atomic_store_n(&phase, 1, __ATOMIC_RELAXED);
		hp_interpose_init();
		hp_config_set_source(NULL);
		if (hp_state != HP_STATE_ACTIVE)
			err = -EIO;
	}
	if (!err) {
		__atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
		drop_mmap();
		patch_all();
	} else {
		__atomic_store_n(&phase, 0, __ATOMIC_RELAXED);
	}
	hp_self.forwarding--;
	return err;
}

/* Ends the recording heapprof_attach started: the program's calls go back
 * to the allocator, then the last snapshot (HP_SNAP_DETACH) is written and
 * the capture closed. Returns 0, -ENODEV when not attached, -EEXIST when
 * the recorder was preloaded (not attached: it records until the exit). Same
 * caller and properties as heapprof_attach. */
__attribute__((visibility("default"))) int heapprof_detach(void)
{
	if (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != 2) {
		int preloaded;
		hp_self.forwarding++;
		preloaded = hp_attach_preloaded();
		hp_self.forwarding--;
		return preloaded ? -EEXIST : -ENODEV;
	}
	hp_self.forwarding++;
	hp_got_restore(&log_);
	__atomic_store_n(&phase, 3, __ATOMIC_RELEASE);
	hp_recorder_stop(HP_SNAP_DETACH);
	hp_self.forwarding--;
	return 0;
}
