/*
 * test_rec_bytes.c - the recorder's records, byte for byte.
 *
 * The writer (src/recorder/writer.c) runs with every fact it records made
 * fixed through the os.c seam (clock, pid, command line, executable, RSS,
 * the loaded modules), on tables filled by hand with every kind of field:
 * module loads (segments, a build-id) and an unload, stacks deep and
 * shallow with deltas both ways, buckets with tags and sizes, frees and
 * temporaries, lost counts, time-series samples, two snapshots. Each
 * record's type and raw payload (after zstd, which another libzstd may
 * compress differently) is checksummed and compared with the figures the
 * format gave before the record schemas moved into src/format/records.h:
 * a change in any byte the recorder writes fails here, with the record
 * that changed named. Its own binary: the tables start empty, so stack
 * and bucket ids and the recorder's memory are the same on every run.
 */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../src/format/capture.h"
#include "../../src/format/decode.h"
#include "../../src/format/format.h"
#include "../../src/recorder/aggregate.h"
#include "../../src/recorder/live.h"
#include "../../src/recorder/modules.h"
#include "../../src/recorder/os.h"
#include "../../src/recorder/stacks.h"
#include "../../src/recorder/writer.h"
#include "../harness/harness.h"

static uint64_t fake_now = 1000000;

static uint64_t now_ns(void)
{
	return fake_now;
}

static uint64_t realtime_ns(void)
{
	return 1700000000000000000ull + fake_now;
}

static pid_t getpid_fixed(void)
{
	return 4242;
}

static pid_t getppid_fixed(void)
{
	return 4241;
}

static size_t page_size(void)
{
	return 4096;
}

static uint64_t rss_bytes(void)
{
	return 3u << 20;
}

static void exe_path(char *buf, size_t cap)
{
	snprintf(buf, cap, "/usr/bin/golden");
}

static const char cmdline_bytes[] = "golden\0--size\0" "4096\0";

static size_t cmdline(char *buf, size_t cap)
{
	size_t n = sizeof cmdline_bytes - 1;
	if (n > cap)
		n = cap;
	memcpy(buf, cmdline_bytes, n);
	return n;
}

/* Two modules, then (after unload_second) the first only. The build-id
 * note is read from memory at dlpi_addr + p_vaddr. */
static struct {
	ElfW(Nhdr) h;
	char name[4];
	uint8_t desc[20];
} note = {{4, 20, NT_GNU_BUILD_ID}, "GNU",
	  {0x52, 0x9b, 0xea, 0xd9, 0x8a, 0x32, 0x84, 0xe6, 0xa2, 0x21, 0x2b, 0x08, 0xef, 0xca,
	   0x07, 0x21, 0xa8, 0x10, 0x90, 0x1a}};
static ElfW(Phdr) exe_ph[3], lib_ph[2];
static int unload_second;

static int dl_iterate(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	struct dl_phdr_info exe = {.dlpi_addr = 0, .dlpi_name = "/usr/bin/golden",
				   .dlpi_phdr = exe_ph, .dlpi_phnum = 3};
	struct dl_phdr_info lib = {.dlpi_addr = 0x7f0000000000, .dlpi_name = "/lib/libgolden.so",
				   .dlpi_phdr = lib_ph, .dlpi_phnum = 2};

	exe_ph[0] = (ElfW(Phdr)){.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
				 .p_vaddr = 0x400000, .p_memsz = 0x2345};
	exe_ph[1] = (ElfW(Phdr)){.p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x3000,
				 .p_vaddr = 0x603000, .p_memsz = 0x800};
	exe_ph[2] = (ElfW(Phdr)){.p_type = PT_NOTE, .p_vaddr = (uintptr_t)&note,
				 .p_memsz = sizeof note};
	lib_ph[0] = (ElfW(Phdr)){.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
				 .p_vaddr = 0, .p_memsz = 0x10000};
	lib_ph[1] = (ElfW(Phdr)){.p_type = PT_DYNAMIC};
	fn(&exe, sizeof exe, arg);
	if (!unload_second)
		fn(&lib, sizeof lib, arg);
	return 0;
}

