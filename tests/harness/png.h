/*
 * png.h - reading back the PNG screenshots Chromium writes (tests of the
 * HTML page look at what it painted, not only at its DOM).
 *
 * Only what Chromium writes: 8-bit RGB or RGBA, not interlaced; any other
 * PNG is refused. Decoded with zlib, which the tests link already.
 */
#ifndef HP_TEST_PNG_H
#define HP_TEST_PNG_H

#include <stdint.h>

/* A decoded image: width x height pixels of 3 bytes (R, G, B), row by
 * row from the top; the alpha of an RGBA file is dropped. */
struct hp_png {
	uint32_t width, height;
	uint8_t *rgb;
};

/* Reads path into *out. Returns 0, or -1 when the file cannot be read or
 * is not a PNG of the kind above (or is damaged). The caller frees
 * out->rgb with hp_png_free. */
int hp_png_read(const char *path, struct hp_png *out);

/* The pixel at (x, y) as 0xRRGGBB; 0 outside the image. */
uint32_t hp_png_at(const struct hp_png *p, uint32_t x, uint32_t y);

void hp_png_free(struct hp_png *p);

#endif
