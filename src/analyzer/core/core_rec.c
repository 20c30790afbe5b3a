/*
 * core_rec.c - the recorder's state in the core of a process that ran
 * under heapprof (issue 12, first kind; docs/core.md).
 *
 * libheapprof.so is found among the core's modules (NT_FILE, its
 * build-id checked by core_mods.c), heapprof_root by its symbol; the root
 * (src/format/root.h) gives every table's address and layout, so
 * nothing is guessed: a magic or layout version this reader does not know
 * is one line. From it: every stack (the stack table's chunks), every
 * bucket (its counters), every live block (the 256 shards of the live
 * register), read in the core without copying it.
 *
 * Torn updates. The program may die inside an update; each table is read
 * as it stands, and what can be half-done is bounded:
 *   - the stack table publishes an id (count, release) after its entry,
 *     its frames and its segments are written: ids below count are whole;
 *     a missing chunk, frames outside the core or a segment chain that
 *     does not add up to the stack's depth leave that stack without
 *     frames (noted);
 *   - a bucket's counters change under its lock, a few stores: a bucket
 *     whose lock word is held may count one allocation or free in its
 *     count and not yet in its bytes; it is read as it is and marked torn;
 *   - a live shard changes under its lock: an insert writes the entry
 *     whole; a removal's backward shift may leave one entry in two slots;
 *     a growth builds the new table aside (the old stays published). A
 *     shard whose lock is held is read anyway: duplicate addresses in it
 *     are kept once, and every entry's bucket id is checked against the
 *     buckets that exist (an entry naming no bucket is dropped, counted).
 * The live register's own memory (its shards and tables) is kept in
 * c->rec.tables, for core_scan.c: it holds every live block's address and
 * is no root of the reachability scan.
 * Not thread-safe; allocates its tables (freed by hp_core_rec_free).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../format/format.h"
#include "../../format/root.h"
#include "core.h"
#include "../../common/sort.h"

static uint64_t rd64(const struct hp_core *c, uint64_t addr, int *ok)
{
	const void *p = hp_core_mem(c, addr, 8);
	uint64_t v = 0;
	if (p)
		memcpy(&v, p, 8);
	else
		*ok = 0;
	return v;
}

static uint32_t rd32(const struct hp_core *c, uint64_t addr, int *ok)
{
	const void *p = hp_core_mem(c, addr, 4);
	uint32_t v = 0;
	if (p)
		memcpy(&v, p, 4);
	else
		*ok = 0;
	return v;
}

/* The address of entry id of an interning table, or 0. */
static uint64_t intern_entry(const struct hp_core *c, const struct hp_root_intern *t, uint32_t id)
{
	int ok = 1;
	uint32_t chunk = id >> t->chunk_bits;
	uint64_t base;

	if (chunk >= t->entries_max)
		return 0;
	base = rd64(c, t->addr + t->entries_off + (uint64_t)chunk * 8, &ok);
	if (!ok || !base)
		return 0;
	return base + (uint64_t)(id & ((1u << t->chunk_bits) - 1)) * t->entry_bytes;
}

/* The key of id: its words in the core and its length, or NULL. */
static const uint64_t *intern_key(const struct hp_core *c, const struct hp_root_intern *t,
				  uint32_t id, uint32_t *len)
{
	uint64_t e = intern_entry(c, t, id), key;
	int ok = 1;

	*len = 0;
	if (!e)
		return NULL;
	key = rd64(c, e, &ok);
	*len = rd32(c, e + 8, &ok);
	if (!ok || *len > 4096)
		return NULL;
	return *len ? hp_core_mem(c, key, (uint64_t)*len * 8) : (const uint64_t *)"";
}

