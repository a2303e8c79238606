/* client/slurm_format.c and the pure parts of Slurm's commands: format
 * strings with widths and justification, cells padded and cut as
 * Slurm's are, state names and codes, reasons, durations and times, -j
 * lists, and scontrol show hostnames/hostlist (which need no
 * controller). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/slurm_format.h"
#include "client/slurm_query.h"

enum { F_ID, F_NAME, F_ST };

static const struct sfmt_def defs[] = {
	{ 'i', "JobID", "JOBID", -12, F_ID },
	{ 'j', "Name", "NAME", 10, F_NAME },
	{ 't', "StateCompact", "ST", 8, F_ST },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

/* What printing fmt with cells (NULL: the header) gives, newline cut. */
static char *
render(const struct sfmt *fmt, const char *const *cells)
{
	static char out[1024];
	FILE *fp = fmemopen(out, sizeof(out), "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(sfmt_print(fmt, cells, fp), 0);
	fclose(fp);
	out[strcspn(out, "\n")] = '\0';
	return out;
}

START_TEST(test_letters)
{
	const char *cells[3] = { "12", "a-very-long-name", "PD" };
	struct sfmt f;
	struct cerr err;

	ck_assert_int_eq(sfmt_parse_letters("%.18i %-10j|%t %%", defs, NDEFS,
	    &f, &err), 0);
	ck_assert_uint_eq(sfmt_nfields(&f), 3);
	/* Right-justified to 18, left to 10 and cut, no width: as is. */
	ck_assert_str_eq(render(&f, cells),
	    "                12 a-very-lon|PD %");
	ck_assert_str_eq(render(&f, NULL),
	    "             JOBID NAME      |ST %");
	sfmt_clear(&f);

	cerr_clear(&err);
	ck_assert_int_eq(sfmt_parse_letters("%i %z", defs, NDEFS, &f, &err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.text, "%z"));
	ck_assert_int_eq(sfmt_parse_letters("no fields", defs, NDEFS, &f,
	    &err), -1);
	ck_assert_int_eq(sfmt_parse_letters("%99999i", defs, NDEFS, &f,
	    &err), -1);
}
END_TEST

START_TEST(test_fit)
{
	const char *cells[1] = { "a-partition*" };
	struct sfmt f;
	struct cerr err;

	ck_assert_int_eq(sfmt_parse_letters("%#j|", defs, NDEFS, &f, &err),
	    0);
	sfmt_fit(&f, NULL);
	ck_assert_str_eq(render(&f, (const char *const[]){ "x" }), "x   |");
	sfmt_fit(&f, cells);
	ck_assert_str_eq(render(&f, cells), "a-partition*|");
	ck_assert_str_eq(render(&f, NULL), "NAME        |");
	sfmt_clear(&f);
}
END_TEST

START_TEST(test_names)
{
	const char *cells[2] = { "12", "PD" };
	struct sfmt f;
	struct cerr err;

	/* Default width 20, left; ".5" right-justified; a suffix. */
	ck_assert_int_eq(sfmt_parse_names("JobID,statecompact:.5;", defs,
	    NDEFS, &f, &err), 0);
	ck_assert_str_eq(render(&f, cells), "12                     PD;");
	sfmt_clear(&f);
	cerr_clear(&err);
	ck_assert_int_eq(sfmt_parse_names("JobID,Bogus", defs, NDEFS, &f,
	    &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "Bogus"));
}
END_TEST

START_TEST(test_sacct)
{
	const char *cells[2] = { "12_3", "a-long-job-name" };
	char out[256];
	struct sfmt f;
	struct cerr err;
	FILE *fp;

	/* Ids left-justified, other values right, headers as their values; a
	 * value cut ends in '+'; one space after each field. */
	ck_assert_int_eq(sfmt_parse_sacct("JobID,Name", defs, NDEFS, &f,
	    &err), 0);
	ck_assert_str_eq(render(&f, NULL), "JOBID              NAME ");
	ck_assert_str_eq(render(&f, cells), "12_3         a-long-jo+ ");
	fp = fmemopen(out, sizeof(out), "w");
	sfmt_print_dashes(&f, fp);
	sfmt_print_parsable(&f, cells, true, fp);
	sfmt_print_parsable(&f, cells, false, fp);
	fclose(fp);
	ck_assert_str_eq(out, "------------ ---------- \n"
	    "12_3|a-long-job-name|\n12_3|a-long-job-name\n");
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_sacct("Name%30", defs, NDEFS, &f, &err),
	    0);
	ck_assert_int_eq(f.v[0].width, 30);
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_sacct("Name%x", defs, NDEFS, &f, &err),
	    -1);
}
END_TEST

