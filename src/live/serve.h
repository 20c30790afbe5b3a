/*
 * serve.h - the live HTTP endpoints of a running program, served by the
 * heapprof process (heapprof run --http, heapprof serve --pid), never by a
 * thread in the program (DESIGN.md, "Live").
 *
 *   /debug/pprof/                 an index page
 *   /debug/pprof/heap             gzipped profile.proto (pprof.h), symbolized;
 *                                 ?debug=1: gperftools' heap profile text;
 *                                 ?seconds=N: the delta over the next N seconds
 *   /debug/pprof/allocs           the same, alloc_space the default sample
 *                                 type (Go's; Parca's and Alloy's memory path)
 *   /debug/heapprof/capture       the capture file as of now, symbols appended
 *   /metrics                      heap in use, peak, RSS, allocations, in
 *                                 Prometheus' text format
 *
 * Each request asks the program for a snapshot (live.h) unless one asked
 * for after the request arrived is at hand: concurrent scrapers share a
 * snapshot, and snapshots are taken one at a time, under the server's lock.
 * Every snapshot is appended to the program's capture file, so they are
 * rationed (serve.c, SNAPSHOT_*): at most one a second, and for large ones
 * at most 64 KiB a second on average; a request waits up to 2 s for the
 * next, or is served the last one with an Age header.
 * Connections are served by threads of their own, at most
 * HP_SERVE_MAX_CONNECTIONS at once (more are answered 503 at once), each
 * within time bounds (http.h).
 *
 * Who may read: by default the capture file's owner and root, on this
 * machine (hp_server_start); --http-public opts out.
 *
 * The threads live in the heapprof process; the program has none of ours.
 */
#ifndef HP_LIVE_SERVE_H
#define HP_LIVE_SERVE_H

#include <sys/types.h>

#include "live.h"

#define HP_SERVE_MAX_CONNECTIONS 64
#define HP_SERVE_MAX_SECONDS 3600 /* the longest ?seconds=N */

struct hp_server;

/* Serves on the listening socket lfd (hp_http_listen; the server owns it
 * from here) the capture at path of process pid, asked for snapshots with
 * signal sig, or by asker when not NULL (live.h; it must outlive the
 * server). Unless public, a request is answered only for a client on
 * this machine whose socket belongs to root or to the capture file's
 * owner (the program's user when the file does not exist yet), found with
 * hp_http_peer_uid, and whose Host header names this machine by address or
 * as localhost (hp_http_host_is_local); anyone else is answered 403: the
 * endpoint gives nobody more than the capture file's 0600 gives them.
 * Returns 0, or -errno after saying why. */
int hp_server_start(struct hp_server **out, int lfd, const char *path, pid_t pid, int sig,
		    int public, const struct hp_live_asker *asker);

/* Stops accepting, ends the waits in progress, waits for the connections
 * being served (each is bounded in time), frees everything. */
void hp_server_stop(struct hp_server *s);

#endif
