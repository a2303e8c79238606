/* The job spec: defaults, copies, and the one validation every submission
 * passes through, whoever sends it. Errors name the option as the user
 * typed it ("--nodes: ...") because the text goes back to the person at
 * the terminal unchanged. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/array.h"
#include "lib/depend.h"
#include "lib/duration.h"
#include "lib/constraint.h"
#include "lib/hostlist.h"
#include "lib/job.h"
#include "lib/text.h"

#define JOB_SCRIPT_NAME_MAX 255
#define JOB_GPU_TYPE_MAX 64
#define JOB_TOPO_LEVEL_MAX 64
#define JOB_ENV_KEY_MAX 255
#define JOB_CKPT_SECS_MAX 86400
#define JOB_SIGNAL_MAX 64
#define ENV_RESERVED_PREFIX "COHORT_"

static const char *const job_state_names[] = {
	[JOB_PENDING] = "PENDING",
	[JOB_RUNNING] = "RUNNING",
	[JOB_RESTARTING] = "RESTARTING",
	[JOB_RESIZING] = "RESIZING",
	[JOB_COMPLETED] = "COMPLETED",
	[JOB_FAILED] = "FAILED",
	[JOB_CANCELLED] = "CANCELLED",
	[JOB_TIMEOUT] = "TIMEOUT",
};
#define JOB_STATE_LAST JOB_TIMEOUT

void
job_spec_init(struct job_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->nodes_min = 1;
	spec->nodes_max = 1;
	spec->tasks_per_node = 1;
	spec->priority = JOB_DEFAULT_PRIORITY;
	spec->topo_mode = TOPO_ANY;
	spec->max_restarts = JOB_DEFAULT_MAX_RESTARTS;
	spec->ckpt_signal = SIGUSR1;
	spec->ckpt_secs = JOB_DEFAULT_CKPT_SECS;
}

void
job_spec_clear(struct job_spec *spec)
{
	free(spec->name);
	free(spec->gpu_type);
	free(spec->topo_level);
	free(spec->checkpoint_dir);
	free(spec->workdir);
	free(spec->script);
	free(spec->script_name);
	free(spec->queue);
	free(spec->array);
	free(spec->dependency);
	free(spec->output);
	free(spec->error);
	free(spec->nodelist);
	free(spec->exclude);
	free(spec->constraint);
	free(spec->idem_key);
	free(spec->submit_host);
	free(spec->account);
	free(spec->qos);
	free(spec->mail_user);
	strv_free(spec->env, spec->nenv);
	strv_free(spec->argv, spec->argc);
	ctr_clear(&spec->ctr);
	job_spec_init(spec);
}

/* strdup that passes NULL through; the caller tells NULL from ENOMEM by
 * looking at the source. */
static int
dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (src == NULL)
		return 0;
	if ((*dst = strdup(src)) == NULL)
		return -1;
	return 0;
}

int
strv_copy(char ***dst, size_t *ndst, char *const *src, size_t n)
{
	size_t i;

	*dst = NULL;
	*ndst = 0;
	for (i = 0; i < n; i++) {
		if (strv_append(dst, ndst, src[i]) == -1) {
			strv_free(*dst, *ndst);
			*dst = NULL;
			*ndst = 0;
			return -1;
		}
	}
	return 0;
}

int
job_spec_copy(struct job_spec *dst, const struct job_spec *src)
{
	*dst = *src;
	/* Every pointer is cleared before anything is allocated so that the
	 * failure path can simply clear dst. */
	dst->name = dst->gpu_type = dst->topo_level = NULL;
	dst->checkpoint_dir = dst->workdir = NULL;
	dst->script = dst->script_name = dst->queue = NULL;
	dst->array = dst->dependency = dst->output = dst->error = NULL;
	dst->nodelist = dst->exclude = dst->constraint = NULL;
	dst->idem_key = dst->submit_host = dst->mail_user = NULL;
	dst->account = dst->qos = NULL;
	memset(&dst->ctr, 0, sizeof(dst->ctr));
	dst->env = dst->argv = NULL;
	dst->nenv = dst->argc = 0;
	dst->script_len = 0;

	if (dup_opt(&dst->name, src->name) == -1 ||
	    dup_opt(&dst->gpu_type, src->gpu_type) == -1 ||
	    dup_opt(&dst->topo_level, src->topo_level) == -1 ||
	    dup_opt(&dst->checkpoint_dir, src->checkpoint_dir) == -1 ||
	    dup_opt(&dst->workdir, src->workdir) == -1 ||
	    dup_opt(&dst->script_name, src->script_name) == -1 ||
	    dup_opt(&dst->queue, src->queue) == -1 ||
	    dup_opt(&dst->array, src->array) == -1 ||
	    dup_opt(&dst->dependency, src->dependency) == -1 ||
	    dup_opt(&dst->output, src->output) == -1 ||
	    dup_opt(&dst->error, src->error) == -1 ||
	    dup_opt(&dst->nodelist, src->nodelist) == -1 ||
	    dup_opt(&dst->exclude, src->exclude) == -1 ||
	    dup_opt(&dst->constraint, src->constraint) == -1 ||
	    dup_opt(&dst->idem_key, src->idem_key) == -1 ||
	    dup_opt(&dst->submit_host, src->submit_host) == -1 ||
	    dup_opt(&dst->account, src->account) == -1 ||
	    dup_opt(&dst->qos, src->qos) == -1 ||
	    dup_opt(&dst->mail_user, src->mail_user) == -1 ||
	    strv_copy(&dst->env, &dst->nenv, src->env, src->nenv) == -1 ||
	    strv_copy(&dst->argv, &dst->argc, src->argv, src->argc) == -1 ||
	    ctr_copy(&dst->ctr, &src->ctr) == -1)
		goto fail;
	if (src->script != NULL) {
		/* The script is bytes with a length; keep a NUL after it so
		 * that it may also be used as a string. */
		if ((dst->script = malloc(src->script_len + 1)) == NULL)
			goto fail;
		memcpy(dst->script, src->script, src->script_len);
		dst->script[src->script_len] = '\0';
		dst->script_len = src->script_len;
	}
	return 0;

fail:
	job_spec_clear(dst);
	errno = ENOMEM;
	return -1;
}

/* Length of the valid UTF-8 sequence at p (at most left bytes), or 0 if
 * it is not one: overlong forms, surrogates and code points above
 * U+10FFFF are refused, so that names survive JSON output intact. */
