/*
 * test_assets.c - the page assets embedded at build time
 * (src/analyzer/assets/assets.h): each array holds its file's bytes exactly (a
 * stale or truncated embedding fails here), NUL-terminated, and the flame
 * graph's script can sit in a CDATA section; the HTML report's script is
 * every file of assets/report/ joined in one function (scripts/join.sh).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyzer/assets/assets.h"
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

/* report.js: "(function () {", "'use strict';", then each file of
 * assets/report/ after a line naming it, whole, core.js first and
 * main.js last, then "})();", nothing else; and no "</" that could end
 * its element. */
HP_TEST(report_script_is_its_files)
{
	static const char open_[] = "(function () {\n'use strict';\n", close_[] = "})();\n";
	static const char dir[] = "src/analyzer/assets/report/";
	const char *js = (const char *)hp_asset_report_js, *first = NULL, *last = NULL;
	size_t len = hp_asset_report_js_len, covered = strlen(open_) + strlen(close_);
	char marker[256];
	glob_t g;

	expect_true(strncmp(js, open_, strlen(open_)) == 0, "the function first");
	expect_true(len > strlen(close_) && strcmp(js + len - strlen(close_), close_) == 0,
		    "its end last");
	/* make check runs from the source tree */
	if (!expect_true(glob("src/analyzer/assets/report/*.js", 0, NULL, &g) == 0 &&
				 g.gl_pathc >= 9,
			 "the script's files, one per view and a core"))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t flen = 0;
		char *data = slurp(g.gl_pathv[i], &flen);
		const char *at;
		snprintf(marker, sizeof marker, "/* --- %s --- */\n", g.gl_pathv[i]);
		at = strstr(js, marker);
		expect_true(at && data && strncmp(at + strlen(marker), data, flen) == 0, g.gl_pathv[i]);
		if (at && (!first || at < first))
			first = at;
		if (at && (!last || at > last))
			last = at;
		covered += strlen(marker) + flen;
		free(data);
	}
	globfree(&g);
	snprintf(marker, sizeof marker, "/* --- %score.js --- */\n", dir);
	expect_true(first && strncmp(first, marker, strlen(marker)) == 0, "core.js first");
	snprintf(marker, sizeof marker, "/* --- %smain.js --- */\n", dir);
	expect_true(last && strncmp(last, marker, strlen(marker)) == 0, "main.js last");
	expect_eq_u64(len, covered, "nothing but the files");
	expect_true(strstr(js, "</") == NULL, "no \"</\" to end the script element");
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
