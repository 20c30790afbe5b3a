/*
 * test_attr_rec.c - attribution (issue 9), the recorder's side: the programs
 * tests/programs/attr.c and attr_cxx.cpp run under libheapprof.so, and
 * their captures read back with the capture reader: the TAGS entries
 * (kinds, names, parents, tids, thread names, vtable addresses) and the
 * exact figures of each bucket by type, context, thread and heap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

/* The name of tag kind id ("" for id 0 or none). */
static const char *tag_name(const struct hp_capture *cap, unsigned kind, uint64_t id)
{
	const struct hp_cap_tag *t = id ? hp_capture_tag(cap, kind, id) : NULL;
	return t && t->name ? t->name : "";
}

static const struct hp_cap_tag *origin_of(const struct hp_capture *cap,
					  const struct hp_rec_bucket *b)
{
	return b->origin_tag ? hp_capture_tag(cap, HP_TAG_ORIGIN, b->origin_tag) : NULL;
}

/* (A loop's calls may have a stack each, unrolled: figures are summed
 * over the buckets that match.) The buckets of the last snapshot whose innermost frame is in leaf and,
 * for each of type, context, thread, heap not NULL, whose tag has that name
 * ("" for none), summed. *thread_tag gets the thread id of the last match. */
static struct hpq_sum select_buckets(const struct hp_capture *cap, const char *leaf,
				     const char *type, const char *context, const char *thread,
				     const char *heap, uint64_t *thread_tag)
{
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	struct hpq_sum s = {0};

	for (size_t i = 0; snap && i < snap->nbuckets; i++) {
		const struct hp_rec_bucket *b = &snap->buckets[i];
		const struct hp_cap_tag *o = origin_of(cap, b);
		const struct hp_cap_stack *st;

		if (b->stack_id >= cap->nstacks)
			continue;
		st = &cap->stacks[b->stack_id];
		if (!st->depth || strcmp(hpq_symbol(cap, st->frames[0]), leaf) != 0)
			continue;
		if (type && strcmp(tag_name(cap, HP_TAG_TYPE, b->type_tag), type) != 0)
			continue;
		if (context && strcmp(tag_name(cap, HP_TAG_CONTEXT, o ? o->a : 0), context) != 0)
			continue;
		if (thread && strcmp(tag_name(cap, HP_TAG_THREAD, o ? o->b : 0), thread) != 0)
			continue;
		if (heap && strcmp(tag_name(cap, HP_TAG_HEAP, o ? o->c : 0), heap) != 0)
			continue;
		if (thread_tag)
			*thread_tag = o ? o->b : 0;
		s.buckets++;
		s.alloc_count += b->alloc_count;
		s.alloc_bytes += b->alloc_bytes;
		s.free_count += b->free_count;
		s.free_bytes += b->free_bytes;
		s.peak_count += b->peak_count;
		s.peak_bytes += b->peak_bytes;
	}
	return s;
}

/* Compares s with alloc, freed and at-peak counts and bytes. */
static void expect_sum(struct hpq_sum s, uint64_t ac, uint64_t ab, uint64_t fc, uint64_t fb,
		       uint64_t pc, uint64_t pb, const char *what)
{
	char why[160];

	snprintf(why, sizeof why, "%s: allocated (count)", what);
	expect_eq_u64(s.alloc_count, ac, why);
	snprintf(why, sizeof why, "%s: allocated (bytes)", what);
	expect_eq_u64(s.alloc_bytes, ab, why);
	snprintf(why, sizeof why, "%s: freed (count)", what);
	expect_eq_u64(s.free_count, fc, why);
	snprintf(why, sizeof why, "%s: freed (bytes)", what);
	expect_eq_u64(s.free_bytes, fb, why);
	snprintf(why, sizeof why, "%s: at the peak (count)", what);
	expect_eq_u64(s.peak_count, pc, why);
	snprintf(why, sizeof why, "%s: at the peak (bytes)", what);
	expect_eq_u64(s.peak_bytes, pb, why);
}

/* Runs a program under the recorder into dir/name.hpf, its stdout into
 * dir/name.out; returns its stdout (malloc'd) or NULL. */
static char *run(const char *name, const char *env)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();

	if (hp_test_sh("cd %s && LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/%s.hpf %s "
		       "%s/tests/programs/%s > %s/%s.out",
		       t, b, t, name, env, b, name, t, name) != 0)
		return NULL;
	return hp_test_sh_out("cat %s/%s.out", t, name);
}

