/*
 * harness.h - heapprof's small test harness.
 *
 *     HP_TEST(varint_round_trip) {
 *             expect_eq_u64(decode(encode(300)), 300, "300 survives a round trip");
 *     }
 *
 * Tests register themselves; hp_test_main runs those whose name matches
 * $HP_TEST_NAME (a glob, default all), prints "ok NAME" or "FAIL NAME" with
 * every failed expectation under it, and ends with "N passed, N failed".
 * A test binary exits non-zero when a test failed.
 */
#ifndef HP_TEST_HARNESS_H
#define HP_TEST_HARNESS_H

#include <stdint.h>

typedef void (*hp_test_fn)(void);

void hp_test_register(const char *name, hp_test_fn fn);
int hp_test_main(int argc, char **argv);

#define HP_TEST(name)                                                          \
	static void name(void);                                                \
	__attribute__((constructor)) static void hp_test_reg_##name(void)      \
	{                                                                      \
		hp_test_register(#name, name);                                 \
	}                                                                      \
	static void name(void)

/* Each returns 1 when the expectation holds; on failure it records and
 * prints it (with file:line) and the test goes on. */
#define expect_eq_u64(a, b, why) hp_expect_eq_u64((a), (b), (why), __FILE__, __LINE__)
#define expect_true(c, why) hp_expect_true(!!(c), #c, (why), __FILE__, __LINE__)
#define expect_near(a, b, tol, why) hp_expect_near((a), (b), (tol), (why), __FILE__, __LINE__)
#define expect_str(a, b, why) hp_expect_str((a), (b), (why), __FILE__, __LINE__)

int hp_expect_eq_u64(uint64_t got, uint64_t want, const char *why, const char *file, int line);
int hp_expect_true(int ok, const char *expr, const char *why, const char *file, int line);
/* |got - want| <= tol * want */
int hp_expect_near(double got, double want, double tol, const char *why, const char *file,
		   int line);
int hp_expect_str(const char *got, const char *want, const char *why, const char *file, int line);

/* Runs a shell command; returns its exit status (128+N for signal N). */
int hp_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The build directory ($HP_BUILD, default "build") and a scratch directory
 * for this test binary. */
const char *hp_test_build(void);
const char *hp_test_tmp(void);

#endif
