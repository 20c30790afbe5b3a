/*
 * test_demangle.c - hp_demangle (src/analyzer/symbols/demangle.c) names C++ symbols
 * exactly as libstdc++'s __cxa_demangle alone did before Rust went to
 * libiberty: every C++ symbol of libstdc++ and of libLLVM's .dynsym (none
 * taken for a legacy Rust name); Rust's two manglings; and leaves alone
 * what is not C++ or Rust.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyzer/symbols/demangle.h"
#include "../harness/harness.h"

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Compares the two demanglers on the defined C++ dynamic symbols of the
 * library that `ldd prog` finds under the name pattern (without nm's
 * @@VERSION suffixes). */
static void compare_lib(const char *prog, const char *pattern)
{
	char cmd[1024], line[65536], why[512];
	size_t checked = 0, differ = 0;
	FILE *p;

	snprintf(cmd, sizeof cmd,
		 "nm -D --defined-only \"$(ldd %s | awk '/%s/ {print $3}')\" | awk '$3 ~ /^_Z/ "
		 "{sub(/@.*/, \"\", $3); print $3}' | sort -u",
		 prog, pattern);
	if (getenv("HP_TEST_VERBOSE"))
		printf("%s\n", cmd);
	if (!(p = popen(cmd, "r"))) {
		expect_true(0, "popen nm");
		return;
	}
	while (fgets(line, sizeof line, p)) {
		int status = -1;
		line[strcspn(line, "\n")] = '\0';
		char *want = __cxa_demangle(line, NULL, NULL, &status);
		char *got = hp_demangle(line);
		if (want && status == 0) {
			checked++;
			if (!got || strcmp(want, got) != 0) {
				if (differ++ < 5)
					printf("  %s: __cxa_demangle %s, hp_demangle %s\n", line,
					       want, got ? got : "(none)");
			}
		}
		free(want);
		free(got);
	}
	pclose(p);
	snprintf(why, sizeof why, "%s: C++ names demangled differently (of %zu)", pattern, checked);
	expect_eq_u64(differ, 0, why);
	snprintf(why, sizeof why, "%s: enough C++ names checked", pattern);
	expect_true(checked > 1000, why);
}

HP_TEST(demangle_cxx_as_libstdcxx_did)
{
	char prog[512];

	snprintf(prog, sizeof prog, "%s/tests/programs/cxx_all", hp_test_build());
	compare_lib(prog, "libstdc");
	/* clang is a test dependency; libLLVM is the large C++ library. */
	compare_lib("$(command -v clang)", "libLLVM");
}

HP_TEST(demangle_leaves_other_names)
{
	char *d;

	expect_true(hp_demangle("main") == NULL, "a C name stays as it is");
	expect_true(hp_demangle("_GLOBAL__sub_I_main.cpp") == NULL,
		    "a static constructor's ELF name stays as it is");
	expect_true(hp_demangle("_Zfoo_not_mangled") == NULL, "a bad C++ name: none");
	d = hp_demangle("_ZN5known8leak_box17h0123456789abcdefE");
	expect_str(d ? d : "(none)", "known::leak_box", "Rust legacy, without its hash");
	free(d);
	d = hp_demangle("_RNvCs1q6XomQHVgK_5known8leak_box");
	expect_str(d ? d : "(none)", "known::leak_box", "Rust v0, without the disambiguator");
	free(d);
	d = hp_demangle("_RNvMCs1q6XomQHVgK_5knownNtB2_5Store4fill");
	expect_str(d ? d : "(none)", "<known::Store>::fill", "Rust v0 inherent method");
	free(d);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
