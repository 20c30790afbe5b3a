/*
 * png.c - the PNG reader of png.h: the chunks (IHDR, the IDAT stream,
 * IEND), zlib's inflate, then each row's filter undone (PNG spec, 9.2:
 * None, Sub, Up, Average, Paeth), in place, a row at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "png.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t paeth(uint8_t a, uint8_t b, uint8_t c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	if (pa <= pb && pa <= pc)
		return a;
	return pb <= pc ? b : c;
}

/* Undoes the filters of raw (height rows of 1 + stride bytes, the
 * filter type first); bpp bytes a pixel. Returns 0, or -1 on an unknown
 * filter. */
static int unfilter(uint8_t *raw, uint32_t height, size_t stride, unsigned bpp)
{
	for (uint32_t y = 0; y < height; y++) {
		uint8_t *row = raw + y * (stride + 1), *cur = row + 1;
		const uint8_t *up = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;
		for (size_t i = 0; i < stride; i++) {
			uint8_t a = i >= bpp ? cur[i - bpp] : 0, b = up ? up[i] : 0;
			uint8_t c = up && i >= bpp ? up[i - bpp] : 0;
			switch (row[0]) {
			case 0:
				break;
			case 1:
				cur[i] += a;
				break;
			case 2:
				cur[i] += b;
				break;
			case 3:
				cur[i] += (uint8_t)((a + b) / 2);
				break;
			case 4:
				cur[i] += paeth(a, b, c);
				break;
			default:
				return -1;
			}
		}
	}
	return 0;
}

int hp_png_read(const char *path, struct hp_png *out)
{
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	FILE *f = fopen(path, "rb");
	uint8_t *file = NULL, *idat = NULL, *raw = NULL;
	size_t len = 0, nidat = 0, stride = 0;
	uint32_t w = 0, h = 0;
	unsigned bpp = 0;
	uLongf rawlen;
	long n;
	int ret = -1;

	memset(out, 0, sizeof *out);
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 8 || fseek(f, 0, SEEK_SET) ||
	    !(file = malloc((size_t)n)) || fread(file, 1, (size_t)n, f) != (size_t)n)
		goto out;
	len = (size_t)n;
	if (memcmp(file, sig, 8) || !(idat = malloc(len)))
		goto out;
	for (size_t off = 8; off + 12 <= len;) {
		uint32_t clen = be32(file + off);
		const uint8_t *type = file + off + 4, *data = file + off + 8;
		if (clen > len - off - 12)
			goto out;
		if (!memcmp(type, "IHDR", 4) && clen >= 13) {
			w = be32(data);
			h = be32(data + 4);
			/* 8 bits, RGB (2) or RGBA (6), no interlace. */
			if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0)
				goto out;
			bpp = data[9] == 2 ? 3 : 4;
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + nidat, data, clen);
			nidat += clen;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		off += 12 + (size_t)clen;
	}
	if (!bpp || !w || !h || w > 1 << 15 || h > 1 << 15)
		goto out;
	stride = (size_t)w * bpp;
	rawlen = (uLongf)((stride + 1) * h);
	if (!(raw = malloc(rawlen)) || uncompress(raw, &rawlen, idat, nidat) != Z_OK ||
	    rawlen != (stride + 1) * h || unfilter(raw, h, stride, bpp))
		goto out;
	if (!(out->rgb = malloc((size_t)w * h * 3)))
		goto out;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			memcpy(out->rgb + ((size_t)y * w + x) * 3,
			       raw + y * (stride + 1) + 1 + (size_t)x * bpp, 3);
	out->width = w;
	out->height = h;
	ret = 0;
out:
	free(file);
	free(idat);
	free(raw);
	fclose(f);
	return ret;
}

uint32_t hp_png_at(const struct hp_png *p, uint32_t x, uint32_t y)
{
	const uint8_t *c;

	if (x >= p->width || y >= p->height)
		return 0;
	c = p->rgb + ((size_t)y * p->width + x) * 3;
	return (uint32_t)c[0] << 16 | (uint32_t)c[1] << 8 | c[2];
}

void hp_png_free(struct hp_png *p)
{
	free(p->rgb);
	p->rgb = NULL;
}
