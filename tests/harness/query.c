/*
 * query.c - questions the tests ask of a capture (see query.h).
 */
#include "query.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sym {
	uint64_t lo, hi;
	char *name;
};

struct symtab {
	char *path;
	struct sym *syms;
	size_t n;
};

static struct symtab tabs[64];
static size_t ntabs;

static void load_symtab(struct symtab *t, const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	t->path = strdup(path);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_value)
				continue;
			if (t->n == cap) {
				cap = cap ? cap * 2 : 256;
				t->syms = realloc(t->syms, cap * sizeof *t->syms);
			}
			t->syms[t->n++] = (struct sym){s.st_value, s.st_value + (s.st_size ? s.st_size : 1),
						       strdup(elf_strptr(e, sh.sh_link, s.st_name))};
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

const char *hpq_symbol(const struct hp_capture *cap, uint64_t addr)
{
	const struct hp_cap_module *m = hp_capture_module_of(cap, addr - 1);
	struct symtab *t = NULL;
	uint64_t off;

	if (!m)
		return "?";
	for (size_t i = 0; i < ntabs; i++)
		if (strcmp(tabs[i].path, m->path) == 0)
			t = &tabs[i];
	if (!t) {
		if (ntabs == sizeof tabs / sizeof *tabs)
			return "?";
		t = &tabs[ntabs++];
		load_symtab(t, m->path);
	}
	off = addr - 1 - m->bias;
	for (size_t i = 0; i < t->n; i++)
		if (off >= t->syms[i].lo && off < t->syms[i].hi)
			return t->syms[i].name;
	return "?";
}

struct hp_capture *hpq_load(const char *path)
{
	struct hp_capture *cap = calloc(1, sizeof *cap);
	char err[512];

	if (hp_capture_load(path, cap, err, sizeof err) < 0) {
		printf("  cannot load capture: %s\n", err);
		free(cap);
		return NULL;
	}
	for (size_t i = 0; i < cap->ndamage && i < HP_CAP_MAX_DAMAGE; i++)
		printf("  capture damage: %s\n", cap->damage[i]);
	return cap;
}

void hpq_free(struct hp_capture *cap)
{
	if (cap) {
		hp_capture_free(cap);
		free(cap);
	}
}

static void add(struct hpq_sum *s, const struct hp_rec_bucket *b)
{
	s->buckets++;
	s->alloc_count += b->alloc_count;
	s->alloc_bytes += b->alloc_bytes;
	s->free_count += b->free_count;
	s->free_bytes += b->free_bytes;
	s->peak_count += b->peak_count;
	s->peak_bytes += b->peak_bytes;
	s->temp_count += b->temp_count;
	s->temp_bytes += b->temp_bytes;
}

struct hpq_sum hpq_match(const struct hp_capture *cap, const char *const *frames)
{
	struct hpq_sum sum = {0};
	const struct hp_cap_snapshot *s = cap ? hp_capture_last(cap) : NULL;

	for (size_t i = 0; s && i < s->nbuckets; i++) {
		const struct hp_rec_bucket *b = &s->buckets[i];
		const struct hp_cap_stack *st;
		uint32_t k = 0;

		if (!b->stack_id || b->stack_id >= cap->nstacks)
			continue;
		st = &cap->stacks[b->stack_id];
		for (; frames[k]; k++)
			if (k >= st->depth || strcmp(hpq_symbol(cap, st->frames[k]), frames[k]) != 0)
				break;
		if (!frames[k])
			add(&sum, b);
	}
	return sum;
}

struct hpq_sum hpq_total(const struct hp_capture *cap)
{
	struct hpq_sum sum = {0};
	const struct hp_cap_snapshot *s = cap ? hp_capture_last(cap) : NULL;

	for (size_t i = 0; s && i < s->nbuckets; i++)
		add(&sum, &s->buckets[i]);
	return sum;
}

void hpq_dump(const struct hp_capture *cap)
{
	const struct hp_cap_snapshot *s = cap ? hp_capture_last(cap) : NULL;

	for (size_t i = 0; s && i < s->nbuckets; i++) {
		const struct hp_rec_bucket *b = &s->buckets[i];
		printf("    bucket alloc %llu/%llu free %llu/%llu peak %llu/%llu temp %llu/%llu:",
		       (unsigned long long)b->alloc_count, (unsigned long long)b->alloc_bytes,
		       (unsigned long long)b->free_count, (unsigned long long)b->free_bytes,
		       (unsigned long long)b->peak_count, (unsigned long long)b->peak_bytes,
		       (unsigned long long)b->temp_count, (unsigned long long)b->temp_bytes);
		if (b->stack_id && b->stack_id < cap->nstacks)
			for (uint32_t f = 0; f < cap->stacks[b->stack_id].depth && f < 8; f++)
				printf(" %s", hpq_symbol(cap, cap->stacks[b->stack_id].frames[f]));
		printf("\n");
	}
}
