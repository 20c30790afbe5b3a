/*
 * memmap.c - the memory map of a snapshot (see memmap.h). The blocks come
 * sorted by address (capture.c); a region is a run of them whose gaps are
 * under HP_MAP_GAP_BYTES.
 */
#include "memmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"

struct region {
	size_t first, count; /* blocks */
	uint64_t lo, hi;     /* [lo, hi): the first block's address, the last's end */
	uint64_t bytes, largest_gap;
};

/* The regions of s's blocks into *out (owned) and *n. 0 or -ENOMEM. */
static int regions_of(const struct hp_cap_snapshot *s, struct region **out, size_t *n)
{
	struct region *r = NULL;
	size_t k = 0, cap = 0;

	for (size_t i = 0; i < s->nblocks; i++) {
		const struct hp_rec_block *b = &s->blocks[i];
		uint64_t end = b->address + b->size;
		if (!k || b->address >= r[k - 1].hi + HP_MAP_GAP_BYTES) {
			if (k == cap) {
				size_t c = cap ? 2 * cap : 16;
				struct region *p = realloc(r, c * sizeof *p);
				if (!p) {
					free(r);
					return -ENOMEM;
				}
				r = p;
				cap = c;
			}
			r[k++] = (struct region){i, 0, b->address, end, 0, 0};
		} else if (b->address > r[k - 1].hi &&
			   b->address - r[k - 1].hi > r[k - 1].largest_gap) {
			r[k - 1].largest_gap = b->address - r[k - 1].hi;
		}
		r[k - 1].count++;
		r[k - 1].bytes += b->size;
		if (end > r[k - 1].hi)
			r[k - 1].hi = end;
	}
	*out = r;
	*n = k;
	return 0;
}

static const char *function_of(const struct hp_model *m, uint32_t stack)
{
	if (stack < m->nstacks && m->stacks[stack].depth) {
		const struct hp_location *l = &m->locations[m->stacks[stack].locations[0]];
		if (l->syms[0].function)
			return l->syms[0].function;
	}
	return "??";
}

struct holder {
	uint32_t stack;
	uint64_t bytes;
};

static int by_bytes(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The top stacks of region g by bytes: up to max into h, their count. */
static size_t holders(const struct hp_cap_snapshot *s, const struct region *g, struct holder *h,
		      size_t max, struct holder *scratch)
{
	size_t n = 0;

	for (size_t i = g->first; i < g->first + g->count; i++) {
		const struct hp_rec_block *b = &s->blocks[i];
		size_t k = 0;
		while (k < n && scratch[k].stack != b->stack_id)
			k++;
		if (k == n)
			scratch[n++] = (struct holder){b->stack_id, 0};
		scratch[k].bytes += b->size;
	}
	qsort(scratch, n, sizeof *scratch, by_bytes);
	if (n > max)
		n = max;
	memcpy(h, scratch, n * sizeof *h);
	return n;
}

static int map_text(FILE *out, const struct hp_model *m, const struct region *r, size_t n)
{
	const struct hp_cap_snapshot *s = m->snap;
	uint64_t bytes = 0;
	char a[32], b[32], c[32], d[32];
	struct holder top[3], *scratch = malloc((s->nblocks ? s->nblocks : 1) * sizeof *scratch);

	if (!scratch)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		bytes += r[i].bytes;
	fprintf(out,
		"Memory map of snapshot #%" PRIu64 ": %s live blocks, %s, in %zu region%s "
		"(blocks less than 1 MiB apart)\n",
		s->seq, hp_units_count(a, sizeof a, (double)s->nblocks),
		hp_units_bytes(b, sizeof b, (double)bytes), n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		size_t k = holders(s, &r[i], top, 3, scratch);
		uint64_t span = r[i].hi - r[i].lo;
		fprintf(out,
			"  #%zu 0x%" PRIx64 "-0x%" PRIx64
			"  span %s, in use %s (%.0f%%), %s blocks, "
			"largest gap %s\n",
			i + 1, r[i].lo, r[i].hi, hp_units_bytes(a, sizeof a, (double)span),
			hp_units_bytes(b, sizeof b, (double)r[i].bytes),
			span ? 100.0 * (double)r[i].bytes / (double)span : 100.0,
			hp_units_count(c, sizeof c, (double)r[i].count),
			hp_units_bytes(d, sizeof d, (double)r[i].largest_gap));
		for (size_t j = 0; j < k; j++)
			fprintf(out, "      %s  %s\n",
				hp_units_bytes(a, sizeof a, (double)top[j].bytes),
				function_of(m, top[j].stack));
	}
	free(scratch);
	return 0;
}

static void map_json(FILE *out, const struct hp_model *m, const struct region *r, size_t n)
{
	const struct hp_cap_snapshot *s = m->snap;

	fprintf(out, "{\n  \"snapshot\": %" PRIu64 ",\n  \"blocks\": [", s->seq);
	for (size_t i = 0; i < s->nblocks; i++) {
		fprintf(out,
			"%s\n    {\"address\": %" PRIu64 ", \"size\": %" PRIu64
			", \"stack_id\": %" PRIu32 ", \"function\": ",
			i ? "," : "", s->blocks[i].address, s->blocks[i].size,
			s->blocks[i].stack_id);
		hp_report_json_str(out, function_of(m, s->blocks[i].stack_id));
		fputc('}', out);
	}
	fprintf(out, "%s],\n  \"regions\": [", s->nblocks ? "\n  " : "");
	for (size_t i = 0; i < n; i++)
		fprintf(out,
			"%s\n    {\"start\": %" PRIu64 ", \"end\": %" PRIu64 ", \"blocks\": %zu, "
			"\"inuse_bytes\": %" PRIu64 ", \"largest_gap_bytes\": %" PRIu64 "}",
			i ? "," : "", r[i].lo, r[i].hi, r[i].count, r[i].bytes, r[i].largest_gap);
	fprintf(out, "%s]\n}\n", n ? "\n  " : "");
}

int hp_report_map(FILE *out, const struct hp_model *m, const struct hp_report_options *o, int json)
{
	const struct hp_cap_snapshot *s = m->snap;
	struct region *r;
	size_t n;
	int ret;

	(void)o;
	if (!s->has_blocks) {
		if (json)
			fprintf(out, "{\n  \"snapshot\": %" PRIu64 ",\n  \"blocks\": null\n}\n",
				s->seq);
		else
			fprintf(out,
				"Memory map: snapshot #%" PRIu64 " has no list of live blocks "
				"(record with heapprof run --live-blocks)\n",
				s->seq);
		return ferror(out) ? -EIO : 0;
	}
	ret = regions_of(s, &r, &n);
	if (ret)
		return ret;
	if (json)
		map_json(out, m, r, n);
	else
		ret = map_text(out, m, r, n);
	free(r);
	return ret ? ret : ferror(out) ? -EIO : 0;
}
