/* CPU binding next to the GPUs (cpubind.h): CPU lists, the NUMA map and
 * the choice of cores. Pure but for cpubind_map_sysfs, which reads
 * sysfs. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cpubind.h"

/* A decimal at *p (no sign), at most max; *p moves past it. */
static int
read_num(const char **p, unsigned long max, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*out = strtoul(*p, &end, 10);
	if (errno != 0 || *out > max)
		return -1;
	*p = end;
	return 0;
}

/* One list up to end (exclusive). */
static int
list_parse(const char *s, const char *end, cpu_set_t *set, char *why,
    size_t len)
{
	const char *p = s;
	unsigned long lo, hi, c;

	CPU_ZERO(set);
	if (p == end) {
		snprintf(why, len, "an empty CPU list");
		return -1;
	}
	for (;;) {
		if (read_num(&p, CPUBIND_MAX_CPU, &lo) == -1 || p > end)
			goto bad;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			if (read_num(&p, CPUBIND_MAX_CPU, &hi) == -1 ||
			    p > end)
				goto bad;
			if (hi < lo) {
				snprintf(why, len, "CPU range %lu-%lu runs "
				    "backwards", lo, hi);
				return -1;
			}
		}
		for (c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (p == end)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	snprintf(why, len, "'%.*s' is not a CPU list (0-3,8; CPUs 0 to %d)",
	    (int)(end - s), s, CPUBIND_MAX_CPU);
	return -1;
}

int
cpubind_list_parse(const char *s, cpu_set_t *set, char *why, size_t len)
{
	return list_parse(s, s + strlen(s), set, why, len);
}

int
cpubind_list_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t at = 0;
	int c, lo, n;

	if (len == 0)
		goto full;
	buf[0] = '\0';
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		lo = c;
		while (c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, set))
			c++;
		n = lo == c ? snprintf(buf + at, len - at, "%s%d",
		    at > 0 ? "," : "", lo) : snprintf(buf + at, len - at,
		    "%s%d-%d", at > 0 ? "," : "", lo, c);
		if (n < 0 || (size_t)n >= len - at)
			goto full;
		at += (size_t)n;
	}
	return 0;
full:
	if (len > 0)
		buf[0] = '\0';
	errno = ENOSPC;
	return -1;
}

/* Insert node id with cpus, keeping ids ascending. */
static int
map_add(struct cpubind_map *m, int id, const cpu_set_t *cpus)
{
	unsigned i, k;

	if (m->nnodes == CPUBIND_MAX_NODES)
		return -1;
	for (i = 0; i < m->nnodes && m->node[i] < id; i++)
		;
	for (k = m->nnodes; k > i; k--) {
		m->node[k] = m->node[k - 1];
		m->cpus[k] = m->cpus[k - 1];
	}
	m->node[i] = id;
	m->cpus[i] = *cpus;
	m->nnodes++;
	return 0;
}

static int
map_find(const struct cpubind_map *m, int id)
{
	unsigned i;

	for (i = 0; i < m->nnodes; i++)
		if (m->node[i] == id)
			return (int)i;
	return -1;
}

int
cpubind_map_parse(const char *spec, struct cpubind_map *m, char *why,
    size_t len)
{
	const char *p = spec, *w, *word, *colon;
	unsigned long id;
	cpu_set_t set, all, both;
	char sub[160];

	memset(m, 0, sizeof(*m));
	CPU_ZERO(&all);
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		w = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		word = w;
		if ((colon = memchr(w, ':', (size_t)(p - w))) == NULL ||
		    read_num(&w, CPUBIND_MAX_NODES - 1, &id) == -1 ||
		    w != colon) {
			snprintf(why, len, "'%.*s': expected NODE:CPUS (0:0-3; "
			    "NODE 0 to %d)", (int)(p - word), word,
			    CPUBIND_MAX_NODES - 1);
			return -1;
		}
		if (list_parse(colon + 1, p, &set, sub, sizeof(sub)) == -1) {
			snprintf(why, len, "NUMA node %lu: %s", id, sub);
			return -1;
		}
		if (map_find(m, (int)id) != -1) {
			snprintf(why, len, "NUMA node %lu is given twice", id);
			return -1;
		}
		CPU_AND(&both, &all, &set);
		if (CPU_COUNT(&both) > 0) {
			cpubind_list_format(&both, sub, sizeof(sub));
			snprintf(why, len, "CPU %s is on two NUMA nodes", sub);
			return -1;
		}
		CPU_OR(&all, &all, &set);
		if (map_add(m, (int)id, &set) == -1) {
			snprintf(why, len, "more than %d NUMA nodes",
			    CPUBIND_MAX_NODES);
			return -1;
		}
	}
	if (m->nnodes == 0) {
		snprintf(why, len, "no NUMA node given (NODE:CPUS, e.g. "
		    "'0:0-3 1:4-7')");
		return -1;
	}
	return 0;
}

