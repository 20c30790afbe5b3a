/*
 * craft.c - capture files built by hand (see craft.h).
 */
#include "craft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/format/records.h"
#include "harness.h"
#include "tools.h"

void hp_craft_begin(struct hp_craft *c)
{
	memset(c, 0, sizeof *c);
	c->file.grow = c->payload.grow = hp_buf_grow_heap;
	hp_format_put_file_header(&c->file);
}

void hp_craft_emit(struct hp_craft *c, unsigned type)
{
	hp_format_put_record(&c->file, type, c->payload.data, c->payload.len, NULL);
	c->payload.len = 0;
}

static void meta(struct hp_craft *c, uint64_t pid, const char *program, const char *arg1,
		 uint64_t rate, int extra_fields)
{
	struct hp_buf *p = &c->payload;

	hp_rec_meta_put(p, &(struct hp_rec_meta){
		.pid = pid,
		.ppid = 99,
		.start_realtime_ns = 1700000000000000000ull,
		.start_monotonic_ns = 5000,
		.page_size = 4096,
		.program = hp_rec_str_of(program),
	});
	hp_rec_count_put(p, 2); /* argv */
	hp_rec_str_put(p, hp_rec_str_of("prog"));
	hp_rec_str_put(p, hp_rec_str_of(arg1));
	hp_rec_meta_options_put(p, &(struct hp_rec_meta_options){
		.recorder_version = hp_rec_str_of("0.1.0"),
		.sample_rate_bytes = rate,
		.unwind = HP_UNWIND_FP,
		.max_depth = 64,
		.dump_signal = 12,
	});
	if (extra_fields) {             /* what a later minor might add */
		hp_buf_put_u(p, 123456789);
		hp_buf_put_str(p, "a field from the future");
	}
	hp_craft_emit(c, HP_REC_META);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void hp_craft_emit_zstd(struct hp_craft *c, unsigned type, int level)
{
	size_t bound = ZSTD_compressBound(c->payload.len), n;
	uint8_t *z = malloc(bound), frame[24];

	if (!z)
		return;
	n = ZSTD_compress(z, bound, c->payload.data, c->payload.len, level);
	memcpy(frame, "HPRC", 4);
	frame[4] = (uint8_t)type;
	frame[5] = (uint8_t)(type >> 8);
	frame[6] = HP_FORMAT_FLAG_ZSTD;
	frame[7] = 0;
	put_le32(frame + 8, (uint32_t)n);
	put_le32(frame + 12, (uint32_t)c->payload.len);
	put_le32(frame + 16, (uint32_t)crc32(crc32(0L, Z_NULL, 0), z, (uInt)n));
	put_le32(frame + 20, (uint32_t)crc32(crc32(0L, Z_NULL, 0), frame, 20));
	hp_buf_put_bytes(&c->file, frame, sizeof frame);
	hp_buf_put_bytes(&c->file, z, n);
	free(z);
	c->payload.len = 0;
}

void hp_craft_meta(struct hp_craft *c, uint64_t pid, const char *program, int extra_fields)
{
	meta(c, pid, program, "--flag", 1, extra_fields);
}

void hp_craft_meta_as(struct hp_craft *c, uint64_t pid, const char *program, const char *arg1,
		      uint64_t sample_rate_bytes)
{
	meta(c, pid, program, arg1, sample_rate_bytes, 0);
}

void hp_craft_symbols(struct hp_craft *c, const uint64_t *addrs, const char *const *names,
		      size_t n, int image)
{
	struct hp_buf *p = &c->payload;

	hp_rec_count_put(p, n + 1);     /* strings: "" then the names */
	hp_rec_str_put(p, hp_rec_str_of(""));
	for (size_t i = 0; i < n; i++)
		hp_rec_str_put(p, hp_rec_str_of(names[i]));
	hp_rec_count_put(p, 1);         /* one module (the captures here have one): */
	hp_buf_put_u(p, HP_SYMSTATUS_OK);
	hp_rec_count_put(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_rec_symaddr_put(p, &(struct hp_rec_symaddr){.address = addrs[i], .frame_count = 1});
		hp_rec_symframe_put(p, &(struct hp_rec_symframe){
			.function = (uint32_t)i + 1, .file = 0, .line = 10 + (uint32_t)i});
	}
	if (image >= 0)
		hp_rec_symbols_tail_put(p, &(struct hp_rec_symbols_tail){.image = (uint64_t)image});
	hp_craft_emit(c, HP_REC_SYMBOLS);
}

void hp_craft_module(struct hp_craft *c, uint64_t id, const char *path, uint64_t bias,
		     uint64_t vaddr, uint64_t memsz)
{
	struct hp_buf *p = &c->payload;

	hp_rec_count_put(p, 1);         /* one event */
	hp_rec_module_event_put(p, &(struct hp_rec_module_event){
		.kind = HP_MOD_LOAD,
		.module_id = id,
		.path = hp_rec_str_of(path),
		.build_id = hp_rec_str_of(""),
		.bias = bias,
		.segment_count = 1,
	});
	hp_rec_segment_put(p, &(struct hp_rec_segment){.vaddr = vaddr, .memsz = memsz,
						       .flags = 5}); /* r-x */
	hp_craft_emit(c, HP_REC_MODULES);
}

void hp_craft_stacks(struct hp_craft *c, uint64_t first, const uint64_t *frame0, size_t n)
{
	hp_rec_stacks_put(&c->payload, &(struct hp_rec_stacks){.first_id = first, .count = n});
	for (size_t i = 0; i < n; i++)
		hp_rec_stack_put(&c->payload, (uint64_t[]){frame0[i], frame0[i] - 16}, 2);
	hp_craft_emit(c, HP_REC_STACKS);
}

void hp_craft_snapshot(struct hp_craft *c, const uint64_t *stack_ids, size_t n)
{
	struct hp_buf *p = &c->payload;

	hp_rec_snapshot_put(p, &(struct hp_rec_snapshot){
		.seq = 1, .time_ns = 1000, .reason = HP_SNAP_EXIT,
		/* totals, peak, peak time: 10 .. 16 */
		.alloc_count = 10, .alloc_bytes = 11, .free_count = 12, .free_bytes = 13,
		.peak_bytes = 14, .peak_count = 15, .peak_time_ns = 16,
		.stack_count = 2,
	});
	hp_rec_count_put(p, 0);         /* lost kinds */
	hp_rec_count_put(p, n);
	/* By hand, not hp_rec_bucket_put: a test's stack id may not fit the
	 * schema's 32 bits (a reader must refuse 2^32 + 1, not take it for 1). */
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_u(p, stack_ids[i]);
		for (int k = 0; k < 11; k++) /* type_tag 2 ... temp_bytes 12 */
			hp_buf_put_u(p, 2 + k);
	}
	hp_craft_emit(c, HP_REC_SNAPSHOT);
}

