/*
 * writer.c - the capture file (see writer.h).
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_initStaticCCtx: a workspace mapped at open */
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../common/fmt.h"
#include "../common/version.h"
#include "../format/records.h"
#include "aggregate.h"
#include "attr.h"
#include "events.h"
#include "live.h"
#include "log.h"
#include "maps.h"
#include "modules.h"
#include "os.h"
#include "spin.h"
#include "stacks.h"
#include "tags.h"

#define SAMPLES_PER_RECORD 100 /* a second at the default 10 ms */
/* Ticks gathered into one TIMELINE record: a second at the default
 * 100 ms, or fewer when their entries pass TICKS_RECORD_BYTES. */
#define TICKS_PER_RECORD 10
#define TICKS_RECORD_BYTES (256u << 10)

/* Everything below is guarded by lock. owner is also read without it: it
 * is written only at open, in the process it names. */
static struct hp_spin lock;
static int fd = -1;
static struct hp_os_file_id fd_id; /* what fd referred to when we opened it */
static pid_t owner;                /* the process whose capture this is */
static char path[HP_CONFIG_PATH_MAX + 32];
/* Room for the executable's path and the command line in put_meta and
 * default_name: static, not on the stack, whose caller may have little. */
static char scratch[HP_CONFIG_PATH_MAX + 8192];
static uint32_t snapshot_seq;
static uint32_t stacks_written = 1; /* ids below this are in the file */
static uint32_t module_events_written;
/* The tags the file has, and those of the TAGS record being written. */
static struct hp_tags_mark tags_written, tags_pending;
static struct hp_rec_sample samples[SAMPLES_PER_RECORD];
static unsigned nsamples;
static void take_owed(uint64_t now_ns);
static struct hp_buf payload, out, buckets_buf;
/* The per-site timeline: the ticks not yet written (ticks_buf, nticks of
 * them, times as deltas from tick_prev_ns), the tags of every site in
 * ticks_buf, in their order
 * (site_tags_buf, nsites of them: the record's tail since minor 5), and
 * whether the next tick lists every bucket (the first of a forked child,
 * whose buckets' marks are its parent's). */
static struct hp_buf ticks_buf, site_tags_buf;
static uint64_t nsites;
/* The histograms of the buckets of the snapshot being written, in their
 * order (collect_buckets). */
static struct hp_buf hists_buf;
/* The live blocks of the snapshot being written (--live-blocks). */
static struct hp_buf blocks_buf;
static uint64_t nblocks;
static unsigned nticks;
static uint64_t tick_prev_ns;
static int tick_all;
static uint64_t file_bytes; /* written whole so far: records end here */
/* Set, under the lock, by the first record that would have crossed the
 * file size limit (ulimit -f): nothing more is written (a write past it
 * would raise SIGXFSZ in the program, which kills by default). */
static int at_size_limit;
static ZSTD_CCtx *cctx;
/* The file still to be created (NULL once tried); the configuration, for
 * the META record and the start time (set at open). */
static const struct hp_config *file_config, *config;
static enum hp_role file_role;

/* The writer's buffers are mapped at open at these sizes, so that a
 * snapshot can still be written when the program has used up its address
 * space (RLIMIT_AS): growing a buffer then would fail and lose the
 * snapshot. Stacks go in records of at most this size, and a snapshot's
 * buckets, histograms and ticks past it in pieces, so the payload needs
 * no more (a python3 start-up writes 310 KB of new stacks, two records,
 * and 29 KB of buckets); each record filled touches it all, so its size
 * is recorder memory: 256 KiB rather than 1 MiB keeps 1.5 MiB less for
 * stack records 6% larger (cmake's configure: 37,001 stacks, 5.0 MB
 * encoded, 298 KB compressed in 1 MiB records, 316 KB in 256 KiB). out holds
 * a compressed (or stored) payload: its zstd bound (+1/256) and the
 * record frame. Mapped with MAP_NORESERVE, they cost no memory until
 * written. */
#define PAYLOAD_INITIAL_BYTES (256u << 10)
#define OUT_INITIAL_BYTES (PAYLOAD_INITIAL_BYTES + (16u << 10))
#define BUCKETS_INITIAL_BYTES (256u << 10)
#define TICKS_INITIAL_BYTES (64u << 10) /* ticks_buf */
#define TICK_HEAD_MAX_BYTES 20 /* a tick's time delta and count, two varints */
#define SITE_TAGS_INITIAL_BYTES (16u << 10) /* two bytes a site, mostly */
/* A STACKS record's payload at most, its header's room included: the
 * payload buffer as mapped at open, which a stack's largest encoding
 * (HP_CONFIG_MAX_DEPTH_LIMIT frames, 2.5 KB) always fits (about 2,000 new stacks of depth 36 a record;
 * hp_writer_snapshot writes as many records as it needs). */
#define STACKS_RECORD_BYTES ((size_t)PAYLOAD_INITIAL_BYTES)
#define STACKS_HEAD_MAX_BYTES 20 /* first_id and count, two varints */
/* A snapshot's buckets, histograms and ticks past this are written from
 * their buffers in pieces (emit_parts), not copied into the payload. */
#define STREAM_MIN_BYTES ((size_t)PAYLOAD_INITIAL_BYTES)

/* Grows an hp_buf with mmap: map the new size, copy, unmap the old. An
 * empty buffer gets what it needs (at least 64 KiB), a full one doubles. */
static int grow_mapped(struct hp_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : (need > 1u << 16 ? need : 1u << 16);
	uint8_t *p;

	while (cap < need)
		cap *= 2;
	p = hp_os_map(cap);
	if (!p)
		return -ENOMEM;
	if (b->len)
		memcpy(p, b->data, b->len);
	hp_os_unmap(b->data, b->cap);
	b->data = p;
	b->cap = cap;
	return 0;
}

