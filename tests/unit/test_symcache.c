/*
 * test_symcache.c - the symbol cache's files (src/analyzer/symbols/symcache*.c)
 * read back exactly, and every damaged one a miss: truncated at every
 * length, each byte flipped, each byte flipped with the CRC made right
 * again (a hostile file: bounds, not the checksum, must hold), counts that
 * claim more than the file holds, another build-id's file.
 *
 * The module cached is this test binary, opened with libdwfl as the
 * symbolizer opens one; its entries are made up (the cache stores what it
 * is given). The cache directory is this binary's scratch directory.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/analyzer/symbols/symcache.h"
#include "../harness/harness.h"
#include "../harness/tools.h"

#define SEARCH "-:.debug:/usr/lib/debug"

static char *debuginfo_path = SEARCH;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static char exe[PATH_MAX];
static const unsigned char *build_id;
static int build_id_len;
static Dwfl *dwfl;
static Dwfl_Module *mod;

/* What is stored: frames at offsets 0x100 + 16 k, and two data symbols. */
static char long_name[600];
static const struct hp_sym frames[][3] = {
	{{"main", "prog.c", 12, 0}},
	{{"inlined_helper", "helper.h", 7, 1}, {"caller", "prog.c", 40, 0}},
	{{"0x1234", "", 0, 0}},
	{{"ns::K<int>::f(int)", "k.hpp", 99, 1}, {"g", "", 0, 1}, {"h\\x1b", "h.c", 1, 0}},
	{{long_name, "caf\xc3\xa9.c", 4000000000u, 0}},
};
static const int nframes[] = {1, 2, 1, 3, 1};
#define NENTRIES (sizeof nframes / sizeof *nframes)

static int setup(void)
{
	static int done;
	GElf_Addr vaddr;
	char dir[4300];

	if (done++)
		return mod != NULL;
	memset(long_name, 'x', sizeof long_name - 1);
	snprintf(dir, sizeof dir, "%s/cache", hp_test_tmp());
	setenv("HEAPPROF_CACHE_DIR", dir, 1);
	if (!realpath("/proc/self/exe", exe))
		return 0;
	dwfl = dwfl_begin(&callbacks);
	mod = dwfl ? dwfl_report_elf(dwfl, exe, exe, -1, 0, false) : NULL;
	if (dwfl)
		dwfl_report_end(dwfl, NULL, NULL);
	build_id_len = mod ? dwfl_module_build_id(mod, &build_id, &vaddr) : 0;
	return build_id_len > 0;
}

static const char *file_path(void)
{
	static char path[4400];
	char hex[130];

	for (int k = 0; k < build_id_len; k++)
		snprintf(hex + 2 * k, 3, "%02x", build_id[k]);
	snprintf(path, sizeof path, "%s/cache/symbols/%s.hpsym", hp_test_tmp(), hex);
	return path;
}

/* Writes the module's file with the entries above. */
static void write_reference(void)
{
	struct hp_symcache *c;
	struct hp_symcache_mod *m;

	if (hp_symcache_open(&c, 0))
		return;
	m = hp_symcache_module(c, exe, build_id, (size_t)build_id_len, SEARCH);
	hp_symcache_stamp(m, mod);
	for (size_t k = 0; k < NENTRIES; k++)
		hp_symcache_put_frames(m, 0x100 + 16 * k, frames[k], nframes[k]);
	hp_symcache_put_data(m, 0x9000, "_ZTV3Foo");
	hp_symcache_put_data(m, 0x9100, NULL);
	hp_symcache_close(c);
}

/* What the cache holds for the module now: 1 when it is valid and holds
 * exactly the entries above, 0 when it holds nothing, -1 otherwise (a
 * wrong or partial answer). */
