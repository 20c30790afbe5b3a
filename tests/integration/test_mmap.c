/*
 * test_mmap.c - the "mmap" heap (heapprof run --mmap, HEAPPROF_MMAP=1):
 * tests/programs/mmapper.c maps and unmaps known regions from known sites
 * (whole, partial, several at once, MAP_FIXED over its own, mremap grow
 * and shrink, its own stack, sbrk, leaks) and makes mappings that must stay
 * out of the heap (a file, malloc's big block, a thread's stack and arena).
 * Exact figures per stack and for the heap (its own peak), read back with
 * the capture reader; the report's --by heap --json; the static recorder
 * and heapprof attach record the same; python3's obmalloc arenas; and
 * nothing of it without the option.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

/* The name of tag kind id ("" for id 0 or none). */
static const char *tag_name(const struct hp_capture *cap, unsigned kind, uint64_t id)
{
	const struct hp_cap_tag *t = id ? hp_capture_tag(cap, kind, id) : NULL;
	return t && t->name ? t->name : "";
}

/* The heap name of bucket b ("" for malloc's). */
static const char *heap_of(const struct hp_capture *cap, const struct hp_rec_bucket *b)
{
	const struct hp_cap_tag *o =
		b->origin_tag ? hp_capture_tag(cap, HP_TAG_ORIGIN, b->origin_tag) : NULL;
	return tag_name(cap, HP_TAG_HEAP, o ? o->c : 0);
}

/* The buckets of the last snapshot of heap (a name, "" for malloc's) whose
 * innermost frame is in leaf (NULL: any), summed. */
static struct hpq_sum sum_of(const struct hp_capture *cap, const char *leaf, const char *heap)
{
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	struct hpq_sum s = {0};

	for (size_t i = 0; snap && i < snap->nbuckets; i++) {
		const struct hp_rec_bucket *b = &snap->buckets[i];
		const struct hp_cap_stack *st;

		if (b->stack_id >= cap->nstacks || strcmp(heap_of(cap, b), heap) != 0)
			continue;
		st = &cap->stacks[b->stack_id];
		if (leaf && (!st->depth || strcmp(hpq_symbol(cap, st->frames[0]), leaf) != 0))
			continue;
		s.buckets++;
		s.alloc_count += b->alloc_count;
		s.alloc_bytes += b->alloc_bytes;
		s.free_count += b->free_count;
		s.free_bytes += b->free_bytes;
		s.peak_count += b->peak_count;
		s.peak_bytes += b->peak_bytes;
	}
	return s;
}

/* Compares s with allocated, freed and at-peak counts and bytes. */
static void expect_sum(struct hpq_sum s, uint64_t ac, uint64_t ab, uint64_t fc, uint64_t fb,
		       uint64_t pc, uint64_t pb, const char *what)
{
	char why[160];

	snprintf(why, sizeof why, "%s: allocated (count)", what);
	expect_eq_u64(s.alloc_count, ac, why);
	snprintf(why, sizeof why, "%s: allocated (bytes)", what);
	expect_eq_u64(s.alloc_bytes, ab, why);
	snprintf(why, sizeof why, "%s: freed (count)", what);
	expect_eq_u64(s.free_count, fc, why);
	snprintf(why, sizeof why, "%s: freed (bytes)", what);
	expect_eq_u64(s.free_bytes, fb, why);
	snprintf(why, sizeof why, "%s: at the peak (count)", what);
	expect_eq_u64(s.peak_count, pc, why);
	snprintf(why, sizeof why, "%s: at the peak (bytes)", what);
	expect_eq_u64(s.peak_bytes, pb, why);
}

/* The mmap heap's peak in the last snapshot, or NULL. */
static const struct hp_rec_heap_peak *mmap_peak(const struct hp_capture *cap)
{
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);

	for (size_t i = 0; snap && i < snap->nheaps; i++)
		if (strcmp(tag_name(cap, HP_TAG_HEAP, snap->heaps[i].heap), "mmap") == 0)
			return &snap->heaps[i];
	return NULL;
}

