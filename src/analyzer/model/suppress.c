/*
 * suppress.c - leak suppressions in LeakSanitizer's format (see model.h).
 *
 * A suppressed stack stays in every figure and every output; only the
 * report's leak section, its in-use line and the CI gate on leaks leave it
 * out, and say how many blocks they left out. The built-in list names
 * allocations the C and C++ runtimes make once and never free (they are
 * reachable to the end, freed by no one): a report of a correct program
 * shows no leak.
 */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/vec.h"
#include "../../common/infile.h"

/* Each entry: one allocation the runtime keeps to the end, by a function
 * on its stack (glibc 2.3x, libstdc++ of GCC 10 to 14). */
static const char *const builtin[] = {
	/* libstdc++: the emergency pool for exceptions thrown out of memory
	 * (eh_alloc.cc), allocated by a constructor at load time */
	"leak:(anonymous namespace)::pool::pool",
	"leak:__gnu_cxx::__freeres",
	/* stdio: the buffers of stdin, stdout and stderr (and of every FILE),
	 * allocated on first use */
	"leak:_IO_file_doallocate",
	/* the dynamic loader: thread-local storage (the DTV and static TLS
	 * blocks), link maps and search paths of libraries loaded with dlopen */
	"leak:_dl_allocate_tls",
	"leak:_dl_allocate_tls_init",
	"leak:allocate_dtv",
	"leak:_dl_new_object",
	"leak:_dl_map_object",
	"leak:_dl_init_paths",
	"leak:_dl_important_hwcaps",
	"leak:_dlerror_run",
	/* locales, time zones, name service: loaded once, cached */
	"leak:_nl_",
	"leak:setlocale",
	"leak:tzset_internal",
	"leak:__tzfile_read",
	"leak:__nss_",
	/* atexit and thread_local destructor lists */
	"leak:__new_exitfn",
	"leak:__cxa_thread_atexit_impl",
};

static int add(struct hp_suppressions *s, const char *pattern, size_t len)
{
	char *p;

	if (hp_vec_grow(&s->patterns, &s->cap, s->n + 1))
		return -ENOMEM;
	p = malloc(len + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, pattern, len);
	p[len] = '\0';
	s->patterns[s->n++] = p;
	return 0;
}

int hp_suppressions_add_builtin(struct hp_suppressions *s)
{
	s->builtin = 1;
	for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++) {
		int ret = add(s, builtin[i] + 5, strlen(builtin[i] + 5));
		if (ret)
			return ret;
	}
	return 0;
}

