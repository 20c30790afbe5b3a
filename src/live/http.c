/*
 * http.c - the HTTP/1.1 subset of the live endpoints (see http.h).
 *
 * One request per connection: the server answers with Connection: close,
 * so there is no keep-alive state, no pipelining and no chunked encoding.
 * Every read and write waits with poll against one deadline, never with a
 * blocking call that a silent client could hold forever.
 */
#include "http.h"

#include <arpa/inet.h>
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

/* Whether a is 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. */
static int is_loopback(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	if (a->sa_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(x) ||
		       (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
	}
	return 0;
}

int hp_http_listen(const char *addr, int public, int *fd, unsigned *port)
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
	if (!public && !is_loopback(res->ai_addr)) {
		hp_say_error("cannot listen on %s: not a loopback address: another host could "
			     "connect, and heapprof cannot tell who it is (it serves only the "
			     "program's user and root); --http-public serves whoever can connect",
			     addr);
		freeaddrinfo(res);
		return -EPERM;
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

/* The Host header's value (spaces around it trimmed) into out; "" when
 * none. A value too long is cut, which no local name is. */
static void host_header(const char *headers, char *out, size_t cap)
{
	out[0] = '\0';
	for (const char *l = headers; l && *l;
	     l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL) {
		if (strncasecmp(l, "Host:", 5) == 0) {
			const char *v = l + 5, *e = strstr(v, "\r\n");
			size_t n;
			while (*v == ' ' || *v == '\t')
				v++;
			n = e ? (size_t)(e - v) : strlen(v);
			while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
				n--;
			if (n < cap)
				snprintf(out, cap, "%.*s", (int)n, v);
			else
				snprintf(out, cap, "?"); /* no local name is that long */
			return;
		}
	}
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
	host_header(eol + 2, req->host, sizeof req->host);
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
	case 403: return "Forbidden";
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

int hp_http_url(int lfd, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	char host[INET6_ADDRSTRLEN] = "";
	unsigned port;

	out[0] = '\0';
	if (getsockname(lfd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		port = ntohs(a->sin_port);
		if (a->sin_addr.s_addr == htonl(INADDR_ANY))
			snprintf(host, sizeof host, "127.0.0.1");
		else
			inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		snprintf(out, cap, "http://%s:%u", host, port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		port = ntohs(a->sin6_port);
		if (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr))
			snprintf(host, sizeof host, "::1");
		else
			inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		snprintf(out, cap, "http://[%s]:%u", host, port);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

/* "ADDR:PORT" as /proc/net/tcp prints a socket's address: the IPv4
 * address as the 32-bit word it is in memory, in hex. */
static void tcp4_text(char *out, size_t cap, const uint8_t a[4], unsigned port)
{
	uint32_t w;

	memcpy(&w, a, 4);
	snprintf(out, cap, "%08X:%04X", (unsigned)w, port);
}

/* The same for /proc/net/tcp6: four 32-bit words. */
static void tcp6_text(char *out, size_t cap, const uint8_t a[16], unsigned port)
{
	uint32_t w[4];

	memcpy(w, a, 16);
	snprintf(out, cap, "%08X%08X%08X%08X:%04X", (unsigned)w[0], (unsigned)w[1], (unsigned)w[2],
		 (unsigned)w[3], port);
}

/* Finds in table (/proc/net/tcp or tcp6) the socket whose local address is
 * local and whose remote one is remote (tcp*_text), held by a process.
 * Returns 0 with *uid, -ENOENT, or -errno. */
static int find_socket(const char *table, const char *local, const char *remote, uid_t *uid)
{
	FILE *f = fopen(table, "re");
	char *line = NULL, l[80], r[80];
	size_t cap = 0;
	int ret = -ENOENT;

	if (!f)
		return errno == ENOENT ? -ENOENT : -errno;
	while (ret == -ENOENT && getline(&line, &cap, f) > 0) {
		unsigned long u, inode;
		unsigned st;
		/* sl: local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*u: %79s %79s %x %*s %*s %*s %lu %*u %lu", l, r, &st, &u,
			   &inode) != 5)
			continue;
		if (inode && strcasecmp(l, local) == 0 && strcasecmp(r, remote) == 0) {
			*uid = (uid_t)u;
			ret = 0;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

/* An address of a socket as 16 bytes of IPv6 (an IPv4 one mapped) and a
 * port. Returns 0 or -EAFNOSUPPORT. */
static int as_v6(const struct sockaddr_storage *ss, uint8_t a[16], unsigned *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in = (const struct sockaddr_in6 *)ss;
		memcpy(a, &in->sin6_addr, 16);
		*port = ntohs(in->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

int hp_http_peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_storage peer, self;
	socklen_t plen = sizeof peer, slen = sizeof self;
	uint8_t pa[16], sa[16];
	unsigned pport, sport;
	char local[80], remote[80];
	int ret;

	if (getpeername(fd, (struct sockaddr *)&peer, &plen) < 0 ||
	    getsockname(fd, (struct sockaddr *)&self, &slen) < 0)
		return -errno;
	if (as_v6(&peer, pa, &pport) || as_v6(&self, sa, &sport))
		return -EAFNOSUPPORT;
	/* The client's socket is an IPv4 one in tcp when both ends are IPv4
	 * (or mapped), else an IPv6 one in tcp6 (where an IPv4 address shows
	 * mapped). The client's local address is our peer. */
	if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)pa) &&
	    IN6_IS_ADDR_V4MAPPED((struct in6_addr *)sa)) {
		tcp4_text(local, sizeof local, pa + 12, pport);
		tcp4_text(remote, sizeof remote, sa + 12, sport);
		ret = find_socket("/proc/self/net/tcp", local, remote, uid);
		if (ret != -ENOENT)
			return ret;
	}
	tcp6_text(local, sizeof local, pa, pport);
	tcp6_text(remote, sizeof remote, sa, sport);
	return find_socket("/proc/self/net/tcp6", local, remote, uid);
}

int hp_http_host_is_local(const char *host)
{
	char name[256];
	const char *colon;
	size_t n;
	struct in6_addr a6;
	struct in_addr a4;

	if (!*host)
		return 1;
	if (host[0] == '[') { /* [V6]:PORT */
		const char *end = strchr(host, ']');
		n = end ? (size_t)(end - host - 1) : 0;
		if (!end || n >= sizeof name || (end[1] && end[1] != ':'))
			return 0;
		memcpy(name, host + 1, n);
		name[n] = '\0';
		return inet_pton(AF_INET6, name, &a6) == 1;
	}
	colon = strchr(host, ':');
	n = colon ? (size_t)(colon - host) : strlen(host);
	if (n >= sizeof name || (colon && strspn(colon + 1, "0123456789") != strlen(colon + 1)))
		return 0;
	memcpy(name, host, n);
	name[n] = '\0';
	return strcasecmp(name, "localhost") == 0 || strcasecmp(name, "localhost.") == 0 ||
	       inet_pton(AF_INET, name, &a4) == 1;
}
