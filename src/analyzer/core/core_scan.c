/*
 * core_scan.c - what each allocated block of a core is (its dynamic C++
 * type) and whether the program could still reach it.
 *
 * Type: a polymorphic object's first word is its vtable pointer, which
 * points 16 bytes or more into a _ZTV symbol of a mapped module; the
 * symbol, demangled, names the class ("vtable for Circle" -> Circle).
 *
 * Reachability, as memcheck and LeakSanitizer compute it, conservatively:
 * the roots are every thread's registers, every thread's stack from its
 * rsp (less the 128-byte red zone) to the end of its segment, and every
 * other writable segment of the core (the modules' data and bss, the
 * threads' TLS, the program's own mappings) except malloc's memory (its
 * heaps, its mmapped chunks, main_arena and mp_). Any 8-aligned word whose
 * value falls in an allocated block's usable bytes (interior pointers
 * included) makes that block reachable, and then the words of that block
 * are scanned in turn. A block not reached is "definitely lost" when no
 * other unreached block points to it, else "indirectly lost" (reached only
 * from lost blocks); a cycle of blocks nothing else points to counts its
 * lowest block as definitely lost and the rest as indirectly lost.
 *
 * Under heapprof, the recorder's live register holds every live block's
 * address: its shards and tables (c->rec.tables) are not roots, and each
 * recorded block takes the reachability of the heap's block at its
 * address (join), so that a site's figures say how much of what it holds
 * is lost. The recorder keeps one more pointer, each thread's last
 * allocated block in its thread-local state (hp_self.last_alloc, not in
 * heapprof_root): a stale pointer that keeps that one block reachable, as
 * a stale register does.
 *
 * Memory: a mark byte and a work-list entry per block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "../symbols/demangle.h"

enum root_kind { ROOT_STACK, ROOT_DATA };

/* The stack segment of thread t, or NULL. */
static const struct hp_core_seg *stack_of(const struct hp_core *c, size_t t)
{
	return hp_core_seg_at(c, c->threads[t].regs[HP_CORE_REG_RSP]);
}

/* The thread whose stack segment s is, or -1. */
static long stack_owner(const struct hp_core *c, const struct hp_core_seg *s)
{
	for (size_t t = 0; t < c->nthreads; t++)
		if (stack_of(c, t) == s)
			return (long)t;
	return -1;
}

/* The end of the chunk of block b (its next chunk's start). */
static uint64_t chunk_end(const struct hp_core_block *b)
{
	if (b->mmapped || b->state == HP_CORE_TOP)
		return b->addr + b->size;
	return b->addr + b->size - 8;
}

/* Whether x is in the recorder's live register (c->rec.tables, sorted);
 * *skip_to is where that table ends. */
