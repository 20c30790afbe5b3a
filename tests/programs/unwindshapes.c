/*
 * unwindshapes.c - allocations under call shapes an unwinder can get wrong,
 * for the comparison of the DWARF rule cache with libunwind
 * (tests/integration/test_unwind.c). argv[1]: tests/programs/libplugin.so.
 *
 * Every shape runs ROUNDS times (the first walk through a frame misses the
 * cache, the later ones hit it); every block is freed at the end but the
 * plugin's. Threads run one after another, so that the figures, peaks
 * included, are the same in every run.
 *
 *   equal frames   caller_a and caller_b, frames of one size, reach the
 *                  same inner frames (pad_middle, leaf)
 *   recursion      recurse to depths 1..DEPTHS, past --max-depth 64
 *   rsp frames     functions without frame pointers (CFA = rsp + k), one
 *                  with a variable-length array (CFA moves to rbp)
 *   moved frames   moved_a and moved_b, called from one site, move
 *                  moved_mid's frame (rbp) but not the inner frames (rsp)
 *   libc frames    qsort calling a comparator that allocates
 *   signal frames  a handler that allocates, raised on the thread's stack
 *                  and on an alternate signal stack
 *   no unwind info nounwind_call: assembly with no FDE
 *   expression     cfaexpr_call: its CFA is a DWARF expression
 *   dlopen         dlopen, call, dlclose the plugin, ROUNDS times
 *   far frames     far_a and far_b, frames of one size, reach the same
 *                  inner frames through far_mid, a frame of 600 KiB: the
 *                  only word telling their walks apart (far_mid's return
 *                  address) lies further from the start than a remembered
 *                  walk's 16-bit word offsets can say
 *   crossed frames cross_p and cross_q, frames of one size, call cross_a
 *                  or cross_b, frames of one size too, through one
 *                  pointer, and those reach leaf directly or through
 *                  pad_middle: at one depth, four walks that differ at
 *                  one word (the return address into cross_a or cross_b)
 *                  or another (into cross_p or cross_q), or both. The
 *                  word that told (p, a) apart from (p, b) does not tell
 *                  it from (q, a): a remembered walk must compare the
 *                  rest, every frame's words
 *   trail frames   trail_from_a and trail_from_b (below): walks deeper
 *                  than a remembered walk holds that share outer frames
 *                  with the last walk, at another depth, behind a changed
 *                  saved rbp, or with another rbp at the shared frame
 *   threads        each thread runs the first three shapes
 *
 * With a second argument "swap", main then loads, calls and unloads
 * libshape1.so and libshape2.so (next to the plugin) in turn, ROUNDS
 * times: alike in layout, unlike in frames, each loaded where the other
 * was. With "race", a thread then dlopens, calls and
 * dlcloses the plugin RACE_LOADS times while the main thread keeps
 * allocating (its stacks, and so the figures, then vary from run to run:
 * for HEAPPROF_UNWIND_CHECK only).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 5
#define RACE_LOADS 200
#define DEPTHS 80
#define MAX_BLOCKS 100000
#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *blocks[MAX_BLOCKS];
static volatile int nblocks; /* a signal handler appends too */

__attribute__((noinline)) void leaf(size_t n)
{
	void *p = malloc(n);

	if (p && nblocks < MAX_BLOCKS)
		blocks[nblocks++] = p;
}

__attribute__((noinline)) void pad_middle(size_t n)
{
	leaf(n);
	KEEP(n);
}

#define FAR_BYTES (600 * 1024)

__attribute__((noinline)) void far_mid(size_t n)
{
	volatile char big[FAR_BYTES];

	big[0] = (char)n;
	pad_middle(n);
	KEEP(big);
}

__attribute__((noinline)) void far_a(size_t n)
{
	far_mid(n);
	KEEP(n);
}

__attribute__((noinline)) void far_b(size_t n)
{
	far_mid(n);
	KEEP(n);
}