static int read_back(void)
{
	struct hp_symcache *c;
	struct hp_symcache_mod *m;
	struct hp_sym out[8];
	size_t hits = 0, exact = 0;
	const char *name = "unset";
	int n;

	if (hp_symcache_open(&c, 0))
		return -1;
	m = hp_symcache_module(c, exe, build_id, (size_t)build_id_len, SEARCH);
	for (size_t k = 0; k < NENTRIES; k++) {
		n = hp_symcache_frames(m, 0x100 + 16 * k, out, 8);
		hits += n > 0;
		if (n != nframes[k])
			continue;
		int same = 1;
		for (int i = 0; i < n; i++)
			same &= strcmp(out[i].function, frames[k][i].function) == 0 &&
				strcmp(out[i].file, frames[k][i].file) == 0 &&
				out[i].line == frames[k][i].line &&
				!out[i].inlined == !frames[k][i].inlined;
		exact += same;
	}
	hits += hp_symcache_data(m, 0x9000, &name);
	exact += name && strcmp(name, "_ZTV3Foo") == 0;
	name = "unset";
	hits += hp_symcache_data(m, 0x9100, &name);
	exact += name == NULL;
	hits += hp_symcache_frames(m, 0x104, out, 8) > 0; /* never stored */
	int valid = hp_symcache_valid(m);
	hp_symcache_close(c);
	if (!hits && !valid)
		return 0;
	return valid && exact == NENTRIES + 2 && hits == NENTRIES + 2 ? 1 : -1;
}