static int in_register(const struct hp_core *c, uint64_t x, uint64_t *skip_to)
{
	size_t lo = 0, hi = c->rec.ntables;

	/* the first table starting after x; the one before may hold it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->rec.tables[mid].lo <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && x < c->rec.tables[lo - 1].hi) {
		*skip_to = c->rec.tables[lo - 1].hi;
		return 1;
	}
	return 0;
}

/* Whether x is in malloc's own memory (a chunk or an internal range) or
 * the recorder's live register; *skip_to is where that memory ends. */
static int in_malloc(const struct hp_core *c, uint64_t x, uint64_t *skip_to)
{
	size_t lo = 0, hi = c->nblocks;

	if (in_register(c, x, skip_to))
		return 1;
	for (size_t i = 0; i < c->ninternal; i++)
		if (x >= c->internal[i].lo && x < c->internal[i].hi) {
			*skip_to = c->internal[i].hi;
			return 1;
		}
	/* the first block whose chunk ends after x */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (chunk_end(&c->blocks[mid]) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nblocks && x >= c->blocks[lo].addr - 16) {
		*skip_to = chunk_end(&c->blocks[lo]);
		return 1;
	}
	return 0;
}

/* Calls fn on each root range: [lo, hi) of the core's memory. */
typedef void (*range_fn)(void *arg, uint64_t lo, uint64_t hi, enum root_kind kind, long thread);

static void each_root(const struct hp_core *c, range_fn fn, void *arg)
{
	for (size_t s = 0; s < c->nsegs; s++) {
		const struct hp_core_seg *seg = &c->segs[s];
		uint64_t lo = seg->vaddr, end = seg->vaddr + seg->memsz;
		long owner = stack_owner(c, seg);
		if (!(seg->flags & 2))
			continue;
		if (owner >= 0) {
			uint64_t sp = c->threads[owner].regs[HP_CORE_REG_RSP];
			lo = sp - 128 > lo && sp >= 128 ? sp - 128 : lo;
			fn(arg, lo, end, ROOT_STACK, owner);
			continue;
		}
		/* Words past the bytes dumped are not in the core: no root
		 * there, and a segment's size (a damaged header's 2^40 say)
		 * must not set how long this walk takes. */
		if (end - seg->vaddr > seg->present)
			end = seg->vaddr + seg->present;
		while (lo < end) {
			uint64_t x = lo, skip = 0;
			while (x < end && !in_malloc(c, x, &skip))
				x += 8;
			if (x > lo)
				fn(arg, lo, x, ROOT_DATA, -1);
			if (x >= end)
				break;
			lo = skip > x ? (skip + 7) & ~7ULL : x + 8;
		}
	}
}

struct mark {
	const struct hp_core *c;
	uint8_t *seen;
	uint32_t *work;
	size_t nwork;
	long self; /* a block not to count (its own words) */
};

static void visit_word(struct mark *m, uint64_t v)
{
	long i;

	if (v < 4096)
		return;
	i = hp_core_block_at(m->c, v);
	if (i < 0 || i == m->self || m->seen[i] || m->c->blocks[i].state != HP_CORE_ALLOCATED)
		return;
	m->seen[i] = 1;
	m->work[m->nwork++] = (uint32_t)i;
}

static void scan_range(struct mark *m, uint64_t lo, uint64_t hi)
{
	lo = (lo + 7) & ~7ULL;
	while (lo + 8 <= hi) {
		const struct hp_core_seg *s = hp_core_seg_at(m->c, lo);
		uint64_t end, seg_end;
		if (!s)
			return; /* ranges lie in one segment: a gap is their end */
		seg_end = s->vaddr + s->memsz;
		end = s->vaddr + s->present; /* past it: not dumped, or truncated */
		if (end > hi)
			end = hi;
		if (lo + 8 <= end) {
			const unsigned char *p = hp_core_mem(m->c, lo, end - lo);
			for (uint64_t off = 0; p && off + 8 <= end - lo; off += 8) {
				uint64_t v;
				memcpy(&v, p + off, 8);
				visit_word(m, v);
			}
		}
		lo = seg_end;
	}
}

static void root_range(void *arg, uint64_t lo, uint64_t hi, enum root_kind kind, long thread)
{
	(void)kind;
	(void)thread;
	scan_range(arg, lo, hi);
}

static void drain(struct mark *m)
{
	while (m->nwork) {
		const struct hp_core_block *b = &m->c->blocks[m->work[--m->nwork]];
		scan_range(m, b->addr, b->addr + b->size);
	}
}

const struct hp_core_sym *hp_core_vtable_at(const struct hp_core *c, uint64_t vptr)
{
	const struct hp_core_module *m = hp_core_module_at(c, vptr);
	const struct hp_core_sym *s;

	if (!m || !m->nsyms)
		return NULL;
	s = hp_core_symbol_at(m, vptr);
	if (!s || strncmp(s->name, "_ZTV", 4) != 0 || vptr < s->addr + 16)
		return NULL;
	return s;
}

static int type_of(struct hp_core *c, uint64_t vptr, uint32_t *out)
{
	const struct hp_core_sym *s = hp_core_vtable_at(c, vptr);
	char *name, **t;

	*out = UINT32_MAX;
	if (!s)
		return 0;
	name = hp_demangle(s->name);
	if (!name)
		return 0; /* a name that does not demangle is not shown half-done */
	const char *shown = strncmp(name, "vtable for ", 11) == 0 ? name + 11 : name;
	for (size_t i = 0; i < c->ntypes; i++)
		if (strcmp(c->types[i], shown) == 0) {
			free(name);
			*out = (uint32_t)i;
			return 0;
		}
	t = realloc(c->types, (c->ntypes + 1) * sizeof *t);
	if (!t) {
		free(name);
		return -ENOMEM;
	}
	c->types = t;
	memmove(name, shown, strlen(shown) + 1);
	c->types[c->ntypes] = name;
	*out = (uint32_t)c->ntypes++;
	return 0;
}

/* Gives each recorded live block the reachability of the heap's
 * allocated block that starts at its address (the recorder keeps the
 * address malloc returned, which is the chunk's user address; an
 * aligned allocation's too). */
static void join(struct hp_core *c)
{
	struct hp_core_rec *r = &c->rec;

	if (!r->found || !c->heap_ok)
		return;
	for (size_t i = 0; i < r->nblocks; i++) {
		long k = hp_core_block_at(c, r->blocks[i].addr);
		const struct hp_core_block *b = k >= 0 ? &c->blocks[k] : NULL;
		r->blocks[i].reach = b && b->addr == r->blocks[i].addr &&
					     b->state == HP_CORE_ALLOCATED
				     ? b->reach
				     : HP_CORE_UNKNOWN;
	}
	r->joined = 1;
}

int hp_core_scan(struct hp_core *c)
{
	struct mark m = {.c = c, .self = -1};
	uint64_t cached_vptr = 0;
	uint32_t cached_type = UINT32_MAX;
	int ret = 0;

	if (!c->nblocks)
		return 0;
	for (size_t i = 0; i < c->nblocks; i++) {
		struct hp_core_block *b = &c->blocks[i];
		int ok;
		uint64_t v;
		if (b->state != HP_CORE_ALLOCATED || b->size < 8)
			continue;
		v = hp_core_word(c, b->addr, &ok);
		if (!ok || v < 4096)
			continue;
		if (v != cached_vptr) {
			if ((ret = type_of(c, v, &cached_type)))
				return ret;
			cached_vptr = v;
		}
		b->type = cached_type;
	}

	m.seen = calloc(c->nblocks, 1);
	m.work = malloc(c->nblocks * sizeof *m.work);
	uint8_t *pointed = calloc(c->nblocks, 1);
	if (!m.seen || !m.work || !pointed) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < c->nthreads; t++)
		for (int r = 0; r < HP_CORE_NREGS; r++)
			visit_word(&m, c->threads[t].regs[r]);
	each_root(c, root_range, &m);
	drain(&m);
	for (size_t i = 0; i < c->nblocks; i++)
		if (c->blocks[i].state == HP_CORE_ALLOCATED)
			c->blocks[i].reach = m.seen[i] ? HP_CORE_REACHABLE : HP_CORE_LOST;

	/* Which unreached blocks does another unreached block point to? */
	for (size_t i = 0; i < c->nblocks; i++) {
		struct hp_core_block *b = &c->blocks[i];
		if (b->state != HP_CORE_ALLOCATED || m.seen[i])
			continue;
		const unsigned char *p = hp_core_mem(c, b->addr & ~7ULL, b->size & ~7ULL);
		for (uint64_t off = 0; p && off + 8 <= (b->size & ~7ULL); off += 8) {
			uint64_t v;
			long j;
			memcpy(&v, p + off, 8);
			j = v >= 4096 ? hp_core_block_at(c, v) : -1;
			if (j >= 0 && j != (long)i && !m.seen[j])
				pointed[j] = 1;
		}
	}
	/* Definitely lost: the unreached that nothing unreached points to,
	 * then, for cycles, the lowest unmarked; what they reach is indirect. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < c->nblocks; i++) {
			if (c->blocks[i].state != HP_CORE_ALLOCATED || m.seen[i] ||
			    (pass == 0 && pointed[i]))
				continue;
			m.seen[i] = 1;
			c->blocks[i].reach = HP_CORE_LOST;
			m.self = (long)i;
			scan_range(&m, c->blocks[i].addr, c->blocks[i].addr + c->blocks[i].size);
			m.self = -1;
			while (m.nwork) {
				uint32_t k = m.work[--m.nwork];
				c->blocks[k].reach = HP_CORE_INDIRECT;
				scan_range(&m, c->blocks[k].addr, c->blocks[k].addr + c->blocks[k].size);
			}
		}
	}
	join(c);
out:
	free(pointed);
	free(m.seen);
	free(m.work);
	return ret;
}

/* --- hp_core_refs ------------------------------------------------------ */

struct refs {
	const struct hp_core *c;
	const struct hp_core_block *target;
	hp_core_ref_fn fn;
	void *arg;
};

static const char *reg_names[HP_CORE_NREGS] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi",
	"rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es",
	"fs", "gs",
};

