#include "config.h"

#include <event2/buffer.h>

#include "http.h"
#include "status_page.h"

/* First cut: a placeholder page that points at /metrics (issue 14 fills
 * it in). */
int
status_page_render(const struct http_sources *src, struct evbuffer *b)
{
	(void)src;
	if (evbuffer_add_printf(b, "<!DOCTYPE html>\n<html><head><meta "
	    "charset=\"utf-8\"><title>Cohort</title></head><body><p><a "
	    "href=\"/metrics\">metrics</a></p></body></html>\n") < 0)
		return -1;
	return 0;
}
