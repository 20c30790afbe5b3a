/*
 * craft.h - capture files built by hand, record by record, with the
 * format's own record encoders (src/format/records.h): the hostile, odd or
 * multi-image captures a test needs exact figures of.
 *
 *     struct hp_craft c;
 *     hp_craft_begin(&c);
 *     hp_craft_meta(&c, 100, "/bin/prog", 0);
 *     hp_craft_module(&c, 0, "/lib/libx.so", 0x7f0000000000, 0x1000, 0x2000);
 *     ...
 *     hp_craft_write(&c, path);   (frees c)
 *
 * Every record is well framed and checksummed: what is odd is its content.
 */
#ifndef HP_TEST_CRAFT_H
#define HP_TEST_CRAFT_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/format/records.h"

struct hp_craft {
	struct hp_buf file, payload;
	uint64_t heap_origin; /* hp_craft_snapshot_heaps: buckets of this ORIGIN
			       * are a custom heap's, left out of the totals */
};

/* One TAGS entry (format.h, enum hp_tag_kind); name NULL is "". */
struct hp_craft_tag {
	uint64_t kind, id, a, b, c;
	const char *name;
};

void hp_craft_begin(struct hp_craft *c);

/* Frames the payload built so far as a record of this type. */
void hp_craft_emit(struct hp_craft *c, unsigned type);

/* The same, compressed with zstd at level (19: as small as zstd makes
 * it, which the recorder never bothers to). */
void hp_craft_emit_zstd(struct hp_craft *c, unsigned type, int level);

/* A META record: pid, program, argv {"prog", "--flag"}, full recording,
 * fp unwinding; extra_fields adds what a later minor might. */
void hp_craft_meta(struct hp_craft *c, uint64_t pid, const char *program, int extra_fields);

/* The same with the arguments and the sampling rate chosen. */
void hp_craft_meta_as(struct hp_craft *c, uint64_t pid, const char *program, const char *arg1,
		      uint64_t sample_rate_bytes);

/* A SYMBOLS record: addrs[i] is one frame named names[i] (file ""), one
 * module symbolized, for
 * image (-1: leave out the image field, as before format 1.2). */
void hp_craft_symbols(struct hp_craft *c, const uint64_t *addrs, const char *const *names,
		      size_t n, int image);

/* A MODULES record with one LOAD event: one segment [vaddr, vaddr+memsz)
 * at bias. */
void hp_craft_module(struct hp_craft *c, uint64_t id, const char *path, uint64_t bias,
		     uint64_t vaddr, uint64_t memsz);

/* A STACKS record: one stack per frame0 value, ids from first, each of
 * depth 2 (frame0, frame0 - 16). */
void hp_craft_stacks(struct hp_craft *c, uint64_t first, const uint64_t *frame0, size_t n);

/* A snapshot with one bucket per stack id, every figure of it made up
 * (type_tag 2 ... temp_bytes 12), totals 10..16. */
void hp_craft_snapshot(struct hp_craft *c, const uint64_t *stack_ids, size_t n);

/* A snapshot of these buckets (the record schema's); its totals are their
 * sums. */
void hp_craft_snapshot_of(struct hp_craft *c, uint64_t seq, uint64_t reason,
			  const struct hp_rec_bucket *b, size_t n);

/* A TAGS record of these entries. */
void hp_craft_tags(struct hp_craft *c, const struct hp_craft_tag *t, size_t n);

/* A snapshot of these buckets (at exit), with its tail (format 1.1) and
 * each custom heap's own peak (format 1.3); its totals are the sums of the
 * buckets but those of origin c->heap_origin (malloc's only). */
void hp_craft_snapshot_heaps(struct hp_craft *c, uint64_t seq, const struct hp_rec_bucket *b,
			     size_t n, const struct hp_rec_heap_peak *heaps, size_t nheaps);

/* Writes the file (expecting it built and written) and frees c. Returns 0
 * or -errno. */
int hp_craft_write(struct hp_craft *c, const char *path);

/* path in this test binary's scratch directory (a static buffer). */
const char *hp_craft_tmp(const char *name);

#endif