static size_t
utf8_seqlen(const unsigned char *p, size_t left)
{
	uint32_t cp;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	/* C1 controls are as unwelcome in a listing as C0 ones. */
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;
	return n;
}

/* Printable for a name: no C0/C1 control characters, DEL, or invalid
 * UTF-8. Returns the offset of the first bad byte, or len. */
static size_t
name_bad_offset(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return i;
		if ((n = utf8_seqlen(p + i, len - i)) == 0)
			return i;
		i += n;
	}
	return len;
}

/* A default name from the script's or the command's base name. Bytes
 * that would make it an invalid name become '?', and it is cut to
 * JOB_NAME_MAX on a character boundary, so that a default never fails
 * validation. NULL on ENOMEM, or when there is nothing to name it by. */
static char *
name_derive(const struct job_spec *spec)
{
	const char *src = NULL, *slash;
	size_t len, i, o, n;
	char *name;

	if (spec->script != NULL) {
		/* With a script, argv holds the script's arguments, not a
		 * command worth naming the job after. */
		src = spec->script_name != NULL && spec->script_name[0] != '\0' ?
		    spec->script_name : "script";
		len = strlen(src);
	} else if (spec->argc > 0 && spec->argv != NULL &&
	    spec->argv[0] != NULL && spec->argv[0][0] != '\0') {
		src = spec->argv[0];
		len = strlen(src);
		/* "dir/" and "/" have no base name after the last slash; the
		 * one before the trailing slashes is the better name. */
		while (len > 1 && src[len - 1] == '/')
			len--;
		for (slash = NULL, i = 0; i < len; i++)
			if (src[i] == '/' && i + 1 < len)
				slash = src + i;
		if (slash != NULL) {
			len -= (size_t)(slash + 1 - src);
			src = slash + 1;
		}
	} else {
		errno = EINVAL;
		return NULL;
	}

	if ((name = malloc(len + 1)) == NULL)
		return NULL;
	for (i = o = 0; i < len;) {
		n = utf8_seqlen((const unsigned char *)src + i, len - i);
		if (n == 0 || (n == 1 &&
		    ((unsigned char)src[i] < 0x20 || src[i] == 0x7f))) {
			if (o + 1 > JOB_NAME_MAX)
				break;
			name[o++] = '?';
			i++;
			continue;
		}
		if (o + n > JOB_NAME_MAX)
			break;
		memcpy(name + o, src + i, n);
		o += n;
		i += n;
	}
	name[o] = '\0';
	return name;
}

static int
check_path(const char *opt, const char *path, struct cerr *err)
{
	size_t len;

	if (path == NULL)
		return 0;
	len = strlen(path);
	if (path[0] != '/')
		return cerr_set(err, ERR_INVALID,
		    "%s: '%.200s' is not an absolute path", opt, path);
	if (len > JOB_PATH_MAX)
		return cerr_set(err, ERR_INVALID,
		    "%s: path is longer than %d bytes", opt, JOB_PATH_MAX);
	if (strchr(path, '\n') != NULL)
		return cerr_set(err, ERR_INVALID,
		    "%s: path contains a newline", opt);
	return 0;
}

/* 1..max characters from the set allowed; used for --gpu-type and the
 * topology level, which are matched against names in the inventory. */
static int
check_word(const char *opt, const char *s, size_t max, const char *extra,
    const char *extra_desc, struct cerr *err)
{
	size_t len = strlen(s), i;
	unsigned char c;

	if (len == 0)
		return cerr_set(err, ERR_INVALID, "%s: empty value", opt);
	if (len > max)
		return cerr_set(err, ERR_INVALID,
		    "%s: longer than %zu characters", opt, max);
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr(extra, c) != NULL)
			continue;
		return cerr_set(err, ERR_INVALID,
		    "%s: '%.64s' may only contain letters, digits, %s",
		    opt, s, extra_desc);
	}
	return 0;
}

static int
check_command(const struct job_spec *spec, const struct job_limits *limits,
    struct cerr *err)
{
	size_t i, bytes = 0, max;

	if (spec->argc > JOB_ARGC_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "command: %zu arguments, at most %d are allowed",
		    spec->argc, JOB_ARGC_LIMIT);
	if (spec->argc > 0 && spec->argv == NULL)
		return cerr_set(err, ERR_INVALID, "command: arguments missing");
	for (i = 0; i < spec->argc; i++) {
		if (spec->argv[i] == NULL)
			return cerr_set(err, ERR_INVALID,
			    "command: argument %zu is missing", i);
		bytes += strlen(spec->argv[i]) + 1;
	}
	if (bytes > JOB_ARGV_BYTES_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "command: arguments take %zu bytes, at most %d are allowed",
		    bytes, JOB_ARGV_BYTES_LIMIT);

	if (spec->script == NULL) {
		if (spec->argc == 0 || spec->argv[0][0] == '\0')
			return cerr_set(err, ERR_INVALID,
			    "no command: give one after --, or a script");
		return 0;
	}

	max = limits != NULL && limits->script_max != 0 ? limits->script_max :
	    JOB_SCRIPT_DEFAULT_MAX;
	if (spec->script_len > max)
		return cerr_set(err, ERR_INVALID,
		    "script: %zu bytes, at most %zu are allowed",
		    spec->script_len, max);
	if (spec->script_len < 2 || spec->script[0] != '#' ||
	    spec->script[1] != '!')
		return cerr_set(err, ERR_INVALID,
		    "script: first line must be an interpreter line (#!...)");
	if (memchr(spec->script, '\0', spec->script_len) != NULL)
		return cerr_set(err, ERR_INVALID,
		    "script: contains a NUL byte (is it a binary file?)");
	if (spec->script_name != NULL) {
		if (spec->script_name[0] == '\0')
			return cerr_set(err, ERR_INVALID,
			    "script: empty file name");
		if (strchr(spec->script_name, '/') != NULL)
			return cerr_set(err, ERR_INVALID,
			    "script: file name '%.64s' contains '/'",
			    spec->script_name);
		if (strlen(spec->script_name) > JOB_SCRIPT_NAME_MAX)
			return cerr_set(err, ERR_INVALID,
			    "script: file name longer than %d bytes",
			    JOB_SCRIPT_NAME_MAX);
	}
	return 0;
}

static int
check_name(const char *name, struct cerr *err)
{
	size_t len = strlen(name);

	if (len > JOB_NAME_MAX)
		return cerr_set(err, ERR_INVALID,
		    "--name: %zu bytes, at most %d are allowed", len,
		    JOB_NAME_MAX);
	if (name_bad_offset(name, len) != len)
		return cerr_set(err, ERR_INVALID,
		    "--name: control characters and invalid UTF-8 are not "
		    "allowed");
	return 0;
}

