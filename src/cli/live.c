/*
 * live.c - following a running program's capture (see live.h).
 *
 * State: the file's descriptor and the offset read up to (pos: every
 * record before it has been seen, whole); the image being followed
 * (image, counted as capture.c counts them) with its META, MODULES and
 * STACKS frames in meta (after the file header); the last SNAPSHOT and
 * TIMESERIES frames; and the symbol cache: a symbolizer on symcap (a
 * capture of the image's records, whose module list the symbolizer reads)
 * and every address it resolved, with its frames. All of it is guarded by
 * the server's lock (live.h: not thread-safe).
 */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../analyzer/symbolize.h"
#include "../common/hash.h"
#include "../format/decode.h"
#include "../format/encode.h"
#include "../format/format.h"

#define MAX_SYMS 64            /* inlined frames at one address */
#define FIRST_CHUNK (4u << 20) /* bytes read from the file at once, doubled for a larger record */
#define MAX_HEADER_BYTES 4096  /* a file header that claims more is not followed */

/* A resolved address: frames[first .. first + count) of the cache. */
struct entry {
	uint64_t address;
	uint32_t first, count;
};

struct hp_live {
	char *path;
	int fd; /* -1 until the capture exists */
	pid_t pid;
	int pidfd; /* -1 where the kernel has no pidfd: kill() then */
	int sig;
	const int *stop;

	uint8_t prefix[MAX_HEADER_BYTES]; /* the file header, as read */
	size_t prefix_len;                /* 0 until read */
	uint64_t pos;
	uint8_t *chunk; /* the read buffer: prefix, then file bytes */
	size_t chunk_cap, want;

	size_t image; /* of the file; valid when nimages */
	size_t nimages;
	int image_has_meta;
	size_t image_records;
	struct hp_buf meta; /* prefix + META, MODULES, STACKS frames of the image */
	uint8_t *snap, *ts; /* the last SNAPSHOT and TIMESERIES frames of the image */
	size_t snap_len, ts_len;
	uint64_t snap_end;
	uint64_t nsnaps; /* SNAPSHOT records seen, all images */

	/* The symbol cache, for image sym_image and symcap's modules. */
	struct hp_capture symcap;
	int have_symcap;
	size_t sym_image;
	size_t sym_meta_len; /* meta.len when the cache last covered every stack */
	struct hp_symbolizer *sym;
	struct entry *entries;
	size_t nentries, alloc_entries;
	uint32_t *slots; /* entry index + 1; 0 = empty */
	size_t mask;
	struct hp_sym *frames;
	size_t nframes, alloc_frames;
	uint8_t *used;         /* per symcap module: a frame falls in it */
	struct hp_buf symrec;  /* the SYMBOLS record of image 0 of a built capture */
	size_t symrec_entries; /* nentries when symrec was encoded; (size_t)-1: none */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

void hp_live_snap_free(struct hp_live_snap *s)
{
	free(s->frame);
	free(s->ts);
	memset(s, 0, sizeof *s);
}

int hp_live_new(struct hp_live **out, const char *path, pid_t pid, int sig, const int *stop)
{
	struct hp_live *l = calloc(1, sizeof *l);

	if (!l || !(l->path = strdup(path))) {
		free(l);
		return -ENOMEM;
	}
	l->fd = -1;
	l->pid = pid;
	l->sig = sig;
	l->stop = stop;
	l->want = FIRST_CHUNK;
	l->meta.grow = hp_buf_grow_heap;
	l->symrec.grow = hp_buf_grow_heap;
	l->symrec_entries = (size_t)-1;
	/* The pidfd names this process, not its number: a signal can never
	 * reach another process that got the pid after it ended. */
#ifdef SYS_pidfd_open
	l->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	l->pidfd = -1;
#endif
	*out = l;
	return 0;
}

static void reset_symbols(struct hp_live *l)
{
	hp_symbolizer_free(l->sym);
	l->sym = NULL;
	if (l->have_symcap)
		hp_capture_free(&l->symcap);
	l->have_symcap = 0;
	free(l->entries);
	free(l->slots);
	free(l->frames);
	free(l->used);
	l->entries = NULL;
	l->slots = NULL;
	l->frames = NULL;
	l->used = NULL;
	l->nentries = l->alloc_entries = l->nframes = l->alloc_frames = 0;
	l->mask = 0;
	l->sym_meta_len = 0;
	l->symrec.len = 0;
	l->symrec_entries = (size_t)-1;
}

void hp_live_free(struct hp_live *l)
{
	if (!l)
		return;
	reset_symbols(l);
	if (l->fd >= 0)
		close(l->fd);
	if (l->pidfd >= 0)
		close(l->pidfd);
	free(l->chunk);
	free(l->meta.data);
	free(l->symrec.data);
	free(l->snap);
	free(l->ts);
	free(l->path);
	free(l);
}

/* --- reading the file ---------------------------------------------------- */

static int keep(uint8_t **dst, size_t *dlen, const uint8_t *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, src, len);
	free(*dst);
	*dst = p;
	*dlen = len;
	return 0;
}