int hp_suppressions_load(struct hp_suppressions *s, const char *path, char *err, size_t errlen)
{
	const char *why;
	int fd = hp_infile_open(path, &why); /* never waits on a FIFO */
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char line[4096];
	unsigned lineno = 0;
	int ret = 0;

	if (!f) {
		ret = fd < 0 ? fd : -errno;
		snprintf(err, errlen, "%s: %s", path, why ? why : strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (!ret && fgets(line, sizeof line, f)) {
		char *b = line, *e;
		lineno++;
		while (*b == ' ' || *b == '\t')
			b++;
		e = b + strlen(b);
		while (e > b && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = '\0';
		if (!*b || *b == '#')
			continue;
		if (strncmp(b, "leak:", 5) != 0 || !b[5]) {
			snprintf(err, errlen,
				 "%s:%u: wants 'leak:PATTERN' (LeakSanitizer's format), not '%.80s'",
				 path, lineno, b);
			ret = -EINVAL;
			break;
		}
		ret = add(s, b + 5, strlen(b + 5));
		if (ret)
			snprintf(err, errlen, "out of memory");
	}
	if (!ret && ferror(f)) {
		snprintf(err, errlen, "%s: cannot read it", path);
		ret = -EIO;
	}
	fclose(f);
	return ret;
}

void hp_suppressions_free(struct hp_suppressions *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->patterns[i]);
	free(s->patterns);
	memset(s, 0, sizeof *s);
}

/* Whether pat[0..plen), '*' as any run, matches text at its start; when
 * to_end, up to its end. */
static int match_here(const char *pat, size_t plen, const char *text, int to_end)
{
	while (plen && *pat != '*') {
		if (!*text || *pat != *text)
			return 0;
		pat++, plen--, text++;
	}
	if (!plen)
		return !to_end || !*text;
	/* '*': try every split */
	for (;; text++) {
		if (match_here(pat + 1, plen - 1, text, to_end))
			return 1;
		if (!*text)
			return 0;
	}
}

int hp_suppression_match(const char *pattern, const char *text)
{
	size_t plen = strlen(pattern);
	int start = plen && pattern[0] == '^', end;

	if (start)
		pattern++, plen--;
	end = plen && pattern[plen - 1] == '$';
	if (end)
		plen--;
	if (start)
		return match_here(pattern, plen, text, end);
	for (const char *t = text;; t++) {
		if (match_here(pattern, plen, t, end))
			return 1;
		if (!*t)
			return 0;
	}
}

/* What a location's frames say, found once per location (a location is
 * shared by every stack through it: a million stacks have far fewer). */
enum {
	LOC_KNOWN = 1,      /* the bits below are set */
	LOC_OWN = 2,        /* a frame of the program's own code */
	LOC_DL_INIT = 4,    /* _dl_init */
	LOC_MATCH = 8,      /* a suppression pattern matches its function, file or module */
};

static uint8_t location_bits(const struct hp_model *m, const struct hp_suppressions *s,
			     uint32_t id, uint8_t *cache)
{
	const struct hp_location *l = &m->locations[id];
	const char *mod = l->module >= 0 ? m->modules[l->module].cap->path : NULL;
	uint8_t bits = LOC_KNOWN;

	if (cache[id])
		return cache[id];
	/* A system library's constructor is the system's, not the program's,
	 * even when the report reads the library's frames as code of the
	 * program's own (hp_model_frame_class: only the runtime's libraries
	 * fold). */
	int system = mod && (strncmp(mod, "/lib/", 5) == 0 || strncmp(mod, "/lib64/", 7) == 0 ||
			     strncmp(mod, "/usr/lib/", 9) == 0 || strncmp(mod, "/usr/lib64/", 11) == 0);
	for (uint32_t k = 0; k < l->nsyms; k++) {
		if (!system && hp_model_frame_class(m, l, &l->syms[k]) == HP_FRAME_OWN)
			bits |= LOC_OWN;
		if (strcmp(l->syms[k].function, "_dl_init") == 0)
			bits |= LOC_DL_INIT;
	}
	for (size_t p = 0; p < s->n && !(bits & LOC_MATCH); p++) {
		if (mod && hp_suppression_match(s->patterns[p], mod))
			bits |= LOC_MATCH;
		for (uint32_t k = 0; k < l->nsyms && !(bits & LOC_MATCH); k++)
			if (hp_suppression_match(s->patterns[p], l->syms[k].function) ||
			    (l->syms[k].file[0] &&
			     hp_suppression_match(s->patterns[p], l->syms[k].file)))
				bits |= LOC_MATCH;
	}
	return cache[id] = bits;
}

static int unnamed(const char *fn)
{
	return fn[0] == '?' || fn[0] == '[' || (fn[0] == '0' && fn[1] == 'x');
}

/* Whether st is libstdc++'s emergency exception pool linked into a
 * program without symbols (Debian's cc1 and cc1plus link libstdc++
 * statically), known by what it is: one block of the pool's size
 * (eh_alloc.cc: 72,704 bytes on x86-64 from GCC 5 to 12, 73,728 from GCC
 * 13 on, unless GLIBCXX_TUNABLES resizes it), allocated by a function
 * without a name called straight from the C library's start-up, which
 * calls the executable's constructors (call_init, inlined in
 * __libc_start_main; __libc_csu_init before glibc 2.34) or a library's
 * (_dl_init). Exact figures only: a sampled stack's are estimates. */
static int eh_pool(const struct hp_model *m, const struct hp_mstack *st)
{
	const struct hp_location *alloc, *caller;

	if (st->depth < 2 || st->v.alloc_objects != 1 ||
	    (st->v.alloc_bytes != 72704 && st->v.alloc_bytes != 73728))
		return 0;
	alloc = &m->locations[hp_mstack_location(st, 0)];
	caller = &m->locations[hp_mstack_location(st, 1)];
	for (uint32_t k = 0; k < alloc->nsyms; k++)
		if (!unnamed(alloc->syms[k].function))
			return 0;
	for (uint32_t k = 0; k < caller->nsyms; k++) {
		const char *fn = caller->syms[k].function;
		if (strcmp(fn, "call_init") == 0 || strcmp(fn, "__libc_csu_init") == 0 ||
		    strcmp(fn, "_dl_init") == 0 || strcmp(fn, "__libc_start_main") == 0 ||
		    strcmp(fn, "__libc_start_main_impl") == 0)
			return 1;
	}
	return 0;
}

/* Whether st is suppressed: a pattern matches one of its frames, or (with
 * the built-in list) it is a system library's constructor's: under
 * _dl_init with no frame of the program's own (libstdc++'s emergency pool
 * reads this way when libstdc++ has no symbols), or libstdc++'s pool
 * linked into a program without symbols (eh_pool). */
static int stack_suppressed(const struct hp_model *m, const struct hp_mstack *st,
			    const struct hp_suppressions *s, uint8_t *cache)
{
	uint8_t any = 0;

	for (uint32_t i = 0; i < st->depth; i++) {
		uint8_t bits = location_bits(m, s, hp_mstack_location(st, i), cache);
		if (bits & LOC_MATCH)
			return 1;
		any |= bits;
	}
	return s->builtin && (((any & LOC_DL_INIT) && !(any & LOC_OWN)) || eh_pool(m, st));
}

int hp_model_suppress(struct hp_model *m, const struct hp_suppressions *s)
{
	uint8_t *cache = calloc(m->nlocations ? m->nlocations : 1, 1);
	uint8_t all = 0;
	int walk;

	if (!cache)
		return -ENOMEM;
	/* Every location's bits first: when no location matches a pattern
	 * or (with the built-in list) is _dl_init's, only eh_pool can
	 * suppress a stack, and it reads two frames, not the stack's every
	 * location (a million stacks of 23: 23 million reads). */
	for (size_t l = 0; l < m->nlocations; l++)
		all |= location_bits(m, s, (uint32_t)l, cache);
	walk = (all & LOC_MATCH) || (s->builtin && (all & LOC_DL_INIT));
	memset(&m->suppressed, 0, sizeof m->suppressed);
	for (size_t id = 0; id < m->nstacks; id++) {
		struct hp_mstack *st = &m->stacks[id];
		st->suppressed = st->nbuckets && (walk ? stack_suppressed(m, st, s, cache)
						       : s->builtin && eh_pool(m, st));
		if (st->suppressed)
			hp_values_add(&m->suppressed, &st->v);
	}
	free(cache);
	return 0;
}