/* Maps the buffers at their initial sizes (see above); one that cannot be
 * mapped now is mapped when first used (grow_mapped). */
static void reserve_buffers(void)
{
	if (!payload.cap)
		grow_mapped(&payload, PAYLOAD_INITIAL_BYTES);
	if (!out.cap)
		grow_mapped(&out, OUT_INITIAL_BYTES);
	if (!buckets_buf.cap)
		grow_mapped(&buckets_buf, BUCKETS_INITIAL_BYTES);
	if (config && config->timeline_ms && !ticks_buf.cap)
		grow_mapped(&ticks_buf, TICKS_INITIAL_BYTES);
	if (config && config->timeline_ms && !site_tags_buf.cap)
		grow_mapped(&site_tags_buf, SITE_TAGS_INITIAL_BYTES);
}

/* A zstd context in a workspace mapped once, at the size compression level
 * 1 (hp_format_put_record's) needs for an input of any size, streamed too
 * (emit_parts: 1.3 MiB with zstd 1.5.4, of which a one-shot record touches
 * the 569 KiB of the context alone): it never allocates afterwards, so
 * compressing cannot fail for want of address space. NULL when it cannot
 * be mapped: records are then stored uncompressed. */
static ZSTD_CCtx *new_cctx(void)
{
	size_t n = ZSTD_estimateCStreamSize(1);
	void *p = hp_os_map(n);
	return p ? ZSTD_initStaticCCtx(p, n) : NULL;
}

/* The default name: heapprof.<program>.<pid>.hpf in the working directory,
 * the program named as it was started (argv[0], not a symlink's target). */
static void default_name(char *buf, size_t cap, int suffix)
{
	const char *base;

	if (!hp_os_cmdline(scratch, sizeof scratch - 1))
		hp_os_exe_path(scratch, sizeof scratch);
	scratch[sizeof scratch - 1] = '\0';
	base = strrchr(scratch, '/');
	base = base ? base + 1 : scratch;
	if (!*base)
		base = "program";
	if (suffix)
		hp_fmt(buf, cap, "heapprof.%s.%d.%d.hpf", base, hp_os_getpid(), suffix);
	else
		hp_fmt(buf, cap, "heapprof.%s.%d.hpf", base, hp_os_getpid());
}

/* A child's name from the user's: "out.hpf" becomes "out.<pid>.hpf". */
static void child_name(char *buf, size_t cap, const char *named, int suffix)
{
	size_t len = strlen(named);
	char tail[32];

	if (suffix)
		hp_fmt(tail, sizeof tail, ".%d.%d", hp_os_getpid(), suffix);
	else
		hp_fmt(tail, sizeof tail, ".%d", hp_os_getpid());
	if (len > 4 && strcmp(named + len - 4, ".hpf") == 0)
		hp_fmt(buf, cap, "%s", named);
	else
		hp_fmt(buf, cap, "%s.hpf", named);
	len = strlen(buf) - 4;
	hp_fmt(buf + len, cap - len, "%s.hpf", tail);
}

/* Opens the capture as this process's role wants it. A root image after
 * an exec appends to the file its earlier image wrote (a new META starts
 * the new image, docs/format.md); *append says so. */
static int create_file(const struct hp_config *c, enum hp_role role, int *append)
{
	int f = -EEXIST;

	*append = 0;
	if (role == HP_ROLE_ROOT_EXEC && c->output[0]) {
		hp_fmt(path, sizeof path, "%s", c->output);
		f = hp_os_open_existing(path);
		if (f >= 0) {
			*append = 1;
			return f;
		}
	}
	if ((role == HP_ROLE_ROOT || role == HP_ROLE_ROOT_EXEC) && c->output[0]) {
		/* named by the user: replaced if there */
		hp_fmt(path, sizeof path, "%s", c->output);
		return hp_os_create(path, 0);
	}
	for (int suffix = 0; f == -EEXIST && suffix < 100; suffix++) {
		if (c->output[0])
			child_name(path, sizeof path, c->output, suffix);
		else
			default_name(path, sizeof path, suffix);
		f = hp_os_create(path, 1);
	}
	return f;
}

/* Whether fd still refers to the capture: the program may have closed it
 * (a daemon closing every descriptor), or put a file of its own at its
 * number (dup2, close then open). When it is no longer ours the number is
 * forgotten, never written to nor closed, and the capture reopened by
 * name, if it is still the same file. Under lock. Returns 0 or -errno.
 * (Between this check and the write the program could still take the
 * number: a window of a few instructions, which no check can close.) */
static int check_fd(void)
{
	static int said; /* one line per process */
	struct hp_os_file_id now;
	int f;

	if (fd < 0)
		return -EBADF;
	if (hp_os_file_id(fd, &now) == 0 && hp_os_same_file(&now, &fd_id))
		return 0;
	fd = -1;
	f = hp_os_open_existing(path);
	if (f >= 0 && (hp_os_file_id(f, &now) < 0 || !hp_os_same_file(&now, &fd_id))) {
		hp_os_close(f);
		f = -ESTALE;
	}
	if (f < 0) {
		if (!said++)
			hp_log("the program closed the capture's descriptor and %s cannot be "
			       "reopened (%s): nothing more is written",
			       path, hp_errname(-f));
		return f;
	}
	fd = hp_os_fd_high(f);
	return 0;
}

/* -EFBIG when n more bytes at the end of the capture would cross the file
 * size limit (and from then on), saying so once; else 0. Under lock. */