HP_TEST(attr_contexts_threads_heaps_types)
{
	char path[512], *out = run("attr", "");
	int tid_a = 0, tid_b = 0, heap = 0;
	struct hp_capture *cap;
	const struct hp_cap_snapshot *snap;
	const struct hp_cap_tag *t;
	struct hpq_sum s, all;
	uint64_t thread = 0, malloc_bytes = 0, malloc_count = 0;

	if (!expect_true(out != NULL, "attr runs under the recorder"))
		return;
	expect_eq_u64(sscanf(out, "tid_a=%d tid_b=%d heap=%d", &tid_a, &tid_b, &heap), 3,
		      "the program's tids");
	free(out);
	snprintf(path, sizeof path, "%s/attr.hpf", hp_test_tmp());
	if (!(cap = hpq_load(path)))
		return;
	snap = hp_capture_last(cap);
	if (!expect_true(snap != NULL, "a snapshot"))
		goto out;

	/* Threads in different contexts, freeing each other's blocks: the
	 * frees count where the blocks were allocated. */
	s = select_buckets(cap, "site_a", "", "ctx-a", "renamed-a", "", &thread);
	expect_true(s.buckets >= 1, "site_a: in ctx-a, by worker-a (renamed), malloc's");
	expect_sum(s, 3, 300, 2, 200, 1, 100, "site_a");
	t = hp_capture_tag(cap, HP_TAG_THREAD, thread);
	expect_true(t && t->a == (uint64_t)tid_a, "worker-a's THREAD entry has its tid");
	s = select_buckets(cap, "site_b", "", "inner", "worker-b", "", &thread);
	expect_true(s.buckets >= 1, "site_b: in inner, by worker-b");
	expect_sum(s, 2, 400, 1, 200, 1, 200, "site_b");
	t = hp_capture_tag(cap, HP_TAG_THREAD, thread);
	expect_true(t && t->a == (uint64_t)tid_b, "worker-b's THREAD entry has its tid");

	/* Nested contexts: inner's parent is ctx-b, whose parent is none. */
	for (uint64_t id = 1; id < cap->ntags[HP_TAG_CONTEXT]; id++) {
		t = hp_capture_tag(cap, HP_TAG_CONTEXT, id);
		if (t && strcmp(t->name, "inner") == 0) {
			expect_str(tag_name(cap, HP_TAG_CONTEXT, t->a), "ctx-b", "inner's parent");
			expect_eq_u64(hp_capture_tag(cap, HP_TAG_CONTEXT, t->a)->a, 0,
				      "ctx-b is outermost");
		}
		if (t && strcmp(t->name, "ctx-a") == 0)
			expect_eq_u64(t->a, 0, "ctx-a is outermost");
	}
	expect_eq_u64(cap->ntags[HP_TAG_CONTEXT], 4, "three contexts (ids 1..3)");

	/* The custom heap: its blocks apart from malloc's, with its own peak
	 * and reset; the arena's chunk stays malloc's. */
	s = select_buckets(cap, "arena_alloc", "", "", "attr-main", "arena", NULL);
	expect_true(s.buckets >= 1, "arena_alloc: in heap arena, by attr-main");
	expect_sum(s, 5, 128, 3, 112, 3, 112, "arena_alloc");
	s = select_buckets(cap, "arena_chunk", "", "", "attr-main", "", NULL);
	expect_sum(s, 1, 4096, 0, 0, 1, 4096, "arena_chunk (malloc's)");
	if (expect_eq_u64(snap->nheaps, 1, "one custom heap's peak in the snapshot")) {
		expect_eq_u64(snap->heaps[0].heap, (uint64_t)heap, "its id");
		expect_eq_u64(snap->heaps[0].peak_bytes, 112, "its peak bytes");
		expect_eq_u64(snap->heaps[0].peak_count, 3, "its peak blocks");
		expect_eq_u64(snap->heaps[0].resets, 1, "its resets");
	}
	expect_str(tag_name(cap, HP_TAG_HEAP, (uint64_t)heap), "arena", "the HEAP entry");
	for (size_t i = 0; i < snap->nbuckets; i++) {
		const struct hp_cap_tag *o = origin_of(cap, &snap->buckets[i]);
		if (o && o->c)
			continue;
		malloc_count += snap->buckets[i].alloc_count;
		malloc_bytes += snap->buckets[i].alloc_bytes;
	}
	all = hpq_total(cap);
	expect_eq_u64(snap->alloc_bytes, malloc_bytes, "malloc's totals: malloc's buckets only");
	expect_eq_u64(snap->alloc_count, malloc_count, "malloc's totals: count");
	expect_eq_u64(all.alloc_bytes - snap->alloc_bytes, 128, "the heap's bytes are apart");
	expect_true(snap->lost_count[HP_LOST_UNKNOWN_FREE] >= 1, "heap_free of an unknown block");

	/* Explicit types on malloc'd structs: the whole life under the type. */
	s = select_buckets(cap, "make_point", "struct point", "", "attr-main", "", NULL);
	expect_sum(s, 4, 96, 1, 24, 3, 72, "make_point typed");
	s = select_buckets(cap, "make_point", "", NULL, NULL, NULL, NULL);
	expect_eq_u64(s.alloc_count, 0, "make_point: nothing left untyped");
	for (uint64_t id = 1; id < cap->ntags[HP_TAG_TYPE]; id++) {
		t = hp_capture_tag(cap, HP_TAG_TYPE, id);
		if (t && strcmp(t->name, "struct point") == 0)
			expect_eq_u64(t->a, HP_TYPE_EXPLICIT, "struct point is explicit");
	}
out:
	hpq_free(cap);
}