void hp_craft_snapshot_of(struct hp_craft *c, uint64_t seq, uint64_t reason,
			  const struct hp_rec_bucket *b, size_t n)
{
	struct hp_buf *p = &c->payload;
	struct hp_rec_snapshot s = {.seq = seq, .time_ns = 1000 * seq, .reason = reason,
				    .peak_time_ns = 500 * seq};
	uint64_t top = 0;

	for (size_t i = 0; i < n; i++) {
		s.alloc_count += b[i].alloc_count;
		s.alloc_bytes += b[i].alloc_bytes;
		s.free_count += b[i].free_count;
		s.free_bytes += b[i].free_bytes;
		s.peak_count += b[i].peak_count;
		s.peak_bytes += b[i].peak_bytes;
		top = b[i].stack_id > top ? b[i].stack_id : top;
	}
	s.stack_count = top + 1;
	hp_rec_snapshot_put(p, &s);
	hp_rec_count_put(p, 0);         /* lost kinds */
	hp_rec_count_put(p, n);
	for (size_t i = 0; i < n; i++)
		hp_rec_bucket_put(p, &b[i]);
	hp_craft_emit(c, HP_REC_SNAPSHOT);
}

void hp_craft_snapshot_heaps(struct hp_craft *c, uint64_t seq, const struct hp_rec_bucket *b,
			     size_t n, const struct hp_rec_heap_peak *heaps, size_t nheaps)
{
	struct hp_buf *p = &c->payload;
	struct hp_rec_snapshot s = {.seq = seq, .time_ns = 1000 * seq, .reason = HP_SNAP_EXIT,
				    .peak_time_ns = 500 * seq};
	uint64_t top = 0;

	for (size_t i = 0; i < n; i++) {
		top = b[i].stack_id > top ? b[i].stack_id : top;
		if (b[i].origin_tag && c->heap_origin && b[i].origin_tag == c->heap_origin)
			continue; /* a custom heap's: not in malloc's totals */
		s.alloc_count += b[i].alloc_count;
		s.alloc_bytes += b[i].alloc_bytes;
		s.free_count += b[i].free_count;
		s.free_bytes += b[i].free_bytes;
		s.peak_count += b[i].peak_count;
		s.peak_bytes += b[i].peak_bytes;
	}
	s.stack_count = top + 1;
	hp_rec_snapshot_put(p, &s);
	hp_rec_count_put(p, 0); /* lost kinds */
	hp_rec_count_put(p, n);
	for (size_t i = 0; i < n; i++)
		hp_rec_bucket_put(p, &b[i]);
	hp_rec_snapshot_tail_put(p, &(struct hp_rec_snapshot_tail){.recorder_bytes = 4096});
	hp_rec_count_put(p, nheaps);
	for (size_t i = 0; i < nheaps; i++)
		hp_rec_heap_peak_put(p, &heaps[i]);
	hp_craft_emit(c, HP_REC_SNAPSHOT);
}

void hp_craft_tags(struct hp_craft *c, const struct hp_craft_tag *t, size_t n)
{
	hp_rec_count_put(&c->payload, n);
	for (size_t i = 0; i < n; i++)
		hp_rec_tag_put(&c->payload,
			       &(struct hp_rec_tag){.kind = t[i].kind, .id = t[i].id, .a = t[i].a,
						    .b = t[i].b, .c = t[i].c,
						    .name = hp_rec_str_of(t[i].name ? t[i].name
										    : "")});
	hp_craft_emit(c, HP_REC_TAGS);
}

int hp_craft_write(struct hp_craft *c, const char *path)
{
	int ret;

	expect_eq_u64(c->file.err, 0, "the crafted file is built");
	ret = hp_test_write_file(path, c->file.data, c->file.len);
	expect_eq_u64((uint64_t)ret, 0, "the crafted file is written");
	free(c->file.data);
	free(c->payload.data);
	memset(c, 0, sizeof *c);
	return ret;
}

const char *hp_craft_tmp(const char *name)
{
	static char path[512];

	snprintf(path, sizeof path, "%s/%s", hp_test_tmp(), name);
	return path;
}
