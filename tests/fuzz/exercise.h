/*
 * exercise.h - what the analyzer does with a loaded capture that needs no
 * binaries, and the invariants it relies on while doing it.
 *
 * Shared by the fuzz target (fuzz_capture.c, clang + libFuzzer) and the
 * corpus replay (tests/fault/test_fuzz_corpus.c, the ordinary gcc build), so
 * that an input the fuzzer kept fails the same way in both.
 *
 * exercise_images does it for every image (format.h, "Images"), and
 * exercise_capture touches every part of a struct hp_capture the way the
 * readers in src/analyzer, src/cli and src/live do: the last snapshot, every bucket,
 * the stack of every bucket, hp_capture_module_of and hp_capture_symbols_of
 * on every frame, the embedded symbols, the names of reasons. A memory error
 * there is the sanitizers' to report; an invariant the readers rely on but
 * capture.c did not keep (a bucket naming a stack that does not exist, a
 * symbol frame past the frame table, a timeline bucket that changes its
 * stack) is reported here, by name, with abort():
 * libFuzzer and the replay both see it as a crash.
 *
 * Header-only (static functions) because the two users are built by two
 * compilers from two rules; it allocates only to check the timeline (a map
 * of its bucket ids, src/common/table.h).
 */
#ifndef HP_TESTS_FUZZ_EXERCISE_H
#define HP_TESTS_FUZZ_EXERCISE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/table.h"
#include "../../src/format/capture.h"

__attribute__((noreturn, format(printf, 1, 2))) static void broken(const char *fmt, ...);