/* Every figure mmapper.c's header gives, in the capture at path. */
static void expect_mmapper(const char *path, const char *how)
{
	struct hp_capture *cap = hpq_load(path);
	const struct hp_rec_heap_peak *hp;
	struct hpq_sum s;
	char why[200];

	snprintf(why, sizeof why, "%s: the capture loads", how);
	if (!expect_true(cap != NULL, why))
		return;
	expect_sum(sum_of(cap, "leak_map", "mmap"), 1, 128 * KIB, 0, 0, 1, 128 * KIB, "leak_map");
	expect_sum(sum_of(cap, "map_whole", "mmap"), 1, 64 * KIB, 1, 64 * KIB, 0, 0, "map_whole");
	/* 64 mapped; the middle 16 unmapped: freed 64, pieces 16 and 32 back;
	 * the first 16 unmapped: 32 left. */
	expect_sum(sum_of(cap, "map_partial", "mmap"), 3, 112 * KIB, 2, 80 * KIB, 1, 32 * KIB,
		   "map_partial");
	/* Its upper half replaced by pair_b's MAP_FIXED: 32 left, then one
	 * munmap of both. */
	expect_sum(sum_of(cap, "pair_a", "mmap"), 2, 96 * KIB, 2, 96 * KIB, 0, 0, "pair_a");
	expect_sum(sum_of(cap, "pair_b", "mmap"), 1, 32 * KIB, 1, 32 * KIB, 0, 0, "pair_b");
	expect_sum(sum_of(cap, "grow_map", "mmap"), 1, 16 * KIB, 1, 16 * KIB, 0, 0, "grow_map");
	expect_sum(sum_of(cap, "grow_remap", "mmap"), 1, 64 * KIB, 1, 64 * KIB, 0, 0, "grow_remap");
	expect_sum(sum_of(cap, "shrink_remap", "mmap"), 1, 32 * KIB, 1, 32 * KIB, 0, 0,
		   "shrink_remap");
	expect_sum(sum_of(cap, "own_stack", "mmap"), 1, 64 * KIB, 1, 64 * KIB, 0, 0, "own_stack");
	/* 96 added (the peak), 16 given back: the 80 left are still its. */
	expect_sum(sum_of(cap, "sbrk_grow", "mmap"), 2, 176 * KIB, 1, 96 * KIB, 1, 96 * KIB,
		   "sbrk_grow");
	expect_eq_u64(sum_of(cap, "sbrk_shrink", "mmap").buckets, 0, "sbrk_shrink allocates none");
	/* Not allocations of the mmap heap: a file mapping, malloc's own
	 * mmap'd block, a thread's stack and arena. */
	expect_eq_u64(sum_of(cap, "map_file", "mmap").buckets, 0, "map_file: file-backed");
	expect_eq_u64(sum_of(cap, "big_malloc", "mmap").buckets, 0,
		      "big_malloc: malloc's __mmap is not seen");
	expect_sum(sum_of(cap, "big_malloc", ""), 1, 1024 * KIB, 1, 1024 * KIB, 1, 1024 * KIB,
		   "big_malloc (malloc's heap)");
	s = sum_of(cap, NULL, "mmap");
	snprintf(why, sizeof why, "%s: the mmap heap in use at exit: 128 + 32 + 80 KiB", how);
	expect_eq_u64(s.alloc_bytes - s.free_bytes, 240 * KIB, why);
	expect_eq_u64(s.alloc_count - s.free_count, 3, "three blocks left");
	expect_eq_u64(s.peak_bytes, 256 * KIB, "at the heap's peak: 128 + 32 + 96 KiB");
	hp = mmap_peak(cap);
	if (expect_true(hp != NULL, "the mmap heap's own peak in the snapshot")) {
		expect_eq_u64(hp->peak_bytes, 256 * KIB, "its peak bytes");
		expect_eq_u64(hp->peak_count, 3, "its peak blocks");
	}
	s = sum_of(cap, NULL, "");
	/* (Attached: stdin's 4 KiB buffer too.) */
	expect_true(s.alloc_bytes < 1024 * KIB + 16 * KIB,
		    "malloc's heap: the 1 MiB block and small ones, no mapping");
	hpq_free(cap);
}

HP_TEST(mmap_known_sites_exact)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();

	if (!expect_eq_u64(hp_test_sh("cd %s && LD_PRELOAD=%s/libheapprof.so HEAPPROF_MMAP=1 "
				      "HEAPPROF_OUTPUT=%s/mm.hpf %s/tests/programs/mmapper",
				      t, b, t, b),
			   0, "mmapper under the recorder, HEAPPROF_MMAP=1"))
		return;
	char path[4200];
	snprintf(path, sizeof path, "%s/mm.hpf", t);
	expect_mmapper(path, "LD_PRELOAD");
}

HP_TEST(mmap_fp_unwind_exact)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	char path[4200];

	if (!expect_eq_u64(hp_test_sh("cd %s && LD_PRELOAD=%s/libheapprof.so HEAPPROF_MMAP=1 "
				      "HEAPPROF_UNWIND=fp HEAPPROF_OUTPUT=%s/mmfp.hpf "
				      "%s/tests/programs/mmapper",
				      t, b, t, b),
			   0, "mmapper, frame pointers"))
		return;
	snprintf(path, sizeof path, "%s/mmfp.hpf", t);
	expect_mmapper(path, "fp");
}

