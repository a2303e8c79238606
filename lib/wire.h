/* The translation layer between protobuf messages and the project's own
 * structs. Nothing outside lib/wire.c, the RPC edges of the daemons and the
 * CLI's request code touches a *.pb-c.h type. */
#ifndef COHORT_WIRE_H
#define COHORT_WIRE_H

#include "lib/err.h"
#include "lib/inventory.h"
#include "lib/job.h"
#include "proto/cohort.pb-c.h"

#define WIRE_MAJOR 1
#define WIRE_MINOR 0

/* Fill pb from spec. pb borrows spec's strings and arrays: spec must
 * outlive pb's use. Nothing to free afterwards. */
void wire_spec_to_pb(const struct job_spec *spec, Cohort__V1__JobSpec *pb);
/* A container into buf (borrowing c's strings); returns buf, or NULL
 * when c has no image. wire_spec_to_pb leaves pb->container NULL: the
 * caller points it at this, with a buf that lives as long as pb. */
Cohort__V1__Container *wire_ctr_to_pb(const struct job_container *c,
    Cohort__V1__Container *buf);
/* pb (may be NULL: none) into *c, its strings copied. 0, or -1
 * (ENOMEM) with *c cleared. */
int wire_ctr_from_pb(const Cohort__V1__Container *pb,
    struct job_container *c);
/* Deep-copy pb into spec (which this initialises; unset fields keep the
 * spec's defaults). 0, or -1 with err set (ERR_INVALID for bad values
 * such as an unknown enum, ERR_INTERNAL for ENOMEM). */
int wire_spec_from_pb(const Cohort__V1__JobSpec *pb, struct job_spec *spec,
    struct cerr *err);
/* The fingerprint of a submit's request (job_spec.idem_fp): SHA-256
 * over pb's encoding without its idempotency key, its environment, its
 * umask and its submit host. The environment and the umask are left out
 * because they are the submitter's shell (--export ALL), which a
 * workflow engine's retry of the same step need not reproduce (a try
 * number, OLDPWD); a job keyed before the umask was sent is still found
 * by a retry that sends one; and a retry may come from another login
 * node. What runs, where and how is in. The same client sending the
 * same request gets the same fingerprint; another client's encoding of
 * it may differ. 0, or -1 (ENOMEM). */
int wire_spec_fingerprint(const Cohort__V1__JobSpec *pb,
    unsigned char fp[JOB_IDEM_FP_LEN]);

/* Same pair for a whole job. wire_job_to_pb borrows from job, uses
 * specbuf for the nested spec message and allocates the placement
 * messages, which wire_job_pb_release frees. 0, or -1 (ENOMEM). */
int wire_job_to_pb(const struct job *job, Cohort__V1__Job *pb,
    Cohort__V1__JobSpec *specbuf);
void wire_job_pb_release(Cohort__V1__Job *pb);
/* Withhold a job's private data from pb (filled by wire_job_to_pb): its
 * environment, command line, script body, working directory, script,
 * output, error and checkpoint paths, idempotency key and submit host
 * go, `redacted` says so.
 * Nothing to free; wire_job_pb_release still applies. */
void wire_job_redact(Cohort__V1__Job *pb);
/* A job's goodput split into pb (nothing allocated); the job message
 * points at it (Job.goodput) when the sender sets it. */
void wire_goodput_to_pb(const struct job_goodput_view *v,
    Cohort__V1__Goodput *pb);
/* Returns a new job the caller frees with job_free, or NULL with err. */
struct job *wire_job_from_pb(const Cohort__V1__Job *pb, struct cerr *err);

/* Inventory: to_pb allocates the GPU messages (release frees them);
 * from_pb copies, refusing more than INV_MAX_GPUS GPUs (ERR_INVALID). */
int wire_inventory_to_pb(const struct inventory *inv,
    Cohort__V1__Inventory *pb);
void wire_inventory_pb_release(Cohort__V1__Inventory *pb);
int wire_inventory_from_pb(const Cohort__V1__Inventory *pb,
    struct inventory *inv, struct cerr *err);

/* Health: to_pb allocates the GPU entries (release frees them); from_pb
 * refuses GPU indices above INV_MAX_GPUS (ERR_INVALID). */
int wire_health_to_pb(const struct node_health *h, Cohort__V1__NodeHealth *pb);
void wire_health_pb_release(Cohort__V1__NodeHealth *pb);
int wire_health_from_pb(const Cohort__V1__NodeHealth *pb,
    struct node_health *h, struct cerr *err);

Cohort__V1__JobState wire_state_to_pb(enum job_state state);
/* 0, or -1 for a value that is not a job state. */
int wire_state_from_pb(Cohort__V1__JobState pb, enum job_state *state);

Cohort__V1__ErrorCode wire_err_to_pb(enum err_code code);
enum err_code wire_err_from_pb(Cohort__V1__ErrorCode pb);

/* Make *env an Error reply to request id, using *e as its storage; text
 * is borrowed until env is packed. */
void wire_error(Cohort__V1__Envelope *env, Cohort__V1__Error *e, uint64_t id,
    enum err_code code, const char *text);

/* Whether body is a request that users and admins send (the ones the
 * controller's dispatch table allows to ROLE_USER or ROLE_ADMIN; keep the
 * two in step). cohort-mux forwards only these. */
bool wire_is_user_request(Cohort__V1__Envelope__BodyCase body);

/* The envelope's body kind as a short name, for logs ("submit", ...). */
const char *wire_body_name(Cohort__V1__Envelope__BodyCase body);

#endif
