/* scontrol and scancel as Cohort answers them (cohort(1), "SLURM
 * COMMANDS"): show job, node, partition in Slurm's Key=Value layout,
 * show hostnames and hostlist without a controller, requeue, hold,
 * release and update over the requests cohort's own commands send, and
 * scancel with Slurm's messages. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/commands.h"
#include "client/control.h"
#include "client/jobref.h"
#include "client/output.h"
#include "client/slurm_format.h"
#include "client/slurm_query.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/hostlist.h"
#include "lib/wire.h"

/* ---- Key=Value records ---- */

/* A record being printed: lines of Key=Value words, or with oneline
 * every word on one line, as scontrol -o. */
struct kv {
	FILE *fp;
	bool oneline;
	bool first;		/* no word yet on the record */
	bool linestart;		/* the next word starts a line */
};

static void
kv_begin(struct kv *k, FILE *fp, bool oneline)
{
	k->fp = fp;
	k->oneline = oneline;
	k->first = true;
	k->linestart = false;
}

/* Words after this start a new line (indented three spaces). */
static void
kv_line(struct kv *k)
{
	k->linestart = true;
}

static void __attribute__((format(printf, 3, 4)))
kv_add(struct kv *k, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (!k->first)
		fputs(k->linestart && !k->oneline ? "\n   " : " ", k->fp);
	k->first = false;
	k->linestart = false;
	fprintf(k->fp, "%s=", key);
	va_start(ap, fmt);
	vfprintf(k->fp, fmt, ap);
	va_end(ap);
}

static void
kv_end(struct kv *k)
{
	/* scontrol ends each multi-line record with an empty line. */
	fputs(k->oneline ? "\n" : "\n\n", k->fp);
}

static const char *
orn(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : "(null)";
}

/* ---- show job ---- */

static void
show_job(const struct job *j, bool oneline)
{
	char b[64], nodes[1024], rb[SLURM_REASON_LEN];
	struct passwd *pw;
	struct kv k;
	uint64_t cpus, per;

	kv_begin(&k, stdout, oneline);
	kv_add(&k, "JobId", "%" PRIu64, j->id);
	if (j->array_id != 0) {
		kv_add(&k, "ArrayJobId", "%" PRIu64, j->array_id);
		kv_add(&k, "ArrayTaskId", "%u", j->array_task);
	}
	kv_add(&k, "JobName", "%s", orn(j->spec.name));
	kv_line(&k);
	pw = j->user != NULL ? getpwnam(j->user) : NULL;
	if (pw != NULL) {
		kv_add(&k, "UserId", "%s(%u)", j->user, (unsigned)pw->pw_uid);
		kv_add(&k, "GroupId", "(%u)", (unsigned)pw->pw_gid);
	} else
		kv_add(&k, "UserId", "%s", orn(j->user));
	kv_line(&k);
	kv_add(&k, "Priority", "%" PRId32, j->spec.priority);
	kv_add(&k, "Nice", "0");
	kv_add(&k, "Account", "(null)");
	kv_add(&k, "QOS", "(null)");
	kv_line(&k);
	kv_add(&k, "JobState", "%s", slurm_state_name(j->state));
	kv_add(&k, "Reason", "%s", j->state == JOB_PENDING ||
	    j->state == JOB_RESTARTING ? slurm_reason(j->reason, rb,
	    sizeof(rb)) : "None");
	kv_add(&k, "Dependency", "%s", orn(j->spec.dependency));
	kv_line(&k);
	kv_add(&k, "Requeue", "1");
	kv_add(&k, "Restarts", "%u", j->restarts);
	kv_add(&k, "BatchFlag", "%d", j->spec.script != NULL ||
	    j->spec.script_name != NULL);
	kv_add(&k, "ExitCode", "%" PRId32 ":0", j->has_exit ? j->exit_code :
	    0);
	kv_line(&k);
	kv_add(&k, "RunTime", "%s", slurm_secs_long(slurm_job_elapsed_s(j,
	    clock_now_ms()), b, sizeof(b)));
	kv_add(&k, "TimeLimit", "%s", j->spec.service ||
	    j->spec.time_limit_s == 0 ? "UNLIMITED" : slurm_secs_long(
	    j->spec.time_limit_s, b, sizeof(b)));
	kv_line(&k);
	kv_add(&k, "SubmitTime", "%s", slurm_time(j->submit_ms, "Unknown", b,
	    sizeof(b)));
	kv_line(&k);
	kv_add(&k, "StartTime", "%s", slurm_time(j->start_ms > 0 ?
	    j->start_ms : j->expected_start_ms, "Unknown", b, sizeof(b)));
	kv_add(&k, "EndTime", "%s", slurm_time(j->end_ms, "Unknown", b,
	    sizeof(b)));
	kv_line(&k);
	kv_add(&k, "Partition", "%s", orn(j->spec.queue));
	kv_line(&k);
	kv_add(&k, "ReqNodeList", "%s", orn(j->spec.nodelist));
	kv_add(&k, "ExcNodeList", "%s", orn(j->spec.exclude));
	kv_line(&k);
	kv_add(&k, "NodeList", "%s", orn(slurm_job_nodelist(j, nodes,
	    sizeof(nodes))));
	kv_line(&k);
	per = j->spec.cpus_per_task > 0 ? j->spec.cpus_per_task : 1;
	cpus = per * j->spec.tasks_per_node * (j->nplace > 0 ? j->nplace :
	    j->spec.nodes_min);
	if (j->spec.nodes_min == j->spec.nodes_max)
		kv_add(&k, "NumNodes", "%u", j->spec.nodes_min);
	else
		kv_add(&k, "NumNodes", "%u-%u", j->spec.nodes_min,
		    j->spec.nodes_max);
	kv_add(&k, "NumCPUs", "%" PRIu64, cpus);
	kv_add(&k, "NumTasks", "%" PRIu64, (uint64_t)j->spec.tasks_per_node *
	    (j->nplace > 0 ? j->nplace : j->spec.nodes_min));
	kv_add(&k, "CPUs/Task", "%" PRIu64, per);
	kv_line(&k);
	if (j->spec.cpu_only)
		kv_add(&k, "TresPerNode", "(null)");
	else if (j->spec.gpus_per_node > 0)
		kv_add(&k, "TresPerNode", "gres/gpu:%u",
		    j->spec.gpus_per_node);
	else
		kv_add(&k, "TresPerNode", "gres/gpu");
	kv_line(&k);
	kv_add(&k, "Command", "%s", j->redacted ? "(private)" :
	    j->spec.script_name != NULL ? j->spec.script_name :
	    j->spec.argc > 0 ? j->spec.argv[0] : "(null)");
	kv_line(&k);
	kv_add(&k, "WorkDir", "%s", j->redacted ? "(private)" :
	    orn(j->spec.workdir));
	kv_line(&k);
	kv_add(&k, "StdOut", "%s", orn(j->spec.output));
	kv_line(&k);
	kv_add(&k, "StdErr", "%s", orn(j->spec.error != NULL ?
	    j->spec.error : j->spec.output));
	kv_end(&k);
}