/* heapprof run --mmap, and the report's heap row in JSON. */
HP_TEST(mmap_run_option_and_report_json)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	char path[4200], *out;

	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q --mmap -o %s/run.hpf -- "
				      "%s/tests/programs/mmapper",
				      b, t, b),
			   0, "heapprof run --mmap"))
		return;
	snprintf(path, sizeof path, "%s/run.hpf", t);
	expect_mmapper(path, "heapprof run --mmap");
	out = hp_test_sh_out("%s/heapprof report --by heap --json %s | grep '\"key\": \"mmap\"'", b,
			     path);
	if (!expect_true(out != NULL, "a row for the mmap heap"))
		return;
	expect_true(strstr(out, "\"inuse_bytes\": 245760,") != NULL, "in use: 240 KiB");
	expect_true(strstr(out, "\"inuse_objects\": 3,") != NULL, "in use: 3 blocks");
	expect_true(strstr(out, "\"peak_bytes\": 262144,") != NULL, "at the peak: 256 KiB");
	expect_true(strstr(out, "\"heap_peak\": {\"bytes\": 262144, \"objects\": 3,") != NULL,
		    "the heap's own peak");
	free(out);
}

/* The static recorder (libheapprof.a, heapprof-static.pc's --wrap list):
 * the same figures. In libc.a too, malloc and pthread_create map with the
 * internal __mmap, which --wrap=mmap does not reach. */
HP_TEST(mmap_static_recorder_exact)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	char path[4200];

	if (!expect_eq_u64(
		    hp_test_sh("PKG_CONFIG_PATH=%s/pkgconfig; export PKG_CONFIG_PATH; "
			       "cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls "
			       "-pthread -static -o %s/mmapper-static tests/programs/mmapper.c "
			       "$(pkg-config --static --libs heapprof-static) >%s/static.log "
			       "2>&1 || { cat %s/static.log >&2; exit 1; }",
			       b, t, t, t),
		    0, "cc -static mmapper.c $(pkg-config --static --libs heapprof-static)"))
		return;
	if (!expect_eq_u64(hp_test_sh("cd %s && HEAPPROF_MMAP=1 HEAPPROF_OUTPUT=%s/st.hpf "
				      "./mmapper-static",
				      t, t),
			   0, "the static mmapper, HEAPPROF_MMAP=1"))
		return;
	snprintf(path, sizeof path, "%s/st.hpf", t);
	expect_mmapper(path, "static");
}

/* Threads mapping and splitting at once: every block counted, none left,
 * no deadlock. */
HP_TEST(mmap_threads_exact)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	struct hp_capture *cap;
	char path[4200];
	uint64_t n = 4 * 2000; /* mmapper.c: THREADS x ROUNDS */

	if (!expect_eq_u64(hp_test_sh("timeout 120 %s/heapprof run -q --mmap -o %s/thr.hpf -- "
				      "%s/tests/programs/mmapper --threads",
				      b, t, b),
			   0, "mmapper --threads under heapprof run --mmap"))
		return;
	snprintf(path, sizeof path, "%s/thr.hpf", t);
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "the capture loads"))
		return;
	/* Each round: 64 mapped; the upper 32 unmapped (64 freed, 32 back);
	 * the rest unmapped. */
	expect_sum(sum_of(cap, "thread_map", "mmap"), 2 * n, n * 96 * KIB, 2 * n, n * 96 * KIB,
		   sum_of(cap, "thread_map", "mmap").peak_count,
		   sum_of(cap, "thread_map", "mmap").peak_bytes, "thread_map");
	expect_true(sum_of(cap, "thread_map", "mmap").peak_bytes <= 4 * 64 * KIB,
		    "at the peak, at most a mapping per thread");
	expect_eq_u64(hp_capture_last(cap)->lost_count[HP_LOST_REENTRANT], 0, "nothing lost");
	hpq_free(cap);
}

/* heapprof attach --mmap: the program's GOT entries of the mmap family
 * patched too; the figures at the detach's snapshot. */
HP_TEST(mmap_attach_exact)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	char prog[4200], path[4200], line[64];
	int in[2], out[2], st = -1;
	FILE *o;
	pid_t pid;

	snprintf(prog, sizeof prog, "%s/tests/programs/mmapper", b);
	snprintf(path, sizeof path, "%s/attach.hpf", t);
	if (pipe(in) || pipe(out))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(prog, prog, "--attach", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	o = fdopen(out[0], "r");
	if (!expect_true(o && fgets(line, sizeof line, o) && !strcmp(line, "ready\n"),
			 "mmapper --attach starts")) {
		kill(pid, SIGKILL);
		goto out;
	}
	/* --for 2: the program maps as soon as it sees its GOT patched,
	 * within milliseconds; the detach comes after. */
	expect_eq_u64(hp_test_sh("timeout 60 %s/heapprof attach -q --mmap --sample-rate 1 --for 2 "
				 "-o %s %d",
				 b, path, (int)pid),
		      0, "heapprof attach --mmap --for 2");
	expect_true(fgets(line, sizeof line, o) && !strcmp(line, "done\n"),
		    "the program mapped while attached");
out:
	close(in[1]);
	if (o)
		fclose(o);
	waitpid(pid, &st, 0);
	if (!expect_eq_u64((uint64_t)st, 0, "mmapper exits 0"))
		return;
	expect_mmapper(path, "attach");
}

