/*
 * memmap.c - the memory map of a snapshot (see memmap.h). The blocks come
 * sorted by address, each once (capture.c), and the MAPS regions by
 * address, none overlapping: one walk of both puts each block in its
 * region. Without MAPS, a region is a run of blocks whose gaps are under
 * HP_MAP_GAP_BYTES.
 */
#include "memmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sort.h"
#include "../common/units.h"
#include "../format/format.h"

#define TEXT_HOLDERS 3
#define JSON_HOLDERS 5

/* Appends a region to map (growing it). 0 or -ENOMEM. */
static int push(struct hp_map *map, size_t *cap, const struct hp_map_region *r)
{
	if (map->n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct hp_map_region *p = realloc(map->regions, c * sizeof *p);
		if (!p)
			return -ENOMEM;
		map->regions = p;
		*cap = c;
	}
	map->regions[map->n++] = *r;
	return 0;
}

/* The figures of r from its blocks first .. first + count. */
static void measure(const struct hp_cap_snapshot *s, struct hp_map_region *r)
{
	uint64_t at = r->start; /* the end of the blocks so far */

	r->inuse_bytes = r->largest_gap_bytes = 0;
	for (size_t i = r->first; i < r->first + r->count; i++) {
		const struct hp_rec_block *b = &s->blocks[i];
		uint64_t end =
			b->address + b->size < b->address ? UINT64_MAX : b->address + b->size;
		if (b->address > at && b->address - at > r->largest_gap_bytes)
			r->largest_gap_bytes = b->address - at;
		if (end > at)
			at = end;
		r->inuse_bytes += b->size;
	}
	if (r->end > at && r->end - at > r->largest_gap_bytes)
		r->largest_gap_bytes = r->end - at;
}

/* Regions gathered from the blocks alone (a capture before format 1.5). */
static int from_blocks(const struct hp_cap_snapshot *s, struct hp_map *map)
{
	size_t cap = 0;

	for (size_t i = 0; i < s->nblocks; i++) {
		const struct hp_rec_block *b = &s->blocks[i];
		uint64_t end =
			b->address + b->size < b->address ? UINT64_MAX : b->address + b->size;
		struct hp_map_region *last = map->n ? &map->regions[map->n - 1] : NULL;
		if (!last || b->address >= last->end + HP_MAP_GAP_BYTES ||
		    last->end + HP_MAP_GAP_BYTES < last->end) {
			struct hp_map_region r = {.start = b->address,
						  .end = end,
						  .name = "",
						  .first = i};
			if (push(map, &cap, &r))
				return -ENOMEM;
			last = &map->regions[map->n - 1];
		}
		last->count++;
		if (end > last->end)
			last->end = end;
	}
	for (size_t i = 0; i < map->n; i++)
		measure(s, &map->regions[i]);
	return 0;
}

/* The MAPS regions, each with its blocks. */
static int from_maps(const struct hp_cap_snapshot *s, struct hp_map *map)
{
	size_t cap = 0, b = 0;

	map->from_maps = 1;
	for (size_t i = 0; i < s->nmaps; i++) {
		const struct hp_cap_map *m = &s->maps[i];
		struct hp_map_region r = {
			.start = m->start,
			.end = m->start + m->size,
			.kind = m->kind,
			.perms = m->perms,
			.name = m->name,
			.has_rss = 1,
			.rss_bytes = m->rss_bytes,
		};
		for (; b < s->nblocks && s->blocks[b].address < r.start; b++) {
			map->outside_count++;
			map->outside_bytes += s->blocks[b].size;
		}
		r.first = b;
		while (b < s->nblocks && s->blocks[b].address < r.end)
			b++;
		r.count = b - r.first;
		measure(s, &r);
		if (push(map, &cap, &r))
			return -ENOMEM;
	}
	for (; b < s->nblocks; b++) {
		map->outside_count++;
		map->outside_bytes += s->blocks[b].size;
	}
	return 0;
}

int hp_map_build(const struct hp_cap_snapshot *s, struct hp_map *map)
{
	int ret;

	memset(map, 0, sizeof *map);
	ret = s->has_maps ? from_maps(s, map) : from_blocks(s, map);
	if (ret)
		hp_map_free(map);
	return ret;
}

void hp_map_free(struct hp_map *map)
{
	free(map->regions);
	memset(map, 0, sizeof *map);
}

double hp_map_fragmentation(const struct hp_map_region *r)
{
	if (!r->has_rss || !r->rss_bytes || r->inuse_bytes >= r->rss_bytes)
		return 0;
	return 1.0 - (double)r->inuse_bytes / (double)r->rss_bytes;
}

