/* Text checks: UTF-8 edge cases, names, sanitizing; the string check on
 * encoded frames (lib/wirecheck.c) and the refusal frame_decode makes of
 * it: an embedded NUL or invalid UTF-8 in any string field, however deep,
 * is refused with the field's name instead of being cut short. The
 * string hash every table shares (lib/fnv.h) against FNV-1a's published
 * values; the keyed one (lib/siphash.c) against the paper's vector and
 * OpenSSL's SipHash. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "lib/err.h"
#include "lib/fnv.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/siphash.h"
#include "lib/text.h"
#include "lib/wire.h"
#include "lib/wirecheck.h"

static int
valid(const char *bytes, size_t len)
{
	return text_utf8_prefix((const uint8_t *)bytes, len) == len;
}

/* FNV-1a's own test values: a change here would rename every simulated
 * GPU and every mux socket. */
START_TEST(test_fnv)
{
	ck_assert_uint_eq(fnv64(FNV64_BASIS, "", 0), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(fnv64_str(FNV64_BASIS, ""), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(fnv64_str(FNV64_BASIS, "a"), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(fnv64(FNV64_BASIS, "foobar", 6), 0x85944171f73967e8ULL);
	/* Continued: "foo" then "bar" is "foobar". */
	ck_assert_uint_eq(fnv64_str(fnv64_str(FNV64_BASIS, "foo"), "bar"),
	    0x85944171f73967e8ULL);
	/* A NUL is hashed when it is counted in the length. */
	ck_assert_uint_eq(fnv64_str(fnv64(FNV64_BASIS, "alice", 6), "k1"),
	    0x35e892796af12a01ULL);
}
END_TEST

/* SipHash-2-4 of len bytes in pieces cut at cut1 <= cut2. */
static uint64_t
sip_pieces(const uint8_t *key, const uint8_t *m, size_t len, size_t cut1,
    size_t cut2)
{
	struct siphash s;

	siphash_init(&s, key);
	siphash_update(&s, m, cut1);
	siphash_update(&s, m + cut1, cut2 - cut1);
	siphash_update(&s, m + cut2, len - cut2);
	return siphash_final(&s);
}

/* OpenSSL's SipHash-2-4 (8-byte output, little-endian). */
static uint64_t
sip_openssl(const uint8_t *key, const uint8_t *m, size_t len)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	EVP_MAC_CTX *ctx;
	unsigned int size = 8;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_SIZE, &size),
		OSSL_PARAM_construct_end(),
	};
	uint8_t out[8];
	size_t outl = 0;
	uint64_t x = 0;
	int i;

	ck_assert_ptr_nonnull(mac);
	ck_assert_ptr_nonnull(ctx = EVP_MAC_CTX_new(mac));
	ck_assert_int_eq(EVP_MAC_init(ctx, key, SIPHASH_KEY_LEN, params), 1);
	ck_assert_int_eq(EVP_MAC_update(ctx, m, len), 1);
	ck_assert_int_eq(EVP_MAC_final(ctx, out, &outl, sizeof(out)), 1);
	ck_assert_uint_eq(outl, 8);
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	for (i = 7; i >= 0; i--)
		x = x << 8 | out[i];
	return x;
}

