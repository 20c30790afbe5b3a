/*
 * model.c - building the profile model (see model.h).
 */
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/table.h"
#include "../../common/vec.h"
#include "attr.h"
#include "../symbols/symbolize.h"
#include "../symbols/symcache.h"

#define MAX_SYMS 64 /* inlined frames at one address */

struct priv {
	struct hp_symbolizer *sym;
	struct hp_symcache *own_cache; /* opened here when the options give none */
	struct hp_u64map index;  /* address (or TRIMMED variant) -> location index */
	size_t locations_cap;    /* of m->locations */
	struct hp_attr_state attr; /* types (attr.h) */
	/* The stacks' location lists, cut from blocks of LOC_BLOCK 16-bit
	 * units (a million stacks: no malloc and no header each); a wide
	 * list takes two units an index, from an even unit. */
	uint16_t **loc_blocks;
	size_t nloc_blocks, loc_blocks_cap;
	uint16_t *loc_next; /* the current block's room */
	size_t loc_left;
};

#define LOC_BLOCK (512u << 10) /* units: 1 MiB */

/* Room for n location indexes of 16 bits (bytes 2), 24 (3) or 32 (4),
 * in the model's blocks (freed with them): the list of a stack whose
 * indexes are all below 2^16 takes half the room of 32 bits, below 2^24
 * three quarters. Returns NULL when out of memory. Allocates. */
static void *loc_slice(struct priv *p, size_t n, unsigned bytes)
{
	size_t units = (bytes * n + 1) / 2;
	int wide = bytes == 4;
	uint16_t *s;

	/* A block starts 4-aligned (malloc's), so an even unit is too. */
	if (wide && ((uintptr_t)p->loc_next & 3) && p->loc_left) {
		p->loc_next++;
		p->loc_left--;
	}
	if (units > p->loc_left) {
		size_t size = units > LOC_BLOCK ? units : LOC_BLOCK;
		uint16_t *b;
		if (hp_vec_grow(&p->loc_blocks, &p->loc_blocks_cap, p->nloc_blocks + 1) ||
		    !(b = malloc(size * sizeof *b)))
			return NULL;
		p->loc_blocks[p->nloc_blocks++] = b;
		p->loc_next = b;
		p->loc_left = size;
	}
	s = p->loc_next;
	p->loc_next += units;
	p->loc_left -= units;
	return s;
}

/* Sets st's locations to a copy of locs[0..n) (at least one index of
 * room, so that the list is never NULL), 16-bit when every index fits.
 * Returns 0 or -ENOMEM. Allocates. */
static int set_locations(struct priv *p, struct hp_mstack *st, const uint32_t *locs, uint32_t n)
{
	uint32_t most = 0;
	void *room;

	for (uint32_t i = 0; i < n; i++)
		most |= locs[i];
	st->wide_locations = most > UINT16_MAX;
	st->packed_locations = st->wide_locations && most <= 0xffffff;
	if (!(room = loc_slice(p, n ? n : 1,
			       !st->wide_locations ? 2 : st->packed_locations ? 3 : 4)))
		return -ENOMEM;
	if (st->packed_locations) {
		uint8_t *b = st->locations.packed = room;
		for (uint32_t i = 0; i < n; i++, b += 3) {
			b[0] = (uint8_t)locs[i];
			b[1] = (uint8_t)(locs[i] >> 8);
			b[2] = (uint8_t)(locs[i] >> 16);
		}
	} else if (st->wide_locations) {
		st->locations.wide = room;
		memcpy(room, locs, n * sizeof *locs);
	} else {
		st->locations.narrow = room;
		for (uint32_t i = 0; i < n; i++)
			st->locations.narrow[i] = (uint16_t)locs[i];
	}
	return 0;
}

static const char *const allocator_prefixes[] = {
	"operator new", "operator delete", "__libc_malloc", "__libc_calloc", "__libc_realloc",
	"__libc_memalign", "__gnu_cxx::new_allocator<", "std::__new_allocator<",
	"std::allocator<", "std::allocator_traits<", "__gnu_cxx::__alloc_traits<",
	"strdup", "__strdup", "strndup", "__strndup", "g_malloc", "g_malloc0", "g_realloc",
	"g_try_malloc", "xmalloc", "xcalloc", "xrealloc", "xstrdup", "alloc::alloc::",
	"__rust_alloc", "__rdl_alloc", "__rg_alloc",
};

/* The allocation functions themselves, by exact name (inlined copies of
 * them show up, e.g. ld.so's calloc wrapper). */
static const char *const allocator_names[] = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
	"memalign", "valloc", "pvalloc",
};