static void fake_os(void)
{
	hp_os_now_ns = now_ns;
	hp_os_realtime_ns = realtime_ns;
	hp_os_getpid = getpid_fixed;
	hp_os_getppid = getppid_fixed;
	hp_os_page_size = page_size;
	hp_os_rss_bytes = rss_bytes;
	hp_os_exe_path = exe_path;
	hp_os_cmdline = cmdline;
	hp_os_dl_iterate = dl_iterate;
}

/* Allocations of size bytes at a stack of depth frames from f, in the
 * bucket of these tags and size. Returns the bucket. */
static uint32_t alloc(uint64_t f, uint32_t depth, uint32_t type, uint32_t ctx, uint64_t size,
		      int times)
{
	uint64_t frames[16];
	uint32_t bucket;

	for (uint32_t i = 0; i < depth; i++) /* deltas both ways */
		frames[i] = f + (i % 2 ? 0x1000 * i : -(uint64_t)0x40 * i);
	bucket = hp_agg_bucket(hp_stacks_intern(frames, depth), type, ctx, size);
	for (int i = 0; i < times; i++)
		hp_agg_alloc(bucket, size ? size : 100 + (uint64_t)i);
	return bucket;
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = malloc(1u << 20);

	if (f && data)
		*size = fread(data, 1, 1u << 20, f);
	if (f)
		fclose(f);
	return data;
}

/* The records of path: their count, and the CRC-32 of each record's type
 * (2 bytes) and raw payload, into crcs[]. */
static size_t record_crcs(const char *path, uint32_t *crcs, unsigned *types, size_t max)
{
	size_t size = 0, n = 0;
	uint8_t *data = read_file(path, &size);
	struct hp_reader r;
	struct hp_record rec;

	if (!data || hp_reader_open(&r, data, size) < 0) {
		free(data);
		return 0;
	}
	while (n < max && hp_reader_next(&r, &rec) == HP_READ_OK) {
		uint8_t t[2] = {(uint8_t)rec.type, (uint8_t)(rec.type >> 8)};
		uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), t, 2);
		crcs[n] = (uint32_t)crc32(c, rec.payload, (uInt)rec.len);
		types[n++] = rec.type;
	}
	hp_reader_close(&r);
	free(data);
	return n;
}

