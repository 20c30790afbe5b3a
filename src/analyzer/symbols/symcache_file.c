/*
 * symcache_file.c - the symbol cache's file (see symcache.h, and
 * symcache.c for how files are read, merged and replaced).
 *
 * The file (all integers little-endian):
 *
 *   offset size  field
 *   0      8     magic "hpsymc\0\n"
 *   8      4     version (1)
 *   12     4     CRC-32 (zlib's) of the body
 *   16     8     body length: the file's size - 32
 *   24     8     0 (reserved: a file with anything else is not read)
 *   32     ...   body:
 *     str   producer ("heapprof VERSION build-id HEX libdw VERSION")
 *     str   build-id (raw bytes, 1 to 64)
 *     str   module path, str debug search path
 *     u32   files stamped, each: str path, u8 present, u64 device,
 *           u64 inode, u64 size, u64 mtime in ns
 *     u32   strings, each a str (clean: text.h, no NUL)
 *     u32   frame entries, each: u64 offset, u32 frames (1..1024), each
 *           frame: u32 function, u32 file (string indices), u32 line,
 *           u8 inlined (0 or 1)
 *     u32   data entries, each: u64 offset, u32 string index + 1 (0: none)
 *   str = u32 length + bytes. The body ends exactly at the file's end.
 *
 * A reader trusts nothing: every length and count is checked against the
 * bytes left before it is used or allocated for, strings must be clean
 * (text.h) and free of NUL, indices in range, offsets unique, and the body
 * must end exactly at the file's end.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../../common/vec.h"
#include "symcache_int.h"
#include "../../common/text.h"

#define MAGIC "hpsymc\0\n"
#define VERSION 1u
#define HEADER_BYTES 32
#define MAX_STAMPED 4096 /* files per stamp */

/* --- the file ------------------------------------------------------------- */

struct reader {
	const uint8_t *p;
	size_t len, pos;
	int bad;
};

static uint64_t get_le(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

/* A string of the file: *len bytes at the returned pointer (not
 * terminated), or NULL. */
static const uint8_t *get_str(struct reader *r, size_t *len)
{
	uint64_t n = get_le(r, 4);

	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return NULL;
	}
	*len = (size_t)n;
	r->pos += (size_t)n;
	return r->p + r->pos - n;
}

/* Whether the next string is s exactly. */
static int get_same(struct reader *r, const void *s, size_t slen)
{
	size_t len;
	const uint8_t *p = get_str(r, &len);

	return p && len == slen && memcmp(p, s, len) == 0;
}

/* A count of items of at least min_bytes each, which the rest of the file
 * must be able to hold (so a count never asks for more memory than the
 * file's size warrants). */
static size_t get_count(struct reader *r, size_t min_bytes, size_t max)
{
	uint64_t n = get_le(r, 4);

	if (r->bad || n > max || n > (r->len - r->pos) / min_bytes) {
		r->bad = 1;
		return 0;
	}
	return (size_t)n;
}

/* Reads a whole file of at most HP_SYMCACHE_MAX_FILE_BYTES, a regular
 * file of this user, not through a symbolic link. Returns 0 or -1. */
int hp_symcache_file_read(const char *path, uint8_t **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	size_t done = 0;
	uint8_t *buf = NULL;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size < HEADER_BYTES || st.st_size > HP_SYMCACHE_MAX_FILE_BYTES ||
	    !(buf = malloc((size_t)st.st_size)))
		goto err;
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto err;
		done += (size_t)n;
	}
	close(fd);
	*data = buf;
	*len = done;
	return 0;
err:
	free(buf);
	close(fd);
	return -1;
}

/* Parses a file's bytes into out, a fresh module with its key (build-id,
 * path, search) set: its stamp and entries. Returns 0, or -1 when the
 * file is not a valid one of this key and producer (nothing is kept
 * then: out is cleared). */
int hp_symcache_file_parse(struct hp_symcache *c, const uint8_t *d, size_t len,
			   struct hp_symcache_mod *out)
{
	struct reader r = {d + HEADER_BYTES, len - HEADER_BYTES, 0, 0};
	struct reader h = {d, HEADER_BYTES, 0, 0};
	uint32_t *map = NULL;
	char *tmp = NULL;
	size_t tmpcap = 0, n;
	struct hp_sym *syms = NULL;

