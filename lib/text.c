/* UTF-8 and name checks (see text.h). */
#include "config.h"

#include <string.h>

#include "lib/err.h"
#include "lib/text.h"

/* Length of the valid UTF-8 sequence starting at s[0] (1..4), or 0 when
 * it is not one (RFC 3629's table: no overlongs, no surrogates, nothing
 * above U+10FFFF). */
static size_t
utf8_seq(const uint8_t *s, size_t len)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;	/* a continuation byte, or overlong C0/C1 */
	if (c < 0xe0)
		n = 2;
	else if (c < 0xf0) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* U+D800..U+DFFF */
	} else if (c < 0xf5) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else
		return 0;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

size_t
text_utf8_prefix(const uint8_t *s, size_t len)
{
	size_t at = 0, n;

	while (at < len) {
		if (s[at] < 0x80) {
			at++;
			continue;
		}
		if ((n = utf8_seq(s + at, len - at)) == 0)
			return at;
		at += n;
	}
	return len;
}

bool
text_utf8_valid(const char *s)
{
	size_t len = strlen(s);

	return text_utf8_prefix((const uint8_t *)s, len) == len;
}

/* A control character at s (valid UTF-8): its length, or 0. */
static size_t
control_len(const uint8_t *s)
{
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 1;
	if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;	/* C1: U+0080..U+009F */
	return 0;
}

long
text_control_at(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i;

	for (i = 0; p[i] != '\0'; i++)
		if (control_len(p + i) > 0)
			return (long)i;
	return -1;
}

static int
check(const char *field, const char *s, bool controls, struct cerr *err)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t len = strlen(s), at, i;

	if ((at = text_utf8_prefix(p, len)) != len)
		return cerr_set(err, ERR_INVALID, "%s: invalid UTF-8 at byte %zu",
		    field, at);
	for (i = 0; i < len; i++) {
		if (controls || control_len(p + i) == 0)
			continue;
		return cerr_set(err, ERR_INVALID, "%s: control character "
		    "0x%02x at byte %zu", field, p[i] == 0xc2 ? p[i + 1] : p[i],
		    i);
	}
	return 0;
}

int
text_check_name(const char *field, const char *s, struct cerr *err)
{
	return check(field, s, false, err);
}

int
text_check_utf8(const char *field, const char *s, struct cerr *err)
{
	return check(field, s, true, err);
}

size_t
text_utf8_fix(char *s)
{
	uint8_t *p = (uint8_t *)s;
	size_t len = strlen(s), at = 0, replaced = 0;

	while ((at += text_utf8_prefix(p + at, len - at)) < len) {
		p[at++] = '?';
		replaced++;
	}
	return replaced;
}

size_t
text_sanitize(char *s)
{
	uint8_t *p = (uint8_t *)s;
	size_t len = strlen(s), at = 0, n, k, replaced = 0;

	while (at < len) {
		if ((n = utf8_seq(p + at, len - at)) == 0) {
			p[at++] = '?';
			replaced++;
			continue;
		}
		if (p[at] == '\t') {
			p[at] = ' ';
			replaced++;
		} else if ((k = control_len(p + at)) > 0) {
			/* A C1 control is two bytes: both become '?'. */
			memset(p + at, '?', k);
			replaced += k;
		}
		at += n;
	}
	return replaced;
}