__attribute__((noinline)) void caller_a(void)
{
	volatile char pad[48];

	pad[0] = 1;
	pad_middle(17 + pad[0]);
}

__attribute__((noinline)) void caller_b(void)
{
	volatile char pad[48];

	pad[0] = 2;
	pad_middle(17 + pad[0]);
}

__attribute__((noinline)) void recurse(int depth)
{
	if (depth <= 1)
		leaf(33);
	else
		recurse(depth - 1);
	KEEP(depth);
}

NOFP void nofp_inner(size_t n)
{
	volatile char pad[24];

	pad[0] = (char)n;
	leaf(n + (size_t)pad[0] % 2);
}

NOFP void nofp_outer(size_t n)
{
	volatile long pad[9];

	pad[0] = (long)n;
	nofp_inner((size_t)pad[0]);
	nofp_inner((size_t)pad[0] + 1);
}

NOFP void nofp_vla(size_t n)
{
	volatile char vla[n];

	vla[0] = 1;
	nofp_outer(n + (size_t)vla[0]);
}

/* Moved frames: moved_a and moved_b, called from one call site (through
 * a pointer), each move moved_mid's frame by the size of a variable-length
 * array of their own, and moved_mid's array takes the difference back, so
 * the inner frames sit at one rsp with the same words above them. Only
 * rbp, saved on the way and read back where moved_mid's CFA rule (rbp +
 * 16) needs it, puts moved_mid's return address at another word: a walk
 * remembered from one of them must not be taken for the other. */
__attribute__((noinline)) void moved_mid(size_t n)
{
	volatile char vla[n];

	vla[0] = 1;
	leaf(55 + (size_t)vla[0] - 1);
}

__attribute__((noinline)) void moved_a(size_t pad_bytes, size_t n)
{
	volatile char pad[pad_bytes];

	pad[0] = 1;
	moved_mid(n + (size_t)pad[0] - 1);
}

__attribute__((noinline)) void moved_b(size_t pad_bytes, size_t n)
{
	volatile char pad[pad_bytes];

	pad[0] = 2;
	moved_mid(n + (size_t)pad[0] - 2);
}

static void (*volatile moved[2])(size_t, size_t) = {moved_a, moved_b};
static volatile size_t moved_pad[2] = {272, 16}, moved_n[2] = {16, 272};
static volatile int moved_count = 2; /* a loop the compiler cannot unroll */

__attribute__((noinline)) void moved_shape(void)
{
	for (int i = 0; i < moved_count; i++)
		moved[i](moved_pad[i], moved_n[i]); /* one call site */
}

/* Crossed frames (above). Each function keeps a constant of its own so
 * that identical code folding cannot merge it with its twin. */
__attribute__((noinline)) void cross_a(int inner)
{
	volatile char pad[32];

	pad[0] = 1;
	if (inner)
		pad_middle(60 + (size_t)pad[0]);
	else
		leaf(60 + (size_t)pad[0]);
}

__attribute__((noinline)) void cross_b(int inner)
{
	volatile char pad[32];

	pad[0] = 2;
	if (inner)
		pad_middle(59 + (size_t)pad[0]);
	else
		leaf(59 + (size_t)pad[0]);
}

static void (*volatile cross_mid[2])(int) = {cross_a, cross_b};

__attribute__((noinline)) void cross_p(int mid, int inner)
{
	volatile char pad[16];

	pad[0] = 1;
	cross_mid[mid](inner + pad[0] - 1);
	KEEP(mid);
}

__attribute__((noinline)) void cross_q(int mid, int inner)
{
	volatile char pad[16];

	pad[0] = 2;
	cross_mid[mid](inner + pad[0] - 2);
	KEEP(mid);
}

/* (p, a), (p, b), (q, a), (q, b), leaf's frame first directly below
 * cross_a or cross_b, then below pad_middle. */
