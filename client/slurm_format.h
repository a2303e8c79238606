/* What Slurm's query commands (client/slurm_query.c) print, without the
 * wire: their format strings (squeue and sinfo -o "%.18i %-10j", squeue
 * -O "JobID:10,Name", sacct -o "JobID,JobName%30"), cells padded and cut
 * to a width as Slurm's are, and Cohort's job and node states, reasons
 * and times in Slurm's words and forms. Pure: no I/O but the FILE the
 * caller passes, so tests/unit/check_slurm_query.c drives it alone. */
#ifndef COHORT_CLIENT_SLURM_FORMAT_H
#define COHORT_CLIENT_SLURM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client/nodes_view.h"
#include "lib/err.h"
#include "lib/job.h"

/* A field a command knows: its letter for -o (0: none), its name for -O
 * and sacct -o (matched case-insensitively; NULL: none), its header, its
 * width when a format gives none (0: as wide as the value), and the
 * command's own id for it. */
struct sfmt_def {
	char letter;
	const char *name;
	const char *head;
	int width;
	int id;
};

/* One item of a parsed format: literal text (def NULL) or a field. */
struct sfmt_item {
	const struct sfmt_def *def;
	char *text;		/* the literal, or -O's suffix; malloc'd */
	int width;		/* 0: the value's own width */
	bool right;		/* "%.8j", "Name:.8": right-justified */
	bool fit;		/* sinfo's "%#P": as wide as the widest cell */
};

struct sfmt {
	struct sfmt_item *v;
	size_t n;
	/* Cut a value longer than its width: squeue and sinfo cut it
	 * plainly, sacct marks the cut with '+' as its last character. */
	bool plus;
};

/* Parse an -o string of squeue or sinfo: text with "%[.|-][#][N]L"
 * fields, L a letter of defs[0..ndefs) ("%%" is a percent sign). 0, or
 * -1 with err (ERR_INVALID) naming what is wrong; fmt is left empty. */
int sfmt_parse_letters(const char *s, const struct sfmt_def *defs,
    size_t ndefs, struct sfmt *fmt, struct cerr *err);
/* squeue -O: "Name[:[.][SIZE][SUFFIX]]" comma-separated, 20 wide when no
 * SIZE is given, left-justified unless '.', nothing between fields but
 * each one's SUFFIX. Same contract. */
int sfmt_parse_names(const char *s, const struct sfmt_def *defs,
    size_t ndefs, struct sfmt *fmt, struct cerr *err);
/* sacct -o: "Name[%SIZE]" comma-separated, each field its def's width
 * unless SIZE is given, one space after each. Same contract. */
int sfmt_parse_sacct(const char *s, const struct sfmt_def *defs,
    size_t ndefs, struct sfmt *fmt, struct cerr *err);
void sfmt_clear(struct sfmt *fmt);

/* The number of fields (not literals) in fmt; cells passed to the
 * functions below hold one string per field, in order. */
size_t sfmt_nfields(const struct sfmt *fmt);
/* Widen the "%#" fields to hold cells (NULL: each field's header). */
void sfmt_fit(struct sfmt *fmt, const char *const *cells);
/* One line: the literals and the cells (NULL: the headers), each padded
 * and cut to its width. 0, or -1 when fp fails. */
int sfmt_print(const struct sfmt *fmt, const char *const *cells, FILE *fp);
/* sacct's line of dashes under the header, a field's width each. */
int sfmt_print_dashes(const struct sfmt *fmt, FILE *fp);
/* sacct -p and -P: the cells (NULL: headers) joined by '|', with a
 * trailing one for -p (trailing true). */
int sfmt_print_parsable(const struct sfmt *fmt, const char *const *cells,
    bool trailing, FILE *fp);

/* Cohort's job states as Slurm names them: PENDING PD, RUNNING R,
 * RESTARTING (a job put back to wait after a failure, or relaunched)
 * REQUEUED RQ, RESIZING RS, COMPLETED CD, FAILED F, CANCELLED CA,
 * TIMEOUT TO. */
const char *slurm_state_name(enum job_state st);
/* squeue's list of the states it knows, after a word it does not. */
#define SLURM_STATES_VALID "PENDING,RUNNING,SUSPENDED,COMPLETED," \
	"CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE," \
	"OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD," \
	"REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT," \
	"STAGE_OUT,STOPPED"
const char *slurm_state_code(enum job_state st);
/* A -t/--states (squeue) or -s/--state (sacct) list: Slurm's names or
 * codes, case-insensitively, and "all". Each word's states are ORed
 * into *mask as 1 << state; names Cohort never has (COMPLETING,
 * NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, SUSPENDED,
 * ...) match no job. 0, or -1 with err naming a word Slurm does not
 * have either. */
int slurm_states_parse(const char *list, unsigned *mask, struct cerr *err);

/* A pending job's reason as Slurm words it: its first word, in
 * Slurm's words where they differ (QueueQuota is QOSGrpGRES), else
 * Cohort's ("Topology", "GpuType"); "None" for none. Returns buf or a
 * constant. */
#define SLURM_REASON_LEN 64
const char *slurm_reason(const char *reason, char *buf, size_t len);

/* squeue's durations (%M, %l): "0:05", "12:34", "1:02:03",
 * "2-01:02:03". */
char *slurm_secs_short(uint64_t secs, char *buf, size_t len);
/* sacct's: "00:00:05", "01:02:03", "2-01:02:03". */
char *slurm_secs_long(uint64_t secs, char *buf, size_t len);
/* A time as Slurm prints it, local: "2026-12-01T15:04:05"; none (e.g.
 * "Unknown", "N/A") for 0. */
char *slurm_time(int64_t ms, const char *none, char *buf, size_t len);
/* The line squeue -l and sinfo -l print above their header, local:
 * "Mon Dec 07 03:00:45 2026". 0, or -1 when fp fails. */
int slurm_print_date(FILE *fp);
/* sacct -S/-E and the like: "2026-12-01", "2026-12-01T15:04[:05]",
 * "now", "now-2hours"-style offsets are not taken; MM/DD[/YY] is.
 * Local time. 0 with *ms, or -1 (EINVAL). */
int slurm_time_parse(const char *s, int64_t now_ms, int64_t *ms);

/* A node's state as sinfo prints it: %t ("idle", "mix", "alloc",
 * "drng", "drain", "down*", "drain*") or %T ("idle", "mixed",
 * "allocated", "draining", "drained", "down*", "drained*"); '*' is
 * Slurm's "not responding": the agent is not connected. */
const char *slurm_node_state(const struct nodes_view_node *n, bool longer);

#endif
