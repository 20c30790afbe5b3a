/*
 * tags.c - the tables of types, contexts, threads, heaps and origins (see
 * tags.h for the model and the locking).
 *
 * Keys of the interning tables (64-bit words):
 *   type     source, vtable or shape, name length, name bytes (8 a word)
 *            (an explicit type's shape: its element bytes << 16 | its
 *            array cookie bytes, 0 for a plain name; the core reader,
 *            src/analyzer/core/core_rec.c, unpacks it as the writer does)
 *   context  parent, name length, name bytes
 *   origin   context, thread << 32 | heap
 */
#include "tags.h"

#include <stddef.h>
#include <string.h>

#include "../format/records.h"
#include "intern.h"
#include "os.h"
#include "root.h"
#include "spin.h"

#define MAX_TYPES (1u << 16)
#define MAX_CONTEXTS (1u << 16)
#define MAX_ORIGINS (1u << 20)
#define NAME_WORDS ((HP_TAGS_MAX_NAME_BYTES + 7) / 8)

/* Set up at init; see intern.h for their locking. */
static struct hp_intern types, contexts, origins;

/* Threads: entries 1..threads_used (capped at HP_TAGS_MAX_THREADS), each
 * written only by the thread it names (tags.h). */
struct thread_entry {
	uint64_t name[2]; /* 16 bytes, NUL-padded; relaxed atomic words */
	uint32_t tid;     /* relaxed atomic */
	uint32_t gen;     /* moved (release) after each change; 0: unused */
};
static struct thread_entry *threads; /* mapped at init */
static uint32_t threads_used;        /* atomic: ids handed out */

/* Heaps: names written under heaps_lock before heap_count is published
 * (release); read-only afterwards. */
static char heap_names[HP_TAGS_MAX_HEAPS + 1][64];
static uint32_t heap_count;
static struct hp_spin heaps_lock;

int hp_tags_init(void)
{
	int err = hp_intern_init(&types, MAX_TYPES, (uint64_t)MAX_TYPES * 8);

	if (!err)
		err = hp_intern_init(&contexts, MAX_CONTEXTS, (uint64_t)MAX_CONTEXTS * 8);
	if (!err)
		err = hp_intern_init(&origins, MAX_ORIGINS, (uint64_t)MAX_ORIGINS * 2);
	if (err)
		return err;
	threads = hp_os_map((HP_TAGS_MAX_THREADS + 1) * sizeof *threads);
	if (!threads)
		return -12; /* -ENOMEM */
	threads_used = 0;
	heap_count = 0;
	return 0;
}

/* Appends name's length and bytes to key at *n (cut at
 * HP_TAGS_MAX_NAME_BYTES). */
static void put_name(uint64_t *key, uint32_t *n, const char *name)
{
	size_t len = name ? strnlen(name, HP_TAGS_MAX_NAME_BYTES) : 0;
	uint32_t words = (uint32_t)(len + 7) / 8;

	key[(*n)++] = len;
	memset(&key[*n], 0, words * 8);
	if (len)
		memcpy(&key[*n], name, len);
	*n += words;
}

uint32_t hp_tags_type(uint32_t source, uint64_t vtable, const char *name)
{
	uint64_t key[3 + NAME_WORDS];
	uint32_t n = 2;

	key[0] = source;
	key[1] = vtable;
	put_name(key, &n, name);
	return hp_intern_put(&types, key, n);
}

uint32_t hp_tags_context(uint32_t parent, const char *name)
{
	uint64_t key[2 + NAME_WORDS];
	uint32_t n = 1;

	key[0] = parent;
	put_name(key, &n, name);
	return hp_intern_put(&contexts, key, n);
}

uint32_t hp_tags_origin(uint32_t context, uint32_t thread, uint32_t heap)
{
	uint64_t key[2] = {context, (uint64_t)thread << 32 | heap};

	return hp_intern_put(&origins, key, 2);
}

uint64_t hp_tags_shape(uint64_t elem_bytes, uint64_t cookie_bytes)
{
	if (!elem_bytes || elem_bytes > HP_TAGS_MAX_ELEM_BYTES || cookie_bytes > 0xffff)
		return 0;
	return elem_bytes << 16 | cookie_bytes;
}

int hp_tags_type_is(uint32_t id, const char *name)
{
	return hp_tags_type_is_shaped(id, name, 0);
}

int hp_tags_type_is_shaped(uint32_t id, const char *name, uint64_t shape)
{
	uint32_t len;
	const uint64_t *key;
	size_t n = strnlen(name, HP_TAGS_MAX_NAME_BYTES);

	if (!id || id >= hp_intern_count(&types))
		return 0;
	key = hp_intern_key(&types, id, &len);
	return key[0] == 1 /* HP_TYPE_EXPLICIT */ && key[1] == shape && key[2] == n &&
	       memcmp(&key[3], name, n) == 0;
}

