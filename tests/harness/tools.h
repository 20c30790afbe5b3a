/*
 * tools.h - running the real readers of heapprof's outputs from tests:
 * go tool pprof, google-pprof, Chromium. A missing tool is a failed
 * expectation that names the Debian package to install, never a skip.
 */
#ifndef HP_TEST_TOOLS_H
#define HP_TEST_TOOLS_H

#include <stddef.h>

/* Whether tool is on the PATH; else a failed expectation naming package. */
int hp_test_need(const char *tool, const char *package);

/* hp_test_need for go, with go tool pprof set to run offline, its caches
 * and temporary files in this test binary's scratch directory. */
int hp_test_need_go(void);

/* Runs a shell command and returns its standard output (malloc'd), or
 * NULL, with a failed expectation, when it exits non-zero. */
char *hp_test_sh_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The flat (column 0) or cumulative (cum) figure of a function in a
 * `go tool pprof -top` listing, rounded; *found says whether it is there. */
long long hp_test_pprof_column(const char *out, const char *name, int cum, int *found);

/* Writes data[0..len) to path (created or truncated). Returns 0 or -errno. */
int hp_test_write_file(const char *path, const void *data, size_t len);

#endif