/* GetJob id on c into *out. EXIT_OK or an exit code after printing. */
static int
get_job(struct cconn *c, uint64_t id, struct job **out)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct cerr err;
	int rc = EXIT_OK;

	gj.job_id = id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	cerr_clear(&err);
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		slurm_error("scontrol", "slurm_load_jobs error: %s",
		    rep->error->code == COHORT__V1__ERROR_CODE__ERROR_NOT_FOUND ?
		    "Invalid job id specified" : rep->error->text);
		rc = EXIT_FAILED;
	} else if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY)
		rc = output_reply_error("scontrol", rep);
	else if ((*out = wire_job_from_pb(rep->get_job_reply->job, &err)) ==
	    NULL) {
		slurm_error("scontrol", "the controller sent a job we cannot "
		    "read: %s", err.text);
		rc = EXIT_FAILED;
	}
	frame_free(rep);
	return rc;
}

static int
show_jobs(const struct cconn_opts *opts, const char *arg, bool oneline)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	struct jobref_ids ids = { 0 };
	struct cconn *c;
	struct cerr err;
	struct job **v = NULL, *j;
	size_t n = 0, i;
	int rc;

	if (arg != NULL && jobref_check("scontrol", arg, NULL) != EXIT_OK)
		return EXIT_FAILED;
	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		return rc;
	if (arg == NULL) {
		/* Every job that has not ended, as Slurm's (which keeps
		 * ended ones a few minutes). */
		if ((rc = slurm_jobs_fetch("scontrol", c, &lj, 0, &v, &n)) ==
		    EXIT_OK && n == 0)
			puts("No jobs in the system");
		for (i = 0; i < n; i++)
			show_job(v[i], oneline);
		slurm_jobs_free(v, n);
	} else {
		cerr_clear(&err);
		if (jobref_resolve(c, arg, &ids, &err) == -1) {
			slurm_error("scontrol", "slurm_load_jobs error: %s",
			    err.code == ERR_NOT_FOUND ?
			    "Invalid job id specified" : err.text);
			rc = EXIT_FAILED;
		}
		for (i = 0; rc == EXIT_OK && i < ids.n; i++) {
			j = NULL;
			if ((rc = get_job(c, ids.ids[i], &j)) == EXIT_OK)
				show_job(j, oneline);
			job_free(j);
		}
		jobref_ids_clear(&ids);
	}
	cconn_close(c);
	if (fflush(stdout) == EOF)
		rc = EXIT_FAILED;
	return rc;
}