/* Takes one intact record: raw[0..len) is its frame and payload, ending at
 * file offset end. Images are counted as capture.c counts them: a META
 * starts a new one unless the current one has neither a META nor a
 * record. Returns 0 or -ENOMEM. */
static int take(struct hp_live *l, unsigned type, const uint8_t *raw, size_t len, uint64_t end)
{
	if (type == HP_REC_SYMBOLS)
		return 0; /* an analyzer's, after the run: not the image's */
	if (!l->nimages || (type == HP_REC_META && (l->image_has_meta || l->image_records))) {
		l->image = l->nimages++;
		l->image_has_meta = 0;
		l->image_records = 0;
		l->meta.len = 0;
		l->meta.err = 0;
		hp_buf_put_bytes(&l->meta, l->prefix, l->prefix_len);
		free(l->snap);
		free(l->ts);
		l->snap = l->ts = NULL;
		l->snap_len = l->ts_len = 0;
	}
	l->image_records++;
	switch (type) {
	case HP_REC_META:
		l->image_has_meta = 1;
		/* fall through */
	case HP_REC_MODULES:
	case HP_REC_STACKS: hp_buf_put_bytes(&l->meta, raw, len); return l->meta.err;
	case HP_REC_SNAPSHOT:
		l->nsnaps++;
		l->snap_end = end;
		return keep(&l->snap, &l->snap_len, raw, len);
	case HP_REC_TIMESERIES: return keep(&l->ts, &l->ts_len, raw, len);
	default: return 0; /* a later minor version's: not needed */
	}
}

/* Reads the records appended since the last call. Returns 0 (nothing new
 * is not an error), -ENOENT when the capture does not exist yet, or
 * -errno. */
