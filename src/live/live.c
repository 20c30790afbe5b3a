/*
 * live.c - following a running program's capture (see live.h).
 *
 * State: the file's descriptor and the offset read up to (pos: every
 * record before it has been seen, whole); the image being followed
 * (image, counted as capture.c counts them) with its META, MODULES and
 * STACKS frames in meta (after the file header); the last SNAPSHOT and
 * TIMESERIES frames; and the symbol cache: a symbolizer on symcap (a
 * capture of the image's records, whose module list the symbolizer reads)
 * and every address it resolved, with its frames (a location each, found
 * by address through index), which the SYMBOLS record of a built capture
 * is encoded from (embed.h's encoder, the one `heapprof run` uses); under
 * the symbolizer, the user's persistent symbol cache (symcache.h), written
 * after each pass that read binaries. All of it is guarded by the
 * server's lock (live.h: not thread-safe).
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

#include "../analyzer/embed.h"
#include "../analyzer/symbols/symbolize.h"
#include "../analyzer/symbols/symcache.h"
#include "../common/hash.h"
#include "../common/table.h"
#include "../common/vec.h"
#include "../format/decode.h"
#include "../format/encode.h"
#include "../format/format.h"

#define MAX_SYMS 64            /* inlined frames at one address */
#define FIRST_CHUNK (4u << 20) /* bytes read from the file at once, doubled for a larger record */
#define MAX_HEADER_BYTES 4096  /* a file header that claims more is not followed */

