/*
 * test_toolkit.c - the analyzer's toolkit in src/common: the hash index
 * and the u64 map (table.h), the string pool and table (strtab.h), the
 * growable array (vec.h), sizes and counts (units.h), the string hash
 * (hash.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/hash.h"
#include "../../src/common/strtab.h"
#include "../../src/common/table.h"
#include "../../src/common/units.h"
#include "../../src/common/vec.h"
#include "../harness/harness.h"

HP_TEST(hash_str_is_fnv1a)
{
	/* FNV-1a's published 64-bit test vectors, from its offset basis. */
	expect_eq_u64(hp_hash_str(0xcbf29ce484222325ULL, "a"), 0xaf63dc4c8601ec8cULL, "\"a\"");
	expect_eq_u64(hp_hash_str(0xcbf29ce484222325ULL, "foobar"), 0x85944171f73967e8ULL,
		      "\"foobar\"");
	/* The seed the outputs depend on (the flame graph's colours). */
	expect_eq_u64(HP_HASH_STR_SEED, 1469598103934665603ULL, "the seed");
	expect_eq_u64(hp_hash_str(HP_HASH_STR_SEED, ""), HP_HASH_STR_SEED, "\"\"");
	expect_eq_u64(hp_hash_str(hp_hash_str(HP_HASH_STR_SEED, "foo"), "bar"),
		      hp_hash_str(HP_HASH_STR_SEED, "foobar"), "chained: one string");
}

HP_TEST(hindex_keeps_every_item_of_a_hash)
{
	struct hp_hindex t = {0};
	struct hp_hindex_probe it;
	uint32_t item, seen = 0, n = 0;

	hp_hindex_probe(&t, 42, &it);
	expect_eq_u64(hp_hindex_next(&t, &it), HP_HINDEX_NONE, "an empty index has nothing");
	/* Three items under one hash, among many others: all three found. */
	for (uint32_t i = 0; i < 1000; i++)
		expect_eq_u64((uint64_t)hp_hindex_add(&t, i % 100 == 7 ? 42 : 1000 + i, i), 0, "add");
	expect_eq_u64(hp_hindex_add(&t, 42, 5000), 0, "add under the shared hash");
	hp_hindex_probe(&t, 42, &it);
	while ((item = hp_hindex_next(&t, &it)) != HP_HINDEX_NONE) {
		seen += item;
		n++;
	}
	expect_eq_u64(n, 11, "ten added in the loop and one after");
	expect_eq_u64(seen, 7 + 107 + 207 + 307 + 407 + 507 + 607 + 707 + 807 + 907 + 5000,
		      "the items of that hash, no other");
	expect_eq_u64(t.count, 1001, "count");
	expect_true(t.mask + 1 >= 2 * t.count, "kept at most half full");
	expect_eq_u64((uint64_t)hp_hindex_add(&t, 1, HP_HINDEX_NONE), (uint64_t)-22,
		      "HP_HINDEX_NONE is not an item (-EINVAL)");
	hp_hindex_free(&t);
	expect_eq_u64(t.count, 0, "freed: empty");
}

HP_TEST(u64map_takes_any_key)
{
	struct hp_u64map m = {0};
	uint32_t v = 0;
	int ok = 1;

	expect_true(!hp_u64map_get(&m, 0, &v), "an empty map has no key 0");
	/* 0 and all-ones are keys like any other (no sentinel). */
	expect_eq_u64(hp_u64map_put(&m, 0, 10), 0, "put 0");
	expect_eq_u64(hp_u64map_put(&m, UINT64_MAX, 11), 0, "put UINT64_MAX");
	expect_eq_u64(hp_u64map_put(&m, 1ull << 63, 12), 0, "put 2^63");
	for (uint64_t k = 1; k <= 20000; k++)
		ok &= hp_u64map_put(&m, k * 4096, (uint32_t)k + 100) == 0;
	expect_true(ok, "20000 puts");
	expect_true(hp_u64map_get(&m, 0, &v) && v == 10, "key 0");
	expect_true(hp_u64map_get(&m, UINT64_MAX, &v) && v == 11, "key UINT64_MAX");
	expect_true(hp_u64map_get(&m, 1ull << 63, &v) && v == 12, "key 2^63");
	for (uint64_t k = 1; k <= 20000; k++)
		ok &= hp_u64map_get(&m, k * 4096, &v) && v == (uint32_t)k + 100;
	expect_true(ok, "every key has its value after growing");
	expect_true(!hp_u64map_get(&m, 4095, &v), "a key never put is not there");
	expect_eq_u64(hp_u64map_count(&m), 20003, "count");
	hp_u64map_free(&m);
}