static int within_limit(size_t n)
{
	uint64_t limit;

	if (at_size_limit)
		return -EFBIG;
	limit = hp_os_file_size_limit();
	if (file_bytes <= limit && n <= limit - file_bytes)
		return 0;
	at_size_limit = 1;
	hp_log("%s reached the file size limit (ulimit -f: %llu bytes): nothing more is written "
	       "to it",
	       path, (unsigned long long)limit);
	return -EFBIG;
}

/* Writes the payload as a record of type, compressed unless stored. */
static int emit_as(unsigned type, int stored)
{
	int err;

	out.len = 0;
	if (payload.err)
		return payload.err;
	err = hp_format_put_record(&out, type, payload.data, payload.len, stored ? NULL : cctx);
	if (!err)
		err = check_fd();
	if (!err)
		err = within_limit(out.len);
	if (!err)
		err = hp_os_pwrite_all(fd, out.data, out.len, file_bytes);
	/* A record cut short (a full disk) is cut off again, so the next one
	 * starts where a reader expects a record. */
	if (err && err != out.err && fd >= 0)
		hp_os_truncate(fd, file_bytes);
	else if (!err)
		file_bytes += out.len;
	payload.len = 0;
	return err;
}

static int emit(unsigned type)
{
	return emit_as(type, 0);
}

/* A piece of a record's payload (emit_parts). */
struct part {
	const uint8_t *data;
	size_t len;
};

/* Writes part[0..n).len bytes at the file's offset *at, advancing it, and
 * their CRC into *crc. Under lock. Returns 0 or -errno. */
static int write_piece(const uint8_t *p, size_t len, uint64_t *at, uint32_t *crc)
{
	int err = within_limit(*at + len - file_bytes);

	if (!err)
		err = hp_os_pwrite_all(fd, p, len, *at);
	if (!err) {
		*crc = hp_format_crc(*crc, p, len);
		*at += len;
	}
	return err;
}

/* Writes a record of type whose payload is parts[0..n) in order, without
 * putting it together: compressed as one zstd frame (hp_format_put_record's
 * level, its content size declared) out's size at a time, each piece
 * written as it comes after room for the frame, and the frame last; stored
 * as the parts are when that is not smaller. For a snapshot's buckets,
 * histograms and ticks, which grow with the buckets (16 MiB each at a
 * million): they are not copied into the payload, and out keeps its size
 * at open. Under lock. Returns 0 or -errno; a record cut short is cut off
 * again, as emit_as does. */
static int emit_parts(unsigned type, const struct part *parts, int n)
{
	uint8_t frame[HP_FORMAT_FRAME_BYTES];
	uint64_t at = file_bytes + HP_FORMAT_FRAME_BYTES;
	size_t raw = 0;
	uint32_t crc = 0;
	unsigned flags = 0;
	int err = payload.err ? payload.err : check_fd();

	for (int i = 0; i < n; i++)
		raw += parts[i].len;
	if (!err && raw > HP_FORMAT_MAX_PAYLOAD_BYTES)
		err = -EFBIG;
	if (!err && !out.cap)
		err = grow_mapped(&out, OUT_INITIAL_BYTES);
	/* A static context starts with no content size flag: set it, so the
	 * frame declares its size, as the reader requires. */
	if (!err && cctx &&
	    !ZSTD_isError(ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)) &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1)) &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) &&
	    !ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, raw))) {
		flags = HP_FORMAT_FLAG_ZSTD;
		for (int i = 0; !err && flags && i < n; i++) {
			ZSTD_inBuffer in = {parts[i].data, parts[i].len, 0};
			ZSTD_EndDirective mode = i == n - 1 ? ZSTD_e_end : ZSTD_e_continue;
			size_t left;
			do {
				ZSTD_outBuffer o = {out.data, out.cap, 0};
				left = ZSTD_compressStream2(cctx, &o, &in, mode);
				if (ZSTD_isError(left) || at + o.pos - file_bytes - HP_FORMAT_FRAME_BYTES >= raw)
					flags = 0; /* no smaller: stored instead */
				else if (o.pos)
					err = write_piece(out.data, o.pos, &at, &crc);
			} while (!err && flags && (mode == ZSTD_e_end ? left != 0 : in.pos < in.size));
		}
	}
	if (!err && !flags) {
		at = file_bytes + HP_FORMAT_FRAME_BYTES;
		crc = 0;
		for (int i = 0; !err && i < n; i++)
			err = write_piece(parts[i].data, parts[i].len, &at, &crc);
	}
	if (!err) {
		hp_format_frame(frame, type, flags, at - file_bytes - HP_FORMAT_FRAME_BYTES, raw, crc);
		err = hp_os_pwrite_all(fd, frame, sizeof frame, file_bytes);
	}
	if (err && fd >= 0)
		hp_os_truncate(fd, file_bytes);
	else if (!err)
		file_bytes = at;
	payload.len = 0;
	return err;
}

