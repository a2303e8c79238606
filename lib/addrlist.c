/* Lists of controller addresses and the walk that follows the leader
 * (see addrlist.h). */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/addrlist.h"

int
addrlist_addr_parse(const char *s, struct addrlist_addr *out,
    struct cerr *err)
{
	struct addrlist_addr a;

	memset(&a, 0, sizeof(a));
	if (conf_parse_hostport(s, a.host, sizeof(a.host), &a.port, false,
	    err) == -1)
		return -1;
	*out = a;
	return 0;
}

int
addrlist_parse(const char *s, struct addrlist *out, struct cerr *err)
{
	struct addrlist l;
	char entry[CONF_HOST_MAX + 16];
	const char *p = s, *end, *b, *e;
	struct cerr why;
	size_t n = 0, len;
	int dup;

	memset(&l, 0, sizeof(l));
	for (;;) {
		end = strchr(p, ',');
		e = end != NULL ? end : p + strlen(p);
		for (b = p; b < e && isspace((unsigned char)*b); b++)
			;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		len = (size_t)(e - b);
		if (len == 0)
			return cerr_set(err, ERR_INVALID, n == 0 && end == NULL ?
			    "empty address list (expected HOST:PORT[,HOST:PORT"
			    "...])" : "address %zu of '%.200s' is empty", n + 1,
			    s);
		if (n == ADDRLIST_MAX)
			return cerr_set(err, ERR_INVALID, "more than %d "
			    "addresses in '%.200s'", ADDRLIST_MAX, s);
		if (len >= sizeof(entry))
			return cerr_set(err, ERR_INVALID, "address %zu "
			    "('%.40s...'): longer than a HOST:PORT can be",
			    n + 1, b);
		memcpy(entry, b, len);
		entry[len] = '\0';
		cerr_clear(&why);
		if (addrlist_addr_parse(entry, &l.a[n], &why) == -1) {
			/* One address: its own words, as before lists. */
			if (n == 0 && end == NULL)
				return cerr_set(err, ERR_INVALID, "%s",
				    why.text);
			return cerr_set(err, ERR_INVALID, "address %zu ('%s'): "
			    "%s", n + 1, entry, why.text);
		}
		l.n = n;	/* the entries before this one */
		if ((dup = addrlist_find(&l, &l.a[n])) != -1)
			return cerr_set(err, ERR_INVALID, "address %zu ('%s') "
			    "repeats address %d", n + 1, entry, dup + 1);
		n++;
		if (end == NULL)
			break;
		p = end + 1;
	}
	l.n = n;
	*out = l;
	return 0;
}

const char *
addrlist_addr_format(const struct addrlist_addr *a, char *buf, size_t len)
{
	if (strchr(a->host, ':') != NULL)
		snprintf(buf, len, "[%s]:%u", a->host, a->port);
	else
		snprintf(buf, len, "%s:%u", a->host, a->port);
	return buf;
}

bool
addrlist_addr_eq(const struct addrlist_addr *a, const struct addrlist_addr *b)
{
	return a->port == b->port && strcasecmp(a->host, b->host) == 0;
}

int
addrlist_find(const struct addrlist *l, const struct addrlist_addr *a)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (addrlist_addr_eq(&l->a[i], a))
			return (int)i;
	return -1;
}

void
addrlist_walk_init(struct addrlist_walk *w, const struct addrlist *list,
    const struct addrlist_addr *leader)
{
	memset(w, 0, sizeof(*w));
	w->list = list;
	if (leader != NULL) {
		w->leader = *leader;
		w->has_leader = true;
	}
}

static void
addrlist_walk_mark(struct addrlist_walk *w, const struct addrlist_addr *a)
{
	int i = addrlist_find(w->list, a);

	if (i >= 0)
		w->tried |= 1u << i;
}

bool
addrlist_walk_next(struct addrlist_walk *w, struct addrlist_addr *out)
{
	size_t i;

	if (w->has_redirect) {
		w->has_redirect = false;
		*out = w->redirect;
		addrlist_walk_mark(w, out);
		return true;
	}
	if (w->has_leader && !w->leader_tried) {
		w->leader_tried = true;
		*out = w->leader;
		addrlist_walk_mark(w, out);
		return true;
	}
	for (i = 0; i < w->list->n; i++)
		if (!(w->tried & (1u << i))) {
			w->tried |= 1u << i;
			*out = w->list->a[i];
			return true;
		}
	return false;
}

bool
addrlist_walk_redirect(struct addrlist_walk *w,
    const struct addrlist_addr *leader)
{
	if (w->redirects >= ADDRLIST_MAX_REDIRECTS)
		return false;
	w->redirects++;
	w->redirect = *leader;
	w->has_redirect = true;
	return true;
}

void
addrlist_walk_found(struct addrlist_walk *w, const struct addrlist_addr *a)
{
	w->leader = *a;
	w->has_leader = true;
}

uint64_t
addrlist_walk_round(struct addrlist_walk *w)
{
	unsigned shift = w->round < 10 ? w->round : 10;
	uint64_t ms = (uint64_t)ADDRLIST_BACKOFF_MIN_MS << shift;

	w->round++;
	w->tried = 0;
	w->leader_tried = false;
	w->redirects = 0;
	w->has_redirect = false;
	return ms < ADDRLIST_BACKOFF_MAX_MS ? ms : ADDRLIST_BACKOFF_MAX_MS;
}