struct hp_live {
	char *path;
	int fd; /* -1 until the capture exists */
	pid_t pid;
	int pidfd; /* -1 where the kernel has no pidfd: kill() then */
	int sig;
	const struct hp_live_asker *asker; /* NULL: the signal */
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
	struct hp_symcache *symcache; /* the user's symbol cache, for every symbolizer */
	struct hp_location *locs; /* every address resolved, in order of first sight */
	size_t nlocs, locs_cap;
	struct hp_u64map index; /* address -> its index in locs */
	struct hp_buf symrec;   /* the SYMBOLS record of image 0 of a built capture */
	size_t symrec_locs;     /* nlocs when symrec was encoded; (size_t)-1: none */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hp_live_snap_free(struct hp_live_snap *s)
{
	free(s->frame);
	free(s->ts);
	memset(s, 0, sizeof *s);
}

int hp_live_snap_copy(struct hp_live_snap *dst, const struct hp_live_snap *src)
{
	*dst = *src;
	dst->frame = malloc(src->len ? src->len : 1);
	dst->ts = src->ts ? malloc(src->ts_len ? src->ts_len : 1) : NULL;
	if (!dst->frame || (src->ts && !dst->ts)) {
		hp_live_snap_free(dst);
		return -ENOMEM;
	}
	memcpy(dst->frame, src->frame, src->len);
	if (src->ts)
		memcpy(dst->ts, src->ts, src->ts_len);
	return 0;
}

int hp_live_new(struct hp_live **out, const char *path, pid_t pid, int sig,
		const struct hp_live_asker *asker, const int *stop)
{
	struct hp_live *l = calloc(1, sizeof *l);

	if (!l || !(l->path = strdup(path))) {
		free(l);
		return -ENOMEM;
	}
	l->fd = -1;
	l->pid = pid;
	l->sig = sig;
	l->asker = asker;
	l->stop = stop;
	l->want = FIRST_CHUNK;
	l->meta.grow = hp_buf_grow_heap;
	l->symrec.grow = hp_buf_grow_heap;
	l->symrec_locs = (size_t)-1;
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
	for (size_t i = 0; i < l->nlocs; i++)
		free(l->locs[i].syms);
	free(l->locs);
	l->locs = NULL;
	l->nlocs = l->locs_cap = 0;
	hp_u64map_free(&l->index);
	l->sym_meta_len = 0;
	l->symrec.len = 0;
	l->symrec_locs = (size_t)-1;
}

void hp_live_free(struct hp_live *l)
{
	if (!l)
		return;
	reset_symbols(l);
	hp_symcache_close(l->symcache);
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
		hsize = r.pos; /* the header's size field, checked */
		hp_reader_close(&r);
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

/* Sends the dump signal if the program catches it, or asks through the
 * asker. Returns 1 when sent, 0 when not now, -ESRCH when the program is
 * gone, or the asker's -errno with why set. */
static int ask(struct hp_live *l, char *why, size_t whylen)
{
	int c;

	if (l->asker)
		return l->asker->ask(l->asker->ctx, why, whylen);
	c = catches(l);

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
			ret = ask(l, err, errlen);
			if (ret == -ESRCH) {
				snprintf(err, errlen, "process %d is gone", (int)l->pid);
				return -ESRCH;
			}
			if (ret < 0)
				return ret; /* err says why */
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
	ret = hp_live_snap_copy(out, &(struct hp_live_snap){l->snap, l->snap_len, l->ts, l->ts_len,
							    l->image, l->snap_end, asked});
	if (ret)
		snprintf(err, errlen, "out of memory");
	return ret;
}

/* --- symbols --------------------------------------------------------------- */

/* Resolves addr once and keeps its frames. Returns 0 or -ENOMEM. */
static int resolve(struct hp_live *l, uint64_t addr)
{
	struct hp_sym syms[MAX_SYMS];
	const struct hp_cap_module *m;
	struct hp_location *loc;
	uint32_t known;
	int n;

	if (hp_u64map_get(&l->index, addr, &known))
		return 0;
	if (l->nlocs >= HP_HINDEX_NONE || hp_vec_grow(&l->locs, &l->locs_cap, l->nlocs + 1))
		return -ENOMEM;
	m = hp_capture_module_of(&l->symcap, addr - 1);
	loc = &l->locs[l->nlocs];
	*loc = (struct hp_location){.address = addr,
				    .module = m ? (int)(m - l->symcap.modules) : -1,
				    .module_offset = m ? addr - m->bias : addr};
	if (hp_symbolizer_lookup(l->sym, loc->module, addr, syms, MAX_SYMS, &n))
		return -ENOMEM;
	loc->syms = malloc((size_t)n * sizeof *syms);
	if (!loc->syms)
		return -ENOMEM;
	memcpy(loc->syms, syms, (size_t)n * sizeof *syms);
	loc->nsyms = (uint32_t)n;
	if (hp_u64map_put(&l->index, addr, (uint32_t)l->nlocs)) {
		free(loc->syms);
		return -ENOMEM;
	}
	l->nlocs++;
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
		ret = hp_symbolizer_new(&l->sym, &l->symcap, NULL, 0);
		/* No cache (short of memory) only means reading the binaries. */
		if (!ret && (l->symcache || hp_symcache_open(&l->symcache, 0) == 0))
			hp_symbolizer_set_cache(l->sym, l->symcache);
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
	hp_symcache_flush(l->symcache); /* what this pass read from the binaries */
	l->sym_meta_len = l->meta.len;
	return 0;
}

/* Appends to out a SYMBOLS record (format.h) of the cache, for image: a
 * module no frame falls in is said to be missing, as the record of
 * `heapprof run` says of a module it did not open. Returns 0 or -ENOMEM. */
static int encode_symbols(struct hp_live *l, size_t image, struct hp_buf *out)
{
	size_t nmodules = l->symcap.nmodules;
	enum hp_module_status *status = malloc((nmodules + 1) * sizeof *status);
	int ret;

	if (!status)
		return -ENOMEM;
	for (size_t i = 0; i < nmodules; i++)
		status[i] = HP_MODSYM_MISSING;
	for (size_t k = 0; k < l->nlocs; k++)
		if (l->locs[k].module >= 0)
			status[l->locs[k].module] = hp_symbolizer_status(l->sym, l->locs[k].module);
	ret = hp_embed_encode(out, status, nmodules, l->locs, l->nlocs, image, NULL);
	free(status);
	return ret;
}

/* --- models ------------------------------------------------------------------ */

static uint64_t key_hash(const struct hp_rec_bucket *b)
{
	return hp_hash_u64(((uint64_t)b->stack_id << 32 ^ b->type_tag) ^
			   hp_hash_u64((uint64_t)b->origin_tag << 40 ^ b->size));
}

static int same_key(const struct hp_rec_bucket *a, const struct hp_rec_bucket *b)
{
	return a->stack_id == b->stack_id && a->type_tag == b->type_tag &&
	       a->origin_tag == b->origin_tag && a->size == b->size;
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
	struct hp_hindex idx = {0};

	for (size_t i = 0; i < base->nbuckets; i++) {
		if (hp_hindex_add(&idx, key_hash(&base->buckets[i]), (uint32_t)i)) {
			hp_hindex_free(&idx);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < new->nbuckets; i++) {
		struct hp_rec_bucket *b = &new->buckets[i];
		const struct hp_rec_bucket *o = NULL;
		struct hp_hindex_probe it;
		uint32_t k;
		hp_hindex_probe(&idx, key_hash(b), &it);
		while (!o && (k = hp_hindex_next(&idx, &it)) != HP_HINDEX_NONE)
			if (same_key(&base->buckets[k], b))
				o = &base->buckets[k];
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
	hp_hindex_free(&idx);
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
	if (l->symrec_locs != l->nlocs) {
		l->symrec.len = 0;
		l->symrec.err = 0;
		if (encode_symbols(l, 0, &l->symrec)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		l->symrec_locs = l->nlocs;
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
