/* srun's pure parts (client/srun_args.c): its option table as Slurm's
 * srun reads it (abbreviations, = and space forms, clusters, the command
 * after the options, refusals that give the reason), -l's label width,
 * the node a rank runs on, -o/-e patterns and the credential's text;
 * the input forwarded to task 0 (client/srun_input.c): srun's own, with
 * offsets and its end, and an attached terminal's, appended, with the
 * window when it changes. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "client/srun_args.h"
#include "client/srun_input.h"

/* Parse the words of line (space-separated, "srun" first). */
static int
parse(const char *line, struct srun_args *a, struct cerr *err, char ***words,
    int *n)
{
	static char buf[1024];
	static char *v[64];
	char *tok, *save;

	snprintf(buf, sizeof(buf), "%s", line);
	*n = 0;
	for (tok = strtok_r(buf, " ", &save); tok != NULL && *n < 63;
	    tok = strtok_r(NULL, " ", &save))
		v[(*n)++] = tok;
	v[*n] = NULL;
	*words = v;
	cerr_clear(err);
	return srun_args_parse(*n, v, a, err);
}

START_TEST(test_options)
{
	struct srun_args a;
	struct cerr err;
	char **w;
	int n;

	ck_assert_int_eq(parse("srun -N2 --ntasks=4 --ntasks-per-node 2 -l "
	    "-c 3 --gpus-per-task=1 -w n[1-2] -x n3 --overl -J train "
	    "--export=NONE -K -u hostname -N 5", &a, &err, &w, &n), 0);
	ck_assert_uint_eq(a.nodes, 2);
	ck_assert_uint_eq(a.ntasks, 4);
	ck_assert_uint_eq(a.ntasks_per_node, 2);
	ck_assert_uint_eq(a.cpus_per_task, 3);
	ck_assert_uint_eq(a.gpus_per_task, 1);
	ck_assert(a.label && a.overlap && a.kill_on_bad_exit && a.unbuffered);
	ck_assert_str_eq(a.nodelist, "n[1-2]");
	ck_assert_str_eq(a.exclude, "n3");
	ck_assert_str_eq(a.name, "train");
	ck_assert_str_eq(a.export_mode, "NONE");
	/* The command starts at the first word that is not an option; its
	 * own options are its own. */
	ck_assert_str_eq(w[a.cmd], "hostname");
	ck_assert_int_eq(a.cmd, n - 3);

	/* Clusters of short options, a value glued on, "--". */
	ck_assert_int_eq(parse("srun -lQvvn8 -- -x", &a, &err, &w, &n), 0);
	ck_assert(a.label && a.quiet);
	ck_assert_int_eq(a.verbose, 2);
	ck_assert_uint_eq(a.ntasks, 8);
	ck_assert_str_eq(w[a.cmd], "-x");

	/* -G 0 and --gres=none: no GPU; --mpi=none is fine. */
	ck_assert_int_eq(parse("srun -G 0 --mpi=none true", &a, &err, &w, &n),
	    0);
	ck_assert(a.no_gpus);
	ck_assert(!a.no_input);
	/* -i none: no input; -i 0 is the default, task 0. */
	ck_assert_int_eq(parse("srun -i none cat", &a, &err, &w, &n), 0);
	ck_assert(a.no_input);
	ck_assert_int_eq(parse("srun --input=0 cat", &a, &err, &w, &n), 0);
	ck_assert(!a.no_input);
	ck_assert_int_eq(parse("srun --gres=gpu:2 -N 3-3 --jobid=12 -o "
	    "out-%t.txt -e err.txt true", &a, &err, &w, &n), 0);
	ck_assert_uint_eq(a.gpus_per_node, 2);
	ck_assert_uint_eq(a.nodes, 3);
	ck_assert_uint_eq(a.jobid, 12);
	ck_assert_str_eq(a.output, "out-%t.txt");
	ck_assert_str_eq(a.error, "err.txt");
	ck_assert_int_eq(parse("srun", &a, &err, &w, &n), 0);
	ck_assert_int_eq(a.cmd, 1);
	/* Pyxis's options: the step's own container. */
	ck_assert_int_eq(parse("srun --container-image=oci:/i:v1 "
	    "--container-mounts /d:/d:ro --container-workdir=/w "
	    "--container-name=setup --container-writable "
	    "--no-container-mount-home --container-env=A,B true", &a, &err,
	    &w, &n), 0);
	ck_assert_str_eq(a.ctr.image, "oci:/i:v1");
	ck_assert_str_eq(a.ctr.mounts, "/d:/d:ro");
	ck_assert_str_eq(a.ctr.workdir, "/w");
	ck_assert_str_eq(a.ctr.name, "setup");
	ck_assert_str_eq(a.ctr.env, "A,B");
	ck_assert(a.ctr.writable && !a.ctr.mount_home);
	ck_assert_str_eq(w[a.cmd], "true");
}
END_TEST

/* refused LINE TEXT: line is refused with exactly text. */
static void
refused(const char *line, const char *text)
{
	struct srun_args a;
	struct cerr err;
	char **w;
	int n;

	ck_assert_int_eq(parse(line, &a, &err, &w, &n), -1);
	ck_assert_str_eq(err.text, text);
}

