/*
 * core_cap.c - a capture of the dump: what the recorder held when a
 * process that ran under heapprof dumped core (core_rec.c), written as a
 * capture file (format 1.3, format.h) with the schema's encoders
 * (src/format/records.h), the records the recorder's own writer would
 * have written had it made a snapshot at that moment:
 *
 *   META      the pid and program from the core (NT_PRPSINFO, the module
 *             holding AT_PHDR), the sampling rate from the recorder;
 *             start times, arguments and the other options are not in
 *             the recorder's root and are 0
 *   MODULES   one load event per ELF module of NT_FILE with its PT_LOADs
 *             and build-id (core_mods.c: from its headers in the core,
 *             else from the file), so the analyzer's symbolizer opens the
 *             same files and refuses the same changed ones
 *   STACKS    every stack id below the table's count, the same ids
 *   SNAPSHOT  one, seq 1, reason HP_SNAP_FATAL with the core's signal
 *             (HP_SNAP_SIGNAL, signal 0, for a core without one, gcore's);
 *             its buckets as the recorder's table holds them, the totals
 *             their sums (as the writer's); no lost counts (the root does
 *             not carry them) and no peak time
 *
 * So the per-site figures of the capture are exactly those of a
 * fatal-signal snapshot taken at the dump. A stack whose frames are not in
 * the core is written with one frame, 0 (a stack needs one), and a deeper
 * one than the reader accepts is cut at HP_CAP_MAX_DEPTH.
 *
 * Ordinary analyzer C: the payload grows with realloc; not thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../format/records.h"
#include "capture.h"
#include "core.h"

static void put_meta(struct hp_buf *p, const struct hp_core *c)
{
	const char *program = c->program;
	struct hp_rec_meta m = {
		.pid = c->pid > 0 ? (uint64_t)c->pid : 0,
		.page_size = 4096,
	};
	struct hp_rec_meta_options o = {
		.recorder_version = hp_rec_str_of("heapprof core"),
		.sample_rate_bytes = c->rec.sample_rate ? c->rec.sample_rate : 1,
	};

	for (size_t i = 0; i < c->nmods; i++)
		if (c->mods[i].is_exe)
			program = c->mods[i].file;
	m.program = hp_rec_str_of(program);
	hp_rec_meta_put(p, &m);
	hp_rec_count_put(p, 0); /* argc */
	hp_rec_meta_options_put(p, &o);
}

static void put_modules(struct hp_buf *p, const struct hp_core *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nmods; i++)
		n += c->mods[i].nseg > 0;
	hp_rec_count_put(p, n);
	for (size_t i = 0, id = 1; i < c->nmods; i++) {
		const struct hp_core_module *m = &c->mods[i];
		struct hp_rec_module_event e = {
			.kind = HP_MOD_LOAD,
			.module_id = id,
			.path = hp_rec_str_of(m->file ? m->file : m->path),
			.build_id = {(const char *)m->build_id, m->build_id_len},
			.bias = m->bias,
			.segment_count = (uint64_t)m->nseg,
		};
		if (!m->nseg)
			continue;
		id++;
		hp_rec_module_event_put(p, &e);
		for (int s = 0; s < m->nseg; s++)
			hp_rec_segment_put(p, &(struct hp_rec_segment){m->seg[s].vaddr,
									m->seg[s].memsz,
									m->seg[s].offset,
									m->seg[s].flags});
	}
}

static void put_stacks(struct hp_buf *p, const struct hp_core_rec *r)
{
	static const uint64_t none[1] = {0};

	hp_rec_stacks_put(p, &(struct hp_rec_stacks){.first_id = 1,
						     .count = r->nstacks ? r->nstacks - 1 : 0});
	for (uint32_t id = 1; id < r->nstacks; id++) {
		const struct hp_core_rec_stack *s = &r->stacks[id];
		uint32_t depth = s->depth < HP_CAP_MAX_DEPTH ? s->depth : HP_CAP_MAX_DEPTH;
		if (s->frames && depth)
			hp_rec_stack_put(p, s->frames, depth);
		else
			hp_rec_stack_put(p, none, 1);
	}
}

static void put_snapshot(struct hp_buf *p, const struct hp_core *c)
{
	const struct hp_core_rec *r = &c->rec;
	struct hp_rec_snapshot s = {
		.seq = 1,
		.reason = c->signal ? HP_SNAP_FATAL : HP_SNAP_SIGNAL,
		.signo = c->signal > 0 ? (uint64_t)c->signal : 0,
		.peak_bytes = r->peak_bytes,
		.stack_count = r->nstacks ? r->nstacks : 1,
	};

	for (size_t i = 0; i < r->nbuckets; i++) {
		const struct hp_core_rec_bucket *b = &r->buckets[i];
		s.alloc_count += b->alloc_count;
		s.alloc_bytes += b->alloc_bytes;
		s.free_count += b->free_count;
		s.free_bytes += b->free_bytes;
		s.peak_count += b->peak_count;
	}
	hp_rec_snapshot_put(p, &s);
	hp_rec_count_put(p, 0); /* lost kinds: not in the root */
	hp_rec_count_put(p, r->nbuckets);
	for (size_t i = 0; i < r->nbuckets; i++) {
		const struct hp_core_rec_bucket *b = &r->buckets[i];
		hp_rec_bucket_put(p, &(struct hp_rec_bucket){
			.stack_id = b->stack,
			.type_tag = b->type_tag,
			.origin_tag = b->origin_tag,
			.size = b->size,
			.alloc_count = b->alloc_count,
			.alloc_bytes = b->alloc_bytes,
			.free_count = b->free_count,
			.free_bytes = b->free_bytes,
			.peak_count = b->peak_count,
			.peak_bytes = b->peak_bytes,
			.temp_count = b->temp_count,
			.temp_bytes = b->temp_bytes,
		});
	}
	hp_rec_snapshot_tail_put(p, &(struct hp_rec_snapshot_tail){0});
	hp_rec_count_put(p, 0); /* custom heaps' peaks: none known */
}

int hp_core_capture(const struct hp_core *c, struct hp_buf *out)
{
	struct hp_buf p = {.grow = hp_buf_grow_heap};
	int ret = 0;

	if (!c->rec.found)
		return -ENOENT;
	hp_format_put_file_header(out);
	put_meta(&p, c);
	if (!(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_META, p.data, p.len, NULL);
	p.len = 0;
	put_modules(&p, c);
	if (!ret && !(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_MODULES, p.data, p.len, NULL);
	p.len = 0;
	put_stacks(&p, &c->rec);
	if (!ret && !(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_STACKS, p.data, p.len, NULL);
	p.len = 0;
	put_snapshot(&p, c);
	if (!ret && !(ret = p.err))
		ret = hp_format_put_record(out, HP_REC_SNAPSHOT, p.data, p.len, NULL);
	free(p.data);
	return ret ? ret : out->err;
}