START_TEST(test_siphash)
{
	uint8_t key[SIPHASH_KEY_LEN], m[64], other[SIPHASH_KEY_LEN];
	size_t i, len, a, b;
	int round;

	/* The paper's vector (appendix A): key 00..0f, message 00..0e. */
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < 15; i++)
		m[i] = (uint8_t)i;
	ck_assert_uint_eq(sip_pieces(key, m, 15, 0, 0), 0xa129ca6149be45e5ULL);
	ck_assert_uint_eq(sip_pieces(key, m, 15, 3, 11), 0xa129ca6149be45e5ULL);
	/* Random keys, lengths 0..64 and cuts, against OpenSSL's. */
	for (round = 0; round < 400; round++) {
		ck_assert_int_eq(RAND_bytes(key, sizeof(key)), 1);
		ck_assert_int_eq(RAND_bytes(m, sizeof(m)), 1);
		len = (size_t)round % (sizeof(m) + 1);
		a = len ? (size_t)m[0] % (len + 1) : 0;
		b = a + (len - a ? (size_t)m[1] % (len - a + 1) : 0);
		ck_assert_uint_eq(sip_pieces(key, m, len, a, b),
		    sip_openssl(key, m, len));
	}
	/* Two random keys are different keys (a key that is all zeroes
	 * or the same twice would mean no randomness). */
	siphash_random_key(key);
	siphash_random_key(other);
	ck_assert(memcmp(key, other, sizeof(key)) != 0);
}
END_TEST

START_TEST(test_utf8_edges)
{
	ck_assert(valid("", 0));
	ck_assert(valid("plain ascii", 11));
	ck_assert(valid("\xc3\xa9t\xc3\xa9", 6));		/* été */
	ck_assert(valid("\xe2\x82\xac", 3));			/* U+20AC */
	ck_assert(valid("\xed\x9f\xbf", 3));			/* U+D7FF */
	ck_assert(valid("\xee\x80\x80", 3));			/* U+E000 */
	ck_assert(valid("\xf0\x9f\x98\x80", 4));		/* U+1F600 */
	ck_assert(valid("\xf4\x8f\xbf\xbf", 4));		/* U+10FFFF */
	ck_assert(!valid("\x80", 1));				/* stray */
	ck_assert(!valid("\xbf", 1));
	ck_assert(!valid("\xc0\xaf", 2));			/* overlong '/' */
	ck_assert(!valid("\xc1\xbf", 2));
	ck_assert(!valid("\xe0\x80\xaf", 3));			/* overlong */
	ck_assert(!valid("\xe0\x9f\xbf", 3));
	ck_assert(!valid("\xf0\x80\x80\xaf", 4));		/* overlong */
	ck_assert(!valid("\xf0\x8f\xbf\xbf", 4));
	ck_assert(!valid("\xed\xa0\x80", 3));			/* U+D800 */
	ck_assert(!valid("\xed\xbf\xbf", 3));			/* U+DFFF */
	ck_assert(!valid("\xf4\x90\x80\x80", 4));		/* U+110000 */
	ck_assert(!valid("\xf5\x80\x80\x80", 4));
	ck_assert(!valid("\xff", 1));
	ck_assert(!valid("\xc3", 1));				/* truncated */
	ck_assert(!valid("\xe2\x82", 2));
	ck_assert(!valid("\xf0\x9f\x98", 3));
	ck_assert(!valid("\xe2\x28\xa1", 3));			/* bad 2nd */
	ck_assert_uint_eq(text_utf8_prefix((const uint8_t *)"ab\xc3\xa9\xff",
	    5), 4);
	ck_assert(text_utf8_valid("\xc3\xa9"));
	ck_assert(!text_utf8_valid("a\xc3"));
}
END_TEST

