/*
 * gen_stacks.c - writes a synthetic capture with N distinct call stacks,
 * to measure the analyzer on a profile far larger than most programs make.
 *
 *     gen_stacks OUT.hpf BINARY STACKS [ADDRESSES]
 *
 * The stacks are 8 frames deep, drawn from ADDRESSES (default 20000)
 * distinct addresses spread over BINARY's executable segment, which is
 * recorded as the only module (at a load bias of its own), so
 * the analyzer symbolizes against a real file. Each stack has one bucket.
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

#include "../../src/format/encode.h"
#include "../../src/format/format.h"

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
	hp_buf_put_u(&p, 1); hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 0);
	hp_buf_put_u(&p, 4096); hp_buf_put_str(&p, path); hp_buf_put_u(&p, 1);
	hp_buf_put_str(&p, argv[2]); hp_buf_put_str(&p, "gen_stacks");
	hp_buf_put_u(&p, 1); hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 64); hp_buf_put_u(&p, 0);
	hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 0);
	hp_format_put_record(&out, HP_REC_META, p.data, p.len, z);
	p.len = 0;
	/* MODULES: the binary, its text segment */
	hp_buf_put_u(&p, 1); hp_buf_put_u(&p, HP_MOD_LOAD); hp_buf_put_u(&p, 0); hp_buf_put_u(&p, 0);
	hp_buf_put_str(&p, path); hp_buf_put_blob(&p, build_id, bid_len); hp_buf_put_u(&p, BIAS);
	hp_buf_put_u(&p, 1); hp_buf_put_u(&p, text.p_vaddr); hp_buf_put_u(&p, text.p_memsz);
	hp_buf_put_u(&p, text.p_offset); hp_buf_put_u(&p, text.p_flags);
	hp_format_put_record(&out, HP_REC_MODULES, p.data, p.len, z);
	p.len = 0;
	/* STACKS, in records of 100k */
	for (size_t first = 1; first <= nstacks; first += 100000) {
		size_t n = nstacks - first + 1 < 100000 ? nstacks - first + 1 : 100000;
		hp_buf_put_u(&p, first);
		hp_buf_put_u(&p, n);
		for (size_t i = 0; i < n; i++) {
			uint64_t f[DEPTH];
			/* Distinct stacks: the innermost two frames encode the index. */
			f[0] = addrs[(first + i) % naddrs];
			f[1] = addrs[((first + i) / naddrs) % naddrs];
			for (int k = 2; k < DEPTH; k++)
				f[k] = addrs[next() % naddrs];
			hp_buf_put_u(&p, DEPTH);
			hp_buf_put_u(&p, f[0]);
			for (int k = 1; k < DEPTH; k++)
				hp_buf_put_s(&p, (int64_t)(f[k] - f[k - 1]));
		}
		hp_format_put_record(&out, HP_REC_STACKS, p.data, p.len, z);
		p.len = 0;
	}
	/* SNAPSHOT: one bucket per stack */
	hp_buf_put_u(&p, 1); hp_buf_put_u(&p, 1000000000); hp_buf_put_u(&p, HP_SNAP_EXIT);
	hp_buf_put_u(&p, 0);
	hp_buf_put_u(&p, nstacks * 3); hp_buf_put_u(&p, nstacks * 300);
	hp_buf_put_u(&p, nstacks * 2); hp_buf_put_u(&p, nstacks * 200);
	hp_buf_put_u(&p, nstacks * 100); hp_buf_put_u(&p, nstacks); hp_buf_put_u(&p, 500000000);
	hp_buf_put_u(&p, nstacks + 1); hp_buf_put_u(&p, 0);
	hp_buf_put_u(&p, nstacks);
	for (size_t i = 1; i <= nstacks; i++) {
		uint64_t v[12] = {i, 0, 0, 0, 3, 300, 2, 200, 1, 100, 1, 100};
		for (int k = 0; k < 12; k++)
			hp_buf_put_u(&p, v[k]);
	}
	hp_format_put_record(&out, HP_REC_SNAPSHOT, p.data, p.len, z);

	FILE *f = fopen(argv[1], "w");
	if (!f || out.err || fwrite(out.data, 1, out.len, f) != out.len || fclose(f)) {
		fprintf(stderr, "gen_stacks: cannot write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
