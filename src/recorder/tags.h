/*
 * tags.h - what a bucket's type and origin tags stand for: the recorder's
 * tables of types, contexts, threads, custom heaps and origins (context x
 * thread x heap), and their TAGS entries (format.h, enum hp_tag_kind).
 *
 * Model. Types, contexts and origins are interning tables (intern.h): a
 * type is keyed by (source, vtable address, name), a context by (parent
 * context, name), an origin by (context, thread, heap); names are copied
 * into the keys, so they live in recorder memory. Threads and heaps are
 * plain arrays with a published count: a thread gets the next id on its
 * first slow path (after HP_TAGS_MAX_THREADS threads, later ones share the
 * last id, "other threads"), a heap on heapprof_heap_create. Ids of every
 * kind start at 1 and are never reused; 0 is "none".
 *
 * A thread's name changes (pthread_setname_np from any thread): each
 * thread entry carries a generation, moved when its name is seen changed;
 * the writer writes an entry again when its generation moved.
 *
 * Locking: lookups are lock-free; a new type, context or origin takes its
 * table's spinlock (intern.h) and may mmap; a new heap takes heaps_lock.
 * Thread entries are written by their own thread only (relaxed atomic
 * words, then the generation with release), read by the writer lock-free:
 * a torn name is written again at the next snapshot. Nothing here calls
 * the target's malloc.
 */
#ifndef HP_RECORDER_TAGS_H
#define HP_RECORDER_TAGS_H

#include <stdint.h>

#include "../format/encode.h"

#define HP_TAGS_MAX_THREADS 4096u   /* the last id stands for every later thread */
#define HP_TAGS_MAX_HEAPS 255u      /* heap ids 1..255 (include/heapprof.h) */
#define HP_TAGS_MAX_NAME_BYTES 255u /* longer names are cut */

/* Maps the tables. Returns 0 or -ENOMEM. Once, at init (the unit tests
 * call it again to start afresh): not thread-safe. No allocation (mmap). */
int hp_tags_init(void);

/* The id of a type (HP_TYPE_*; vtable address for HP_TYPE_VTABLE, name
 * and shape (hp_tags_shape, 0: a plain name) for HP_TYPE_EXPLICIT), of the context name inside parent (0: outermost),
 * of the origin (context, thread, heap), created when new. 0 when a table
 * is full or cannot be mapped. Lock-free for a known key, else a spinlock
 * and maybe mmap; no allocation; not async-signal-safe. */
uint32_t hp_tags_type(uint32_t source, uint64_t vtable, const char *name);
uint32_t hp_tags_context(uint32_t parent, const char *name);
uint32_t hp_tags_origin(uint32_t context, uint32_t thread, uint32_t heap);

/* Element sizes past this are not kept (the shape has 48 bits for them). */
#define HP_TAGS_MAX_ELEM_BYTES ((UINT64_C(1) << 48) - 1)

/* The shape of an explicit type of arrays: elements of elem_bytes each,
 * after cookie_bytes (new T[n]'s array cookie), packed into the word an
 * explicit type's key has for it; 0 (no shape: a plain name) when
 * elem_bytes is 0 or either does not fit. Pure. */
uint64_t hp_tags_shape(uint64_t elem_bytes, uint64_t cookie_bytes);

/* Whether type id's name is name (an explicit type), of no shape or of
 * shape: for a per-thread cache by pointer that checks the content.
 * Lock-free, no allocation. */
int hp_tags_type_is(uint32_t id, const char *name);
int hp_tags_type_is_shaped(uint32_t id, const char *name, uint64_t shape);

/* A new thread id for the calling thread, with its kernel tid and name
 * (HP_TAGS_MAX_THREADS: every later thread shares the last id, named
 * "other threads", tid 0). Lock-free (an atomic add), no allocation. */
uint32_t hp_tags_thread_new(uint32_t tid, const char *name);
/* Thread id's tid and name, set again by its own thread (a fork child's
 * new tid, a rename): written again at the next snapshot when changed.
 * Lock-free; call from the thread that owns id. */
void hp_tags_thread_set(uint32_t id, uint32_t tid, const char *name);

/* A new heap named name: its id (1..HP_TAGS_MAX_HEAPS), or 0 past the
 * last. Takes heaps_lock; no allocation. */
uint32_t hp_tags_heap_new(const char *name);
/* Heaps created so far (ids 1..count). Lock-free. */
uint32_t hp_tags_heap_count(void);

/* What the writer has written: the next id of each kind, and each
 * thread's generation. Zero: nothing written (a new file). */
struct hp_tags_mark {
	uint32_t next[6]; /* by HP_TAG_* kind; threads use thread_gen */
	uint32_t thread_gen[HP_TAGS_MAX_THREADS + 1];
};

/* Encodes, as an HP_REC_TAGS payload into b, every entry that *m says is
 * not written yet, and moves *pending (a copy of *m on entry) to what
 * was encoded: the writer copies it into *m once the record is written.
 * Returns the number of entries (0: write no record). Lock-free; allocates
 * only through b's grow function. */
uint32_t hp_tags_encode(struct hp_buf *b, const struct hp_tags_mark *m,
			struct hp_tags_mark *pending);

/* Bytes of recorder memory the tables may have touched. Lock-free. */
uint64_t hp_tags_bytes(void);

/* For fork: take and release the tables' locks (after the live shards',
 * before the stacks'). No allocation; not async-signal-safe. */
void hp_tags_lock_all(void);
void hp_tags_unlock_all(void);

#endif