/* Without the option: no mmap heap, no bucket of it, and malloc's
 * figures as with it. */
HP_TEST(mmap_off_records_nothing)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	struct hp_capture *cap;
	char path[4200];

	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s/off.hpf -- "
				      "%s/tests/programs/mmapper",
				      b, t, b),
			   0, "heapprof run without --mmap"))
		return;
	snprintf(path, sizeof path, "%s/off.hpf", t);
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "the capture loads"))
		return;
	expect_true(mmap_peak(cap) == NULL, "no mmap heap");
	expect_eq_u64(sum_of(cap, NULL, "mmap").buckets, 0, "no bucket of it");
	expect_sum(sum_of(cap, "big_malloc", ""), 1, 1024 * KIB, 1, 1024 * KIB, 1, 1024 * KIB,
		   "big_malloc (malloc's heap)");
	hpq_free(cap);
}

/* python3: obmalloc's arenas (1 MiB since 3.10, 256 KiB before) come from
 * mmap through the PLT; malloc's big blocks (an 8 MiB bytearray) from
 * glibc's own __mmap. Each in its heap, once. */
HP_TEST(mmap_python_arenas)
{
	const char *b = hp_test_build(), *t = hp_test_tmp();
	const struct hp_cap_snapshot *snap;
	const struct hp_rec_heap_peak *hp;
	struct hp_capture *cap;
	uint64_t arena = 0, arena_inuse = 0, arena_peak = 0, other_peak = 0, big = 0;
	uint64_t heap_peak_sum = 0;
	char path[4200], *ver;
	unsigned major = 0, minor = 0;

	if (!hp_test_need("python3", "python3"))
		return;
	ver = hp_test_sh_out("python3 -c 'import sys; print(sys.version_info[0], "
			     "sys.version_info[1])'");
	if (!expect_true(ver && sscanf(ver, "%u %u", &major, &minor) == 2, "python3's version"))
		return;
	free(ver);
	arena = major > 3 || (major == 3 && minor >= 10) ? MIB : 256 * KIB;
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q --mmap -o %s/py.hpf -- python3 -c '"
				      "import os\n"
				      "x = [object() for i in range(300000)]\n"
				      "b = bytearray(8 << 20)\n"
				      "del b\n"
				      "os._exit(0)\n'",
				      b, t),
			   0, "heapprof run --mmap -- python3"))
		return;
	snprintf(path, sizeof path, "%s/py.hpf", t);
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "the capture loads"))
		return;
	snap = hp_capture_last(cap);
	for (size_t i = 0; snap && i < snap->nbuckets; i++) {
		const struct hp_rec_bucket *bk = &snap->buckets[i];
		const char *heap = heap_of(cap, bk);

		if (!strcmp(heap, "") && bk->alloc_count == 1 && bk->alloc_bytes >= 8 * MIB)
			big++;
		if (strcmp(heap, "mmap") != 0)
			continue;
		heap_peak_sum += bk->peak_bytes;
		expect_true(bk->alloc_count && bk->alloc_bytes % bk->alloc_count == 0 &&
				    bk->alloc_bytes / bk->alloc_count <= arena,
			    "an mmap block: an arena, or a smaller chunk of obmalloc's");
		expect_true(bk->alloc_bytes % (16 * KIB) == 0, "whole 16 KiB chunks");
		if (bk->alloc_bytes / bk->alloc_count == arena) {
			arena_inuse += bk->alloc_bytes - bk->free_bytes;
			arena_peak += bk->peak_bytes;
		} else {
			other_peak += bk->peak_bytes;
		}
	}
	expect_eq_u64(big, 1, "the 8 MiB bytearray: one block of malloc's heap");
	/* os._exit: the exit snapshot before the interpreter frees them. */
	expect_true(arena_inuse >= 4 * MIB, "300000 objects left live: 4 or more arenas");
	expect_true(arena_peak >= arena_inuse, "at the peak, at least as many");
	expect_eq_u64(arena_inuse % arena, 0, "arenas in use: a multiple of the arena size");
	expect_eq_u64(arena_peak % arena, 0, "arenas at the peak: a multiple of the arena size");
	expect_true(other_peak < arena, "the rest at the peak: small chunks (frame stacks)");
	hp = mmap_peak(cap);
	if (expect_true(hp != NULL, "the mmap heap's peak"))
		expect_eq_u64(hp->peak_bytes, heap_peak_sum,
			      "the heap's peak: its buckets' at the peak (no 8 MiB in it)");
	hpq_free(cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
