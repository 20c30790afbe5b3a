/*
 * test_nomem.c - the symbolizer out of memory: every allocation of a
 * lookup failed in turn, the N-th for every N.
 *
 * The model (docs/internals/errors.md): out of memory is an error like any
 * other. hp_symbolizer_lookup returns -ENOMEM, and hp_model_build with it;
 * what either returns as a success is what an unhindered run gives, never a
 * placeholder ("?" once stood for a name it could not store).
 *
 * The frames are addresses of this very binary (built with -g), in a
 * capture crafted with one module: this executable at its load bias.
 * Allocations fail through malloc, calloc and realloc defined here, which
 * hand over to glibc's own until armed. Only the analyzer's own
 * allocations are failed (those called from this executable, into which
 * the analyzer is linked): libdw, short of memory, ends the process
 * (its __libdw_oom) or degrades its answers, which is its own matter. Not
 * under AddressSanitizer, whose allocator these would bypass.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/capture.h"
#include "../../src/analyzer/model/model.h"
#include "../../src/analyzer/symbols/symbolize.h"
#include "../harness/craft.h"
#include "../harness/harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define NO_FAILING_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_FAILING_MALLOC 1
#endif
#endif

#ifndef NO_FAILING_MALLOC
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);

/* Allocations to let through before the one that fails; -1: none fails.
 * failed says whether one did. Single-threaded test. */
static long countdown = -1;
static int failed;

extern char __executable_start[], etext[];

static int fail_now(const void *caller)
{
	if (countdown < 0 || (const char *)caller < __executable_start ||
	    (const char *)caller >= etext)
		return 0;
	if (countdown-- > 0)
		return 0;
	failed = 1;
	return 1; /* this one; the next ones succeed again (countdown is -1) */
}

void *malloc(size_t n)
{
	return fail_now(__builtin_return_address(0)) ? (errno = ENOMEM, NULL) : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? (errno = ENOMEM, NULL) : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? (errno = ENOMEM, NULL)
						     : __libc_realloc(p, n);
}
#endif

/* Frames to symbolize: return addresses inside these. */
__attribute__((noinline)) int nomem_target_one(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) int nomem_target_two(int x)
{
	__asm__ volatile("" ::: "memory");
	return nomem_target_one(x) * 5;
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr; /* the first is the executable */
	return 1;
}

/* A capture of two stacks whose frames are in this executable. */
static int craft_self(struct hp_capture *cap, uint64_t frame0[2])
{
	char exe[PATH_MAX], err[256];
	uint64_t bias = 0, ids[2] = {1, 2};
	struct hp_craft c;
	const char *path = hp_craft_tmp("self.hpf");

	if (!realpath("/proc/self/exe", exe))
		return -1;
	dl_iterate_phdr(main_bias, &bias);
	frame0[0] = (uint64_t)(uintptr_t)&nomem_target_one + 4;
	frame0[1] = (uint64_t)(uintptr_t)&nomem_target_two + 4;
	hp_craft_begin(&c);
	hp_craft_meta(&c, 100, exe, 0);
	hp_craft_module(&c, 0, exe, bias, 0, 1ull << 32);
	hp_craft_stacks(&c, 1, frame0, 2);
	hp_craft_snapshot(&c, ids, 2);
	if (hp_craft_write(&c, path))
		return -1;
	return hp_capture_load(path, cap, err, sizeof err);
}

/* The frames of a location, one line each ("function file:line"). */
static void describe(char *buf, size_t cap, const struct hp_sym *syms, int n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < n && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s %s:%u\n", syms[k].function,
					syms[k].file, syms[k].line);
}

static void describe_model(char *buf, size_t cap, const struct hp_model *m)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < m->nlocations && len < cap; i++) {
		describe(buf + len, cap - len, m->locations[i].syms, (int)m->locations[i].nsyms);
		len += strlen(buf + len);
	}
}

