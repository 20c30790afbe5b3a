/*
 * gen_stacks.c - writes a synthetic capture with N distinct call stacks,
 * to measure the analyzer on a profile far larger than most programs make.
 *
 *     gen_stacks OUT.hpf BINARY STACKS [ADDRESSES]
 *
 * The stacks are 8 frames deep, drawn from ADDRESSES (default 20000)
 * distinct addresses spread over BINARY's executable segment, which is
 * recorded as the only module (at a load bias of its own), so
 * the analyzer symbolizes against a real file. Each stack has one bucket,
 * with its size and lifetime histograms.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../../src/format/records.h"

#define DEPTH 8
#define BIAS 0x555500000000ull

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	struct hp_buf out = {.grow = hp_buf_grow_heap}, p = {.grow = hp_buf_grow_heap};
	ZSTD_CCtx *z = ZSTD_createCCtx();
	GElf_Phdr ph, text = {0};
	uint8_t build_id[64];
	size_t bid_len = 0, nstacks, naddrs;
	uint64_t *addrs;
	Elf *e;
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: gen_stacks OUT.hpf BINARY STACKS [ADDRESSES]\n");
		return 2;
	}
	char path[4096];
	if (!realpath(argv[2], path)) {
		fprintf(stderr, "gen_stacks: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	nstacks = strtoull(argv[3], NULL, 10);
	naddrs = argc > 4 ? strtoull(argv[4], NULL, 10) : 20000;
	elf_version(EV_CURRENT);
	fd = open(argv[2], O_RDONLY);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!e) {
		fprintf(stderr, "gen_stacks: cannot read %s\n", argv[2]);
		return 1;
	}
	size_t nph;
	elf_getphdrnum(e, &nph);
	for (size_t i = 0; i < nph; i++) {
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			text = ph;
	}
	/* The build-id, so the analyzer accepts the binary. */
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= sizeof build_id) {
				memcpy(build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
				bid_len = nh.n_descsz;
			}
	}

	addrs = malloc(naddrs * sizeof *addrs);
	for (size_t i = 0; i < naddrs; i++)
		addrs[i] = BIAS + text.p_vaddr + 1 + next() % (text.p_memsz - 1);

	hp_format_put_file_header(&out);
	/* META */
	hp_rec_meta_put(&p, &(struct hp_rec_meta){.pid = 1, .page_size = 4096,
						  .program = hp_rec_str_of(path)});
	hp_rec_count_put(&p, 1);
	hp_rec_str_put(&p, hp_rec_str_of(argv[2]));
	hp_rec_meta_options_put(&p, &(struct hp_rec_meta_options){
		.recorder_version = hp_rec_str_of("gen_stacks"), .sample_rate_bytes = 1,
		.max_depth = 64});
	hp_format_put_record(&out, HP_REC_META, p.data, p.len, z);
	p.len = 0;
	/* MODULES: the binary, its text segment */
	hp_rec_count_put(&p, 1);
	hp_rec_module_event_put(&p, &(struct hp_rec_module_event){
		.kind = HP_MOD_LOAD, .path = hp_rec_str_of(path),
		.build_id = {(const char *)build_id, bid_len}, .bias = BIAS, .segment_count = 1});
	hp_rec_segment_put(&p, &(struct hp_rec_segment){text.p_vaddr, text.p_memsz, text.p_offset,
							 text.p_flags});
	hp_format_put_record(&out, HP_REC_MODULES, p.data, p.len, z);
	p.len = 0;
	/* STACKS, in records of 100k */
	for (size_t first = 1; first <= nstacks; first += 100000) {
		size_t n = nstacks - first + 1 < 100000 ? nstacks - first + 1 : 100000;
		hp_rec_stacks_put(&p, &(struct hp_rec_stacks){.first_id = first, .count = n});
		for (size_t i = 0; i < n; i++) {
			uint64_t f[DEPTH];
			/* Distinct stacks: the innermost two frames encode the index. */
			f[0] = addrs[(first + i) % naddrs];
			f[1] = addrs[((first + i) / naddrs) % naddrs];
			for (int k = 2; k < DEPTH; k++)
				f[k] = addrs[next() % naddrs];
			hp_rec_stack_put(&p, f, DEPTH);
		}
		hp_format_put_record(&out, HP_REC_STACKS, p.data, p.len, z);
		p.len = 0;
	}
	/* SNAPSHOT: one bucket per stack */
	hp_rec_snapshot_put(&p, &(struct hp_rec_snapshot){
		.seq = 1, .time_ns = 1000000000, .reason = HP_SNAP_EXIT,
		.alloc_count = nstacks * 3, .alloc_bytes = nstacks * 300,
		.free_count = nstacks * 2, .free_bytes = nstacks * 200,
		.peak_bytes = nstacks * 100, .peak_count = nstacks, .peak_time_ns = 500000000,
		.stack_count = nstacks + 1});
	hp_rec_count_put(&p, 0); /* lost */
	hp_rec_count_put(&p, nstacks);
	for (size_t i = 1; i <= nstacks; i++)
		hp_rec_bucket_put(&p, &(struct hp_rec_bucket){.stack_id = (uint32_t)i,
							      .alloc_count = 3, .alloc_bytes = 300,
							      .free_count = 2, .free_bytes = 200,
							      .peak_count = 1, .peak_bytes = 100,
							      .temp_count = 1, .temp_bytes = 100});
	hp_format_put_record(&out, HP_REC_SNAPSHOT, p.data, p.len, z);
	p.len = 0;
	/* HISTOGRAMS: each bucket's 3 allocations of 100 B (size class 7), its
	 * 2 frees in a lifetime class of its own (0..16), as a run records. */
	hp_rec_hists_put(&p, &(struct hp_rec_hists){.seq = 1, .count = nstacks});
	for (size_t i = 1; i <= nstacks; i++) {
		struct hp_rec_hist h = {0};
		h.size[hp_hist_size_class(100)] = 3;
		h.life[i % HP_HIST_LIFE_CLASSES] = 2;
		hp_rec_hist_put(&p, &h);
	}
	/* Uncompressed: so regular a payload would pass the reader's limit on
	 * the ratio of compression (format.h HP_FORMAT_MAX_RATIO). */
	hp_format_put_record(&out, HP_REC_HISTOGRAMS, p.data, p.len, NULL);

	FILE *f = fopen(argv[1], "w");
	if (!f || out.err || fwrite(out.data, 1, out.len, f) != out.len || fclose(f)) {
		fprintf(stderr, "gen_stacks: cannot write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
