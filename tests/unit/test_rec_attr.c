/*
 * test_rec_attr.c - attribution's tables and moves (src/recorder/tags.h,
 * attr.h, aggregate.h): TAGS entries encoded once each and decoded back
 * (a renamed thread again), the thread cap, a custom heap's reset through
 * the live register (its blocks apart from malloc's at the same address),
 * its own peak, explicit types moving a block with its allocation and
 * at-peak value, and a stack's default bucket claimed by one origin.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../src/format/decode.h"
#include "../../src/format/records.h"
#include "../../src/recorder/aggregate.h"
#include "../../src/recorder/attr.h"
#include "../../src/recorder/live.h"
#include "../../src/recorder/stacks.h"
#include "../../src/recorder/tags.h"
#include "../harness/harness.h"
#include "rec_seam.h"

static struct hp_tags_mark written, pending;

static int grow(struct hp_buf *b, size_t need)
{
	static uint8_t mem[1 << 16];
	(void)need;
	b->data = mem;
	b->cap = sizeof mem;
	return need <= sizeof mem ? 0 : -12;
}

/* Encodes the new tags, decodes them into tags[], and commits the marks.
 * Returns the number of entries. */
static uint32_t encode(struct hp_rec_tag *tags, uint32_t cap)
{
	struct hp_buf b = {.grow = grow};
	struct hp_cursor c;
	uint64_t n = 0;
	uint32_t count;

	memcpy(&pending, &written, sizeof pending);
	count = hp_tags_encode(&b, &written, &pending);
	memcpy(&written, &pending, sizeof written);
	if (!count)
		return 0;
	c = (struct hp_cursor){.p = b.data, .end = b.data + b.len};
	expect_eq_u64(hp_rec_count_get(&c, HP_REC_TAG_MIN_BYTES, &n), 0, "count decodes");
	expect_eq_u64(n, count, "the count written");
	for (uint32_t i = 0; i < n && i < cap; i++)
		expect_eq_u64(hp_rec_tag_get(&c, &tags[i]), 0, "a tag decodes");
	return count;
}

static int has(const struct hp_rec_tag *t, uint32_t n, unsigned kind, uint64_t id, uint64_t a,
	       uint64_t b, uint64_t c, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (t[i].kind == kind && t[i].id == id && t[i].a == a && t[i].b == b &&
		    t[i].c == c && t[i].name.len == strlen(name) &&
		    memcmp(t[i].name.p, name, t[i].name.len) == 0)
			return 1;
	return 0;
}

HP_TEST(tags_are_written_once_and_renames_again)
{
	struct hp_rec_tag t[16];
	uint32_t n, outer, inner, th, heap, origin, type;

	expect_eq_u64(hp_tags_init(), 0, "init");
	memset(&written, 0, sizeof written);
	outer = hp_tags_context(0, "outer");
	inner = hp_tags_context(outer, "inner");
	expect_eq_u64(hp_tags_context(0, "outer"), outer, "a context by content");
	expect_true(inner != outer, "same name elsewhere, another id");
	th = hp_tags_thread_new(4242, "worker");
	heap = hp_tags_heap_new("arena");
	origin = hp_tags_origin(inner, th, heap);
	type = hp_tags_type(HP_TYPE_EXPLICIT, 0, "struct point");
	expect_eq_u64(hp_tags_type(HP_TYPE_EXPLICIT, 0, "struct point"), type, "a type by content");
	expect_true(hp_tags_type_is(type, "struct point"), "type_is");
	expect_true(!hp_tags_type_is(type, "struct poin"), "type_is compares the whole name");
	n = encode(t, 16);
	expect_eq_u64(n, 6, "two contexts, a thread, a heap, an origin, a type");
	expect_true(has(t, n, HP_TAG_CONTEXT, outer, 0, 0, 0, "outer"), "outer");
	expect_true(has(t, n, HP_TAG_CONTEXT, inner, outer, 0, 0, "inner"), "inner, in outer");
	expect_true(has(t, n, HP_TAG_THREAD, th, 4242, 0, 0, "worker"), "the thread");
	expect_true(has(t, n, HP_TAG_HEAP, heap, 0, 0, 0, "arena"), "the heap");
	expect_true(has(t, n, HP_TAG_ORIGIN, origin, inner, th, heap, ""), "the origin");
	expect_true(has(t, n, HP_TAG_TYPE, type, HP_TYPE_EXPLICIT, 0, 0, "struct point"), "type");
	expect_eq_u64(encode(t, 16), 0, "nothing new: no record");
	hp_tags_thread_set(th, 4242, "worker");
	expect_eq_u64(encode(t, 16), 0, "the same name: nothing");
	hp_tags_thread_set(th, 4242, "renamed");
	n = encode(t, 16);
	expect_eq_u64(n, 1, "a rename: the thread again");
	expect_true(has(t, n, HP_TAG_THREAD, th, 4242, 0, 0, "renamed"), "its new name");
	type = hp_tags_type(HP_TYPE_VTABLE, 0x5000, NULL);
	n = encode(t, 16);
	expect_true(n == 1 && has(t, n, HP_TAG_TYPE, type, HP_TYPE_VTABLE, 0x5000, 0, ""),
		    "a vtable type: its address, no name");
}