	if (len < HEADER_BYTES || memcmp(d, MAGIC, 8) != 0)
		return -1;
	h.pos = 8;
	uint32_t version = (uint32_t)get_le(&h, 4), crc = (uint32_t)get_le(&h, 4);
	uint64_t body = get_le(&h, 8), reserved = get_le(&h, 8);
	if (version != VERSION || body != len - HEADER_BYTES || reserved != 0 ||
	    crc != (uint32_t)crc32(0, r.p, (uInt)r.len))
		return -1;
	if (!get_same(&r, c->producer, strlen(c->producer)) ||
	    !get_same(&r, out->build_id, out->build_id_len) ||
	    !get_same(&r, out->path, strlen(out->path)) ||
	    !get_same(&r, out->search, strlen(out->search)))
		return -1;
	n = get_count(&r, 4 + 1 + 32, MAX_STAMPED);
	for (size_t i = 0; i < n && !r.bad; i++) {
		size_t plen;
		const uint8_t *p = get_str(&r, &plen);
		struct hp_symcache_stampfile f;
		if (!p || memchr(p, 0, plen) ||
		    hp_vec_grow(&out->stamp.files, &out->stamp.cap, i + 1) ||
		    !(f.path = strndup((const char *)p, plen))) {
			r.bad = 1;
			break;
		}
		f.present = (uint8_t)get_le(&r, 1);
		f.dev = get_le(&r, 8);
		f.ino = get_le(&r, 8);
		f.size = get_le(&r, 8);
		f.mtime_ns = get_le(&r, 8);
		out->stamp.files[out->stamp.n++] = f;
	}
	/* Strings: the file's index to this module's. */
	n = get_count(&r, 4, UINT32_MAX - 1);
	map = malloc((n + 1) * sizeof *map);
	if (!map)
		r.bad = 1;
	for (size_t i = 0; i < n && !r.bad; i++) {
		size_t slen;
		const uint8_t *p = get_str(&r, &slen);
		if (!p || memchr(p, 0, slen) || hp_vec_grow(&tmp, &tmpcap, slen + 1)) {
			r.bad = 1;
			break;
		}
		memcpy(tmp, p, slen);
		tmp[slen] = '\0';
		if (!hp_text_is_clean(tmp) || hp_strtab_intern(&out->strings, tmp, &map[i]))
			r.bad = 1;
	}
	size_t nstrings = n;
	syms = malloc(HP_SYMCACHE_MAX_FRAMES * sizeof *syms);
	if (!syms)
		r.bad = 1;
	n = get_count(&r, 8 + 4 + 13, UINT32_MAX - 1);
	for (size_t i = 0; i < n && !r.bad; i++) {
		uint64_t offset = get_le(&r, 8);
		size_t nf = get_count(&r, 13, HP_SYMCACHE_MAX_FRAMES);
		uint32_t unused;
		if (nf < 1)
			r.bad = 1;
		for (size_t k = 0; k < nf && !r.bad; k++) {
			uint64_t fn = get_le(&r, 4), file = get_le(&r, 4), line = get_le(&r, 4);
			uint64_t inl = get_le(&r, 1);
			if (fn >= nstrings || file >= nstrings || inl > 1) {
				r.bad = 1;
				break;
			}
			syms[k] = (struct hp_sym){hp_strtab_get(&out->strings, map[fn]),
						  hp_strtab_get(&out->strings, map[file]),
						  (uint32_t)line, (int)inl};
		}
		if (r.bad || hp_u64map_get(&out->index, offset, &unused)) {
			r.bad = 1; /* an offset twice: not a file this code wrote */
			break;
		}
		if (hp_symcache_mod_add_frames(out, offset, syms, (int)nf))
			r.bad = 1;
	}
	n = get_count(&r, 12, UINT32_MAX - 1);
	for (size_t i = 0; i < n && !r.bad; i++) {
		uint64_t offset = get_le(&r, 8), name = get_le(&r, 4);
		uint32_t unused;
		if (r.bad || name > nstrings || hp_u64map_get(&out->data_index, offset, &unused) ||
		    hp_symcache_mod_add_data(out, offset,
					     name ? hp_strtab_get(&out->strings, map[name - 1])
						  : NULL))
			r.bad = 1;
	}
	if (r.pos != r.len)
		r.bad = 1;
	free(map);
	free(tmp);
	free(syms);
	if (r.bad) {
		hp_symcache_mod_clear(out);
		hp_symcache_stamp_free(&out->stamp);
		return -1;
	}
	return 0;
}