static int poll_file(struct hp_live *l)
{
	struct stat st;

	if (l->fd < 0) {
		/* O_NOFOLLOW is not used: the path may be /proc/PID/fd/N, the
		 * recorder's own descriptor (serve.c). */
		l->fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (l->fd < 0)
			return -errno == -ENOENT ? -ENOENT : -errno;
		if (fstat(l->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(l->fd);
			l->fd = -1;
			return -EINVAL;
		}
	}
	if (!l->prefix_len) {
		uint8_t h[HP_FORMAT_FILE_HEADER_BYTES];
		struct hp_reader r;
		size_t hsize;
		if (pread(l->fd, h, sizeof h, 0) != (ssize_t)sizeof h)
			return 0; /* not written yet */
		if (hp_reader_open(&r, h, sizeof h) < 0)
			return -EINVAL;
		hp_reader_close(&r);
		hsize = (size_t)get_le(h + 12, 4);
		if (hsize > MAX_HEADER_BYTES || pread(l->fd, l->prefix, hsize, 0) != (ssize_t)hsize)
			return -EINVAL;
		l->prefix_len = hsize;
		l->pos = hsize;
	}
	for (;;) {
		struct hp_reader r;
		struct hp_record rec;
		size_t want, got, consumed;
		ssize_t n;
		int st_, ret = 0;

		if (fstat(l->fd, &st) < 0)
			return -errno;
		if ((uint64_t)st.st_size <= l->pos)
			return 0;
		want = (uint64_t)st.st_size - l->pos < l->want ? (size_t)(st.st_size - l->pos)
							       : l->want;
		if (l->chunk_cap < l->prefix_len + want) {
			uint8_t *p = realloc(l->chunk, l->prefix_len + want);
			if (!p)
				return -ENOMEM;
			l->chunk = p;
			l->chunk_cap = l->prefix_len + want;
		}
		memcpy(l->chunk, l->prefix, l->prefix_len);
		n = pread(l->fd, l->chunk + l->prefix_len, want, (off_t)l->pos);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		got = (size_t)n;
		if (hp_reader_open(&r, l->chunk, l->prefix_len + got) < 0)
			return -EINVAL;
		consumed = l->prefix_len;
		while ((st_ = hp_reader_next(&r, &rec)) != HP_READ_END && !ret) {
			if (st_ == HP_READ_DAMAGED) {
				if (r.ended)
					break; /* cut at the end: a record being written */
				continue;      /* skipped once an intact record follows */
			}
			ret = take(l, rec.type, l->chunk + rec.offset, r.pos - rec.offset,
				   l->pos + (r.pos - l->prefix_len));
			consumed = r.pos;
		}
		hp_reader_close(&r);
		if (ret)
			return ret;
		l->pos += consumed - l->prefix_len;
		if (consumed == l->prefix_len) {
			/* A record larger than the chunk: read more at once. */
			if (got == want && want == l->want &&
			    (uint64_t)st.st_size - l->pos > want && l->want < (1u << 31)) {
				l->want *= 2;
				continue;
			}
			return 0;
		}
	}
}

/* --- asking for a snapshot ------------------------------------------------ */

/* Whether the program catches sig now (its recorder's handler is in
 * place), from /proc/PID/status; -ESRCH when it is gone or a zombie. */
static int catches(struct hp_live *l)
{
	char path[64], buf[4096], *p;
	unsigned long long mask = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/status", (int)l->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	p = strstr(buf, "\nState:\t"); /* "State:\tZ (zombie)" */
	if (p && (p[8] == 'Z' || p[8] == 'X'))
		return -ESRCH;
	p = strstr(buf, "\nSigCgt:");
	if (!p || sscanf(p + 8, "%llx", &mask) != 1)
		return 0;
	return (mask >> (l->sig - 1)) & 1;
}

/* Sends the dump signal if the program catches it. Returns 1 when sent,
 * 0 when not now, -ESRCH when the program is gone. */
static int ask(struct hp_live *l)
{
	int c = catches(l);

	if (c <= 0)
		return c;
#ifdef SYS_pidfd_send_signal
	if (l->pidfd >= 0) {
		if (syscall(SYS_pidfd_send_signal, l->pidfd, l->sig, NULL, 0) < 0)
			return errno == ESRCH ? -ESRCH : 0;
		return 1;
	}
#endif
	return kill(l->pid, l->sig) < 0 ? (errno == ESRCH ? -ESRCH : 0) : 1;
}

int hp_live_snapshot(struct hp_live *l, uint64_t deadline_ns, struct hp_live_snap *out, char *err,
		     size_t errlen)
{
	uint64_t start, next = 0, asked = 0;
	int ret, sent = 0;

	memset(out, 0, sizeof *out);
	ret = poll_file(l);
	if (ret && ret != -ENOENT) {
		snprintf(err, errlen, "%s: %s", l->path, strerror(-ret));
		return ret;
	}
	start = l->nsnaps;
	for (;;) {
		uint64_t now = now_ns();
		struct timespec pause = {0, 5 * 1000000};
		if (now >= next) {
			ret = ask(l);
			if (ret == -ESRCH) {
				snprintf(err, errlen, "process %d is gone", (int)l->pid);
				return -ESRCH;
			}
			if (ret == 1 && !sent)
				asked = now;
			sent |= ret == 1;
			next = now + HP_LIVE_RESEND_MS * 1000000ull;
		}
		nanosleep(&pause, NULL);
		ret = poll_file(l);
		if (ret && ret != -ENOENT) {
			snprintf(err, errlen, "%s: %s", l->path, strerror(-ret));
			return ret;
		}
		if (sent && l->nsnaps > start && l->snap)
			break;
		if (l->stop && __atomic_load_n(l->stop, __ATOMIC_ACQUIRE)) {
			snprintf(err, errlen, "the server is stopping");
			return -ECANCELED;
		}
		if (now_ns() >= deadline_ns) {
			if (l->fd < 0) {
				snprintf(err, errlen, "%s: no capture yet", l->path);
				return -ENOENT;
			}
			snprintf(err, errlen, "no snapshot from process %d%s", (int)l->pid,
				 sent ? " in time" : ": it does not catch the dump signal (yet)");
			return -ETIMEDOUT;
		}
	}
	out->frame = malloc(l->snap_len);
	out->ts = l->ts ? malloc(l->ts_len) : NULL;
	if (!out->frame || (l->ts && !out->ts)) {
		hp_live_snap_free(out);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(out->frame, l->snap, l->snap_len);
	out->len = l->snap_len;
	if (l->ts) {
		memcpy(out->ts, l->ts, l->ts_len);
		out->ts_len = l->ts_len;
	}
	out->image = l->image;
	out->end = l->snap_end;
	out->asked_ns = asked;
	return 0;
}

/* --- symbols --------------------------------------------------------------- */

static int entry_find(const struct hp_live *l, uint64_t addr)
{
	if (!l->mask)
		return -1;
	for (size_t i = hp_hash_u64(addr) & l->mask; l->slots[i]; i = (i + 1) & l->mask)
		if (l->entries[l->slots[i] - 1].address == addr)
			return (int)(l->slots[i] - 1);
	return -1;
}

static int grow(void **arr, size_t *alloc, size_t n, size_t elem)
{
	size_t cap;
	void *p;

	if (n <= *alloc)
		return 0;
	cap = *alloc ? *alloc : 256;
	while (cap < n)
		cap *= 2;
	p = realloc(*arr, cap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*alloc = cap;
	return 0;
}

/* Resolves addr once and keeps its frames. Returns 0 or -ENOMEM. */
static int resolve(struct hp_live *l, uint64_t addr)
{
	struct hp_sym syms[MAX_SYMS];
	const struct hp_cap_module *m;
	int mod, n;

	if (entry_find(l, addr) >= 0)
		return 0;
	if ((l->nentries + 1) * 2 > l->mask) { /* under half full */
		size_t slots = l->mask ? (l->mask + 1) * 2 : 1024;
		uint32_t *fresh = calloc(slots, sizeof *fresh);
		if (!fresh)
			return -ENOMEM;
		for (size_t k = 0; k < l->nentries; k++) {
			size_t i = hp_hash_u64(l->entries[k].address) & (slots - 1);
			while (fresh[i])
				i = (i + 1) & (slots - 1);
			fresh[i] = (uint32_t)k + 1;
		}
		free(l->slots);
		l->slots = fresh;
		l->mask = slots - 1;
	}
	m = hp_capture_module_of(&l->symcap, addr - 1);
	mod = m ? (int)(m - l->symcap.modules) : -1;
	n = hp_symbolizer_lookup(l->sym, mod, addr, syms, MAX_SYMS);
	if (grow((void **)&l->entries, &l->alloc_entries, l->nentries + 1, sizeof *l->entries) ||
	    grow((void **)&l->frames, &l->alloc_frames, l->nframes + (size_t)n, sizeof *l->frames))
		return -ENOMEM;
	if (mod >= 0)
		l->used[mod] = 1;
	memcpy(l->frames + l->nframes, syms, (size_t)n * sizeof *syms);
	l->entries[l->nentries] = (struct entry){addr, (uint32_t)l->nframes, (uint32_t)n};
	l->nframes += (size_t)n;
	{
		size_t i = hp_hash_u64(addr) & l->mask;
		while (l->slots[i])
			i = (i + 1) & l->mask;
		l->slots[i] = (uint32_t)++l->nentries;
	}
	return 0;
}

/* Makes the cache cover every frame of the image's stacks. A changed
 * module list (a load, an unload) or a new image starts it again: the
 * symbolizer reads the modules of the capture it was made on. Returns 0
 * or -errno with err set. */
static int cover(struct hp_live *l, char *err, size_t errlen)
{
	struct hp_capture cap;
	int ret, fresh;

	if (l->have_symcap && l->sym_image == l->image && l->sym_meta_len == l->meta.len)
		return 0;
	ret = hp_capture_load_mem(l->meta.data, l->meta.len, &cap, err, errlen);
	if (ret)
		return ret;
	fresh = !l->have_symcap || l->sym_image != l->image || cap.nmodules != l->symcap.nmodules;
	for (size_t i = 0; !fresh && i < cap.nmodules; i++)
		fresh = cap.modules[i].unloaded != l->symcap.modules[i].unloaded;
	if (fresh) {
		reset_symbols(l);
		l->symcap = cap;
		l->have_symcap = 1;
		l->sym_image = l->image;
		l->used = calloc(cap.nmodules ? cap.nmodules : 1, 1);
		ret = l->used ? hp_symbolizer_new(&l->sym, &l->symcap, NULL, 0) : -ENOMEM;
	}
	for (size_t s = 1; !ret && s < cap.nstacks; s++)
		for (uint32_t f = 0; !ret && f < cap.stacks[s].depth; f++)
			ret = resolve(l, cap.stacks[s].frames[f]);
	if (!fresh)
		hp_capture_free(&cap);
	if (ret) {
		reset_symbols(l);
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	l->sym_meta_len = l->meta.len;
	return 0;
}

/* A string table for the SYMBOLS record: distinct strings, "" first. */
struct strtab {
	const char **list;
	size_t n, alloc;
	uint32_t *slots;
	size_t mask;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return hp_hash_u64(h);
}

static int str_index(struct strtab *t, const char *s, uint64_t *out)
{
	size_t i;

	if ((t->n + 1) * 2 > t->mask) {
		size_t slots = t->mask ? (t->mask + 1) * 2 : 1024;
		uint32_t *fresh = calloc(slots, sizeof *fresh);
		if (!fresh)
			return -ENOMEM;
		for (size_t k = 0; k < t->n; k++) {
			for (i = hash_str(t->list[k]) & (slots - 1); fresh[i];
			     i = (i + 1) & (slots - 1))
				;
			fresh[i] = (uint32_t)k + 1;
		}
		free(t->slots);
		t->slots = fresh;
		t->mask = slots - 1;
	}
	for (i = hash_str(s) & t->mask; t->slots[i]; i = (i + 1) & t->mask) {
		if (strcmp(t->list[t->slots[i] - 1], s) == 0) {
			*out = t->slots[i] - 1;
			return 0;
		}
	}
	if (grow((void **)&t->list, &t->alloc, t->n + 1, sizeof *t->list))
		return -ENOMEM;
	t->list[t->n] = s;
	t->slots[i] = (uint32_t)++t->n;
	*out = t->n - 1;
	return 0;
}

/* Appends to out a SYMBOLS record (format.h) of the cache, for image.
 * Returns 0 or -ENOMEM. */
static int encode_symbols(struct hp_live *l, size_t image, struct hp_buf *out)
{
	struct strtab t = {0};
	struct hp_buf body = {.grow = hp_buf_grow_heap};
	uint64_t *fn = malloc((l->nframes + 1) * sizeof *fn);
	uint64_t *file = malloc((l->nframes + 1) * sizeof *file), idx;
	int ret = fn && file ? str_index(&t, "", &idx) : -ENOMEM;

	for (size_t k = 0; !ret && k < l->nframes; k++) {
		ret = str_index(&t, l->frames[k].function, &fn[k]);
		if (!ret)
			ret = str_index(&t, l->frames[k].file, &file[k]);
	}
	if (ret)
		goto out;
	hp_buf_put_u(&body, t.n);
	for (size_t i = 0; i < t.n; i++)
		hp_buf_put_str(&body, t.list[i]);
	hp_buf_put_u(&body, l->symcap.nmodules);
	for (size_t i = 0; i < l->symcap.nmodules; i++) {
		enum hp_module_status st =
			l->used[i] ? hp_symbolizer_status(l->sym, (int)i) : HP_MODSYM_MISSING;
		hp_buf_put_u(&body, st == HP_MODSYM_OK         ? HP_SYMSTATUS_OK
				    : st == HP_MODSYM_MISMATCH ? HP_SYMSTATUS_MISMATCH
							       : HP_SYMSTATUS_MISSING);
	}
	hp_buf_put_u(&body, l->nentries);
	for (size_t e = 0; e < l->nentries; e++) {
		const struct entry *en = &l->entries[e];
		hp_buf_put_u(&body, en->address);
		hp_buf_put_u(&body, en->count);
		for (uint32_t k = en->first; k < en->first + en->count; k++) {
			hp_buf_put_u(&body, fn[k]);
			hp_buf_put_u(&body, file[k]);
			hp_buf_put_u(&body, l->frames[k].line);
			hp_buf_put_u(&body, l->frames[k].inlined ? 1 : 0);
		}
	}
	hp_buf_put_u(&body, image);
	ret = body.err ? body.err
		       : hp_format_put_record(out, HP_REC_SYMBOLS, body.data, body.len, NULL);
out:
	free(body.data);
	free(fn);
	free(file);
	free(t.list);
	free(t.slots);
	return ret ? -ENOMEM : 0;
}

/* --- models ------------------------------------------------------------------ */

static uint64_t key_hash(const struct hp_rec_bucket *b)
{
	return hp_hash_u64(((uint64_t)b->stack_id << 32 ^ b->type_tag) ^
			   hp_hash_u64((uint64_t)b->context_tag << 40 ^ b->size));
}

static int same_key(const struct hp_rec_bucket *a, const struct hp_rec_bucket *b)
{
	return a->stack_id == b->stack_id && a->type_tag == b->type_tag &&
	       a->context_tag == b->context_tag && a->size == b->size;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* counters only grow; a damaged pair gives 0, not 2^64 */
}

/* Turns snapshot new into new - base, bucket by bucket (same stack, tags
 * and size): what was allocated, freed and temporary between the two.
 * Returns 0 or -ENOMEM. */
static int delta(struct hp_cap_snapshot *new, const struct hp_cap_snapshot *base)
{
	size_t slots = 16, mask;
	uint32_t *idx;

	while (slots < base->nbuckets * 2 + 2)
		slots *= 2;
	mask = slots - 1;
	idx = calloc(slots, sizeof *idx);
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < base->nbuckets; i++) {
		size_t h = key_hash(&base->buckets[i]) & mask;
		while (idx[h])
			h = (h + 1) & mask;
		idx[h] = (uint32_t)i + 1;
	}
	for (size_t i = 0; i < new->nbuckets; i++) {
		struct hp_rec_bucket *b = &new->buckets[i];
		const struct hp_rec_bucket *o = NULL;
		for (size_t h = key_hash(b) & mask; idx[h] && !o; h = (h + 1) & mask)
			if (same_key(&base->buckets[idx[h] - 1], b))
				o = &base->buckets[idx[h] - 1];
		if (o) {
			b->alloc_count = minus(b->alloc_count, o->alloc_count);
			b->alloc_bytes = minus(b->alloc_bytes, o->alloc_bytes);
			b->free_count = minus(b->free_count, o->free_count);
			b->free_bytes = minus(b->free_bytes, o->free_bytes);
			b->temp_count = minus(b->temp_count, o->temp_count);
			b->temp_bytes = minus(b->temp_bytes, o->temp_bytes);
		}
		b->peak_count = b->peak_bytes = 0;
	}
	new->alloc_count = minus(new->alloc_count, base->alloc_count);
	new->alloc_bytes = minus(new->alloc_bytes, base->alloc_bytes);
	new->free_count = minus(new->free_count, base->free_count);
	new->free_bytes = minus(new->free_bytes, base->free_bytes);
	free(idx);
	return 0;
}

int hp_live_build(struct hp_live *l, const struct hp_live_snap *base,
		  const struct hp_live_snap *snap, struct hp_capture *cap, struct hp_model *model,
		  char *err, size_t errlen)
{
	struct hp_buf buf = {.grow = hp_buf_grow_heap};
	int ret;

	if (snap->image != l->image || (base && base->image != l->image)) {
		snprintf(err, errlen, "the program exec'd: its snapshot is of an earlier image");
		return -ESTALE;
	}
	ret = cover(l, err, errlen);
	if (ret)
		return ret;
	if (l->symrec_entries != l->nentries) {
		l->symrec.len = 0;
		l->symrec.err = 0;
		if (encode_symbols(l, 0, &l->symrec)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		l->symrec_entries = l->nentries;
	}
	hp_buf_put_bytes(&buf, l->meta.data, l->meta.len);
	if (base)
		hp_buf_put_bytes(&buf, base->frame, base->len);
	if (snap->ts)
		hp_buf_put_bytes(&buf, snap->ts, snap->ts_len);
	hp_buf_put_bytes(&buf, snap->frame, snap->len);
	hp_buf_put_bytes(&buf, l->symrec.data, l->symrec.len);
	if (buf.err) {
		free(buf.data);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = hp_capture_load_mem(buf.data, buf.len, cap, err, errlen);
	free(buf.data);
	if (ret)
		return ret;
	if (base && cap->nimages == 1 && cap->images[0].nsnapshots == 2) {
		ret = delta(&cap->images[0].snapshots[1], &cap->images[0].snapshots[0]);
		if (ret) {
			hp_capture_free(cap);
			snprintf(err, errlen, "out of memory");
			return ret;
		}
	}
	ret = hp_model_build(model, cap, NULL, err, errlen);
	if (ret)
		hp_capture_free(cap);
	return ret;
}

int hp_live_symbols(struct hp_live *l, const struct hp_live_snap *snap, uint8_t **data, size_t *len)
{
	struct hp_buf rec = {.grow = hp_buf_grow_heap};

	*data = NULL;
	*len = 0;
	if (l->fd < 0 || !l->have_symcap || snap->image != l->sym_image)
		return -ESTALE;
	if (encode_symbols(l, snap->image, &rec)) {
		free(rec.data);
		return -ENOMEM;
	}
	*data = rec.data;
	*len = rec.len;
	return 0;
}

int hp_live_read(struct hp_live *l, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	do
		r = pread(l->fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : (int)r;
}