START_TEST(test_states)
{
	struct cerr err;
	unsigned m = 0;

	ck_assert_str_eq(slurm_state_name(JOB_PENDING), "PENDING");
	ck_assert_str_eq(slurm_state_code(JOB_PENDING), "PD");
	ck_assert_str_eq(slurm_state_code(JOB_RUNNING), "R");
	ck_assert_str_eq(slurm_state_name(JOB_RESTARTING), "REQUEUED");
	ck_assert_str_eq(slurm_state_code(JOB_CANCELLED), "CA");
	ck_assert_str_eq(slurm_state_code(JOB_TIMEOUT), "TO");
	ck_assert_str_eq(slurm_state_code(JOB_COMPLETED), "CD");
	ck_assert_int_eq(slurm_states_parse("pd,Running,NF", &m, &err), 0);
	ck_assert_uint_eq(m, 1u << JOB_PENDING | 1u << JOB_RUNNING);
	m = 0;
	ck_assert_int_eq(slurm_states_parse("all", &m, &err), 0);
	ck_assert(m & 1u << JOB_TIMEOUT);
	ck_assert_int_eq(slurm_states_parse("PD,WAITING", &m, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "WAITING"));
}
END_TEST

START_TEST(test_reasons)
{
	char b[SLURM_REASON_LEN];

	ck_assert_str_eq(slurm_reason("", b, sizeof(b)), "None");
	ck_assert_str_eq(slurm_reason("Resources (reserved, starts by x)", b,
	    sizeof(b)), "Resources");
	ck_assert_str_eq(slurm_reason("QueueQuota", b, sizeof(b)),
	    "QOSGrpGRES");
	ck_assert_str_eq(slurm_reason("JobHeldUser", b, sizeof(b)),
	    "JobHeldUser");
}
END_TEST

START_TEST(test_times)
{
	char b[64];
	int64_t ms;

	ck_assert_str_eq(slurm_secs_short(5, b, sizeof(b)), "0:05");
	ck_assert_str_eq(slurm_secs_short(754, b, sizeof(b)), "12:34");
	ck_assert_str_eq(slurm_secs_short(3723, b, sizeof(b)), "1:02:03");
	ck_assert_str_eq(slurm_secs_short(2 * 86400 + 3723, b, sizeof(b)),
	    "2-01:02:03");
	ck_assert_str_eq(slurm_secs_long(5, b, sizeof(b)), "00:00:05");
	ck_assert_str_eq(slurm_secs_long(86400 + 5, b, sizeof(b)),
	    "1-00:00:05");
	ck_assert_str_eq(slurm_time(0, "Unknown", b, sizeof(b)), "Unknown");
	setenv("TZ", "UTC", 1);
	tzset();
	ck_assert_str_eq(slurm_time(1796367845000LL, "N/A", b, sizeof(b)),
	    "2026-12-04T07:04:05");
	ck_assert_int_eq(slurm_time_parse("2026-12-04T07:04:05", 0, &ms), 0);
	ck_assert_int_eq(ms, 1796367845000LL);
	ck_assert_int_eq(slurm_time_parse("2026-12-04", 0, &ms), 0);
	ck_assert_int_eq(ms, 1796342400000LL);
	ck_assert_int_eq(slurm_time_parse("now-2hours", 10000000, &ms), 0);
	ck_assert_int_eq(ms, 10000000 - 7200000);
	ck_assert_int_eq(slurm_time_parse("yesterday", 0, &ms), -1);
}
END_TEST

START_TEST(test_joblist)
{
	struct slurm_joblist l;
	struct cerr err;
	struct job j;

	memset(&j, 0, sizeof(j));
	ck_assert_int_eq(slurm_joblist_parse("12,20_3,30_[1-2]", &l, &err),
	    0);
	j.id = 12;
	ck_assert(slurm_joblist_match(&l, &j));
	j.id = 21;
	j.array_id = 20;
	j.array_task = 3;
	ck_assert(slurm_joblist_match(&l, &j));
	j.array_task = 4;
	ck_assert(!slurm_joblist_match(&l, &j));
	j.array_id = 30;
	j.array_task = 2;
	ck_assert(slurm_joblist_match(&l, &j));
	ck_assert_uint_eq(l.min_id, 12);
	slurm_joblist_clear(&l);
	ck_assert_int_eq(slurm_joblist_parse("12,x", &l, &err), -1);
	ck_assert_str_eq(err.text, "Invalid job id: x");
	ck_assert(slurm_word_in("a,bob,c", "bob"));
	ck_assert(!slurm_word_in("a,bobby", "bob"));
}
END_TEST

