/* What the CLI's commands share: aligned tables, times, the job as JSON,
 * one-line error messages with their exit codes, and opening the
 * connection with the connection flags a command was given. */
#ifndef COHORT_CLIENT_OUTPUT_H
#define COHORT_CLIENT_OUTPUT_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "client/conn.h"
#include "client/settings.h"
#include "lib/err.h"
#include "lib/job.h"

/* A table printed with aligned columns (as squeue or kubectl get do):
 * every column as wide as its widest cell, two spaces between columns,
 * no padding after the last one. */
struct output_table;

/* headers: ncols strings. NULL on ENOMEM. */
struct output_table *output_table_new(size_t ncols,
    const char *const *headers);
/* Append a row of ncols strings (copied; NULL prints as "-").
 * 0, or -1 (ENOMEM). */
int output_table_add(struct output_table *t, const char *const *cells);
void output_table_print(const struct output_table *t, FILE *fp);
void output_table_free(struct output_table *t);

/* "Key: value" lines with the values aligned. Same contract; a NULL key
 * continues the previous key's value on a line of its own. */
struct output_table *output_fields_new(void);
int output_fields_add(struct output_table *t, const char *key,
    const char *value);
/* The same with the value formatted. */
int output_fields_addf(struct output_table *t, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Times in milliseconds since the epoch: for people, local time with its
 * zone ("2026-11-30 06:30:12 UTC"), the one form every command prints
 * and output_parse_since reads back; for JSON, ISO-8601 UTC with "Z"
 * ("2026-11-30T06:30:12Z"). Both write "-" for 0 (never happened).
 * Return buf. */
#define OUTPUT_TIME_LEN 48
char *output_time_local(int64_t ms, char *buf, size_t len);
char *output_time_utc(int64_t ms, char *buf, size_t len);
/* The same with milliseconds: "2026-11-30 06:30:12.345 UTC" and
 * "2026-11-30T06:30:12.345Z" (events, where order within a second
 * matters). */
char *output_time_local_ms(int64_t ms, char *buf, size_t len);
char *output_time_utc_ms(int64_t ms, char *buf, size_t len);

/* A time a user gives (--since): an ISO-8601 date-time, local unless it
 * ends in "Z", an offset or " UTC" ("2026-11-30T06:00:00",
 * "2026-11-30 06:00", "2026-11-30T06:00:00.250Z", "2026-11-30",
 * "2026-11-30 06:00:00 CET" in the local zone, as printed), or a
 * duration meaning that long before now_ms ("10m", "2h", "1-00:00:00").
 * 0 with *ms set, or -1 (errno EINVAL or ERANGE). */
int output_parse_since(const char *s, int64_t now_ms, int64_t *ms);

/* Milliseconds as a duration for people: "00:01:23" or "00:00:12.345"
 * (D-HH:MM:SS as elsewhere, milliseconds only when not whole). */
char *output_duration_ms(uint64_t ms, char *buf, size_t len);

/* "USR1@60": a signal by name (or number when it has none) and seconds. */
char *output_signal(int sig, uint32_t secs, char *buf, size_t len);

/* argv as one line a shell would split back into the same words.
 * malloc'd, NULL on ENOMEM. */
char *output_shell_quote(char *const *argv, size_t argc);

/* Node-local GPU indices in a bitmask (bit i: GPU i) as a list with
 * ranges: "1-3,5"; "-" for none. Returns buf (truncated to fit len). */
#define OUTPUT_PEERS_LEN 200
char *output_gpu_peers(uint64_t mask, char *buf, size_t len);

/* A GPU's NVLink connectivity for a table cell: the domain and the peers,
 * "0 (1-3)"; "- (1)" with peers but no domain; "2" with a domain but no
 * peers; "-" with neither. Returns buf. */
char *output_nvlink(int domain, uint64_t peers, char *buf, size_t len);

/* An amount of memory given in MiB for people: "512 MiB", "80 GiB",
 * "79.6 GiB"; "-" for 0 (unknown). Returns buf. */
char *output_mib(uint64_t mib, char *buf, size_t len);

/* The nodes of a job's allocation as one short list, hostlist-compressed
 * ("node[01-04]"), or comma-separated when a name does not compress.
 * malloc'd ("" for none), NULL on ENOMEM. */
char *output_nodelist(const struct job *job);

/* A job id as users type it: a positive decimal integer. 0, or -1 after
 * printing "cohort: CMD: invalid job id ..." */
int output_parse_job_id(const char *cmd, const char *s, uint64_t *id);

/* Sleep for ms milliseconds (restarting after signals), and a monotonic
 * clock in milliseconds, for the commands that poll. */
void output_sleep_ms(int64_t ms);
int64_t output_mono_ms(void);
/* The wall clock in milliseconds since the epoch, as job times are. */
int64_t output_wall_ms(void);

/* The job as the JSON object of `cohort show --json` (and each element
 * of `cohort jobs --json`). New reference, NULL on ENOMEM. */
json_t *output_job_json(const struct job *job);
/* Print doc on stdout followed by a newline and drop the reference.
 * 0, or -1 when it could not be written. */
int output_json_print(json_t *doc);
/* Print a listing: {"key": arr} with json, else the table t. Takes arr.
 * Returns the exit code (EXIT_OK, or EXIT_FAILED when stdout fails). */
int output_listing(bool json, const char *key, json_t *arr,
    const struct output_table *t);

/* "cohort: ..." on stderr, one line. */
void output_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* cconn_call failed: print err and return the exit code (3 when the
 * controller is unreachable or talks nonsense, else 1). */
int output_call_error(const struct cerr *err);

/* An Error reply from the controller: print "cohort: PREFIX: text" and
 * return the exit code for it. Any other unexpected body is reported as
 * such. */
int output_reply_error(const char *prefix, const Cohort__V1__Envelope *rep);

/* Report a getopt_long failure (optstring starting with ':' after any
 * '+', opterr = 0): ch is what getopt_long returned. Returns EXIT_USAGE. */
int output_usage_error(const char *cmd, int ch, char *const *argv);

/* The connection flags every command accepts, overriding those given
 * before the command (main has resolved those in struct cconn_opts). */
enum {
	OUTPUT_OPT_SERVER = 0x1000,
	OUTPUT_OPT_CERT,
	OUTPUT_OPT_KEY,
	OUTPUT_OPT_CA,
};
#define OUTPUT_CONN_LONGOPTS \
	{ "server", required_argument, NULL, OUTPUT_OPT_SERVER }, \
	{ "cert", required_argument, NULL, OUTPUT_OPT_CERT }, \
	{ "key", required_argument, NULL, OUTPUT_OPT_KEY }, \
	{ "ca", required_argument, NULL, OUTPUT_OPT_CA }

struct output_conn_flags {
	const char *server;
	const char *cert;
	const char *key;
	const char *ca;
};

/* Record opt's value when it is a connection flag: 1, else 0. The flags
 * borrow arg. */
int output_conn_flag(struct output_conn_flags *f, int opt, const char *arg);

/* Resolve the settings (flags in f first, then base) into *o, whose
 * strings live in *s until settings_clear(s); o->timeout_ms comes from
 * base. Returns EXIT_OK, or prints why and returns EXIT_USAGE (s is
 * cleared then). For commands that connect more than once. */
int output_settings(const struct cconn_opts *base,
    const struct output_conn_flags *f, struct settings *s,
    struct cconn_opts *o);

/* Resolve the settings (flags in f first, then base) and connect.
 * Returns EXIT_OK with *c set, or prints why and returns the exit code. */
int output_connect(const struct cconn_opts *base,
    const struct output_conn_flags *f, struct cconn **c);

/* Send req on a new connection (resolved as output_connect does) and
 * check that the reply is `want`. EXIT_OK with *rep (frame_free it), or
 * an exit code after printing why (prefixed by cmd). rep may be NULL
 * when the reply says nothing the caller needs. */
int output_request(const char *cmd, const struct cconn_opts *base,
    const struct output_conn_flags *f, Cohort__V1__Envelope *req,
    Cohort__V1__Envelope__BodyCase want, Cohort__V1__Envelope **rep);

/* --iterate SEC, as squeue's -i: a decimal number of seconds from
 * 0.01 to 86400 into *ms. EXIT_OK, or EXIT_USAGE after printing why
 * (prefixed by cmd). */
int output_iterate_parse(const char *cmd, const char *s, unsigned *ms);

/* Run round(arg) once when ms is 0, else every ms milliseconds until
 * stdout can no longer be written (the reader went away): a round's
 * error is printed by the round and the next round runs, so a watcher
 * rides out a controller restart; a usage error ends it. Returns the
 * last round's exit code, or EXIT_FAILED when stdout failed. */
int output_iterate(unsigned ms, int (*round)(void *arg), void *arg);

#endif