static int
check_shape(const struct job_spec *spec, struct cerr *err)
{
	if (spec->nodes_min < 1)
		return cerr_set(err, ERR_INVALID,
		    "--nodes: at least 1 node is needed");
	if (spec->nodes_min > JOB_NODES_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--nodes: %u is above the limit of %d", spec->nodes_min,
		    JOB_NODES_LIMIT);
	if (spec->nodes_max < spec->nodes_min)
		return cerr_set(err, ERR_INVALID,
		    "--nodes: minimum %u is above maximum %u",
		    spec->nodes_min, spec->nodes_max);
	if (spec->nodes_max > JOB_NODES_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--nodes: maximum %u is above the limit of %d",
		    spec->nodes_max, JOB_NODES_LIMIT);
	if (spec->gpus_per_node > JOB_GPUS_PER_NODE_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--gpus-per-node: %u is above the limit of %d",
		    spec->gpus_per_node, JOB_GPUS_PER_NODE_LIMIT);
	if (spec->tasks_per_node < 1)
		return cerr_set(err, ERR_INVALID,
		    "--tasks-per-node: at least 1 task is needed");
	if (spec->tasks_per_node > JOB_TASKS_PER_NODE_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--tasks-per-node: %u is above the limit of %d",
		    spec->tasks_per_node, JOB_TASKS_PER_NODE_LIMIT);
	/* Every task gets the same number of GPUs; with "all of a node's
	 * GPUs" (0) the check waits until the node is known. */
	if (spec->gpus_per_node > 0 &&
	    spec->gpus_per_node % spec->tasks_per_node != 0)
		return cerr_set(err, ERR_INVALID,
		    "--tasks-per-node: %u tasks cannot share %u GPUs evenly",
		    spec->tasks_per_node, spec->gpus_per_node);
	if (spec->gpu_type != NULL &&
	    check_word("--gpu-type", spec->gpu_type, JOB_GPU_TYPE_MAX, "._-",
	    "'.', '_' and '-'", err) == -1)
		return -1;
	return 0;
}

static int
check_policy(const struct job_spec *spec, enum role role, struct cerr *err)
{
	const char *topt;

	if (spec->time_limit_s > DURATION_MAX_S)
		return cerr_set(err, ERR_INVALID,
		    "--time: %llu seconds is above the limit of 100 years",
		    (unsigned long long)spec->time_limit_s);
	if (spec->service && spec->time_limit_s != 0)
		return cerr_set(err, ERR_INVALID,
		    "--service: a service has no time limit (leave out "
		    "--time)");
	/* A hang timeout at or above the time limit can never fire; that is
	 * harmless, so it is allowed. */
	if (spec->hang_timeout_s > DURATION_MAX_S)
		return cerr_set(err, ERR_INVALID,
		    "--hang-timeout: %llu seconds is above the limit of 100 "
		    "years", (unsigned long long)spec->hang_timeout_s);

	if (spec->priority < 0)
		return cerr_set(err, ERR_INVALID,
		    "--priority: %d is below 0", (int)spec->priority);
	if (spec->priority > JOB_PRIORITY_MAX)
		return cerr_set(err, ERR_INVALID,
		    "--priority: %d is above the limit of %d",
		    (int)spec->priority, JOB_PRIORITY_MAX);
	if (spec->priority > JOB_DEFAULT_PRIORITY && !(role & ROLE_ADMIN))
		return cerr_set(err, ERR_DENIED,
		    "--priority: users may only lower their priority "
		    "(at most %d)", JOB_DEFAULT_PRIORITY);

	switch (spec->topo_mode) {
	case TOPO_ANY:
		if (spec->topo_level != NULL)
			return cerr_set(err, ERR_INVALID,
			    "--topology: level '%.64s' given without a mode",
			    spec->topo_level);
		break;
	case TOPO_REQUIRED:
	case TOPO_PREFERRED:
		topt = spec->topo_mode == TOPO_REQUIRED ? "--topology" :
		    "--topology-prefer";
		if (spec->topo_level == NULL)
			return cerr_set(err, ERR_INVALID,
			    "%s: a level is needed (e.g. leaf)", topt);
		if (check_word(topt, spec->topo_level, JOB_TOPO_LEVEL_MAX,
		    "_-", "'_' and '-'", err) == -1)
			return -1;
		break;
	default:
		return cerr_set(err, ERR_INVALID,
		    "--topology: unknown mode %d", (int)spec->topo_mode);
	}

	/* --segment N: the gang is cut into segments of N nodes, so every
	 * size it may have is a multiple of N. A segment inside a switch
	 * level is not offered: blocks and segments are the block
	 * topology's, and --topology block holds the gang whole. */
	if (spec->segment > JOB_NODES_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--segment: %u is above the limit of %d", spec->segment,
		    JOB_NODES_LIMIT);
	if (spec->segment > 0 && spec->nodes_min == spec->nodes_max &&
	    spec->nodes_min % spec->segment != 0)
		return cerr_set(err, ERR_INVALID,
		    "--segment: %u nodes are not a multiple of the segment "
		    "size %u", spec->nodes_min, spec->segment);
	if (spec->segment > 0 && (spec->nodes_min % spec->segment != 0 ||
	    spec->nodes_max % spec->segment != 0))
		return cerr_set(err, ERR_INVALID,
		    "--segment: --nodes %u-%u: both bounds must be multiples "
		    "of the segment size %u", spec->nodes_min,
		    spec->nodes_max, spec->segment);
	if (spec->segment > 0 && spec->topo_mode == TOPO_REQUIRED &&
	    strcasecmp(spec->topo_level, "block") != 0)
		return cerr_set(err, ERR_INVALID,
		    "--segment: cannot be combined with --topology %.64s "
		    "(only with --topology block)", spec->topo_level);
	if (spec->segment > 0 && spec->cpu_only)
		return cerr_set(err, ERR_INVALID,
		    "--segment: a CPU-only job (--gpus-per-node 0) uses no "
		    "NVLink block");

	if (check_path("--checkpoint-dir", spec->checkpoint_dir, err) == -1 ||
	    check_path("--workdir", spec->workdir, err) == -1)
		return -1;

	if (spec->max_restarts > JOB_MAX_RESTARTS_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--max-restarts: %u is above the limit of %d",
		    spec->max_restarts, JOB_MAX_RESTARTS_LIMIT);

	if (spec->ckpt_signal < 1 || spec->ckpt_signal > JOB_SIGNAL_MAX)
		return cerr_set(err, ERR_INVALID,
		    "--checkpoint-signal: signal %d out of range 1..%d",
		    spec->ckpt_signal, JOB_SIGNAL_MAX);
	if (spec->ckpt_signal == SIGKILL)
		return cerr_set(err, ERR_INVALID,
		    "--checkpoint-signal: SIGKILL cannot be caught");
	if (spec->ckpt_signal == SIGSTOP)
		return cerr_set(err, ERR_INVALID,
		    "--checkpoint-signal: SIGSTOP cannot be caught");
	if (spec->ckpt_secs > JOB_CKPT_SECS_MAX)
		return cerr_set(err, ERR_INVALID,
		    "--checkpoint-signal: %u seconds is above the limit of %d",
		    spec->ckpt_secs, JOB_CKPT_SECS_MAX);
	return 0;
}

