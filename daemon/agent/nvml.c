/* NVML loaded at run time: see nvml.h for why, and for the types.
 *
 * The library is opened RTLD_LOCAL so that its symbols (and those of a
 * fake NVML in the tests) cannot interpose on anything else in the
 * agent, and RTLD_NOW so that a broken installation fails here, at
 * start, with dlerror's text, rather than at the first call. */
#include "config.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/nvml.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"

/* dlsym returns an object pointer; POSIX guarantees it converts to a
 * function pointer, which is stored through memcpy below. */
_Static_assert(sizeof(void *) == sizeof(nvml_return_t (*)(void)),
    "function and object pointers differ in size");

static const struct nvml_sym {
	const char *name;
	size_t off;
	int required;
} nvml_syms[] = {
#define REQ(f) { #f, offsetof(struct nvml, f), 1 }
#define OPT(f) { #f, offsetof(struct nvml, f), 0 }
	REQ(nvmlInit_v2),
	REQ(nvmlShutdown),
	REQ(nvmlErrorString),
	REQ(nvmlDeviceGetCount_v2),
	REQ(nvmlDeviceGetHandleByIndex_v2),
	REQ(nvmlDeviceGetName),
	REQ(nvmlDeviceGetUUID),
	REQ(nvmlDeviceGetMemoryInfo),
	REQ(nvmlDeviceGetPciInfo_v3),
	REQ(nvmlDeviceGetNvLinkState),
	REQ(nvmlDeviceGetNvLinkRemotePciInfo_v2),
	REQ(nvmlDeviceGetTopologyCommonAncestor),
	OPT(nvmlDeviceGetNumaNodeId),
	OPT(nvmlEventSetCreate),
	OPT(nvmlEventSetFree),
	OPT(nvmlDeviceRegisterEvents),
	OPT(nvmlEventSetWait_v2),
	OPT(nvmlDeviceGetTotalEccErrors),
	OPT(nvmlDeviceGetTemperature),
#undef REQ
#undef OPT
};
#define NVML_NSYMS (sizeof(nvml_syms) / sizeof(nvml_syms[0]))

struct nvml *
nvml_create(const char *libpath, struct cerr *err)
{
	struct nvml *nv;
	const char *lib = libpath != NULL ? libpath : NVML_DEFAULT_LIBRARY;
	const char *msg;
	void *sym;
	size_t i;
	nvml_return_t rc;

	if ((nv = calloc(1, sizeof(*nv))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if ((nv->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		msg = dlerror();
		cerr_set(err, ERR_UNAVAILABLE, "cannot load NVML: %s",
		    msg != NULL ? msg : lib);
		free(nv);
		return NULL;
	}
	for (i = 0; i < NVML_NSYMS; i++) {
		dlerror();
		sym = dlsym(nv->dl, nvml_syms[i].name);
		if (sym == NULL && nvml_syms[i].required) {
			msg = dlerror();
			cerr_set(err, ERR_UNAVAILABLE,
			    "%s is not a usable NVML (no %s): %s", lib,
			    nvml_syms[i].name, msg != NULL ? msg : "");
			goto fail;
		}
		memcpy((char *)nv + nvml_syms[i].off, &sym, sizeof(sym));
	}
	if ((rc = nv->nvmlInit_v2()) != NVML_SUCCESS) {
		cerr_set(err, ERR_UNAVAILABLE, "nvmlInit: %s",
		    nvml_strerror(nv, rc));
		goto fail;
	}
	nv->initialized = 1;
	return nv;

fail:
	dlclose(nv->dl);
	free(nv);
	return NULL;
}

void
nvml_destroy(struct nvml *nv)
{
	if (nv == NULL)
		return;
	/* NVML counts initialisations; ours must be undone before the
	 * library goes, or a later nvml_create in the same process (a
	 * reload) would find it half alive. */
	if (nv->initialized)
		nv->nvmlShutdown();
	dlclose(nv->dl);
	free(nv);
}

const char *
nvml_strerror(const struct nvml *nv, nvml_return_t rc)
{
	const char *s = NULL;

	if (nv != NULL && nv->nvmlErrorString != NULL)
		s = nv->nvmlErrorString(rc);
	return s != NULL ? s : "unknown NVML error";
}