static unsigned char *slurp(size_t *len)
{
	struct stat st;
	unsigned char *buf;
	FILE *f = fopen(file_path(), "rb");

	if (!f || fstat(fileno(f), &st) < 0 || !(buf = malloc((size_t)st.st_size + 1))) {
		if (f)
			fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	return buf;
}

/* The file replaced by d[0..len): a new file, not the old one truncated
 * (ext4 flushes a file truncated and rewritten when it is closed, which
 * made this test wait on the disk thousands of times). */
static void put(const unsigned char *d, size_t len)
{
	unlink(file_path());
	hp_test_write_file(file_path(), d, len);
}

/* Makes the header's CRC (bytes 12..15) that of the body again. */
static void fix_crc(unsigned char *d, size_t len)
{
	uint32_t crc = (uint32_t)crc32(0, d + 32, (uInt)(len - 32));

	for (int i = 0; i < 4; i++)
		d[12 + i] = (unsigned char)(crc >> (8 * i));
}

HP_TEST(symcache_file_round_trip)
{
	struct stat st;

	if (!expect_true(setup(), "this binary in libdwfl, with a build-id"))
		return;
	write_reference();
	expect_eq_u64(stat(file_path(), &st), 0, "the module's file is written");
	expect_eq_u64(st.st_mode & 0777, 0600, "0600");
	expect_eq_u64(read_back(), 1, "and read back exactly");
}

HP_TEST(symcache_file_truncated_at_every_length)
{
	unsigned char *d;
	size_t len = 0, wrong = 0, kept = 0;

	if (!setup())
		return;
	write_reference();
	if (!expect_true((d = slurp(&len)) != NULL, "the file"))
		return;
	for (size_t n = 0; n < len; n++) {
		put(d, n);
		int r = read_back();
		wrong += r < 0;
		kept += r > 0;
	}
	expect_eq_u64(wrong, 0, "no truncation gives a wrong or partial answer");
	expect_eq_u64(kept, 0, "every truncation is a miss");
	put(d, len);
	expect_eq_u64(read_back(), 1, "the whole file reads again");
	free(d);
}

HP_TEST(symcache_file_each_byte_flipped)
{
	unsigned char *d;
	size_t len = 0, wrong = 0, kept = 0;

	if (!setup())
		return;
	write_reference();
	if (!expect_true((d = slurp(&len)) != NULL, "the file"))
		return;
	for (size_t i = 0; i < len; i++) {
		d[i] ^= 0x41;
		put(d, len);
		int r = read_back();
		wrong += r < 0;
		kept += r > 0;
		d[i] ^= 0x41;
	}
	expect_eq_u64(wrong, 0, "no flipped byte gives a wrong or partial answer");
	expect_eq_u64(kept, 0, "every flipped byte is a miss");
	free(d);
}

HP_TEST(symcache_file_hostile_with_right_crc)
{
	unsigned char *d, saved;
	size_t len = 0, misses = 0;

	if (!setup())
		return;
	write_reference();
	if (!expect_true((d = slurp(&len)) != NULL, "the file"))
		return;
	/* Every byte of the body changed in turn, the CRC made right: what
	 * is read must be bounded (no crash, no read past the end: run it
	 * under SAN=address,undefined); most are misses. */
	for (size_t i = 32; i < len; i++) {
		for (int v = 0; v < 2; v++) {
			static const unsigned char vals[] = {0x00, 0xff};
			saved = d[i];
			d[i] = vals[v] == d[i] ? (unsigned char)~vals[v] : vals[v];
			fix_crc(d, len);
			put(d, len);
			misses += read_back() == 0;
			d[i] = saved;
		}
	}
	fix_crc(d, len);
	expect_true(misses > len - 32, "most hostile changes are refused");
	put(d, len);
	expect_eq_u64(read_back(), 1, "the file itself still reads");
	free(d);
}

HP_TEST(symcache_file_counts_beyond_the_file)
{
	unsigned char *d, *big;
	size_t len = 0;

	if (!setup())
		return;
	write_reference();
	if (!expect_true((d = slurp(&len)) != NULL, "the file"))
		return;
	/* The data entries' count (2), before their 2 x 12 bytes at the
	 * end: claim 2^32 - 1. */
	memset(d + len - 4 - 2 * 12, 0xff, 4);
	fix_crc(d, len);
	put(d, len);
	expect_eq_u64(read_back(), 0, "a count the file cannot hold: a miss");
	free(d);
	write_reference();
	d = slurp(&len);
	big = d ? malloc(len + 16) : NULL;
	if (big) {
		memcpy(big, d, len);
		memset(big + len, 0, 16);
		put(big, len + 16); /* body length now short of the file */
		expect_eq_u64(read_back(), 0, "bytes after the body: a miss");
	}
	free(big);
	free(d);
}

HP_TEST(symcache_file_of_another_build_id)
{
	unsigned char *d;
	size_t len = 0;
	char other[4400];

	if (!setup())
		return;
	write_reference();
	if (!expect_true((d = slurp(&len)) != NULL, "the file"))
		return;
	/* The file under another name is another build-id's: it says its
	 * own, so it is refused there; and a file naming another build-id
	 * under this one's name is refused here. */
	/* another build-id: its first byte flipped (0x00 would be this one's
	 * own for one build in 256) */
	snprintf(other, sizeof other, "%s", file_path());
	{
		char hex[3];
		snprintf(hex, sizeof hex, "%02x", (unsigned)(build_id[0] ^ 0xff));
		memcpy(strrchr(other, '/') + 1, hex, 2);
	}
	hp_test_write_file(other, d, len);
	{
		struct hp_symcache *c;
		struct hp_symcache_mod *m;
		unsigned char id[64];
		memcpy(id, build_id, (size_t)build_id_len);
		id[0] ^= 0xff;
		if (!hp_symcache_open(&c, 0)) {
			m = hp_symcache_module(c, exe, id, (size_t)build_id_len, SEARCH);
			expect_eq_u64(hp_symcache_valid(m), 0, "another build-id's file is a miss");
			hp_symcache_close(c);
		}
	}
	unlink(other);
	expect_eq_u64(read_back(), 1, "its own file still reads");
	free(d);
}

HP_TEST(symcache_off_holds_nothing)
{
	struct hp_symcache *c;
	struct hp_symcache_mod *m;

	if (!setup())
		return;
	write_reference();
	if (hp_symcache_open(&c, 1))
		return;
	m = hp_symcache_module(c, exe, build_id, (size_t)build_id_len, SEARCH);
	expect_true(m == NULL, "--no-symbol-cache: no module");
	expect_str(hp_symcache_why(c), "--no-symbol-cache", "and it says why");
	hp_symcache_close(c);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
