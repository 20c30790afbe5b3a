/*
 * test_core_fuzz.c - a short, deterministic fuzz run of the core reader
 * (issue 12: "the core reader is fuzzed like the capture reader").
 *
 * The seed is a real core of a process that ran under heapprof
 * (tests/programs/corerec, as test_core_rec.c makes it): its libheapprof
 * is on this machine, so the recorder's root is found and every table
 * behind it is read. Each case mutates a copy, with a fixed PRNG, where
 * the reader looks: the fields of heapprof_root (found by its magic) set
 * to boundary values (0, 1, 31, 32, 64, 2^32 - 1, 2^63 ...), the words of
 * the tables the root points to, the program headers and notes at the
 * start of the file, bytes anywhere, and a cut at a random length. Then,
 * in a child, everything `heapprof core` and `heapprof report CORE` do:
 * hp_core_open_mem, modules, the recorder's tables, the glibc heap, the
 * scan, both reports, the capture of the dump and its loading.
 *
 * The model: whatever the bytes, the reader gives one clear line (an
 * error without a newline, non-empty) or a result; it never crashes,
 * never hangs (10 s), and never needs memory out of proportion to the
 * input: the child runs under RLIMIT_AS of what it holds plus 16 times
 * the input plus 64 MiB, and an allocation failing there (-ENOMEM) is a
 * failure too. HP_CORE_FUZZ_CASES=N runs N cases (default 120), and
 * HP_CORE_FUZZ_CASE=K only case K, to replay one.
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/format/capture.h"
#include "../../src/analyzer/core/core.h"
#include "../../src/format/encode.h"
#include "../../src/format/root.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const uint64_t boundary[] = {
	0, 1, 2, 7, 8, 16, 31, 32, 33, 63, 64, 255, 256, 4096, 0x7fffffff, 0x80000000,
	0xffffffff, UINT64_C(0x100000000), UINT64_C(0x7fffffffffffffff), UINT64_MAX,
};

/* The core's bytes at a process address (its PT_LOADs), or SIZE_MAX. */
static size_t file_offset(const unsigned char *d, size_t n, uint64_t addr)
{
	struct hp_core c;
	char err[256];
	size_t off = SIZE_MAX;

	if (hp_core_open_mem(&c, d, n, "seed", err, sizeof err))
		return off;
	for (size_t i = 0; i < c.nsegs; i++)
		if (addr >= c.segs[i].vaddr && addr - c.segs[i].vaddr < c.segs[i].present)
			off = (size_t)(c.segs[i].offset + (addr - c.segs[i].vaddr));
	hp_core_close(&c);
	return off;
}

struct seed {
	unsigned char *data;
	size_t size;
	size_t root;            /* heapprof_root's offset in the file */
	size_t tables[16];      /* offsets of tables the root points to */
	size_t ntables;
	size_t heads[256];      /* offsets of glibc chunk headers (the first 256) */
	size_t nheads;
};

/* Fills s->heads with the file offsets of the heap's chunk headers (the
 * seed's own walk). */
static void heap_heads(struct seed *s)
{
	struct hp_core c;
	char err[256];

	if (hp_core_open_mem(&c, s->data, s->size, "seed", err, sizeof err))
		return;
	if (hp_core_modules(&c, NULL) == 0 && hp_core_heap(&c, NULL) == 0)
		for (size_t i = 0; i < c.nblocks && s->nheads < 256; i++) {
			size_t off;
			if (c.blocks[i].mmapped)
				continue;
			for (size_t k = 0; k < c.nsegs; k++) {
				const struct hp_core_seg *g = &c.segs[k];
				uint64_t a = c.blocks[i].addr - 16;
				if (a >= g->vaddr && a + 32 <= g->vaddr + g->present) {
					off = (size_t)(g->offset + (a - g->vaddr));
					s->heads[s->nheads++] = off;
					break;
				}
			}
		}
	hp_core_close(&c);
}

static void put(unsigned char *d, size_t n, size_t at, uint64_t v, size_t width);

