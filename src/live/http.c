/*
 * http.c - the HTTP/1.1 subset of the live endpoints (see http.h).
 *
 * One request per connection: the server answers with Connection: close,
 * so there is no keep-alive state, no pipelining and no chunked encoding.
 * Every read and write waits with poll against one deadline, never with a
 * blocking call that a silent client could hold forever.
 */
#include "http.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/say.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hp_http_deadline(int timeout_ms)
{
	return now_ns() + (uint64_t)timeout_ms * 1000000u;
}

/* Waits until fd is ready for events or the deadline passes. Returns 0,
 * -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = now_ns();
		struct pollfd p = {fd, events, 0};
		int ms, n;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		ms = (int)((deadline_ns - now + 999999) / 1000000);
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

int hp_http_listen(const char *addr, int *fd, unsigned *port)
{
	char host[256] = "127.0.0.1", serv[32];
	struct addrinfo hints = {0}, *res = NULL;
	const char *colon = strrchr(addr, ':'), *p = addr;
	size_t hlen = 0;
	int s = -1, one = 1, ret;

	/* The port is what follows the last ':' (all of it without one). */
	if (colon) {
		hlen = (size_t)(colon - addr);
		p = colon + 1;
		if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') { /* [::1]:6060 */
			addr++;
			hlen -= 2;
		}
		if (hlen >= sizeof host) {
			hp_say_error("cannot listen on %s: the host is too long", addr);
			return -EINVAL;
		}
		if (hlen) {
			memcpy(host, addr, hlen);
			host[hlen] = '\0';
		}
	}
	if (!*p || strlen(p) >= sizeof serv || strspn(p, "0123456789") != strlen(p) ||
	    atol(p) > 65535) {
		hp_say_error("cannot listen on %s: give HOST:PORT, a port from 0 to 65535", addr);
		return -EINVAL;
	}
	snprintf(serv, sizeof serv, "%s", p);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	ret = getaddrinfo(host, serv, &hints, &res);
	if (ret) {
		hp_say_error("cannot listen on %s: %s", addr, gai_strerror(ret));
		return -EINVAL;
	}
	s = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		goto err;
	/* A restarted server may take its port back while old connections
	 * linger in TIME_WAIT; it never takes a port another socket listens on. */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(s, res->ai_addr, res->ai_addrlen) < 0 || listen(s, 64) < 0)
		goto err;
	if (port) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof ss;
		*port = 0;
		if (getsockname(s, (struct sockaddr *)&ss, &len) == 0)
			*port = ntohs(ss.ss_family == AF_INET6
					      ? ((struct sockaddr_in6 *)&ss)->sin6_port
					      : ((struct sockaddr_in *)&ss)->sin_port);
	}
	freeaddrinfo(res);
	*fd = s;
	return 0;
err:
	ret = -errno;
	hp_say_error("cannot listen on %s: %s", addr, strerror(errno));
	if (s >= 0)
		close(s);
	freeaddrinfo(res);
	return ret;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes s[0..n) into out[0..cap) ('+' as a space when plus).
 * Returns 0, or -EINVAL for a bad escape, a NUL, or no room. */
static int decode(const char *s, size_t n, char *out, size_t cap, int plus)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n || (hi = hexval(s[i + 1])) < 0 ||
			    (lo = hexval(s[i + 2])) < 0)
				return -EINVAL;
			c = hi * 16 + lo;
			i += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		if (c == 0 || o + 1 >= cap)
			return -EINVAL;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

