/*
 * test_aslimit.c - the recorder under an address-space limit (RLIMIT_AS,
 * ulimit -v), and tables larger than one chunk.
 *
 * A program given a limit just above what it needs bare must behave the
 * same recorded (same output, same exit status) and still leave a capture
 * with its exit snapshot, even when it then uses up every byte of its
 * address space. The limit is the program's bare VmPeak plus RECORDER_ROOM:
 * room for the recorder's libraries (libunwind, libzstd, liblzma, libz,
 * libgcc_s: about 5 MiB), its tables and buffers as mapped at start (about
 * 5 MiB) and what this program's few stacks add. The recorder once mapped
 * its tables at their maximum size (876 MB) at start: under such a limit it
 * could not start, and a program given room for that lost its first big
 * malloc instead.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../programs/manystacks.h"

#define BIG_MIB 64
#define RECORDER_ROOM (24ull << 20)

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

struct run {
	int status;              /* exit status, 128+N for signal N */
	char out[256];           /* stdout */
	unsigned long blocks;    /* from stderr: 1 MiB blocks obtained */
	unsigned long vmpeak_kb; /* from stderr */
};

static void slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, cap - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Runs tests/programs/aslimit BIG_MIB mode with RLIMIT_AS at limit_bytes (0:
 * none), recorded into capture when it is not NULL. */