/* Mutates the heap's bytes in 1 to 4 places: a chunk's prev_size, size,
 * first or second user word (a free chunk's links) set to a boundary
 * value, a random word, a nearby plausible size or 0x41 bytes (an
 * overrun of 8 to 64 bytes from the chunk before). */
static void mutate_heap(const struct seed *s, unsigned char *d, size_t n)
{
	int k = 1 + (int)(rnd() % 4);

	if (!s->nheads)
		return;
	for (int i = 0; i < k; i++) {
		size_t at = s->heads[rnd() % s->nheads];
		uint64_t v, cur;
		memcpy(&cur, d + at + 8, 8);
		switch (rnd() % 4) {
		case 0:
			v = boundary[rnd() % (sizeof boundary / sizeof *boundary)];
			break;
		case 1:
			v = rnd();
			break;
		case 2: /* a size off by a few chunks, flags kept or flipped */
			v = (cur + 16 * (rnd() % 9) - 64) ^ (rnd() % 8);
			break;
		default: { /* an overrun from the chunk before, 8 to 64 bytes */
			size_t back = at >= 32 ? 8 * (rnd() % 4) : 0, len = 8 + 8 * (rnd() % 8);
			if (at - back + len <= n)
				memset(d + at - back, 0x41, len);
			continue;
		}
		}
		put(d, n, at + 8 * (rnd() % 4), v, rnd() % 2 ? 4 : 8);
	}
}

static void put(unsigned char *d, size_t n, size_t at, uint64_t v, size_t width)
{
	if (at < n && n - at >= width)
		memcpy(d + at, &v, width); /* little-endian, as the core */
}

/* Mutates d[0..*n) in 1 to 4 places. */
static void mutate(const struct seed *s, unsigned char *d, size_t *n)
{
	int k = 1 + (int)(rnd() % 4);

	for (int i = 0; i < k; i++) {
		uint64_t v = rnd() % 3 ? boundary[rnd() % (sizeof boundary / sizeof *boundary)]
				       : rnd();
		size_t width = rnd() % 2 ? 4 : 8;
		switch (rnd() % 6) {
		case 0:
		case 1: /* a field of the root */
			put(d, *n, s->root + 4 * (rnd() % (sizeof(struct hp_root) / 4)), v, width);
			break;
		case 2: /* a word of a table behind it */
			if (s->ntables)
				put(d, *n, s->tables[rnd() % s->ntables] + 4 * (rnd() % 64), v, width);
			break;
		case 3: /* the headers and notes */
			put(d, *n, 4 * (rnd() % (*n < 65536 ? *n / 4 : 16384)), v, width);
			break;
		case 4: /* anywhere */
			d[rnd() % *n] ^= (unsigned char)(1u << (rnd() % 8));
			break;
		default: /* cut */
			if (rnd() % 3 == 0)
				*n = 64 + rnd() % (*n - 64);
		}
	}
}

/* Exit statuses of a case's child. */
enum { CASE_OK = 0, CASE_NO_LINE = 3, CASE_NOMEM = 4, CASE_WALK = 5 };

static int one_line(const char *s)
{
	return s[0] && !strchr(s, '\n');
}