/* The first TYPE of source vtable at address vt, or 0. */
static uint64_t vtable_type(const struct hp_capture *cap, uint64_t vt)
{
	for (uint64_t id = 1; id < cap->ntags[HP_TAG_TYPE]; id++) {
		const struct hp_cap_tag *t = hp_capture_tag(cap, HP_TAG_TYPE, id);
		if (t && t->defined && t->a == HP_TYPE_VTABLE && t->b == vt)
			return id;
	}
	return 0;
}

/* Sums the buckets of leaf with type id type. */
static struct hpq_sum of_type(const struct hp_capture *cap, const char *leaf, uint64_t type)
{
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	struct hpq_sum s = {0};

	for (size_t i = 0; snap && i < snap->nbuckets; i++) {
		const struct hp_rec_bucket *b = &snap->buckets[i];
		if (b->type_tag != type || b->stack_id >= cap->nstacks ||
		    !cap->stacks[b->stack_id].depth ||
		    strcmp(hpq_symbol(cap, cap->stacks[b->stack_id].frames[0]), leaf) != 0)
			continue;
		s.buckets++;
		s.alloc_count += b->alloc_count;
		s.alloc_bytes += b->alloc_bytes;
		s.free_count += b->free_count;
		s.free_bytes += b->free_bytes;
		s.peak_count += b->peak_count;
		s.peak_bytes += b->peak_bytes;
	}
	return s;
}

HP_TEST(attr_vtable_types)
{
	char path[512], *out = run("attr_cxx", "");
	unsigned long circle = 0, square = 0, tri = 0;
	struct hp_capture *cap;
	uint64_t tc, ts, tt;

	if (!expect_true(out != NULL, "attr_cxx runs under the recorder"))
		return;
	expect_eq_u64(sscanf(out, "circle=%lx square=%lx tri=%lx", &circle, &square, &tri), 3,
		      "the vtables' addresses");
	free(out);
	snprintf(path, sizeof path, "%s/attr_cxx.hpf", hp_test_tmp());
	if (!(cap = hpq_load(path)))
		return;
	tc = vtable_type(cap, circle);
	ts = vtable_type(cap, square);
	tt = vtable_type(cap, tri);
	expect_true(tc && ts && tt, "a TYPE for each class, at its vtable + 16");
	/* The deleted Circle was freed before any snapshot read its type: it
	 * stays untyped. The last snapshot's peak is the program's last
	 * allocation (its stdout buffer), when that Circle was gone. */
	expect_sum(of_type(cap, "_ZL11make_shapesv", tc), 2, 32, 0, 0, 2, 32, "Circle");
	expect_sum(of_type(cap, "_ZL11make_shapesv", ts), 2, 48, 0, 0, 2, 48, "Square");
	expect_sum(of_type(cap, "_ZL11make_shapesv", tt), 1, 32, 0, 0, 1, 32, "Tri");
	expect_sum(of_type(cap, "_ZL11make_shapesv", 0), 1, 16, 1, 16, 0, 0, "untyped");
	hpq_free(cap);

	/* HEAPPROF_TYPES=0: none read. */
	out = run("attr_cxx", "HEAPPROF_TYPES=0");
	free(out);
	if (!(cap = hpq_load(path)))
		return;
	expect_eq_u64(cap->ntags[HP_TAG_TYPE] > 1, 0, "HEAPPROF_TYPES=0: no TYPE entry");
	expect_eq_u64(of_type(cap, "_ZL11make_shapesv", 0).alloc_count, 6, "every shape untyped");
	hpq_free(cap);
}

/* A followed fork child allocates in the context its parent opened before
 * the fork: its buckets carry that context and the thread, as the
 * parent's do (the child's cached origin is forgotten and worked out
 * again: attr.c, hp_attr_reset_caches, which raises the thread's
 * origin_moved; without the raise the child's common path took origin 0,
 * no context and no thread). */
HP_TEST(attr_fork_child_keeps_its_context)
{
	char path[512], *out = run("forkctx", "HEAPPROF_FOLLOW_FORK=1");
	struct hp_capture *cap;
	struct hpq_sum s;
	int child = 0;

	if (!expect_true(out != NULL, "forkctx runs under the recorder"))
		return;
	expect_eq_u64(sscanf(out, "child=%d", &child), 1, "the child's pid");
	free(out);
	snprintf(path, sizeof path, "%s/forkctx.hpf", hp_test_tmp());
	if ((cap = hpq_load(path))) {
		s = select_buckets(cap, "parent_site", "", "before-fork", "forkctx", "", NULL);
		expect_sum(s, 3, 300, 0, 0, 3, 300, "parent: parent_site");
		hpq_free(cap);
	}
	snprintf(path, sizeof path, "%s/forkctx.%d.hpf", hp_test_tmp(), child);
	if (!(cap = hpq_load(path)))
		return;
	s = select_buckets(cap, "child_site", "", "before-fork", "forkctx", "", NULL);
	expect_sum(s, 5, 1500, 0, 0, 5, 1500, "child: child_site, in before-fork, by forkctx");
	s = select_buckets(cap, "child_site", NULL, NULL, NULL, NULL, NULL);
	expect_eq_u64(s.alloc_count, 5, "child: child_site's allocations, all");
	hpq_free(cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