/* scontrol's hostname commands, their stdout captured. */
static char *
scontrol(const char *what, const char *list, int *rc)
{
	static char out[512];
	char *argv[5] = { "scontrol", "show", (char *)what, (char *)list,
	    NULL };
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n;

	fflush(stdout);
	dup2(fileno(tmp), STDOUT_FILENO);
	*rc = cmd_scontrol(list != NULL ? 4 : 3, argv, NULL);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return out;
}

START_TEST(test_hostnames)
{
	int rc;

	ck_assert_str_eq(scontrol("hostnames", "node[01-02],gpu3", &rc),
	    "node01\nnode02\ngpu3\n");
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(scontrol("hostlist", "node01,node03,node02", &rc),
	    "node[01-03]\n");
	ck_assert_int_eq(rc, 0);
	setenv("SLURM_JOB_NODELIST", "n[1-2]", 1);
	ck_assert_str_eq(scontrol("hostnames", NULL, &rc), "n1\nn2\n");
	scontrol("hostnames", "node[02-01", &rc);
	ck_assert_int_eq(rc, 1);
}
END_TEST

/* Line n (1-based) of Slurm's output in tests/unit/data/slurm/name,
 * newline cut. */
static char *
fixture(const char *name, int n)
{
	static char line[1024];
	char path[512];
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "%s/%s", SLURM_DATA_DIR, name);
	fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "%s missing", path);
	for (i = 0; i < n; i++)
		ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	fclose(fp);
	line[strcspn(line, "\n")] = '\0';
	return line;
}

/* fmt's line for cells (NULL: header; dashes: sacct's dashes; parsable:
 * 1 for -P, 2 for -p) against Slurm's line n of name. */
static void
same(const struct sfmt *fmt, const char *const *cells, int how,
    const char *name, int n)
{
	char out[1024];
	FILE *fp = fmemopen(out, sizeof(out), "w");

	ck_assert_ptr_nonnull(fp);
	if (how == 'd')
		sfmt_print_dashes(fmt, fp);
	else if (how == 'P' || how == 'p')
		sfmt_print_parsable(fmt, cells, how == 'p', fp);
	else
		sfmt_print(fmt, cells, fp);
	fclose(fp);
	out[strcspn(out, "\n")] = '\0';
	ck_assert_str_eq(out, fixture(name, n));
}

/* Rows with the values Slurm 22.05 printed, through Cohort's default
 * formats and field tables: the same bytes, trailing spaces included. */