/* Stores name (cut to 15 bytes) into e's words. */
static void set_name(struct thread_entry *e, const char *name)
{
	uint64_t w[2] = {0, 0};

	strncpy((char *)w, name ? name : "", 15);
	__atomic_store_n(&e->name[0], w[0], __ATOMIC_RELAXED);
	__atomic_store_n(&e->name[1], w[1], __ATOMIC_RELAXED);
}

uint32_t hp_tags_thread_new(uint32_t tid, const char *name)
{
	uint32_t id = __atomic_add_fetch(&threads_used, 1, __ATOMIC_RELAXED);
	struct thread_entry *e;

	if (id >= HP_TAGS_MAX_THREADS) {
		/* Past the cap every thread shares the last id, set up by the
		 * first of them. */
		__atomic_store_n(&threads_used, HP_TAGS_MAX_THREADS, __ATOMIC_RELAXED);
		e = &threads[HP_TAGS_MAX_THREADS];
		if (id == HP_TAGS_MAX_THREADS) {
			set_name(e, "other threads");
			__atomic_store_n(&e->tid, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&e->gen, 1, __ATOMIC_RELEASE);
		}
		return HP_TAGS_MAX_THREADS;
	}
	e = &threads[id];
	set_name(e, name);
	__atomic_store_n(&e->tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&e->gen, 1, __ATOMIC_RELEASE);
	return id;
}

void hp_tags_thread_set(uint32_t id, uint32_t tid, const char *name)
{
	struct thread_entry *e;
	uint64_t w[2] = {0, 0};

	if (!id || id >= HP_TAGS_MAX_THREADS)
		return; /* none, or the shared entry: never renamed */
	e = &threads[id];
	strncpy((char *)w, name ? name : "", 15);
	if (w[0] == __atomic_load_n(&e->name[0], __ATOMIC_RELAXED) &&
	    w[1] == __atomic_load_n(&e->name[1], __ATOMIC_RELAXED) &&
	    tid == __atomic_load_n(&e->tid, __ATOMIC_RELAXED))
		return;
	set_name(e, name);
	__atomic_store_n(&e->tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE);
}

uint32_t hp_tags_heap_new(const char *name)
{
	uint32_t id = 0;

	hp_spin_lock(&heaps_lock);
	if (heap_count < HP_TAGS_MAX_HEAPS) {
		id = heap_count + 1;
		strncpy(heap_names[id], name ? name : "", sizeof heap_names[id] - 1);
		heap_names[id][sizeof heap_names[id] - 1] = '\0';
		__atomic_store_n(&heap_count, id, __ATOMIC_RELEASE);
	}
	hp_spin_unlock(&heaps_lock);
	return id;
}

uint32_t hp_tags_heap_count(void)
{
	return __atomic_load_n(&heap_count, __ATOMIC_ACQUIRE);
}

/* The name stored in key at word n (its length, then its bytes). */
static struct hp_rec_str name_at(const uint64_t *key, uint32_t n)
{
	return (struct hp_rec_str){(const char *)&key[n + 1], (size_t)key[n]};
}

/* end - the first id *m has not written, or 0. */
static uint32_t left(uint32_t end, uint32_t next)
{
	uint32_t from = next ? next : 1;
	return end > from ? end - from : 0;
}

/* The number of entries not in *m, and *p moved to the ends seen. */
static uint32_t count_new(const struct hp_tags_mark *m, struct hp_tags_mark *p)
{
	uint32_t n = 0, end;

	end = hp_intern_count(&types);
	n += left(end, m->next[HP_TAG_TYPE]);
	p->next[HP_TAG_TYPE] = end;
	end = hp_intern_count(&contexts);
	n += left(end, m->next[HP_TAG_CONTEXT]);
	p->next[HP_TAG_CONTEXT] = end;
	end = hp_tags_heap_count() + 1;
	n += left(end, m->next[HP_TAG_HEAP]);
	p->next[HP_TAG_HEAP] = end;
	end = hp_intern_count(&origins);
	n += left(end, m->next[HP_TAG_ORIGIN]);
	p->next[HP_TAG_ORIGIN] = end;
	end = threads ? __atomic_load_n(&threads_used, __ATOMIC_RELAXED) : 0;
	for (uint32_t id = 1; id <= end && id <= HP_TAGS_MAX_THREADS; id++) {
		uint32_t gen = __atomic_load_n(&threads[id].gen, __ATOMIC_ACQUIRE);
		if (!gen || gen == m->thread_gen[id])
			continue;
		p->thread_gen[id] = gen;
		n++;
	}
	return n;
}

uint32_t hp_tags_encode(struct hp_buf *b, const struct hp_tags_mark *m,
			struct hp_tags_mark *pending)
{
	/* Counted first against a copy of the marks: ids published between
	 * the two passes are left for the next record (the second pass stops
	 * at the ends the first saw). */
	struct hp_tags_mark *p = pending;
	uint32_t n = count_new(m, p);
	uint32_t ends[6];