/* ---- show node, show partition ---- */

static const char *
node_base_state(const struct nodes_view_node *v)
{
	if (!v->up)
		return "DOWN*";
	if (v->gpus_total > 0 && v->gpus_held == v->gpus_total)
		return "ALLOCATED";
	if (v->gpus_held > 0 || v->busy)
		return "MIXED";
	return "IDLE";
}

static void
show_node(const struct slurm_cluster *cl, const struct slurm_node *n,
    bool oneline)
{
	const struct nodes_view_node *v = &n->view;
	char b[OUTPUT_TIME_LEN], feat[1024];
	struct kv k;
	size_t i;

	kv_begin(&k, stdout, oneline);
	kv_add(&k, "NodeName", "%s", v->name);
	kv_line(&k);
	kv_add(&k, "CPUTot", "%u", n->ncpus);
	kv_line(&k);
	kv_add(&k, "AvailableFeatures", "%s", nodes_view_features_cell(v,
	    feat, sizeof(feat)) != NULL ? feat : "(null)");
	kv_line(&k);
	if (v->gpus_total > 0)
		kv_add(&k, "Gres", "gpu:%u", v->gpus_total);
	else
		kv_add(&k, "Gres", "(null)");
	kv_line(&k);
	kv_add(&k, "NodeAddr", "%s", orn(n->pb->address));
	kv_add(&k, "NodeHostName", "%s", v->name);
	kv_line(&k);
	kv_add(&k, "RealMemory", "%" PRIu64, n->memory_mb);
	kv_line(&k);
	kv_add(&k, "State", "%s%s", node_base_state(v), v->drain[0] ?
	    "+DRAIN" : "");
	kv_line(&k);
	fputs(k.first ? "" : k.oneline ? " " : "\n   ", k.fp);
	fputs("Partitions=", k.fp);
	for (i = 0; i < cl->nparts; i++)
		fprintf(k.fp, "%s%s", i ? "," : "", cl->parts[i]);
	kv_line(&k);
	kv_add(&k, "CfgTRES", "cpu=%u,mem=%" PRIu64 "M,gres/gpu=%u",
	    n->ncpus, n->memory_mb, v->gpus_total);
	kv_line(&k);
	kv_add(&k, "AllocTRES", "gres/gpu=%u", v->gpus_held);
	if (v->reason != NULL) {
		kv_line(&k);
		if (v->drain_actor != NULL)
			kv_add(&k, "Reason", "%s [%s@%s]", v->reason,
			    v->drain_actor, slurm_time(v->drain_ms, "Unknown",
			    b, sizeof(b)));
		else
			kv_add(&k, "Reason", "%s", v->reason);
	}
	kv_end(&k);
}

static void
show_partition(const struct slurm_cluster *cl, size_t p, bool oneline)
{
	char **names, *list = NULL;
	uint64_t cpus = 0;
	struct kv k;
	size_t i;

	if ((names = calloc(cl->nnodes + 1, sizeof(*names))) != NULL) {
		for (i = 0; i < cl->nnodes; i++) {
			names[i] = (char *)cl->nodes[i].view.name;
			cpus += cl->nodes[i].ncpus;
		}
		list = hostlist_compress(names, cl->nnodes);
		free(names);
	}
	kv_begin(&k, stdout, oneline);
	kv_add(&k, "PartitionName", "%s", cl->parts[p]);
	kv_line(&k);
	kv_add(&k, "AllowGroups", "ALL");
	kv_add(&k, "AllowAccounts", "ALL");
	kv_add(&k, "AllowQos", "ALL");
	kv_line(&k);
	kv_add(&k, "Default", "%s", p == cl->default_part ? "YES" : "NO");
	kv_line(&k);
	kv_add(&k, "MaxNodes", "UNLIMITED");
	kv_add(&k, "MaxTime", "UNLIMITED");
	kv_add(&k, "MinNodes", "0");
	kv_line(&k);
	kv_add(&k, "Nodes", "%s", orn(list));
	kv_line(&k);
	kv_add(&k, "State", "UP");
	kv_add(&k, "TotalCPUs", "%" PRIu64, cpus);
	kv_add(&k, "TotalNodes", "%zu", cl->nnodes);
	kv_end(&k);
	free(list);
}

