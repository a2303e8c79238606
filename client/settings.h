/* Where the CLI finds its controller and credentials: each of server,
 * cert, key and ca comes from its flag, else its environment variable
 * (COHORT_SERVER, COHORT_CERT, COHORT_KEY, COHORT_CA), else
 * ~/.config/cohort/client.conf ([client] server=, cert=, key=, ca=). */
#ifndef COHORT_CLIENT_SETTINGS_H
#define COHORT_CLIENT_SETTINGS_H

#include "lib/err.h"

struct settings {
	char *server;
	char *cert;
	char *key;
	char *ca;
};

/* Fill s from the flag values (NULL when not given), the environment and
 * the config file (path NULL: $XDG_CONFIG_HOME or ~/.config, then
 * cohort/client.conf; a missing file is fine). Returns 0, or -1 with err
 * (ERR_INVALID: a bad file, naming file and line; or a setting that is
 * missing everywhere, naming the flag and variable that would give it). */
int settings_resolve(struct settings *s, const char *server, const char *cert,
    const char *key, const char *ca, const char *path, struct cerr *err);
void settings_clear(struct settings *s);

#endif
