/*
 * tools.c - running the real readers of heapprof's outputs (see tools.h).
 */
#include "tools.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* Whether a tool is installed; a failed expectation naming the package
 * when it is not. */
int hp_test_need(const char *tool, const char *package)
{
	char why[256];

	if (hp_test_sh("command -v %s >/dev/null 2>&1", tool) == 0)
		return 1;
	snprintf(why, sizeof why, "%s is missing: install the Debian package %s "
		 "(scripts/deps.sh)", tool, package);
	expect_true(0, why);
	return 0;
}

/* go tool pprof runs offline with its caches and temporary files in this
 * test's scratch directory, whatever the user's environment says. */
int hp_test_need_go(void)
{
	static const char *const dirs[][2] = {
		{"GOPATH", "go"}, {"GOCACHE", "gocache"}, {"PPROF_TMPDIR", "pprof"}, {"HOME", "home"},
	};
	char path[4200];

	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(path, sizeof path, "%s/%s", hp_test_tmp(), dirs[i][1]);
		mkdir(path, 0700);
		setenv(dirs[i][0], path, 1);
	}
	unsetenv("GOFLAGS");
	setenv("GOPROXY", "off", 1);
	setenv("GOTOOLCHAIN", "local", 1);
	return hp_test_need("go", "golang-go");
}

/* Runs a shell command and returns its standard output (malloc'd), or
 * NULL, with a failed expectation, when it exits non-zero. */
char *hp_test_sh_out(const char *fmt, ...)
{
	char cmd[8192], why[8300];
	va_list ap;
	FILE *p;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p) {
		expect_true(0, "popen");
		return NULL;
	}
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len - 1, p);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	st = pclose(p);
	snprintf(why, sizeof why, "command succeeds: %s", cmd);
	if (!expect_true(st == 0, why)) {
		printf("%s", buf);
		free(buf);
		return NULL;
	}
	return buf;
}

/* The figure of a function in a `-top` / `--text` listing: the first
 * column (flat) or the fourth (cum) of the line whose last field is the
 * name. *found says whether the line is there. */
long long hp_test_pprof_column(const char *out, const char *name, int cum, int *found)
{
	const char *line = out;

	*found = 0;
	while (line && *line) {
		const char *end = strchr(line, '\n');
		char buf[1024], col[5][64];
		int at = -1;
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len < sizeof buf) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			/* Five columns, then the name, which may hold spaces */
			if (sscanf(buf, "%63s %63s %63s %63s %63s %n", col[0], col[1], col[2], col[3],
				   col[4], &at) == 5 &&
			    at > 0 && strcmp(buf + at, name) == 0) {
				*found = 1;
				return llround(strtod(col[cum ? 3 : 0], NULL));
			}
		}
		line = end ? end + 1 : NULL;
	}
	return 0;
}

int hp_test_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -EIO;
		}
		p += w;
		len -= (size_t)w;
	}
	return close(fd) < 0 ? -errno : 0;
}