__attribute__((noinline)) void cross_shape(void)
{
	for (int inner = 0; inner < 2; inner++) {
		cross_p(0, inner);
		cross_p(1, inner);
		cross_q(0, inner);
		cross_q(1, inner);
	}
}

/* Trail frames: walks that share their outer frames with the thread's
 * last walk and differ in their top ones. trail_deep recurses
 * TRAIL_DEPTH frames (frame pointers: two words a frame read, more than a
 * remembered walk holds, so that every walk here steps and takes the last
 * walk's frames where it may) under trail_from_a or trail_from_b (frames
 * of one size), and trail_tops at the bottom allocates:
 *   - through leaf, then pad_middle: the same outer frames one frame
 *     deeper (a frame of the last walk at another index);
 *   - through trail_ma and trail_mb, called from one call site, which
 *     move trail_mid's frame (rbp) but not the inner ones (rsp), trail_mid
 *     calling leaf or pad_middle through one pointer: with the same top,
 *     the walks differ only at the saved rbp trail_mid's rule reads; with
 *     another top, they reach trail_mid's frame at the same rip and rsp
 *     with another rbp, which its CFA (rbp + 16) is computed from.
 * Under trail_from_b, the walks reach every frame the walk under
 * trail_from_a had at the same rip and rsp, and only the return address
 * into trail_from_b, near the root, differs. */
#define TRAIL_DEPTH 36

__attribute__((noinline)) void trail_mid(size_t n, void (*top)(size_t))
{
	volatile char vla[n];

	vla[0] = 1;
	top(75 + (size_t)vla[0] - 1);
}

__attribute__((noinline)) void trail_ma(size_t pad_bytes, size_t n, void (*top)(size_t))
{
	volatile char pad[pad_bytes];

	pad[0] = 1;
	trail_mid(n + (size_t)pad[0] - 1, top);
}

__attribute__((noinline)) void trail_mb(size_t pad_bytes, size_t n, void (*top)(size_t))
{
	volatile char pad[pad_bytes];

	pad[0] = 2;
	trail_mid(n + (size_t)pad[0] - 2, top);
}

static void (*volatile trail_moved[2])(size_t, size_t, void (*)(size_t)) = {trail_ma, trail_mb};
static void (*volatile trail_top[2])(size_t) = {leaf, pad_middle};

__attribute__((noinline)) void trail_tops(void)
{
	leaf(70);
	pad_middle(71);
	for (int top = 0; top < 2; top++)
		for (int i = 0; i < moved_count; i++) /* one call site */
			trail_moved[i](moved_pad[i], moved_n[i], trail_top[top]);
}

__attribute__((noinline)) void trail_deep(int depth)
{
	if (depth <= 1)
		trail_tops();
	else
		trail_deep(depth - 1);
	KEEP(depth);
}

__attribute__((noinline)) void trail_from_a(void)
{
	volatile char pad[48];

	pad[0] = 1;
	trail_deep(TRAIL_DEPTH + pad[0] - 1);
}

__attribute__((noinline)) void trail_from_b(void)
{
	volatile char pad[48];

	pad[0] = 2;
	trail_deep(TRAIL_DEPTH + pad[0] - 2);
}

static int compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	leaf(48);
	return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_shape(void)
{
	int v[16];

	for (int i = 0; i < 16; i++)
		v[i] = (i * 7919) % 16;
	qsort(v, 16, sizeof *v, compare);
}

static void handler(int sig)
{
	(void)sig;
	pad_middle(91);
}

__attribute__((noinline)) void raise_shape(void)
{
	raise(SIGUSR1);
	KEEP(0);
}

/* Calls fn(n) from a frame with no FDE in .eh_frame (as a function built
 * with -fno-asynchronous-unwind-tables -fno-unwind-tables): libunwind
 * steps it by its frame pointer. */
void nounwind_call(void (*fn)(size_t), size_t n);
__asm__(".text\n"
	".globl nounwind_call\n"
	".type nounwind_call, @function\n"
	"nounwind_call:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	xchg %rdi, %rsi\n"
	"	call *%rsi\n"
	"	pop %rbp\n"
	"	ret\n"
	".size nounwind_call, .-nounwind_call\n");