	if (!n)
		return 0;
	memcpy(ends, p->next, sizeof ends);
	hp_rec_count_put(b, n);
	/* The second pass must see exactly the same entries: bound it by the
	 * first pass's ends and generations. */
	{
		struct hp_rec_tag t;
		uint32_t len;
		const uint64_t *key;

		for (uint32_t id = m->next[HP_TAG_TYPE] ? m->next[HP_TAG_TYPE] : 1;
		     id < ends[HP_TAG_TYPE]; id++) {
			key = hp_intern_key(&types, id, &len);
			/* An explicit type's b and c: its array cookie and
			 * element bytes (format.h), from its shape. */
			if (key[0] == HP_TYPE_EXPLICIT)
				t = (struct hp_rec_tag){HP_TAG_TYPE,        id,
							key[0],             key[1] & 0xffff,
							key[1] >> 16,       name_at(key, 2)};
			else
				t = (struct hp_rec_tag){HP_TAG_TYPE, id, key[0],
							key[1],      0,  name_at(key, 2)};
			hp_rec_tag_put(b, &t);
		}
		for (uint32_t id = m->next[HP_TAG_CONTEXT] ? m->next[HP_TAG_CONTEXT] : 1;
		     id < ends[HP_TAG_CONTEXT]; id++) {
			key = hp_intern_key(&contexts, id, &len);
			t = (struct hp_rec_tag){HP_TAG_CONTEXT, id, key[0], 0, 0, name_at(key, 1)};
			hp_rec_tag_put(b, &t);
		}
		for (uint32_t id = 1; id <= HP_TAGS_MAX_THREADS; id++) {
			struct thread_entry *e = &threads[id];
			uint64_t w[3];
			if (p->thread_gen[id] == m->thread_gen[id])
				continue;
			w[0] = __atomic_load_n(&e->name[0], __ATOMIC_RELAXED);
			w[1] = __atomic_load_n(&e->name[1], __ATOMIC_RELAXED);
			w[2] = 0;
			t = (struct hp_rec_tag){HP_TAG_THREAD,
						id,
						__atomic_load_n(&e->tid, __ATOMIC_RELAXED),
						0,
						0,
						hp_rec_str_of((const char *)w)};
			hp_rec_tag_put(b, &t);
		}
		for (uint32_t id = m->next[HP_TAG_HEAP] ? m->next[HP_TAG_HEAP] : 1;
		     id < ends[HP_TAG_HEAP]; id++) {
			t = (struct hp_rec_tag){HP_TAG_HEAP, id, 0,
						0,           0,  hp_rec_str_of(heap_names[id])};
			hp_rec_tag_put(b, &t);
		}
		for (uint32_t id = m->next[HP_TAG_ORIGIN] ? m->next[HP_TAG_ORIGIN] : 1;
		     id < ends[HP_TAG_ORIGIN]; id++) {
			key = hp_intern_key(&origins, id, &len);
			t = (struct hp_rec_tag){HP_TAG_ORIGIN,        id,     key[0], key[1] >> 32,
						key[1] & 0xffffffffu, {"", 0}};
			hp_rec_tag_put(b, &t);
		}
	}
	return n;
}

uint64_t hp_tags_bytes(void)
{
	if (!threads)
		return 0; /* not set up */
	return hp_intern_bytes(&types) + hp_intern_bytes(&contexts) + hp_intern_bytes(&origins) +
	       (uint64_t)(__atomic_load_n(&threads_used, __ATOMIC_RELAXED) + 1) * sizeof *threads;
}

void hp_tags_root(struct hp_root *r)
{
	hp_intern_root(&types, &r->types);
	hp_intern_root(&contexts, &r->contexts);
	hp_intern_root(&origins, &r->origins);
	r->threads_addr = (uintptr_t)threads;
	r->threads_used_addr = (uintptr_t)&threads_used;
	r->threads_max = HP_TAGS_MAX_THREADS;
	r->thread_bytes = sizeof *threads;
	r->thread_tid_off = offsetof(struct thread_entry, tid);
	r->thread_gen_off = offsetof(struct thread_entry, gen);
	r->heap_names_addr = (uintptr_t)heap_names;
	r->heap_count_addr = (uintptr_t)&heap_count;
	r->heaps_max = HP_TAGS_MAX_HEAPS;
	r->heap_name_bytes = sizeof heap_names[0];
}

void hp_tags_lock_all(void)
{
	hp_spin_lock(&heaps_lock);
	hp_spin_lock(&types.lock);
	hp_spin_lock(&contexts.lock);
	hp_spin_lock(&origins.lock);
}

void hp_tags_unlock_all(void)
{
	hp_spin_unlock(&origins.lock);
	hp_spin_unlock(&contexts.lock);
	hp_spin_unlock(&types.lock);
	hp_spin_unlock(&heaps_lock);
}
