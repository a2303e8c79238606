/* srun's standard input for task 0 (see srun_input.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/srun_input.h"

struct srun_input {
	int fd;
	uint64_t offset;	/* of buf[0] in the input */
	size_t len;		/* bytes held in buf */
	bool eof;		/* fd has ended: nothing more to read */
	bool done;		/* the end was taken, or forwarding stopped */
	bool append;		/* an attached terminal's: no offsets, no end */
	bool win;		/* rows x cols not yet sent */
	uint16_t rows, cols;
	uint8_t buf[SRUN_INPUT_CHUNK];
};

struct srun_input *
srun_input_create(int fd)
{
	struct srun_input *in;

	if ((in = calloc(1, sizeof(*in))) == NULL)
		return NULL;
	in->fd = fd;
	return in;
}

void
srun_input_destroy(struct srun_input *in)
{
	free(in);
}

void
srun_input_read(struct srun_input *in)
{
	struct pollfd p;
	ssize_t n;

	if (in->done || in->eof || in->len == sizeof(in->buf))
		return;
	/* poll rather than O_NONBLOCK: fd 0 is often shared with the
	 * shell (a terminal), whose file flags are not ours to change. */
	p.fd = in->fd;
	p.events = POLLIN;
	p.revents = 0;
	if (poll(&p, 1, 0) <= 0)
		return;
	if ((p.revents & POLLNVAL) != 0) {
		in->eof = true;
		return;
	}
	n = read(in->fd, in->buf + in->len, sizeof(in->buf) - in->len);
	if (n > 0)
		in->len += (size_t)n;
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		in->eof = true;	/* an unreadable input ends too */
}

void
srun_input_set_append(struct srun_input *in)
{
	in->append = true;
}

void
srun_input_window(struct srun_input *in, uint16_t rows, uint16_t cols)
{
	if (rows == 0 || cols == 0)
		return;
	in->rows = rows;
	in->cols = cols;
	in->win = true;
}

bool
srun_input_room(const struct srun_input *in)
{
	return !in->done && !in->eof && in->len < sizeof(in->buf);
}

bool
srun_input_pending(const struct srun_input *in)
{
	/* An attached terminal's end is its own: nothing to send. */
	if (in->append && in->eof && in->len == 0 && !in->win)
		return false;
	return !in->done && (in->len > 0 || in->eof || in->win);
}

bool
srun_input_active(const struct srun_input *in)
{
	return !in->done;
}

bool
srun_input_request(struct srun_input *in, uint64_t job_id, uint32_t step_id,
    Cohort__V1__StepInputRequest *q)
{
	if (!srun_input_pending(in))
		return false;
	cohort__v1__step_input_request__init(q);
	q->job_id = job_id;
	q->step_id = step_id;
	q->offset = in->offset;
	q->data.data = in->buf;
	q->data.len = in->len;
	q->has_eof = q->eof = in->eof && !in->append;
	q->has_append = q->append = in->append;
	if (in->win) {
		q->has_rows = q->has_cols = true;
		q->rows = in->rows;
		q->cols = in->cols;
	}
	return true;
}

int
srun_input_reply(struct srun_input *in, const Cohort__V1__Envelope *rep,
    char *why, size_t len)
{
	uint64_t next;
	size_t took;
	bool all, resized;

	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		switch (rep->error->code) {
		/* Not yet (the task is still starting), or not now. */
		case COHORT__V1__ERROR_CODE__ERROR_NOT_FOUND:
		case COHORT__V1__ERROR_CODE__ERROR_LIMIT:
		case COHORT__V1__ERROR_CODE__ERROR_UNAVAILABLE:
			return 0;
		default:
			snprintf(why, len, "%s", rep->error->text);
			in->done = true;
			return -1;
		}
	}
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_STEP_INPUT_REPLY ||
	    (next = rep->step_input_reply->next_offset) < in->offset ||
	    next - in->offset > in->len) {
		snprintf(why, len, "unexpected reply to the step's input");
		in->done = true;
		return -1;
	}
	resized = in->win;
	in->win = false;	/* taken with the request */
	took = (size_t)(next - in->offset);
	all = took == in->len;
	memmove(in->buf, in->buf + took, in->len - took);
	in->len -= took;
	in->offset = next;
	/* The end was sent with the last of the bytes: the agent closed
	 * the pipe once it took them all. */
	if (all && in->eof && !in->append) {
		in->done = true;
		return 1;
	}
	return took > 0 || resized ? 1 : 0;
}