HP_TEST(threads_past_the_cap_share_one_id)
{
	uint32_t id = 0, last = 0;

	expect_eq_u64(hp_tags_init(), 0, "init");
	for (uint32_t i = 0; i < HP_TAGS_MAX_THREADS + 10; i++) {
		last = id;
		id = hp_tags_thread_new(i + 1, "t");
	}
	expect_eq_u64(id, HP_TAGS_MAX_THREADS, "the last id");
	expect_eq_u64(last, HP_TAGS_MAX_THREADS, "shared");
}

/* First of the tests that count in buckets: the bucket chunks outlive
 * hp_agg_init, and this one needs its stack's default bucket unclaimed. */
HP_TEST(set_type_moves_the_block_with_its_history)
{
	uint64_t frames[1] = {0x403000};
	struct hp_live_block blk;
	struct hp_rec_bucket v;
	uint32_t stack, origin, b, typed, stack2;
	struct hp_attr a = {0};

	expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1), 0, "stacks");
	expect_eq_u64(hp_agg_init(), 0, "buckets");
	expect_eq_u64(hp_live_init(0), 0, "register");
	expect_eq_u64(hp_tags_init(), 0, "tags");
	stack = hp_stacks_intern(frames, 1);
	origin = hp_tags_origin(0, 1, 0);
	b = hp_agg_bucket(stack, 0, origin, 0);
	expect_eq_u64(b, stack + 1, "the stack's default bucket, claimed by the origin");
	expect_true(hp_agg_bucket(stack, 0, hp_tags_origin(0, 2, 0), 0) != b,
		    "another origin: a keyed bucket");
	for (uintptr_t p = 0x1000; p < 0x1000 + 4 * 32; p += 32) {
		hp_live_insert(p, b, 24, &blk);
		hp_agg_alloc(b, 24); /* each a new peak */
	}
	hp_live_remove(0x1000, &blk, 1);
	hp_agg_free(b, 24, 0, HP_AGG_LIFE_UNKNOWN);
	expect_eq_u64(hp_attr_set_type(&a, (void *)0x1020, "struct point"), 0, "typed");
	expect_eq_u64(hp_attr_set_type(&a, (void *)0x1040, "struct point"), 0, "typed");
	expect_eq_u64(hp_attr_set_type(&a, (void *)0x1000, "struct point"), -ENOENT, "freed");
	typed = hp_agg_bucket(stack, a.type_id, origin, 0);
	hp_agg_read(typed, &v);
	expect_eq_u64(v.alloc_count, 2, "typed: allocated");
	expect_eq_u64(v.alloc_bytes, 48, "typed: bytes");
	expect_eq_u64(v.peak_count, 2, "typed: at the peak");
	hp_agg_read(b, &v);
	expect_eq_u64(v.alloc_count, 2, "untyped: the freed one and the untyped one");
	expect_eq_u64(v.free_count, 1, "untyped: freed");
	expect_eq_u64(v.peak_count, 2, "untyped: its two at the peak");
	expect_eq_u64(v.origin_tag, origin, "a default bucket reads back its origin");
	hp_agg_key(typed, &stack2, &v.type_tag, &v.origin_tag, &v.size);
	expect_eq_u64(stack2, stack, "the typed bucket's stack");
	expect_eq_u64(v.origin_tag, origin, "and origin");
}

/* heapprof_set_type_array (issue 26): new A[5] of an A with a destructor
 * is a block of 28 bytes whose first element is 8 bytes in (the array
 * cookie); the block is found there, named with its element and cookie
 * bytes; a block that is no whole array of the type keeps its own. */
