/*
 * craft.c - capture files built by hand (see craft.h).
 */
#include "craft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../../src/format/format.h"
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

	hp_buf_put_u(p, pid);
	hp_buf_put_u(p, 99);            /* ppid */
	hp_buf_put_u(p, 1700000000000000000ull); /* start_realtime_ns */
	hp_buf_put_u(p, 5000);          /* start_monotonic_ns */
	hp_buf_put_u(p, 4096);          /* page_size */
	hp_buf_put_str(p, program);
	hp_buf_put_u(p, 2);             /* argc */
	hp_buf_put_str(p, "prog");
	hp_buf_put_str(p, arg1);
	hp_buf_put_str(p, "0.1.0");
	hp_buf_put_u(p, rate);          /* sample_rate_bytes */
	hp_buf_put_u(p, HP_UNWIND_FP);
	hp_buf_put_u(p, 64);            /* max_depth */
	hp_buf_put_u(p, 0);             /* flags */
	hp_buf_put_u(p, 12);            /* dump_signal */
	hp_buf_put_u(p, 0);             /* interval_ms */
	hp_buf_put_u(p, 0);             /* dump_every_bytes */
	hp_buf_put_u(p, 0);             /* dump_high_water_bytes */
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

	hp_buf_put_u(p, n + 1);         /* strings: "" then the names */
	hp_buf_put_str(p, "");
	for (size_t i = 0; i < n; i++)
		hp_buf_put_str(p, names[i]);
	hp_buf_put_u(p, 1);             /* one module (the captures here have one): */
	hp_buf_put_u(p, HP_SYMSTATUS_OK);
	hp_buf_put_u(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_u(p, addrs[i]);
		hp_buf_put_u(p, 1);     /* one frame */
		hp_buf_put_u(p, i + 1); /* function */
		hp_buf_put_u(p, 0);     /* file "" */
		hp_buf_put_u(p, 10 + i); /* line */
		hp_buf_put_u(p, 0);     /* not inlined */
	}
	if (image >= 0)
		hp_buf_put_u(p, (uint64_t)image);
	hp_craft_emit(c, HP_REC_SYMBOLS);
}

void hp_craft_module(struct hp_craft *c, uint64_t id, const char *path, uint64_t bias,
		     uint64_t vaddr, uint64_t memsz)
{
	struct hp_buf *p = &c->payload;

	hp_buf_put_u(p, 1);             /* one event */
	hp_buf_put_u(p, HP_MOD_LOAD);
	hp_buf_put_u(p, 0);             /* time */
	hp_buf_put_u(p, id);
	hp_buf_put_str(p, path);
	hp_buf_put_blob(p, "", 0);      /* no build-id */
	hp_buf_put_u(p, bias);
	hp_buf_put_u(p, 1);             /* one segment */
	hp_buf_put_u(p, vaddr);
	hp_buf_put_u(p, memsz);
	hp_buf_put_u(p, 0);             /* file offset */
	hp_buf_put_u(p, 5);             /* r-x */
	hp_craft_emit(c, HP_REC_MODULES);
}

void hp_craft_stacks(struct hp_craft *c, uint64_t first, const uint64_t *frame0, size_t n)
{
	hp_buf_put_u(&c->payload, first);
	hp_buf_put_u(&c->payload, n);
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_u(&c->payload, 2); /* depth */
		hp_buf_put_u(&c->payload, frame0[i]);
		hp_buf_put_s(&c->payload, -16);
	}
	hp_craft_emit(c, HP_REC_STACKS);
}

void hp_craft_snapshot(struct hp_craft *c, const uint64_t *stack_ids, size_t n)
{
	struct hp_buf *p = &c->payload;

	hp_buf_put_u(p, 1);                 /* seq */
	hp_buf_put_u(p, 1000);              /* time */
	hp_buf_put_u(p, HP_SNAP_EXIT);
	hp_buf_put_u(p, 0);                 /* signal */
	for (int i = 0; i < 7; i++)         /* totals, peak, peak time */
		hp_buf_put_u(p, 10 + i);
	hp_buf_put_u(p, 2);                 /* stack_count */
	hp_buf_put_u(p, 0);                 /* lost kinds */
	hp_buf_put_u(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_u(p, stack_ids[i]);
		for (int k = 0; k < 11; k++) /* type_tag 2 ... temp_bytes 12 */
			hp_buf_put_u(p, 2 + k);
	}
	hp_craft_emit(c, HP_REC_SNAPSHOT);
}

void hp_craft_snapshot_of(struct hp_craft *c, uint64_t seq, uint64_t reason,
			  const struct hp_craft_bucket *b, size_t n)
{
	struct hp_buf *p = &c->payload;
	uint64_t ac = 0, ab = 0, fc = 0, fb = 0, pc = 0, pb = 0, top = 0;

	for (size_t i = 0; i < n; i++) {
		ac += b[i].alloc_count;
		ab += b[i].alloc_bytes;
		fc += b[i].free_count;
		fb += b[i].free_bytes;
		pc += b[i].peak_count;
		pb += b[i].peak_bytes;
		top = b[i].stack_id > top ? b[i].stack_id : top;
	}
	hp_buf_put_u(p, seq);
	hp_buf_put_u(p, 1000 * seq);        /* time */
	hp_buf_put_u(p, reason);
	hp_buf_put_u(p, 0);                 /* signal */
	hp_buf_put_u(p, ac);
	hp_buf_put_u(p, ab);
	hp_buf_put_u(p, fc);
	hp_buf_put_u(p, fb);
	hp_buf_put_u(p, pb);
	hp_buf_put_u(p, pc);
	hp_buf_put_u(p, 500 * seq);         /* peak time */
	hp_buf_put_u(p, top + 1);           /* stack_count */
	hp_buf_put_u(p, 0);                 /* lost kinds */
	hp_buf_put_u(p, n);
	for (size_t i = 0; i < n; i++) {
		hp_buf_put_u(p, b[i].stack_id);
		hp_buf_put_u(p, 0);         /* type tag */
		hp_buf_put_u(p, 0);         /* context tag */
		hp_buf_put_u(p, b[i].size);
		hp_buf_put_u(p, b[i].alloc_count);
		hp_buf_put_u(p, b[i].alloc_bytes);
		hp_buf_put_u(p, b[i].free_count);
		hp_buf_put_u(p, b[i].free_bytes);
		hp_buf_put_u(p, b[i].peak_count);
		hp_buf_put_u(p, b[i].peak_bytes);
		hp_buf_put_u(p, 0);         /* temp count */
		hp_buf_put_u(p, 0);         /* temp bytes */
	}
	hp_craft_emit(c, HP_REC_SNAPSHOT);
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
