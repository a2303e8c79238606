#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto-raft/dqwire.h"

static int
io_all(int fd, void *p, size_t n, int wr)
{
	unsigned char *b = p;

	while (n > 0) {
		ssize_t k = wr ? write(fd, b, n) : read(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int
dq_connect(struct dq *c, const char *addr, int timeout_ms)
{
	struct sockaddr_in sa;
	struct timeval tv;
	char host[64];
	const char *colon;
	uint64_t proto = 1;	/* little-endian on x86 */
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if ((colon = strrchr(addr, ':')) == NULL ||
	    (size_t)(colon - addr) >= sizeof(host))
		return -1;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    io_all(c->fd, &proto, 8, 1) == -1) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

void
dq_close(struct dq *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
}

/* Request encoding: the body is built after an 8-byte header slot. */
struct msg {
	unsigned char b[65536 + 8];
	size_t n;
};

static void
put_u64(struct msg *m, uint64_t v)
{
	memcpy(m->b + m->n, &v, 8);
	m->n += 8;
}

static void
put_text(struct msg *m, const char *s)
{
	size_t l = strlen(s) + 1, pad = (8 - l % 8) % 8;

	memcpy(m->b + m->n, s, l);
	memset(m->b + m->n + l, 0, pad);
	m->n += l + pad;
}

static int
roundtrip(struct dq *c, struct msg *m, int type, int *rtype)
{
	uint32_t words = (uint32_t)((m->n - 8) / 8);
	unsigned char h[8];
	uint32_t rwords;

	memcpy(m->b, &words, 4);
	m->b[4] = (unsigned char)type;
	m->b[5] = 0;
	m->b[6] = m->b[7] = 0;
	if (io_all(c->fd, m->b, m->n, 1) == -1 || io_all(c->fd, h, 8, 0) == -1)
		return -1;
	memcpy(&rwords, h, 4);
	*rtype = h[4];
	if ((size_t)rwords * 8 > c->cap) {
		free(c->buf);
		c->cap = (size_t)rwords * 8;
		if ((c->buf = malloc(c->cap)) == NULL)
			return -1;
	}
	if (io_all(c->fd, c->buf, (size_t)rwords * 8, 0) == -1)
		return -1;
	if (*rtype == DQ_RES_FAILURE) {
		memcpy(&c->code, c->buf, 8);
		snprintf(c->msg, sizeof(c->msg), "%s", (char *)c->buf + 8);
		return -2;
	}
	c->code = 0;
	c->msg[0] = '\0';
	return 0;
}

static uint64_t
get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int
dq_leader(struct dq *c, uint64_t *id, char *addr, size_t len)
{
	static struct msg m;
	int rt, rc;

	m.n = 8;
	put_u64(&m, 0);
	if ((rc = roundtrip(c, &m, DQ_REQ_LEADER, &rt)) != 0)
		return rc;
	if (rt != DQ_RES_SERVER)
		return -1;
	*id = get_u64(c->buf);
	snprintf(addr, len, "%s", (char *)c->buf + 8);
	return 0;
}

int
dq_add(struct dq *c, uint64_t id, const char *addr)
{
	static struct msg m;
	int rt;

	m.n = 8;
	put_u64(&m, id);
	put_text(&m, addr);
	return roundtrip(c, &m, DQ_REQ_ADD, &rt);
}

int
dq_assign(struct dq *c, uint64_t id, uint64_t role)
{
	static struct msg m;
	int rt;

	m.n = 8;
	put_u64(&m, id);
	put_u64(&m, role);
	return roundtrip(c, &m, DQ_REQ_ASSIGN, &rt);
}

int
dq_cluster(struct dq *c)
{
	static struct msg m;
	const unsigned char *p;
	uint64_t n, i;
	int rt, rc;

	m.n = 8;
	put_u64(&m, 1);
	if ((rc = roundtrip(c, &m, DQ_REQ_CLUSTER, &rt)) != 0)
		return rc;
	if (rt != DQ_RES_SERVERS)
		return -1;
	p = c->buf;
	n = get_u64(p);
	p += 8;
	for (i = 0; i < n; i++) {
		uint64_t id = get_u64(p);
		const char *a = (const char *)p + 8;
		size_t l = strlen(a) + 1;
		p += 8 + l + (8 - l % 8) % 8;
		printf("  member id=%llu addr=%s role=%llu\n",
		    (unsigned long long)id, a,
		    (unsigned long long)get_u64(p));
		p += 8;
	}
	return 0;
}

int
dq_open(struct dq *c, const char *name)
{
	static struct msg m;
	int rt, rc;

	m.n = 8;
	put_text(&m, name);
	put_u64(&m, 0);
	put_text(&m, "volatile");
	if ((rc = roundtrip(c, &m, DQ_REQ_OPEN, &rt)) != 0)
		return rc;
	if (rt != DQ_RES_DB)
		return -1;
	memcpy(&c->db, c->buf, 4);
	return 0;
}

int
dq_exec(struct dq *c, const char *sql, uint64_t *last_id, uint64_t *changes)
{
	static struct msg m;
	int rt, rc;

	if (strlen(sql) + 64 > sizeof(m.b))
		return -1;
	m.n = 8;
	put_u64(&m, c->db);
	put_text(&m, sql);
	put_u64(&m, 0);		/* an empty parameter tuple */
	if ((rc = roundtrip(c, &m, DQ_REQ_EXEC_SQL, &rt)) != 0)
		return rc;
	if (rt != DQ_RES_RESULT)
		return -1;
	if (last_id != NULL)
		*last_id = get_u64(c->buf);
	if (changes != NULL)
		*changes = get_u64(c->buf + 8);
	return 0;
}

int
dq_query_int(struct dq *c, const char *sql, int64_t *v)
{
	static struct msg m;
	const unsigned char *p;
	uint64_t ncol;
	size_t l;
	int rt, rc;

	m.n = 8;
	put_u64(&m, c->db);
	put_text(&m, sql);
	put_u64(&m, 0);
	if ((rc = roundtrip(c, &m, DQ_REQ_QUERY_SQL, &rt)) != 0)
		return rc;
	if (rt != DQ_RES_ROWS)
		return -1;
	p = c->buf;
	ncol = get_u64(p);
	p += 8;
	for (uint64_t i = 0; i < ncol; i++) {
		l = strlen((const char *)p) + 1;
		p += l + (8 - l % 8) % 8;
	}
	/* One row: a word of 4-bit column types, then the values. */
	p += 8 * ((ncol * 4 + 63) / 64);
	*v = (int64_t)get_u64(p);
	return 0;
}