HP_TEST(set_type_array_finds_the_block_before_the_cookie)
{
	uint64_t frames[1] = {0x406000};
	struct hp_live_block blk;
	struct hp_rec_bucket v, v0;
	uint32_t stack, origin, b, typed;
	struct hp_attr a = {0};

	expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1), 0, "stacks");
	expect_eq_u64(hp_agg_init(), 0, "buckets");
	expect_eq_u64(hp_live_init(0), 0, "register");
	expect_eq_u64(hp_tags_init(), 0, "tags");
	stack = hp_stacks_intern(frames, 1);
	origin = hp_tags_origin(0, 1, 0);
	b = hp_agg_bucket(stack, 0, origin, 0);
	hp_live_insert(0x2000, b, 28, &blk); /* new A[5] */
	hp_live_insert(0x3000, b, 16, &blk); /* new T, sizeof(T) 16 */
	hp_live_insert(0x4000, b, 100, &blk); /* a chunk: T placed at its start */
	for (int i = 0; i < 3; i++)
		hp_agg_alloc(b, i == 0 ? 28 : i == 1 ? 16 : 100);
	/* (The bucket's chunk may hold an earlier test's figures: deltas.) */
	hp_agg_read(b, &v0);
	expect_eq_u64(hp_attr_set_type_array(&a, (void *)0x2008, "A", 4, 8), 0,
		      "found 8 bytes before the first element");
	expect_eq_u64(a.type_shape, hp_tags_shape(4, 8), "named with its element and cookie bytes");
	expect_true(hp_tags_type_is_shaped(a.type_id, "A", hp_tags_shape(4, 8)), "the type's key");
	expect_true(!hp_tags_type_is(a.type_id, "A"), "not the plain name's type");
	typed = hp_agg_bucket(stack, a.type_id, origin, 0);
	hp_agg_read(typed, &v);
	expect_eq_u64(v.alloc_count, 1, "typed: one block");
	expect_eq_u64(v.alloc_bytes, 28, "typed: its bytes, cookie included");
	expect_eq_u64(hp_attr_set_type_array(&a, (void *)0x3000, "T", 16, 8), 0,
		      "new T: the block starts at the object");
	expect_eq_u64(a.type_shape, hp_tags_shape(16, 0), "no cookie there");
	expect_eq_u64(hp_attr_set_type_array(&a, (void *)0x4000, "T", 16, 8), -EINVAL,
		      "100 bytes are no array of 16: left as they are");
	expect_eq_u64(hp_attr_set_type_array(&a, (void *)0x5008, "T", 16, 8), -ENOENT,
		      "no block at either address");
	hp_agg_read(b, &v);
	expect_eq_u64(v0.alloc_count - v.alloc_count, 2, "untyped: two blocks moved out");
	expect_eq_u64(v0.alloc_bytes - v.alloc_bytes, 28 + 16, "untyped: the chunk's bytes stay");
	expect_eq_u64(hp_tags_shape(0, 8), 0, "no element bytes: a plain name");
	expect_eq_u64(hp_tags_shape(4, 0x10000), 0, "a cookie past 16 bits: a plain name");
}

HP_TEST(vtable_scan_reads_each_block_once)
{
	/* A snapshot's scan for C++ types reads the blocks allocated since
	 * the last scan (and a margin of 16 birth units, 1,024 blocks), not
	 * every live block again: with 100,000 live, the second scan read
	 * 101,000 before, the third 101,000 too. */
	enum { OLD = 100000, NEW = 1000, MARGIN = (16 + 2) * 64 };
	static uint64_t old_blocks[OLD][4], new_blocks[NEW][4]; /* 32 bytes each, zero */
	uint64_t frames[1] = {0x404000};
	struct hp_live_block blk;
	uint32_t b;
	uint64_t read;

	expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1), 0, "stacks");
	expect_eq_u64(hp_agg_init(), 0, "buckets");
	expect_eq_u64(hp_live_init(0), 0, "register");
	expect_eq_u64(hp_tags_init(), 0, "tags");
	b = hp_agg_bucket(hp_stacks_intern(frames, 1), 0, 0, 0);
	for (int i = 0; i < OLD; i++)
		hp_live_insert((uintptr_t)old_blocks[i], b, 32, &blk);
	expect_eq_u64(hp_attr_vtable_scan(), OLD, "the first scan reads every block");
	for (int i = 0; i < NEW; i++)
		hp_live_insert((uintptr_t)new_blocks[i], b, 32, &blk);
	read = hp_attr_vtable_scan();
	printf("  second scan: %llu blocks read of %d live\n", (unsigned long long)read,
	       OLD + NEW);
	expect_true(read >= NEW && read <= NEW + MARGIN,
		    "the second reads the new blocks and the margin only");
	read = hp_attr_vtable_scan();
	expect_true(read <= MARGIN, "a third, with nothing new: the margin only");
	for (int i = 0; i < NEW; i++)
		hp_live_remove((uintptr_t)new_blocks[i], &blk, 1);
	for (int i = 0; i < OLD; i++)
		hp_live_remove((uintptr_t)old_blocks[i], &blk, 1);
}

