/*
 * embed.c - appending a SYMBOLS record to a capture (see embed.h and the
 * record's layout in src/format/format.h).
 */
#include "embed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "../common/strtab.h"
#include "../format/records.h"
#include "../format/capture.h"
#include "model/model.h"

/* Appends data[0..len) to the capture at path as one whole record, or not
 * at all. A write can be short (a disk that fills up, a file size limit):
 * the rest is written until the kernel says why it cannot, and that errno
 * is the one returned, never whatever errno held before. On failure the
 * file is cut back to its size before the append, so the capture keeps no
 * half record (which a reader would report as damage) and the earlier
 * records stay as they were. Returns 0 or -errno. */
static int append_whole(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	size_t done = 0;
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while (done < len) {
		ssize_t w = write(fd, data + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) { /* 0 from a regular file: nothing more fits */
			ret = w < 0 ? -errno : -ENOSPC;
			break;
		}
		done += (size_t)w;
	}
	/* Cutting back can fail too (the file is then one partial record
	 * longer, which a reader reports as a truncated end); the reason said
	 * stays the write's. */
	if (ret && done && ftruncate(fd, st.st_size) < 0)
		(void)0;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

int hp_embed_encode(struct hp_buf *rec, const enum hp_module_status *status, size_t nmodules,
		    const struct hp_location *locs, size_t nlocs, uint64_t image,
		    struct ZSTD_CCtx_s *cctx)
{
	struct hp_strtab strs = {0};
	struct hp_buf body = {.grow = hp_buf_grow_heap};
	uint32_t *fn = NULL, *file = NULL;
	size_t nsyms = 0;
	uint32_t idx;
	int ret;

	/* Strings first: the record starts with the table. */
	ret = hp_strtab_intern(&strs, "", &idx); /* index 0 is "" */
	for (size_t i = 0; i < nlocs; i++)
		nsyms += locs[i].nsyms;
	fn = malloc((nsyms + 1) * sizeof *fn);
	file = malloc((nsyms + 1) * sizeof *file);
	if (!fn || !file)
		ret = -ENOMEM;
	for (size_t i = 0, k = 0; !ret && i < nlocs; i++) {
		for (uint32_t j = 0; !ret && j < locs[i].nsyms; j++, k++) {
			const struct hp_sym *y = &locs[i].syms[j];
			ret = hp_strtab_intern(&strs, y->function, &fn[k]);
			if (!ret)
				ret = hp_strtab_intern(&strs, y->file, &file[k]);
		}
	}
	if (ret)
		goto out;

	hp_rec_count_put(&body, strs.count);
	for (size_t i = 0; i < strs.count; i++)
		hp_rec_str_put(&body, hp_rec_str_of(hp_strtab_get(&strs, (uint32_t)i)));
	hp_rec_count_put(&body, nmodules);
	for (size_t i = 0; i < nmodules; i++)
		hp_buf_put_u(&body, hp_module_status_record(status[i]));
	hp_rec_count_put(&body, nlocs);
	for (size_t i = 0, k = 0; i < nlocs; i++) {
		const struct hp_location *l = &locs[i];
		hp_rec_symaddr_put(&body, &(struct hp_rec_symaddr){l->address, l->nsyms});
		for (uint32_t j = 0; j < l->nsyms; j++, k++)
			hp_rec_symframe_put(&body,
					    &(struct hp_rec_symframe){fn[k], file[k],
								      l->syms[j].line,
								      l->syms[j].inlined
									      ? HP_SYMFRAME_INLINED
									      : 0});
	}
	/* (minor 2): frames of different images may share addresses */
	hp_rec_symbols_tail_put(&body, &(struct hp_rec_symbols_tail){.image = image});
	if (body.err || hp_format_put_record(rec, HP_REC_SYMBOLS, body.data, body.len, cctx))
		ret = -ENOMEM;
out:
	free(body.data);
	free(fn);
	free(file);
	hp_strtab_free(&strs);
	return ret;
}

/* Appends to rec the SYMBOLS record of the model's image, and counts what
 * it holds into res. Returns 0 or -ENOMEM. */
static int image_record(const struct hp_model *m, size_t image, ZSTD_CCtx *cctx, struct hp_buf *rec,
			struct hp_embed_result *res)
{
	enum hp_module_status *status = malloc((m->nmodules + 1) * sizeof *status);
	int ret;

	if (!status)
		return -ENOMEM;
	for (size_t i = 0; i < m->nmodules; i++) {
		status[i] = m->modules[i].status;
		res->modules_missing += m->modules[i].status == HP_MODSYM_MISSING &&
					m->modules[i].cap->path[0] == '/';
		res->modules_changed += m->modules[i].status == HP_MODSYM_MISMATCH;
	}
	for (size_t i = 0; i < m->nlocations; i++) {
		const char *f = m->locations[i].syms[0].function;
		res->unresolved += f[0] == '0' && f[1] == 'x';
	}
	ret = hp_embed_encode(rec, status, m->nmodules, m->locations, m->nlocations, image, cctx);
	if (!ret)
		res->addresses += m->nlocations;
	free(status);
	return ret;
}

int hp_embed_symbols(const char *path, const char *debug_dir, struct hp_embed_result *res,
		     char *err, size_t errlen)
{
	struct hp_embed_options o = {.debug_dir = debug_dir};

	return hp_embed_symbols_with(path, &o, res, err, errlen);
}

int hp_embed_symbols_with(const char *path, const struct hp_embed_options *opts,
			  struct hp_embed_result *res, char *err, size_t errlen)
{
	struct hp_capture cap;
	int loaded = 0;
	int ret = hp_embed_symbols_keep(path, opts, res, &cap, &loaded, err, errlen);

	if (loaded)
		hp_capture_free(&cap);
	return ret;
}

int hp_embed_symbols_keep(const char *path, const struct hp_embed_options *opts,
			  struct hp_embed_result *res, struct hp_capture *cap, int *loaded,
			  char *err, size_t errlen)
{
	static const struct hp_embed_options defaults;
	/* Symbols only: no type is read (no module a cache answers opened). */
	struct hp_model_options mo = {.snapshot = -1, .no_embedded = 1, .keep_allocator_frames = 1,
				      .no_dwarf_types = 1, .locations_only = 1};
	struct hp_buf rec = {.grow = hp_buf_grow_heap};
	struct hp_symcache *cache = NULL;
	ZSTD_CCtx *cctx = NULL;
	size_t records = 0;
	int ret;

	if (!opts)
		opts = &defaults;
	mo.debug_dir = opts->debug_dir;
	memset(res, 0, sizeof *res);
	*loaded = 0;
	/* Its locations are all it reads of the stacks (and the caller, a
	 * summary, reads the snapshots): no timeline or histogram kept. */
	ret = hp_capture_load_flags(path,
				    HP_CAP_LOAD_INTERN | HP_CAP_LOAD_NO_TIMELINE |
					    HP_CAP_LOAD_NO_HISTOGRAMS,
				    cap, err, errlen);
	if (ret)
		return ret;
	*loaded = 1;
	/* One cache for every image: they share modules (libc). */
	if (hp_symcache_open(&cache, opts->no_symbol_cache))
		goto nomem;
	mo.symcache = cache;
	cctx = ZSTD_createCCtx();
	if (!cctx)
		goto nomem;
	/* One record per image, each resolving that image's frames with that
	 * image's modules (format.h, "Images"). An image without a snapshot
	 * shows nothing, so it needs no symbols. */
	for (size_t i = 0; i < (cap->nimages ? cap->nimages : 1); i++) {
		struct hp_model m;
		hp_capture_select(cap, i);
		if (cap->nimages > 1 && !cap->nsnapshots)
			continue;
		ret = hp_model_build(&m, cap, &mo, err, errlen);
		if (ret)
			goto out;
		ret = image_record(&m, i, cctx, &rec, res);
		hp_model_free(&m);
		if (ret)
			goto nomem;
		records++;
	}
	if (!records) { /* several images, none with a snapshot */
		ret = -ENODATA;
		snprintf(err, errlen, "%s: the capture holds no snapshot", path);
		goto out;
	}
	/* All records in one write: a failure leaves none of them. */
	ret = append_whole(path, rec.data, rec.len);
	if (ret)
		snprintf(err, errlen, "%s: cannot append the symbols: %s", path, strerror(-ret));
	goto out;
nomem:
	ret = -ENOMEM;
	snprintf(err, errlen, "%s: out of memory while embedding symbols", path);
out:
	if (cache) {
		hp_symcache_flush(cache);
		hp_symcache_stats(cache, &res->cache);
		res->cache_off = hp_symcache_why(cache);
		hp_symcache_close(cache);
	}
	ZSTD_freeCCtx(cctx);
	free(rec.data);
	hp_capture_select(cap, hp_capture_default_image(cap));
	return ret;
}