static int
show_cluster(const struct cconn_opts *opts, bool nodes, const char *name,
    bool oneline)
{
	struct slurm_cluster cl;
	struct cconn *c;
	size_t i;
	bool found = false;
	int rc;

	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		return rc;
	rc = slurm_cluster_fetch("scontrol", c, true, &cl);
	cconn_close(c);
	if (rc != EXIT_OK)
		return rc;
	for (i = 0; i < (nodes ? cl.nnodes : cl.nparts); i++) {
		if (name != NULL && strcmp(name, nodes ?
		    cl.nodes[i].view.name : cl.parts[i]) != 0)
			continue;
		found = true;
		if (nodes)
			show_node(&cl, &cl.nodes[i], oneline);
		else
			show_partition(&cl, i, oneline);
	}
	if (name != NULL && !found) {
		slurm_error("scontrol", "%s %s not found", nodes ? "Node" :
		    "Partition", name);
		rc = EXIT_FAILED;
	} else if (!found)
		printf("No %s in the system\n", nodes ? "nodes" :
		    "partitions");
	slurm_cluster_clear(&cl);
	return fflush(stdout) == EOF ? EXIT_FAILED : rc;
}

/* ---- show hostnames, show hostlist: no controller ---- */

static int
show_hosts(const char *list, bool compress)
{
	char **names, *s, why[256];
	size_t n, i;

	if (list == NULL || list[0] == '\0') {
		slurm_error("scontrol", "host list is empty");
		return EXIT_FAILED;
	}
	if (hostlist_expand(list, HOSTLIST_NODES_MAX, &names, &n, why,
	    sizeof(why)) == -1) {
		slurm_error("scontrol", "Invalid hostlist: %s", errno ==
		    EINVAL ? why : errno == E2BIG ? "too many names" :
		    "out of memory");
		return EXIT_FAILED;
	}
	if (compress) {
		if ((s = hostlist_compress(names, n)) == NULL) {
			slurm_error("scontrol", "Invalid hostlist: %s", list);
			hostlist_free(names, n);
			return EXIT_FAILED;
		}
		puts(s);
		free(s);
	} else
		for (i = 0; i < n; i++)
			puts(names[i]);
	hostlist_free(names, n);
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}

/* ---- update ---- */

/* Slurm's time limits: MIN, MIN:SEC, H:MIN:SEC, D-H, D-H:MIN,
 * D-H:MIN:SEC. 0 with *secs, or -1. */
static int
slurm_limit_parse(const char *s, uint64_t *secs)
{
	unsigned long long d = 0, f[3];
	int n = 0, used;
	const char *p = s;

	if (strchr(s, '-') != NULL) {
		if (sscanf(p, "%llu-%n", &d, &used) != 1)
			return -1;
		p += used;
	}
	while (n < 3 && isdigit((unsigned char)*p)) {
		if (sscanf(p, "%llu%n", &f[n], &used) != 1)
			return -1;
		p += used;
		n++;
		if (*p == ':')
			p++;
		else
			break;
	}
	if (*p != '\0' || n == 0 || d > 100000)
		return -1;
	if (strchr(s, '-') != NULL)
		/* D-H[:M[:S]] */
		*secs = d * 86400 + f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) +
		    (n > 2 ? f[2] : 0);
	else if (n == 1)
		*secs = f[0] * 60;
	else if (n == 2)
		*secs = f[0] * 60 + f[1];
	else
		*secs = f[0] * 3600 + f[1] * 60 + f[2];
	return 0;
}

static const char update_keys[] = "JobId, TimeLimit, Priority, Partition, "
    "JobName (Name), NumNodes (MIN[-MAX])";

