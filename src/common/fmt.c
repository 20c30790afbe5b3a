/*
 * fmt.c - a tiny printf for places where stdio is not allowed (see fmt.h).
 */
#include "fmt.h"

#include <errno.h>
#include <stdint.h>

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len++] = c;
}

static void put_num(struct out *o, uint64_t v, unsigned base, int negative)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (negative)
		put(o, '-');
	while (n)
		put(o, tmp[--n]);
}

size_t hp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = {buf, cap, 0};

	if (!cap)
		return 0;
	for (const char *f = fmt; *f; f++) {
		int wide = 0;

		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		while (*f == 'l' || *f == 'z') {
			wide = 1;
			f++;
		}
		switch (*f) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			for (s = s ? s : "(null)"; *s; s++)
				put(&o, *s);
			break;
		}
		case 'd': {
			int64_t v = wide ? va_arg(ap, int64_t) : va_arg(ap, int);
			put_num(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0);
			break;
		}
		case 'u':
			put_num(&o, wide ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, 0);
			break;
		case 'x':
			put_num(&o, wide ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, 0);
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			f--;
			break;
		default:
			put(&o, '%');
			put(&o, *f);
		}
	}
	o.buf[o.len] = '\0';
	return o.len;
}

size_t hp_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = hp_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

const char *hp_errname(int err)
{
	switch (err) {
	case EACCES: return "permission denied";
	case EEXIST: return "file exists";
	case ENOENT: return "no such file or directory";
	case ELOOP: return "is a symbolic link";
	case ENOSPC: return "no space left on device";
	case EROFS: return "read-only file system";
	case EISDIR: return "is a directory";
	case ENOTDIR: return "a path component is not a directory";
	case ENOMEM: return "out of memory";
	case EDQUOT: return "disk quota exceeded";
	case EIO: return "input/output error";
	case EFBIG: return "file too large";
	case EBADF: return "bad file descriptor";
	case EPIPE: return "broken pipe";
	case ENXIO: return "a FIFO with no reader (or a device not there)";
	case EPERM: return "operation not permitted";
	case ENAMETOOLONG: return "file name too long";
	default: return "error";
	}
}