HP_TEST(symbolizer_lookup_out_of_memory_is_enomem)
{
#ifdef NO_FAILING_MALLOC
	printf("skip: under AddressSanitizer\n");
#else
	struct hp_capture cap;
	uint64_t frame0[2];
	struct hp_symbolizer *s;
	struct hp_sym syms[16];
	char want[4096], got[4096];
	int n, ret, enomem = 0, ok = 0;

	if (!expect_eq_u64(craft_self(&cap, frame0), 0, "a capture of this executable"))
		return;
	if (!expect_eq_u64(hp_symbolizer_new(&s, &cap, NULL, 0), 0, "a symbolizer"))
		goto out;
	ret = hp_symbolizer_lookup(s, 0, frame0[0], syms, 16, &n);
	expect_eq_u64(ret, 0, "an unhindered lookup");
	describe(want, sizeof want, syms, ret ? 0 : n);
	hp_symbolizer_free(s);
	expect_true(strstr(want, "nomem_target_one ") && strstr(want, "test_nomem.c:"),
		    "it names the function and its file");
	/* The N-th allocation of a lookup fails, for every N until a lookup
	 * needs fewer: each answer is -ENOMEM or the unhindered one. */
	for (long fail = 0; fail < 100000; fail++) {
		if (hp_symbolizer_new(&s, &cap, NULL, 0))
			break;
		failed = 0;
		countdown = fail;
		ret = hp_symbolizer_lookup(s, 0, frame0[0], syms, 16, &n);
		countdown = -1;
		if (ret == 0) {
			describe(got, sizeof got, syms, n);
			if (!expect_str(got, want, "a lookup that succeeds names what it found"))
				fprintf(stderr, "  (allocation %ld failed)\n", fail);
			ok++;
		} else {
			expect_eq_u64(ret, (uint64_t)-ENOMEM, "a lookup that fails says -ENOMEM");
			enomem++;
		}
		hp_symbolizer_free(s);
		if (!failed)
			break;
	}
	expect_true(enomem > 0, "some allocation of the lookup failed");
	expect_true(ok > 0, "and the loop reached a lookup that needs no more");
	/* An address in no module is named 0x<address>: stored too. */
	if (!hp_symbolizer_new(&s, &cap, NULL, 0)) {
		failed = 0;
		countdown = 0;
		ret = hp_symbolizer_lookup(s, -1, 0x1234, syms, 16, &n);
		countdown = -1;
		expect_eq_u64(ret, failed ? (uint64_t)-ENOMEM : 0,
			      "an address without module: -ENOMEM when its name cannot be kept");
		hp_symbolizer_free(s);
	}
out:
	hp_capture_free(&cap);
#endif
}

HP_TEST(model_build_out_of_memory_is_enomem)
{
#ifdef NO_FAILING_MALLOC
	printf("skip: under AddressSanitizer\n");
#else
	struct hp_model_options mo = {.snapshot = -1, .no_embedded = 1, .keep_allocator_frames = 1};
	struct hp_capture cap;
	struct hp_model m;
	uint64_t frame0[2];
	char want[8192], got[8192], err[256];
	int ret, enomem = 0, ok = 0;

	if (!expect_eq_u64(craft_self(&cap, frame0), 0, "a capture of this executable"))
		return;
	if (!expect_eq_u64(hp_model_build(&m, &cap, &mo, err, sizeof err), 0,
			   "an unhindered model")) {
		hp_capture_free(&cap);
		return;
	}
	describe_model(want, sizeof want, &m);
	hp_model_free(&m);
	expect_true(strstr(want, "nomem_target_two ") != NULL, "it names the functions");
	for (long fail = 0; fail < 100000; fail++) {
		failed = 0;
		countdown = fail;
		ret = hp_model_build(&m, &cap, &mo, err, sizeof err);
		countdown = -1;
		if (ret == 0) {
			describe_model(got, sizeof got, &m);
			if (!expect_str(got, want, "a model that is built names what was found"))
				fprintf(stderr, "  (allocation %ld failed)\n", fail);
			hp_model_free(&m);
			ok++;
		} else {
			expect_eq_u64(ret, (uint64_t)-ENOMEM, "a model that is not says -ENOMEM");
			expect_str(err, "out of memory", "and why");
			enomem++;
		}
		if (!failed)
			break;
	}
	expect_true(enomem > 0, "some allocation failed");
	expect_true(ok > 0, "and the loop reached a build that needs no more");
	hp_capture_free(&cap);
#endif
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