HP_TEST(strtab_numbers_distinct_strings_in_order)
{
	struct hp_strtab t = {0};
	char buf[16];
	uint32_t i = 99;

	expect_eq_u64(hp_strtab_intern(&t, "", &i), 0, "intern \"\"");
	expect_eq_u64(i, 0, "the first string is 0");
	hp_strtab_intern(&t, "main", &i);
	expect_eq_u64(i, 1, "the next is 1");
	/* A string from a buffer that changes: the table keeps its own copy. */
	snprintf(buf, sizeof buf, "%s", "parse");
	hp_strtab_intern(&t, buf, &i);
	expect_eq_u64(i, 2, "parse");
	snprintf(buf, sizeof buf, "%s", "other");
	expect_str(hp_strtab_get(&t, 2), "parse", "a copy, not the caller's buffer");
	hp_strtab_intern(&t, "main", &i);
	expect_eq_u64(i, 1, "seen again: its first index");
	hp_strtab_intern(&t, "parse", &i);
	expect_eq_u64(i, 2, "by content, not by pointer");
	for (int k = 0; k < 5000; k++) {
		snprintf(buf, sizeof buf, "s%d", k);
		hp_strtab_intern(&t, buf, &i);
	}
	expect_eq_u64(t.count, 5003, "5000 more");
	hp_strtab_intern(&t, "s4321", &i);
	expect_eq_u64(i, 3 + 4321, "found after growing");
	expect_str(hp_strtab_get(&t, 0), "", "index 0");
	hp_strtab_free(&t);
}

HP_TEST(strpool_strings_stay_put)
{
	struct hp_strpool p = {0};
	size_t big_len = 200000;
	char *big = malloc(big_len + 1);
	const char *first, *large, *after;

	if (!expect_true(big != NULL, "malloc"))
		return;
	memset(big, 'x', big_len);
	big[big_len] = '\0';
	first = hp_strpool_dup(&p, "first");
	large = hp_strpool_dup(&p, big); /* larger than a block: a block of its own */
	for (int k = 0; k < 20000; k++)
		hp_strpool_dup(&p, "filler, to fill several blocks");
	after = hp_strpool_dup(&p, "after");
	expect_str(first, "first", "the first string, after many more");
	expect_true(large && strlen(large) == big_len, "the large string, whole");
	expect_str(after, "after", "the last");
	hp_strpool_free(&p);
	expect_true(p.blocks == NULL, "freed");
	free(big);
}

HP_TEST(vec_grows_and_keeps)
{
	uint64_t *a = NULL;
	size_t cap = 0;
	int ok = 1;

	for (size_t n = 0; n < 10000; n++) {
		if (!expect_eq_u64(hp_vec_grow(&a, &cap, n + 1), 0, "grow"))
			break;
		a[n] = n * 3;
	}
	for (size_t n = 0; n < 10000; n++)
		ok &= a[n] == n * 3;
	expect_true(ok, "every element kept across the moves");
	expect_true(cap >= 10000 && cap < 20000 * 2, "doubling");
	expect_eq_u64(hp_vec_grow(&a, &cap, 5), 0, "a smaller need: nothing to do");
	expect_eq_u64((uint64_t)hp_vec_grow(&a, &cap, SIZE_MAX / 4), (uint64_t)-12,
		      "more than memory can hold: -ENOMEM, the array kept");
	expect_eq_u64(a[9999], 9999 * 3, "still there");
	free(a);
}

HP_TEST(units_bytes_and_counts)
{
	char b[64];

	expect_str(hp_units_bytes(b, sizeof b, 0), "0 B", "0");
	expect_str(hp_units_bytes(b, sizeof b, 1023), "1023 B", "below 1 KiB");
	expect_str(hp_units_bytes(b, sizeof b, 1024), "1.0 KiB", "1 KiB");
	expect_str(hp_units_bytes(b, sizeof b, 3145728), "3.0 MiB", "3 MiB");
	expect_str(hp_units_bytes(b, sizeof b, -50000), "-48.8 KiB", "negative");
	expect_str(hp_units_bytes(b, sizeof b, 5e15), "4547.5 TiB", "TiB is the largest unit");
	expect_str(hp_units_count(b, sizeof b, 0), "0", "0");
	expect_str(hp_units_count(b, sizeof b, 999), "999", "no separator");
	expect_str(hp_units_count(b, sizeof b, 1862), "1,862", "one separator");
	expect_str(hp_units_count(b, sizeof b, 1234567.4), "1,234,567", "rounded");
	expect_str(hp_units_count(b, sizeof b, -1234567), "-1,234,567", "negative");
	expect_str(hp_units_count(b, 6, 1234567), "1,23", "a small buffer cuts, NUL-terminated");
	expect_str(hp_units_count_u64(b, sizeof b, UINT64_MAX), "18,446,744,073,709,551,615",
		   "every digit of a 64-bit count");
	expect_str(hp_units_count_u64(b, sizeof b, 44001), "44,001", "u64");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