void hp_symcache_file_name(const struct hp_symcache *c, const struct hp_symcache_mod *m, char *out,
			   size_t cap)
{
	char hex[2 * HP_SYMCACHE_MAX_BUILD_ID + 1];

	for (size_t k = 0; k < m->build_id_len; k++)
		snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
	hex[2 * m->build_id_len] = '\0';
	snprintf(out, cap, "%s/%s.hpsym", c->dir, hex);
}

/* --- writing ---------------------------------------------------------------- */

struct writer {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void put_bytes(struct writer *w, const void *d, size_t n)
{
	if (w->err || hp_vec_grow(&w->p, &w->cap, w->len + n)) {
		w->err = 1;
		return;
	}
	memcpy(w->p + w->len, d, n);
	w->len += n;
}

static void put_le(struct writer *w, uint64_t v, size_t n)
{
	uint8_t b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, n);
}

static void put_str(struct writer *w, const void *s, size_t n)
{
	put_le(w, n, 4);
	put_bytes(w, s, n);
}

/* The bytes of w, or w->err. */
static void serialize(const struct hp_symcache *c, const struct hp_symcache_mod *m,
		      struct writer *w)
{
	uint8_t header[HEADER_BYTES] = {0};

	put_bytes(w, header, sizeof header);
	put_str(w, c->producer, strlen(c->producer));
	put_str(w, m->build_id, m->build_id_len);
	put_str(w, m->path, strlen(m->path));
	put_str(w, m->search, strlen(m->search));
	put_le(w, m->stamp.n, 4);
	for (size_t i = 0; i < m->stamp.n; i++) {
		const struct hp_symcache_stampfile *f = &m->stamp.files[i];
		put_str(w, f->path, strlen(f->path));
		put_le(w, f->present, 1);
		put_le(w, f->dev, 8);
		put_le(w, f->ino, 8);
		put_le(w, f->size, 8);
		put_le(w, f->mtime_ns, 8);
	}
	put_le(w, m->strings.count, 4);
	for (size_t i = 0; i < m->strings.count; i++) {
		const char *s = hp_strtab_get(&m->strings, (uint32_t)i);
		put_str(w, s, strlen(s));
	}
	put_le(w, m->nentries, 4);
	for (size_t i = 0; i < m->nentries; i++) {
		const struct hp_symcache_entry *e = &m->entries[i];
		put_le(w, e->offset, 8);
		put_le(w, e->n, 4);
		for (uint32_t k = 0; k < e->n; k++) {
			const struct hp_symcache_frame *f = &m->frames[e->first + k];
			put_le(w, f->fn, 4);
			put_le(w, f->file, 4);
			put_le(w, f->line, 4);
			put_le(w, f->inlined, 1);
		}
	}
	put_le(w, m->ndata, 4);
	for (size_t i = 0; i < m->ndata; i++) {
		put_le(w, m->data[i].offset, 8);
		put_le(w, m->data[i].name, 4);
	}
	if (w->err || w->len - HEADER_BYTES > UINT32_MAX)
		return;
	struct writer h = {w->p, 0, w->len, 0};
	put_bytes(&h, MAGIC, 8);
	put_le(&h, VERSION, 4);
	put_le(&h, (uint32_t)crc32(0, w->p + HEADER_BYTES, (uInt)(w->len - HEADER_BYTES)), 4);
	put_le(&h, w->len - HEADER_BYTES, 8);
}

int hp_symcache_file_serialize(const struct hp_symcache *c, const struct hp_symcache_mod *m,
			       uint8_t **data, size_t *len)
{
	struct writer w = {0};

	serialize(c, m, &w);
	if (w.err) {
		free(w.p);
		return -ENOMEM;
	}
	*data = w.p;
	*len = w.len;
	return 0;
}

/* Writes data to a temporary file in the directory and renames it to
 * name. Returns 0 or -1 (no file is left behind). */
int hp_symcache_file_write(const struct hp_symcache *c, const char *name, const uint8_t *data,
			   size_t len)
{
	char tmp[PATH_MAX + 64];
	size_t done = 0;
	int fd;

	snprintf(tmp, sizeof tmp, "%s/.tmp.XXXXXX", c->dir);
	fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (close(fd) < 0 || done < len || rename(tmp, name) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