HP_TEST(heap_reset_frees_its_blocks_only)
{
	uint64_t frames[2] = {0x401000, 0x402000};
	struct hp_live_block blk;
	struct hp_rec_bucket v;
	struct hp_rec_heap_peak peak;
	uint32_t stack, heap, origin, mb, hb;
	uintptr_t addr = 0x7f0000100000;

	expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1), 0, "stacks");
	expect_eq_u64(hp_agg_init(), 0, "buckets");
	expect_eq_u64(hp_live_init(0), 0, "register");
	expect_eq_u64(hp_tags_init(), 0, "tags");
	/* Past the stacks and keyed buckets of the test before (their
	 * counters outlive hp_agg_init). */
	for (uint64_t i = 1; i <= 4; i++) {
		hp_stacks_intern(&i, 1);
		hp_agg_bucket(1, 99, 99, i);
	}
	stack = hp_stacks_intern(frames, 2);
	heap = hp_tags_heap_new("arena");
	origin = hp_tags_origin(0, 1, heap);
	mb = hp_agg_bucket(stack, 0, hp_tags_origin(0, 1, 0), 0);
	hb = hp_agg_bucket(stack, 0, origin, 0);
	expect_true(mb && hb && mb != hb, "a bucket each");
	/* The chunk at addr is malloc's; the heap's first block starts there. */
	expect_eq_u64(hp_live_insert(addr, mb, 4096, &blk), 0, "the chunk");
	hp_agg_alloc(mb, 4096);
	for (int i = 0; i < 3; i++) {
		expect_eq_u64(hp_live_insert(hp_attr_key((void *)(addr + 64 * i), heap), hb, 64,
					     &blk),
			      0, "a heap block, apart from the chunk");
		hp_agg_heap_alloc(hb, 64, heap);
	}
	hp_attr_heap_reset(heap);
	hp_agg_read(hb, &v);
	expect_eq_u64(v.free_count, 3, "every heap block freed");
	expect_eq_u64(v.peak_count, 3, "the heap bucket's peak: at the heap's peak");
	expect_eq_u64(v.peak_bytes, 192, "its bytes");
	hp_agg_heap_peak(heap, &peak);
	expect_eq_u64(peak.peak_bytes, 192, "the heap's peak");
	expect_eq_u64(peak.peak_count, 3, "its blocks");
	expect_eq_u64(peak.resets, 1, "one reset");
	{
		/* A heap block at the chunk's address again: set_type names
		 * it, not the chunk under it. */
		struct hp_attr a = {0};
		uint32_t typed;

		hp_live_insert(hp_attr_key((void *)addr, heap), hb, 64, &blk);
		hp_agg_heap_alloc(hb, 64, heap);
		expect_eq_u64(hp_attr_set_type(&a, (void *)addr, "struct token"), 0, "typed");
		typed = hp_agg_bucket(stack, a.type_id, origin, 0);
		hp_agg_read(typed, &v);
		expect_eq_u64(v.alloc_count, 1, "the heap's block named, not malloc's chunk");
		typed = hp_agg_bucket(stack, a.type_id, hp_tags_origin(0, 1, 0), 0);
		hp_agg_read(typed, &v);
		expect_eq_u64(v.alloc_count, 0, "the chunk keeps no type");
		hp_attr_heap_reset(heap);
	}
	expect_eq_u64(hp_live_remove(addr, &blk, 1), 1, "the chunk is still live");
	expect_eq_u64(blk.size, 4096, "with its size");
	hp_agg_read(mb, &v);
	expect_eq_u64(v.alloc_count - v.free_count, 1, "malloc's bucket untouched");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