/* What `heapprof core` and `heapprof report CORE` do, on d[0..n). */
static int run_case(const unsigned char *d, size_t n)
{
	struct hp_core c;
	struct hp_core_report_options ro = {.top = 5};
	struct hp_buf buf = {.grow = hp_buf_grow_heap};
	char err[1024] = "";
	FILE *f;
	int ret;

	ret = hp_core_open_mem(&c, d, n, "fuzz.core", err, sizeof err);
	if (ret)
		return ret == -ENOMEM ? CASE_NOMEM : one_line(err) ? CASE_OK : CASE_NO_LINE;
	if ((ret = hp_core_modules(&c, NULL)) || (ret = hp_core_recorder(&c)) ||
	    (ret = hp_core_heap(&c, NULL)) || (ret = hp_core_scan(&c)))
		goto out;
	for (size_t i = 0; i < c.nnotes; i++)
		if (!one_line(c.notes[i]))
			return CASE_NO_LINE;
	f = fopen("/dev/null", "w");
	if (!f)
		return 1;
	for (ro.json = 0; ro.json < 2; ro.json++) {
		if (c.rec.found)
			hp_core_rec_report(f, &c, &ro);
		hp_core_report(f, &c, &ro);
	}
	for (ro.json = 0; ro.json < 2; ro.json++) {
		if (c.nblocks)
			hp_core_whatis(f, &c, &c.blocks[c.nblocks / 2].addr, 1, &ro);
		if (c.rec.nblocks)
			hp_core_whatis(f, &c, &c.rec.blocks[c.rec.nblocks / 2].addr, 1, &ro);
		hp_core_damage_report(f, &c, &ro);
		for (size_t i = 0; i < c.ndamage && i < 4; i++)
			hp_core_whatis(f, &c, &c.damage[i].addr, 1, &ro);
	}
	fclose(f);
	/* the walk's invariants, whatever the heap's bytes: blocks sorted and
	 * apart, the bytes not walked within the core's */
	for (size_t i = 1; i < c.nblocks; i++)
		if (c.blocks[i].addr < c.blocks[i - 1].addr + c.blocks[i - 1].size)
			return CASE_WALK;
	if (c.unwalked_bytes > n * 2 + (64u << 20))
		return CASE_WALK;
	if (c.rec.found && !(ret = hp_core_capture(&c, &buf))) {
		struct hp_capture cap;
		if (hp_capture_load_mem(buf.data, buf.len, &cap, err, sizeof err) == 0)
			hp_capture_free(&cap);
		else if (!one_line(err))
			ret = 1;
	}
	free(buf.data);
out:
	hp_core_close(&c);
	return ret == -ENOMEM ? CASE_NOMEM : ret ? 1 : CASE_OK;
}

/* Runs one case in a child, under the memory bound and a time limit.
 * Returns its wait status. */
static int fork_case(const unsigned char *d, size_t n)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		long pages = 0, page = sysconf(_SC_PAGESIZE);
		FILE *statm = fopen("/proc/self/statm", "r");
		struct rlimit rl;
		if (!statm || fscanf(statm, "%ld", &pages) != 1)
			_exit(1);
		fclose(statm);
		rl.rlim_cur = rl.rlim_max = (rlim_t)pages * page + 16 * (rlim_t)n + (64u << 20);
		setrlimit(RLIMIT_AS, &rl);
		alarm(10);
		_exit(run_case(d, n));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static int load_seed(struct seed *s, const char *path)
{
	FILE *f = fopen(path, "rb");
	long size;
	const uint64_t magic = HP_ROOT_MAGIC;
	struct hp_root root;

	memset(s, 0, sizeof *s);
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		return -1;
	s->size = (size_t)size;
	s->data = malloc(s->size);
	if (!s->data || fread(s->data, 1, s->size, f) != s->size) {
		fclose(f);
		return -1;
	}
	fclose(f);
	s->root = SIZE_MAX;
	for (size_t at = 0; at + sizeof root <= s->size; at += 8)
		if (memcmp(s->data + at, &magic, 8) == 0) {
			s->root = at;
			break;
		}
	if (s->root == SIZE_MAX)
		return -1;
	heap_heads(s);
	memcpy(&root, s->data + s->root, sizeof root);
	{
		uint64_t addrs[] = {root.stacks.addr,      root.keys.addr,
				    root.bucket_chunk_addr, root.peak_epoch_addr,
				    root.live_shards_addr,  root.big_addr,
				    root.stack_segs.addr};
		for (size_t i = 0; i < sizeof addrs / sizeof *addrs; i++) {
			size_t off = file_offset(s->data, s->size, addrs[i]);
			if (off != SIZE_MAX)
				s->tables[s->ntables++] = off;
		}
	}
	return 0;
}

/* Makes the seed (a kernel core of corerec under heapprof) once per
 * process and loads it into *s. Returns 0, or -1 after saying why. */