/* One Key=Value into ur. 0, or -1 after printing why. */
static int
update_word(Cohort__V1__UpdateRequest *ur, const char *w, bool *has_id)
{
	const char *eq = strchr(w, '=');
	char key[32], *end;
	const char *v;
	unsigned long long lo, hi;
	long long pr;

	if (eq == NULL || (size_t)(eq - w) >= sizeof(key))
		goto bad;
	snprintf(key, sizeof(key), "%.*s", (int)(eq - w), w);
	v = eq + 1;
	errno = 0;
	if (strcasecmp(key, "JobId") == 0) {
		if (output_parse_job_id("scontrol", v, &ur->job_id) == -1)
			return -1;
		*has_id = true;
	} else if (strcasecmp(key, "TimeLimit") == 0) {
		if (slurm_limit_parse(v, &ur->time_limit_s) == -1) {
			slurm_error("scontrol", "Invalid TimeLimit value: %s "
			    "(MIN, MIN:SEC, H:MIN:SEC, D-H, D-H:MIN or "
			    "D-H:MIN:SEC)", v);
			return -1;
		}
		ur->has_time_limit_s = 1;
	} else if (strcasecmp(key, "Priority") == 0) {
		pr = strtoll(v, &end, 10);
		if (errno != 0 || end == v || *end != '\0' ||
		    pr < INT32_MIN || pr > INT32_MAX) {
			slurm_error("scontrol", "Invalid Priority value: %s", v);
			return -1;
		}
		ur->has_priority = 1;
		ur->priority = (int32_t)pr;
	} else if (strcasecmp(key, "Partition") == 0)
		ur->queue = (char *)v;
	else if (strcasecmp(key, "JobName") == 0 ||
	    strcasecmp(key, "Name") == 0)
		ur->name = (char *)v;
	else if (strcasecmp(key, "NumNodes") == 0) {
		lo = strtoull(v, &end, 10);
		hi = lo;
		if (*end == '-')
			hi = strtoull(end + 1, &end, 10);
		if (errno != 0 || !isdigit((unsigned char)v[0]) ||
		    *end != '\0' || lo == 0 || hi < lo || hi > UINT32_MAX) {
			slurm_error("scontrol", "Invalid NumNodes value: %s",
			    v);
			return -1;
		}
		ur->has_nodes_min = ur->has_nodes_max = 1;
		ur->nodes_min = (uint32_t)lo;
		ur->nodes_max = (uint32_t)hi;
	} else
		goto bad;
	return 0;
bad:
	slurm_error("scontrol", "Update of this parameter is not supported: "
	    "%s (Cohort's scontrol update takes %s)", w, update_keys);
	fputs("Request aborted\n", stderr);
	return -1;
}

static int
update_job(const struct cconn_opts *opts, int argc, char **argv)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__UpdateRequest ur = COHORT__V1__UPDATE_REQUEST__INIT;
	struct cerr err;
	struct cconn *c;
	bool has_id = false;
	int i, rc;

	/* Every word is checked before anything is sent. */
	for (i = 0; i < argc; i++)
		if (update_word(&ur, argv[i], &has_id) == -1)
			return EXIT_FAILED;
	if (!has_id) {
		slurm_error("scontrol", "update: JobId=ID is required (only "
		    "jobs can be updated)");
		return EXIT_FAILED;
	}
	if (argc < 2) {
		slurm_error("scontrol", "update: nothing to change");
		return EXIT_FAILED;
	}
	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		return rc;
	req.body_case = COHORT__V1__ENVELOPE__BODY_UPDATE;
	req.update = &ur;
	cerr_clear(&err);
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		rc = output_call_error(&err);
	else if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		slurm_error("scontrol", "Error updating job %" PRIu64 ": %s",
		    ur.job_id, rep->error->text);
		rc = EXIT_FAILED;
	} else if (rep->body_case != COHORT__V1__ENVELOPE__BODY_UPDATE_REPLY)
		rc = output_reply_error("scontrol", rep);
	frame_free(rep);
	cconn_close(c);
	return rc;
}

/* ---- scontrol ---- */

/* requeue, hold, release: "ID[,ID...]" words, handed to cohort's own
 * command (client/control.c), which checks and sends them. */
static int
job_control(const struct cconn_opts *opts, const char *what, int argc,
    char **argv)
{
	char **v, *tok, *save, *copy;
	int n = 1, i, rc;

	if (argc == 0) {
		slurm_error("scontrol", "%s: a job id is required", what);
		return EXIT_FAILED;
	}
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return EXIT_FAILED;
	v[0] = (char *)what;
	rc = EXIT_OK;
	for (i = 0; i < argc && rc == EXIT_OK; i++) {
		if ((copy = strdup(argv[i])) == NULL)
			rc = EXIT_FAILED;
		for (tok = copy ? strtok_r(copy, ",", &save) : NULL;
		    tok != NULL; tok = strtok_r(NULL, ",", &save)) {
			char **nv = reallocarray(v, (size_t)n + 2,
			    sizeof(*v));

			if (nv == NULL || (nv[n] = strdup(tok)) == NULL) {
				if (nv != NULL)
					v = nv;
				rc = EXIT_FAILED;
				break;
			}
			v = nv;
			n++;
		}
		free(copy);
	}
	v[n] = NULL;
	if (rc == EXIT_OK)
		rc = strcmp(what, "hold") == 0 ? cmd_hold(n, v, opts) :
		    strcmp(what, "release") == 0 ? cmd_release(n, v, opts) :
		    cmd_requeue(n, v, opts);
	/* Slurm's scontrol fails with 1, usage errors too. */
	if (rc == EXIT_USAGE)
		rc = EXIT_FAILED;
	for (i = 1; i < n; i++)
		free(v[i]);
	free(v);
	return rc;
}