static void put_meta(const struct hp_config *c, int forked_child)
{
	struct hp_rec_meta m = {
		.pid = (uint64_t)hp_os_getpid(),
		.ppid = (uint64_t)hp_os_getppid(),
		.start_realtime_ns = hp_os_realtime_ns() - (hp_os_now_ns() - c->start_ns),
		.start_monotonic_ns = c->start_ns,
		.page_size = hp_os_page_size(),
	};
	struct hp_rec_meta_options o = {
		.recorder_version = hp_rec_str_of(HP_VERSION),
		.sample_rate_bytes = c->sample_rate_bytes,
		.unwind = c->unwind,
		.max_depth = c->max_depth,
		.flags = (c->follow_fork ? HP_META_FOLLOW_FORK : 0) |
			 (forked_child ? HP_META_FORKED_CHILD : 0) |
			 (c->shadowed ? HP_META_SHADOWED : 0) |
			 (c->events ? HP_META_EVENTS : 0),
		.dump_signal = (uint64_t)c->dump_signal,
		.interval_ms = c->interval_ms,
		.dump_every_bytes = c->dump_every_bytes,
		.high_water_bytes = c->high_water_bytes,
	};
	const char *args = scratch;
	size_t n, argc = 0;

	hp_os_exe_path(scratch, sizeof scratch);
	m.program = hp_rec_str_of(scratch);
	hp_rec_meta_put(&payload, &m);
	/* The command line, NUL-separated, over the path just written. */
	n = hp_os_cmdline(scratch, sizeof scratch);
	for (size_t i = 0; i < n; i++)
		argc += args[i] == '\0';
	hp_rec_count_put(&payload, argc);
	for (size_t i = 0, a = 0; a < argc; a++) {
		hp_rec_str_put(&payload, hp_rec_str_of(args + i));
		i += strlen(args + i) + 1;
	}
	hp_rec_meta_options_put(&payload, &o);
}

/* Creates the file and writes its header and META, once it is wanted.
 * Under lock. Returns 0 or -errno. */
static int ensure_file(void)
{
	struct hp_buf file_header = {0};
	int err = 0, append;

	if (fd >= 0)
		return 0;
	if (!file_config)
		return -EBADF;
	file_header.grow = grow_mapped;
	fd = create_file(file_config, file_role, &append);
	file_config = NULL; /* one attempt */
	if (fd < 0) {
		err = fd;
		hp_log("cannot create %s: %s", path, hp_errname(-err));
		return err;
	}
	fd = hp_os_fd_high(fd);
	hp_os_file_id(fd, &fd_id);
	file_bytes = append ? hp_os_file_size(fd) : 0;
	if (!file_bytes) {
		hp_format_put_file_header(&file_header);
		err = file_header.err ? file_header.err : within_limit(file_header.len);
		if (!err)
			err = hp_os_pwrite_all(fd, file_header.data, file_header.len, 0);
		file_bytes = err ? 0 : file_header.len;
		hp_os_unmap(file_header.data, file_header.cap);
	}
	if (!err) {
		put_meta(config, file_role == HP_ROLE_FORKED);
		err = emit(HP_REC_META);
	}
	if (err) {
		if (err != -EFBIG) /* within_limit said so */
			hp_log("cannot write %s: %s", path, hp_errname(-err));
		hp_os_close(fd);
		fd = -1;
	}
	return err;
}

/* The writer's lock, with cancellation off while it is held: the writer
 * calls write and open, cancellation points, and a thread cancelled there
 * would leave the lock held for ever. Returns the cancellation state to
 * give back to unlock, or -1 when the lock was not taken. */
static int lock_for(unsigned flags)
{
	int cancel = hp_os_cancel_off();

	if (flags & HP_WRITE_FATAL) {
		if (hp_spin_trylock_for(&lock, 200000)) /* about 0.2 s */
			return cancel;
	} else if (flags & HP_WRITE_SIGNAL) {
		if (hp_spin_trylock_for(&lock, 100))
			return cancel;
	} else {
		hp_spin_lock(&lock);
		return cancel;
	}
	hp_os_cancel_restore(cancel);
	return -1;
}

static void unlock(int cancel)
{
	hp_spin_unlock(&lock);
	hp_os_cancel_restore(cancel);
}

int hp_writer_open(const struct hp_config *c, enum hp_role role)
{
	int err = 0, cancel = lock_for(0);

	/* A forked child's copy of its parent's descriptor is ours to close;
	 * a number that is no longer ours is left alone. */
	if (check_fd() == 0)
		hp_os_close(fd);
	fd = -1;
	owner = hp_os_getpid();
	snapshot_seq = 0;
	stacks_written = 1;
	module_events_written = 0;
	memset(&tags_written, 0, sizeof tags_written);
	nsamples = 0;
	ticks_buf.len = site_tags_buf.len = 0;
	ticks_buf.err = site_tags_buf.err = 0;
	nticks = 0;
	nsites = 0;
	tick_prev_ns = 0;
	tick_all = role == HP_ROLE_FORKED;
	payload.grow = out.grow = buckets_buf.grow = grow_mapped;
	ticks_buf.grow = hists_buf.grow = blocks_buf.grow = grow_mapped;
	site_tags_buf.grow = grow_mapped;
	file_config = config = c;
	reserve_buffers();
	if (!cctx)
		cctx = new_cctx();
	file_role = role;
	/* A forked child, or a program exec'd by a recorded one, creates its
	 * file when it first has something to say: one that only execs (a
	 * fork, a chain of wrappers) leaves no empty file behind. */
	if (role != HP_ROLE_FORKED && role != HP_ROLE_DESCENDANT)
		err = ensure_file();
	unlock(cancel);
	return err;
}

int hp_writer_ensure(void)
{
	int cancel, err;

	if (!hp_writer_owned())
		return -ESRCH;
	cancel = lock_for(0);
	err = ensure_file();
	unlock(cancel);
	return err;
}

int hp_writer_has_file(void)
{
	return __atomic_load_n(&fd, __ATOMIC_RELAXED) >= 0;
}

int hp_writer_owned(void)
{
	return owner && hp_os_getpid() == owner;
}

/* The first time of a record is absolute (a delta from 0), so a record
 * lost to damage does not shift the ones after it. */
static void put_timeseries(void)
{
	uint64_t prev = 0;

	hp_rec_count_put(&payload, nsamples);
	for (unsigned i = 0; i < nsamples; i++)
		hp_rec_sample_put(&payload, &samples[i], &prev);
	nsamples = 0;
}

