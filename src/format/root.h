/*
 * root.h - the recorder's root: where its tables are, for a reader of a
 * core dump (heapprof core, docs/core.md, "A core of a program that ran
 * under heapprof").
 *
 * libheapprof.so exports one data symbol, heapprof_root, a struct hp_root
 * filled once at init, after the tables are set up and before recording
 * starts, and never written again. It holds a magic, a layout version and
 * the addresses of the tables with the offsets and sizes of their fields,
 * so that the analyzer reads a core without guessing a layout: the
 * analyzer finds the symbol's address in libheapprof's symbols plus the
 * load bias, checks magic and version, and follows the addresses in the
 * core. A change of any layout below bumps HP_ROOT_VERSION.
 *
 * This header is pure layout (fixed-width fields, no pointers of the
 * host), a contract between the recorder that fills it and heapprof core
 * that reads it (src/analyzer/core/core_rec.c), as the capture format is
 * between the recorder and the capture reader. The recorder's functions
 * that fill it are in src/recorder/root.h. Nothing here is on the hot
 * path.
 */
#ifndef HP_FORMAT_ROOT_H
#define HP_FORMAT_ROOT_H

#include <stddef.h>
#include <stdint.h>

#define HP_ROOT_MAGIC UINT64_C(0x746f6f7270616568) /* "heaproot", little-endian */
/* 2 added the tag tables (the fields from types on); a reader takes a
 * version 1 root of HP_ROOT_V1_BYTES without them. 3 moved a bucket's
 * last four counters (bucket_counters2_off, where version 2 had padding;
 * a version 2 root has them right after the first four). */
#define HP_ROOT_VERSION 7u
/* 4 added the threads' credit (credit_addr on); a version 3 root (or 2) is
 * HP_ROOT_V3_BYTES long. 5 added the thread-local block being freed
 * (self_tpoff on); a version 4 root is HP_ROOT_V4_BYTES long. 6 split a
 * bucket in a head and a tail (bucket_tail_off on); a version 5 root is
 * HP_ROOT_V5_BYTES long. 7 chained the stack table's keys (stack_segs
 * on); a version 6 root is HP_ROOT_V6_BYTES long, its stacks' keys their
 * frames. */

/* An interning table (intern.h): struct hp_intern at its address; its
 * count (u32, ids 1..count-1 exist) and its entry-chunk pointers (an array
 * of entries_max pointers, each to 1 << chunk_bits entries of entry_bytes:
 * the key's address at offset 0, its length in words, u32, at 8). */
struct hp_root_intern {
	uint64_t addr;
	uint32_t count_off, entries_off;
	uint32_t entries_max, chunk_bits;
	uint32_t entry_bytes, pad;
};

struct hp_root {
	uint64_t magic;
	uint32_t version;
	uint32_t root_bytes; /* sizeof (struct hp_root) */

	/* The stack table (stacks.c): keys are return addresses, innermost
	 * first; id 0 is "no stack". Since version 7 an entry's length is
	 * the stack's depth, but a stack deeper than stack_head_frames keeps
	 * only its first stack_head_frames frames in its key, then a word:
	 * the id of its first segment in stack_segs (at the root's end). */
	struct hp_root_intern stacks;
	/* The keyed buckets' keys (aggregate.c): 3 words, stack id, type tag
	 * << 32 | context tag, size; the key of id k is bucket
	 * keyed_first + k - 1. A bucket below keyed_first is the default
	 * bucket of stack id - 1. */
	struct hp_root_intern keys;
	uint32_t keyed_first;
	/* The buckets: chunks (the address of an array of bucket_chunks
	 * pointers), each of 1 << chunk_bits buckets of bucket_bytes; in a
	 * bucket, the lock word (u32) at lock_off, the peak epoch (u64) at
	 * epoch_off, four u64 counters from counters_off (alloc count, alloc
	 * bytes, free count, free bytes) and four from counters2_off
	 * (temporary count and bytes, count and bytes at the peak, valid when
	 * the bucket's epoch is the global one, else its in-use values are;
	 * before version 3, at counters_off + 32). */
	uint32_t bucket_chunks;
	uint64_t bucket_chunk_addr;
	uint32_t bucket_chunk_bits, bucket_bytes;
	uint32_t bucket_lock_off, bucket_epoch_off;
	uint32_t bucket_counters_off, bucket_counters2_off;
	/* Addresses of the global u64s (aggregate.c): the peak's epoch, the
	 * raw bytes in use, the largest estimate of the bytes in use (the
	 * peak; raw in a full recording), the raw bytes in use at that peak
	 * (sampled mode only), the sampling rate (1: every allocation). */
	uint64_t peak_epoch_addr, in_use_bytes_addr, peak_weight_addr, peak_bytes_addr;
	uint64_t sample_rate_addr;