HP_TEST(writer_bytes_are_the_format)
{
	/* What the writer wrote before the schemas moved (commit 66472bc):
	 * META, MODULES, STACKS, TIMESERIES, SNAPSHOT, then MODULES (the
	 * unload), STACKS, TIMESERIES, SNAPSHOT. The SNAPSHOTs' since the
	 * per-site timeline: its two counters per bucket (aggregate.c) make
	 * each bucket 8 bytes larger, and so the recorder_bytes of the
	 * snapshots' tails (nothing else changed: with the old bucket size in
	 * hp_agg_bytes they read 1815565938 and 405876489 again); then a
	 * HISTOGRAMS record after each SNAPSHOT, whose buckets' histograms
	 * (164 bytes more each) grew recorder_bytes again; then the live
	 * register's shards two a cache line (8 KiB less recorder_bytes: with
	 * the shards at 64 bytes they read 968038587 and 1154145241 again);
	 * then 1,024 shards where there were 256 (24 KiB more recorder_bytes:
	 * with 256 they read 1345496122 and 877680153 again); then the stack
	 * table's index of 4-byte slots, its old copies given back (16 KiB of
	 * index where 43 KiB were counted: with the old count in
	 * hp_intern_bytes they read 1995607676 and 193678622 again); then
	 * buckets of 96 bytes with sparse histograms (less recorder_bytes:
	 * each change alone, with its old count put back, read 1995607676 and
	 * 193678622 again on its branch; the HISTOGRAMS are unchanged); then
	 * the writer's payload buffer of 256 KiB where it was 1 MiB (1.5 MiB
	 * less recorder_bytes: with 1 MiB they read 1833616823 and
	 * 2367924619 again); then the stack table's chained keys (intern.h):
	 * the segments' table (its 16 KiB index, the entries and words of
	 * the 5- and 16-frame stacks' segments) counted, and those stacks
	 * keeping 5 words of their own where they kept 5 and 16
	 * (recorder_bytes only: before, 1318948826 and 4061703632; the
	 * STACKS records are unchanged). */
	static const unsigned want_types[] = {1, 2, 3, 5, 4, 9, 2, 3, 5, 4, 9};
	static const uint32_t want_crcs[] = {1379041446, 4044483481, 3034644353, 561738225,
					     4139952577, 1907550996, 934691671,  2710718069,
					     4002590734, 987563531,  3965519960};
	static struct hp_config config;
	uint32_t crcs[16], b;
	unsigned types[16];
	size_t n;

	fake_os();
	config.start_ns = 500000;
	config.sample_rate_bytes = 1;
	config.unwind = HP_UNWIND_FP;
	config.max_depth = 64;
	config.follow_fork = 1;
	config.dump_signal = 12;
	config.interval_ms = 250;
	config.dump_every_bytes = 1u << 20;
	config.high_water_bytes = 1u << 22;
	snprintf(config.output, sizeof config.output, "%s/bytes.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_stacks_init(HP_STACKS_MAX - 1) | hp_agg_init() | hp_live_init(0) |
				   hp_modules_init(&config),
			   0, "tables"))
		return;
	hp_modules_refresh(1);
	fake_now = 2000000;
	expect_eq_u64(hp_writer_open(&config, HP_ROLE_ROOT), 0, "open");

	alloc(0x401000, 1, 0, 0, 0, 3);
	b = alloc(0x401100, 5, 0, 0, 0, 2);
	alloc(0x7f0000001000, 16, 7, 0, 0, 1);
	alloc(0x401200, 3, 0, 9, 48, 4);
	alloc(0x401200, 3, 0, 9, 4096, 1);
	fake_now = 3000000;
	hp_agg_free(b, 100, 1, (int)hp_hist_life_class(0));
	hp_agg_lost(HP_LOST_UNKNOWN_FREE, 2, 64);
	hp_agg_lost(HP_LOST_STACK_ROOM, 1, 0);
	hp_writer_sample(1000, 2u << 20);
	fake_now = 3500000;
	hp_writer_sample(900, 3u << 20);
	fake_now = 4000000;
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_SIGNAL, 12, 0), 0, "first snapshot");

	unload_second = 1;
	fake_now = 5000000;
	alloc(0x401300, 2, 0, 0, 0, 1);
	hp_agg_free(b, 101, 0, (int)hp_hist_life_class(640));
	fake_now = 6000000;
	expect_eq_u64(hp_writer_snapshot(HP_SNAP_EXIT, 0, 0), 0, "last snapshot");
	hp_writer_close();

	n = record_crcs(config.output, crcs, types, 16);
	expect_eq_u64(n, sizeof want_types / sizeof *want_types, "records");
	for (size_t i = 0; i < n && i < sizeof want_types / sizeof *want_types; i++) {
		char why[64];
		snprintf(why, sizeof why, "record %zu: type", i);
		expect_eq_u64(types[i], want_types[i], why);
		snprintf(why, sizeof why, "record %zu (type %u): payload CRC", i, types[i]);
		expect_eq_u64(crcs[i], want_crcs[i], why);
	}
	/* The HISTOGRAMS' figures (format 1.4), read back: the bucket of
	 * two blocks of 100 and 101 bytes freed 0 and 640 allocations old. */
	{
		struct hp_capture cap;
		char err[256];
		int found = 0;
		if (expect_eq_u64(hp_capture_load(config.output, &cap, err, sizeof err), 0,
				  "the capture reads back")) {
			const struct hp_cap_snapshot *last = &cap.snapshots[cap.nsnapshots - 1];
			for (size_t i = 0; i < last->nbuckets; i++) {
				struct hp_rec_hist h;
				if (last->buckets[i].free_count != 2 || !hp_capture_hist(last, i, &h))
					continue;
				found = 1;
				expect_eq_u64(h.size[7], 2, "100 and 101 bytes: class [64, 128)");
				expect_eq_u64(h.life[0] * 10 + h.life[4], 11,
					      "lifetimes 0 (< 64) and 640 ([512, 1024))");
			}
			hp_capture_free(&cap);
		}
		expect_true(found, "the last snapshot's histograms hold the freed bucket");
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