static void run_aslimit(const char *mode, uint64_t limit_bytes, const char *capture, struct run *r)
{
	char prog[512], lib[512], outp[600], errp[600], err[256];
	char mib[16];
	int status;
	pid_t pid;

	snprintf(prog, sizeof prog, "%s/tests/programs/aslimit", hp_test_build());
	snprintf(lib, sizeof lib, "%s/libheapprof.so", hp_test_build());
	snprintf(outp, sizeof outp, "%s/aslimit.out", hp_test_tmp());
	snprintf(errp, sizeof errp, "%s/aslimit.err", hp_test_tmp());
	snprintf(mib, sizeof mib, "%d", BIG_MIB);
	if (capture)
		unlink(capture);
	memset(r, 0, sizeof *r);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = {limit_bytes, limit_bytes};
		char abslib[4096];
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		unsetenv("HEAPPROF_OUTPUT_CLAIMED");
		if (capture) {
			if (!realpath(lib, abslib))
				_exit(126);
			setenv("LD_PRELOAD", abslib, 1);
			setenv("HEAPPROF_OUTPUT", capture, 1);
		}
		if (limit_bytes && setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(126);
		execl(prog, prog, mib, mode, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		r->status = -1;
		return;
	}
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	slurp(outp, r->out, sizeof r->out);
	slurp(errp, err, sizeof err);
	/* After any message of the recorder's. */
	if (!strstr(err, "blocks ") ||
	    sscanf(strstr(err, "blocks "), "blocks %lu vmpeak %lu", &r->blocks, &r->vmpeak_kb) != 2)
		printf("  stderr: %s\n", err);
}

/* The limit: what the program needs bare, plus the recorder's room. */
static uint64_t bare_limit(void)
{
	struct run bare;

	run_aslimit("fit", 0, NULL, &bare);
	if (!expect_eq_u64(bare.status, 0, "bare, unlimited: exit status") ||
	    !expect_true(bare.vmpeak_kb > BIG_MIB * 1024, "VmPeak covers the big block"))
		return 0;
	return bare.vmpeak_kb * 1024 + RECORDER_ROOM;
}

/* Runs mode bare and recorded under limit; checks they behave the same and
 * returns the capture (NULL when there is none). */
static struct hp_capture *compare(const char *mode, uint64_t limit, const char *want_out,
				  struct run *rec)
{
	char capture[512];
	struct run bare;
	struct hp_capture *cap;
	const struct hp_cap_snapshot *snap;

	snprintf(capture, sizeof capture, "%s/aslimit-%s.hpf", hp_test_tmp(), mode);
	run_aslimit(mode, limit, NULL, &bare);
	expect_eq_u64(bare.status, 0, "bare under the limit: exit status");
	expect_str(bare.out, want_out, "bare under the limit: output");
	run_aslimit(mode, limit, capture, rec);
	expect_eq_u64(rec->status, bare.status, "recorded under the limit: the same exit status");
	expect_str(rec->out, bare.out, "recorded under the limit: the same output");
	printf("  %s: limit %llu KiB, bare VmPeak %lu KiB, recorded %lu KiB\n", mode,
	       (unsigned long long)limit >> 10, bare.vmpeak_kb, rec->vmpeak_kb);
	if (access(capture, F_OK) != 0) {
		expect_true(0, "recorded under the limit: a capture was written");
		return NULL;
	}
	if (!(cap = hpq_load(capture)))
		return NULL;
	snap = hp_capture_last(cap);
	if (!expect_true(snap != NULL, "the capture has a snapshot") ||
	    !expect_eq_u64(snap->reason, HP_SNAP_EXIT, "its last snapshot is the exit's")) {
		hpq_free(cap);
		return NULL;
	}
	return cap;
}

HP_TEST(aslimit_fit)
{
	uint64_t limit = bare_limit();
	struct hp_capture *cap;
	struct run rec;
	struct hpq_sum s;

	if (!limit || !(cap = compare("fit", limit, "big block: ok\n", &rec)))
		return;
	s = hpq_match(cap, STACK("big_alloc", "main"));
	expect_eq_u64(s.alloc_count, 1, "the big block: recorded");
	expect_eq_u64(s.alloc_bytes, BIG_MIB << 20, "the big block: its bytes");
	expect_eq_u64(s.free_bytes, BIG_MIB << 20, "the big block: freed");
	expect_eq_u64(hp_capture_last(cap)->lost_count[HP_LOST_NO_MEMORY], 0,
		      "room enough: nothing lost");
	hpq_free(cap);
}

HP_TEST(aslimit_exhaust)
{
	uint64_t limit = bare_limit();
	const struct hp_cap_snapshot *snap;
	struct hp_capture *cap;
	struct run rec;
	struct hpq_sum s;

	if (!limit || !(cap = compare("exhaust", limit, "big block: ok\nexhausted\n", &rec)))
		return;
	snap = hp_capture_last(cap);
	s = hpq_match(cap, STACK("big_alloc", "main"));
	expect_eq_u64(s.alloc_bytes, BIG_MIB << 20, "the big block: recorded");
	expect_eq_u64(s.free_count, 0, "the big block: kept");
	/* Every 1 MiB block the program got is recorded, or counted lost for
	 * want of memory to record it. */
	s = hpq_match(cap, STACK("exhaust_alloc", "main"));
	expect_true(rec.blocks > 0, "the program got some 1 MiB blocks");
	expect_eq_u64(s.alloc_count + snap->lost_count[HP_LOST_NO_MEMORY], rec.blocks,
		      "each 1 MiB block: recorded or counted lost");
	expect_eq_u64(s.alloc_bytes, s.alloc_count << 20, "their bytes");
	hpq_free(cap);
}

/* Checks the buckets of the last snapshot against manystacks.h, summed
 * per stack (a stack's buckets are split by thread): one stack per path,
 * MANYSTACKS_THREADS allocations of its size, its frames that path's.
 * Returns the number of paths seen. */
static unsigned check_paths(const struct hp_capture *cap)
{
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	static unsigned char seen[MANYSTACKS_PATHS];
	unsigned paths = 0, bad = 0;
	struct hp_rec_bucket *per_stack = calloc(cap->nstacks + 1, sizeof *per_stack);

	memset(seen, 0, sizeof seen);
	if (!expect_true(per_stack != NULL, "memory"))
		return 0;
	for (size_t i = 0; snap && i < snap->nbuckets; i++) {
		const struct hp_rec_bucket *b = &snap->buckets[i];
		if (b->stack_id >= cap->nstacks)
			continue;
		per_stack[b->stack_id].stack_id = b->stack_id;
		per_stack[b->stack_id].alloc_count += b->alloc_count;
		per_stack[b->stack_id].alloc_bytes += b->alloc_bytes;
	}
	for (size_t i = 0; i < cap->nstacks; i++) {
		const struct hp_rec_bucket *b = &per_stack[i];
		const struct hp_cap_stack *st;
		uint64_t path, want_depth = 2 * MANYSTACKS_LEVELS + 3;
		unsigned f = 0;

		if (!b->alloc_count)
			continue;
		st = &cap->stacks[b->stack_id];
		if (!st->depth || strcmp(hpq_symbol(cap, st->frames[0]), "path_leaf") != 0)
			continue;
		path = b->alloc_count ? b->alloc_bytes / b->alloc_count - MANYSTACKS_SIZE(0) : 0;
		if (path >= MANYSTACKS_PATHS || seen[path]++ ||
		    b->alloc_count != MANYSTACKS_THREADS ||
		    b->alloc_bytes != MANYSTACKS_THREADS * (uint64_t)MANYSTACKS_SIZE(path) ||
		    st->depth < want_depth) {
			bad++;
			continue;
		}
		/* path_leaf, path_step, then per level (innermost first) the
		 * branch taken and path_step, then manystacks_thread. */
		int ok = strcmp(hpq_symbol(cap, st->frames[++f]), "path_step") == 0;
		for (int level = MANYSTACKS_LEVELS - 1; ok && level >= 0; level--) {
			const char *branch = path >> level & 1 ? "path_one" : "path_zero";
			ok = strcmp(hpq_symbol(cap, st->frames[++f]), branch) == 0 &&
			     strcmp(hpq_symbol(cap, st->frames[++f]), "path_step") == 0;
		}
		ok = ok && strcmp(hpq_symbol(cap, st->frames[++f]), "manystacks_thread") == 0;
		if (ok)
			paths++;
		else
			bad++;
	}
	expect_eq_u64(bad, 0, "no bucket with a wrong stack, size or count");
	free(per_stack);
	return paths;
}

static void many_stacks(const char *opts)
{
	char capture[512];
	const struct hp_cap_snapshot *snap;
	struct hp_capture *cap;

	snprintf(capture, sizeof capture, "%s/manystacks.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols %s -o %s -- "
				 "%s/tests/programs/manystacks",
				 hp_test_build(), opts, capture, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(capture)))
		return;
	snap = hp_capture_last(cap);
	if (expect_true(snap != NULL, "a snapshot was written")) {
		expect_true(cap->nstacks > MANYSTACKS_PATHS, "every path's stack is in the file");
		expect_eq_u64(check_paths(cap), MANYSTACKS_PATHS,
			      "every path read back once, with its own frames");
		expect_eq_u64(snap->lost_count[HP_LOST_NO_MEMORY], 0, "nothing lost");
		expect_eq_u64(snap->lost_count[HP_LOST_STACK_TABLE_FULL], 0, "no stack refused");
	}
	hpq_free(cap);
}

/* More stacks (8192) than an entry chunk (4096) holds, frames over several
 * key chunks, default buckets over several bucket chunks; four threads
 * intern the same stacks at once, so lookups race with inserts: a stack
 * interned twice would show as two buckets of one path. */
HP_TEST(many_stacks_full)
{
	many_stacks("");
}

/* Sampled at 2 bytes (every block of 64+ bytes is sampled): keyed buckets,
 * one per (stack, size), over several chunks of the key table. */
HP_TEST(many_stacks_sampled)
{
	many_stacks("--sample-rate 2 --seed 1");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