	/* The live register (live.c): at live_shards_addr, the address of an
	 * array of live_shards shards of shard_bytes; in a shard, the lock
	 * word (u32), the slot count (u32: 1 before the first table) and the
	 * live count (u32) and the table's address at their offsets. An entry
	 * is entry_bytes: the address (u64, 0 = empty) at 0, then a u64 with
	 * the bucket in its low bucket_bits bits and the size in the
	 * size_bits above (0: all of them, before the birth stamp took the
	 * top 16); a size field of big_base + i or more names slot i of the big-block table
	 * (big_blocks slots of big_bytes at big_addr, the size a u64 at
	 * big_size_off). */
	uint64_t live_shards_addr;
	uint32_t live_shards, shard_bytes;
	uint32_t shard_lock_off, shard_slots_off;
	uint32_t shard_live_off, shard_table_off;
	uint32_t entry_bytes, bucket_bits;
	uint64_t big_base;
	uint64_t big_addr;
	uint32_t big_blocks, big_bytes;
	uint32_t big_size_off, size_bits;

	/* Since version 2, the tag tables (tags.c, the TAGS record's
	 * entries): types (keys: source, vtable, name length in bytes, the
	 * name 8 bytes a word), contexts (parent, name length, name), origins
	 * (context, thread << 32 | heap). Threads: at threads_addr an array
	 * of threads_max + 1 entries of thread_bytes (id i at index i): the
	 * name, 16 bytes NUL-padded, at 0, the tid (u32) at thread_tid_off,
	 * a generation (u32, 0: unused) at thread_gen_off; the ids handed
	 * out (u32) at threads_used_addr. Heaps: heap_names_addr holds
	 * heaps_max + 1 names of heap_name_bytes (id i at index i, NUL-
	 * terminated), heap_count (u32) at heap_count_addr. */
	struct hp_root_intern types, contexts, origins;
	uint64_t threads_addr, threads_used_addr;
	uint32_t threads_max, thread_bytes;
	uint32_t thread_tid_off, thread_gen_off;
	uint64_t heap_names_addr, heap_count_addr;
	uint32_t heaps_max, heap_name_bytes;
	/* A bucket's tag word (u32) at bucket_tag_off: in a stack's default
	 * bucket (below keyed_first) the origin it counts for in bits
	 * 0..tag_origin_bits-1 (a keyed bucket's origin is in its key). */
	uint32_t bucket_tag_off, tag_origin_bits;
	/* Each custom heap's own figures (aggregate.c): heaps_max + 1
	 * entries of heap_stat_bytes at heap_stats_addr (id i at index i),
	 * the u64s peak bytes, the blocks in use then, and resets at their
	 * offsets. */
	uint64_t heap_stats_addr;
	uint32_t heap_stat_bytes, heap_peak_bytes_off;
	uint32_t heap_peak_count_off, heap_resets_off;
	/* Since version 4: the threads' credit (aggregate.c), bytes counted in
	 * the bytes in use but not allocated: credit_slots slots of
	 * credit_bytes at credit_addr, each a u64 of credit at offset 0. */
	uint64_t credit_addr;
	uint32_t credit_slots, credit_bytes;
	/* Since version 5: each thread's recorder state is at its thread
	 * pointer (x86-64: fs_base) + self_tpoff (two's complement); in it,
	 * the block whose free the thread was inside (a u64, complemented;
	 * 0: none) at freeing_off, its size (u64) at freeing_size_off, its
	 * bucket (u32) at freeing_bucket_off and whether its free was counted
	 * as a temporary (u8) at freeing_temp_off. Its free is counted in its
	 * bucket, but the real free had not returned: glibc may have aborted
	 * in it (recorder.c, thread.h). */
	uint64_t self_tpoff;
	uint32_t freeing_off, freeing_size_off;
	uint32_t freeing_bucket_off, freeing_temp_off;
	/* Since version 6: a bucket chunk holds 1 << bucket_chunk_bits heads
	 * of bucket_bytes (a bucket's lock, tag, epoch and first four
	 * counters), then, from bucket_tail_off bytes into the chunk, as many
	 * tails of bucket_tail_bytes, in the same order: bucket_counters2_off
	 * is the offset of the second four counters in a tail (before, in the
	 * bucket). */
	uint32_t bucket_tail_off, bucket_tail_bytes;
	/* Since version 7: the segments of the stacks' frames past their
	 * first stack_head_frames (stacks.c, intern.h's chained keys). A
	 * segment's key is the id of the next segment outwards (0: none),
	 * then its frames, innermost first; a stack's first segment holds
	 * (depth - stack_head_frames - 1) % stack_seg_frames + 1 frames,
	 * every one after it stack_seg_frames, the last ending the stack. */
	struct hp_root_intern stack_segs;
	uint32_t stack_head_frames, stack_seg_frames;
};

#define HP_ROOT_V1_BYTES ((uint32_t)offsetof(struct hp_root, types))
#define HP_ROOT_V3_BYTES ((uint32_t)offsetof(struct hp_root, credit_addr))
#define HP_ROOT_V4_BYTES ((uint32_t)offsetof(struct hp_root, self_tpoff))
#define HP_ROOT_V5_BYTES ((uint32_t)offsetof(struct hp_root, bucket_tail_off))
#define HP_ROOT_V6_BYTES ((uint32_t)offsetof(struct hp_root, stack_segs))

#endif
