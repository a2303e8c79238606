/* srun's standard input, forwarded to task 0 of its step: read when it
 * has something (never waiting), sent a chunk at a time (StepInput, at
 * most SRUN_INPUT_CHUNK, one in flight), advanced by what the task's
 * pipe took, ended with eof. A terminal is read as any stream (no raw
 * mode: that would be --pty). At most one chunk is held. */
#ifndef COHORT_CLIENT_SRUN_INPUT_H
#define COHORT_CLIENT_SRUN_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cohort.pb-c.h"

/* The most one StepInput carries (the controller's and agent's bound). */
#define SRUN_INPUT_CHUNK (64 * 1024)

struct srun_input;

/* Forward what fd gives (borrowed: never closed, its flags untouched).
 * NULL with errno when out of memory. */
struct srun_input *srun_input_create(int fd);
/* Accepts NULL. */
void srun_input_destroy(struct srun_input *in);

/* Read what fd has now into the chunk's free room, without blocking;
 * notes its end. */
void srun_input_read(struct srun_input *in);
/* Whether there is something to send (bytes, or the end not yet
 * taken); then *q is the request (its data borrowed from in, valid
 * until the next call). */
bool srun_input_request(struct srun_input *in, uint64_t job_id,
    uint32_t step_id, Cohort__V1__StepInputRequest *q);
/* The reply to that request: 1 when the task took some (or the end), 0
 * when it took none (full, or try again: not started yet, too many in
 * flight), -1 when forwarding stops, with why (the controller's text). */
int srun_input_reply(struct srun_input *in, const Cohort__V1__Envelope *rep,
    char *why, size_t len);
/* A terminal's keys for a step someone else started (cohort attach):
 * each chunk goes after what the task has had (append), and the input's
 * end is not passed on. */
void srun_input_set_append(struct srun_input *in);
/* The terminal's window changed: sent with the next request. */
void srun_input_window(struct srun_input *in, uint16_t rows, uint16_t cols);
/* Room for more of fd's bytes: poll fd only then. */
bool srun_input_room(const struct srun_input *in);
/* Still forwarding: not all sent and taken, and not stopped. */
bool srun_input_active(const struct srun_input *in);
/* Holding bytes or an end not yet taken (send again soon). */
bool srun_input_pending(const struct srun_input *in);

#endif