static int by_stack(const void *a, const void *b)
{
	const struct hp_map_holder *x = a, *y = b;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int by_bytes(const void *a, const void *b)
{
	const struct hp_map_holder *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return by_stack(a, b);
}

size_t hp_map_holders(const struct hp_cap_snapshot *s, const struct hp_map_region *r,
		      struct hp_map_holder *top, size_t max)
{
	struct hp_map_holder *h = malloc((r->count ? r->count : 1) * sizeof *h);
	size_t n = 0;

	if (!h)
		return 0;
	for (size_t i = 0; i < r->count; i++)
		h[i] = (struct hp_map_holder){s->blocks[r->first + i].stack_id, 1,
					      s->blocks[r->first + i].size};
	hp_sort(h, r->count, sizeof *h, by_stack);
	for (size_t i = 0; i < r->count; i++) {
		if (n && h[n - 1].stack == h[i].stack) {
			h[n - 1].count++;
			h[n - 1].bytes += h[i].bytes;
		} else {
			h[n++] = h[i];
		}
	}
	hp_sort(h, n, sizeof *h, by_bytes);
	if (n > max)
		n = max;
	memcpy(top, h, n * sizeof *h);
	free(h);
	return n;
}

const char *hp_map_kind_name(uint32_t kind)
{
	switch (kind) {
	case HP_MAP_BRK: return "brk";
	case HP_MAP_ARENA: return "arena";
	case HP_MAP_CHUNK: return "mmap";
	case HP_MAP_OTHER: return "other";
	default: return "blocks";
	}
}

void hp_map_perms(uint32_t perms, char buf[5])
{
	buf[0] = perms & HP_MAP_PERM_READ ? 'r' : '-';
	buf[1] = perms & HP_MAP_PERM_WRITE ? 'w' : '-';
	buf[2] = perms & HP_MAP_PERM_EXEC ? 'x' : '-';
	buf[3] = perms & HP_MAP_PERM_SHARED ? 's' : 'p';
	buf[4] = '\0';
}

static const char *function_of(const struct hp_model *m, uint32_t stack)
{
	if (stack < m->nstacks && m->stacks[stack].depth) {
		const struct hp_location *l = &m->locations[hp_mstack_location(&m->stacks[stack], 0)];
		if (l->syms[0].function)
			return l->syms[0].function;
	}
	return "??";
}

/* s cut to fit width columns from column at (with "..." when cut). */
static void put_fitted(FILE *out, const char *s, size_t at, size_t width)
{
	size_t len = strlen(s), room = width > at ? width - at : 0;

	if (!width || len <= room)
		fputs(s, out);
	else if (room > 3)
		fprintf(out, "%.*s...", (int)(room - 3), s);
	else
		fputs("...", out);
	fputc('\n', out);
}

static int map_text(FILE *out, const struct hp_model *m, const struct hp_map *map,
		    const struct hp_report_options *o)
{
	const struct hp_cap_snapshot *s = m->snap;
	size_t width = o ? o->width : 80; /* 0: no limit */
	uint64_t bytes = 0, rss = 0;
	char a[40], b[40], c[40], d[40], e[40], f[16];
	struct hp_map_holder top[TEXT_HOLDERS];

	for (size_t i = 0; i < s->nblocks; i++)
		bytes += s->blocks[i].size;
	for (size_t i = 0; i < map->n; i++)
		rss += map->regions[i].rss_bytes;
	fprintf(out, "Memory map of snapshot #%" PRIu64 ": %s live blocks, %s, in %zu region%s\n",
		s->seq, hp_units_count(a, sizeof a, (double)s->nblocks),
		hp_units_bytes(b, sizeof b, (double)bytes), map->n, map->n == 1 ? "" : "s");
	if (map->from_maps)
		fprintf(out, "that hold the heap, %s resident; frag = 1 - in use / RSS\n%s",
			hp_units_bytes(a, sizeof a, (double)rss),
			m->sampled ? "(a sampled recording: the sampled blocks only)\n" : "");
	else
		fprintf(out, "of blocks less than 1 MiB apart (no mappings recorded: "
			     "before format 1.5, or lost)\n");
	fprintf(out, "  %-14s  %-5s %9s %9s %9s %6s %11s %5s\n", "start", "kind", "size", "RSS",
		"in use", "blocks", "largest gap", "frag");
	for (size_t i = 0; i < map->n; i++) {
		const struct hp_map_region *r = &map->regions[i];
		size_t k = hp_map_holders(s, r, top, TEXT_HOLDERS);
		if (r->has_rss) {
			hp_units_bytes(b, sizeof b, (double)r->rss_bytes);
			snprintf(f, sizeof f, "%.0f%%", 100.0 * hp_map_fragmentation(r));
		} else {
			snprintf(b, sizeof b, "-");
			snprintf(f, sizeof f, "-");
		}
		snprintf(e, sizeof e, "0x%" PRIx64, r->start);
		fprintf(out, "  %-14s  %-5s %9s %9s ", e, hp_map_kind_name(r->kind),
			hp_units_bytes(a, sizeof a, (double)(r->end - r->start)), b);
		fprintf(out, "%9s %6s %11s %5s\n",
			hp_units_bytes(c, sizeof c, (double)r->inuse_bytes),
			hp_units_count(d, sizeof d, (double)r->count),
			hp_units_bytes(e, sizeof e, (double)r->largest_gap_bytes), f);
		if (r->kind == HP_MAP_OTHER && r->name[0]) {
			fputs("      in ", out);
			put_fitted(out, r->name, 9, width);
		}
		for (size_t j = 0; j < k; j++) {
			int at = fprintf(out, "      %s in %s  ",
					 hp_units_bytes(a, sizeof a, (double)top[j].bytes),
					 hp_units_count(b, sizeof b, (double)top[j].count));
			put_fitted(out, function_of(m, top[j].stack), at > 0 ? (size_t)at : 0,
				   width);
		}
	}
	if (map->outside_count)
		fprintf(out, "  outside the regions: %s block%s, %s\n",
			hp_units_count(a, sizeof a, (double)map->outside_count),
			map->outside_count == 1 ? "" : "s",
			hp_units_bytes(b, sizeof b, (double)map->outside_bytes));
	return 0;
}

static void map_json(FILE *out, const struct hp_model *m, const struct hp_map *map)
{
	const struct hp_cap_snapshot *s = m->snap;
	struct hp_map_holder top[JSON_HOLDERS];
	size_t r = 0;
	char perms[5];

	fprintf(out, "{\n  \"snapshot\": %" PRIu64 ",\n  \"blocks\": [", s->seq);
	for (size_t i = 0; i < s->nblocks; i++) {
		while (r < map->n && i >= map->regions[r].first + map->regions[r].count)
			r++;
		fprintf(out,
			"%s\n    {\"address\": %" PRIu64 ", \"size\": %" PRIu64
			", \"stack_id\": %" PRIu32 ", \"function\": ",
			i ? "," : "", s->blocks[i].address, s->blocks[i].size,
			s->blocks[i].stack_id);
		hp_report_json_str(out, function_of(m, s->blocks[i].stack_id));
		if (r < map->n && i >= map->regions[r].first)
			fprintf(out, ", \"region\": %zu}", r);
		else
			fputs(", \"region\": null}", out);
	}
	fprintf(out, "%s],\n  \"regions\": [", s->nblocks ? "\n  " : "");
	for (size_t i = 0; i < map->n; i++) {
		const struct hp_map_region *g = &map->regions[i];
		size_t k = hp_map_holders(s, g, top, JSON_HOLDERS);
		fprintf(out,
			"%s\n    {\"start\": %" PRIu64 ", \"end\": %" PRIu64 ", \"size\": %" PRIu64
			", \"kind\": \"%s\", ",
			i ? "," : "", g->start, g->end, g->end - g->start,
			hp_map_kind_name(g->kind));
		if (g->has_rss) {
			hp_map_perms(g->perms, perms);
			fprintf(out, "\"perms\": \"%s\", \"name\": ", perms);
			hp_report_json_str(out, g->name);
			fprintf(out, ", \"rss_bytes\": %" PRIu64 ", ", g->rss_bytes);
		} else {
			fputs("\"perms\": null, \"name\": null, \"rss_bytes\": null, ", out);
		}
		fprintf(out,
			"\"blocks\": %zu, \"inuse_bytes\": %" PRIu64
			", \"largest_gap_bytes\": %" PRIu64 ", \"fragmentation\": ",
			g->count, g->inuse_bytes, g->largest_gap_bytes);
		if (g->has_rss)
			fprintf(out, "%.4f", hp_map_fragmentation(g));
		else
			fputs("null", out);
		fputs(",\n     \"holders\": [", out);
		for (size_t j = 0; j < k; j++) {
			fprintf(out, "%s{\"stack_id\": %" PRIu32 ", \"function\": ", j ? ", " : "",
				top[j].stack);
			hp_report_json_str(out, function_of(m, top[j].stack));
			fprintf(out, ", \"blocks\": %zu, \"bytes\": %" PRIu64 "}", top[j].count,
				top[j].bytes);
		}
		fputs("]}", out);
	}
	fprintf(out, "%s],\n  \"outside\": {\"blocks\": %zu, \"bytes\": %" PRIu64 "}\n}\n",
		map->n ? "\n  " : "", map->outside_count, map->outside_bytes);
}

int hp_report_map(FILE *out, const struct hp_model *m, const struct hp_report_options *o, int json)
{
	const struct hp_cap_snapshot *s = m->snap;
	struct hp_map map;
	int ret;

	if (!s->has_blocks) {
		if (json)
			fprintf(out, "{\n  \"snapshot\": %" PRIu64 ",\n  \"blocks\": null\n}\n",
				s->seq);
		else
			fprintf(out,
				"Memory map: snapshot #%" PRIu64 " has no list of live blocks\n"
				"  (record with heapprof run --live-blocks)\n",
				s->seq);
		return ferror(out) ? -EIO : 0;
	}
	ret = hp_map_build(s, &map);
	if (ret)
		return ret;
	if (json)
		map_json(out, m, &map);
	else
		ret = map_text(out, m, &map, o);
	hp_map_free(&map);
	return ret ? ret : ferror(out) ? -EIO : 0;
}