static int seed(struct seed *s)
{
	static struct seed made;
	static int tried;
	char dir[512];
	const char *b = hp_test_build();

	if (tried) {
		*s = made;
		return made.data ? 0 : -1;
	}
	tried = 1;
	snprintf(dir, sizeof dir, "%s/corefuzz", hp_test_tmp());
	if (hp_test_sh("grep -qx core /proc/sys/kernel/core_pattern") ||
	    hp_test_sh("mkdir -p %s && cd %s && rm -f core core.* && "
		       "LD_PRELOAD=%s/libheapprof.so HEAPPROF_OUTPUT=%s/cap.hpf "
		       "%s/tests/programs/corerec > out.txt 2>/dev/null; "
		       "set -- core*; [ -f \"$1\" ] && mv \"$1\" seed.core",
		       dir, dir, b, dir, b)) {
		printf("  no kernel core in %s: the seed cannot be made\n", dir);
		expect_true(!getenv("CI"), "a kernel core of corerec for the seed (CI)");
		return -1;
	}
	snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/seed.core");
	if (load_seed(&made, dir)) {
		free(made.data);
		made.data = NULL;
		expect_true(0, "the seed core holds heapprof_root");
		return -1;
	}
	*s = made;
	return 0;
}

/* Regressions the fuzz run found: a damaged heapprof_root (a field set so)
 * is one line, "heapprof_root is damaged", and the rest of the core is
 * read; before, live_shards 2^32 - 1 looped over the shards for minutes,
 * a chunk size of 40 bits shifted past the word (undefined), and a
 * stack count of 2^32 - 1 allocated 64 GiB. */
static void check_damaged_root(const struct seed *s, size_t field, uint64_t v, size_t width,
			       const char *what)
{
	unsigned char *d = malloc(s->size);
	struct hp_core c;
	char err[512];
	int st, said = 0;

	if (!d)
		return;
	memcpy(d, s->data, s->size);
	memcpy(d + s->root + field, &v, width);
	st = fork_case(d, s->size);
	expect_true(WIFEXITED(st) && WEXITSTATUS(st) == CASE_OK, what);
	if (WIFEXITED(st) && hp_core_open_mem(&c, d, s->size, "damaged.core", err, sizeof err) == 0) {
		if (hp_core_modules(&c, NULL) == 0 && hp_core_recorder(&c) == 0)
			for (size_t i = 0; i < c.nnotes; i++)
				said += strstr(c.notes[i], "heapprof_root is damaged") != NULL;
		expect_true(said == 1 && !c.rec.found, "one line: heapprof_root is damaged");
		hp_core_close(&c);
	}
	free(d);
}

HP_TEST(core_fuzz_damaged_root_is_one_line)
{
	struct seed s;

	if (seed(&s))
		return;
	check_damaged_root(&s, offsetof(struct hp_root, live_shards), 0xffffffff, 4,
			   "live_shards 2^32 - 1: no loop over them");
	check_damaged_root(&s, offsetof(struct hp_root, stacks.chunk_bits), 40, 4,
			   "a stack chunk of 2^40 entries: no shift past the word");
	check_damaged_root(&s, offsetof(struct hp_root, bucket_bits), 64, 4,
			   "64 bucket bits: no shift past the word");
	check_damaged_root(&s, offsetof(struct hp_root, stacks.entries_max), 0xffffffff, 4,
			   "2^32 - 1 stack chunks: no count past the core's size");
	check_damaged_root(&s, offsetof(struct hp_root, bucket_counters_off), 0xfffffff0, 4,
			   "counters past the bucket's end");
	check_damaged_root(&s, offsetof(struct hp_root, bucket_counters2_off), 0xfffffff0, 4,
			   "the temporaries' and peak counters past the bucket's end");
	check_damaged_root(&s, offsetof(struct hp_root, credit_slots), 0xffffffff, 4,
			   "2^32 - 1 credit slots: no loop past the core's size");
	check_damaged_root(&s, offsetof(struct hp_root, stack_segs.chunk_bits), 40, 4,
			   "a stack segment chunk of 2^40 entries: no shift past the word");
	check_damaged_root(&s, offsetof(struct hp_root, stack_segs.entries_max), 0xffffffff, 4,
			   "2^32 - 1 stack segment chunks: no count past the core's size");
	check_damaged_root(&s, offsetof(struct hp_root, stack_seg_frames), 0, 4,
			   "segments of no frames: no endless chain");
}