/* Takes a tick of the timeline into ticks_buf: the buckets changed since
 * the last. Returns how many it lists. Its entries go straight into
 * ticks_buf after room for the largest tick header (its time and count are
 * known only at the end), which then moves up against the header: a tick
 * of a million sites is not built twice. Under the lock. */
static uint32_t take_tick(void)
{
	uint8_t head_bytes[TICK_HEAD_MAX_BYTES];
	struct hp_buf head = {.data = head_bytes, .cap = sizeof head_bytes};
	struct hp_rec_site site;
	size_t start = ticks_buf.len;
	uint32_t n = 0;

	if (hp_buf_reserve(&ticks_buf, TICK_HEAD_MAX_BYTES))
		ticks_buf.len += TICK_HEAD_MAX_BYTES;
	for (uint32_t id = hp_agg_next_tick(0); id; id = hp_agg_next_tick(id)) {
		if (!hp_agg_take_change(id, tick_all, &site))
			continue;
		hp_rec_site_put(&ticks_buf, &site);
		hp_rec_site_tags_put(&site_tags_buf, &site);
		n++;
	}
	tick_all = 0;
	struct hp_rec_tick tick = {hp_os_now_ns() - config->start_ns, n};
	hp_rec_tick_put(&head, &tick, &tick_prev_ns);
	if (!ticks_buf.err) {
		uint8_t *at = ticks_buf.data + start;
		memmove(at + head.len, at + TICK_HEAD_MAX_BYTES,
			ticks_buf.len - start - TICK_HEAD_MAX_BYTES);
		memcpy(at, head.data, head.len);
		ticks_buf.len -= TICK_HEAD_MAX_BYTES - head.len;
	}
	nticks++;
	nsites += n;
	return n;
}

/* Writes the ticks not yet written as a TIMELINE record, then their
 * sites' tags (minor 5). The first time of a record is absolute, as in
 * put_timeseries. A buffer that could not grow loses the record (its
 * error goes to the payload): a timeline without its tags would put
 * every site in no type and no context. Large ticks (a million new sites)
 * are written from their buffers, not copied (emit_parts). Under the
 * lock. Returns 0 or -errno. */
static int emit_timeline(void)
{
	int err, whole = ticks_buf.len + site_tags_buf.len <= STREAM_MIN_BYTES;
	size_t at;

	hp_rec_count_put(&payload, nticks);
	at = payload.len;
	if (whole)
		hp_buf_put_bytes(&payload, ticks_buf.data, ticks_buf.len);
	hp_rec_count_put(&payload, nsites);
	if (whole)
		hp_buf_put_bytes(&payload, site_tags_buf.data, site_tags_buf.len);
	if (ticks_buf.err && !payload.err)
		payload.err = ticks_buf.err;
	if (site_tags_buf.err && !payload.err)
		payload.err = site_tags_buf.err;
	if (whole) {
		err = emit(HP_REC_TIMELINE);
	} else {
		struct part parts[] = {{payload.data, at},
				       {ticks_buf.data, ticks_buf.len},
				       {payload.data + at, payload.len - at},
				       {site_tags_buf.data, site_tags_buf.len}};
		err = emit_parts(HP_REC_TIMELINE, parts, 4);
	}
	ticks_buf.len = site_tags_buf.len = 0;
	ticks_buf.err = site_tags_buf.err = 0;
	nticks = 0;
	nsites = 0;
	tick_prev_ns = 0;
	return err;
}

/* Writes the payload as a record of type with b's bytes in it at offset
 * at: from their buffers when they are large (emit_parts), else put
 * together in the payload. Under the lock. Returns 0 or -errno. */
static int emit_with(unsigned type, size_t at, const struct hp_buf *b)
{
	if (b->len > STREAM_MIN_BYTES) {
		struct part parts[] = {{payload.data, at},
				       {b->data, b->len},
				       {payload.data + at, payload.len - at}};
		return emit_parts(type, parts, 3);
	}
	if (hp_buf_reserve(&payload, b->len)) {
		memmove(payload.data + at + b->len, payload.data + at, payload.len - at);
		memcpy(payload.data + at, b->data, b->len);
		payload.len += b->len;
	}
	return emit(type);
}

/* put_stacks' copy of a stack's frames (the table keeps them in
 * segments); under the writer's lock, like the payload. */
static uint64_t stack_frames[HP_STACKS_MAX_DEPTH];

/* Encodes into the payload one STACKS record of the stacks from id from
 * on, below to: as many as fit STACKS_RECORD_BYTES (one at least, whatever
 * its size). Returns the id after the last one encoded. The header's
 * count is known only at the end: the stacks go after room for the
 * largest header, which then moves up against the header put before it. */
static uint32_t put_stacks(uint32_t from, uint32_t to)
{
	uint8_t head_bytes[STACKS_HEAD_MAX_BYTES];
	struct hp_buf head = {.data = head_bytes, .cap = sizeof head_bytes};
	uint32_t id = from;

	payload.len = 0;
	if (!hp_buf_reserve(&payload, STACKS_HEAD_MAX_BYTES))
		return to;
	payload.len = STACKS_HEAD_MAX_BYTES;
	for (; id < to; id++) {
		uint32_t depth = hp_stacks_frames(id, stack_frames);
		/* What hp_rec_stack_put reserves: a varint for the depth and
		 * each frame, and one more (a record that reached the end of
		 * the buffer would otherwise grow it). */
		if (id > from &&
		    payload.len + HP_VARINT_MAX_BYTES * ((size_t)depth + 2) > STACKS_RECORD_BYTES)
			break;
		hp_rec_stack_put(&payload, stack_frames, depth);
	}
	hp_rec_stacks_put(&head, &(struct hp_rec_stacks){.first_id = from, .count = id - from});
	if (!payload.err) {
		memmove(payload.data + head.len, payload.data + STACKS_HEAD_MAX_BYTES,
			payload.len - STACKS_HEAD_MAX_BYTES);
		memcpy(payload.data, head.data, head.len);
		payload.len -= STACKS_HEAD_MAX_BYTES - head.len;
	}
	return id;
}