static int cmp_block(const void *a, const void *b)
{
	const struct hp_core_rec_block *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* What is wrong with an interning table's layout, or NULL. */
static const char *intern_damage(const struct hp_root_intern *t)
{
	if (t->chunk_bits >= 32)
		return "its chunk size";
	if (t->entry_bytes < 12)
		return "its entry size";
	return NULL;
}

/* What is wrong with a root's layout, or NULL: every shift, offset and
 * size the reader uses must make sense before a table is followed (a
 * damaged core, or a root overwritten by the program), and every count
 * the reader loops over must be backed by bytes of the core, so that what
 * it reads and allocates stays in proportion to the core's size. */
static const char *root_damage(const struct hp_core *c, const struct hp_root *r)
{
	const char *bad;

	if ((bad = intern_damage(&r->stacks)) || (bad = intern_damage(&r->keys)) ||
	    (r->version >= 7 && (bad = intern_damage(&r->stack_segs))))
		return bad;
	if (r->bucket_chunk_bits >= 32 || r->bucket_bytes < 64 ||
	    r->bucket_counters_off > r->bucket_bytes - (r->version >= 3 ? 32 : 64) ||
	    (r->version >= 3 && r->version < 6 && r->bucket_counters2_off > r->bucket_bytes - 32) ||
	    (r->version >= 6 && (r->bucket_tail_bytes < 32 ||
				 r->bucket_counters2_off > r->bucket_tail_bytes - 32)) ||
	    r->bucket_lock_off > r->bucket_bytes - 4 || r->bucket_epoch_off > r->bucket_bytes - 8)
		return "the buckets' layout";
	if (r->bucket_bits == 0 || r->bucket_bits >= 64 || r->entry_bytes < 16)
		return "the live entries' layout";
	if (r->shard_bytes < 8 || r->shard_lock_off > r->shard_bytes - 4 ||
	    r->shard_slots_off > r->shard_bytes - 4 || r->shard_live_off > r->shard_bytes - 4 ||
	    r->shard_table_off > r->shard_bytes - 8)
		return "the live shards' layout";
	if (r->version >= 2 &&
	    ((bad = intern_damage(&r->types)) || (bad = intern_damage(&r->contexts)) ||
	     (bad = intern_damage(&r->origins))))
		return bad;
	if (r->version >= 2 && (r->thread_bytes < 24 || r->thread_tid_off > r->thread_bytes - 4 ||
				r->thread_gen_off > r->thread_bytes - 4 || r->heap_name_bytes < 1 ||
				r->bucket_tag_off > r->bucket_bytes - 4 || r->tag_origin_bits > 32 ||
				r->heap_stat_bytes < 8 || r->heap_peak_bytes_off > r->heap_stat_bytes - 8 ||
				r->heap_peak_count_off > r->heap_stat_bytes - 8 ||
				r->heap_resets_off > r->heap_stat_bytes - 8 ||
				(uint64_t)r->threads_max * r->thread_bytes > c->map_bytes ||
				(uint64_t)r->heaps_max * r->heap_name_bytes > c->map_bytes ||
				(uint64_t)r->types.entries_max * 8 > c->map_bytes ||
				(uint64_t)r->contexts.entries_max * 8 > c->map_bytes ||
				(uint64_t)r->origins.entries_max * 8 > c->map_bytes))
		return "the tag tables' layout";
	if (r->version >= 4 && (r->credit_bytes < 8 || (uint64_t)r->credit_slots * r->credit_bytes >
								  c->map_bytes))
		return "the credit slots' layout";
	if (r->version >= 5 && (r->freeing_off > 4096 - 8 || r->freeing_size_off > 4096 - 8 ||
				r->freeing_bucket_off > 4096 - 4 || r->freeing_temp_off > 4096 - 1))
		return "the threads' layout";
	if ((uint64_t)r->live_shards * r->shard_bytes > c->map_bytes ||
	    (uint64_t)r->bucket_chunks * 8 > c->map_bytes ||
	    (uint64_t)r->stacks.entries_max * 8 > c->map_bytes ||
	    (uint64_t)r->keys.entries_max * 8 > c->map_bytes ||
	    (uint64_t)r->stack_segs.entries_max * 8 > c->map_bytes)
		return "a count larger than the core";
	if (r->version >= 7 && (r->stack_head_frames < 1 || r->stack_head_frames > 4096 ||
				r->stack_seg_frames < 1 || r->stack_seg_frames > 4096))
		return "the stack segments' layout";
	return NULL;
}

/* Finds the root: 0, -ENOENT (no libheapprof in the core), or -EPROTO
 * (found, unusable: noted). */
static int find_root(struct hp_core *c, struct hp_root *root, const struct hp_core_module **lib)
{
	for (size_t i = 0; i < c->nmods; i++) {
		const struct hp_core_module *m = &c->mods[i];
		const char *base = strrchr(m->path, '/');
		uint64_t at;
		const void *p;
		uint32_t bytes;
		const char *bad;

		base = base ? base + 1 : m->path;
		if (strncmp(base, "libheapprof", 11) != 0)
			continue;
		*lib = m;
		if (m->status != HP_CORE_MOD_OK) {
			hp_core_note(c, "%s: cannot be read as it was at the dump: the recorder's "
					"tables are not found", m->path);
			return -EPROTO;
		}
		at = hp_core_symbol_addr(c, m, "heapprof_root", NULL);
		if (!at) {
			hp_core_note(c, "%s: has no heapprof_root symbol (a recorder older than "
					"this analyzer): its tables are not read", m->path);
			return -EPROTO;
		}
		p = hp_core_mem(c, at, 16);
		if (!p) {
			hp_core_note(c, "%s: heapprof_root (0x%llx) is not in the core", m->path,
				     (unsigned long long)at);
			return -EPROTO;
		}
		memcpy(root, p, 16);
		if (root->magic != HP_ROOT_MAGIC) {
			hp_core_note(c, "%s: heapprof_root is not set (the process died before "
					"the recorder started)", m->path);
			return -EPROTO;
		}
		/* (a version 2 root is a version 3 one of the same size with
		 * bucket_counters2_off as padding) */
		if (!((root->version == HP_ROOT_VERSION && root->root_bytes == sizeof *root) ||
		      (root->version == 6 && root->root_bytes == HP_ROOT_V6_BYTES) ||
		      (root->version == 5 && root->root_bytes == HP_ROOT_V5_BYTES) ||
		      (root->version == 4 && root->root_bytes == HP_ROOT_V4_BYTES) ||
		      ((root->version == 3 || root->version == 2) &&
		       root->root_bytes == HP_ROOT_V3_BYTES) ||
		      (root->version == 1 && root->root_bytes == HP_ROOT_V1_BYTES)) ||
		    !(p = hp_core_mem(c, at, root->root_bytes))) {
			hp_core_note(c, "%s: recorder tables of layout %u (%u bytes); this heapprof "
					"reads layout %u", m->path, root->version,
				     root->root_bytes, HP_ROOT_VERSION);
			return -EPROTO;
		}
		bytes = root->root_bytes; /* sizeof *root, or an older root's */
		memset(root, 0, sizeof *root);
		memcpy(root, p, bytes);
		if ((bad = root_damage(c, root))) {
			hp_core_note(c, "%s: heapprof_root is damaged (%s): the recorder's tables "
					"are not read", m->path, bad);
			return -EPROTO;
		}
		c->rec.root = at;
		return 0;
	}
	return -ENOENT;
}

/* Appends the frames of stack id of a version 7 root (chained keys: its
 * head, then its segments) to r->frames at *used, grown as needed.
 * Returns its depth, 0 when it is not whole in the core or its chain does
 * not add up to its depth (then nothing is kept), or -ENOMEM. What is
 * read is bounded by the depth, at most 4,096 frames. */
static int64_t read_chained(struct hp_core *c, const struct hp_root *root, uint32_t id,
			    size_t *cap, size_t *used)
{
	struct hp_core_rec *r = &c->rec;
	uint64_t e = intern_entry(c, &root->stacks, id), at_key;
	uint32_t depth, head, seg_frames = root->stack_seg_frames, at, want, len;
	const uint64_t *key;
	uint64_t *out;
	int ok = 1;

	if (!e)
		return 0;
	at_key = rd64(c, e, &ok);
	depth = rd32(c, e + 8, &ok);
	if (!ok || !depth || depth > 4096)
		return 0;
	head = depth < root->stack_head_frames ? depth : root->stack_head_frames;
	key = hp_core_mem(c, at_key, (uint64_t)(head + (depth > head)) * 8);
	if (!key)
		return 0;
	if (*used + depth > *cap) {
		size_t grow = (*used + depth) * 2;
		uint64_t *grown = realloc(r->frames, grow * sizeof *grown);
		if (!grown)
			return -ENOMEM;
		r->frames = grown;
		*cap = grow;
	}
	out = r->frames + *used;
	memcpy(out, key, head * sizeof *key);
	at = head;
	if (depth > head) {
		uint64_t seg = key[head];
		want = (depth - head - 1) % seg_frames + 1;
		while (at < depth) {
			const uint64_t *s = seg && seg < UINT32_MAX
						    ? intern_key(c, &root->stack_segs, (uint32_t)seg, &len)
						    : NULL;
			if (!s || len != want + 1 || want > depth - at)
				return 0;
			memcpy(out + at, s + 1, want * sizeof *s);
			at += want;
			seg = s[0];
			want = seg_frames;
		}
		if (seg) /* the chain goes on past the stack's depth */
			return 0;
	}
	*used += depth;
	return depth;
}

/* Reads the stacks: c->rec.stacks[id] for ids 1..nstacks-1. */
static int read_stacks(struct hp_core *c, const struct hp_root *root)
{
	struct hp_core_rec *r = &c->rec;
	int ok = 1;
	uint32_t n = rd32(c, root->stacks.addr + root->stacks.count_off, &ok), bad = 0;
	size_t cap = 0, used = 0;

	/* Each id has an entry of entry_bytes in the core: a count past what
	 * the core could hold is damage, not a reason to allocate. */
	if (!ok || n == 0 || n > ((uint64_t)root->stacks.entries_max << root->stacks.chunk_bits) ||
	    n > c->map_bytes / root->stacks.entry_bytes)
		n = 1;
	r->stacks = calloc(n, sizeof *r->stacks);
	if (!r->stacks)
		return -ENOMEM;
	r->nstacks = n;
	for (uint32_t id = 1; id < n; id++) {
		int64_t depth;

		if (root->version < 7) { /* the frames in the key, in the core */
			r->stacks[id].frames =
				intern_key(c, &root->stacks, id, &r->stacks[id].depth);
			if (!r->stacks[id].frames) {
				r->stacks[id].depth = 0;
				bad++;
			}
			continue;
		}
		depth = read_chained(c, root, id, &cap, &used);
		if (depth < 0)
			return (int)depth;
		/* the frames' offset, until r->frames stops moving */
		r->stacks[id].frames = (const uint64_t *)(uintptr_t)(used - (size_t)depth);
		r->stacks[id].depth = (uint32_t)depth;
		bad += !depth;
	}
	for (uint32_t id = 1; root->version >= 7 && id < n; id++)
		r->stacks[id].frames =
			r->stacks[id].depth ? r->frames + (uintptr_t)r->stacks[id].frames : NULL;
	if (bad)
		hp_core_note(c, "%u of the recorder's %u stacks are not in the core: their "
				"frames are not shown", bad, n - 1);
	return 0;
}

/* The address of bucket id's counters (its head since layout 6), or 0
 * when its chunk is absent; with tail, the address of its tail in *tail
 * (layout 6 on; before, the bucket's). */
static uint64_t bucket_addr(const struct hp_core *c, const struct hp_root *root, uint32_t id,
			    uint64_t *tail)
{
	int ok = 1;
	uint32_t chunk = id >> root->bucket_chunk_bits;
	uint64_t base;

	if (chunk >= root->bucket_chunks)
		return 0;
	base = rd64(c, root->bucket_chunk_addr + (uint64_t)chunk * 8, &ok);
	if (!ok || !base)
		return 0;
	if (tail)
		*tail = root->version >= 6
				? base + root->bucket_tail_off +
					  (uint64_t)(id & ((1u << root->bucket_chunk_bits) - 1)) *
						  root->bucket_tail_bytes
				: base + (uint64_t)(id & ((1u << root->bucket_chunk_bits) - 1)) *
						 root->bucket_bytes;
	return base + (uint64_t)(id & ((1u << root->bucket_chunk_bits) - 1)) * root->bucket_bytes;
}

/* Reads one bucket into the next c->rec.buckets slot; 1 when it holds
 * counts, 0 when not, -ENOMEM. */
static int read_bucket(struct hp_core *c, const struct hp_root *root, uint32_t id,
		       uint64_t epoch, size_t *cap)
{
	struct hp_core_rec *r = &c->rec;
	struct hp_core_rec_bucket *b;
	uint64_t tail = 0, at = bucket_addr(c, root, id, &tail), v[8];
	/* The second four counters: since layout 3 where the root says (in
	 * the bucket's tail since layout 6), before right after the first
	 * four. */
	uint32_t off2 = root->version >= 3 ? root->bucket_counters2_off
					   : root->bucket_counters_off + 32;
	const void *p, *p2;
	int ok = 1;

	if (!at || !(p = hp_core_mem(c, at + root->bucket_counters_off, 4 * sizeof *v)) ||
	    !(p2 = hp_core_mem(c, tail + off2, 4 * sizeof *v)))
		return 0;
	memcpy(v, p, 4 * sizeof *v);
	memcpy(v + 4, p2, 4 * sizeof *v);
	if (!v[0])
		return 0;
	if (r->nbuckets == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		void *grown = realloc(r->buckets, n * sizeof *r->buckets);
		if (!grown)
			return -ENOMEM;
		r->buckets = grown;
		*cap = n;
	}
	b = &r->buckets[r->nbuckets++];
	memset(b, 0, sizeof *b);
	b->id = id;
	if (id < root->keyed_first) {
		b->stack = id - 1;
		if (root->version >= 2) /* the origin the default bucket counts for */
			b->origin_tag = rd32(c, at + root->bucket_tag_off, &ok) &
					(uint32_t)((1ull << root->tag_origin_bits) - 1);
	} else {
		uint32_t len;
		const uint64_t *key = intern_key(c, &root->keys, id - root->keyed_first + 1, &len);
		b->stack = key && len == 3 && key[0] < r->nstacks ? (uint32_t)key[0] : 0;
		b->size = key && len == 3 ? key[2] : 0;
		b->type_tag = key && len == 3 ? (uint32_t)(key[1] >> 32) : 0;
		b->origin_tag = key && len == 3 ? (uint32_t)key[1] : 0;
	}
	b->alloc_count = v[0];
	b->alloc_bytes = v[1];
	b->free_count = v[2];
	b->free_bytes = v[3];
	b->temp_count = v[4];
	b->temp_bytes = v[5];
	if (rd64(c, at + root->bucket_epoch_off, &ok) == epoch && ok) {
		b->peak_count = v[6];
		b->peak_bytes = v[7];
	} else {
		b->peak_count = v[0] - v[2];
		b->peak_bytes = v[1] - v[3];
	}
	b->torn = rd32(c, at + root->bucket_lock_off, &ok) != 0;
	r->torn_buckets += b->torn;
	return 1;
}

static int cmp_bucket_id(const void *a, const void *b)
{
	const struct hp_core_rec_bucket *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int read_buckets(struct hp_core *c, const struct hp_root *root)
{
	struct hp_core_rec *r = &c->rec;
	size_t cap = 0;
	int ok = 1, ret;
	uint64_t epoch = rd64(c, root->peak_epoch_addr, &ok);
	uint32_t keys = rd32(c, root->keys.addr + root->keys.count_off, &ok);

	r->in_use_bytes = rd64(c, root->in_use_bytes_addr, &ok);
	/* Less the threads' credit (layout 4): counted in use, not allocated. */
	for (uint32_t i = 0; root->version >= 4 && i < root->credit_slots; i++) {
		int credit_ok = 1;
		uint64_t credit = rd64(c, root->credit_addr + (uint64_t)i * root->credit_bytes,
				       &credit_ok);
		if (credit_ok && credit <= r->in_use_bytes)
			r->in_use_bytes -= credit;
	}
	int rate_ok = 1;

	r->sample_rate = rd64(c, root->sample_rate_addr, &rate_ok);
	if (!rate_ok)
		hp_core_note(c, "the recorder's sampling rate is not in the core: its figures are "
				"shown as recorded, not unbiased");
	/* The raw bytes at the peak are kept apart in sampled mode only. */
	r->peak_bytes = rd64(c, r->sample_rate > 1 ? root->peak_bytes_addr : root->peak_weight_addr,
			     &ok);
	for (uint32_t id = 1; id <= r->nstacks; id++)
		if ((ret = read_bucket(c, root, id, epoch, &cap)) < 0)
			return ret;
	if (keys > 1 && keys <= ((uint64_t)root->keys.entries_max << root->keys.chunk_bits) &&
	    keys <= c->map_bytes / root->keys.entry_bytes)
		for (uint32_t k = 1; k < keys; k++)
			if ((ret = read_bucket(c, root, root->keyed_first + k - 1, epoch, &cap)) <
			    0)
				return ret;
	/* qsort and bsearch want a real array even for no element */
	if (r->nbuckets)
		hp_sort(r->buckets, r->nbuckets, sizeof *r->buckets, cmp_bucket_id);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct hp_core_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Adds [lo, lo + bytes) to the live register's memory (c->rec.tables). */
static int add_table(struct hp_core_rec *r, uint64_t lo, uint64_t bytes, size_t *cap)
{
	if (r->ntables == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		void *grown = realloc(r->tables, n * sizeof *r->tables);
		if (!grown)
			return -ENOMEM;
		r->tables = grown;
		*cap = n;
	}
	r->tables[r->ntables].lo = lo;
	r->tables[r->ntables++].hi = lo + bytes < lo ? UINT64_MAX : lo + bytes;
	return 0;
}

static const struct hp_core_rec_bucket *bucket_by_id(const struct hp_core_rec *r, uint32_t id)
{
	struct hp_core_rec_bucket want = {.id = id};
	if (!r->nbuckets)
		return NULL;
	return hp_bsearch(&want, r->buckets, r->nbuckets, sizeof *r->buckets, cmp_bucket_id);
}

static int read_live(struct hp_core *c, const struct hp_root *root)
{
	struct hp_core_rec *r = &c->rec;
	size_t cap = 0, tcap = 0;
	int ok = 1, ret = 0;
	uint64_t shards = rd64(c, root->live_shards_addr, &ok);
	uint64_t bucket_mask = (UINT64_C(1) << root->bucket_bits) - 1;

	if (!ok || !shards) {
		hp_core_note(c, "the recorder's live register is not in the core");
		return 0;
	}
	if ((ret = add_table(r, shards, (uint64_t)root->live_shards * root->shard_bytes, &tcap)))
		return ret;
	for (uint32_t s = 0; s < root->live_shards; s++) {
		uint64_t sh = shards + (uint64_t)s * root->shard_bytes, table;
		uint32_t slots, live, found = 0;
		size_t first = r->nblocks;
		const unsigned char *t;
		int sok = 1;

		slots = rd32(c, sh + root->shard_slots_off, &sok);
		live = rd32(c, sh + root->shard_live_off, &sok);
		table = rd64(c, sh + root->shard_table_off, &sok);
		if (!sok) {
			r->missing_shards++;
			continue;
		}
		if (rd32(c, sh + root->shard_lock_off, &sok))
			r->locked_shards++;
		if (slots <= 1 || !live)
			continue;
		t = hp_core_mem(c, table, (uint64_t)slots * root->entry_bytes);
		if (!t) {
			r->missing_shards++;
			continue;
		}
		if ((ret = add_table(r, table, (uint64_t)slots * root->entry_bytes, &tcap)))
			return ret;
		for (uint32_t i = 0; i < slots; i++) {
			uint64_t e[2];
			struct hp_core_rec_block *b;
			const struct hp_core_rec_bucket *bk;
			memcpy(e, t + (size_t)i * root->entry_bytes, sizeof e);
			if (!e[0])
				continue;
			bk = bucket_by_id(r, (uint32_t)(e[1] & bucket_mask));
			if (!bk) {
				r->bad_entries++;
				continue;
			}
			if (r->nblocks == cap) {
				size_t n = cap ? cap * 2 : 1024;
				void *grown = realloc(r->blocks, n * sizeof *r->blocks);
				if (!grown)
					return -ENOMEM;
				r->blocks = grown;
				cap = n;
			}
			b = &r->blocks[r->nblocks++];
			b->addr = e[0];
			b->size = e[1] >> root->bucket_bits;
			if (root->size_bits && root->size_bits < 64)
				b->size &= (UINT64_C(1) << root->size_bits) - 1;
			b->bucket = bk->id;
			b->stack = bk->stack;
			b->reach = HP_CORE_UNKNOWN;
			if (b->size >= root->big_base) {
				uint64_t i_big = b->size - root->big_base;
				b->size = i_big < root->big_blocks
						  ? rd64(c, root->big_addr + i_big * root->big_bytes +
								    root->big_size_off, &sok)
						  : 0;
			}
			found++;
		}
		if (r->nblocks > first) {
			/* A removal caught in its backward shift: one address twice. */
			hp_sort(r->blocks + first, r->nblocks - first, sizeof *r->blocks, cmp_block);
			for (size_t i = first + 1, o = first + 1; i <= r->nblocks; i++) {
				if (i == r->nblocks) {
					r->duplicates += r->nblocks - o;
					r->nblocks = o;
					break;
				}
				if (r->blocks[i].addr != r->blocks[o - 1].addr)
					r->blocks[o++] = r->blocks[i];
			}
		}
		if (r->nblocks - first != live)
			r->miscounted_shards++;
	}
	if (r->nblocks)
		hp_sort(r->blocks, r->nblocks, sizeof *r->blocks, cmp_block);
	if (r->ntables)
		hp_sort(r->tables, r->ntables, sizeof *r->tables, cmp_range);
	return 0;
}

/* The blocks whose free a thread was inside at the dump (root version 5,
 * hp_core_rec.unfreed): each thread's slot, at its thread pointer +
 * self_tpoff. A block the recorder counted freed but the real free never
 * let go of (glibc aborted in it) is in use: back into blocks[] and out of
 * its bucket's frees. */
static int read_unfreed(struct hp_core *c, const struct hp_root *root)
{
	struct hp_core_rec *r = &c->rec;

	if (root->version < 5)
		return 0;
	for (size_t i = 0; i < c->nthreads; i++) {
		uint64_t self = c->threads[i].regs[HP_CORE_REG_FS_BASE] + root->self_tpoff;
		int ok = 1;
		uint64_t addr = ~rd64(c, self + root->freeing_off, &ok);
		uint64_t size = rd64(c, self + root->freeing_size_off, &ok);
		uint32_t bucket = rd32(c, self + root->freeing_bucket_off, &ok);
		const unsigned char *temp = hp_core_mem(c, self + root->freeing_temp_off, 1);
		struct hp_core_rec_bucket *bk;
		struct hp_core_rec_block *b;
		void *grown;

		if (!ok || !temp || addr == ~UINT64_C(0) || !c->threads[i].regs[HP_CORE_REG_FS_BASE])
			continue;
		bk = (struct hp_core_rec_bucket *)bucket_by_id(r, bucket);
		if (!bk || !bk->free_count || bk->free_bytes < size)
			continue; /* not a free this bucket counted */
		bk->free_count--;
		bk->free_bytes -= size;
		if (*temp && bk->temp_count && bk->temp_bytes >= size) {
			bk->temp_count--;
			bk->temp_bytes -= size;
		}
		r->in_use_bytes += size;
		grown = realloc(r->blocks, (r->nblocks + 1) * sizeof *r->blocks);
		if (!grown)
			return -ENOMEM;
		r->blocks = grown;
		b = &r->blocks[r->nblocks++];
		memset(b, 0, sizeof *b);
		b->addr = addr;
		b->size = size;
		b->bucket = bk->id;
		b->stack = bk->stack;
		b->reach = HP_CORE_UNKNOWN;
		r->unfreed++;
		hp_sort(r->blocks, r->nblocks, sizeof *r->blocks, cmp_block);
	}
	if (r->unfreed)
		hp_core_note(c, "%zu block(s) being freed when the process died (the free did not "
				"return: glibc refused it): counted in use", r->unfreed);
	return 0;
}

/* Appends a tag to c->rec.tags. */
static int add_tag(struct hp_core_rec *r, size_t *cap, const struct hp_core_rec_tag *t)
{
	if (r->ntags == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct hp_core_rec_tag *g = realloc(r->tags, n * sizeof *g);
		if (!g)
			return -ENOMEM;
		r->tags = g;
		*cap = n;
	}
	r->tags[r->ntags++] = *t;
	return 0;
}

/* The count of an interning table (ids 1..count-1), bounded by its
 * entries; 0 when unreadable. */
static uint32_t intern_count(const struct hp_core *c, const struct hp_root_intern *t)
{
	int ok = 1;
	uint32_t n = rd32(c, t->addr + t->count_off, &ok);
	uint64_t most = (uint64_t)t->entries_max << t->chunk_bits;

	return ok ? (n > most ? (uint32_t)most : n) : 0;
}

/* The name a key holds from word at: its length, then its bytes, within
 * the key's len words. */
static void key_name(const uint64_t *key, uint32_t len, uint32_t at, struct hp_core_rec_tag *t)
{
	t->name = "";
	t->len = 0;
	if (at < len && key[at] <= (uint64_t)(len - at - 1) * 8) {
		t->name = (const char *)&key[at + 1];
		t->len = (size_t)key[at];
	}
}

/* Reads the tag tables of a version 2 root: c->rec.tags. An entry that
 * is not in the core is left out (its id then shows as unknown). */
static int read_tags(struct hp_core *c, const struct hp_root *root)
{
	struct hp_core_rec *r = &c->rec;
	size_t cap = 0;
	uint32_t n, len;
	const uint64_t *key;
	int ok = 1;

	if (root->version < 2)
		return 0;
	n = intern_count(c, &root->types);
	r->types = n;
	for (uint32_t id = 1; id < n; id++) {
		struct hp_core_rec_tag t = {.kind = HP_TAG_TYPE, .id = id};
		if (!(key = intern_key(c, &root->types, id, &len)) || len < 3)
			continue;
		t.a = key[0];
		t.b = key[1];
		/* An explicit type's shape (src/recorder/tags.c): b, its array
		 * cookie bytes, c, its element bytes, as the TAGS record has them. */
		if (t.a == HP_TYPE_EXPLICIT) {
			t.b = key[1] & 0xffff;
			t.c = key[1] >> 16;
		}
		key_name(key, len, 2, &t);
		if (add_tag(r, &cap, &t))
			return -ENOMEM;
	}
	n = intern_count(c, &root->contexts);
	for (uint32_t id = 1; id < n; id++) {
		struct hp_core_rec_tag t = {.kind = HP_TAG_CONTEXT, .id = id};
		if (!(key = intern_key(c, &root->contexts, id, &len)) || len < 2)
			continue;
		t.a = key[0];
		key_name(key, len, 1, &t);
		if (add_tag(r, &cap, &t))
			return -ENOMEM;
	}
	n = rd32(c, root->threads_used_addr, &ok);
	for (uint32_t id = 1; ok && id <= n && id <= root->threads_max; id++) {
		uint64_t e = root->threads_addr + (uint64_t)id * root->thread_bytes;
		const char *name = hp_core_mem(c, e, 16);
		int eok = 1;
		uint32_t tid = rd32(c, e + root->thread_tid_off, &eok);
		uint32_t gen = rd32(c, e + root->thread_gen_off, &eok);
		if (!name || !eok || !gen)
			continue;
		if (add_tag(r, &cap, &(struct hp_core_rec_tag){.kind = HP_TAG_THREAD, .id = id,
							       .a = tid, .name = name,
							       .len = strnlen(name, 16)}))
			return -ENOMEM;
	}
	ok = 1;
	n = rd32(c, root->heap_count_addr, &ok);
	if (!ok || n > root->heaps_max)
		n = 0;
	if (n && !(r->heap_peaks = calloc(n, sizeof *r->heap_peaks)))
		return -ENOMEM;
	for (uint32_t id = 1; id <= n; id++) {
		uint64_t e = root->heap_stats_addr + (uint64_t)id * root->heap_stat_bytes;
		struct hp_core_rec_heap *h = &r->heap_peaks[id - 1];
		int hok = 1;
		h->peak_bytes = rd64(c, e + root->heap_peak_bytes_off, &hok);
		h->peak_count = rd64(c, e + root->heap_peak_count_off, &hok);
		h->resets = rd64(c, e + root->heap_resets_off, &hok);
		if (!hok)
			*h = (struct hp_core_rec_heap){0};
	}
	r->nheaps = n;
	for (uint32_t id = 1; id <= n; id++) {
		const char *name =
			hp_core_mem(c, root->heap_names_addr + (uint64_t)id * root->heap_name_bytes,
				    root->heap_name_bytes);
		if (!name)
			continue;
		if (add_tag(r, &cap, &(struct hp_core_rec_tag){.kind = HP_TAG_HEAP, .id = id,
							       .name = name,
							       .len = strnlen(name, root->heap_name_bytes)}))
			return -ENOMEM;
	}
	n = intern_count(c, &root->origins);
	for (uint32_t id = 1; id < n; id++) {
		if (!(key = intern_key(c, &root->origins, id, &len)) || len < 2)
			continue;
		if (add_tag(r, &cap, &(struct hp_core_rec_tag){.kind = HP_TAG_ORIGIN, .id = id,
							       .a = key[0], .b = key[1] >> 32,
							       .c = key[1] & 0xffffffffu}))
			return -ENOMEM;
	}
	return 0;
}

int hp_core_recorder(struct hp_core *c)
{
	struct hp_core_rec *r = &c->rec;
	struct hp_root root;
	const struct hp_core_module *lib = NULL;
	int ret;

	memset(r, 0, sizeof *r);
	ret = find_root(c, &root, &lib);
	if (lib)
		r->lib = lib->path;
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return 0; /* noted */
	if ((ret = read_stacks(c, &root)) || (ret = read_buckets(c, &root)) ||
	    (ret = read_live(c, &root)) || (ret = read_unfreed(c, &root)) ||
	    (ret = read_tags(c, &root)))
		return ret;
	if (r->torn_buckets)
		hp_core_note(c, "%zu of the recorder's buckets were being updated at the dump "
				"(marked torn): their counts may differ by one allocation",
			     r->torn_buckets);
	if (r->locked_shards || r->bad_entries || r->duplicates || r->miscounted_shards)
		hp_core_note(c, "the live register was being updated at the dump: %zu shard(s) "
				"locked, %zu entries naming no bucket dropped, %zu duplicated, "
				"%zu shard(s) whose count differs",
			     r->locked_shards, r->bad_entries, r->duplicates,
			     r->miscounted_shards);
	if (r->missing_shards)
		hp_core_note(c, "%zu shard(s) of the live register are not in the core: their "
				"blocks are not listed", r->missing_shards);
	r->found = 1;
	return 0;
}

void hp_core_rec_free(struct hp_core_rec *r)
{
	free(r->stacks);
	free(r->frames);
	free(r->buckets);
	free(r->blocks);
	free(r->tables);
	free(r->tags);
	free(r->heap_peaks);
	memset(r, 0, sizeof *r);
}
