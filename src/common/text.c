/*
 * text.c - strings from a capture made safe to show (see text.h).
 */
#include "text.h"

#include <stdlib.h>
#include <string.h>

/* How many bytes at p (up to the NUL) form one character shown as it is:
 * 1 for printable ASCII, the sequence length for well-formed UTF-8 that is
 * not a C1 or bidi control, 0 for a byte to escape. */
static size_t clean_char(const unsigned char *p)
{
	size_t n;
	unsigned cp;

	if (*p < 0x80)
		return *p >= 0x20 && *p != 0x7f;
	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 2;
		cp = *p & 0x1f;
	} else if (*p >= 0xe0 && *p <= 0xef) {
		n = 3;
		cp = *p & 0x0f;
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 4;
		cp = *p & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates, past U+10FFFF: not well-formed. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return n;
}

int hp_text_is_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = clean_char(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

size_t hp_text_escaped_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0;

	while (*p) {
		size_t n = clean_char(p);
		len += n ? n : 4;
		p += n ? n : 1;
	}
	return len;
}

char *hp_text_escape(char *out, size_t cap, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!cap)
		return out;
	while (*p) {
		size_t n = clean_char(p);
		if (n) {
			if (o + n >= cap)
				break;
			memcpy(out + o, p, n);
			o += n;
			p += n;
			continue;
		}
		if (o + 4 >= cap)
			break;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
		p++;
	}
	out[o] = '\0';
	return out;
}

char *hp_text_dup(const char *s)
{
	size_t n = hp_text_escaped_len(s) + 1;
	char *d = malloc(n);
	return d ? hp_text_escape(d, n, s) : NULL;
}

int hp_text_fputs(const char *s, FILE *f)
{
	char buf[1024];
	const unsigned char *p = (const unsigned char *)s;
	int ret = 0;

	if (hp_text_is_clean(s))
		return fputs(s, f);
	/* Escaped a piece at a time: a piece of at most 255 input bytes
	 * escapes to at most 1020 bytes, and is cut on a character. */
	while (*p && ret >= 0) {
		char piece[256];
		size_t k = 0;
		while (p[k] && k < sizeof piece - 1) {
			size_t n = clean_char(p + k);
			n = n ? n : 1;
			if (k + n > sizeof piece - 1)
				break;
			k += n;
		}
		memcpy(piece, p, k);
		piece[k] = '\0';
		ret = fputs(hp_text_escape(buf, sizeof buf, piece), f);
		p += k;
	}
	return ret;
}

/* Copies s into out, at most max bytes of it: when longer, its head and
 * tail around "...", cut on UTF-8 character boundaries. */
void hp_text_cut_middle(char *out, size_t cap, const char *s, size_t max)
{
	size_t len = strlen(s), head, tail;

	if (max < 5)
		max = 5;
	if (len <= max || cap <= max) {
		snprintf(out, cap, "%s", s);
		return;
	}
	head = (max - 3) / 2;
	tail = max - 3 - head;
	while (head && ((unsigned char)s[head] & 0xc0) == 0x80)
		head--;
	while (tail && ((unsigned char)s[len - tail] & 0xc0) == 0x80)
		tail--;
	snprintf(out, cap, "%.*s...%s", (int)head, s, s + len - tail);
}
