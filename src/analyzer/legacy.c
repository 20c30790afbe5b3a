/*
 * legacy.c - the gperftools heap profile writer (see legacy.h).
 *
 * The layout of each line follows gperftools' own dumps ("%6d: %8d [%6d:
 * %8d] @"): google-pprof's parser wants at least one blank after each
 * colon and around the brackets, Go's accepts any spacing. Both reject
 * a pair whose count is 0 while its bytes are not; after rounding an
 * unbiased estimate that cannot happen for a real stack, but a count of 0
 * is raised to 1 rather than have the whole file refused.
 */
#include "legacy.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/text.h"

/* ELF segment flags. */
#define PF_X 1
#define PF_W 2
#define PF_R 4

struct pair {
	int64_t objects, bytes;
};

struct line {
	struct pair inuse, alloc;
};

static struct pair pair_of(double objects, double bytes)
{
	struct pair p = {hp_estimate_i64(objects), hp_estimate_i64(bytes)};

	if (p.objects < 0 || p.bytes < 0) /* never in a model; the readers want digits */
		p.objects = p.bytes = 0;
	if (!p.objects && p.bytes)
		p.objects = 1;
	return p;
}

static void print_pair_line(FILE *out, const struct line *l)
{
	fprintf(out, "%6" PRId64 ": %8" PRId64 " [%6" PRId64 ": %8" PRId64 "] @", l->inuse.objects,
		l->inuse.bytes, l->alloc.objects, l->alloc.bytes);
}

/* The /proc/self/maps lines of every module with a file behind it (the
 * vdso has none). The device and inode are unknown: 00:00 0, which both
 * readers accept. */
static void print_maps(FILE *out, const struct hp_model *m)
{
	uint64_t page = m->cap->page_size ? m->cap->page_size : 4096;

	for (size_t i = 0; i < m->nmodules; i++) {
		const struct hp_cap_module *cm = m->modules[i].cap;
		if (cm->path[0] != '/')
			continue;
		for (uint32_t s = 0; s < cm->nseg && s < HP_CAP_MAX_SEGMENTS; s++) {
			const struct hp_rec_segment *sg = &cm->seg[s];
			uint64_t lo = cm->bias + sg->vaddr, start = lo & ~(page - 1);
			uint64_t end = (lo + sg->memsz + page - 1) & ~(page - 1);
			uint64_t off = sg->offset >= lo - start ? sg->offset - (lo - start) : 0;
			/* One line per segment: a newline in the path would
			 * forge lines, so it is shown escaped (text.h). */
			fprintf(out, "%08" PRIx64 "-%08" PRIx64 " %c%c%cp %08" PRIx64 " 00:00 0 ",
				start, end, sg->flags & PF_R ? 'r' : '-', sg->flags & PF_W ? 'w' : '-',
				sg->flags & PF_X ? 'x' : '-', off);
			hp_text_fputs(cm->path, out);
			fputc('\n', out);
		}
	}
}

/* The in-use and allocated pairs of one line. */
static struct line line_of(const struct hp_values *v, int at_peak)
{
	struct line l;

	l.inuse = at_peak ? pair_of(v->peak_objects, v->peak_bytes)
			  : pair_of(v->inuse_objects, v->inuse_bytes);
	l.alloc = pair_of(v->alloc_objects, v->alloc_bytes);
	return l;
}

/* The figures of each stack for heap: malloc's are the model's sums
 * (hp_mstack.v); a custom heap's are its buckets', summed here. Returns an
 * array of m->nstacks (free it), or NULL. */
static struct hp_values *heap_stacks(const struct hp_model *m, uint64_t heap)
{
	struct hp_values *v = calloc(m->nstacks ? m->nstacks : 1, sizeof *v);

	if (!v)
		return NULL;
	if (!heap) {
		for (size_t s = 0; s < m->nstacks; s++)
			v[s] = m->stacks[s].v;
		return v;
	}
	for (size_t i = 0; i < m->nbuckets; i++)
		if (m->buckets[i].heap == heap) {
			struct hp_values bv;
			hp_mbucket_values(m, &m->buckets[i], &bv);
			hp_values_add(&v[m->buckets[i].stack], &bv);
		}
	return v;
}

int hp_legacy_write(FILE *out, const struct hp_model *m, const struct hp_legacy_options *o)
{
	static const struct hp_legacy_options defaults;
	uint64_t ids[256];
	struct hp_values *per[256];
	size_t nheaps;
	struct hp_values total;
	char name[256];
	int marked, ret = 0;

	if (!o)
		o = &defaults;
	marked = hp_model_heap_marked(m, o->one_heap ? (int64_t)o->heap : HP_HEAP_ALL);
	if (o->one_heap) {
		ids[0] = o->heap;
		nheaps = 1;
	} else {
		nheaps = hp_model_heaps(m, ids, sizeof ids / sizeof *ids);
		if (nheaps > sizeof ids / sizeof *ids)
			nheaps = sizeof ids / sizeof *ids;
	}
	/* Buckets of one stack (a sampled capture's sizes) make one line. */
	for (size_t h = 0; h < nheaps; h++)
		if (!(per[h] = heap_stacks(m, ids[h]))) {
			while (h-- > 0)
				free(per[h]);
			return -ENOMEM;
		}

	/* The header's totals are the sums of the lines as printed, so that a
	 * reader's checks of one against the other hold after rounding. */
	memset(&total, 0, sizeof total);
	for (size_t h = 0; h < nheaps; h++)
		for (size_t s = 0; s < m->nstacks; s++) {
			struct line l = line_of(&per[h][s], o->at_peak);
			total.inuse_objects += (double)l.inuse.objects;
			total.inuse_bytes += (double)l.inuse.bytes;
			total.alloc_objects += (double)l.alloc.objects;
			total.alloc_bytes += (double)l.alloc.bytes;
		}
	fprintf(out, "heap profile: %6.0f: %8.0f [%6.0f: %8.0f] @ heapprofile\n",
		total.inuse_objects, total.inuse_bytes, total.alloc_objects, total.alloc_bytes);

	for (size_t h = 0; h < nheaps; h++) {
		if (marked) { /* escaped (text.h): a newline would forge a line */
			fputs("# heap: ", out);
			hp_text_fputs(hp_model_heap_name(m, ids[h], name, sizeof name), out);
			fputc('\n', out);
		}
		for (size_t s = 0; s < m->nstacks; s++) {
			const struct hp_mstack *st = &m->stacks[s];
			struct line l = line_of(&per[h][s], o->at_peak);
			if (!l.inuse.objects && !l.inuse.bytes && !l.alloc.objects && !l.alloc.bytes)
				continue;
			print_pair_line(out, &l);
			for (uint32_t f = 0; f < st->depth; f++)
				fprintf(out, " 0x%" PRIx64, m->locations[hp_mstack_location(st, f)].address);
			fputc('\n', out);
		}
	}
	for (size_t h = 0; h < nheaps; h++)
		free(per[h]);
	fputs("\nMAPPED_LIBRARIES:\n", out);
	print_maps(out, m);
	return ferror(out) ? -EIO : ret;
}
