/*
 * http.h - the little HTTP/1.1 the live endpoints need: a listening socket,
 * one GET request read within bounds, one response with a length, then the
 * connection is closed.
 *
 * Bounds, so that no client can hold the server or make it grow: a request
 * (request line and headers) is at most HP_HTTP_MAX_REQUEST_BYTES, read
 * within a deadline; a request body is refused; the path and query are at
 * most HP_HTTP_MAX_TARGET_BYTES. Only GET and HEAD are served; anything
 * else is answered with the status the protocol wants (400, 405, 408, 413,
 * 414, 505) and the connection closed.
 *
 * Ordinary C, no global state: each function works on the descriptor it is
 * given, so connections can be served from several threads at once.
 */
#ifndef HP_LIVE_HTTP_H
#define HP_LIVE_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HP_HTTP_MAX_REQUEST_BYTES 8192
#define HP_HTTP_MAX_TARGET_BYTES 1024

struct hp_http_request {
	int head;                                 /* HEAD: the headers only */
	char host[256];                           /* the Host header's value; "" when none */
	char path[HP_HTTP_MAX_TARGET_BYTES + 1];  /* "/debug/pprof/heap", percent-decoded */
	char query[HP_HTTP_MAX_TARGET_BYTES + 1]; /* after '?', raw; "" when none */
};

/* Parses "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (the host then is
 * 127.0.0.1: loopback unless an address is given), binds and listens, close
 * on exec. An address that is not loopback (127.0.0.0/8, ::1) is refused
 * unless public: heapprof cannot tell who connects from another host
 * (hp_http_peer_uid). Returns 0 with *fd, or -errno after saying why in
 * one line ("heapprof: cannot listen on ADDR: ..."; -EPERM for a public
 * address). The bound port (for ":0") is put in *port when port is not
 * NULL. */
int hp_http_listen(const char *addr, int public, int *fd, unsigned *port);

/* "http://HOST:PORT" of the listening socket lfd, as a client on this
 * machine reaches it: its bound address, 127.0.0.1 (or [::1]) for a
 * wildcard one. Returns 0, or -errno with out "". */
int hp_http_url(int lfd, char *out, size_t cap);

/* The user owning the client's end of the connection fd, for a client on
 * this machine, as identd finds it: the socket in /proc/net/tcp (or tcp6)
 * whose local address is fd's peer and whose remote address is fd's own,
 * held by a process (an inode; a socket in TIME_WAIT, or closed and
 * orphaned, has none and says uid 0). Returns 0 with *uid, -ENOENT when
 * there is none (a client on another host, or gone), or -errno. */
int hp_http_peer_uid(int fd, uid_t *uid);

/* Whether a Host header names this machine by an address or "localhost"
 * (with a port or not), or is absent: a browser that a web page's own name
 * was resolved to 127.0.0.1 for (DNS rebinding) sends that name. */
int hp_http_host_is_local(const char *host);

/* Reads one request from fd within timeout_ms. Returns 0, or the HTTP
 * status to answer with (400, 405, 408, 413, 414, 505), or -errno when the
 * connection failed (nothing to answer). */
int hp_http_read_request(int fd, int timeout_ms, struct hp_http_request *req);

/* The value of a query parameter (percent-decoded) into out[0..cap).
 * Returns 1 when found, 0 when not, -EINVAL when it does not fit. */
int hp_http_query(const char *query, const char *name, char *out, size_t cap);

/* Writes a whole response: status line, Content-Type, Content-Length,
 * Connection: close, the extra header lines (each ending "\r\n", or NULL),
 * then body[0..len) unless head. Gives up after timeout_ms in all.
 * Returns 0 or -errno. */
int hp_http_respond(int fd, int timeout_ms, int status, const char *type, const char *extra,
		    const void *body, size_t len, int head);

/* The parts of hp_http_respond, for a body written in pieces (a capture
 * read from its file): the head with Content-Length len, then the body's
 * pieces, each within the deadline (CLOCK_MONOTONIC ns, hp_http_deadline).
 * Return 0 or -errno. */
uint64_t hp_http_deadline(int timeout_ms);
int hp_http_send_head(int fd, uint64_t deadline_ns, int status, const char *type, const char *extra,
		      size_t len);
int hp_http_send(int fd, uint64_t deadline_ns, const void *data, size_t len);

/* A plain-text answer: the status and one line of text. */
int hp_http_error(int fd, int timeout_ms, int status, const char *text);

/* The reason phrase of a status ("Not Found"). */
const char *hp_http_reason(int status);

#endif