START_TEST(test_refusals)
{
	refused("srun --mpi=pmi2 a.out", "--mpi=pmi2 is not supported: Cohort "
	    "has no PMI server; use a launcher such as torchrun");
	refused("srun --mpi pmix a.out", "--mpi=pmix is not supported: Cohort "
	    "has no PMI server; use a launcher such as torchrun");
	/* A terminal is task 0's input: not without one. */
	refused("srun --pt -i none bash", "--pty and -i none: the terminal "
	    "is task 0's input");
	refused("srun -i all cat", "-i=all is not supported: srun forwards "
	    "its standard input to task 0 (the default, or -i 0) or to none "
	    "(-i none), not to every task");
	refused("srun --input=in.txt cat", "--input=in.txt is not supported: "
	    "srun forwards its standard input to task 0 (the default, or "
	    "-i 0) or to none (-i none), not to other tasks or files");
	refused("srun --mem=4G true", "--mem=4G is not supported: a step "
	    "shares its job's memory limit");
	refused("srun -t 5 true", "-t=5 is not supported: a step ends with "
	    "its job: its job's --time bounds it");
	refused("srun --gpu 1 true", "--gpu: ambiguous (a prefix of several "
	    "srun options: write it out)");
	refused("srun --frobnicate true", "--frobnicate: not an srun option "
	    "(see srun --help)");
	refused("srun -y true", "-y: not an srun option (see srun --help)");
	refused("srun -N", "-N: missing argument");
	refused("srun -N 1-4 true", "-N=1-4 is not supported: a step gets "
	    "exactly the nodes it asks for: give one count");
	refused("srun -n x true", "-n: invalid count 'x'");
	refused("srun --gpus-per-task=a100:1 true", "--gpus-per-task=a100:1: "
	    "a GPU type is not supported: a step gets GPUs of its job's "
	    "allocation: give a count");
	refused("srun --label=yes true", "--label: takes no value");
	refused("srun --exclusive=user true", "--exclusive=user is not "
	    "supported: only --exclusive alone (no other step on the step's "
	    "nodes)");
	refused("srun --container-image=nvcr.io#pytorch true",
	    "--container-image 'nvcr.io#pytorch': a registry's image is "
	    "docker://[REGISTRY#]IMAGE[:TAG]");
	refused("srun --container-mounts=/a:/b:x true", "--container-mounts "
	    "'/a:/b:x': unknown flag 'x' (ro, rw, nosuid, nodev, noexec, "
	    "private, rprivate, slave, rslave, shared, rshared; several with "
	    "'+')");
	refused("srun --container-save=/x.sqsh true", "--container-save is "
	    "not supported: Cohort does not write images back; build the "
	    "image with umoci or mksquashfs instead");
	refused("srun --container-remap-root true", "--container-remap-root "
	    "is not supported: a container runs as the job's user, never as "
	    "root");
	refused("srun --jobid=x true", "--jobid: invalid job id 'x'");
}
END_TEST

START_TEST(test_label_and_nodes)
{
	const uint32_t tpn[] = { 2, 3, 1 };

	ck_assert_int_eq(srun_label_width(0), 1);
	ck_assert_int_eq(srun_label_width(1), 1);
	ck_assert_int_eq(srun_label_width(10), 1);
	ck_assert_int_eq(srun_label_width(11), 2);
	ck_assert_int_eq(srun_label_width(100), 2);
	ck_assert_int_eq(srun_label_width(101), 3);
	ck_assert_int_eq(srun_rank_node(tpn, 3, 0), 0);
	ck_assert_int_eq(srun_rank_node(tpn, 3, 1), 0);
	ck_assert_int_eq(srun_rank_node(tpn, 3, 2), 1);
	ck_assert_int_eq(srun_rank_node(tpn, 3, 4), 1);
	ck_assert_int_eq(srun_rank_node(tpn, 3, 5), 2);
	ck_assert_int_eq(srun_rank_node(tpn, 3, 6), -1);
}
END_TEST

START_TEST(test_pattern)
{
	struct srun_pat_vars v = { 42, 3, 7, 1, "gpu02" };
	struct cerr err;
	char buf[64];
	bool per;

	ck_assert_int_eq(srun_pattern("out-%j.%s-%t-%n-%N.txt", &v, buf,
	    sizeof(buf), &per, &err), 0);
	ck_assert_str_eq(buf, "out-42.3-7-1-gpu02.txt");
	ck_assert(per);
	ck_assert_int_eq(srun_pattern("%J_%3t_100%%", &v, buf, sizeof(buf),
	    &per, &err), 0);
	ck_assert_str_eq(buf, "42.3_007_100%");
	ck_assert_int_eq(srun_pattern("all-%j.log", &v, buf, sizeof(buf),
	    &per, &err), 0);
	ck_assert(!per);
	ck_assert_int_eq(srun_pattern("x-%A", &v, buf, sizeof(buf), &per,
	    &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "%A is not supported"));
	ck_assert_int_eq(srun_pattern("%N%N%N%N", &v, buf, 12, &per, &err),
	    -1);
}
END_TEST

