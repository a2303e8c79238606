#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "lib/err.h"

int
cerr_set(struct cerr *err, enum err_code code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return -1;
}

void
cerr_clear(struct cerr *err)
{
	if (err == NULL)
		return;
	err->code = ERR_NONE;
	err->text[0] = '\0';
}
