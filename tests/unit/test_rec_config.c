/*
 * test_rec_config.c - the recorder's options from HEAPPROF_* variables
 * (src/recorder/config.h): defaults, every variable, the ranges'
 * edges, and each bad value replaced by the default with one line on
 * stderr, captured through the os.c seam.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/recorder/config.h"
#include "../../src/format/format.h"
#include "../../src/recorder/log.h"
#include "../harness/harness.h"
#include "rec_seam.h"

static const char *const vars[] = {
	"HEAPPROF_QUIET", "HEAPPROF_SAMPLE_RATE", "HEAPPROF_UNWIND", "HEAPPROF_MAX_DEPTH",
	"HEAPPROF_FOLLOW_FORK", "HEAPPROF_DUMP_SIGNAL", "HEAPPROF_INTERVAL_MS",
	"HEAPPROF_DUMP_EVERY_BYTES", "HEAPPROF_DUMP_HIGH_WATER_BYTES", "HEAPPROF_TIMESERIES_MS",
	"HEAPPROF_SEED", "HEAPPROF_OUTPUT_CLAIMED", "HEAPPROF_OUTPUT",
	"HEAPPROF_UNWIND_CACHE", "HEAPPROF_UNWIND_CHECK",
};

/* What the recorder wrote to descriptor 2. */
static char logged[4096];
static size_t logged_len;
static int (*real_write_all)(int, const void *, size_t);

static int capture_write(int fd, const void *p, size_t n)
{
	if (fd != 2)
		return real_write_all(fd, p, n);
	if (logged_len + n < sizeof logged) {
		memcpy(logged + logged_len, p, n);
		logged_len += n;
		logged[logged_len] = '\0';
	}
	return 0;
}

static void load(struct hp_config *c)
{
	logged_len = 0;
	logged[0] = '\0';
	real_write_all = hp_os_write_all;
	hp_os_write_all = capture_write;
	hp_config_load(c);
	hp_os_write_all = real_write_all;
}

static void clear(void)
{
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		unsetenv(vars[i]);
}

HP_TEST(config_defaults)
{
	struct hp_config c;

	clear();
	load(&c);
	expect_eq_u64(c.sample_rate_bytes, 1, "every allocation");
	expect_eq_u64(c.unwind, HP_UNWIND_DWARF, "dwarf");
	expect_eq_u64(c.max_depth, 128, "depth");
	expect_eq_u64(c.unwind_cache, 1, "DWARF walks through the rule cache");
	expect_eq_u64(c.unwind_check, 0, "no comparison with libunwind");
	expect_eq_u64(c.dump_signal, SIGUSR2, "SIGUSR2");
	expect_eq_u64(c.timeseries_ms, 10, "10 ms");
	expect_eq_u64(c.interval_ms + c.dump_every_bytes + c.high_water_bytes + c.seed, 0, "none");
	expect_eq_u64(c.follow_fork + c.quiet + c.claimed_pid + c.shadowed, 0, "off");
	expect_str(c.output, "", "the default name");
	expect_str(logged, "", "nothing said");
}

HP_TEST(config_unwind_cache_and_check)
{
	struct hp_config c;

	clear();
	setenv("HEAPPROF_UNWIND_CACHE", "0", 1);
	setenv("HEAPPROF_UNWIND_CHECK", "1", 1);
	load(&c);
	expect_eq_u64(c.unwind_cache, 0, "libunwind alone");
	expect_eq_u64(c.unwind_check, 1, "every cached walk compared");
	expect_str(logged, "", "nothing said");
	clear();
}