/* Writes the stacks not yet in the file, below to, in STACKS records of
 * bounded size, so that the payload and out buffers keep their size at
 * open however many stacks come at once (a million new stacks would
 * otherwise take 64 MiB of payload and as much of out). What the file has
 * is counted as each record is written: after a failed write the next
 * snapshot goes on from there. Under the lock. Returns 0 or -errno. */
static int write_stacks(uint32_t to)
{
	while (stacks_written < to) {
		uint32_t end = put_stacks(stacks_written, to);
		int err = emit(HP_REC_STACKS);
		if (err)
			return err;
		stacks_written = end;
	}
	return 0;
}

/* Takes the free of the block t was freeing (thread.h) back out of its
 * bucket's figures v and histograms h. */
static void unfree(struct hp_rec_bucket *v, struct hp_rec_hist *h, const struct hp_thread *t)
{
	v->free_count--;
	v->free_bytes -= t->freeing_size;
	if (t->freeing_temp && v->temp_count) {
		v->temp_count--;
		v->temp_bytes -= t->freeing_size;
	}
	if ((unsigned)t->freeing_life < HP_HIST_LIFE_CLASSES && h->life[t->freeing_life])
		h->life[t->freeing_life]--;
}

/* The buckets, into the side buffer, and their sums. Before the stacks
 * are counted: every bucket read here has its stack interned already, so
 * the stack count taken after covers them all. */
struct bucket_sums {
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes, peak_count, n;
};

/* unfreed: the block whose free the writing thread was inside when a
 * fatal signal came (thread.h, freeing), or NULL: its free is not
 * counted, in its bucket and so in the sums (the peak is as it was: the
 * block was counted in use until its free). */
static void collect_buckets(struct bucket_sums *sum, const struct hp_thread *unfreed)
{
	struct hp_rec_bucket v;
	struct hp_rec_hist h;

	memset(sum, 0, sizeof *sum);
	buckets_buf.len = 0;
	hists_buf.len = 0;
	hists_buf.err = 0;
	for (uint32_t id = hp_agg_next(0); id; id = hp_agg_next(id)) {
		unsigned sc, lc;
		uint64_t sn, ln;

		hp_agg_read(id, &v);
		if (unfreed && id == unfreed->freeing_bucket && v.free_count) {
			hp_agg_hist(id, &h);
			unfree(&v, &h, unfreed);
			hp_rec_hist_put(&hists_buf, &h);
		} else if (hp_agg_hist_one(id, &sc, &sn, &lc, &ln)) {
			/* most buckets: no 41 classes to fill and scan */
			hp_rec_hist_put_one(&hists_buf, sc, sn, lc, ln);
		} else {
			hp_agg_hist(id, &h);
			hp_rec_hist_put(&hists_buf, &h);
		}
		hp_rec_bucket_put(&buckets_buf, &v);
		sum->n++;
		if (hp_agg_heap_of(id))
			continue; /* a custom heap's: not in malloc's totals */
		sum->alloc_count += v.alloc_count;
		sum->alloc_bytes += v.alloc_bytes;
		sum->free_count += v.free_count;
		sum->free_bytes += v.free_bytes;
		sum->peak_count += v.peak_count;
	}
}

/* hp_live_walk's callback: a live block of malloc's into blocks_buf, and
 * its region marked (maps.h). Under its shard lock (blocks_buf may grow with mmap there, as a shard
 * does). */
static int put_block(void *arg, uintptr_t addr, struct hp_live_block *blk)
{
	uint32_t stack_id, type_tag, origin_tag;
	uint64_t size;

	(void)arg;
	if (addr & ~HP_ATTR_ADDR_MASK)
		return HP_LIVE_KEEP; /* a custom heap's block */
	hp_agg_key(blk->bucket, &stack_id, &type_tag, &origin_tag, &size);
	hp_rec_block_put(&blocks_buf, &(struct hp_rec_block){addr, blk->size, stack_id});
	hp_maps_mark(addr);
	nblocks++;
	return HP_LIVE_KEEP;
}

/* What the recorder holds: its tables and the writer's buffers. */
static uint64_t recorder_bytes(void)
{
	uint64_t blocks, live;

	hp_live_usage(&blocks, &live);
	return hp_stacks_bytes() + hp_agg_bytes() + hp_tags_bytes() + live + payload.cap + out.cap +
	       buckets_buf.cap + ticks_buf.cap + site_tags_buf.cap + hists_buf.cap +
	       blocks_buf.cap + hp_maps_bytes() + hp_events_bytes();
}

/* The SNAPSHOT payload but its buckets (buckets_buf), which go at the
 * offset returned (emit_with). The totals are the sums of the buckets
 * written, exactly, even while other threads allocate. */
