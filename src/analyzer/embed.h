/*
 * embed.h - carrying a capture's symbols inside it.
 *
 * hp_embed_symbols symbolizes every frame of a capture from the binaries
 * (as they are now, on this machine) and appends the result as a SYMBOLS
 * record, so that the capture can be analysed where those binaries are not.
 * `heapprof run` does it when the program ends; `heapprof symbolize` does it
 * for captures made with plain LD_PRELOAD. Appending keeps the file's
 * earlier records as they were. A capture of several images (a process
 * that exec'd) gets one record per image with a snapshot, each resolving
 * that image's frames with that image's modules, all in one append; a
 * reader uses the last record of each image. A failed append (a full
 * disk) is cut off again: the file is left as it was.
 *
 * The binaries are read through the user's symbol cache (symcache.h):
 * what it holds is not read again, what it lacks is added to it.
 */
#ifndef HP_ANALYZER_EMBED_H
#define HP_ANALYZER_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "../format/encode.h"
#include "model/model.h"
#include "symbols/symcache.h"

struct hp_embed_result {
	size_t addresses;  /* frame addresses symbolized */
	size_t unresolved; /* of which no function was found */
	size_t modules_missing, modules_changed;
	struct hp_symcache_stats cache; /* where the symbols came from */
	const char *cache_off;		/* why no symbol cache was used (static), or NULL */
};

struct hp_embed_options {
	const char *debug_dir; /* extra directory for separate debug info, or NULL */
	int no_symbol_cache;   /* every address from the binaries, nothing stored */
};

/* Returns 0, or -errno with err set to one line. debug_dir may be NULL.
 * With the user's symbol cache. */
int hp_embed_symbols(const char *path, const char *debug_dir, struct hp_embed_result *res,
		     char *err, size_t errlen);

/* hp_embed_symbols with options (opts NULL: the defaults). */
int hp_embed_symbols_with(const char *path, const struct hp_embed_options *opts,
			  struct hp_embed_result *res, char *err, size_t errlen);

/* hp_embed_symbols_with that hands the capture it loaded to the caller:
 * when *loaded is 1 on return (whatever the return), *cap is path as read
 * before the symbols were appended (its frames interned, without its
 * timeline and histograms: capture.h, HP_CAP_LOAD_*), its default image
 * selected, for the caller to read and free (heapprof run's summary: one read of a big
 * capture, not two). */
int hp_embed_symbols_keep(const char *path, const struct hp_embed_options *opts,
			  struct hp_embed_result *res, struct hp_capture *cap, int *loaded,
			  char *err, size_t errlen);

/* Appends to rec one SYMBOLS record (format.h) for image: status[i] for
 * each of the nmodules modules of the image, then the frames of
 * locs[0..nlocs) (their address, syms and nsyms; nothing else is read),
 * with a string table of their functions and files in the order of first
 * sight after "". The payload is compressed with cctx when it is not NULL
 * and that saves space. The analyzer's one encoder of the record: `heapprof
 * run` and `heapprof symbolize` (hp_embed_symbols) and the live server's
 * capture (live.c) write it so. Returns 0 or -ENOMEM. */
int hp_embed_encode(struct hp_buf *rec, const enum hp_module_status *status, size_t nmodules,
		    const struct hp_location *locs, size_t nlocs, uint64_t image,
		    struct ZSTD_CCtx_s *cctx);

#endif