HP_TEST(config_every_variable)
{
	struct hp_config c;

	clear();
	setenv("HEAPPROF_SAMPLE_RATE", "512K", 1);
	setenv("HEAPPROF_UNWIND", "fp", 1);
	setenv("HEAPPROF_MAX_DEPTH", "256", 1);
	setenv("HEAPPROF_FOLLOW_FORK", "1", 1);
	setenv("HEAPPROF_DUMP_SIGNAL", "USR1", 1);
	setenv("HEAPPROF_INTERVAL_MS", "250", 1);
	setenv("HEAPPROF_DUMP_EVERY_BYTES", "1G", 1);
	setenv("HEAPPROF_DUMP_HIGH_WATER_BYTES", "64MiB", 1);
	setenv("HEAPPROF_TIMESERIES_MS", "0", 1);
	setenv("HEAPPROF_SEED", "18446744073709551615", 1);
	setenv("HEAPPROF_OUTPUT_CLAIMED", "4242", 1);
	setenv("HEAPPROF_OUTPUT", "/tmp/x.hpf", 1);
	load(&c);
	expect_eq_u64(c.sample_rate_bytes, 512 << 10, "rate");
	expect_eq_u64(c.unwind, HP_UNWIND_FP, "fp");
	expect_eq_u64(c.max_depth, 256, "the largest depth");
	expect_eq_u64(c.follow_fork, 1, "follow");
	expect_eq_u64(c.dump_signal, SIGUSR1, "USR1");
	expect_eq_u64(c.interval_ms, 250, "interval");
	expect_eq_u64(c.dump_every_bytes, 1ull << 30, "every");
	expect_eq_u64(c.high_water_bytes, 64ull << 20, "high water");
	expect_eq_u64(c.timeseries_ms, 0, "no time series");
	expect_eq_u64(c.seed, UINT64_MAX, "the largest seed");
	expect_eq_u64(c.claimed_pid, 4242, "claimed");
	expect_str(c.output, "/tmp/x.hpf", "output");
	expect_str(logged, "", "nothing said");
	setenv("HEAPPROF_DUMP_SIGNAL", "NONE", 1);
	load(&c);
	expect_eq_u64(c.dump_signal, 0, "no dump signal");
	clear();
}

HP_TEST(config_bad_values)
{
	static char long_path[HP_CONFIG_PATH_MAX + 10];
	struct hp_config c;

	clear();
	setenv("HEAPPROF_SAMPLE_RATE", "0", 1);
	load(&c);
	expect_eq_u64(c.sample_rate_bytes, 1, "a rate of 0: the default");
	expect_true(strstr(logged, "heapprof: HEAPPROF_SAMPLE_RATE=0 is not a number in 1..") ==
			    logged,
		    logged);
	clear();
	setenv("HEAPPROF_MAX_DEPTH", "257", 1);
	setenv("HEAPPROF_UNWIND", "frame", 1);
	setenv("HEAPPROF_DUMP_SIGNAL", "KILL", 1);
	setenv("HEAPPROF_FOLLOW_FORK", "2", 1);
	load(&c);
	expect_eq_u64(c.max_depth, 128, "too deep: the default, 128");
	expect_eq_u64(c.unwind, HP_UNWIND_DWARF, "unknown unwinder: dwarf");
	expect_eq_u64(c.dump_signal, SIGUSR2, "SIGKILL cannot be caught: SIGUSR2");
	expect_eq_u64(c.follow_fork, 0, "2 is not a flag");
	expect_true(strstr(logged, "HEAPPROF_MAX_DEPTH=257 is not a number in 1..256, using 128\n"),
		    logged);
	expect_true(strstr(logged, "HEAPPROF_UNWIND=frame is not dwarf or fp, using dwarf\n"), logged);
	expect_true(strstr(logged, "HEAPPROF_DUMP_SIGNAL=KILL is not a signal"), logged);
	expect_true(strstr(logged, "HEAPPROF_FOLLOW_FORK=2"), logged);
	clear();
	memset(long_path, 'a', sizeof long_path - 1);
	setenv("HEAPPROF_OUTPUT", long_path, 1);
	load(&c);
	expect_str(c.output, "", "too long a path: the default name");
	expect_true(strstr(logged, "HEAPPROF_OUTPUT is too long"), logged);
	setenv("HEAPPROF_QUIET", "1", 1);
	setenv("HEAPPROF_SAMPLE_RATE", "x", 1);
	load(&c);
	expect_eq_u64(c.quiet, 1, "quiet");
	expect_str(logged, "", "quiet says nothing");
	clear();
	hp_log_set_quiet(0);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