/* -o/--output and -e/--error: a file name on the node, absolute or
 * relative to the job's working directory (as sbatch), with these
 * escapes, expanded by the agent for each rank:
 *
 *   %j job id       %A array's job id   %a array task   %t rank
 *   %n node rank    %N node name        %x job name     %u user
 *   %%  a '%'
 *
 * %N is accepted because Slurm scripts write "%x-%N.out" often, and a
 * node's name is as well defined per rank
 * as its index is. Slurm's %J and %s name job steps, which Cohort does
 * not have, and its zero-padding ("%4t") is not offered: refused, with
 * the letters that are, rather than written into a name unexpanded.
 * Control characters are refused by job_spec_check_text. */
#define JOB_PATTERN_LETTERS "jAatnNxu%"

static int
check_pattern(const char *opt, const char *pat, struct cerr *err)
{
	size_t len, i;

	if (pat == NULL)
		return 0;
	len = strlen(pat);
	if (len == 0)
		return cerr_set(err, ERR_INVALID, "%s: an empty file name",
		    opt);
	if (len > JOB_PATH_MAX)
		return cerr_set(err, ERR_INVALID,
		    "%s: longer than %d bytes", opt, JOB_PATH_MAX);
	if (pat[len - 1] == '/')
		return cerr_set(err, ERR_INVALID,
		    "%s: '%.200s' names a directory, not a file", opt, pat);
	for (i = 0; i < len; i++) {
		if (pat[i] != '%')
			continue;
		if (pat[i + 1] != '\0' &&
		    strchr(JOB_PATTERN_LETTERS, pat[i + 1]) != NULL) {
			i++;
			continue;
		}
		if (pat[i + 1] == '\0')
			return cerr_set(err, ERR_INVALID,
			    "%s: a lone '%%' at the end (write %%%% for a "
			    "'%%')", opt);
		return cerr_set(err, ERR_INVALID,
		    "%s: '%%%c' is not supported by Cohort (%s; use %%j %%A "
		    "%%a %%t %%n %%N %%x %%u, or %%%% for a '%%')", opt,
		    pat[i + 1] >= 0x20 && pat[i + 1] < 0x7f ? pat[i + 1] : '?',
		    pat[i + 1] == 'J' || pat[i + 1] == 's' ?
		    "Cohort has no job steps" :
		    pat[i + 1] >= '0' && pat[i + 1] <= '9' ?
		    "no zero padding" : "unknown");
	}
	return 0;
}