START_TEST(test_names_and_free_text)
{
	struct cerr err;

	ck_assert_int_eq(text_check_name("name", "train-01_\xc3\xa9.x", &err),
	    0);
	ck_assert_int_eq(text_check_name("name", "a\nb", &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text, "name: control character 0x0a at byte 1");
	ck_assert_int_eq(text_check_name("user", "\x1b[31mroot", &err), -1);
	ck_assert_str_eq(err.text, "user: control character 0x1b at byte 0");
	ck_assert_int_eq(text_check_name("node", "n\x7f", &err), -1);
	ck_assert_int_eq(text_check_name("node", "n\xc2\x85", &err), -1);
	ck_assert_str_eq(err.text, "node: control character 0x85 at byte 1");
	ck_assert_int_eq(text_check_name("node", "n\tx", &err), -1);
	ck_assert_int_eq(text_check_name("gpu_type", "h\xff", &err), -1);
	ck_assert_str_eq(err.text, "gpu_type: invalid UTF-8 at byte 1");
	/* Free text keeps its tabs, newlines and escapes. */
	ck_assert_int_eq(text_check_utf8("env", "A=1\n\t\x1b", &err), 0);
	ck_assert_int_eq(text_check_utf8("env", "A=\xc0\xaf", &err), -1);
	ck_assert_str_eq(err.text, "env: invalid UTF-8 at byte 2");
	ck_assert_int_eq(text_control_at("abc"), -1);
	ck_assert_int_eq(text_control_at("ab\rc"), 2);
}
END_TEST

START_TEST(test_sanitize)
{
	char s[] = "ok \xc3\xa9\t\n\x1b\xff\xed\xa0\x80 \xc2\x85!";

	char cut[] = "caf\xc3\xa9 \xe2\x82";	/* cut in a character */

	ck_assert_uint_eq(text_sanitize(s), 9);
	ck_assert_str_eq(s, "ok \xc3\xa9 ??????" " ??" "!");
	ck_assert(text_utf8_valid(s));
	ck_assert_int_eq(text_control_at(s), -1);	/* the tab is a space */
	ck_assert_uint_eq(text_utf8_fix(cut), 2);
	ck_assert_str_eq(cut, "caf\xc3\xa9 ??");
}
END_TEST

/* A packed Submit whose spec has the given name, env entry and argv
 * word; *len its body length (without the frame header). */
static uint8_t *
submit_body(const char *name, const char *env0, const char *argv0,
    size_t *len)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SubmitRequest sr = COHORT__V1__SUBMIT_REQUEST__INIT;
	Cohort__V1__JobSpec spec = COHORT__V1__JOB_SPEC__INIT;
	char *e[1] = { (char *)env0 }, *a[1] = { (char *)argv0 };
	uint8_t *frame, *body;

	spec.name = (char *)name;
	spec.n_env = 1;
	spec.env = e;
	spec.n_argv = 1;
	spec.argv = a;
	sr.spec = &spec;
	env.id = 77;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT;
	env.submit = &sr;
	frame = frame_pack(&env, FRAME_DEFAULT_MAX, len);
	ck_assert_ptr_nonnull(frame);
	*len -= FRAME_HDR;
	body = malloc(*len);
	memcpy(body, frame + FRAME_HDR, *len);
	free(frame);
	return body;
}

/* Replace the first occurrence of marker (same length) in buf. */
static void
patch(uint8_t *buf, size_t len, const char *marker, const char *with)
{
	uint8_t *at = memmem(buf, len, marker, strlen(marker));

	ck_assert_ptr_nonnull(at);
	memcpy(at, with, strlen(marker));
}

START_TEST(test_wirecheck_fields)
{
	char why[256];
	uint8_t *b;
	size_t len;

	b = submit_body("job-XX", "K=v", "echo", &len);
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    b, len, why, sizeof(why)), 0);
	patch(b, len, "XX", "a\0");
	errno = 0;
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    b, len, why, sizeof(why)), -1);
	ck_assert_int_eq(errno, EILSEQ);
	ck_assert_str_eq(why, "submit.spec.name: a NUL byte at byte 5 "
	    "(strings may not contain NUL)");
	free(b);

	b = submit_body("job", "KEY=vaXX", "echo", &len);
	patch(b, len, "XX", "\xc0\xaf");
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    b, len, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "submit.spec.env: invalid UTF-8 at byte 6");
	free(b);

	b = submit_body("job", "K=v", "ecXX", &len);
	patch(b, len, "XX", "\xed\xa0");	/* a surrogate's first bytes */
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    b, len, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "submit.spec.argv: invalid UTF-8 at byte 2");
	free(b);

	/* Truncated inside a field: malformed, not text. */
	b = submit_body("job", "K=v", "echo", &len);
	errno = 0;
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    b, len - 1, why, sizeof(why)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	free(b);
}
END_TEST