static size_t put_snapshot(unsigned reason, int signo, uint32_t nstacks,
			   const struct bucket_sums *sum)
{
	size_t at;
	struct hp_totals t;
	unsigned lost_kinds = 0;
	uint32_t nheaps;

	if (buckets_buf.err && !payload.err)
		payload.err = buckets_buf.err;
	buckets_buf.err = 0;
	hp_agg_totals(&t);
	hp_rec_snapshot_put(&payload, &(struct hp_rec_snapshot){
		.seq = ++snapshot_seq,
		.time_ns = hp_os_now_ns() - config->start_ns,
		.reason = reason,
		.signo = (uint64_t)signo,
		.alloc_count = sum->alloc_count,
		.alloc_bytes = sum->alloc_bytes,
		.free_count = sum->free_count,
		.free_bytes = sum->free_bytes,
		.peak_bytes = t.peak_bytes,
		.peak_count = sum->peak_count,
		.peak_time_ns = t.peak_time_ns > config->start_ns ? t.peak_time_ns - config->start_ns
								   : 0,
		.stack_count = nstacks,
	});
	for (int i = 1; i < HP_LOST_KINDS; i++)
		lost_kinds += t.lost_count[i] != 0;
	hp_rec_count_put(&payload, lost_kinds);
	for (int i = 1; i < HP_LOST_KINDS; i++) {
		if (t.lost_count[i])
			hp_rec_lost_put(&payload, &(struct hp_rec_lost){(uint64_t)i, t.lost_count[i],
									t.lost_bytes[i]});
	}
	hp_rec_count_put(&payload, sum->n);
	at = payload.len; /* the buckets, hp_rec_bucket_put's */
	hp_rec_snapshot_tail_put(&payload,
				 &(struct hp_rec_snapshot_tail){.recorder_bytes = recorder_bytes()});
	/* Each custom heap's own peak (minor 3); none written, as a reader
	 * allows, while the program has created no heap. */
	nheaps = hp_tags_heap_count();
	if (nheaps)
		hp_rec_count_put(&payload, nheaps);
	for (uint32_t h = 1; h <= nheaps; h++) {
		struct hp_rec_heap_peak hp;
		hp_agg_heap_peak(h, &hp);
		if (hp.peak_time_ns > config->start_ns)
			hp.peak_time_ns -= config->start_ns;
		else
			hp.peak_time_ns = 0;
		hp_rec_heap_peak_put(&payload, &hp);
	}
	return at;
}

int hp_writer_snapshot(unsigned reason, int signo, unsigned flags)
{
	struct bucket_sums sums;
	uint32_t nevents, nstacks;
	int err = 0, cancel;

	/* Another process in our memory (a vfork child) or with a copy of it
	 * (a raw clone without fork handlers): the file is not its own. */
	if (!hp_writer_owned())
		return -ESRCH;
	if (!(flags & (HP_WRITE_FATAL | HP_WRITE_SIGNAL))) {
		hp_modules_refresh(0);
		if (config && config->types)
			hp_attr_vtable_scan();
	} else if ((flags & HP_WRITE_OUTSIDE) && config && config->types) {
		/* Reads live blocks: from a signal handler only when it
		 * interrupted code outside the recorder, which may hold a lock
		 * of the walk otherwise (attr.h). A crash's snapshot types its
		 * objects too. */
		hp_attr_vtable_scan();
	}
	/* The event log up to now, before the snapshot (events.h). */
	hp_events_flush_all(flags);
	cancel = lock_for(flags);
	if (cancel < 0)
		return -EDEADLK;
	err = ensure_file();
	if (err)
		goto out;
	/* A crash inside a free glibc refused: that block is still in use */
	collect_buckets(&sums, (flags & HP_WRITE_FATAL) && hp_self.freeing ? &hp_self : NULL);
	nstacks = hp_stacks_count();
	nevents = hp_modules_events();
	if (nsamples < SAMPLES_PER_RECORD) { /* the heap at this moment, too */
		struct hp_totals t;
		uint64_t now = hp_os_now_ns();
		take_owed(now);
		hp_agg_totals(&t);
		if (nsamples < SAMPLES_PER_RECORD)
			samples[nsamples++] = (struct hp_rec_sample){
				now - config->start_ns, t.in_use_estimate_bytes, hp_os_rss_bytes()};
	}
	/* What the file has is counted only once written: after a failed
	 * write, the next snapshot tries again. */
	if (nevents > module_events_written) {
		hp_modules_encode(&payload, module_events_written, nevents);
		err = emit(HP_REC_MODULES);
		if (!err)
			module_events_written = nevents;
	}
	if (!err)
		err = write_stacks(nstacks);
	if (!err && nsamples) {
		put_timeseries();
		err = emit(HP_REC_TIMESERIES);
	}
	/* The timeline at this moment too, so that its last tick before the
	 * snapshot agrees with it (give or take the allocations in between,
	 * in another thread). */
	if (!err && config->timeline_ms) {
		take_tick();
		/* A timeline that could not be built (no memory left for its
		 * buffers) or written is lost, not the snapshot: the payload
		 * starts clean for it. */
		if (emit_timeline()) {
			hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
			payload.len = 0;
			payload.err = out.err = 0;
		}
	}
	/* After the buckets were read: every tag they name is counted. */
	if (!err) {
		memcpy(&tags_pending, &tags_written, sizeof tags_pending);
		if (hp_tags_encode(&payload, &tags_written, &tags_pending)) {
			err = emit(HP_REC_TAGS);
			if (!err)
				memcpy(&tags_written, &tags_pending, sizeof tags_written);
		}
	}
	if (!err)
		err = emit_with(HP_REC_SNAPSHOT, put_snapshot(reason, signo, nstacks, &sums),
				&buckets_buf);
	/* Its buckets' histograms: lost alone when they cannot be written. */
	if (!err) {
		hp_rec_hists_put(&payload,
				 &(struct hp_rec_hists){.seq = snapshot_seq, .count = sums.n});
		if (hists_buf.err && !payload.err)
			payload.err = hists_buf.err;
		if (emit_with(HP_REC_HISTOGRAMS, payload.len, &hists_buf))
			hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
	}
	/* The live blocks (--live-blocks): the walk takes every shard lock
	 * in turn, which a signal handler must not (the interrupted code may
	 * hold one). An entry moved by a racing insert may be seen twice
	 * (hp_live_walk); the analyzer keeps one. */
	if (!err && config->live_blocks && !(flags & (HP_WRITE_FATAL | HP_WRITE_SIGNAL))) {
		blocks_buf.len = 0;
		blocks_buf.err = 0;
		nblocks = 0;
		/* The mappings first: the walk marks those holding a block. */
		int maps_err = hp_maps_read();
		hp_live_walk(put_block, NULL);
		hp_rec_hists_put(&payload, &(struct hp_rec_hists){.seq = snapshot_seq, .count = nblocks});
		hp_buf_put_bytes(&payload, blocks_buf.data, blocks_buf.len);
		if (blocks_buf.err && !payload.err)
			payload.err = blocks_buf.err;
		if (emit(HP_REC_BLOCKS))
			hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
		/* The mappings that hold them and the heap, with their RSS
		 * (format 1.5): lost alone when they cannot be read or
		 * written. */
		payload.len = 0;
		payload.err = out.err = 0;
		if (maps_err || hp_maps_encode(&payload, snapshot_seq) || emit(HP_REC_MAPS))
			hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
	}
out:
	payload.len = 0;
	payload.err = out.err = 0;
	unlock(cancel);
	if (err && err != -EBADF) {
		hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
		if (!(flags & (HP_WRITE_FATAL | HP_WRITE_SIGNAL)) && err != -EFBIG)
			hp_log("cannot write %s: %s", path, hp_errname(-err));
	}
	return err;
}