START_TEST(test_cred)
{
	uint8_t out[8];
	struct cerr err;
	char range[32];

	ck_assert_int_eq(srun_cred_decode("00ff10a5\n", 9, out, sizeof(out),
	    &err), 4);
	ck_assert_uint_eq(out[1], 0xff);
	ck_assert_uint_eq(out[3], 0xa5);
	ck_assert_int_eq(srun_cred_decode("00FF", 4, out, sizeof(out), &err),
	    -1);
	ck_assert_int_eq(srun_cred_decode("abc", 3, out, sizeof(out), &err),
	    -1);
	ck_assert_int_eq(srun_cred_decode("", 0, out, sizeof(out), &err), -1);
	ck_assert_int_eq(srun_cred_decode("000000000000000000", 18, out,
	    sizeof(out), &err), -1);
	ck_assert_str_eq(srun_task_range(3, 3, range, sizeof(range)),
	    "task 3");
	ck_assert_str_eq(srun_task_range(0, 3, range, sizeof(range)),
	    "tasks 0-3");
}
END_TEST

/* --pty: task 0 on a terminal, output as it comes (Slurm's implied -u). */
START_TEST(test_pty)
{
	struct srun_args a;
	struct cerr err;
	char **w;
	int n;

	ck_assert_int_eq(parse("srun --pty bash -i", &a, &err, &w, &n), 0);
	ck_assert(a.pty && a.unbuffered && !a.no_input);
	ck_assert_str_eq(w[a.cmd], "bash");
	ck_assert_int_eq(parse("srun -N1 bash", &a, &err, &w, &n), 0);
	ck_assert(!a.pty && !a.unbuffered);
}
END_TEST

/* The reply the controller gives a StepInputRequest: next_offset. */
static int
input_reply(struct srun_input *in, uint64_t next)
{
	Cohort__V1__Envelope rep = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StepInputReply r = COHORT__V1__STEP_INPUT_REPLY__INIT;
	char why[128];

	r.next_offset = next;
	rep.body_case = COHORT__V1__ENVELOPE__BODY_STEP_INPUT_REPLY;
	rep.step_input_reply = &r;
	return srun_input_reply(in, &rep, why, sizeof(why));
}

/* srun's input: offsets, a partial take sent again, the end passed on.
 * An attached terminal's: appended, its window sent once, no end. */
START_TEST(test_input)
{
	Cohort__V1__StepInputRequest q;
	struct srun_input *in;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_ptr_nonnull(in = srun_input_create(p[0]));
	ck_assert(!srun_input_pending(in));
	ck_assert_int_eq(write(p[1], "hello", 5), 5);
	srun_input_read(in);
	ck_assert(srun_input_request(in, 7, 1, &q));
	ck_assert(q.offset == 0 && q.data.len == 5 && !q.eof && !q.append &&
	    !q.has_rows);
	ck_assert_int_eq(input_reply(in, 2), 1);	/* took "he" */
	close(p[1]);
	srun_input_read(in);
	ck_assert(srun_input_request(in, 7, 1, &q));
	ck_assert(q.offset == 2 && q.data.len == 3 && q.eof);
	ck_assert(memcmp(q.data.data, "llo", 3) == 0);
	ck_assert_int_eq(input_reply(in, 2), 0);	/* full: nothing */
	ck_assert(srun_input_pending(in));
	ck_assert_int_eq(input_reply(in, 5), 1);
	ck_assert(!srun_input_pending(in) && !srun_input_active(in));
	/* A reply beyond what was sent stops forwarding. */
	srun_input_destroy(in);
	close(p[0]);

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_ptr_nonnull(in = srun_input_create(p[0]));
	srun_input_set_append(in);
	srun_input_window(in, 0, 80);			/* not a window */
	ck_assert(!srun_input_pending(in));
	srun_input_window(in, 30, 100);
	ck_assert(srun_input_pending(in));
	ck_assert(srun_input_request(in, 7, 1, &q));
	ck_assert(q.append && q.has_rows && q.rows == 30 && q.cols == 100 &&
	    q.data.len == 0);
	ck_assert_int_eq(input_reply(in, 0), 1);	/* the window went */
	ck_assert(!srun_input_pending(in));
	ck_assert_int_eq(write(p[1], "ls\r", 3), 3);
	close(p[1]);
	srun_input_read(in);
	ck_assert(srun_input_request(in, 7, 1, &q));
	ck_assert(q.append && !q.eof && !q.has_rows && q.data.len == 3);
	ck_assert_int_eq(input_reply(in, 3), 1);
	/* Its end is the terminal's own: nothing more to send. */
	srun_input_read(in);
	ck_assert(!srun_input_pending(in));
	srun_input_destroy(in);
	close(p[0]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("srun");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_label_and_nodes);
	tcase_add_test(tc, test_pattern);
	tcase_add_test(tc, test_cred);
	tcase_add_test(tc, test_pty);
	tcase_add_test(tc, test_input);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
