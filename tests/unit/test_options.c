/*
 * test_options.c - the values of the recorder's options
 * (src/common/options.h): the grammar of sizes, the 64-bit edge, and the
 * dump signals a handler can catch.
 */
#include <signal.h>
#include <stdint.h>

#include "../../src/common/options.h"
#include "../harness/harness.h"

static uint64_t parsed(const char *s, int *ok)
{
	uint64_t v = 12345;
	*ok = hp_option_parse_u64(s, &v) == 0;
	return v;
}

HP_TEST(option_sizes)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{"0", 0}, {"1", 1}, {"512K", 512 << 10}, {"64MiB", 64ull << 20}, {"1GB", 1ull << 30},
		{"1024G", 1ull << 40}, {"7b", 7},
		{"18446744073709551615", UINT64_MAX}, /* the largest seed */
		{"18446744073709551610", UINT64_MAX - 5},
		{"17179869183G", (UINT64_MAX >> 30) << 30},
	};
	static const char *const bad[] = {
		"", "-1", "K", "1.5M", "12x", "1KK", "18446744073709551616", "99999999999999999999",
		"17179869184G", " 1", "1 ",
	};
	int ok;

	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		uint64_t v = parsed(good[i].s, &ok);
		expect_true(ok, good[i].s);
		expect_eq_u64(v, good[i].v, good[i].s);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		parsed(bad[i], &ok);
		expect_true(!ok, bad[i]);
	}
}

HP_TEST(option_signals)
{
	static const struct {
		const char *s;
		int sig;
	} good[] = {
		{"USR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"HUP", SIGHUP}, {"PROF", SIGPROF},
		{"NONE", 0}, {"0", 0}, {"10", 10}, {"64", 64}, {"34", 34},
	};
	static const char *const bad[] = {"KILL", "SIGSTOP", "9", "19", "32", "33", "65", "TERM", "",
					  "usr1"};
	int sig = -1;

	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		expect_eq_u64(hp_option_parse_signal(good[i].s, &sig), 0, good[i].s);
		expect_eq_u64((uint64_t)sig, (uint64_t)good[i].sig, good[i].s);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_true(hp_option_parse_signal(bad[i], &sig) < 0, bad[i]);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