static const struct option scontrol_longopts[] = {
	{ "oneliner", no_argument, NULL, 'o' },
	{ "details", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char scontrol_usage[] =
    "Usage: scontrol [-o] [-d] COMMAND\n"
    "  show job [ID]          show node [NAME]      show partition [NAME]\n"
    "  show hostnames [LIST]  show hostlist LIST    (these two need no\n"
    "                                                controller)\n"
    "  requeue ID[,ID...]     hold ID[,ID...]       release ID[,ID...]\n"
    "  update JobId=ID [TimeLimit=T] [Priority=P] [Partition=Q]\n"
    "         [JobName=N] [NumNodes=MIN[-MAX]]\n"
    "  Cohort's scontrol (cohort(1), SLURM COMMANDS); -d adds nothing.\n";

/* Does word abbreviate full (at least min letters), as scontrol's
 * keywords may be? */
static bool
kw(const char *word, const char *full, size_t min)
{
	size_t n = strlen(word);

	return n >= min && n <= strlen(full) && strncasecmp(word, full,
	    n) == 0;
}

int
cmd_scontrol(int argc, char **argv, const struct cconn_opts *opts)
{
	const char *what, *arg;
	bool oneline = false;
	int ch;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:dho", scontrol_longopts,
	    NULL)) != -1) {
		if (ch == 'o')
			oneline = true;
		else if (ch == 'd')
			continue;	/* nothing more to show */
		else if (ch == 'h') {
			fputs(scontrol_usage, stdout);
			return EXIT_OK;
		} else
			return slurm_option_error("scontrol", ch, argv);
	}
	if (optind >= argc) {
		slurm_error("scontrol", "no command given (see scontrol "
		    "--help)");
		return EXIT_FAILED;
	}
	what = argv[optind++];
	arg = optind < argc ? argv[optind] : NULL;
	if (kw(what, "show", 3)) {
		if (arg == NULL) {
			slurm_error("scontrol", "show: what to show is "
			    "required (job, node, partition, hostnames, "
			    "hostlist)");
			return EXIT_FAILED;
		}
		what = arg;
		arg = optind + 1 < argc ? argv[optind + 1] : NULL;
		if (optind + 2 < argc) {
			slurm_error("scontrol", "show %s: one %s at a time",
			    what, what);
			return EXIT_FAILED;
		}
		if (kw(what, "hostnames", 5))
			return show_hosts(arg != NULL ? arg :
			    getenv("SLURM_JOB_NODELIST"), false);
		if (kw(what, "hostlist", 5))
			return show_hosts(arg, true);
		if (kw(what, "jobs", 3))
			return show_jobs(opts, arg, oneline);
		if (kw(what, "nodes", 4))
			return show_cluster(opts, true, arg, oneline);
		if (kw(what, "partitions", 4))
			return show_cluster(opts, false, arg, oneline);
		slurm_error("scontrol", "show %s: not supported by Cohort's "
		    "scontrol (job, node, partition, hostnames, hostlist)",
		    what);
		return EXIT_FAILED;
	}
	if (kw(what, "requeue", 3) || kw(what, "hold", 4) ||
	    kw(what, "release", 3))
		return job_control(opts, tolower((unsigned char)what[0]) ==
		    'h' ? "hold" : tolower((unsigned char)what[2]) == 'q' ?
		    "requeue" : "release", argc - optind, argv + optind);
	if (kw(what, "update", 2))
		return update_job(opts, argc - optind, argv + optind);
	slurm_error("scontrol", "invalid keyword: %s (Cohort's scontrol "
	    "takes show, requeue, hold, release, update)", what);
	return EXIT_FAILED;
}

/* ---- scancel ---- */

