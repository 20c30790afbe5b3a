/*
 * assets.h - the page assets (JavaScript, CSS) the analyzer writes into
 * its outputs, kept in files of their own under src/analyzer/assets/ and
 * embedded at build time: scripts/embed.sh turns each file into an array
 * of its bytes in $(BUILD)/gen/assets.c (see the Makefile). Each array
 * holds the file's bytes exactly, then a NUL not counted in its _len.
 *
 * Edit the files, not the generated C; `make` regenerates it.
 */
#ifndef HP_ANALYZER_ASSETS_H
#define HP_ANALYZER_ASSETS_H

#include <stddef.h>

/* assets/flame.js: the flame graph's interaction (flame_svg.c). It reads
 * the frames' attributes and carries no data of its own; it sits in a
 * CDATA section, so it never contains "]]>" (tests/unit/test_assets.c). */
extern const unsigned char hp_asset_flame_js[];
extern const size_t hp_asset_flame_js_len;

/* assets/flame.css: the flame graph's style sheet, inside <style>. */
extern const unsigned char hp_asset_flame_css[];
extern const size_t hp_asset_flame_css_len;

/* report.js and assets/report.css: the HTML report's page (html.c),
 * inside <script> and <style>: neither contains "</" followed by a tag
 * name it could close (tests/unit/test_assets.c). report.js is made by
 * scripts/join.sh from the files of assets/report/ (the Makefile's
 * REPORT_JS, in its order) in one function scope. */
extern const unsigned char hp_asset_report_js[];
extern const size_t hp_asset_report_js_len;
extern const unsigned char hp_asset_report_css[];
extern const size_t hp_asset_report_css_len;

/* assets/vendor/uplot.*: uPlot 1.6.32 (MIT, assets/vendor/README.md), the
 * HTML report's timeline chart, and its licence, which the page carries
 * in a comment. */
extern const unsigned char hp_asset_uplot_min_js[];
extern const size_t hp_asset_uplot_min_js_len;
extern const unsigned char hp_asset_uplot_min_css[];
extern const size_t hp_asset_uplot_min_css_len;
extern const unsigned char hp_asset_uplot_LICENSE[];
extern const size_t hp_asset_uplot_LICENSE_len;

#endif
