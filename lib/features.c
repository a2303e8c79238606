/* Features derived from a node's inventory (see features.h). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "lib/features.h"

static bool
alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int
features_model_name(const char *model, char *buf, size_t size)
{
	char tmp[INV_FEATURE_MAX + 2];
	size_t len = 0, cap, cut;
	const char *p;
	bool sep = false;

	if (size == 0)
		return -1;
	cap = size - 1 < INV_FEATURE_MAX ? size - 1 : INV_FEATURE_MAX;
	/* Up to one character past cap, to know whether a word was cut. */
	for (p = model != NULL ? model : ""; *p != '\0' && len <= cap; p++) {
		if (!alnum(*p)) {
			sep = len > 0;
			continue;
		}
		if (sep)
			tmp[len++] = '-';
		sep = false;
		if (len <= cap)
			tmp[len++] = lower(*p);
	}
	if (len > cap) {
		/* Too long: whole words only, unless the first is too long
		 * itself. */
		cut = cap;
		if (tmp[cap] != '-') {
			while (cut > 0 && tmp[cut] != '-')
				cut--;
			if (cut == 0)
				cut = cap;
		}
		len = cut;
	}
	memcpy(buf, tmp, len);
	buf[len] = '\0';
	return len > 0 ? 0 : -1;
}

/* Words that say who made or sells the GPU, not which it is. */
static bool
brand_word(const char *w, size_t len)
{
	static const char *const brands[] = {
		"nvidia", "amd", "intel", "tesla", "geforce", "quadro",
		"instinct", "radeon",
	};
	size_t i;

	for (i = 0; i < sizeof(brands) / sizeof(brands[0]); i++)
		if (strlen(brands[i]) == len && memcmp(brands[i], w, len) == 0)
			return true;
	return false;
}

/* "80gb", "16g", "512mb": digits then a size unit. */
static bool
memory_word(const char *w, size_t len)
{
	size_t d = 0;

	while (d < len && w[d] >= '0' && w[d] <= '9')
		d++;
	if (d == 0 || d == len)
		return false;
	len -= d;
	w += d;
	return (len == 1 && (w[0] == 'g' || w[0] == 't')) ||
	    (len == 2 && (w[0] == 'g' || w[0] == 'm' || w[0] == 't') &&
	    w[1] == 'b');
}

static bool
has_digit(const char *w, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (w[i] >= '0' && w[i] <= '9')
			return true;
	return false;
}

static bool
all_letters(const char *w, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (w[i] < 'a' || w[i] > 'z')
			return false;
	return len > 0;
}

int
features_model_family(const char *model, char *buf, size_t size)
{
	char name[INV_FEATURE_MAX + 1];
	const char *w, *prev = NULL, *e;
	size_t len, plen = 0;

	if (size == 0 || features_model_name(model, name, sizeof(name)) == -1)
		return -1;
	for (w = name; *w != '\0'; w = *e != '\0' ? e + 1 : e) {
		e = strchr(w, '-');
		if (e == NULL)
			e = w + strlen(w);
		len = (size_t)(e - w);
		if (brand_word(w, len) || memory_word(w, len) ||
		    !has_digit(w, len)) {
			if (!brand_word(w, len) && all_letters(w, len)) {
				prev = w;
				plen = len;
			} else
				prev = NULL;
			continue;
		}
		if (strspn(w, "0123456789") == len) {
			/* Digits alone: "rtx 4090" is the rtx4090. */
			if (prev == NULL || plen + len >= size) {
				prev = NULL;
				continue;
			}
			memcpy(buf, prev, plen);
			memcpy(buf + plen, w, len);
			buf[plen + len] = '\0';
			return 0;
		}
		if (len >= size)
			return -1;
		memcpy(buf, w, len);
		buf[len] = '\0';
		return 0;
	}
	return -1;
}

static void
add(struct features_derived *out, const char *name)
{
	unsigned i;

	for (i = 0; i < out->n; i++)
		if (strcmp(out->v[i], name) == 0)
			return;
	if (out->n < FEATURES_DERIVED_MAX)
		strcpy(out->v[out->n++], name);
}

/* The feature fn gives every GPU of inv, into buf; 0 or -1 when some GPU
 * gives none or another. */
static int
common(const struct inventory *inv, int (*fn)(const char *, char *,
    size_t), char *buf, size_t size)
{
	char other[INV_FEATURE_MAX + 1];
	unsigned i;

	if (inv->ngpus == 0 || fn(inv->gpus[0].model, buf, size) == -1)
		return -1;
	for (i = 1; i < inv->ngpus && i < INV_MAX_GPUS; i++)
		if (fn(inv->gpus[i].model, other, sizeof(other)) == -1 ||
		    strcmp(other, buf) != 0)
			return -1;
	return 0;
}

static bool
one_nvlink_domain(const struct inventory *inv)
{
	unsigned i;

	if (inv->ngpus < 2 || inv->gpus[0].nvlink_domain < 0)
		return false;
	for (i = 1; i < inv->ngpus && i < INV_MAX_GPUS; i++)
		if (inv->gpus[i].nvlink_domain != inv->gpus[0].nvlink_domain)
			return false;
	return true;
}

void
features_derive(const struct inventory *inv, struct features_derived *out)
{
	char buf[INV_FEATURE_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (common(inv, features_model_family, buf, sizeof(buf)) == 0)
		add(out, buf);
	if (common(inv, features_model_name, buf, sizeof(buf)) == 0)
		add(out, buf);
	if (one_nvlink_domain(inv))
		add(out, "nvlink");
}

size_t
features_list(const struct inventory *inv, const struct features_derived *d,
    const char **v)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < inv->nfeatures && i < INV_MAX_FEATURES; i++)
		v[n++] = inv->features[i];
	for (i = 0; d != NULL && i < d->n && i < FEATURES_DERIVED_MAX; i++)
		v[n++] = d->v[i];
	return n;
}