START_TEST(test_unknown_and_bytes_fields_skipped)
{
	/* Envelope{id=5, field 1000 (unknown) = "\0\xff"}: skipped. */
	const uint8_t unknown[] = { 0x08, 0x05, 0xc2, 0x3e, 0x02, 0x00, 0xff };
	/* Envelope{id=1, logs_reply{data="\0\xff"}}: bytes, not text. */
	const uint8_t bytes[] = { 0x08, 0x01, 0xea, 0x01, 0x04, 0x0a, 0x02,
	    0x00, 0xff };
	/* A string behind a non-minimal 5-byte tag (field 2 = error, field
	 * 2 = text): the same field number protobuf-c reads. */
	const uint8_t nonmin[] = { 0x08, 0x01, 0x12, 0x09, 0x08, 0x01,
	    0x92, 0x80, 0x80, 0x80, 0x00, 0x01, 0x00 };
	char why[128];

	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    unknown, sizeof(unknown), why, sizeof(why)), 0);
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    bytes, sizeof(bytes), why, sizeof(why)), 0);
	ck_assert_int_eq(wirecheck_message(&cohort__v1__envelope__descriptor,
	    nonmin, sizeof(nonmin), why, sizeof(why)), -1);
	ck_assert_str_eq(why, "error.text: a NUL byte at byte 0 "
	    "(strings may not contain NUL)");
}
END_TEST

START_TEST(test_frame_decode_refuses)
{
	Cohort__V1__Envelope *env;
	struct evbuffer *in;
	uint8_t *b, hdr[FRAME_HDR];
	size_t len;

	/* Valid text decodes as before. */
	b = submit_body("job-\xc3\xa9", "K=v", "echo", &len);
	ck_assert_ptr_nonnull(env = frame_decode(b, len));
	ck_assert_ptr_null(frame_refusal(env));
	ck_assert_str_eq(env->submit->spec->name, "job-\xc3\xa9");
	frame_free(env);
	free(b);

	/* An embedded NUL: the id stays, the body goes, the reason names
	 * the field. Through frame_read as the daemons read. */
	b = submit_body("jobXX", "K=v", "echo", &len);
	patch(b, len, "XX", "\0z");
	in = evbuffer_new();
	hdr[0] = 0;
	hdr[1] = 0;
	hdr[2] = (uint8_t)(len >> 8);
	hdr[3] = (uint8_t)len;
	evbuffer_add(in, hdr, sizeof(hdr));
	evbuffer_add(in, b, len);
	ck_assert_int_eq(frame_read(in, FRAME_DEFAULT_MAX, &env), FRAME_OK);
	ck_assert_uint_eq(evbuffer_get_length(in), 0);
	ck_assert_uint_eq(env->id, 77);
	ck_assert_int_eq(env->body_case, COHORT__V1__ENVELOPE__BODY__NOT_SET);
	ck_assert_ptr_null(env->submit);
	ck_assert_str_eq(frame_refusal(env), "submit.spec.name: a NUL byte "
	    "at byte 3 (strings may not contain NUL)");
	frame_free(env);
	evbuffer_free(in);
	free(b);
}
END_TEST

START_TEST(test_peer_cannot_forge_refusal)
{
	/* Envelope{id=9, hello{major=1}, field 536870911 = "hi\0"}: a peer
	 * that sends the reserved field is refused itself. */
	const uint8_t forged[] = { 0x08, 0x09, 0x52, 0x04, 0x08, 0x01, 0x10, 0x00,
	    0xfa, 0xff, 0xff, 0xff, 0x0f, 0x03, 'h', 'i', 0x00 };
	Cohort__V1__Envelope *env;

	ck_assert_ptr_nonnull(env = frame_decode(forged, sizeof(forged)));
	ck_assert_int_eq(env->body_case, COHORT__V1__ENVELOPE__BODY__NOT_SET);
	ck_assert_str_eq(frame_refusal(env),
	    "field number 536870911 is reserved");
	frame_free(env);
}
END_TEST

