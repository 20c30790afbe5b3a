/*
 * fuzz_core.c - libFuzzer target: any bytes, read as an ELF core dump
 * (issue 12: "the core reader is fuzzed like the capture reader").
 *
 * The model: whatever the bytes, hp_core_open_mem refuses them with one
 * line or opens what it can, and then everything `heapprof core` and
 * `heapprof report CORE` do runs on it: the modules named by NT_FILE (the
 * files on this machine, build-ids checked), the recorder's tables behind
 * heapprof_root, glibc's heap, the types and the reachability scan with
 * its join to the recorder's blocks, both listings and --whatis (text and
 * JSON, into /dev/null), the capture of the dump and its loading, and
 * then what `heapprof report CORE`, html, diff, export and flamegraph do
 * with that capture (exercise.h and views.h, as fuzz_capture.c). It never
 * reads or writes out of bounds, never hits undefined behaviour, never
 * leaks, never hangs, and never asks for memory out of proportion to the
 * input (libFuzzer's -rss_limit_mb and -malloc_limit_mb).
 *
 * Seeds: real cores (tests/fuzz/run_core.sh): one of a process under
 * heapprof (its root, tables and live blocks), one without. The core's
 * bytes are used in place (hp_core_open_mem borrows them). libFuzzer's
 * own mutations reach the headers, notes and tables of such a seed; the
 * deterministic test (tests/integration/test_core_fuzz.c) aims at the
 * root's fields instead.
 *
 * Built by `make fuzz-core` with clang -fsanitize=fuzzer,address,undefined
 * from the analyzer's sources (Makefile, "--- fuzzing ---").
 * Single-threaded, as libFuzzer calls it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/capture.h"
#include "../../src/analyzer/core/core.h"
#include "../../src/format/encode.h"
#include "exercise.h"
#include "views.h"

/* /dev/null, opened once: the listings' output (written by the one
 * thread libFuzzer runs); views.h's. */
static FILE *sink;

static void run(struct hp_core *c)
{
	struct hp_core_report_options ro = {.top = 5};
	struct hp_buf buf = {.grow = hp_buf_grow_heap};
	char err[1024];

	for (ro.json = 0; ro.json < 2; ro.json++) {
		if (c->rec.found)
			hp_core_rec_report(sink, c, &ro);
		hp_core_report(sink, c, &ro);
		if (c->nblocks)
			hp_core_whatis(sink, c, &c->blocks[c->nblocks / 2].addr, 1, &ro);
		if (c->rec.nblocks)
			hp_core_whatis(sink, c, &c->rec.blocks[c->rec.nblocks / 2].addr, 1, &ro);
	}
	if (c->rec.found && hp_core_capture(c, &buf) == 0) {
		struct hp_capture cap;
		/* `heapprof report CORE` and the other commands on a core read
		 * this capture: what the capture fuzzer checks of it, and every
		 * view of it. */
		if (hp_capture_load_mem(buf.data, buf.len, &cap, err, sizeof err) == 0) {
			exercise_images(&cap);
			exercise_all_views(&cap);
			hp_capture_free(&cap);
		} else if (!err[0] || strchr(err, '\n')) {
			abort(); /* one line, never empty */
		}
	}
	free(buf.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_core c;
	char err[1024];

	if (!sink)
		sink = views_sink();
	if (hp_core_open_mem(&c, data, size, "fuzz.core", err, sizeof err) != 0) {
		/* one line, never empty */
		if (!err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	if (hp_core_modules(&c, NULL) == 0 && hp_core_recorder(&c) == 0 &&
	    hp_core_heap(&c, NULL) == 0 && hp_core_scan(&c) == 0)
		run(&c);
	for (size_t i = 0; i < c.nnotes; i++)
		if (!c.notes[i][0] || strchr(c.notes[i], '\n'))
			abort();
	hp_core_close(&c);
	return 0;
}