/* The heap at the last look that came too soon after a sample to take
 * one (hp_writer_sample_owed; pend_ns 0: none), and the RSS of the last
 * sample: a sample first writes it with its own time. Plain racy stores:
 * two threads owing at once may mix their pairs, at worst a point with
 * the other look's time. */
static uint64_t pend_ns, pend_heap, last_rss;

void hp_writer_sample_owed(uint64_t now_ns, uint64_t heap_bytes)
{
	__atomic_store_n(&pend_heap, heap_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&pend_ns, now_ns, __ATOMIC_RELEASE);
}

/* Queues the owed point, if any and older than now. Under the lock. */
static void take_owed(uint64_t now_ns)
{
	uint64_t at = __atomic_exchange_n(&pend_ns, 0, __ATOMIC_ACQUIRE);

	if (at && at < now_ns && at >= config->start_ns && nsamples < SAMPLES_PER_RECORD)
		samples[nsamples++] = (struct hp_rec_sample){
			at - config->start_ns, __atomic_load_n(&pend_heap, __ATOMIC_RELAXED), last_rss};
}

void hp_writer_sample(uint64_t heap_bytes, uint64_t rss_bytes)
{
	uint64_t now;
	int cancel;

	if (!hp_writer_owned())
		return;
	cancel = lock_for(0);
	now = hp_os_now_ns();
	take_owed(now);
	last_rss = rss_bytes;
	if (nsamples < SAMPLES_PER_RECORD)
		samples[nsamples++] =
			(struct hp_rec_sample){now - config->start_ns, heap_bytes, rss_bytes};
	if (nsamples == SAMPLES_PER_RECORD && ensure_file() == 0) {
		put_timeseries();
		if (emit(HP_REC_TIMESERIES))
			hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
	}
	unlock(cancel);
}

uint32_t hp_writer_timeline(void)
{
	uint32_t n;
	int cancel;

	if (!hp_writer_owned())
		return 0;
	cancel = lock_for(0);
	n = take_tick();
	if ((nticks >= TICKS_PER_RECORD || ticks_buf.len >= TICKS_RECORD_BYTES) &&
	    ensure_file() == 0) {
		if (emit_timeline())
			hp_agg_lost(HP_LOST_WRITE_FAILED, 1, 0);
		payload.len = 0;
		payload.err = out.err = 0;
	}
	unlock(cancel);
	return n;
}

int hp_writer_put(unsigned type, uint8_t *rec, size_t len, unsigned flags)
{
	int err, cancel;

	if (!hp_writer_owned())
		return -ESRCH;
	if (len > HP_FORMAT_MAX_PAYLOAD_BYTES)
		return -EFBIG;
	cancel = lock_for(flags);
	if (cancel < 0)
		return -EDEADLK;
	err = ensure_file();
	if (!err)
		err = check_fd();
	if (!err)
		err = within_limit(HP_FORMAT_FRAME_BYTES + len);
	if (!err) {
		/* Framed where it lies and written at once: no copy of the
		 * payload into the writer's buffers. */
		hp_format_frame(rec, type, 0, len, len,
				hp_format_crc(0, rec + HP_FORMAT_FRAME_BYTES, len));
		err = hp_os_pwrite_all(fd, rec, HP_FORMAT_FRAME_BYTES + len, file_bytes);
		/* A record cut short (a full disk) is cut off again, as
		 * emit_as does. */
		if (err && fd >= 0)
			hp_os_truncate(fd, file_bytes);
		else if (!err)
			file_bytes += HP_FORMAT_FRAME_BYTES + len;
	}
	unlock(cancel);
	return err;
}

void hp_writer_close(void)
{
	int cancel = lock_for(0);

	if (check_fd() == 0)
		hp_os_close(fd);
	fd = -1;
	file_config = NULL;
	unlock(cancel);
}

size_t hp_writer_record_bytes(void)
{
	return __atomic_load_n(&payload.cap, __ATOMIC_RELAXED) +
	       __atomic_load_n(&out.cap, __ATOMIC_RELAXED);
}

void hp_writer_lock(void)
{
	hp_spin_lock(&lock);
}

void hp_writer_unlock(void)
{
	hp_spin_unlock(&lock);
}