START_TEST(test_pack_fixes_cut_text)
{
	Cohort__V1__Envelope env, *out;
	Cohort__V1__Error e;
	char text[] = "no node 'caf\xc3";	/* "%.13s" of "café" */
	uint8_t *frame;
	size_t len;

	wire_error(&env, &e, 5, ERR_NOT_FOUND, text);
	ck_assert_ptr_nonnull(frame = frame_pack(&env, FRAME_DEFAULT_MAX,
	    &len));
	ck_assert_ptr_nonnull(out = frame_decode(frame + FRAME_HDR,
	    len - FRAME_HDR));
	ck_assert_ptr_null(frame_refusal(out));
	ck_assert_str_eq(out->error->text, "no node 'caf?");
	frame_free(out);
	free(frame);
}
END_TEST

static void
spec_with(struct job_spec *s, const char *name, const char *workdir,
    const char *env0, const char *argv0)
{
	job_spec_init(s);
	s->name = strdup(name);
	s->workdir = strdup(workdir);
	s->env = calloc(2, sizeof(char *));
	s->env[0] = strdup(env0);
	s->nenv = 1;
	s->argv = calloc(2, sizeof(char *));
	s->argv[0] = strdup(argv0);
	s->argc = 1;
}

START_TEST(test_job_spec_text)
{
	static const struct {
		const char *name, *workdir, *env0, *argv0, *want;
	} cases[] = {
		{ "ok \xc3\xa9", "/w", "A=1\n2\t3", "python3\n-c", NULL },
		{ "two\nlines", "/w", "A=1", "true",
		    "--name: control character 0x0a at byte 3" },
		{ "ok", "/w\x1b[2J", "A=1", "true",
		    "--workdir: control character 0x1b at byte 2" },
		{ "ok", "/w", "A=\xff", "true",
		    "--env (variable 1): invalid UTF-8 at byte 2" },
		{ "ok", "/w", "A=1", "tr\xc0\xafue",
		    "command (word 1): invalid UTF-8 at byte 2" },
	};
	struct job_spec s;
	struct cerr err;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		spec_with(&s, cases[i].name, cases[i].workdir, cases[i].env0,
		    cases[i].argv0);
		cerr_clear(&err);
		if (cases[i].want == NULL) {
			ck_assert_msg(job_spec_check_text(&s, &err) == 0,
			    "case %zu: %s", i, err.text);
			ck_assert_msg(job_spec_validate(&s, ROLE_USER, NULL,
			    &err) == 0, "case %zu: %s", i, err.text);
		} else {
			ck_assert_int_eq(job_spec_check_text(&s, &err), -1);
			ck_assert_int_eq(err.code, ERR_INVALID);
			ck_assert_str_eq(err.text, cases[i].want);
			/* The controller's validation says the same. */
			ck_assert_int_eq(job_spec_validate(&s, ROLE_USER, NULL,
			    &err), -1);
			ck_assert_str_eq(err.text, cases[i].want);
		}
		job_spec_clear(&s);
	}
}
END_TEST

static Suite *
text_suite(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_fnv);
	tcase_add_test(tc, test_siphash);
	tcase_add_test(tc, test_utf8_edges);
	tcase_add_test(tc, test_names_and_free_text);
	tcase_add_test(tc, test_sanitize);
	tcase_add_test(tc, test_wirecheck_fields);
	tcase_add_test(tc, test_unknown_and_bytes_fields_skipped);
	tcase_add_test(tc, test_frame_decode_refuses);
	tcase_add_test(tc, test_peer_cannot_forge_refusal);
	tcase_add_test(tc, test_job_spec_text);
	tcase_add_test(tc, test_pack_fixes_cut_text);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(text_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
