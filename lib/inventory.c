#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/inventory.h"

const char *
health_name(enum health_state h)
{
	switch (h) {
	case HEALTH_OK:
		return "OK";
	case HEALTH_DEGRADED:
		return "DEGRADED";
	case HEALTH_FAILED:
		return "FAILED";
	}
	return "UNKNOWN";
}

size_t
inventory_size(unsigned ngpus)
{
	if (ngpus > INV_MAX_GPUS)
		ngpus = INV_MAX_GPUS;
	return offsetof(struct inventory, gpus) +
	    (size_t)ngpus * sizeof(struct gpu_info);
}

size_t
inventory_health_size(unsigned ngpus)
{
	if (ngpus > INV_MAX_GPUS)
		ngpus = INV_MAX_GPUS;
	return offsetof(struct node_health, gpus) +
	    (size_t)ngpus * sizeof(struct gpu_health);
}

struct inventory *
inventory_dup(const struct inventory *inv)
{
	size_t size = inventory_size(inv->ngpus);
	struct inventory *d;

	if (inv->ngpus > INV_MAX_GPUS) {
		errno = EINVAL;
		return NULL;
	}
	if ((d = malloc(size)) == NULL)
		return NULL;
	memcpy(d, inv, size);
	return d;
}

struct node_health *
inventory_health_dup(const struct node_health *h)
{
	size_t size = inventory_health_size(h->ngpus);
	struct node_health *d;

	if (h->ngpus > INV_MAX_GPUS) {
		errno = EINVAL;
		return NULL;
	}
	if ((d = malloc(size)) == NULL)
		return NULL;
	memcpy(d, h, size);
	return d;
}

bool
inventory_nic_name_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= INV_NIC_NAME_MAX - 1 ||
		    (!isalnum((unsigned char)s[i]) &&
		    strchr("._-:", s[i]) == NULL))
			return false;
	return true;
}

int
inventory_set_features(struct inventory *inv, const char *list, char *err,
    size_t errlen)
{
	char names[INV_MAX_FEATURES][INV_FEATURE_MAX + 1];
	const char *p = list, *start, *end;
	size_t len, i, n = 0, k;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' && n == 0 && p == list + strspn(list, " \t"))
			break;		/* an empty list: no features */
		start = p;
		while (*p != ',' && *p != '\0')
			p++;
		end = p;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		len = (size_t)(end - start);
		if (len == 0) {
			snprintf(err, errlen, "empty feature name at "
			    "column %zu", (size_t)(start - list) + 1);
			errno = EINVAL;
			return -1;
		}
		for (k = 0; k < len; k++)
			if (!isalnum((unsigned char)start[k]) &&
			    strchr("._-", start[k]) == NULL)
				break;
		if (k < len || len > INV_FEATURE_MAX) {
			snprintf(err, errlen, "'%.*s' is not a "
			    "feature name (letters, digits, '.', '_', '-', at "
			    "most %d)", (int)(len > 80 ? 80 : len), start,
			    INV_FEATURE_MAX);
			errno = EINVAL;
			return -1;
		}
		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len &&
			    memcmp(names[i], start, len) == 0)
				break;
		if (i == n) {
			if (n == INV_MAX_FEATURES) {
				snprintf(err, errlen, "more than %d features",
				    INV_MAX_FEATURES);
				errno = EINVAL;
				return -1;
			}
			memcpy(names[n], start, len);
			names[n++][len] = '\0';
		}
		if (*p == '\0')
			break;
		p++;
	}
	memcpy(inv->features, names, sizeof(names[0]) * n);
	inv->nfeatures = (unsigned)n;
	return 0;
}

void
inventory_features_format(const struct inventory *inv, char *buf,
    size_t size)
{
	size_t len = 0;
	unsigned i;
	int w;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < inv->nfeatures && len < size; i++) {
		w = snprintf(buf + len, size - len, "%s%s", i > 0 ? "," : "",
		    inv->features[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}
