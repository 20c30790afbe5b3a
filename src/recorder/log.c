/*
 * log.c - the recorder's rate-limited diagnostics (see log.h).
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>

#include "../common/fmt.h"
#include "os.h"

/* Lines written so far; atomically incremented by any thread. */
static unsigned lines;
/* Set once at init by the configuration, read by all. */
static int quiet;
static struct hp_os_file_id stderr_id;

void hp_log_set_quiet(int q)
{
	quiet = q || hp_os_file_id(2, &stderr_id) < 0;
}

/* Whether descriptor 2 is still the stderr we started with. */
static int stderr_ours(void)
{
	struct hp_os_file_id now;
	return hp_os_file_id(2, &now) == 0 && hp_os_same_file(&now, &stderr_id);
}

/* hp_log's body. */
static void vlog(const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;
	unsigned k;

	if (quiet || !stderr_ours())
		return;
	k = __atomic_fetch_add(&lines, 1, __ATOMIC_RELAXED);
	if (k > HP_LOG_MAX_LINES)
		return;
	if (k == HP_LOG_MAX_LINES) {
		static const char last[] = "heapprof: too many messages, going quiet\n";
		if (stderr_ours() && hp_os_write_fits(2, sizeof last - 1))
			hp_os_write_all(2, last, sizeof last - 1);
		return;
	}
	n = hp_fmt(buf, sizeof buf - 1, "heapprof: ");
	n += hp_vfmt(buf + n, sizeof buf - 1 - n, fmt, ap);
	buf[n++] = '\n';
	/* Never past the file size limit: the write would raise SIGXFSZ. */
	if (hp_os_write_fits(2, n))
		hp_os_write_all(2, buf, n);
}

/* errno kept (stderr's fstat and write can fail): a message may come
 * from the slow path of an allocation, which does not save it. */
void hp_log(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
	errno = saved;
}