int hp_http_query(const char *query, const char *name, char *out, size_t cap)
{
	size_t nlen = strlen(name);
	const char *p = query;

	while (p && *p) {
		const char *end = strchr(p, '&'), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		eq = memchr(p, '=', len);
		if ((eq ? (size_t)(eq - p) : len) == nlen && strncmp(p, name, nlen) == 0) {
			if (!eq)
				return cap ? (out[0] = '\0', 1) : -EINVAL;
			return decode(eq + 1, len - (size_t)(eq + 1 - p), out, cap, 1) ? -EINVAL
										       : 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* Whether the header block (lines after the request line) announces a
 * body: a request body is not read, so it is refused. */
static int has_body(const char *headers)
{
	for (const char *l = headers; l && *l;
	     l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL) {
		if (strncasecmp(l, "Transfer-Encoding:", 18) == 0)
			return 1;
		if (strncasecmp(l, "Content-Length:", 15) == 0) {
			const char *v = l + 15;
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v != '0' || (v[1] != '\r' && v[1] != ' '))
				return 1;
		}
	}
	return 0;
}

int hp_http_read_request(int fd, int timeout_ms, struct hp_http_request *req)
{
	char buf[HP_HTTP_MAX_REQUEST_BYTES + 1], *end = NULL, *sp1, *sp2, *q, *eol;
	uint64_t deadline = hp_http_deadline(timeout_ms);
	size_t len = 0;
	int ret;

	memset(req, 0, sizeof *req);
	while (!end) {
		ssize_t n;
		if (len == HP_HTTP_MAX_REQUEST_BYTES)
			return 413; /* headers too large: the connection is closed */
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret == -ETIMEDOUT)
			return len ? 408 : -ETIMEDOUT;
		if (ret)
			return ret;
		n = recv(fd, buf + len, HP_HTTP_MAX_REQUEST_BYTES - len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return len ? 400 : (n < 0 ? -errno : -ECONNRESET);
		len += (size_t)n;
		buf[len] = '\0';
		if (memchr(buf, '\0', len))
			return 400;
		end = strstr(buf, "\r\n\r\n");
	}
	end[2] = '\0'; /* keep the last header's CRLF */
	eol = strstr(buf, "\r\n");
	*eol = '\0';
	/* METHOD SP TARGET SP HTTP/1.x */
	sp1 = strchr(buf, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || sp1[1] != '/')
		return 400;
	*sp1 = *sp2 = '\0';
	if (strncmp(sp2 + 1, "HTTP/1.", 7) != 0 || !sp2[8] || sp2[9])
		return strncmp(sp2 + 1, "HTTP/", 5) == 0 ? 505 : 400;
	if (strcmp(buf, "GET") == 0)
		req->head = 0;
	else if (strcmp(buf, "HEAD") == 0)
		req->head = 1;
	else
		return 405;
	if (has_body(eol + 2))
		return 400;
	if (strlen(sp1 + 1) > HP_HTTP_MAX_TARGET_BYTES)
		return 414;
	q = strchr(sp1 + 1, '?');
	if (q) {
		*q = '\0';
		snprintf(req->query, sizeof req->query, "%s", q + 1);
	}
	if (decode(sp1 + 1, strlen(sp1 + 1), req->path, sizeof req->path, 0))
		return 400;
	return 0;
}

const char *hp_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Request Header Fields Too Large";
	case 414: return "URI Too Long";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

int hp_http_send(int fd, uint64_t deadline_ns, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		int ret = wait_fd(fd, POLLOUT, deadline_ns);
		ssize_t n;
		if (ret)
			return ret;
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int hp_http_send_head(int fd, uint64_t deadline_ns, int status, const char *type, const char *extra,
		      size_t len)
{
	char head[1024];
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
			 "Connection: close\r\n%s\r\n",
			 status, hp_http_reason(status), type, len, extra ? extra : "");

	if (n < 0 || (size_t)n >= sizeof head)
		return -EINVAL;
	return hp_http_send(fd, deadline_ns, head, (size_t)n);
}

int hp_http_respond(int fd, int timeout_ms, int status, const char *type, const char *extra,
		    const void *body, size_t len, int head)
{
	uint64_t deadline = hp_http_deadline(timeout_ms);
	int ret = hp_http_send_head(fd, deadline, status, type, extra, len);

	if (!ret && !head && len)
		ret = hp_http_send(fd, deadline, body, len);
	return ret;
}

int hp_http_error(int fd, int timeout_ms, int status, const char *text)
{
	char body[1024];
	int n = snprintf(body, sizeof body, "%s\n", text);

	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof body)
		n = sizeof body - 1;
	return hp_http_respond(fd, timeout_ms, status, "text/plain; charset=utf-8", NULL, body,
			       (size_t)n, 0);
}