bool
peer_name_ok(const char *s)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > PEER_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') ||
		    (i > 0 && (c == '.' || c == '_' || c == '-')))
			continue;
		return false;
	}
	return true;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand a --nodelist / --exclude hostlist, at most JOB_NODES_LIMIT
 * names (the expression itself is bounded by the wire's frame), each a
 * node name; sorted, duplicates dropped. NULL expr: none. */
static int
check_hostlist(const char *opt, const char *expr, char ***names, size_t *n,
    struct cerr *err)
{
	char why[256];
	size_t i, o;

	*names = NULL;
	*n = 0;
	if (expr == NULL)
		return 0;
	if (expr[0] == '\0')
		return cerr_set(err, ERR_INVALID, "%s: an empty list", opt);
	why[0] = '\0';
	if (hostlist_expand(expr, JOB_NODES_LIMIT, names, n, why,
	    sizeof(why)) == -1) {
		if (errno == E2BIG)
			return cerr_set(err, ERR_INVALID,
			    "%s: names more than %d nodes", opt,
			    JOB_NODES_LIMIT);
		if (errno == ENOMEM)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		return cerr_set(err, ERR_INVALID, "%s: %s", opt,
		    why[0] ? why : "not a hostlist (e.g. node[01-04],gpu7)");
	}
	for (i = 0; i < *n; i++)
		if (!peer_name_ok((*names)[i])) {
			cerr_set(err, ERR_INVALID, "%s: '%.80s' is not a node "
			    "name (letters, digits, '.', '_' and '-', at most "
			    "%d)", opt, (*names)[i], PEER_NAME_MAX);
			hostlist_free(*names, *n);
			*names = NULL;
			*n = 0;
			return -1;
		}
	qsort(*names, *n, sizeof(**names), name_cmp);
	for (i = o = 0; i < *n; i++) {
		if (o > 0 && strcmp((*names)[i], (*names)[o - 1]) == 0) {
			free((*names)[i]);
			continue;
		}
		(*names)[o++] = (*names)[i];
	}
	*n = o;
	return 0;
}

/* --nodelist and --exclude parse as hostlists of node names. The
 * nodelist is the set of nodes the job may use (with exactly --nodes of
 * them, the gang is those nodes) and --exclude takes nodes out of it, so
 * a list longer than the gang and a node in both are fine (Slurm's -w
 * instead names nodes the allocation must include: see
 * docs/design/scheduling.md).
 * Whether the nodes exist is the controller's to say (feasible.c). */
static int
check_nodes(const struct job_spec *spec, struct cerr *err)
{
	char **in = NULL, **out = NULL;
	size_t nin = 0, nout = 0;
	int rc = -1;

	if (check_hostlist("--nodelist", spec->nodelist, &in, &nin,
	    err) == -1 ||
	    check_hostlist("--exclude", spec->exclude, &out, &nout,
	    err) == -1)
		goto out;
	rc = 0;
out:
	hostlist_free(in, nin);
	hostlist_free(out, nout);
	return rc;
}

bool
job_gpu_memory_ok(uint64_t gpu_mb, uint64_t want_mb)
{
	return (gpu_mb + 512) / 1024 >= (want_mb + 1023) / 1024;
}

bool
job_node_cpus_ok(const struct job_spec *spec, uint32_t ncpus)
{
	uint64_t tpn = spec->tasks_per_node > 0 ? spec->tasks_per_node : 1;

	return spec->cpus_per_task == 0 ||
	    (uint64_t)spec->cpus_per_task * tpn <= ncpus;
}

bool
job_node_mem_ok(const struct job_spec *spec, uint64_t memory_mb)
{
	return spec->mem_per_node_mb <= memory_mb;
}

/* --constraint must parse (lib/constraint.h); whether any node has its
 * features is the controller's to say (feasible.c). --gpu-memory asks
 * for GPUs, so a CPU-only job cannot have it. */
static int
check_constraints(const struct job_spec *spec, struct cerr *err)
{
	char why[200];

	if (spec->constraint != NULL &&
	    constraint_parse(spec->constraint, why, sizeof(why)) == -1)
		return cerr_set(err, ERR_INVALID, "--constraint '%.64s%s': "
		    "%s", spec->constraint, strlen(spec->constraint) > 64 ?
		    "..." : "", why);
	if (spec->cpu_only && spec->gpu_memory_mb > 0)
		return cerr_set(err, ERR_INVALID, "--gpu-memory: a CPU-only "
		    "job (--gpus-per-node 0) uses no GPU");
	if (spec->gpu_memory_mb > JOB_GPU_MEMORY_MB_MAX)
		return cerr_set(err, ERR_INVALID, "--gpu-memory: at most "
		    "%llu GiB", (unsigned long long)JOB_GPU_MEMORY_MB_MAX /
		    1024);
	/* Whether a node has the cores and the memory is feasible.c's and
	 * placement's to say; these bounds keep the product and the MiB in
	 * range. */
	if (spec->cpus_per_task > 0 && (uint64_t)spec->cpus_per_task *
	    (spec->tasks_per_node > 0 ? spec->tasks_per_node : 1) >
	    JOB_CPUS_PER_NODE_MAX)
		return cerr_set(err, ERR_INVALID, "--cpus-per-task %u: with "
		    "%u task%s per node that is more than %u cores on a node",
		    spec->cpus_per_task, spec->tasks_per_node,
		    spec->tasks_per_node == 1 ? "" : "s",
		    JOB_CPUS_PER_NODE_MAX);
	if (spec->mem_per_node_mb > JOB_MEM_PER_NODE_MB_MAX)
		return cerr_set(err, ERR_INVALID, "--mem-per-node: at most "
		    "%lluT", (unsigned long long)JOB_MEM_PER_NODE_MB_MAX /
		    (1024 * 1024));
	return 0;
}

/* A CPU-only job (--gpus-per-node 0) asks for no GPU, of no type. An
 * exclusive job has whole nodes to itself; with --gpus-per-node N it
 * needs nodes of at least N GPUs and gets all of them (as Slurm's
 * --exclusive, and as converted scripts ask: --exclusive
 * --gpus-per-node=8), CPU-only it holds the nodes without a GPU. */
static int
check_gpu_use(const struct job_spec *spec, struct cerr *err)
{
	if (spec->cpu_only && spec->gpus_per_node != 0)
		return cerr_set(err, ERR_INVALID, "--gpus-per-node: a "
		    "CPU-only job asks for 0 GPUs, not %u",
		    spec->gpus_per_node);
	if (spec->cpu_only && spec->gpu_type != NULL)
		return cerr_set(err, ERR_INVALID, "--gpu-type: a CPU-only "
		    "job (--gpus-per-node 0) uses no GPU");
	return 0;
}

/* The daily workflow's fields that are not arrays or
 * dependencies (lib/array.c, lib/depend.c check those). */
static int
check_workflow(const struct job_spec *spec, struct cerr *err)
{
	/* Not an option: the CLI sends its own umask. */
	if (spec->has_umask && spec->umask > JOB_UMASK_MAX)
		return cerr_set(err, ERR_INVALID, "umask: %#o is not a file "
		    "mode mask (at most 0777)", spec->umask);
	if (spec->begin_ms < 0 || spec->begin_ms > JOB_BEGIN_MS_MAX)
		return cerr_set(err, ERR_INVALID, "--begin: not a time "
		    "between 1970 and 2999");
	if ((spec->signal_scope < JOB_SIGNAL_ALL ||
	    spec->signal_scope > JOB_SIGNAL_STEPS))
		return cerr_set(err, ERR_INVALID, "signal scope %d is not one "
		    "of 0, 1, 2", spec->signal_scope);
	/* salloc's job: its own task holds the allocation, and a shell
	 * elsewhere would not follow it to another start. */
	if (spec->interactive && (!spec->batch || spec->max_restarts != 0 ||
	    spec->service || spec->array != NULL))
		return cerr_set(err, ERR_INVALID, "an interactive allocation "
		    "is one batch job that is never restarted (no restarts, "
		    "service or array)");
	if ((spec->mail_type & ~JOB_MAIL_KNOWN) != 0)
		return cerr_set(err, ERR_INVALID, "--mail-type: unknown bits "
		    "%#x", spec->mail_type & ~JOB_MAIL_KNOWN);
	if (spec->on_straggler != JOB_STRAGGLER_REPORT &&
	    spec->on_straggler != JOB_STRAGGLER_REPLACE)
		return cerr_set(err, ERR_INVALID, "--on-straggler: %d is not "
		    "report (0) or replace (1)", spec->on_straggler);
	if (check_pattern("--output", spec->output, err) == -1 ||
	    check_pattern("--error", spec->error, err) == -1 ||
	    check_gpu_use(spec, err) == -1 ||
	    check_nodes(spec, err) == -1 ||
	    check_constraints(spec, err) == -1)
		return -1;
	return 0;
}

/* Length of the key of "KEY=VALUE", or 0 when there is no '='. */
static size_t
env_keylen(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq == NULL ? 0 : (size_t)(eq - kv);
}

static int
check_env_in(const struct job_spec *spec, bool reserved_ok,
    struct cerr *err)
{
	size_t i, j, klen, bytes = 0;
	const char *kv;

	if (spec->nenv > JOB_ENV_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--env: %zu variables, at most %d are allowed", spec->nenv,
		    JOB_ENV_LIMIT);
	if (spec->nenv > 0 && spec->env == NULL)
		return cerr_set(err, ERR_INVALID, "--env: variables missing");
	for (i = 0; i < spec->nenv; i++) {
		if ((kv = spec->env[i]) == NULL)
			return cerr_set(err, ERR_INVALID,
			    "--env: variable %zu is missing", i);
		bytes += strlen(kv) + 1;
		klen = env_keylen(kv);
		if (klen == 0 && kv[0] != '=')
			return cerr_set(err, ERR_INVALID,
			    "--env %.64s: expected KEY=VALUE", kv);
		if (klen == 0)
			return cerr_set(err, ERR_INVALID,
			    "--env: empty variable name in '%.64s'", kv);
		if (klen > JOB_ENV_KEY_MAX)
			return cerr_set(err, ERR_INVALID,
			    "--env: variable name longer than %d characters",
			    JOB_ENV_KEY_MAX);
		for (j = 0; j < klen; j++) {
			unsigned char c = (unsigned char)kv[j];

			if (c == '_' || (c >= 'A' && c <= 'Z') ||
			    (c >= 'a' && c <= 'z') ||
			    (j > 0 && c >= '0' && c <= '9'))
				continue;
			return cerr_set(err, ERR_INVALID,
			    "--env %.*s: not a valid variable name (letters, "
			    "digits and '_', not starting with a digit)",
			    (int)(klen < 64 ? klen : 64), kv);
		}
		if (!reserved_ok && strncmp(kv, ENV_RESERVED_PREFIX,
		    strlen(ENV_RESERVED_PREFIX)) == 0)
			return cerr_set(err, ERR_INVALID,
			    "--env %.*s: COHORT_* variables are set by Cohort",
			    (int)(klen < 64 ? klen : 64), kv);
	}
	if (bytes > JOB_ENV_BYTES_LIMIT)
		return cerr_set(err, ERR_INVALID,
		    "--env: variables take %zu bytes, at most %d are allowed",
		    bytes, JOB_ENV_BYTES_LIMIT);
	return 0;
}

static int
check_env(const struct job_spec *spec, struct cerr *err)
{
	return check_env_in(spec, false, err);
}

int
job_step_check(const struct job_spec *step, struct cerr *err)
{
	/* srun's environment holds the job's COHORT_* variables: the
	 * agent sets its own over them. */
	if (step->script != NULL)
		return cerr_set(err, ERR_INVALID, "a step runs a command, not "
		    "a script");
	if (check_command(step, NULL, err) == -1 ||
	    check_env_in(step, true, err) == -1 ||
	    check_path("--chdir", step->workdir, err) == -1 ||
	    (step->name != NULL && check_name(step->name, err) == -1))
		return -1;
	return job_spec_check_text(step, err);
}

/* One --env entry as env_dedup sorts them: its key, and where it was. */
struct env_key {
	const char *kv;
	size_t klen;
	size_t idx;
};

/* By key, then by position, so that the last of each key ends its run. */
static int
env_key_cmp(const void *a, const void *b)
{
	const struct env_key *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c;

	if ((c = memcmp(x->kv, y->kv, n)) != 0)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A later --env K=... overrides an earlier one, as in a shell: drop the
 * earlier copies, keeping the order of the rest. Sorting the keys finds
 * the copies in n log n comparisons, where comparing every pair would
 * cost the submit's callback a million of them at JOB_ENV_LIMIT. The spec
 * has been validated, so every entry has a key. 0, or -1 (ENOMEM) with
 * spec unchanged. */
static int
env_dedup(struct job_spec *spec)
{
	struct env_key *k;
	size_t i, o;

	if (spec->nenv < 2)
		return 0;
	if ((k = calloc(spec->nenv, sizeof(*k))) == NULL)
		return -1;
	for (i = 0; i < spec->nenv; i++) {
		k[i].kv = spec->env[i];
		k[i].klen = env_keylen(spec->env[i]);
		k[i].idx = i;
	}
	qsort(k, spec->nenv, sizeof(*k), env_key_cmp);
	for (i = 0; i + 1 < spec->nenv; i++)
		if (k[i].klen == k[i + 1].klen &&
		    memcmp(k[i].kv, k[i + 1].kv, k[i].klen) == 0) {
			free(spec->env[k[i].idx]);
			spec->env[k[i].idx] = NULL;
		}
	free(k);
	for (i = o = 0; i < spec->nenv; i++)
		if (spec->env[i] != NULL)
			spec->env[o++] = spec->env[i];
	spec->nenv = o;
	spec->env[o] = NULL;
	return 0;
}

int
job_idem_key_check(const char *key, struct cerr *err)
{
	return check_word("--idempotency-key", key, JOB_IDEM_KEY_MAX, "._:-",
	    "'.', '_', ':' and '-'", err);
}

/* Not an option: the CLI sends its gethostname(). A name that starts
 * with '-' or '.' is no host's, and would read as an option or a hidden
 * file to a script that uses it. */
int
job_submit_host_check(const char *host, struct cerr *err)
{
	if (check_word("submit host", host, JOB_SUBMIT_HOST_MAX, "._-",
	    "'.', '_' and '-'", err) == -1)
		return -1;
	if (host[0] == '-' || host[0] == '.')
		return cerr_set(err, ERR_INVALID, "submit host: '%.64s' does "
		    "not start with a letter or digit", host);
	return 0;
}

/* It is given to the mail program as an argument, never through a
 * shell: what matters is that it cannot read as an option ('-') and
 * holds nothing but an address's or a user name's characters. */
int
job_mail_user_check(const char *user, struct cerr *err)
{
	if (check_word("--mail-user", user, JOB_MAIL_USER_MAX, "._%+@-",
	    "'.', '_', '%', '+', '@' and '-'", err) == -1)
		return -1;
	if (user[0] == '-' || user[0] == '.' || user[0] == '@' ||
	    user[0] == '%' || user[0] == '+')
		return cerr_set(err, ERR_INVALID, "--mail-user: '%.64s' does "
		    "not start with a letter, a digit or '_'", user);
	return 0;
}

static const struct {
	const char *name;
	uint32_t bits;
} job_mail_names[] = {
	{ "NONE", 0 },
	{ "BEGIN", JOB_MAIL_BEGIN },
	{ "END", JOB_MAIL_END },
	{ "FAIL", JOB_MAIL_FAIL },
	{ "REQUEUE", JOB_MAIL_REQUEUE },
	{ "ALL", JOB_MAIL_ALL },
	{ "TIME_LIMIT", JOB_MAIL_TIME_LIMIT },
	{ "TIME_LIMIT_90", JOB_MAIL_TIME_LIMIT_90 },
	{ "TIME_LIMIT_80", JOB_MAIL_TIME_LIMIT_80 },
	{ "TIME_LIMIT_50", JOB_MAIL_TIME_LIMIT_50 },
	{ "ARRAY_TASKS", JOB_MAIL_ARRAY_TASKS },
};

int
job_mail_type_parse(const char *s, uint32_t *bits, struct cerr *err)
{
	const char *p = s, *end;
	uint32_t v = 0;
	size_t len, i;
	bool none = false;

	if (*s == '\0')
		return cerr_set(err, ERR_INVALID, "an empty list of types");
	for (;;) {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		for (i = 0; i < sizeof(job_mail_names) /
		    sizeof(job_mail_names[0]); i++)
			if (strlen(job_mail_names[i].name) == len &&
			    strncasecmp(job_mail_names[i].name, p, len) == 0)
				break;
		if (i < sizeof(job_mail_names) / sizeof(job_mail_names[0])) {
			v |= job_mail_names[i].bits;
			none |= job_mail_names[i].bits == 0;
		} else if ((len == 14 &&
		    strncasecmp(p, "INVALID_DEPEND", len) == 0) ||
		    (len == 9 && strncasecmp(p, "STAGE_OUT", len) == 0))
			return cerr_set(err, ERR_INVALID,
			    "%.*s: not supported by Cohort (%s)", (int)len, p,
			    len == 9 ? "it has no burst buffers to stage out" :
			    "a job whose dependency can never hold is "
			    "cancelled: END mails that");
		else
			return cerr_set(err, ERR_INVALID,
			    "unknown type '%.*s' (BEGIN, END, FAIL, REQUEUE, "
			    "ALL, NONE, TIME_LIMIT, TIME_LIMIT_90, "
			    "TIME_LIMIT_80, TIME_LIMIT_50, ARRAY_TASKS)",
			    (int)(len > 64 ? 64 : len), p);
		if (end == NULL)
			break;
		p = end + 1;
	}
	/* NONE with others: none, as it says. */
	*bits = none ? 0 : v;
	return 0;
}

static int
check_opt_name(const char *opt, const char *s, struct cerr *err)
{
	return s == NULL ? 0 : text_check_name(opt, s, err);
}

int
job_spec_check_text(const struct job_spec *spec, struct cerr *err)
{
	char opt[40];
	size_t i;

	if (check_opt_name("--name", spec->name, err) == -1 ||
	    check_opt_name("--gpu-type", spec->gpu_type, err) == -1 ||
	    check_opt_name("--topology", spec->topo_level, err) == -1 ||
	    check_opt_name("--checkpoint-dir", spec->checkpoint_dir,
	    err) == -1 ||
	    check_opt_name("--workdir", spec->workdir, err) == -1 ||
	    check_opt_name("script: file name", spec->script_name, err) == -1 ||
	    check_opt_name("--queue", spec->queue, err) == -1 ||
	    check_opt_name("--array", spec->array, err) == -1 ||
	    check_opt_name("--dependency", spec->dependency, err) == -1 ||
	    check_opt_name("--output", spec->output, err) == -1 ||
	    check_opt_name("--error", spec->error, err) == -1 ||
	    check_opt_name("--nodelist", spec->nodelist, err) == -1 ||
	    check_opt_name("--exclude", spec->exclude, err) == -1 ||
	    check_opt_name("--constraint", spec->constraint, err) == -1)
		return -1;
	if (spec->queue != NULL && check_word("--queue", spec->queue,
	    JOB_QUEUE_MAX, "._-", "'.', '_' and '-'", err) == -1)
		return -1;
	if ((spec->account != NULL && check_word("--account", spec->account,
	    PEER_NAME_MAX, "._-", "'.', '_' and '-'", err) == -1) ||
	    (spec->qos != NULL && check_word("--qos", spec->qos,
	    PEER_NAME_MAX, "._-", "'.', '_' and '-'", err) == -1))
		return -1;
	if (spec->idem_key != NULL &&
	    job_idem_key_check(spec->idem_key, err) == -1)
		return -1;
	if (spec->submit_host != NULL &&
	    job_submit_host_check(spec->submit_host, err) == -1)
		return -1;
	if (spec->mail_user != NULL &&
	    job_mail_user_check(spec->mail_user, err) == -1)
		return -1;
	for (i = 0; i < spec->nenv && spec->env != NULL; i++) {
		snprintf(opt, sizeof(opt), "--env (variable %zu)", i + 1);
		if (spec->env[i] != NULL &&
		    text_check_utf8(opt, spec->env[i], err) == -1)
			return -1;
	}
	for (i = 0; i < spec->argc && spec->argv != NULL; i++) {
		snprintf(opt, sizeof(opt), "command (word %zu)", i + 1);
		if (spec->argv[i] != NULL &&
		    text_check_utf8(opt, spec->argv[i], err) == -1)
			return -1;
	}
	if (spec->script != NULL &&
	    memchr(spec->script, '\0', spec->script_len) != NULL)
		return cerr_set(err, ERR_INVALID,
		    "script: contains a NUL byte (is it a binary file?)");
	return 0;
}

/* --array and --dependency (lib/array.h, lib/depend.h): their syntax and
 * bounds. That the jobs a dependency names exist, and are the
 * submitter's to name, only the controller knows (jobs_depend.c). */
static int
check_arrays(const struct job_spec *spec, struct cerr *err)
{
	struct array_spec a;
	struct depend d;
	size_t i;
	int rc = 0;

	if (spec->array != NULL) {
		if (array_parse(spec->array, &a, err) == -1)
			return -1;
		array_spec_clear(&a);
	}
	if (spec->dependency == NULL)
		return 0;
	if (depend_parse(spec->dependency, &d, err) == -1)
		return -1;
	for (i = 0; i < d.n && rc == 0; i++)
		if (d.items[i].type == DEPEND_AFTERCORR && spec->array == NULL)
			rc = cerr_set(err, ERR_INVALID, "--dependency '%s': "
			    "aftercorr is for arrays (task by task); this job "
			    "has no --array", spec->dependency);
	depend_clear(&d);
	return rc;
}

int
job_spec_validate(struct job_spec *spec, enum role role,
    const struct job_limits *limits, struct cerr *err)
{
	char *derived = NULL;

	if (job_spec_check_text(spec, err) == -1 ||
	    check_command(spec, limits, err) == -1)
		return -1;
	/* Nothing changes in spec until every check has passed, so that a
	 * refused spec is returned as it came. */
	if (spec->name == NULL || spec->name[0] == '\0') {
		if ((derived = name_derive(spec)) == NULL) {
			if (errno == ENOMEM)
				return cerr_set(err, ERR_INTERNAL,
				    "out of memory");
			return cerr_set(err, ERR_INVALID,
			    "--name: no name given and none can be derived");
		}
		if (derived[0] == '\0') {
			free(derived);
			return cerr_set(err, ERR_INVALID,
			    "--name: no name given and none can be derived");
		}
	} else if (check_name(spec->name, err) == -1)
		return -1;
	if (check_shape(spec, err) == -1 ||
	    check_policy(spec, role, err) == -1 ||
	    check_env(spec, err) == -1 || check_arrays(spec, err) == -1 ||
	    check_workflow(spec, err) == -1 ||
	    ctr_validate(&spec->ctr, err) == -1) {
		free(derived);
		return -1;
	}
	if (env_dedup(spec) == -1) {
		free(derived);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if (derived != NULL) {
		free(spec->name);
		spec->name = derived;
	}
	cerr_clear(err);
	return 0;
}

struct job *
job_new(void)
{
	struct job *job;

	if ((job = calloc(1, sizeof(*job))) == NULL)
		return NULL;
	job_spec_init(&job->spec);
	/* reason is never NULL, so that nobody has to test before printing. */
	if ((job->reason = strdup("")) == NULL) {
		free(job);
		return NULL;
	}
	return job;
}

void
job_free(struct job *job)
{
	if (job == NULL)
		return;
	free(job->user);
	free(job->reason);
	free(job->place);
	free(job->ckpt_path);
	free(job->prev_place);
	free(job->avoid);
	job_spec_clear(&job->spec);
	free(job);
}

int
job_set_placement(struct job *job, const struct placement *place, size_t n)
{
	struct placement *copy = NULL;

	if (n > 0) {
		if ((copy = calloc(n, sizeof(*copy))) == NULL)
			return -1;
		memcpy(copy, place, n * sizeof(*copy));
	}
	free(job->place);
	job->place = copy;
	job->nplace = n;
	return 0;
}

uint64_t
job_unsaved_ms(const struct job *job, int64_t at_ms)
{
	int64_t since;

	if (job->state != JOB_RUNNING && job->state != JOB_RESIZING)
		return 0;
	since = job->ckpt_ms > job->start_ms ? job->ckpt_ms : job->start_ms;
	return since > 0 && at_ms > since ? (uint64_t)(at_ms - since) : 0;
}

int
job_id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint32_t
job_gpus(const struct job *job)
{
	uint64_t g = 0;
	size_t i;

	for (i = 0; i < job->nplace; i++)
		g += job->place[i].ngpus;
	return g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
}

const struct placement *
job_node_placement(const struct job *job, const char *node)
{
	size_t i;

	for (i = 0; i < job->nplace; i++)
		if (strcmp(job->place[i].node, node) == 0)
			return &job->place[i];
	return NULL;
}

unsigned
job_node_ranks(const struct job *job, unsigned node_rank, unsigned *first)
{
	unsigned tpn = job->spec.tasks_per_node > 0 ?
	    job->spec.tasks_per_node : 1;

	if (job->spec.batch) {
		*first = 0;
		return node_rank == 0 ? 1 : 0;
	}
	*first = node_rank * tpn;
	return tpn;
}

size_t
job_nranks(const struct job *job)
{
	if (job->spec.batch)
		return job->nplace > 0 ? 1 : 0;
	return job->nplace * (job->spec.tasks_per_node > 0 ?
	    job->spec.tasks_per_node : 1);
}

bool
job_rank_on_node(const struct job *job, unsigned rank, const char *node)
{
	unsigned tpn = job->spec.tasks_per_node > 0 ?
	    job->spec.tasks_per_node : 1;
	uint64_t nr = rank / tpn;
	size_t i;

	if (job->spec.batch) {
		if (rank != 0)
			return false;
		nr = 0;
	}
	if (nr >= job->nplace)
		return false;
	/* Placements are kept in node_rank order: one look, not a scan
	 * (agents report every task of a 10,000-node gang each heartbeat). */
	if (job->place[nr].node_rank == nr)
		return strcmp(job->place[nr].node, node) == 0;
	for (i = 0; i < job->nplace; i++)
		if (job->place[i].node_rank == nr)
			return strcmp(job->place[i].node, node) == 0;
	return false;
}

const char *
job_state_name(enum job_state state)
{
	if (state < JOB_PENDING || state > JOB_STATE_LAST)
		return "UNKNOWN";
	return job_state_names[state];
}

int
job_state_parse(const char *name, enum job_state *state)
{
	int s;

	if (name != NULL) {
		for (s = JOB_PENDING; s <= JOB_STATE_LAST; s++) {
			if (strcasecmp(name, job_state_names[s]) == 0) {
				*state = (enum job_state)s;
				return 0;
			}
		}
	}
	errno = EINVAL;
	return -1;
}

bool
job_state_is_final(enum job_state state)
{
	return state == JOB_COMPLETED || state == JOB_FAILED ||
	    state == JOB_CANCELLED || state == JOB_TIMEOUT;
}

const char *
role_name(enum role role)
{
	switch (role) {
	case ROLE_USER:
		return "user";
	case ROLE_ADMIN:
		return "admin";
	case ROLE_AGENT:
		return "agent";
	case ROLE_CONTROLLER:
		return "controller";
	default:
		return "none";
	}
}

/* Exact, case-sensitive: the role comes from a certificate, and a
 * spelling the PKI tool never writes should not grant anything. */
enum role
role_parse(const char *name)
{
	if (name == NULL)
		return ROLE_NONE;
	if (strcmp(name, "user") == 0)
		return ROLE_USER;
	if (strcmp(name, "admin") == 0)
		return ROLE_ADMIN;
	if (strcmp(name, "agent") == 0)
		return ROLE_AGENT;
	if (strcmp(name, "controller") == 0)
		return ROLE_CONTROLLER;
	return ROLE_NONE;
}

int
strv_append(char ***v, size_t *n, const char *s)
{
	char **nv, *copy;

	if ((copy = strdup(s)) == NULL)
		return -1;
	/* One more for the new string and one for the terminating NULL, so
	 * that the vector can go straight to execve. */
	if ((nv = reallocarray(*v, *n + 2, sizeof(*nv))) == NULL) {
		free(copy);
		return -1;
	}
	nv[(*n)++] = copy;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

void
strv_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