/* Calls fn(n) from a frame whose CFA rule is a DWARF expression
 * (DW_CFA_def_cfa_expression: DW_OP_breg7 rsp + 16). */
void cfaexpr_call(void (*fn)(size_t), size_t n);
__asm__(".text\n"
	".globl cfaexpr_call\n"
	".type cfaexpr_call, @function\n"
	"cfaexpr_call:\n"
	"	.cfi_startproc\n"
	"	sub $8, %rsp\n"
	"	.cfi_escape 0x0f, 0x02, 0x77, 0x10\n"
	"	xchg %rdi, %rsi\n"
	"	call *%rsi\n"
	"	add $8, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size cfaexpr_call, .-cfaexpr_call\n");

__attribute__((noinline)) void plugin_shape(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	void (*f)(void);

	if (!h) {
		fprintf(stderr, "unwindshapes: %s\n", dlerror());
		exit(1);
	}
	f = (void (*)(void))dlsym(h, "plugin_alloc");
	if (f)
		f();
	dlclose(h);
}

/* dlopen dir/libshapeN.so, call its shape_alloc, dlclose it. */
__attribute__((noinline)) void swap_shape(const char *plugin, int n)
{
	char path[4096];
	const char *slash = strrchr(plugin, '/');
	int dir = slash ? (int)(slash - plugin) + 1 : 0;
	void *h;
	void (*f)(void);

	snprintf(path, sizeof path, "%.*slibshape%d.so", dir, plugin, n);
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "unwindshapes: %s\n", dlerror());
		exit(1);
	}
	f = (void (*)(void))dlsym(h, "shape_alloc");
	if (f)
		f();
	dlclose(h);
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		caller_a();
		caller_b();
		recurse(5 + r);
		nofp_outer(64);
	}
	return NULL;
}

static volatile int racing;

static void *loader_main(void *path)
{
	for (int i = 0; i < RACE_LOADS; i++)
		plugin_shape(path);
	racing = 0;
	return NULL;
}

int main(int argc, char **argv)
{
	static char altstack[1 << 18];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	struct sigaction sa;
	pthread_t th;

	if (argc < 2) {
		fprintf(stderr, "usage: unwindshapes LIBPLUGIN\n");
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		caller_a();
		caller_b();
		for (int d = 1; d <= DEPTHS; d++)
			recurse(d);
		nofp_outer(40);
		nofp_vla(100);
		moved_shape();
		cross_shape();
		sort_shape();
		raise_shape();
		nounwind_call(pad_middle, 120);
		cfaexpr_call(pad_middle, 130);
		plugin_shape(argv[1]);
		far_a(140);
		far_b(140);
		trail_from_a();
		trail_from_b();
	}
	if (argc > 2 && strcmp(argv[2], "swap") == 0) {
		for (int r = 0; r < ROUNDS; r++) {
			swap_shape(argv[1], 1);
			swap_shape(argv[1], 2);
		}
	}
	/* The signal again, on an alternate stack. */
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	for (int r = 0; r < ROUNDS; r++)
		raise_shape();
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&th, NULL, thread_main, NULL) != 0)
			return 1;
		pthread_join(th, NULL);
	}
	if (argc > 2 && strcmp(argv[2], "race") == 0) {
		racing = 1;
		if (pthread_create(&th, NULL, loader_main, argv[1]) != 0)
			return 1;
		while (racing) {
			caller_a();
			nofp_outer(8);
			if (nblocks > MAX_BLOCKS - 100) {
				for (int i = 0; i < nblocks; i++)
					free(blocks[i]);
				nblocks = 0;
			}
		}
		pthread_join(th, NULL);
	}
	for (int i = 0; i < nblocks; i++)
		free(blocks[i]);
	return 0;
}