/* The first line of path into buf. */
static int
read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int
cpubind_map_sysfs(const char *dir, const cpu_set_t *allowed,
    struct cpubind_map *m)
{
	struct dirent *de;
	char path[4096], line[8192], why[160];
	unsigned long id;
	const char *p;
	cpu_set_t set;
	DIR *d;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if ((d = opendir(dir)) != NULL) {
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, "node", 4) != 0)
				continue;
			p = de->d_name + 4;
			if (read_num(&p, CPUBIND_MAX_NODES - 1, &id) == -1 ||
			    *p != '\0')
				continue;
			snprintf(path, sizeof(path), "%s/%s/cpulist", dir,
			    de->d_name);
			if (read_line(path, line, sizeof(line)) == -1) {
				rc = -1;
				break;
			}
			/* A memory-only node lists no CPU. */
			if (line[0] == '\0')
				CPU_ZERO(&set);
			else if (cpubind_list_parse(line, &set, why,
			    sizeof(why)) == -1) {
				errno = EINVAL;
				rc = -1;
				break;
			}
			CPU_AND(&set, &set, allowed);
			if (map_add(m, (int)id, &set) == -1) {
				errno = E2BIG;
				rc = -1;
			}
		}
		closedir(d);
	}
	if (rc == 0 && m->nnodes == 0)
		rc = map_add(m, 0, allowed);
	return rc;
}

/* Take up to *need CPUs of the given map entries (idx[0..nidx-1]), in
 * turn from each, lowest first, skipping those in skip; each goes into
 * out and skip. */
static void
take_round(const struct cpubind_map *m, const unsigned *idx, size_t nidx,
    cpu_set_t *skip, cpu_set_t *out, unsigned *need)
{
	int next[CPUBIND_MAX_NODES];
	bool any = true;
	size_t i;
	int c;

	for (i = 0; i < nidx; i++)
		next[i] = 0;
	while (*need > 0 && any) {
		any = false;
		for (i = 0; i < nidx && *need > 0; i++) {
			for (c = next[i]; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &m->cpus[idx[i]]) &&
				    !CPU_ISSET(c, skip))
					break;
			next[i] = c + 1;
			if (c >= CPU_SETSIZE)
				continue;
			CPU_SET(c, out);
			CPU_SET(c, skip);
			(*need)--;
			any = true;
		}
	}
}

int
cpubind_choose(const struct cpubind_map *m, const int *numa, size_t nnuma,
    unsigned n, const cpu_set_t *used, cpu_set_t *out, unsigned *flags)
{
	unsigned local[CPUBIND_MAX_NODES], other[CPUBIND_MAX_NODES];
	size_t nlocal = 0, nother = 0, i, k;
	cpu_set_t skip, all;
	unsigned need = n, before;
	bool mine;

	CPU_ZERO(out);
	*flags = 0;
	CPU_ZERO(&all);
	for (i = 0; i < m->nnodes; i++)
		CPU_OR(&all, &all, &m->cpus[i]);
	if (n == 0 || CPU_COUNT(&all) == 0) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < m->nnodes; i++) {
		mine = false;
		for (k = 0; k < nnuma && !mine; k++)
			mine = numa[k] >= 0 && numa[k] == m->node[i];
		if (mine)
			local[nlocal++] = (unsigned)i;
		else
			other[nother++] = (unsigned)i;
	}
	skip = *used;
	/* No NUMA node known (or none of them in the map): every node is
	 * as near as any; pack the task onto as few as it can. */
	if (nlocal == 0) {
		for (i = 0; i < nother; i++)
			local[i] = other[i];
		nlocal = nother;
		nother = 0;
		for (i = 0; i < nlocal && need > 0; i++)
			take_round(m, &local[i], 1, &skip, out, &need);
	}
	take_round(m, local, nlocal, &skip, out, &need);
	before = need;
	take_round(m, other, nother, &skip, out, &need);
	if (need < before)
		*flags |= CPUBIND_REMOTE;
	if (need == 0)
		return 0;
	/* Every free core is taken: share, nearest first. */
	skip = *out;
	take_round(m, local, nlocal, &skip, out, &need);
	before = need;
	take_round(m, other, nother, &skip, out, &need);
	if (need < before)
		*flags |= CPUBIND_REMOTE;
	*flags |= CPUBIND_SHARED;
	if (need > 0)
		*flags |= CPUBIND_SHORT;
	return 0;
}
