/*
 * api.c - the public API of include/heapprof.h: dumps, and the entry
 * points of attribution (attr.h does the work). Each raises the thread's
 * busy flag around recorder work, so that what it calls passes through
 * unrecorded and a signal handler on top does not wait for its locks.
 */
#include "../../include/heapprof.h"

#include <errno.h>

#include "../format/format.h"
#include "attr.h"
#include "recorder.h"
#include "tags.h"
#include "writer.h"

__attribute__((visibility("default"))) int heapprof_dump(void)
{
	int err;

	if (hp_state != HP_STATE_ACTIVE)
		return -ENODEV;
	hp_self.forwarding++;
	err = hp_writer_snapshot(HP_SNAP_API, 0, 0);
	hp_self.forwarding--;
	return err;
}

__attribute__((visibility("default"))) int heapprof_active(void)
{
	return hp_state == HP_STATE_ACTIVE;
}

/* --- types ------------------------------------------------------------- */

__attribute__((visibility("default"))) int heapprof_set_type(const void *p, const char *name)
{
	struct hp_thread *t = &hp_self;
	int err;

	if (hp_state != HP_STATE_ACTIVE)
		return -ENODEV;
	if (!p || !name)
		return -ENOENT;
	if (t->busy)
		return -EDEADLK; /* a signal handler over the recorder: its locks */
	t->busy++;
	err = hp_attr_set_type(&hp_attr_self, p, name);
	t->busy--;
	return err;
}

/* The same for an array (hp_attr_set_type_array); what
 * include/heapprof/typed_new.hpp calls at every new, and heapprof.hpp's
 * set_type_array. */
__attribute__((visibility("default"))) int heapprof_set_type_array(const void *first,
								   const char *name,
								   size_t elem_bytes,
								   size_t cookie_bytes)
{
	struct hp_thread *t = &hp_self;
	int err;

	if (hp_state != HP_STATE_ACTIVE)
		return -ENODEV;
	if (!first || !name)
		return -ENOENT;
	if (t->busy)
		return -EDEADLK;
	t->busy++;
	err = hp_attr_set_type_array(&hp_attr_self, first, name, elem_bytes, cookie_bytes);
	t->busy--;
	return err;
}

/* --- contexts: stores only (attr.h) ------------------------------------ */

__attribute__((visibility("default"))) void heapprof_context_push(const char *name)
{
	struct hp_attr *a = &hp_attr_self;
	uint32_t d = a->depth;

	if (d < HP_ATTR_MAX_DEPTH)
		a->ctx_name[d] = name;
	a->depth = d + 1;
	__atomic_store_n(&a->gen, a->gen + 1, __ATOMIC_RELAXED);
	hp_attr_origin_moves();
}

__attribute__((visibility("default"))) void heapprof_context_pop(void)
{
	struct hp_attr *a = &hp_attr_self;

	if (!a->depth)
		return;
	a->depth--;
	__atomic_store_n(&a->gen, a->gen + 1, __ATOMIC_RELAXED);
	hp_attr_origin_moves();
}

/* --- custom heaps ------------------------------------------------------ */

__attribute__((visibility("default"))) int heapprof_heap_create(const char *name)
{
	uint32_t id;

	if (hp_state != HP_STATE_ACTIVE)
		return -ENODEV;
	id = hp_tags_heap_new(name);
	return id ? (int)id : -ENOSPC;
}

__attribute__((visibility("default"))) void heapprof_heap_alloc(int heap, const void *p,
								 size_t size)
{
	if (heap > 0 && p)
		hp_record_heap_alloc(&hp_self, p, size, (uint32_t)heap);
}

__attribute__((visibility("default"))) void heapprof_heap_free(int heap, const void *p)
{
	if (heap > 0 && p)
		hp_record_heap_free(&hp_self, p, (uint32_t)heap);
}

__attribute__((visibility("default"))) void heapprof_heap_reset(int heap)
{
	struct hp_thread *t = &hp_self;

	if (hp_state != HP_STATE_ACTIVE || heap <= 0 || (uint32_t)heap > hp_tags_heap_count() ||
	    t->busy)
		return;
	t->busy++;
	hp_attr_heap_reset((uint32_t)heap);
	t->busy--;
}