/* A regression the fuzz run found (case 1350): a writable segment whose
 * program header says 2^40 bytes (a damaged p_memsz) made the roots' walk
 * and the mmapped-chunk search step through all of them, 8 bytes or a
 * page at a time, for hours; only the bytes dumped are walked now. */
HP_TEST(core_fuzz_huge_segment_is_not_walked)
{
	struct seed s;
	unsigned char *d;
	Elf64_Ehdr eh;
	int changed = 0, st;

	if (seed(&s))
		return;
	d = malloc(s.size);
	if (!d)
		return;
	memcpy(d, s.data, s.size);
	memcpy(&eh, d, sizeof eh);
	/* the segment holding heapprof_root: libheapprof's data, above the
	 * heap, so no range of malloc's covers what follows it */
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		size_t at = eh.e_phoff + (size_t)i * sizeof ph;
		memcpy(&ph, d + at, sizeof ph);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W) || s.root < ph.p_offset ||
		    s.root - ph.p_offset >= ph.p_filesz)
			continue;
		ph.p_memsz = UINT64_C(1) << 40;
		memcpy(d + at, &ph, sizeof ph);
		changed++;
	}
	expect_eq_u64(changed, 1, "the root's segment made 1 TiB long");
	st = fork_case(d, s.size);
	expect_true(WIFEXITED(st) && WEXITSTATUS(st) == CASE_OK,
		    "heap walk, roots scan and reports finish (10 s) with a result");
	free(d);
}

/* A regression libFuzzer found (tests/fuzz/fuzz_core.c, its first minute):
 * a root whose buckets hold no counts (here: no bucket chunk) left the
 * bucket array NULL, which went to qsort and bsearch (undefined
 * behaviour, fatal under `make check SAN=address,undefined`); the same for
 * a live register with no blocks. Now: the root is read, no site, every
 * live entry dropped as naming no bucket, one line saying so. */
HP_TEST(core_fuzz_root_without_buckets)
{
	struct seed s;
	struct hp_core c;
	unsigned char *d;
	char err[512];
	uint32_t zero = 0;
	int st;

	if (seed(&s))
		return;
	d = malloc(s.size);
	if (!d)
		return;
	memcpy(d, s.data, s.size);
	memcpy(d + s.root + offsetof(struct hp_root, bucket_chunks), &zero, sizeof zero);
	st = fork_case(d, s.size);
	expect_true(WIFEXITED(st) && WEXITSTATUS(st) == CASE_OK,
		    "no bucket: everything runs and gives a result");
	if (hp_core_open_mem(&c, d, s.size, "nobuckets.core", err, sizeof err) == 0) {
		expect_eq_u64(hp_core_modules(&c, NULL) || hp_core_recorder(&c), 0, "read");
		expect_true(c.rec.found && c.rec.nbuckets == 0 && c.rec.nblocks == 0 &&
				    c.rec.bad_entries > 0,
			    "the root is read: no bucket, every live entry dropped");
		hp_core_close(&c);
	}
	free(d);
}

