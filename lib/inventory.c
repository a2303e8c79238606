#include "config.h"

#include "inventory.h"

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
