/*
 * test_assets.c - the page assets embedded at build time
 * (src/analyzer/assets.h): each array holds its file's bytes exactly (a
 * stale or truncated embedding fails here), NUL-terminated, and the flame
 * graph's script can sit in a CDATA section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyzer/assets.h"
#include "../harness/harness.h"

/* The file under the source tree (make check runs from its root). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (data = malloc((size_t)n + 1)) && fread(data, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else
		*len = 0;
	fclose(f);
	return data;
}

static void same_as_file(const unsigned char *asset, size_t asset_len, const char *path)
{
	size_t len = 0;
	char *data = slurp(path, &len);

	if (!expect_true(data != NULL, path))
		return;
	expect_eq_u64(asset_len, len, "the embedded length is the file's");
	expect_true(asset_len == len && memcmp(asset, data, len) == 0,
		    "the embedded bytes are the file's");
	expect_eq_u64(asset[asset_len], 0, "NUL-terminated");
	expect_eq_u64(strlen((const char *)asset), asset_len, "no NUL inside: text");
	free(data);
}

HP_TEST(assets_are_their_files)
{
	same_as_file(hp_asset_flame_js, hp_asset_flame_js_len, "src/analyzer/assets/flame.js");
	same_as_file(hp_asset_flame_css, hp_asset_flame_css_len, "src/analyzer/assets/flame.css");
}

HP_TEST(flame_script_fits_in_cdata)
{
	expect_true(strstr((const char *)hp_asset_flame_js, "]]>") == NULL,
		    "the script never closes its CDATA section");
	expect_true(strstr((const char *)hp_asset_flame_css, "</style") == NULL,
		    "the style sheet never closes its element");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
