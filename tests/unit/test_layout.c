/*
 * test_layout.c - the folders of src/ and who may include whom
 * (docs/internals/README.md): every #include "..." of every source file is
 * resolved to the file it names, and an include from one folder into
 * another must be one the table below allows. The table itself has no
 * cycle, so neither has the code: a layer never reaches up into one that
 * builds on it. A new folder needs a row here and in the README.
 */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"

/* Each folder (relative to the source tree's root) and the folders it may
 * include from, besides its own: the same table as the README's. */
static const struct rule {
	const char *folder;
	const char *may[10];
} rules[] = {
	{"include", {NULL}},
	{"src/common", {NULL}},
	{"src/format", {"src/common"}},
	{"src/recorder", {"src/format", "src/common", "include"}},
	{"src/analyzer/symbols", {"src/format", "src/common"}},
	{"src/analyzer/model", {"src/analyzer/symbols", "src/format", "src/common"}},
	{"src/analyzer/assets", {NULL}},
	{"src/analyzer",
	 {"src/analyzer/model", "src/analyzer/symbols", "src/analyzer/assets", "src/format",
	  "src/common"}},
	{"src/analyzer/core",
	 {"src/analyzer/model", "src/analyzer/symbols", "src/format", "src/common"}},
	{"src/live",
	 {"src/analyzer", "src/analyzer/model", "src/analyzer/symbols", "src/format",
	  "src/common"}},
	{"src/attach", {"src/common"}},
	{"src/cli",
	 {"src/analyzer", "src/analyzer/core", "src/analyzer/model", "src/analyzer/symbols",
	  "src/live", "src/attach", "src/format", "src/common"}},
};
#define NRULES (sizeof rules / sizeof *rules)

static char root[PATH_MAX]; /* the source tree's root, resolved */
static unsigned files, edges, bad;

static int rule_of(const char *folder)
{
	for (unsigned i = 0; i < NRULES; i++)
		if (strcmp(rules[i].folder, folder) == 0)
			return (int)i;
	return -1;
}

static int allowed(int from, const char *to)
{
	for (unsigned j = 0; j < 10 && rules[from].may[j]; j++)
		if (strcmp(rules[from].may[j], to) == 0)
			return 1;
	return 0;
}

/* The folder of a path relative to root: "src/analyzer/model". */
static void folder_of(const char *rel, char *out, size_t cap)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;

	if (n >= cap)
		n = cap - 1;
	memcpy(out, rel, n);
	out[n] = '\0';
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char line[1024], folder[PATH_MAX], target[PATH_MAX * 2], real[PATH_MAX], tfolder[PATH_MAX];
	const char *rel = path + 2; /* past "./" */
	size_t len = strlen(path);
	FILE *f;
	int from;

	(void)st, (void)ftw;
	if (type != FTW_F || len < 3 || path[len - 2] != '.' ||
	    (path[len - 1] != 'c' && path[len - 1] != 'h'))
		return 0;
	folder_of(rel, folder, sizeof folder);
	from = rule_of(folder);
	if (!expect_true(from >= 0, "every folder of src/ has a row in the table")) {
		fprintf(stderr, "  no row for %s (%s)\n", folder, rel);
		bad++;
		return 0;
	}
	f = fopen(path, "r");
	if (!expect_true(f != NULL, "a source file opens"))
		return 0;
	files++;
	while (fgets(line, sizeof line, f)) {
		char *p = line, *q;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "#include \"", 10) != 0)
			continue;
		p += 10;
		q = strchr(p, '"');
		if (!q)
			continue;
		*q = '\0';
		if (snprintf(target, sizeof target, "%s/%s/%s", root, folder, p) >=
			    (int)sizeof target ||
		    !realpath(target, real) || strncmp(real, root, strlen(root)) != 0)
			continue; /* not one of ours: the compiler says so if it is missing */
		folder_of(real + strlen(root) + 1, tfolder, sizeof tfolder);
		if (strcmp(tfolder, folder) == 0)
			continue;
		edges++;
		if (!allowed(from, tfolder)) {
			fprintf(stderr, "  %s includes %s: %s may not include from %s\n", rel,
				real + strlen(root) + 1, folder, tfolder);
			bad++;
		}
	}
	fclose(f);
	return 0;
}

HP_TEST(layout_includes_follow_the_table)
{
	if (!expect_true(realpath(".", root) != NULL, "the source tree's root"))
		return;
	bad = files = edges = 0;
	expect_eq_u64(nftw("./src", visit, 16, FTW_PHYS), 0, "src/ is walked");
	expect_true(files > 100, "the sources were found (make check runs from the root)");
	expect_true(edges > 100, "includes across folders were found");
	expect_eq_u64(bad, 0, "every include across folders is one the table allows");
}

/* A call of name (qsort, bsearch) on a line: the name, not the tail of
 * a longer identifier (hp_bsearch), followed by '('. */
static int calls(const char *line, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(line, name); p; p = strstr(p + 1, name)) {
		char before = p == line ? ' ' : p[-1];
		if (p[n] == '(' && before != '_' && !(before >= 'a' && before <= 'z') &&
		    !(before >= 'A' && before <= 'Z') && !(before >= '0' && before <= '9'))
			return 1;
	}
	return 0;
}

static unsigned sorts_bad;

static int visit_sorts(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char line[1024];
	size_t len = strlen(path);
	unsigned lineno = 0;
	FILE *f;

	(void)st, (void)ftw;
	if (type != FTW_F || len < 3 || path[len - 2] != '.' ||
	    (path[len - 1] != 'c' && path[len - 1] != 'h') ||
	    strcmp(path, "./src/common/sort.h") == 0)
		return 0;
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		if (calls(line, "qsort") || calls(line, "bsearch")) {
			fprintf(stderr, "  %s:%u: %s", path + 2, lineno, line);
			sorts_bad++;
		}
	}
	fclose(f);
	return 0;
}

HP_TEST(layout_sorts_take_empty_arrays)
{
	/* qsort and bsearch of an empty array whose pointer is NULL are
	 * undefined behaviour (glibc declares base nonnull); the fuzzer found
	 * such a call in group.c through a capture with a snapshot of no
	 * bucket. src/common/sort.h's hp_sort and hp_bsearch take them, and
	 * no other file calls the C library's. */
	sorts_bad = 0;
	expect_eq_u64(nftw("./src", visit_sorts, 16, FTW_PHYS), 0, "src/ is walked");
	expect_eq_u64(sorts_bad, 0, "no qsort or bsearch outside src/common/sort.h");
}

/* Depth-first over the table: 0 unseen, 1 on the path, 2 done. */
static int cyclic(int i, int *state)
{
	if (state[i] == 1)
		return 1;
	if (state[i] == 2)
		return 0;
	state[i] = 1;
	for (unsigned j = 0; j < 10 && rules[i].may[j]; j++) {
		int k = rule_of(rules[i].may[j]);
		if (k < 0 || cyclic(k, state)) {
			fprintf(stderr, "  %s -> %s\n", rules[i].folder, rules[i].may[j]);
			return 1;
		}
	}
	state[i] = 2;
	return 0;
}

HP_TEST(layout_table_has_no_cycle)
{
	int state[NRULES] = {0};

	for (unsigned i = 0; i < NRULES; i++)
		expect_eq_u64(cyclic((int)i, state), 0, "no folder reaches itself");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