static void broken(const char *fmt, ...)
{
	va_list ap;

	fputs("exercise_capture: invariant broken: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* A sum the compiler cannot drop: every value read lands in it. */
static volatile uint64_t exercise_sink;

static void exercise_str(const char *s, const char *what)
{
	if (!s)
		broken("%s is NULL", what);
	exercise_sink += strlen(s);
}

static void exercise_frame(const struct hp_capture *cap, uint64_t addr)
{
	const struct hp_cap_module *m = hp_capture_module_of(cap, addr);
	const struct hp_cap_symaddr *a = hp_capture_symbols_of(cap, addr);

	if (m) {
		if (m < cap->modules || m >= cap->modules + cap->nmodules)
			broken("hp_capture_module_of(0x%llx) points outside modules[]",
			       (unsigned long long)addr);
		exercise_sink += m->id + (addr - m->bias); /* as model.c: the module offset */
		exercise_str(m->path, "a module path");
	}
	/* model.c asks for the module of addr - 1 (the call, not the return). */
	exercise_sink += (uintptr_t)hp_capture_module_of(cap, addr - 1);
	if (a) {
		if (a->address != addr)
			broken("hp_capture_symbols_of(0x%llx) found 0x%llx",
			       (unsigned long long)addr, (unsigned long long)a->address);
		for (uint32_t k = 0; k < a->count; k++) {
			const struct hp_rec_symframe *f = &cap->symbols.frames[a->first + k];
			exercise_str(cap->symbols.strings[f->function], "a symbol's function");
			exercise_str(cap->symbols.strings[f->file], "a symbol's file");
			exercise_sink += f->line + (f->flags & HP_SYMFRAME_INLINED);
		}
	}
}

static void exercise_stack(const struct hp_capture *cap, uint32_t id)
{
	const struct hp_cap_stack *s = &cap->stacks[id];

	if (s->depth && !s->frames)
		broken("stack %u has depth %u and no frames", id, s->depth);
	for (uint32_t f = 0; f < s->depth; f++)
		exercise_frame(cap, s->frames[f]);
}

static void exercise_symbols(const struct hp_capture *cap)
{
	const struct hp_cap_symbols *s = &cap->symbols;

	if (!cap->has_symbols)
		return;
	for (size_t i = 0; i < s->nstrings; i++)
		exercise_str(s->strings[i], "a symbol string");
	for (size_t i = 0; i < s->nstatus; i++)
		exercise_sink += s->status[i];
	for (size_t i = 0; i < s->naddrs; i++) {
		const struct hp_cap_symaddr *a = &s->addrs[i];
		if (i && a->address < s->addrs[i - 1].address)
			broken("symbol addresses are not sorted at %zu", i);
		if ((uint64_t)a->first + a->count > s->nframes)
			broken("symbol address %zu has frames [%u, %u), the table has %zu", i,
			       a->first, a->first + a->count, s->nframes);
		for (uint32_t k = 0; k < a->count; k++) {
			const struct hp_rec_symframe *f = &s->frames[a->first + k];
			if (f->function >= s->nstrings || f->file >= s->nstrings)
				broken("a symbol frame names string %u/%u of %zu", f->function,
				       f->file, s->nstrings);
		}
	}
}

/* The timeline (hp_cap_tick): every tick's entries within sites[], and
 * a bucket id that names one key, the first entry's (stack and size,
 * tags where both ticks are tagged): timeline.c sizes a site's points by
 * the entries of its stack and fills them by its buckets' stacks. */
static void exercise_timeline(const struct hp_capture *cap)
{
	struct first {
		size_t tick, site;
	} *firsts = NULL;
	struct hp_u64map ids = {0};
	size_t n = 0, alloc = 0;

	for (size_t t = 0; t < cap->nticks; t++) {
		const struct hp_cap_tick *k = &cap->ticks[t];
		if (k->first > cap->nsites || k->count > cap->nsites - k->first)
			broken("tick %zu has entries [%zu, +%zu) of %zu", t, k->first, k->count,
			       cap->nsites);
		for (size_t e = k->first; e < k->first + k->count; e++) {
			const struct hp_rec_site *s = &cap->sites[e];
			uint32_t i;
			exercise_sink += s->in_use_bytes + s->in_use_count;
			if (!hp_u64map_get(&ids, s->bucket, &i)) {
				if (n == alloc) {
					struct first *p;
					alloc = alloc ? 2 * alloc : 64;
					if (!(p = realloc(firsts, alloc * sizeof *p)))
						abort(); /* the fuzzer's memory limit says so */
					firsts = p;
				}
				if (hp_u64map_put(&ids, s->bucket, (uint32_t)n))
					abort();
				firsts[n++] = (struct first){t, e};
				continue;
			}
			const struct hp_rec_site *f = &cap->sites[firsts[i].site];
			int tags = k->tagged && cap->ticks[firsts[i].tick].tagged;
			if (s->stack_id != f->stack_id || s->size != f->size ||
			    (tags &&
			     (s->type_tag != f->type_tag || s->origin_tag != f->origin_tag)))
				broken("timeline bucket %u: stack %u size %llu at entry %zu, stack "
				       "%u size %llu at its first, entry %zu",
				       s->bucket, s->stack_id, (unsigned long long)s->size, e,
				       f->stack_id, (unsigned long long)f->size, firsts[i].site);
		}
	}
	hp_u64map_free(&ids);
	free(firsts);
}

static void exercise_capture(const struct hp_capture *cap)
{
	const struct hp_cap_snapshot *last = hp_capture_last(cap);

	if (cap->has_meta) {
		exercise_str(cap->program, "program");
		exercise_str(cap->recorder_version, "recorder_version");
		for (size_t i = 0; i < cap->argc; i++)
			exercise_str(cap->argv[i], "an argv string");
	}
	for (size_t i = 0; i < cap->nmodules; i++) {
		const struct hp_cap_module *m = &cap->modules[i];
		exercise_str(m->path, "a module path");
		if (m->nseg > HP_CAP_MAX_SEGMENTS || m->build_id_len > sizeof m->build_id)
			broken("module %zu has %u segments, a %zu-byte build-id", i, m->nseg,
			       m->build_id_len);
		for (size_t b = 0; b < m->build_id_len; b++)
			exercise_sink += m->build_id[b];
	}
	exercise_symbols(cap);
	/* Every stack, as model.c builds them all (id 0 is "no stack"). */
	for (size_t id = 1; id < cap->nstacks; id++)
		exercise_stack(cap, (uint32_t)id);
	if (last != (cap->nsnapshots ? &cap->snapshots[cap->nsnapshots - 1] : NULL))
		broken("hp_capture_last is not the last snapshot");
	for (size_t i = 0; i < cap->nsnapshots; i++) {
		const struct hp_cap_snapshot *s = &cap->snapshots[i];
		exercise_str(hp_capture_reason_name(s->reason), "a reason name");
		for (unsigned k = 0; k < HP_LOST_KINDS; k++) {
			exercise_str(hp_capture_lost_name(k), "a lost-reason name");
			exercise_sink += s->lost_count[k] + s->lost_bytes[k];
		}
		if (s->nbuckets && !s->buckets)
			broken("snapshot %zu has %zu buckets and no array", i, s->nbuckets);
		for (size_t k = 0; k < s->nbuckets; k++) {
			const struct hp_rec_bucket *b = &s->buckets[k];
			/* Readers index stacks[] by stack_id; 0 is "no stack". */
			if (b->stack_id && b->stack_id >= cap->nstacks)
				broken("snapshot %zu bucket %zu names stack %u of %zu", i, k,
				       b->stack_id, cap->nstacks);
			exercise_sink += b->type_tag + b->origin_tag + b->size + b->alloc_count +
					 b->alloc_bytes - b->free_bytes + b->free_count +
					 b->peak_count + b->peak_bytes + b->temp_count + b->temp_bytes;
			if (b->stack_id && s == last)
				exercise_stack(cap, b->stack_id);
		}
		/* The memory map's regions (MAPS): what the reader promises
		 * memmap.c, which walks them beside the sorted blocks. */
		for (size_t k = 0; k < s->nmaps; k++) {
			const struct hp_cap_map *m = &s->maps[k];
			if (!m->size || m->start + m->size < m->start || m->rss_bytes > m->size ||
			    !m->kind || m->kind >= HP_MAP_KINDS ||
			    (k && m->start < s->maps[k - 1].start + s->maps[k - 1].size))
				broken("snapshot %zu region %zu: [%llx, +%llx) kind %u rss %llu", i,
				       k, (unsigned long long)m->start, (unsigned long long)m->size,
				       m->kind, (unsigned long long)m->rss_bytes);
			exercise_str(m->name, "a region's name");
		}
		for (size_t k = 1; k < s->nblocks; k++)
			if (s->blocks[k].address <= s->blocks[k - 1].address)
				broken("snapshot %zu: blocks not sorted at %zu", i, k);
	}
	exercise_timeline(cap);
	for (size_t i = 0; i < cap->nsamples; i++)
		exercise_sink += cap->samples[i].time_ns + cap->samples[i].heap_bytes +
				 cap->samples[i].rss_bytes;
	for (size_t i = 0; i < cap->ndamage && i < HP_CAP_MAX_DAMAGE; i++)
		exercise_str(cap->damage[i], "a damage message");
}

/* Every image, as inspect walks them (each selected in turn), then the
 * default one again; and the reader's memory bound. */
static void exercise_images(struct hp_capture *cap)
{
	size_t shown = cap->image;

	if (cap->mem_bytes > cap->mem_limit_bytes)
		broken("the reader holds %zu bytes, past its bound of %zu", cap->mem_bytes,
		       cap->mem_limit_bytes);
	if (shown != hp_capture_default_image(cap))
		broken("image %zu is shown, not the default %zu", shown,
		       hp_capture_default_image(cap));
	for (size_t i = 0; i < cap->nimages; i++) {
		if (hp_capture_select(cap, i))
			broken("image %zu of %zu cannot be selected", i, cap->nimages);
		exercise_capture(cap);
	}
	if (hp_capture_select(cap, shown))
		broken("the default image cannot be selected again");
	exercise_capture(cap);
}

#endif