static const struct option scancel_longopts[] = {
	{ "user", required_argument, NULL, 'u' },
	{ "name", required_argument, NULL, 'n' },
	{ "state", required_argument, NULL, 't' },
	{ "signal", required_argument, NULL, 's' },
	{ "batch", no_argument, NULL, 'b' },
	{ "interactive", no_argument, NULL, 'i' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'Q' },
	{ "hurry", no_argument, NULL, 'H' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char scancel_usage[] =
    "Usage: scancel [-v] [-Q] [-u USER] [-n NAME] [-t STATES] [ID...]\n"
    "  ID: 12, 12_7, 12_[1-5]. Cohort's scancel (cohort(1), SLURM\n"
    "  COMMANDS): jobs or filters, not both; -s/--signal, -b/--batch and\n"
    "  -i/--interactive are refused (Cohort has no request that signals a\n"
    "  job's tasks, and no prompt); -H/--hurry changes nothing.\n";

/* Send a cancel for ids (or, n 0, the filters); each failure in Slurm's
 * words. */
static int
scancel_send(struct cconn *c, uint64_t *ids, size_t n,
    Cohort__V1__CancelRequest *cr, bool verbose, bool quiet, bool *more,
    size_t *done)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__CancelReply *r;
	struct cerr err;
	size_t i;
	int rc = EXIT_OK;

	*more = false;
	*done = 0;
	cr->n_job_ids = n;
	cr->job_ids = ids;
	req.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL;
	req.cancel = cr;
	cerr_clear(&err);
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		if (!quiet)
			slurm_error("scancel", "%s", rep->error->text);
		frame_free(rep);
		return EXIT_FAILED;
	}
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY) {
		rc = output_reply_error("scancel", rep);
		frame_free(rep);
		return rc;
	}
	r = rep->cancel_reply;
	for (i = 0; i < r->n_results; i++) {
		if (r->results[i]->has_code) {
			if (!quiet)
				slurm_error("scancel", "Kill job error on job "
				    "id %" PRIu64 ": %s", r->results[i]->job_id,
				    r->results[i]->text != NULL ?
				    r->results[i]->text : "refused");
			rc = EXIT_FAILED;
		} else {
			(*done)++;
			if (verbose)
				fprintf(stderr, "scancel: Terminating job %"
				    PRIu64 "\n", r->results[i]->job_id);
		}
	}
	*more = r->has_more && r->more;
	frame_free(rep);
	return rc;
}

/* "12.3": a step id, into *job and *step. 1 when arg is one, 0 when it
 * is not (a job reference), -1 when it looks like one but is bad. */
static int
scancel_step_ref(const char *arg, uint64_t *job, uint32_t *step)
{
	const char *dot = strchr(arg, '.');
	unsigned long long j, st;
	char *end;

	if (dot == NULL)
		return 0;
	if (arg[0] < '0' || arg[0] > '9' || dot[1] < '0' || dot[1] > '9')
		return -1;
	errno = 0;
	j = strtoull(arg, &end, 10);
	if (end != dot || errno != 0 || j == 0)
		return -1;
	st = strtoull(dot + 1, &end, 10);
	if (*end != '\0' || errno != 0 || st > UINT32_MAX)
		return -1;
	*job = j;
	*step = (uint32_t)st;
	return 1;
}

/* A signal as scancel --signal names it: KILL, SIGKILL, 9. */
static int
scancel_signal_parse(const char *s, int *sig)
{
	const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
	char *end;
	long n;
	int i;

	if (s[0] >= '0' && s[0] <= '9') {
		n = strtol(s, &end, 10);
		if (*end != '\0' || n < 1 || n >= NSIG)
			return -1;
		*sig = (int)n;
		return 0;
	}
	for (i = 1; i < NSIG; i++)
		if (sigabbrev_np(i) != NULL && strcasecmp(sigabbrev_np(i),
		    name) == 0) {
			*sig = i;
			return 0;
		}
	return -1;
}

/* scancel J.S...: StepSignal for each (SIGKILL ends the step). */
static int
scancel_steps(const struct cconn_opts *opts, char **refs, int n, int sig,
    bool verbose)
{
	Cohort__V1__StepSignalRequest sr = COHORT__V1__STEP_SIGNAL_REQUEST__INIT;
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	struct cerr err;
	struct cconn *c;
	uint64_t job;
	uint32_t step;
	int i, rc, r;

	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		return rc;
	for (i = 0; i < n; i++) {
		(void)scancel_step_ref(refs[i], &job, &step);
		sr.job_id = job;
		sr.step_id = step;
		sr.signal = (uint32_t)sig;
		req = (Cohort__V1__Envelope)COHORT__V1__ENVELOPE__INIT;
		req.body_case = COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL;
		req.step_signal = &sr;
		cerr_clear(&err);
		if ((rep = cconn_call(c, &req, &err)) == NULL) {
			rc = output_call_error(&err);
			break;
		}
		if (rep->body_case ==
		    COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL_REPLY) {
			if (verbose)
				fprintf(stderr, "scancel: Terminating step "
				    "%s\n", refs[i]);
		} else if (rep->body_case ==
		    COHORT__V1__ENVELOPE__BODY_ERROR) {
			slurm_error("scancel", "Kill job error on job step id "
			    "%s: %s", refs[i], rep->error->text);
			rc = EXIT_FAILED;
		} else if ((r = output_reply_error("scancel", rep)) !=
		    EXIT_OK)
			rc = r;
		frame_free(rep);
	}
	cconn_close(c);
	return rc;
}