START_TEST(test_vs_slurm)
{
	const char *sq[] = { "2", "batch", "runner", "root", "R", "0:18",
	    "2", "node[01-02]" };
	const char *sqO[] = { "2", "runner", "RUNNING" };
	const char *sqW[] = { "2", "R", "runner", "1:00:00", "2",
	    "gres:gpu:2", "node[01-02]" };
	const char *sa[] = { "4", "bad", "batch", "root", "1", "FAILED",
	    "3:0" };
	const char *saO[] = { "2", "runner", "RUNNING", "0:0", "00:00:19",
	    "node[01-02]", "2026-12-07T03:00:27", "Unknown",
	    "2026-12-07T03:00:26", "billing=2,cpu=2,gres/gpu=4,node=2",
	    "batch", "root" };
	const char *sa30[] = { "6", "averyveryverylongjobname_x", "RUNNING" };
	const char *saP[] = { "7_3", "arr", "batch", "root", "1",
	    "CANCELLED by 0", "0:0" };
	const char *held[] = { "1", "held", "PENDING", "0:0", "00:00:00",
	    "None assigned", "Unknown", "Unknown", "2026-12-07T03:00:26", "",
	    "batch", "root", "1", "Partition_Limit", "0", "JobHeldUser", "1",
	    "0", "1" };
	struct sfmt f;
	struct cerr err;

	ck_assert_int_eq(sfmt_parse_letters(SQUEUE_FORMAT, squeue_defs,
	    squeue_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "squeue-default.txt", 1);
	same(&f, sq, 0, "squeue-default.txt", 4);
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_names("JobID,Name,State", squeue_defs,
	    squeue_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "squeue-O.txt", 1);
	same(&f, sqO, 0, "squeue-O.txt", 4);
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_names("JobID:8,StateCompact:.4,"
	    "Name:.10,TimeLimit,NumNodes,tres-per-node,ReasonList",
	    squeue_defs, squeue_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "squeue-O-widths.txt", 1);
	same(&f, sqW, 0, "squeue-O-widths.txt", 4);
	sfmt_clear(&f);

	ck_assert_int_eq(sfmt_parse_sacct(SACCT_FORMAT, sacct_defs,
	    sacct_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "sacct-X.txt", 1);
	same(&f, NULL, 'd', "sacct-X.txt", 2);
	same(&f, sa, 0, "sacct-X.txt", 5);
	same(&f, saP, 0, "sacct-X.txt", 10);
	same(&f, NULL, 'P', "sacct-P.txt", 1);
	same(&f, saP, 'P', "sacct-P.txt", 15);
	same(&f, saP, 'p', "sacct-p-n.txt", 14);
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_sacct("JobID,JobName,State,ExitCode,"
	    "Elapsed,NodeList,Start,End,Submit,AllocTRES,Partition,User",
	    sacct_defs, sacct_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "sacct-o-X.txt", 1);
	same(&f, NULL, 'd', "sacct-o-X.txt", 2);
	same(&f, saO, 0, "sacct-o-X.txt", 3);
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_sacct("JobID,JobName%30,State",
	    sacct_defs, sacct_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "sacct-jobname30.txt", 1);
	same(&f, NULL, 'd', "sacct-jobname30.txt", 2);
	same(&f, sa30, 0, "sacct-jobname30.txt", 6);
	sfmt_clear(&f);
	ck_assert_int_eq(sfmt_parse_sacct("JobID,JobName,State,ExitCode,"
	    "Elapsed,NodeList,Start,End,Submit,AllocTRES,Partition,User,"
	    "NNodes,Timelimit,AllocNodes,Reason,AllocCPUS,Priority,JobIDRaw",
	    sacct_defs, sacct_ndefs, &f, &err), 0);
	same(&f, NULL, 0, "sacct-j-held.txt", 1);
	same(&f, NULL, 'd', "sacct-j-held.txt", 2);
	same(&f, held, 0, "sacct-j-held.txt", 3);
	sfmt_clear(&f);
}
END_TEST


/* Step rows: a batch job's J.batch row and a step of ListSteps, their
 * cells as sacct 22.05 printed them (Account is Slurm's own, given as
 * the job rows' tests give it), and squeue -s's default format. */
START_TEST(test_steps)
{
	Cohort__V1__Step pb = COHORT__V1__STEP__INIT;
	char *nodes[] = { "node01", "node02" };
	uint32_t tpn[] = { 2, 2 };
	int32_t ts[] = { 0, 3 << 8, 9, 0 };
	static char bufs[8][SLURM_CELL];
	const char *cells[8];
	const int ids[] = { SA_JOBID, SA_JOBNAME, SA_PARTITION, SA_ACCOUNT,
	    SA_ALLOCCPUS, SA_STATE, SA_EXITCODE };
	struct slurm_step st;
	struct sfmt f;
	struct cerr err;
	struct job j;
	size_t i;

	memset(&j, 0, sizeof(j));
	job_spec_init(&j.spec);
	j.id = 4;
	j.spec.batch = true;
	j.state = JOB_FAILED;
	j.has_exit = true;
	j.exit_code = 3;
	j.start_ms = 1000;
	j.end_ms = 2000;
	j.place = calloc(1, sizeof(*j.place));
	ck_assert_ptr_nonnull(j.place);
	snprintf(j.place[0].node, sizeof(j.place[0].node), "node01");
	j.nplace = 1;
	ck_assert_int_eq(sfmt_parse_sacct(SACCT_FORMAT, sacct_defs,
	    sacct_ndefs, &f, &err), 0);
	slurm_step_batch(&j, &st);
	for (i = 0; i < 7; i++)
		cells[i] = sacct_step_cell(ids[i], &st, &j, "4", 0, bufs[i],
		    sizeof(bufs[i]));
	ck_assert_str_eq(cells[3], "");
	cells[3] = "root";
	same(&f, cells, 0, "sacct-default.txt", 8);
	same(&f, cells, 'P', "sacct-P.txt", 7);
	ck_assert_str_eq(sacct_step_cell(SA_NODELIST, &st, &j, "4", 0,
	    bufs[0], sizeof(bufs[0])), "node01");
	/* A cancelled job's batch row shows the signal apart: 0:15. */
	j.state = JOB_CANCELLED;
	j.exit_code = 128 + 15;
	slurm_step_batch(&j, &st);
	for (i = 0; i < 7; i++)
		cells[i] = sacct_step_cell(ids[i], &st, &j, "7_3", 0, bufs[i],
		    sizeof(bufs[i]));
	cells[3] = "root";
	same(&f, cells, 0, "sacct-default.txt", 17);
	sfmt_clear(&f);

	/* A step: its name, NODE_FAIL, code:signal from the wait statuses,
	 * its nodes compressed, GPUs in AllocTRES. */
	pb.job_id = 12;
	pb.step_id = 1;
	pb.name = "train";
	pb.state = COHORT__V1__JOB_STATE__FAILED;
	pb.nodelist = nodes;
	pb.n_nodelist = 2;
	pb.tasks_per_node = tpn;
	pb.n_tasks_per_node = 2;
	pb.task_status = ts;
	pb.n_task_status = 4;
	pb.has_gpus = 1;
	pb.gpus = 8;
	pb.has_start_time_ms = 1;
	pb.start_time_ms = 1000;
	pb.has_end_time_ms = 1;
	pb.end_time_ms = 66000;
	ck_assert_int_eq(slurm_step_from_pb(&pb, &st), 0);
	ck_assert_str_eq(sacct_step_cell(SA_JOBID, &st, &j, "12", 0, bufs[0],
	    SLURM_CELL), "12.1");
	ck_assert_str_eq(sacct_step_cell(SA_JOBNAME, &st, &j, "12", 0,
	    bufs[0], SLURM_CELL), "train");
	ck_assert_str_eq(sacct_step_cell(SA_STATE, &st, &j, "12", 0, bufs[0],
	    SLURM_CELL), "FAILED");
	ck_assert_str_eq(sacct_step_cell(SA_EXITCODE, &st, &j, "12", 0,
	    bufs[0], SLURM_CELL), "3:9");
	ck_assert_str_eq(sacct_step_cell(SA_NODELIST, &st, &j, "12", 0,
	    bufs[0], SLURM_CELL), "node[01-02]");
	ck_assert_str_eq(sacct_step_cell(SA_ALLOCTRES, &st, &j, "12", 0,
	    bufs[0], SLURM_CELL), "cpu=4,gres/gpu=8,node=2");
	ck_assert_str_eq(sacct_step_cell(SA_ELAPSED, &st, &j, "12", 0,
	    bufs[0], SLURM_CELL), "00:01:05");
	ck_assert_str_eq(sacct_step_cell(SA_PARTITION, &st, &j, "12", 0,
	    bufs[0], SLURM_CELL), "");
	pb.has_node_fail = pb.node_fail = 1;
	ck_assert_int_eq(slurm_step_from_pb(&pb, &st), 0);
	ck_assert_str_eq(sacct_step_cell(SA_STATE, &st, &j, "12", 0, bufs[0],
	    SLURM_CELL), "NODE_FAIL");

	/* squeue -s: Slurm's default step format and its header. */
	ck_assert_int_eq(sfmt_parse_letters(SQUEUE_STEP_FORMAT,
	    squeue_step_defs, squeue_step_ndefs, &f, &err), 0);
	{
		char out[256];
		FILE *fp = fmemopen(out, sizeof(out), "w");

		ck_assert_ptr_nonnull(fp);
		sfmt_print(&f, NULL, fp);
		pb.has_end_time_ms = 0;
		pb.state = COHORT__V1__JOB_STATE__RUNNING;
		ck_assert_int_eq(slurm_step_from_pb(&pb, &st), 0);
		for (i = 0; i < 6; i++)
			cells[i] = squeue_step_cell(f.v[2 * i].def->id, &st,
			    "alice", "default", 66000, bufs[i],
			    sizeof(bufs[i]));
		sfmt_print(&f, cells, fp);
		fclose(fp);
		ck_assert_str_eq(out, "         STEPID     NAME PARTITION     "
		    "USER      TIME NODELIST\n"
		    "           12.1    train   default    alice      1:05 "
		    "node[01-02]\n");
	}
	sfmt_clear(&f);
	free(j.place);
	job_spec_clear(&j.spec);
}
END_TEST

static Suite *
slurm_query_suite(void)
{
	Suite *s = suite_create("slurm_query");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_letters);
	tcase_add_test(tc, test_fit);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_sacct);
	tcase_add_test(tc, test_states);
	tcase_add_test(tc, test_reasons);
	tcase_add_test(tc, test_times);
	tcase_add_test(tc, test_joblist);
	tcase_add_test(tc, test_hostnames);
	tcase_add_test(tc, test_vs_slurm);
	tcase_add_test(tc, test_steps);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(slurm_query_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