HP_TEST(core_fuzz_short_deterministic_run)
{
	char dir[512];
	const char *env = getenv("HP_CORE_FUZZ_CASES"), *only = getenv("HP_CORE_FUZZ_CASE");
	unsigned ncases = env ? (unsigned)strtoul(env, NULL, 10) : 120, failed = 0;
	struct seed s;
	unsigned char *d;

	if (only && (unsigned)atoi(only) >= ncases)
		ncases = (unsigned)atoi(only) + 1;
	if (seed(&s))
		return;
	snprintf(dir, sizeof dir, "%s/corefuzz/seed.core", hp_test_tmp());
	expect_eq_u64(WEXITSTATUS(fork_case(s.data, s.size)), CASE_OK, "the seed itself reads");
	d = malloc(s.size);
	if (!d)
		return;
	for (unsigned i = 0; i < ncases; i++) {
		size_t n = s.size;
		int st;
		rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)i * 0xbf58476d1ce4e5b9ull);
		rnd();
		if (only && (unsigned)atoi(only) != i)
			continue;
		memcpy(d, s.data, s.size);
		mutate(&s, d, &n);
		if (only) { /* replay: kept as a file too, for heapprof core */
			FILE *f;
			snprintf(dir + strlen(dir) - strlen("seed.core"), 32, "case-%u.core", i);
			if ((f = fopen(dir, "wb"))) {
				fwrite(d, 1, n, f);
				fclose(f);
				printf("  case %u: %s\n", i, dir);
			}
		}
		st = fork_case(d, n);
		if (WIFEXITED(st) && WEXITSTATUS(st) == CASE_OK)
			continue;
		failed++;
		if (WIFSIGNALED(st))
			printf("  case %u: killed by signal %d%s\n", i, WTERMSIG(st),
			       WTERMSIG(st) == SIGALRM ? " (over 10 s)" : "");
		else
			printf("  case %u: exit %d%s\n", i, WEXITSTATUS(st),
			       WEXITSTATUS(st) == CASE_NOMEM ? " (needed more memory than 16 x "
							       "the input + 64 MiB)"
			       : WEXITSTATUS(st) == CASE_NO_LINE ? " (an error that is not one "
								   "line)"
								 : "");
	}
	printf("  %u cases, %zu-byte seed, root at 0x%zx, %zu tables\n", ncases, s.size, s.root,
	       s.ntables);
	expect_eq_u64(failed, 0, "every mutated core gives one clear line or a result "
				 "(replay: HP_CORE_FUZZ_CASE=K)");
	free(d);
}

/* The glibc heap walk on a heap whose bytes are mutated (issue 27): chunk
 * headers and free-list links overwritten as an overrun, a write after
 * free or a stray store would. Each case must give a result within 10 s
 * and the memory bound, its blocks sorted and apart; on the 256 chunk
 * headers of the seed. HP_CORE_FUZZ_HEAP_CASES=N runs N (default 200). */
HP_TEST(core_fuzz_mutated_heap)
{
	const char *env = getenv("HP_CORE_FUZZ_HEAP_CASES");
	unsigned ncases = env ? (unsigned)strtoul(env, NULL, 10) : 200, failed = 0, damaged = 0;
	struct seed s;
	unsigned char *d;

	if (seed(&s))
		return;
	expect_true(s.nheads >= 16, "the seed's heap has chunks to mutate");
	d = malloc(s.size);
	if (!d)
		return;
	for (unsigned i = 0; i < ncases; i++) {
		struct hp_core c;
		char err[256];
		int st;
		rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)i * 0x9e3779b97f4a7c15ull);
		rnd();
		memcpy(d, s.data, s.size);
		mutate_heap(&s, d, s.size);
		st = fork_case(d, s.size);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == CASE_OK)) {
			failed++;
			printf("  heap case %u: %s %d\n", i, WIFSIGNALED(st) ? "signal" : "exit",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			continue;
		}
		if (hp_core_open_mem(&c, d, s.size, "heap.core", err, sizeof err) == 0) {
			if (hp_core_modules(&c, NULL) == 0 && hp_core_heap(&c, NULL) == 0)
				damaged += c.ndamage > 0;
			hp_core_close(&c);
		}
	}
	printf("  %u heap cases, %zu chunk headers, %u with damage found\n", ncases, s.nheads,
	       damaged);
	expect_eq_u64(failed, 0, "every core with mutated heap bytes gives a result");
	expect_true(damaged > ncases / 4, "the walk finds damage in many of them");
	free(d);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