int
cmd_scancel(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__CancelRequest cr = COHORT__V1__CANCEL_REQUEST__INIT;
	Cohort__V1__JobState states[16];
	struct slurm_joblist check;
	struct cerr err;
	struct cconn *c;
	unsigned mask = 0;
	uint64_t *ids = NULL;
	size_t n = 0, i, k, done;
	bool verbose = false, quiet = false, more;
	const char *signame = NULL;
	uint64_t sjob;
	uint32_t sstep;
	int ch, rc, r, a, sig = SIGKILL, nsteps = 0;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":bhHin:Qs:t:u:v",
	    scancel_longopts, NULL)) != -1) {
		cerr_clear(&err);
		switch (ch) {
		case 'u':
			cr.user = optarg;
			break;
		case 'n':
			cr.name = optarg;
			break;
		case 't':
			if (slurm_states_parse(optarg, &mask, &err) == -1) {
				slurm_error("scancel", "%s", err.text);
				return EXIT_FAILED;
			}
			break;
		case 's':
			if (scancel_signal_parse(optarg, &sig) == -1) {
				slurm_error("scancel", "Invalid job signal: %s",
				    optarg);
				return EXIT_FAILED;
			}
			signame = optarg;
			break;
		case 'b':
			slurm_error("scancel", "--batch is not supported: "
			    "Cohort has no request that signals a job's batch "
			    "script alone; cancel the job instead");
			return EXIT_FAILED;
		case 'i':
			slurm_error("scancel", "--interactive is not "
			    "supported: Cohort's scancel asks no questions");
			return EXIT_FAILED;
		case 'v':
			verbose = true;
			break;
		case 'Q':
			quiet = true;
			break;
		case 'H':
			break;	/* no controller-side slowness to skip */
		case 'h':
			fputs(scancel_usage, stdout);
			return EXIT_OK;
		default:
			return slurm_option_error("scancel", ch, argv);
		}
	}
	for (i = 0, k = 0; i <= JOB_TIMEOUT; i++)
		if ((mask & 1u << i) && k < sizeof(states) / sizeof(states[0]))
			states[k++] = wire_state_to_pb((enum job_state)i);
	if (mask != 0 && k == 0) {
		/* Only states no Cohort job is ever in: nothing matches. */
		return EXIT_OK;
	}
	cr.states = states;
	cr.n_states = k;
	if (optind == argc && cr.user == NULL && cr.name == NULL && k == 0) {
		slurm_error("scancel", "No job identification provided");
		return EXIT_FAILED;
	}
	if (optind < argc && (cr.user != NULL || cr.name != NULL || k > 0)) {
		slurm_error("scancel", "job ids and -u/-n/-t together are not "
		    "supported by Cohort's scancel: give one or the other");
		return EXIT_FAILED;
	}
	/* Steps (J.S) are signalled; jobs cancelled. */
	for (a = optind; a < argc; a++) {
		if ((r = scancel_step_ref(argv[a], &sjob, &sstep)) == -1) {
			slurm_error("scancel", "Invalid job id %s", argv[a]);
			return EXIT_FAILED;
		}
		nsteps += r;
	}
	if (nsteps > 0 && nsteps < argc - optind) {
		slurm_error("scancel", "steps (J.S) and jobs together are not "
		    "supported by Cohort's scancel: give one or the other");
		return EXIT_FAILED;
	}
	if (nsteps > 0)
		return scancel_steps(opts, argv + optind, nsteps, sig, verbose);
	if (signame != NULL) {
		slurm_error("scancel", "--signal=%s is not supported for a "
		    "job: Cohort signals a job step's tasks (scancel --signal "
		    "SIG J.S); a job's checkpoint signal is its "
		    "--checkpoint-signal", signame);
		return EXIT_FAILED;
	}
	/* Every id is checked before anything is cancelled. */
	for (a = optind; a < argc; a++) {
		if (slurm_joblist_parse(argv[a], &check, &err) == -1) {
			slurm_error("scancel", "%s", err.text);
			return EXIT_FAILED;
		}
		slurm_joblist_clear(&check);
	}
	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		return rc;
	if (optind < argc) {
		/* Array references resolve to their tasks' ids. */
		if (control_job_ids(c, "scancel", argv + optind,
		    argc - optind, &ids, &n) == -1)
			rc = EXIT_FAILED;
		for (i = 0; rc != EXIT_UNREACHABLE && i < n; i += k) {
			k = n - i < CONTROL_CHUNK ? n - i : CONTROL_CHUNK;
			if ((r = scancel_send(c, ids + i, k, &cr, verbose,
			    quiet, &more, &done)) != EXIT_OK)
				rc = r;
		}
	} else {
		/* A filter's matches, a request's worth at a time. */
		do {
			if ((r = scancel_send(c, NULL, 0, &cr, verbose, quiet,
			    &more, &done)) != EXIT_OK)
				rc = r;
		} while (more && done > 0 && r != EXIT_UNREACHABLE);
	}
	cconn_close(c);
	free(ids);
	return rc;
}