static int is_allocator(const char *fn)
{
	/* Every listed name starts with one of these: most names leave here. */
	if (!strchr("_omcrfpvasgxsto", fn[0]))
		return 0;
	for (size_t i = 0; i < sizeof allocator_names / sizeof *allocator_names; i++)
		if (strcmp(fn, allocator_names[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof allocator_prefixes / sizeof *allocator_prefixes; i++)
		if (strncmp(fn, allocator_prefixes[i], strlen(allocator_prefixes[i])) == 0)
			return 1;
	return 0;
}

/* Whether every symbolic frame of a location is the allocator's own. */
static int location_is_allocator(const struct hp_location *l)
{
	for (uint32_t i = 0; i < l->nsyms; i++)
		if (!is_allocator(l->syms[i].function))
			return 0;
	return 1;
}

int hp_metric_parse(const char *name, enum hp_metric *out)
{
	for (int i = 0; i < HP_METRIC_COUNT; i++) {
		if (strcmp(name, hp_metric_name((enum hp_metric)i)) == 0) {
			*out = (enum hp_metric)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *hp_metric_name(enum hp_metric m)
{
	static const char *const names[] = {"peak", "leaked", "allocated", "allocations",
					    "temporary"};
	return (unsigned)m < HP_METRIC_COUNT ? names[m] : "?";
}

int hp_metric_is_bytes(enum hp_metric m)
{
	return m == HP_METRIC_PEAK || m == HP_METRIC_LEAKED || m == HP_METRIC_ALLOCATED;
}

double hp_values_metric(const struct hp_values *v, enum hp_metric m)
{
	switch (m) {
	case HP_METRIC_PEAK: return v->peak_bytes;
	case HP_METRIC_LEAKED: return v->inuse_bytes;
	case HP_METRIC_ALLOCATED: return v->alloc_bytes;
	case HP_METRIC_ALLOCATIONS: return v->alloc_objects;
	case HP_METRIC_TEMPORARY: return v->temp_objects;
	default: return 0;
	}
}

void hp_values_add(struct hp_values *s, const struct hp_values *v)
{
	s->alloc_objects += v->alloc_objects;
	s->alloc_bytes += v->alloc_bytes;
	s->free_objects += v->free_objects;
	s->free_bytes += v->free_bytes;
	s->inuse_objects += v->inuse_objects;
	s->inuse_bytes += v->inuse_bytes;
	s->peak_objects += v->peak_objects;
	s->peak_bytes += v->peak_bytes;
	s->temp_objects += v->temp_objects;
	s->temp_bytes += v->temp_bytes;
}

int64_t hp_estimate_i64(double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9223372036854775807.0) /* 2^63 as a double: INT64_MAX + 1 */
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)llround(v);
}

/* Unbiasing (docs/internals/sampling.md): a sampled allocation of size s
 * stands for 1 / (1 - exp(-s / rate)) allocations. Full recordings: 1.
 * Written with expm1: 1 - exp(-x) rounds to 0 for x below about 1e-16 (a
 * rate of 2^60, a hostile capture's), which made the scale infinite and
 * the figures inf and NaN; -expm1(-x) is exact there, and the scale at
 * most 1/x + 1 <= 2^64 + 1: every figure stays finite (at most about
 * 2^128), and sums of them too. */
double hp_model_unbias_scale(const struct hp_rec_bucket *b, uint64_t rate_bytes)
{
	double size, scale = 1;

	if (rate_bytes <= 1)
		return 1;
	size = b->size ? (double)b->size
		       : (b->alloc_count ? (double)b->alloc_bytes / (double)b->alloc_count : 0);
	if (size > 0)
		scale = -1 / expm1(-size / (double)rate_bytes);
	if (!isfinite(scale) || scale < 1) /* cannot be; kept finite anyway */
		scale = 1;
	return scale;
}

static void unbias(const struct hp_model *m, const struct hp_rec_bucket *b, struct hp_values *v)
{
	double scale;

	v->alloc_objects = (double)b->alloc_count;
	v->alloc_bytes = (double)b->alloc_bytes;
	v->free_objects = (double)b->free_count;
	v->free_bytes = (double)b->free_bytes;
	v->peak_objects = (double)b->peak_count;
	v->peak_bytes = (double)b->peak_bytes;
	v->temp_objects = (double)b->temp_count;
	v->temp_bytes = (double)b->temp_bytes;
	if (m->sampled) {
		scale = hp_model_unbias_scale(b, m->sample_rate_bytes);
		v->alloc_objects *= scale;
		v->alloc_bytes *= scale;
		v->free_objects *= scale;
		v->free_bytes *= scale;
		v->peak_objects *= scale;
		v->peak_bytes *= scale;
		v->temp_objects *= scale;
		v->temp_bytes *= scale;
	}
	v->inuse_objects = v->alloc_objects - v->free_objects;
	v->inuse_bytes = v->alloc_bytes - v->free_bytes;
}

static int index_of_module(const struct hp_capture *cap, uint64_t addr)
{
	const struct hp_cap_module *mod = hp_capture_module_of(cap, addr);
	return mod ? (int)(mod - cap->modules) : -1;
}

/* The address index: key -> location. Keys are addresses, or addresses
 * tagged TRIMMED for a location's variant without its leading allocator
 * frames (no user address has the top bit set). */
#define TRIMMED (1ull << 63)

/* Appends a location with a copy of syms[0..n). */
static int new_location(struct hp_model *m, uint64_t addr, const struct hp_sym *syms, int n,
			uint32_t *out)
{
	struct priv *p = m->priv;
	struct hp_location *l;

	if (m->nlocations >= HP_HINDEX_NONE ||
	    hp_vec_grow(&m->locations, &p->locations_cap, m->nlocations + 1))
		return -ENOMEM;
	l = &m->locations[m->nlocations];
	memset(l, 0, sizeof *l);
	l->address = addr;
	l->module = index_of_module(m->cap, addr - 1);
	l->module_offset = l->module >= 0 ? addr - m->cap->modules[l->module].bias : addr;
	/* The frames and their classes in one block: a million stacks share
	 * far fewer locations, and every view asks each frame's class. */
	l->syms = malloc((size_t)n * (sizeof *l->syms + 1));
	if (!l->syms)
		return -ENOMEM;
	memcpy(l->syms, syms, (size_t)n * sizeof *l->syms);
	l->nsyms = (uint32_t)n;
	for (int k = 0; k < n; k++)
		((uint8_t *)(l->syms + n))[k] =
			(uint8_t)(hp_model_frame_class(m, l, &l->syms[k]) |
				  hp_location_marks(l, (uint32_t)k)); /* classes NULL yet: by name */
	l->classes = (uint8_t *)(l->syms + n);
	*out = (uint32_t)m->nlocations++;
	return 0;
}

/* The location of an address, symbolized on first sight. */
static int find_location(struct hp_model *m, uint64_t addr, uint32_t *out)
{
	struct priv *p = m->priv;
	struct hp_sym syms[MAX_SYMS];
	int n, err;

	if (hp_u64map_get(&p->index, addr, out))
		return 0;
	if (addr == HP_FRAME_GAP) { /* a deep stack's: no code, a name */
		char name[96];
		snprintf(name, sizeof name, "[frames cut: stack deeper than --max-depth %" PRIu64 "]",
			 m->cap->max_depth);
		syms[0] = (struct hp_sym){.function = hp_symbolizer_intern(p->sym, name), .file = ""};
		if (!syms[0].function)
			return -ENOMEM;
		n = 1;
		err = new_location(m, addr, syms, n, out);
		if (!err)
			m->gap_location = *out + 1;
		return err ? err : hp_u64map_put(&p->index, addr, *out);
	}
	err = hp_symbolizer_lookup(p->sym, index_of_module(m->cap, addr - 1), addr, syms, MAX_SYMS,
				   &n);
	if (err)
		return err;
	err = new_location(m, addr, syms, n, out);
	return err ? err : hp_u64map_put(&p->index, addr, *out);
}

/* The location to show as the innermost frame of a stack: loc, or a
 * variant without its leading inlined allocator frames (ld.so's inlined
 * calloc, say), made once per address. */
static int trimmed_location(struct hp_model *m, uint32_t loc, uint32_t *out)
{
	struct priv *p = m->priv;
	const struct hp_location *l = &m->locations[loc];
	uint32_t drop = 0;
	int err;

	while (drop + 1 < l->nsyms && is_allocator(l->syms[drop].function))
		drop++;
	*out = loc;
	if (!drop || hp_u64map_get(&p->index, l->address | TRIMMED, out))
		return 0;
	err = new_location(m, l->address, l->syms + drop, (int)(l->nsyms - drop), out);
	/* new_location may have moved the array: l is stale from here. */
	return err ? err : hp_u64map_put(&p->index, m->locations[*out].address | TRIMMED, *out);
}

/* The locations of the addresses last seen, by a hash of the address
 * (RECENT of them, 64 KiB): a million stacks are made of far fewer
 * addresses, so most frames are found here, before the address index.
 * loc is the location + 1 (0: none yet). */
#define RECENT 4096u
struct recent {
	uint64_t addr;
	uint32_t loc;
};

/* The location of frame f of stack s (the capture's), through a cache:
 * with a capture loaded with HP_CAP_LOAD_INTERN, a location + 1 (0: none
 * yet) per distinct address (amap), else the addresses seen last
 * (recent). Makes it when new (find_location): in the order the frames
 * are asked, the same either way. Returns 0 or -ENOMEM. */
static int frame_location(struct hp_model *m, const struct hp_cap_stack *s, uint32_t f,
			  uint32_t *amap, struct recent *recent, uint32_t *out)
{
	int err;

	if (amap) {
		uint32_t ai = s->addr_index[f];
		if (amap[ai]) {
			*out = amap[ai] - 1;
			return 0;
		}
		if (!(err = find_location(m, m->cap->addrs[ai], out)))
			amap[ai] = *out + 1;
		return err;
	}
	uint64_t a = s->frames[f];
	struct recent *r = &recent[(a * 0x9e3779b97f4a7c15ull) >> 52]; /* RECENT */
	if (r->loc && r->addr == a) {
		*out = r->loc - 1;
		return 0;
	}
	if (!(err = find_location(m, a, out)))
		*r = (struct recent){a, *out + 1};
	return err;
}

/* The cache of frame_location for the model's capture: amap (a capture
 * loaded with HP_CAP_LOAD_INTERN) or recent. Returns 0 or -ENOMEM. */
static int frame_cache(const struct hp_capture *cap, uint32_t **amap, struct recent **recent)
{
	*amap = NULL;
	*recent = NULL;
	if (cap->load_flags & HP_CAP_LOAD_INTERN)
		*amap = calloc(cap->naddrs ? cap->naddrs : 1, sizeof **amap);
	else
		*recent = calloc(RECENT, sizeof **recent);
	return *amap || *recent ? 0 : -ENOMEM;
}

/* locations_only's build (model.h): a location for each frame's address,
 * in the order build_stacks makes them. */
static int build_locations(struct hp_model *m)
{
	const struct hp_capture *cap = m->cap;
	struct recent *recent;
	uint32_t *amap, loc;
	int err = frame_cache(cap, &amap, &recent);

	for (size_t id = 1; id < cap->nstacks && !err; id++) {
		const struct hp_cap_stack *s = &cap->stacks[id];
		uint32_t depth = s->depth < HP_CAP_MAX_DEPTH ? s->depth : HP_CAP_MAX_DEPTH;
		for (uint32_t f = 0; f < depth && !err; f++)
			err = frame_location(m, s, f, amap, recent, &loc);
	}
	free(recent);
	free(amap);
	return err;
}

static int build_stacks(struct hp_model *m, const struct hp_model_options *opts)
{
	const struct hp_capture *cap = m->cap;
	uint32_t locs[HP_CAP_MAX_DEPTH];
	struct recent *recent;
	uint32_t *amap;
	int err;

	if (opts->locations_only)
		return build_locations(m);
	err = frame_cache(cap, &amap, &recent);
	m->nstacks = cap->nstacks ? cap->nstacks : 1;
	m->stacks = calloc(m->nstacks, sizeof *m->stacks);
	if (!m->stacks || err) {
		free(recent);
		free(amap);
		return -ENOMEM;
	}
	for (size_t id = 1; id < cap->nstacks && !err; id++) {
		const struct hp_cap_stack *s = &cap->stacks[id];
		uint32_t depth = s->depth < HP_CAP_MAX_DEPTH ? s->depth : HP_CAP_MAX_DEPTH, skip = 0;
		for (uint32_t f = 0; f < depth && !err; f++)
			err = frame_location(m, s, f, amap, recent, &locs[f]);
		if (err)
			break;
		/* Nearly every stack starts in user code: one name test. */
		while (skip + 1 < depth && location_is_allocator(&m->locations[locs[skip]]))
			skip++;
		/* Before the allocator's frames go: they name the type. */
		hp_attr_infer(&((struct priv *)m->priv)->attr, m,
			      opts->no_dwarf_types || opts->embedded_only
				      ? NULL
				      : ((struct priv *)m->priv)->sym,
			      locs, depth, skip, &m->stacks[id]);
		if (opts->keep_allocator_frames)
			skip = 0;
		if (!opts->keep_allocator_frames && depth &&
		    (err = trimmed_location(m, locs[skip], &locs[skip])) != 0)
			break;
		m->stacks[id].depth = depth - skip;
		if ((err = set_locations(m->priv, &m->stacks[id], locs + skip, depth - skip)) != 0)
			break;
		if (opts->release_frames == cap) {
			/* the same stack, writable: its frames are locations now */
			struct hp_cap_stack *w = &opts->release_frames->stacks[id];
			free(w->frames);
			w->frames = NULL;
			w->addr_index = NULL;
			w->depth = 0;
			/* interned frames: their blocks go once each of
			 * their stacks is done */
			hp_capture_release_stacks(opts->release_frames, id + 1);
		}
	}
	free(recent);
	free(amap);
	return err;
}

/* A sampled model's estimates as integers, rounded once, per stack: each
 * stack's figures (the sums of its buckets, unbiased) are rounded to the
 * nearest, in use is allocated - freed of the rounded figures, and the
 * total is the sum of the stacks. Every output then prints what it sums:
 * a JSON total is the sum of its stacks (it was rounded apart from them,
 * and read one object and one byte below their sum). Rounding to the
 * nearest is monotonic, so no stack's in use goes below 0 or its peak
 * above what it allocated (sharing the total's rounding out among the
 * stacks by largest remainder was tried: it rounds allocated and freed
 * apart, and a stack read -1 B in use). */
static void round_stacks(struct hp_model *m)
{
	if (!m->sampled)
		return;
	memset(&m->total, 0, sizeof m->total);
	for (size_t id = 0; id < m->nstacks; id++) {
		struct hp_values *v = &m->stacks[id].v;
		double *fig[] = {&v->alloc_objects, &v->alloc_bytes, &v->free_objects,
				 &v->free_bytes,    &v->peak_objects, &v->peak_bytes,
				 &v->temp_objects,  &v->temp_bytes};
		if (!m->stacks[id].nbuckets)
			continue;
		for (size_t f = 0; f < sizeof fig / sizeof *fig; f++)
			*fig[f] = (double)hp_estimate_i64(*fig[f]);
		v->inuse_objects = v->alloc_objects - v->free_objects;
		v->inuse_bytes = v->alloc_bytes - v->free_bytes;
		hp_values_add(&m->total, v);
	}
}

/* The stacks deeper than the recorder's max-depth, and their figures
 * (m->cut_stacks, m->cut): those with the gap frame (format.h). */
static void count_cut(struct hp_model *m)
{
	if (!m->gap_location)
		return;
	for (size_t id = 1; id < m->nstacks; id++) {
		const struct hp_mstack *st = &m->stacks[id];
		if (!st->nbuckets)
			continue;
		for (uint32_t i = 0; i < st->depth; i++)
			if (hp_mstack_location(st, i) == m->gap_location - 1) {
				m->cut_stacks++;
				hp_values_add(&m->cut, &st->v);
				break;
			}
	}
}

/* Whether the stack's blocks are glibc's exit-function list (its first
 * frames, after the allocator's: __new_exitfn, behind atexit and
 * __cxa_atexit). Blocks of it that libraries filled before the program
 * started (C++ static destructors registered by their constructors) are
 * still allocated when the exit snapshot is taken, inside _dl_fini, and
 * freed by glibc after it, each when its last entry has run: in use at
 * exit they are not. */
static int exit_function_list(const struct hp_model *m, const struct hp_mstack *st)
{
	for (uint32_t i = 0; i < st->depth && i < 3; i++) {
		const struct hp_location *l = &m->locations[hp_mstack_location(st, i)];
		for (uint32_t k = 0; k < l->nsyms; k++)
			if (strcmp(l->syms[k].function, "__new_exitfn") == 0)
				return 1;
	}
	return 0;
}

/* Bucket b of the model from r, the snapshot's: its stack, size and
 * record (its figures); its attribution is hp_attr_buckets'. */
static void make_bucket(const struct hp_model *m, const struct hp_rec_bucket *r,
			struct hp_mbucket *b)
{
	b->stack = r->stack_id < m->nstacks ? r->stack_id : 0;
	b->raw = r;
}

const char *hp_mstack_inferred(const struct hp_model *m, const struct hp_mstack *st,
			       uint64_t *elem, uint64_t *cookie)
{
	return hp_attr_stack_type(&((const struct priv *)m->priv)->attr, st, elem, cookie);
}

void hp_mbucket_values(const struct hp_model *m, const struct hp_mbucket *b,
		       struct hp_values *v)
{
	unbias(m, b->raw, v);
	/* glibc frees them after the exit snapshot: freed, as they are by
	 * the end of the process. */
	if (m->stacks[b->stack].freed_at_exit) {
		v->free_objects += v->inuse_objects;
		v->free_bytes += v->inuse_bytes;
		v->inuse_objects = v->inuse_bytes = 0;
	}
}

/* Marks the stacks whose blocks glibc frees after an exit snapshot
 * (exit_function_list), from their frames as built (before a filter
 * hides any). */
static void mark_freed_at_exit(struct hp_model *m)
{
	if (m->snap->reason != HP_SNAP_EXIT)
		return;
	for (size_t id = 0; id < m->nstacks; id++)
		m->stacks[id].freed_at_exit = (uint8_t)exit_function_list(m, &m->stacks[id]);
}

int hp_model_build(struct hp_model *m, const struct hp_capture *cap,
		   const struct hp_model_options *opts, char *err, size_t errlen)
{
	static const struct hp_model_options defaults = {.snapshot = -1};
	struct priv *p;
	int ret;

	memset(m, 0, sizeof *m);
	if (!opts)
		opts = &defaults;
	m->cap = cap;
	if (!cap->nsnapshots) {
		snprintf(err, errlen, "the capture holds no snapshot");
		return -ENODATA;
	}
	if (opts->snapshot >= (long)cap->nsnapshots) {
		snprintf(err, errlen, "there is no snapshot %ld (the capture has %zu)",
			 opts->snapshot + 1, cap->nsnapshots);
		return -EINVAL;
	}
	m->snap = &cap->snapshots[opts->snapshot < 0 ? (long)cap->nsnapshots - 1 : opts->snapshot];
	/* The buckets go at the end: the build reads them. */
	if (opts->release_frames == cap && (opts->release_parts & ~HP_CAP_PART_BUCKETS))
		hp_capture_release(opts->release_frames, opts->release_parts & ~HP_CAP_PART_BUCKETS);
	m->sample_rate_bytes = cap->sample_rate_bytes ? cap->sample_rate_bytes : 1;
	m->sampled = m->sample_rate_bytes > 1;

	m->priv = p = calloc(1, sizeof *p);
	if (!p)
		goto nomem;
	ret = hp_symbolizer_new(&p->sym, cap, opts->debug_dir,
				(opts->no_embedded ? 0 : HP_SYMBOLIZE_EMBEDDED) |
					(opts->embedded_only ? HP_SYMBOLIZE_NO_FILES : 0));
	if (ret)
		goto fail;
	/* Symbols from the binaries go through the user's symbol cache
	 * unless the caller brings its own (an "off" one included). */
	if (opts->symcache)
		hp_symbolizer_set_cache(p->sym, opts->symcache);
	else if ((opts->no_embedded || !cap->has_symbols) && !opts->embedded_only &&
		 hp_symcache_open(&p->own_cache, 0) == 0)
		hp_symbolizer_set_cache(p->sym, p->own_cache);

	m->nmodules = cap->nmodules;
	m->modules = calloc(m->nmodules ? m->nmodules : 1, sizeof *m->modules);
	if (!m->modules)
		goto nomem;
	/* Before the stacks: hp_model_frame_class reads their paths there. */
	for (size_t i = 0; i < m->nmodules; i++)
		m->modules[i].cap = &cap->modules[i];
	ret = build_stacks(m, opts);
	if (ret)
		goto fail;
#ifdef __GLIBC__
	/* The frames freed were small blocks all over the heap: glibc keeps
	 * them for later mallocs, which the model's large arrays (mapped
	 * apart) never use. Give their pages back (2^20 stacks: 130 MB). */
	if (opts->release_frames == cap)
		malloc_trim(0);
#endif
	/* Modules no frame falls in are never opened: a program maps dozens.
	 * (HP_MODSYM_OK is 0, calloc's value: each starts unused.) */
	for (size_t i = 0; i < m->nmodules; i++)
		m->modules[i].status = HP_MODSYM_UNUSED;
	for (size_t l = 0; l < m->nlocations; l++)
		if (m->locations[l].module >= 0)
			m->modules[m->locations[l].module].status = HP_MODSYM_OK;
	for (size_t i = 0; i < m->nmodules; i++) {
		const char *slash = strrchr(cap->modules[i].path, '/');
		m->modules[i].cap = &cap->modules[i];
		/* Shown, so escaped (text.h); the path itself stays raw. */
		m->modules[i].name = hp_symbolizer_intern(p->sym, slash ? slash + 1
									: cap->modules[i].path);
		m->modules[i].status = m->modules[i].status == HP_MODSYM_OK
					       ? hp_symbolizer_status(p->sym, (int)i)
					       : HP_MODSYM_UNUSED;
	}

	if (opts->locations_only)
		return 0;
	mark_freed_at_exit(m);
	if (opts->drop_buckets) {
		/* Each bucket made, summed into its stack and gone (model.h):
		 * only its heap (its origin tag's) of what attribution finds
		 * counts for the sums; no type is named. */
		ret = hp_attr_buckets(&p->attr, m, p->sym); /* no bucket: the threads' names */
		if (ret)
			goto fail;
		/* Loaded encoded (HP_CAP_LOAD_BUCKETS_ENCODED): read in turn
		 * (no end worked out from a NULL: a snapshot loaded whole has
		 * none). */
		const uint8_t *enc_at = m->snap->buckets_enc;
		struct hp_cursor enc = {enc_at, enc_at ? enc_at + m->snap->buckets_enc_len : NULL,
					0};
		for (size_t i = 0; i < m->snap->nbuckets; i++) {
			struct hp_rec_bucket read;
			const struct hp_rec_bucket *r = &read;
			if (m->snap->buckets)
				r = &m->snap->buckets[i];
			else
				hp_rec_bucket_get(&enc, &read);
			const struct hp_cap_tag *o =
				hp_capture_tag(cap, HP_TAG_ORIGIN, r->origin_tag);
			struct hp_mbucket b = {0};
			struct hp_values v;
			make_bucket(m, r, &b);
			if (o && o->c) /* a custom heap's: kept apart (model.h) */
				continue;
			hp_mbucket_values(m, &b, &v);
			hp_values_add(&m->total, &v);
			m->stacks[b.stack].nbuckets++;
			hp_values_add(&m->stacks[b.stack].v, &v);
		}
	} else {
		m->nbuckets = m->snap->nbuckets;
		m->buckets = calloc(m->nbuckets ? m->nbuckets : 1, sizeof *m->buckets);
		if (!m->buckets)
			goto nomem;
		for (size_t i = 0; i < m->nbuckets; i++)
			make_bucket(m, &m->snap->buckets[i], &m->buckets[i]);
		ret = hp_attr_buckets(&p->attr, m, p->sym);
		if (ret)
			goto fail;
		for (size_t i = 0; i < m->nbuckets; i++) {
			struct hp_mstack *st = &m->stacks[m->buckets[i].stack];
			struct hp_values v;
			if (m->buckets[i].heap) /* a custom heap's: kept apart (model.h) */
				continue;
			hp_mbucket_values(m, &m->buckets[i], &v);
			hp_values_add(&m->total, &v);
			st->nbuckets++;
			hp_values_add(&st->v, &v);
		}
	}
	round_stacks(m);
	count_cut(m);
	if (opts->filter) {
		ret = hp_model_filter(m, opts->filter, err, errlen);
		if (ret) {
			hp_model_free(m);
			return ret;
		}
	}
	/* The buckets' records hold the kept buckets' figures: they go only
	 * when none is kept. */
	if (opts->drop_buckets && opts->release_frames == cap)
		hp_capture_release(opts->release_frames, HP_CAP_PART_BUCKETS);
	return 0;

nomem:
	ret = -ENOMEM;
fail:
	snprintf(err, errlen, "%s", ret == -ENOMEM ? "out of memory" : strerror(-ret));
	hp_model_free(m);
	return ret;
}

void hp_model_free(struct hp_model *m)
{
	struct priv *p = m->priv;

	for (size_t i = 0; i < m->nlocations; i++)
		free(m->locations[i].syms);
	free(m->locations);
	free(m->stacks); /* their locations are in the blocks, freed below */
	free(m->buckets);
	free(m->modules);
	free(m->types);
	free(m->thread_shared);
	if (p) {
		for (size_t i = 0; i < p->nloc_blocks; i++)
			free(p->loc_blocks[i]);
		free(p->loc_blocks);
		hp_attr_free(&p->attr);
		hp_symbolizer_free(p->sym);
		hp_symcache_close(p->own_cache); /* writes what was read */
		hp_u64map_free(&p->index);
		free(p);
	}
	memset(m, 0, sizeof *m);
}

int hp_model_main_module(const struct hp_model *m)
{
	const char *prog = m->cap->has_meta ? m->cap->program : NULL;

	for (size_t i = 0; prog && i < m->nmodules; i++)
		if (strcmp(m->modules[i].cap->path, prog) == 0)
			return (int)i;
	return m->nmodules ? 0 : -1;
}

const char *hp_model_program_name(const struct hp_capture *cap)
{
	const char *name = NULL, *slash;

	if (cap->has_meta && cap->argc && cap->argv[0] && cap->argv[0][0])
		name = cap->argv[0];
	else if (cap->has_meta && cap->program && cap->program[0])
		name = cap->program;
	if (!name)
		return "(unknown program)";
	slash = strrchr(name, '/');
	return slash && slash[1] ? slash + 1 : name;
}

const char *hp_location_where(const struct hp_model *m, const struct hp_location *l, char *buf,
			      size_t cap)
{
	const struct hp_sym *s = &l->syms[0];

	if (s->file[0] && s->line)
		snprintf(buf, cap, "%s:%u", s->file, s->line);
	else if (l->address == HP_FRAME_GAP)
		snprintf(buf, cap, "(frames not kept)");
	else if (l->module >= 0)
		snprintf(buf, cap, "%s+0x%llx", m->modules[l->module].name,
			 (unsigned long long)l->module_offset);
	else
		snprintf(buf, cap, "0x%llx", (unsigned long long)l->address);
	return buf;
}

/* --- frames as people read them (model.h) ------------------------------ */

/* The runtime's frames below main and a thread's start routine (glibc's
 * names; _start is the executable's). */
static const char *const entry_names[] = {
	"_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_main_alias_2",
	"__libc_start_call_main", "start_thread", "clone", "clone3", "__clone", "__clone3",
	"__clone_internal", "__GI___clone", "__GI___clone3", "_dl_start_user",
};

/* Namespaces of the C++ runtime's implementation. A demangled template
 * function may start with its return type ("void std::vector<...>::..."):
 * the qualified name is then after the first space before any '(' or '<'. */
static const char *const library_namespaces[] = {
	"std::", "__gnu_cxx::", "__cxxabiv1::", "__gnu_debug::", "__pstl::",
	/* Rust's standard library, and its impls ("<alloc::vec::Vec<T> as
	 * core::clone::Clone>::clone", v0's "<alloc::raw_vec::RawVec<u8>>::grow") */
	"core::", "alloc::", "<std::", "<core::", "<alloc::", "__rust_", "__rdl_", "__rg_",
};

/* The language runtimes' shared objects by base name prefix: C, C++, the
 * unwinder, the loader, the allocators, Rust's std as a dylib. */
static const char *const runtime_modules[] = {
	"libc.so", "libc-", "libm.so", "libm-", "libpthread", "libdl.so", "libdl-", "librt.so",
	"libstdc++", "libc++", "libgcc_s", "libunwind", "ld-linux", "ld64.so", "libjemalloc",
	"libtcmalloc", "libmimalloc", "libheapprof", "libstd-",
};

static int runtime_module(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof runtime_modules / sizeof *runtime_modules; i++)
		if (strncmp(base, runtime_modules[i], strlen(runtime_modules[i])) == 0)
			return 1;
	return 0;
}

/* A source file of Rust's standard library: rustc's remapped path
 * ("/rustc/HASH/library/alloc/src/raw_vec.rs") or Debian's
 * (/usr/src/rustc-VERSION/library/...). */
static int rust_std_file(const char *file)
{
	return strncmp(file, "/rustc/", 7) == 0 || strncmp(file, "/usr/src/rustc", 14) == 0;
}

int hp_model_is_main(const struct hp_sym *s)
{
	return strcmp(s->function, "main") == 0;
}

int hp_model_is_rust_start(const char *fn)
{
	return strncmp(fn, "std::rt::lang_start", 19) == 0 ||
	       strstr(fn, "__rust_begin_short_backtrace") != NULL;
}

static int in_library_namespace(const char *fn)
{
	const char *sp = strpbrk(fn, " (<");

	if (sp && *sp == ' ')
		fn = sp + 1;
	for (size_t i = 0; i < sizeof library_namespaces / sizeof *library_namespaces; i++)
		if (strncmp(fn, library_namespaces[i], strlen(library_namespaces[i])) == 0)
			return 1;
	return 0;
}

static int under(const char *path, const char *dir)
{
	return strncmp(path, dir, strlen(dir)) == 0;
}

enum hp_frame_class hp_model_frame_class(const struct hp_model *m, const struct hp_location *l,
					 const struct hp_sym *s)
{
	const char *mod;

	if (l && l->classes && s >= l->syms && s < l->syms + l->nsyms)
		return (enum hp_frame_class)(l->classes[s - l->syms] & HP_SYM_CLASS);
	for (size_t i = 0; i < sizeof entry_names / sizeof *entry_names; i++)
		if (strcmp(s->function, entry_names[i]) == 0)
			return HP_FRAME_ENTRY;
	if (in_library_namespace(s->function) || under(s->file, "/usr/include/") ||
	    under(s->file, "/usr/lib/gcc/") || rust_std_file(s->file))
		return HP_FRAME_LIBRARY;
	/* The language runtime's libraries (libc, libstdc++, ld.so, the
	 * allocators) are libraries whatever their debug info says; any other
	 * shared object, installed or not, is code of the program's own (clang's
	 * is all in libclang-cpp.so and libLLVM.so). */
	/* The module's path: m->modules[i].cap's, or the capture's while the
	 * model is built (its locations are classed before that is set). */
	mod = "";
	if (l && l->module >= 0 && m)
		mod = m->modules[l->module].cap ? m->modules[l->module].cap->path
						: m->cap->modules[l->module].path;
	if (runtime_module(mod))
		return HP_FRAME_LIBRARY;
	return HP_FRAME_OWN;
}

/* Whether name[0..i) ends with "operator" (then '<' is the operator's). */
static int after_operator(const char *name, size_t i)
{
	if (i >= 8 && strncmp(name + i - 8, "operator", 8) == 0)
		return 1;
	return i >= 9 && strncmp(name + i - 9, "operator<", 9) == 0;
}

char *hp_name_shorten(char *out, size_t cap, const char *name)
{
	size_t o = 0;
	int depth = 0;

	if (!cap)
		return out;
	for (size_t i = 0; name[i] && o + 1 < cap; i++) {
		char c = name[i];
		if (c == '<' && !depth && after_operator(name, i)) {
			out[o++] = c;
			continue;
		}
		if (c == '<') {
			if (depth++ == 0) {
				/* "<...>": the opening and "..." now, the '>' at the end */
				if (o + 5 >= cap)
					break;
				memcpy(out + o, "<...", 4);
				o += 4;
			}
			continue;
		}
		if (c == '>' && depth) {
			if (--depth == 0)
				out[o++] = '>';
			continue;
		}
		if (!depth)
			out[o++] = c;
	}
	/* An unclosed '<' (a cut name): close what was opened. */
	if (depth && o + 1 < cap)
		out[o++] = '>';
	out[o] = '\0';
	return out;
}

/* The end of the bracketed text opening at name[i] ('<', '(', '{' or
 * '['): the index of its closing bracket, or of the terminating NUL when
 * it is not closed. Only brackets of the same kind nest. */
static size_t closing(const char *name, size_t i)
{
	char open = name[i], close = open == '<' ? '>' : open == '(' ? ')' : open == '{' ? '}' : ']';
	int depth = 0;

	for (; name[i]; i++) {
		if (name[i] == open)
			depth++;
		else if (name[i] == close && --depth == 0)
			return i;
	}
	return i;
}

/* The start of a demangled function's parameter list in name (templates
 * already elided): the last '(' at the top level, not operator()'s own,
 * after which no "::" follows; 0 when it has none. */
static size_t parameters_at(const char *name)
{
	size_t at = 0;

	for (size_t i = 0; name[i]; i++) {
		if (name[i] == '{' || name[i] == '[') {
			i = closing(name, i);
			if (!name[i])
				break;
			continue;
		}
		if (name[i] != '(')
			continue;
		if (i >= 8 && strncmp(name + i - 8, "operator", 8) == 0 && name[i + 1] == ')') {
			i++; /* operator()'s name */
			continue;
		}
		if (strncmp(name + i, "(anonymous namespace)", 21) == 0) {
			i += 20; /* a namespace's name, not parameters */
			continue;
		}
		size_t j = closing(name, i);
		if (!name[j])
			break;
		if (!strstr(name + j, "::"))
			at = i;
		i = j;
	}
	return at;
}

/* Where a demangled template function's return type ends ("void
 * ns::f<...>"): just past the last top-level space before the function's
 * operator keyword, if any; 0 when there is none. */
static size_t return_type_end(const char *name, size_t len)
{
	size_t end = 0, op = len;
	const char *p = name;

	while ((p = strstr(p, "operator")) && (size_t)(p - name) < len) {
		op = (size_t)(p - name);
		p += 8;
	}
	for (size_t i = 0; i < op; i++) {
		if (name[i] == '(' || name[i] == '{' || name[i] == '[') {
			i = closing(name, i);
			if (!name[i])
				break;
		} else if (name[i] == ' ') {
			end = i + 1;
		}
	}
	return end;
}

char *hp_name_display(char *out, size_t cap, const char *name)
{
	char *tmp;
	size_t o = 0, i = 0, at, start, len;

	if (!cap)
		return out;
	tmp = malloc(cap);
	if (!tmp) {
		return hp_name_shorten(out, cap, name);
	}
	/* A Rust v0 impl's path, "<r::Node>::build" or "<T as Trait>::f":
	 * the self type is the name's first part, not a template argument. */
	if (name[0] == '<' && name[closing(name, 0)] == '>') {
		size_t end = closing(name, 0);
		char *inner = strndup(name + 1, end - 1);
		if (inner) {
			hp_name_shorten(tmp, cap, inner);
			o = (size_t)snprintf(out, cap, "<%s>", tmp);
			if (o >= cap)
				o = cap - 1;
			free(inner);
			i = end + 1;
		}
	}
	hp_name_shorten(tmp, cap, name + i);
	at = parameters_at(tmp);
	len = at ? at : strlen(tmp);
	start = at && !o ? return_type_end(tmp, len) : 0;
	snprintf(out + o, cap - o, "%.*s", (int)(len - start), tmp + start);
	free(tmp);
	return out;
}

/* --- filters (model.h) ------------------------------------------------- */

/* Whether symbolic frame s of l matches re: its function name, or for a
 * frame without a symbol ("??", "0x..."), its module's file name. */
static int sym_matches(const struct hp_model *m, const struct hp_location *l,
		       const struct hp_sym *s, const regex_t *re)
{
	if (regexec(re, s->function, 0, NULL, 0) == 0)
		return 1;
	if (l->module < 0 || (s->function[0] != '?' && strncmp(s->function, "0x", 2) != 0))
		return 0;
	return regexec(re, m->modules[l->module].name, 0, NULL, 0) == 0;
}

static int stack_matches(const struct hp_model *m, const struct hp_mstack *st, const regex_t *re)
{
	for (uint32_t i = 0; i < st->depth; i++) {
		const struct hp_location *l = &m->locations[hp_mstack_location(st, i)];
		for (uint32_t k = 0; k < l->nsyms; k++)
			if (sym_matches(m, l, &l->syms[k], re))
				return 1;
	}
	return 0;
}

static int compile(regex_t *re, const char *pattern, const char *opt, char *err, size_t errlen)
{
	char why[256];
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (!rc)
		return 0;
	regerror(rc, re, why, sizeof why);
	snprintf(err, errlen, "%s: '%s' is not a regular expression: %s", opt, pattern, why);
	return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
}

#define LOC_GONE UINT32_MAX

/* The location to show for l once the frames matching re are hidden: loc
 * itself, a new location with the other frames, or LOC_GONE. */
static int hidden_variant(struct hp_model *m, uint32_t loc, const regex_t *re, uint32_t *out)
{
	const struct hp_location *l = &m->locations[loc];
	struct hp_sym kept[MAX_SYMS];
	int n = 0;

	for (uint32_t k = 0; k < l->nsyms && k < MAX_SYMS; k++)
		if (!sym_matches(m, l, &l->syms[k], re))
			kept[n++] = l->syms[k];
	*out = loc;
	if ((uint32_t)n == l->nsyms)
		return 0;
	if (!n) {
		*out = LOC_GONE;
		return 0;
	}
	kept[n - 1].inlined = 0; /* the outermost one left holds the address */
	/* new_location copies kept: l may move, kept does not. */
	return new_location(m, l->address, kept, n, out);
}

static int hide_frames(struct hp_model *m, const regex_t *re)
{
	size_t n = m->nlocations;
	uint32_t *variant = malloc((n ? n : 1) * sizeof *variant);
	int err = 0;

	if (!variant)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++)
		err = hidden_variant(m, (uint32_t)i, re, &variant[i]);
	for (size_t id = 0; id < m->nstacks && !err; id++) {
		struct hp_mstack *st = &m->stacks[id];
		uint32_t locs[HP_CAP_MAX_DEPTH], d = 0, most = 0;
		for (uint32_t i = 0; i < st->depth && d < HP_CAP_MAX_DEPTH; i++) {
			uint32_t v = variant[hp_mstack_location(st, i)];
			if (v != LOC_GONE) {
				locs[d++] = v;
				most |= v;
			}
		}
		st->depth = d;
		/* In place, unless a variant made here does not fit the
		 * list's width. */
		if (st->wide_locations && !st->packed_locations)
			memcpy(st->locations.wide, locs, d * sizeof *locs);
		else if (st->packed_locations && most <= 0xffffff)
			for (uint32_t i = 0; i < d; i++) {
				st->locations.packed[3 * i] = (uint8_t)locs[i];
				st->locations.packed[3 * i + 1] = (uint8_t)(locs[i] >> 8);
				st->locations.packed[3 * i + 2] = (uint8_t)(locs[i] >> 16);
			}
		else if (!st->wide_locations && most <= UINT16_MAX)
			for (uint32_t i = 0; i < d; i++)
				st->locations.narrow[i] = (uint16_t)locs[i];
		else
			err = set_locations(m->priv, st, locs, d);
	}
	free(variant);
	return err;
}

int hp_model_filter(struct hp_model *m, const struct hp_model_filter *f, char *err,
		    size_t errlen)
{
	regex_t focus, ignore, hide;
	int have_focus = 0, have_ignore = 0, have_hide = 0, ret = 0;
	size_t nb = 0;
	uint8_t *keep = NULL;

	if (f->focus && !(ret = compile(&focus, f->focus, "--focus", err, errlen)))
		have_focus = 1;
	if (!ret && f->ignore && !(ret = compile(&ignore, f->ignore, "--ignore", err, errlen)))
		have_ignore = 1;
	if (!ret && f->hide && !(ret = compile(&hide, f->hide, "--hide", err, errlen)))
		have_hide = 1;
	if (ret)
		goto out;
	m->filter_stacks = m->filter_kept = 0;
	/* focus and ignore see the stacks whole, as pprof does: before hide. */
	/* keep[id]: whether stack id stays. A stack of a custom heap's blocks
	 * has no malloc bucket (nbuckets 0) and is matched all the same: its
	 * buckets follow their stack. */
	keep = malloc((m->nstacks ? m->nstacks : 1) * sizeof *keep);
	if (!keep) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t id = 0; id < m->nstacks; id++) {
		struct hp_mstack *st = &m->stacks[id];
		keep[id] = (!have_focus || stack_matches(m, st, &focus)) &&
			   (!have_ignore || !stack_matches(m, st, &ignore));
		if (!st->nbuckets)
			continue;
		m->filter_stacks++;
		if (keep[id]) {
			m->filter_kept++;
			continue;
		}
		st->nbuckets = 0;
		memset(&st->v, 0, sizeof st->v);
	}
	/* The total is the kept stacks' (whose figures a sampled model has
	 * rounded already: round_stacks). */
	memset(&m->total, 0, sizeof m->total);
	for (size_t id = 0; id < m->nstacks; id++)
		if (keep[id] && m->stacks[id].nbuckets)
			hp_values_add(&m->total, &m->stacks[id].v);
	for (size_t i = 0; i < m->nbuckets; i++)
		if (keep[m->buckets[i].stack])
			m->buckets[nb++] = m->buckets[i];
	m->nbuckets = nb;
	if (have_hide)
		ret = hide_frames(m, &hide);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
out:
	free(keep);
	if (have_focus)
		regfree(&focus);
	if (have_ignore)
		regfree(&ignore);
	if (have_hide)
		regfree(&hide);
	return ret;
}