static int hits(const struct hp_core_block *t, uint64_t v)
{
	return v >= t->addr && v - t->addr < t->size;
}

static void refs_range(void *arg, uint64_t lo, uint64_t hi, enum root_kind kind, long thread)
{
	struct refs *r = arg;
	char what[512];

	lo = (lo + 7) & ~7ULL;
	for (uint64_t x = lo; x + 8 <= hi; x += 8) {
		int ok;
		uint64_t v = hp_core_word(r->c, x, &ok);
		if (!ok || !hits(r->target, v))
			continue;
		if (kind == ROOT_STACK) {
			snprintf(what, sizeof what, "the stack of thread %d",
				 r->c->threads[thread].tid);
		} else {
			const struct hp_core_module *m = hp_core_module_at(r->c, x);
			const struct hp_core_sym *s = m ? hp_core_symbol_at(m, x) : NULL;
			const char *base = m ? strrchr(m->path, '/') : NULL;
			base = base ? base + 1 : m ? m->path : NULL;
			if (s)
				snprintf(what, sizeof what, "%s+%llu in %s", s->name,
					 (unsigned long long)(x - s->addr), base);
			else if (m)
				snprintf(what, sizeof what, "the data of %s", base);
			else
				snprintf(what, sizeof what, "anonymous memory");
		}
		r->fn(r->arg, x, -1, what);
	}
}

void hp_core_refs(const struct hp_core *c, size_t b, hp_core_ref_fn fn, void *arg)
{
	struct refs r = {.c = c, .target = &c->blocks[b], .fn = fn, .arg = arg};
	char what[128];

	for (size_t t = 0; t < c->nthreads; t++)
		for (int k = 0; k < HP_CORE_NREGS; k++)
			if (hits(r.target, c->threads[t].regs[k])) {
				snprintf(what, sizeof what, "register %s of thread %d", reg_names[k],
					 c->threads[t].tid);
				fn(arg, 0, -1, what);
			}
	each_root(c, refs_range, &r);
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct hp_core_block *o = &c->blocks[i];
		if (o->state != HP_CORE_ALLOCATED || i == b)
			continue;
		for (uint64_t x = o->addr; x + 8 <= o->addr + o->size; x += 8) {
			int ok;
			uint64_t v = hp_core_word(c, x, &ok);
			if (ok && hits(r.target, v))
				fn(arg, x, (long)i, NULL);
		}
	}
}
