/* lib/conf.c's value parsers and loader, and cohortd's configuration
 * file (daemon/controller/ctl_config.c) read from temporary files: a good
 * file, the defaults, relative paths, and every kind of error with its
 * exact "FILE:LINE: " prefix. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/controller/ctl_config.h"
#include "daemon/sched/sched.h"
#include "lib/conf.h"
#include "lib/log.h"

/* ---- lib/conf.c ---- */

START_TEST(test_hostport_good)
{
	static const struct {
		const char *in, *host;
		uint16_t port;
		bool zero;
	} c[] = {
		{ "127.0.0.1:7420", "127.0.0.1", 7420, false },
		{ "localhost:1", "localhost", 1, false },
		{ "[::1]:7420", "::1", 7420, false },
		{ "[fe80::1:2]:65535", "fe80::1:2", 65535, false },
		{ "node-01.cluster_a:65535", "node-01.cluster_a", 65535, false },
		{ "0.0.0.0:0", "0.0.0.0", 0, true },
		{ "[::]:0", "::", 0, true },
	};
	char host[CONF_HOST_MAX + 1];
	uint16_t port;
	struct cerr err;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		port = 1234;
		ck_assert_msg(conf_parse_hostport(c[i].in, host, sizeof(host),
		    &port, c[i].zero, &err) == 0, "%s: %s", c[i].in, err.text);
		ck_assert_str_eq(host, c[i].host);
		ck_assert_uint_eq(port, c[i].port);
	}
}
END_TEST

START_TEST(test_hostport_bad)
{
	static const struct {
		const char *in;
		bool zero;
		const char *text;
	} c[] = {
		{ "127.0.0.1", false,
		    "'127.0.0.1': missing port (expected HOST:PORT)" },
		{ "127.0.0.1:", false, "'127.0.0.1:': missing port" },
		{ "host:70000", false, "port 70000 out of range 1..65535" },
		{ "host:70000", true, "port 70000 out of range 0..65535" },
		{ "host:0", false, "port 0 out of range 1..65535" },
		{ "host:99999999999999999999999", false,
		    "port 99999999999999999999999 out of range 1..65535" },
		{ "host:abc", false, "port 'abc' is not a number" },
		{ "host:+1", false, "port '+1' is not a number" },
		{ "host:1 ", false, "port '1 ' is not a number" },
		{ ":7420", false, "':7420': empty host" },
		{ "[]:7420", false, "'[]:7420': empty host" },
		{ "::1:7420", false,
		    "'::1:7420': an IPv6 address needs brackets, as in "
		    "[::1]:7420" },
		{ "[::1]7420", false,
		    "'[::1]7420': missing port (expected [ADDRESS]:PORT)" },
		{ "[::1", false, "'[::1': missing ']' after the IPv6 address" },
		{ "[nothex]:1", false, "'nothex' is not an IPv6 address" },
		{ "bad host:1", false, "'bad host' is not a host name or address" },
		{ "", false, "'': missing port (expected HOST:PORT)" },
	};
	char host[CONF_HOST_MAX + 1];
	uint16_t port = 4321;
	struct cerr err;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_msg(conf_parse_hostport(c[i].in, host, sizeof(host),
		    &port, c[i].zero, &err) == -1, "%s accepted", c[i].in);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_str_eq(err.text, c[i].text);
		ck_assert_uint_eq(port, 4321);
	}
}
END_TEST

START_TEST(test_hostport_long)
{
	char host[CONF_HOST_MAX + 1], small[8], in[CONF_HOST_MAX + 16];
	uint16_t port;
	struct cerr err;

	memset(in, 'h', CONF_HOST_MAX);
	strcpy(in + CONF_HOST_MAX, ":1");
	ck_assert_int_eq(conf_parse_hostport(in, host, sizeof(host), &port,
	    false, &err), 0);
	ck_assert_uint_eq(strlen(host), CONF_HOST_MAX);

	memset(in, 'h', CONF_HOST_MAX + 1);
	strcpy(in + CONF_HOST_MAX + 1, ":1");
	ck_assert_int_eq(conf_parse_hostport(in, host, sizeof(host), &port,
	    false, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "host longer than 255"));

	/* The caller's buffer bounds the host too. */
	ck_assert_int_eq(conf_parse_hostport("localhost:1", small,
	    sizeof(small), &port, false, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "host longer than 7"));
	ck_assert_int_eq(conf_parse_hostport("node1:1", small, sizeof(small),
	    &port, false, &err), 0);
	ck_assert_str_eq(small, "node1");
}
END_TEST

START_TEST(test_uint)
{
	uint64_t v = 7;
	struct cerr err;

	ck_assert_int_eq(conf_parse_uint("0", 0, 10, &v, &err), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(conf_parse_uint("42", 1, 100, &v, &err), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(conf_parse_uint("18446744073709551615", 0, UINT64_MAX,
	    &v, &err), 0);
	ck_assert_uint_eq(v, UINT64_MAX);

	ck_assert_int_eq(conf_parse_uint("18446744073709551616", 0,
	    UINT64_MAX, &v, &err), -1);
	ck_assert_str_eq(err.text,
	    "18446744073709551616 out of range 0..18446744073709551615");
	ck_assert_int_eq(conf_parse_uint("5", 1, 4, &v, &err), -1);
	ck_assert_str_eq(err.text, "5 out of range 1..4");
	ck_assert_int_eq(conf_parse_uint("0", 1, 4, &v, &err), -1);
	ck_assert_str_eq(err.text, "0 out of range 1..4");
	ck_assert_int_eq(conf_parse_uint("-1", 0, 4, &v, &err), -1);
	ck_assert_str_eq(err.text, "'-1' is not a number");
	ck_assert_int_eq(conf_parse_uint("+1", 0, 4, &v, &err), -1);
	ck_assert_int_eq(conf_parse_uint(" 1", 0, 4, &v, &err), -1);
	ck_assert_int_eq(conf_parse_uint("1x", 0, 4, &v, &err), -1);
	ck_assert_str_eq(err.text, "'1x' is not a number");
	ck_assert_int_eq(conf_parse_uint("", 0, 4, &v, &err), -1);
	ck_assert_str_eq(err.text, "'' is not a number");
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(test_size)
{
	static const struct {
		const char *in;
		uint64_t v;
	} good[] = {
		{ "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 },
		{ "4M", 4u << 20 }, { "1G", 1u << 30 }, { "0", 0 },
		{ "16384G", 16384ULL << 30 },
	};
	uint64_t v;
	struct cerr err;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(conf_parse_size(good[i].in, 0, UINT64_MAX, &v,
		    &err) == 0, "%s: %s", good[i].in, err.text);
		ck_assert_uint_eq(v, good[i].v);
	}
	ck_assert_int_eq(conf_parse_size("512", 1 << 10, 256 << 20, &v, &err),
	    -1);
	ck_assert_str_eq(err.text, "512 out of range 1K..256M");
	ck_assert_int_eq(conf_parse_size("1G", 1 << 10, 256 << 20, &v, &err),
	    -1);
	ck_assert_str_eq(err.text, "1G out of range 1K..256M");
	ck_assert_int_eq(conf_parse_size("1000", 1000, 1000, &v, &err), 0);
	ck_assert_int_eq(conf_parse_size("1001", 1000, 1000, &v, &err), -1);
	ck_assert_str_eq(err.text, "1001 out of range 1000..1000");
	ck_assert_int_eq(conf_parse_size("99999999999999G", 0, UINT64_MAX, &v,
	    &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "out of range"));
	ck_assert_int_eq(conf_parse_size("1T", 0, UINT64_MAX, &v, &err), -1);
	ck_assert_str_eq(err.text,
	    "'1T' is not a size (a number with an optional K, M or G)");
	ck_assert_int_eq(conf_parse_size("4KB", 0, UINT64_MAX, &v, &err), -1);
	ck_assert_int_eq(conf_parse_size("K", 0, UINT64_MAX, &v, &err), -1);
	ck_assert_int_eq(conf_parse_size("", 0, UINT64_MAX, &v, &err), -1);
	ck_assert_int_eq(conf_parse_size("-1K", 0, UINT64_MAX, &v, &err), -1);
	ck_assert_int_eq(conf_parse_size("4 K", 0, UINT64_MAX, &v, &err), -1);
}
END_TEST

START_TEST(test_bool)
{
	static const char *const yes[] = { "yes", "true", "on", "1", "YES",
		"True" };
	static const char *const no[] = { "no", "false", "off", "0", "NO",
		"Off" };
	struct cerr err;
	bool b;
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		ck_assert_int_eq(conf_parse_bool(yes[i], &b, &err), 0);
		ck_assert(b);
		ck_assert_int_eq(conf_parse_bool(no[i], &b, &err), 0);
		ck_assert(!b);
	}
	ck_assert_int_eq(conf_parse_bool("maybe", &b, &err), -1);
	ck_assert_str_eq(err.text,
	    "'maybe' is not a boolean (yes/no, true/false, on/off, 1/0)");
	ck_assert_int_eq(conf_parse_bool("", &b, &err), -1);
}
END_TEST

START_TEST(test_duration)
{
	uint64_t v;
	struct cerr err;

	ck_assert_int_eq(conf_parse_duration("90s", 1, 3600, &v, &err), 0);
	ck_assert_uint_eq(v, 90);
	ck_assert_int_eq(conf_parse_duration("1:00:00", 1, 3600, &v, &err),
	    0);
	ck_assert_uint_eq(v, 3600);
	ck_assert_int_eq(conf_parse_duration("2h", 1, 3600, &v, &err), -1);
	ck_assert_str_eq(err.text, "2h out of range 00:00:01..01:00:00");
	ck_assert_int_eq(conf_parse_duration("0s", 1, 3600, &v, &err), -1);
	ck_assert_int_eq(conf_parse_duration("99999999d", 1, 3600, &v, &err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.text, "out of range"));
	ck_assert_int_eq(conf_parse_duration("soon", 1, 3600, &v, &err), -1);
	ck_assert_str_eq(err.text,
	    "'soon' is not a duration (e.g. 90s, 30m, 2h, 1-00:00:00)");
}
END_TEST

START_TEST(test_set_str)
{
	char *s = NULL;

	ck_assert_int_eq(conf_set_str(&s, "a"), 0);
	ck_assert_str_eq(s, "a");
	ck_assert_int_eq(conf_set_str(&s, "bc"), 0);
	ck_assert_str_eq(s, "bc");
	free(s);
}
END_TEST

START_TEST(test_duration_ms)
{
	static const struct {
		const char *in;
		uint64_t ms;
	} good[] = {
		{ "0ms", 0 }, { "500ms", 500 }, { "2s", 2000 },
		{ "10m", 600000 }, { "1h", 3600000 }, { "1d", 86400000 },
		{ "00:02:30", 150000 }, { "1:30", 90000 },
		{ "1-00:00:00", 86400000 },
	};
	static const struct {
		const char *in, *text;
	} bad[] = {
		{ "2", "'2' needs a unit (ms, s, m or h)" },
		{ "0", "'0' needs a unit (ms, s, m or h)" },
		{ "", "'' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "ms", "'ms' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "2 s", "'2 s' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "-1s", "'-1s' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "1.5s", "'1.5s' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "2sec", "'2sec' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "1:75", "'1:75' is not a duration (e.g. 500ms, 2s, 10m)" },
		{ "99999999999999999999999ms",
		    "99999999999999999999999ms out of range 0s..48h" },
		{ "99999999999d", "99999999999d out of range 0s..48h" },
		{ "3d", "3d out of range 0s..48h" },
	};
	uint64_t v;
	struct cerr err;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(conf_parse_duration_ms(good[i].in, 0,
		    2 * 86400000ULL, &v, &err) == 0, "%s: %s", good[i].in,
		    err.text);
		ck_assert_uint_eq(v, good[i].ms);
	}
	v = 7;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(conf_parse_duration_ms(bad[i].in, 0,
		    2 * 86400000ULL, &v, &err) == -1, "%s accepted", bad[i].in);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_str_eq(err.text, bad[i].text);
	}
	ck_assert_uint_eq(v, 7);

	/* The bounds are written in the units that divide them. */
	ck_assert_int_eq(conf_parse_duration_ms("50ms", 100, 600000, &v,
	    &err), -1);
	ck_assert_str_eq(err.text, "50ms out of range 100ms..10m");
	ck_assert_int_eq(conf_parse_duration_ms("2h", 1000, 3600000, &v,
	    &err), -1);
	ck_assert_str_eq(err.text, "2h out of range 1s..1h");
	ck_assert_int_eq(conf_parse_duration_ms("100ms", 100, 100, &v, &err),
	    0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(conf_parse_duration_ms("1s", 1500, 90000, &v, &err),
	    -1);
	ck_assert_str_eq(err.text, "1s out of range 1500ms..90s");
}
END_TEST

START_TEST(test_abs_path)
{
	struct cerr err;
	char *p = NULL;

	ck_assert_int_eq(conf_abs_path("/etc/cohort", "ca.pem", &p, &err), 0);
	ck_assert_str_eq(p, "/etc/cohort/ca.pem");
	free(p);
	ck_assert_int_eq(conf_abs_path("/", "ca.pem", &p, &err), 0);
	ck_assert_str_eq(p, "/ca.pem");
	free(p);
	ck_assert_int_eq(conf_abs_path("/etc/", "../x", &p, &err), 0);
	ck_assert_str_eq(p, "/etc/../x");
	free(p);
	ck_assert_int_eq(conf_abs_path("/etc", "/abs/x", &p, &err), 0);
	ck_assert_str_eq(p, "/abs/x");
	free(p);
	p = NULL;
	ck_assert_int_eq(conf_abs_path("/etc", "", &p, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text, "empty path");
	ck_assert_ptr_null(p);
}
END_TEST

/* ---- daemon/controller/ctl_config.c ---- */

static char tmpdir[PATH_MAX];
static char cfgpath[PATH_MAX + 32];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_conf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(cfgpath, sizeof(cfgpath), "%s/cohortd.conf", tmpdir);
}

static void
tmp_teardown(void)
{
	char p[PATH_MAX + 32];

	unlink(cfgpath);
	snprintf(p, sizeof(p), "%s/sub/cohortd.conf", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub", tmpdir);
	rmdir(p);
	rmdir(tmpdir);
}

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	ck_assert_int_eq(fclose(fp), 0);
}

#define REQUIRED                                                               \
	"[controller]\n"                                                       \
	"database = /var/lib/cohort/state.db\n"                                \
	"[tls]\n"                                                              \
	"ca = /etc/cohort/ca.pem\n"                                            \
	"cert = /etc/cohort/controller.crt\n"                                  \
	"key = /etc/cohort/controller.key\n"

/* Load text from the temporary file; expect failure with exactly
 * "<cfgpath><suffix>". */
static void
load_fails(const char *text, const char *suffix)
{
	struct ctl_config cfg;
	struct cerr err;
	char want[sizeof(cfgpath) + 512];

	write_file(cfgpath, text);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	snprintf(want, sizeof(want), "%s%s", cfgpath, suffix);
	ck_assert_str_eq(err.text, want);
	ck_assert_int_eq(err.code, ERR_INVALID);
	/* Nothing is left allocated after a failure. */
	ck_assert_ptr_null(cfg.database);
	ck_assert_ptr_null(cfg.ca);
	ctl_config_clear(&cfg);
}

START_TEST(test_load_good)
{
	struct ctl_config cfg;
	struct cerr err;
	char want[PATH_MAX + 64];

	write_file(cfgpath,
	    "; cohortd test configuration\n"
	    "# both comment styles\n"
	    "\n"
	    "[controller]\n"
	    "listen = [::1]:0\n"
	    "   port_file = run/port   ; indented, inline comment\n"
	    "\tdatabase=/var/lib/cohort/state.db\n"
	    "[tls]\n"
	    "ca = pki/ca.pem\n"
	    "cert = /etc/cohort/controller.crt\r\n"
	    "key = ../controller.key\n"
	    "[limits]\n"
	    "max_frame = 8M\n"
	    "max_connections = 10\n"
	    "max_script = 64K\n"
	    "max_output_per_user = 8M\n"
	    "max_output_total = 1G\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.listen_host, "::1");
	ck_assert_uint_eq(cfg.listen_port, 0);
	snprintf(want, sizeof(want), "%s/run/port", tmpdir);
	ck_assert_str_eq(cfg.port_file, want);
	ck_assert_str_eq(cfg.database, "/var/lib/cohort/state.db");
	snprintf(want, sizeof(want), "%s/pki/ca.pem", tmpdir);
	ck_assert_str_eq(cfg.ca, want);
	ck_assert_str_eq(cfg.cert, "/etc/cohort/controller.crt");
	snprintf(want, sizeof(want), "%s/../controller.key", tmpdir);
	ck_assert_str_eq(cfg.key, want);
	ck_assert_uint_eq(cfg.max_frame, 8u << 20);
	ck_assert_uint_eq(cfg.max_connections, 10);
	ck_assert_uint_eq(cfg.max_script, 64u << 10);
	ck_assert_uint_eq(cfg.max_output_per_user, 8u << 20);
	ck_assert_uint_eq(cfg.max_output_total, 1u << 30);
	ctl_config_clear(&cfg);
	ck_assert_ptr_null(cfg.database);
	ctl_config_clear(&cfg);
}
END_TEST

START_TEST(test_load_defaults)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED);
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.listen_host, "127.0.0.1");
	ck_assert_uint_eq(cfg.listen_port, 7420);
	ck_assert_ptr_null(cfg.port_file);
	ck_assert_uint_eq(cfg.max_frame, 4u << 20);
	ck_assert_uint_eq(cfg.max_connections, 16384);
	ck_assert_uint_eq(cfg.max_script, 1u << 20);
	ck_assert_uint_eq(cfg.max_output_per_user, 32u << 20);
	ck_assert_uint_eq(cfg.max_output_total, 512u << 20);
	ctl_config_clear(&cfg);
}
END_TEST

/* A relative config path: relative values end up absolute all the same,
 * so that the daemon may change directory later. */
/* Connection admission keys: defaults that hold at 10,000 nodes, values
 * read, bounds refused. */
START_TEST(test_load_admission)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED);
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_gt(cfg.max_connections, 10000 + cfg.max_handshakes);
	ck_assert_uint_eq(cfg.max_handshakes, 256);
	ck_assert_uint_eq(cfg.max_handshakes_per_source, 64);
	ck_assert_uint_eq(cfg.handshake_timeout_ms, 5000);
	ck_assert_uint_eq(cfg.hello_timeout_ms, 15000);
	ck_assert_uint_eq(cfg.max_connections_per_user, 32);
	ck_assert_uint_eq(cfg.agent_reserve, 0);
	ck_assert_uint_eq(cfg.idle_timeout_ms, 15 * 60 * 1000);
	ck_assert_uint_eq(cfg.max_requests_in_flight, 64);
	ctl_config_clear(&cfg);
	write_file(cfgpath, REQUIRED "[limits]\n"
	    "max_handshakes = 100\nmax_handshakes_per_source = 7\n"
	    "handshake_timeout = 2s\nhello_timeout = 3s\n"
	    "max_connections_per_user = 3\nagent_reserve = 500\n"
	    "idle_timeout = 1500ms\nmax_requests_in_flight = 8\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.max_handshakes, 100);
	ck_assert_uint_eq(cfg.max_handshakes_per_source, 7);
	ck_assert_uint_eq(cfg.handshake_timeout_ms, 2000);
	ck_assert_uint_eq(cfg.hello_timeout_ms, 3000);
	ck_assert_uint_eq(cfg.max_connections_per_user, 3);
	ck_assert_uint_eq(cfg.agent_reserve, 500);
	ck_assert_uint_eq(cfg.idle_timeout_ms, 1500);
	ck_assert_uint_eq(cfg.max_requests_in_flight, 8);
	ctl_config_clear(&cfg);
	load_fails(REQUIRED "[limits]\nmax_handshakes = 0\n",
	    ":8: max_handshakes: 0 out of range 1..1000000");
	load_fails(REQUIRED "[limits]\nmax_connections_per_user = 0\n",
	    ":8: max_connections_per_user: 0 out of range 1..1000000");
	load_fails(REQUIRED "[limits]\nmax_requests_in_flight = 0\n",
	    ":8: max_requests_in_flight: 0 out of range 1..100000");
	load_fails(REQUIRED "[limits]\nidle_timeout = 5\n",
	    ":8: idle_timeout: '5' needs a unit (ms, s, m or h)");
}
END_TEST

START_TEST(test_load_relative_path)
{
	struct ctl_config cfg;
	struct cerr err;
	char sub[PATH_MAX + 8], want[PATH_MAX + 64], old[PATH_MAX];

	snprintf(sub, sizeof(sub), "%s/sub", tmpdir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	snprintf(want, sizeof(want), "%s/cohortd.conf", sub);
	write_file(want,
	    "[controller]\ndatabase = state.db\n"
	    "[tls]\nca = ca.pem\ncert = c.crt\nkey = /abs/c.key\n");
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(tmpdir), 0);

	ck_assert_msg(ctl_config_load(&cfg, "sub/cohortd.conf", &err) == 0,
	    "%s", err.text);
	snprintf(want, sizeof(want), "%s/sub/state.db", tmpdir);
	ck_assert_str_eq(cfg.database, want);
	ck_assert_str_eq(cfg.key, "/abs/c.key");
	ctl_config_clear(&cfg);

	ck_assert_int_eq(chdir(sub), 0);
	ck_assert_msg(ctl_config_load(&cfg, "cohortd.conf", &err) == 0,
	    "%s", err.text);
	snprintf(want, sizeof(want), "%s/sub/ca.pem", tmpdir);
	ck_assert_str_eq(cfg.ca, want);
	ctl_config_clear(&cfg);
	ck_assert_int_eq(chdir(old), 0);
}
END_TEST

START_TEST(test_load_errors)
{
	load_fails(REQUIRED "[controller]\nfoo = 1\n",
	    ":8: unknown key 'foo' in [controller]");
	load_fails("[bogus]\nx = 1\n" REQUIRED, ":2: unknown section [bogus]");
	load_fails("x = 1\n" REQUIRED, ":1: key 'x' is outside any section");
	load_fails("[controller]\nlisten = 127.0.0.1:70000\n" REQUIRED,
	    ":2: listen: port 70000 out of range 0..65535");
	load_fails("[controller]\nlisten = 127.0.0.1\n" REQUIRED,
	    ":2: listen: '127.0.0.1': missing port (expected HOST:PORT)");
	load_fails(REQUIRED "[limits]\nmax_frame = 512\n",
	    ":8: max_frame: 512 out of range 1K..256M");
	load_fails(REQUIRED "[limits]\nmax_frame = 4X\n",
	    ":8: max_frame: '4X' is not a size (a number with an optional K, "
	    "M or G)");
	load_fails(REQUIRED "[limits]\nmax_connections = 0\n",
	    ":8: max_connections: 0 out of range 1..1000000");
	/* Below one largest listing page. */
	load_fails(REQUIRED "[limits]\nmax_output_per_user = 1M\n",
	    ":8: max_output_per_user: 1M out of range 4M..64G");
	load_fails(REQUIRED "[limits]\nmax_script = 128M\n",
	    ":8: max_script: 128M out of range 1K..64M");
	load_fails(REQUIRED "[controller]\ndatabase = /other.db\n",
	    ":8: 'database' given twice in [controller] (first on line 2)");
	load_fails("[controller]\ndatabase =\n",
	    ":2: database: empty path");
	load_fails(REQUIRED "this line has no equals sign\n",
	    ":7: syntax error: expected [section] or key = value");
	load_fails("[tls\n" REQUIRED,
	    ":1: syntax error: expected [section] or key = value");
	/* The first error wins, whoever found it. */
	load_fails("[controller]\nnonsense\nfoo = 1\n" REQUIRED,
	    ":2: syntax error: expected [section] or key = value");
	load_fails("[controller]\nfoo = 1\nnonsense\n" REQUIRED,
	    ":2: unknown key 'foo' in [controller]");
}
END_TEST

START_TEST(test_load_missing)
{
	load_fails("", ": missing 'ca' in [tls]");
	load_fails("[tls]\nca = a\ncert = b\nkey = c\n",
	    ": missing 'database' in [controller] (or a [replication] "
	    "section)");
	load_fails("[controller]\ndatabase = x\n[tls]\nca = a\ncert = b\n",
	    ": missing 'key' in [tls]");
	load_fails("[controller]\ndatabase = x\n[tls]\ncert = b\nkey = c\n",
	    ": missing 'ca' in [tls]");
}
END_TEST

#define TLS_ONLY                                                               \
	"[tls]\n"                                                              \
	"ca = /etc/cohort/ca.pem\n"                                            \
	"cert = /etc/cohort/controller.crt\n"                                  \
	"key = /etc/cohort/controller.key\n"

/* [replication]: a replica listens where its address says, Raft one
 * port above unless told; and the section is all or nothing. */
START_TEST(test_load_replication)
{
	struct ctl_config cfg;
	struct cerr err;
	char want[PATH_MAX + 64];

	write_file(cfgpath, TLS_ONLY "[replication]\nid = 2\n"
	    "address = 10.0.0.2:7420\ndata_dir = raft\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.repl_id, 2);
	ck_assert_str_eq(cfg.repl_host, "10.0.0.2");
	ck_assert_uint_eq(cfg.repl_port, 7420);
	ck_assert_str_eq(cfg.repl_raft_host, "10.0.0.2");
	ck_assert_uint_eq(cfg.repl_raft_port, 7421);
	ck_assert_str_eq(cfg.listen_host, "10.0.0.2");
	ck_assert_uint_eq(cfg.listen_port, 7420);
	snprintf(want, sizeof(want), "%s/raft", tmpdir);
	ck_assert_str_eq(cfg.repl_data_dir, want);
	ck_assert_uint_eq(cfg.repl_election_ms, 1000);
	ck_assert_uint_eq(cfg.repl_heartbeat_ms, 100);
	ck_assert_ptr_null(cfg.database);
	ctl_config_clear(&cfg);

	write_file(cfgpath, TLS_ONLY "[controller]\nlisten = 0.0.0.0:7420\n"
	    "[replication]\nid = 1\naddress = ctl1.example:7420\n"
	    "raft_address = 10.9.0.1:9000\ndata_dir = /var/lib/raft\n"
	    "election_timeout = 2s\nheartbeat = 200ms\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.listen_host, "0.0.0.0");
	ck_assert_str_eq(cfg.repl_raft_host, "10.9.0.1");
	ck_assert_uint_eq(cfg.repl_raft_port, 9000);
	ck_assert_uint_eq(cfg.repl_election_ms, 2000);
	ctl_config_clear(&cfg);

	load_fails(TLS_ONLY "[replication]\nid = 1\ndata_dir = d\n",
	    ": [replication] needs id, address and data_dir");
	load_fails(TLS_ONLY "[replication]\nid = 0\n",
	    ":6: id: 0 out of range 1..4611686018427387904");
	load_fails(TLS_ONLY "[replication]\nid = 1\naddress = h:0\n",
	    ":7: address: port 0 out of range 1..65535");
	load_fails(REQUIRED "[replication]\nid = 1\naddress = h:1\n"
	    "data_dir = d\n", ": [controller] database and [replication] do "
	    "not go together: a replicated controller keeps its database in "
	    "its replicas' Raft log (docs/REPLICATION.md)");
	load_fails(TLS_ONLY "[replication]\nid = 1\naddress = h:1\n"
	    "data_dir = d\nheartbeat = 600ms\n",
	    ": [replication] heartbeat (600 ms) must be at most half of "
	    "election_timeout (1000 ms)");
	load_fails(TLS_ONLY "[replication]\nid = 1\naddress = h:1\n"
	    "raft_address = h:1\ndata_dir = d\n",
	    ": [replication] address and raft_address must differ");
	load_fails(TLS_ONLY "[controller]\nlisten = h:2\n[replication]\n"
	    "id = 1\naddress = h:1\ndata_dir = d\n",
	    ": [controller] listen port 2 differs from [replication] address "
	    "port 1");
}
END_TEST

/* inih's buffer is 200 bytes: a longer "key = value" (a path in a deep
 * directory) is taken whole, an inline comment and blanks off; beyond
 * 8192 characters, or a long line of another kind, is refused with the
 * line's number instead of cut. */
START_TEST(test_load_long_line)
{
	struct ctl_config cfg;
	struct cerr err;
	char *text, *pad = malloc(9000), want[600];

	ck_assert_ptr_nonnull(pad);
	memset(pad, 'p', 399);
	pad[399] = '\0';
	ck_assert_int_ne(asprintf(&text, "[controller]\n; %s\n"
	    "database = /%s   ; the state\n[tls]\nca = /a\ncert = /b\n"
	    "key = /c\n", pad, pad), -1);
	write_file(cfgpath, text);
	free(text);
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	snprintf(want, sizeof(want), "/%s", pad);
	ck_assert_str_eq(cfg.database, want);
	ctl_config_clear(&cfg);
	memset(pad, 'p', 8999);
	pad[8999] = '\0';
	ck_assert_int_ne(asprintf(&text,
	    "[controller]\ndatabase = /%s\n[tls]\nca = a\ncert = b\nkey = c\n",
	    pad), -1);
	load_fails(text, ":2: line too long (at most 197 characters, or 8192 "
	    "for key = value)");
	free(text);
	memset(pad, 'p', 399);
	pad[399] = '\0';
	ck_assert_int_ne(asprintf(&text, "[controller%s]\n", pad), -1);
	load_fails(text, ":1: line too long (at most 197 characters, or 8192 "
	    "for key = value)");
	free(text);
	free(pad);
}
END_TEST

START_TEST(test_load_no_file)
{
	struct ctl_config cfg;
	struct cerr err;
	char want[sizeof(cfgpath) + 64];

	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	snprintf(want, sizeof(want), "%s: cannot open: %s", cfgpath,
	    strerror(ENOENT));
	ck_assert_str_eq(err.text, want);
	ctl_config_clear(&cfg);
}
END_TEST

START_TEST(test_load_durations)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED
	    "[controller]\n"
	    "node_timeout = 500ms\n"
	    "heartbeat_interval = 2s\n"
	    "default_time_limit = 1-12:00:00\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.node_timeout_ms, 500);
	ck_assert_uint_eq(cfg.heartbeat_ms, 2000);
	ck_assert_uint_eq(cfg.default_time_limit_ms, 36ULL * 3600 * 1000);
	ctl_config_clear(&cfg);

	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_uint_eq(cfg.node_timeout_ms, 10000);
	ck_assert_uint_eq(cfg.heartbeat_ms, 2000);
	ck_assert_uint_eq(cfg.default_time_limit_ms, 24ULL * 3600 * 1000);
	ck_assert_uint_eq(cfg.early_fail_window_ms, 60000);
	ctl_config_clear(&cfg);

	/* Early failures: 0s turns the back-off off. */
	write_file(cfgpath, REQUIRED "[controller]\nearly_fail_window = 0s\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.early_fail_window_ms, 0);
	ctl_config_clear(&cfg);
	write_file(cfgpath, REQUIRED "[controller]\nearly_fail_window = 2m\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.early_fail_window_ms, 120000);
	ctl_config_clear(&cfg);

	/* A bare number would be minutes to lib/duration.c: refused. */
	load_fails("[controller]\nnode_timeout = 5\n" REQUIRED,
	    ":2: node_timeout: '5' needs a unit (ms, s, m or h)");
	load_fails("[controller]\nheartbeat_interval = 50ms\n" REQUIRED,
	    ":2: heartbeat_interval: 50ms out of range 100ms..8784h");
	load_fails("[controller]\ndefault_time_limit = 367d\n" REQUIRED,
	    ":2: default_time_limit: 367d out of range 100ms..8784h");
	load_fails("[controller]\nnode_timeout = soon\n" REQUIRED,
	    ":2: node_timeout: 'soon' is not a duration (e.g. 500ms, 2s, "
	    "10m)");
}
END_TEST

START_TEST(test_load_retention)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_uint_eq(cfg.job_retention_ms, 30ULL * 86400 * 1000);
	ck_assert_uint_eq(cfg.event_retention_ms, 30ULL * 86400 * 1000);
	ctl_config_clear(&cfg);
	write_file(cfgpath, REQUIRED
	    "[controller]\n"
	    "job_retention = 90d\n"
	    "event_retention = off\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.job_retention_ms, 90ULL * 86400 * 1000);
	ck_assert_uint_eq(cfg.event_retention_ms, 0);
	ctl_config_clear(&cfg);
	load_fails("[controller]\njob_retention = 500ms\n" REQUIRED,
	    ":2: job_retention: 500ms out of range 1s..87840h");
	load_fails("[controller]\nevent_retention = a while\n" REQUIRED,
	    ":2: event_retention: 'a while' is not a duration (e.g. 500ms, "
	    "2s, 10m)");
}
END_TEST

START_TEST(test_load_queue_policy)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_int_eq(cfg.queue_order, SCHED_ORDER_ESTIMATE);
	ck_assert_uint_eq(cfg.queue_aging, 250);
	ctl_config_clear(&cfg);

	write_file(cfgpath, REQUIRED
	    "[controller]\nqueue_order = fifo\nqueue_aging = 1.5\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_int_eq(cfg.queue_order, SCHED_ORDER_FIFO);
	ck_assert_uint_eq(cfg.queue_aging, 1500);
	ctl_config_clear(&cfg);

	write_file(cfgpath, "[controller]\nqueue_order = sjf\n" REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, ":2:") != NULL, "%s", err.text);
	write_file(cfgpath, "[controller]\nqueue_aging = -1\n" REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, ":2:") != NULL, "%s", err.text);
}
END_TEST

/* log_level: info by default; the four words; anything else refused
 * with the line and the choices. */
START_TEST(test_load_log_level)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_int_eq(cfg.log_level, LOG_LEVEL_INFO);
	ctl_config_clear(&cfg);
	write_file(cfgpath, "[controller]\nlog_level = debug\n" REQUIRED);
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_int_eq(cfg.log_level, LOG_LEVEL_DEBUG);
	ctl_config_clear(&cfg);
	write_file(cfgpath, "[controller]\nlog_level = error\n" REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_int_eq(cfg.log_level, LOG_LEVEL_ERROR);
	ctl_config_clear(&cfg);
	write_file(cfgpath, "[controller]\nlog_level = loud\n" REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, ":2: log_level: 'loud' is not a log "
	    "level (debug, info, warning or error)") != NULL, "%s", err.text);
}
END_TEST

START_TEST(test_load_nodes)
{
	struct ctl_config cfg;
	struct cerr err;

	/* Default: no list, unknown nodes refused. */
	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_ptr_null(cfg.nodes);
	ck_assert_uint_eq(cfg.nnodes, 0);
	ck_assert(!cfg.accept_unknown_nodes);
	ctl_config_clear(&cfg);

	/* Expanded, sorted, duplicates dropped. */
	write_file(cfgpath, REQUIRED "[controller]\n"
	    "nodes = gpu[03-04,01],login1,gpu01\naccept_unknown_nodes = yes\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.nnodes, 4);
	ck_assert_str_eq(cfg.nodes[0], "gpu01");
	ck_assert_str_eq(cfg.nodes[1], "gpu03");
	ck_assert_str_eq(cfg.nodes[2], "gpu04");
	ck_assert_str_eq(cfg.nodes[3], "login1");
	ck_assert(cfg.accept_unknown_nodes);
	ctl_config_clear(&cfg);
	ck_assert_ptr_null(cfg.nodes);

	write_file(cfgpath, "[controller]\nnodes = gpu[1-\n" REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, ":2:") != NULL &&
	    strstr(err.text, "not a hostlist") != NULL, "%s", err.text);
	ck_assert_ptr_null(cfg.nodes);
	write_file(cfgpath, "[controller]\nnodes = n[1-200000]\n" REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, "100000") != NULL, "%s", err.text);
	write_file(cfgpath, "[controller]\naccept_unknown_nodes = maybe\n"
	    REQUIRED);
	ck_assert_int_eq(ctl_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, "not a boolean") != NULL, "%s",
	    err.text);
}
END_TEST

/* ---- conf_load, with a table of its own ---- */

struct t_cfg {
	char *path;
	uint8_t u8;
	uint16_t u16;
	unsigned u32;
	uint64_t u64;
	size_t size;
	uint64_t ms;
	char list[64];		/* "a,b,c" of the repeated key */
	int calls;		/* of t_set_list */
};

static int
t_set_list(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct t_cfg *cfg = c->cfg;
	size_t len = strlen(cfg->list);

	cfg->calls++;
	if (strcmp(value, "bad") == 0)
		return cerr_set(err, ERR_DENIED, "'%s' is refused", value);
	snprintf(cfg->list + len, sizeof(cfg->list) - len, "%s%s",
	    len == 0 ? "" : ",", value);
	return 0;
}

#define TF(f) CONF_FIELD(struct t_cfg, f)
static const struct conf_key t_keys[] = {
	{ .section = "a", .name = "path", .required = true,
	  .set = conf_key_path, TF(path) },
	{ .section = "a", .name = "u8", .set = conf_key_uint, TF(u8),
	  .min = 0, .max = 255 },
	{ .section = "a", .name = "u16", .set = conf_key_uint, TF(u16),
	  .min = 0, .max = 65535 },
	{ .section = "a", .name = "u32", .set = conf_key_uint, TF(u32),
	  .min = 1, .max = 10 },
	{ .section = "b", .name = "u64", .set = conf_key_uint, TF(u64),
	  .min = 0, .max = UINT64_MAX },
	{ .section = "b", .name = "size", .set = conf_key_size, TF(size),
	  .min = 1024, .max = 1 << 20 },
	{ .section = "b", .name = "ms", .set = conf_key_ms, TF(ms),
	  .min = 100, .max = 60000 },
	{ .section = "b", .name = "list", .repeatable = true,
	  .set = t_set_list },
};
#define T_NKEYS (sizeof(t_keys) / sizeof(t_keys[0]))

static void
t_load_fails(const char *text, const char *suffix, enum err_code code)
{
	struct t_cfg cfg;
	struct cerr err;
	char want[sizeof(cfgpath) + 512];

	memset(&cfg, 0, sizeof(cfg));
	write_file(cfgpath, text);
	ck_assert_int_eq(conf_load(cfgpath, t_keys, T_NKEYS, &cfg, NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s%s", cfgpath, suffix);
	ck_assert_str_eq(err.text, want);
	ck_assert_int_eq(err.code, code);
	free(cfg.path);
}

START_TEST(test_conf_load)
{
	struct t_cfg cfg;
	struct cerr err;
	int seen[T_NKEYS];
	char want[PATH_MAX + 64];

	memset(&cfg, 0, sizeof(cfg));
	memset(seen, 0xff, sizeof(seen));
	write_file(cfgpath,
	    "[b]\n"
	    "list = x\n"
	    "u64 = 18446744073709551615\n"
	    "  list = y   ; repeated, indented\n"
	    "size = 64K\n"
	    "ms = 1500ms\n"
	    "[a]\n"
	    "path = sub/file\n"
	    "u8 = 255\n"
	    "u16 = 65535\n"
	    "u32 = 7\n"
	    "[b]\n"
	    "list = z\n");
	ck_assert_msg(conf_load(cfgpath, t_keys, T_NKEYS, &cfg, seen, &err) ==
	    0, "%s", err.text);
	ck_assert_int_eq(err.code, ERR_NONE);
	snprintf(want, sizeof(want), "%s/sub/file", tmpdir);
	ck_assert_str_eq(cfg.path, want);
	ck_assert_uint_eq(cfg.u8, 255);
	ck_assert_uint_eq(cfg.u16, 65535);
	ck_assert_uint_eq(cfg.u32, 7);
	ck_assert_uint_eq(cfg.u64, UINT64_MAX);
	ck_assert_uint_eq(cfg.size, 64 << 10);
	ck_assert_uint_eq(cfg.ms, 1500);
	ck_assert_str_eq(cfg.list, "x,y,z");
	/* The first line each key was given on; 0 for those not given. */
	ck_assert_int_eq(seen[0], 8);
	ck_assert_int_eq(seen[4], 3);
	ck_assert_int_eq(seen[7], 2);
	free(cfg.path);

	memset(&cfg, 0, sizeof(cfg));
	write_file(cfgpath, "[a]\npath = /x\n");
	ck_assert_int_eq(conf_load(cfgpath, t_keys, T_NKEYS, &cfg, seen, &err),
	    0);
	ck_assert_str_eq(cfg.path, "/x");
	ck_assert_int_eq(seen[0], 2);
	ck_assert_int_eq(seen[1], 0);
	ck_assert_int_eq(seen[7], 0);
	free(cfg.path);
}
END_TEST

/* [tenants]: per-user limits, listing pages, private data. */
START_TEST(test_load_tenants)
{
	struct ctl_config cfg;
	struct cerr err;

	write_file(cfgpath, REQUIRED);
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.max_pending_per_user, 10000);
	ck_assert_uint_eq(cfg.submit_rate, 100);
	ck_assert_uint_eq(cfg.submit_burst, 1000);
	ck_assert_uint_eq(cfg.page_size, 1000);
	ck_assert(cfg.private_data);
	ctl_config_clear(&cfg);

	write_file(cfgpath, REQUIRED "[tenants]\nmax_pending_per_user = 0\n"
	    "submit_rate = 5\nsubmit_burst = 7\npage_size = 3\n"
	    "private_data = no\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.max_pending_per_user, 0);
	ck_assert_uint_eq(cfg.submit_rate, 5);
	ck_assert_uint_eq(cfg.submit_burst, 7);
	ck_assert_uint_eq(cfg.page_size, 3);
	ck_assert(!cfg.private_data);
	ctl_config_clear(&cfg);

	load_fails(REQUIRED "[tenants]\npage_size = 0\n",
	    ":8: page_size: 0 out of range 1..10000");
	load_fails(REQUIRED "[tenants]\npage_size = 10001\n",
	    ":8: page_size: 10001 out of range 1..10000");
	load_fails(REQUIRED "[tenants]\nsubmit_burst = 0\n",
	    ":8: submit_burst: 0 out of range 1..100000000");
	load_fails(REQUIRED "[tenants]\nprivate_data = maybe\n",
	    ":8: private_data: 'maybe' is not a boolean (yes/no, true/false, "
	    "on/off, 1/0)");
	load_fails(REQUIRED "[tenants]\nmax_pending = 5\n",
	    ":8: unknown key 'max_pending' in [tenants]");
}
END_TEST

START_TEST(test_conf_load_errors)
{
	struct t_cfg cfg;
	struct cerr err;
	char want[sizeof(cfgpath) + 64];

	t_load_fails("", ": missing 'path' in [a]", ERR_INVALID);
	t_load_fails("[b]\nlist = 1\n", ": missing 'path' in [a]",
	    ERR_INVALID);
	t_load_fails("[a]\npath = /x\nu8 = 256\n",
	    ":3: u8: 256 out of range 0..255", ERR_INVALID);
	t_load_fails("[a]\npath = /x\nu32 = 0\n",
	    ":3: u32: 0 out of range 1..10", ERR_INVALID);
	t_load_fails("[a]\npath = /x\n[b]\nsize = 2M\n",
	    ":4: size: 2M out of range 1K..1M", ERR_INVALID);
	t_load_fails("[a]\npath = /x\n[b]\nms = 1\n",
	    ":4: ms: '1' needs a unit (ms, s, m or h)", ERR_INVALID);
	t_load_fails("[a]\npath = /x\n[b]\nms = 2m\n",
	    ":4: ms: 2m out of range 100ms..1m", ERR_INVALID);
	t_load_fails("[a]\npath =\n", ":2: path: empty path", ERR_INVALID);
	t_load_fails("[a]\npath = /x\n[b]\nms = 1s\n\nms = 2s\n",
	    ":6: 'ms' given twice in [b] (first on line 4)", ERR_INVALID);
	/* The setter's code goes through. */
	t_load_fails("[a]\npath = /x\n[b]\nlist = ok\nlist = bad\n",
	    ":5: list: 'bad' is refused", ERR_DENIED);
	t_load_fails("[c]\nx = 1\n", ":2: unknown section [c]", ERR_INVALID);
	t_load_fails("[a]\nx = 1\n", ":2: unknown key 'x' in [a]",
	    ERR_INVALID);
	t_load_fails("x = 1\n", ":1: key 'x' is outside any section",
	    ERR_INVALID);
	t_load_fails("[a]\npath = /x\n[b\n",
	    ":3: syntax error: expected [section] or key = value",
	    ERR_INVALID);

	/* After the first error, no setter runs. */
	memset(&cfg, 0, sizeof(cfg));
	write_file(cfgpath, "[b]\nlist = bad\nlist = x\nlist = y\n");
	ck_assert_int_eq(conf_load(cfgpath, t_keys, T_NKEYS, &cfg, NULL,
	    &err), -1);
	ck_assert_int_eq(cfg.calls, 1);

	unlink(cfgpath);
	ck_assert_int_eq(conf_load(cfgpath, t_keys, T_NKEYS, &cfg, NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s: cannot open: %s", cfgpath,
	    strerror(ENOENT));
	ck_assert_str_eq(err.text, want);
}
END_TEST

/* A file named without a directory lives in the working directory. */
START_TEST(test_conf_load_cwd)
{
	struct t_cfg cfg;
	struct cerr err;
	char old[PATH_MAX], want[PATH_MAX + 64];

	write_file(cfgpath, "[a]\npath = f\n");
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(tmpdir), 0);
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_msg(conf_load("cohortd.conf", t_keys, T_NKEYS, &cfg, NULL,
	    &err) == 0, "%s", err.text);
	snprintf(want, sizeof(want), "%s/f", tmpdir);
	ck_assert_str_eq(cfg.path, want);
	free(cfg.path);
	cfg.path = NULL;
	ck_assert_msg(conf_load("./cohortd.conf", t_keys, T_NKEYS, &cfg, NULL,
	    &err) == 0, "%s", err.text);
	ck_assert_str_eq(cfg.path, want);
	free(cfg.path);
	ck_assert_int_eq(chdir(old), 0);
}
END_TEST

/* [queue NAME] sections: every key, file order, defaults. */
START_TEST(test_load_queues)
{
	struct ctl_config cfg;
	struct cerr err;
	const struct queue_def *a, *b, *t;

	write_file(cfgpath, REQUIRED
	    "[controller]\n"
	    "fair_share_half_life = 2d\n"
	    "starve_after = 6h\n"
	    "[queue research]\n"
	    "gpus = 16\n"
	    "gpus.H100 = 8\n"
	    "borrow_limit = none\n"
	    "[queue b]\n"
	    "parent = research\n"
	    "gpus = 4\n"
	    "lend_limit = 2\n"
	    "borrow_limit = 12\n"
	    "weight = 3\n"
	    "users = alice, bob  carol\n"
	    "admins = dave\n"
	    "max_gpus_per_job = 8\n"
	    "max_time = 2h\n"
	    "preempt = both\n"
	    "preempt_grace = 5m\n"
	    "min_runtime = 10m\n"
	    "[queue a]\n"
	    "parent = research\n"
	    "preempt = never\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.fair_share_half_life_ms, 2ULL * 86400 * 1000);
	ck_assert_uint_eq(cfg.starve_after_ms, 6ULL * 3600 * 1000);
	ck_assert_uint_eq(cfg.nqueues, 3);
	t = &cfg.queues[0];
	b = &cfg.queues[1];
	a = &cfg.queues[2];
	ck_assert_str_eq(t->name, "research");
	ck_assert_ptr_null(t->parent);
	ck_assert_uint_eq(t->gpus, 16);
	ck_assert_uint_eq(t->nmodels, 1);
	ck_assert_str_eq(t->models[0].model, "H100");
	ck_assert_uint_eq(t->models[0].gpus, 8);
	ck_assert_uint_eq(t->borrow_limit, SCHED_UNLIMITED);
	ck_assert_uint_eq(t->lend_limit, SCHED_UNLIMITED);
	ck_assert_uint_eq(t->weight, 1);
	ck_assert_int_eq(t->preempt, SCHED_PREEMPT_BORROWERS);
	ck_assert_str_eq(b->name, "b");
	ck_assert_str_eq(b->parent, "research");
	ck_assert_uint_eq(b->gpus, 4);
	ck_assert_uint_eq(b->lend_limit, 2);
	ck_assert_uint_eq(b->borrow_limit, 12);
	ck_assert_uint_eq(b->weight, 3);
	ck_assert_uint_eq(b->nusers, 3);
	ck_assert_str_eq(b->users[0], "alice");
	ck_assert_str_eq(b->users[1], "bob");
	ck_assert_str_eq(b->users[2], "carol");
	ck_assert_uint_eq(b->nadmins, 1);
	ck_assert_str_eq(b->admins[0], "dave");
	ck_assert_uint_eq(b->max_gpus_per_job, 8);
	ck_assert_uint_eq(b->max_time_s, 7200);
	ck_assert_int_eq(b->preempt, SCHED_PREEMPT_BOTH);
	ck_assert_uint_eq(b->preempt_grace_s, 300);
	ck_assert_uint_eq(b->min_runtime_s, 600);
	ck_assert_str_eq(a->name, "a");
	ck_assert_uint_eq(a->gpus, SCHED_UNLIMITED);
	ck_assert_uint_eq(a->nusers, 0);
	ck_assert_int_eq(a->preempt, SCHED_PREEMPT_NEVER);
	ck_assert_int_eq(cfg.queue_lines[0], 10);
	ck_assert_int_eq(cfg.queue_lines[1], 14);
	ck_assert_int_eq(cfg.queue_lines[2], 27);
	ctl_config_clear(&cfg);
	ck_assert_uint_eq(cfg.nqueues, 0);

	/* Without queues: the defaults; an empty section is a queue. */
	write_file(cfgpath, REQUIRED "[queue solo]\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.nqueues, 1);
	ck_assert_str_eq(cfg.queues[0].name, "solo");
	ck_assert_uint_eq(cfg.fair_share_half_life_ms,
	    QUEUES_DEFAULT_HALF_LIFE_MS);
	ck_assert_uint_eq(cfg.starve_after_ms, CTL_DEFAULT_STARVE_AFTER_MS);
	ck_assert_uint_eq(cfg.starve_min_gpus, CTL_DEFAULT_STARVE_MIN_GPUS);
	ctl_config_clear(&cfg);
	write_file(cfgpath, REQUIRED "[controller]\nstarve_after = 0\n"
	    "starve_min_gpus = 0\n");
	ck_assert_msg(ctl_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.starve_after_ms, 0);
	ck_assert_uint_eq(cfg.starve_min_gpus, 0);
	ck_assert_uint_eq(cfg.nqueues, 0);
	ctl_config_clear(&cfg);
}
END_TEST

START_TEST(test_load_queue_errors)
{
	/* Keys, each with its line. */
	load_fails(REQUIRED "[queue a]\nfoo = 1\n",
	    ":8: unknown key 'foo' in [queue a]");
	load_fails(REQUIRED "[queue a]\ngpus = 4\ngpus = 5\n",
	    ":9: 'gpus' given twice in [queue a] (first on line 8)");
	load_fails(REQUIRED "[queue a]\ngpus = x\n",
	    ":8: gpus: 'x' is not a number");
	load_fails(REQUIRED "[queue a]\ngpus = 2000000\n",
	    ":8: gpus: 2000000 out of range 0..1000000");
	load_fails(REQUIRED "[queue a]\ngpus.H100 = 1\ngpus.H100 = 2\n",
	    ":9: gpus.H100: given twice in [queue a]");
	load_fails(REQUIRED "[queue a]\nborrow_limit = lots\n",
	    ":8: borrow_limit: 'lots' is not a number");
	load_fails(REQUIRED "[queue a]\nlend_limit = -1\n",
	    ":8: lend_limit: '-1' is not a number");
	load_fails(REQUIRED "[queue a]\nweight = 0\n",
	    ":8: weight: 0 out of range 1..1000000");
	load_fails(REQUIRED "[queue a]\nusers = ,\n",
	    ":8: users: no name given (leave the key out for everybody)");
	load_fails(REQUIRED "[queue a]\nadmins = "
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	    ":8: admins: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is longer than "
	    "64 characters");
	load_fails(REQUIRED "[queue a]\nmax_gpus_per_job = many\n",
	    ":8: max_gpus_per_job: 'many' is not a number");
	load_fails(REQUIRED "[queue a]\nmax_time = 3\n",
	    ":8: max_time: '3' needs a unit (ms, s, m or h)");
	load_fails(REQUIRED "[queue a]\nmax_time = 1500ms\n",
	    ":8: max_time: '1500ms' is not a whole number of seconds");
	load_fails(REQUIRED "[queue a]\npreempt = always\n",
	    ":8: preempt: 'always' is not never, lower-priority, borrowers "
	    "or both");
	load_fails(REQUIRED "[queue a]\npreempt_grace = soon\n",
	    ":8: preempt_grace: 'soon' is not a duration (e.g. 500ms, 2s, "
	    "10m)");
	load_fails(REQUIRED "[queue a]\nmin_runtime = 400d\n",
	    ":8: min_runtime: 400d out of range 0s..8784h");
	load_fails(REQUIRED "[queue a]\nparent = a\n",
	    ":8: parent: queue a cannot be its own parent");
	load_fails(REQUIRED "[controller]\nfair_share_half_life = 1s\n",
	    ":8: fair_share_half_life: 1s out of range 1m..8784h");
	load_fails(REQUIRED "[controller]\nstarve_after = never\n",
	    ":8: starve_after: 'never' is not a duration (e.g. 500ms, 2s, "
	    "10m)");
	/* Sections. */
	load_fails(REQUIRED "[queue a]\n[queue b]\n[queue a]\ngpus = 1\n",
	    ":9: [queue a] given twice (first on line 7)");
	load_fails(REQUIRED "[queue]\ngpus = 1\n",
	    ":7: [queue]: a queue section needs a name: [queue NAME]");
	load_fails(REQUIRED "[queue a/b]\n",
	    ":7: [queue a/b]: a queue name is 1 to 64 of A-Z a-z 0-9 . _ -");
	/* The tree, at the header of the queue it is about. */
	load_fails(REQUIRED "[queue a]\ngpus = 4\n[queue b]\nparent = x\n",
	    ":9: queue b: parent 'x' is not a queue");
	load_fails(REQUIRED "[queue a]\nparent = b\n[queue b]\nparent = a\n",
	    ":7: queue a: its parents form a cycle");
	load_fails(REQUIRED "[queue a]\ngpus = 4\nlend_limit = 5\n",
	    ":7: queue a: lend_limit 5 is above its gpus 4");
	load_fails(REQUIRED "[queue a]\nlend_limit = 5\n",
	    ":7: queue a: lend_limit without gpus (it has nothing of its own "
	    "to lend)");
	load_fails(REQUIRED "[queue a]\nborrow_limit = 5\n",
	    ":7: queue a: borrow_limit without gpus (an unlimited queue never "
	    "borrows)");
	load_fails(REQUIRED "[queue p]\ngpus = 4\n[queue c]\nparent = p\n"
	    "gpus = 5\n",
	    ":7: queue p: its children's gpus (5) are more than its own (4)");
	load_fails(REQUIRED "[queue a]\ngpus = 4\ngpus.H100 = 6\n",
	    ":7: queue a: gpus.H100 = 6 is above its gpus 4");
	load_fails(REQUIRED "[queue a]\ngpus = 4\nborrow_limit = 0\n"
	    "max_gpus_per_job = 8\n",
	    ":7: queue a: max_gpus_per_job 8 can never fit in gpus 4 + "
	    "borrow_limit 0");
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *tc;

	tc = tcase_create("values");
	tcase_add_test(tc, test_hostport_good);
	tcase_add_test(tc, test_hostport_bad);
	tcase_add_test(tc, test_hostport_long);
	tcase_add_test(tc, test_uint);
	tcase_add_test(tc, test_size);
	tcase_add_test(tc, test_bool);
	tcase_add_test(tc, test_duration);
	tcase_add_test(tc, test_set_str);
	tcase_add_test(tc, test_duration_ms);
	tcase_add_test(tc, test_abs_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("controller");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_load_good);
	tcase_add_test(tc, test_load_defaults);
	tcase_add_test(tc, test_load_relative_path);
	tcase_add_test(tc, test_load_admission);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_load_missing);
	tcase_add_test(tc, test_load_long_line);
	tcase_add_test(tc, test_load_no_file);
	tcase_add_test(tc, test_load_durations);
	tcase_add_test(tc, test_load_queue_policy);
	tcase_add_test(tc, test_load_nodes);
	tcase_add_test(tc, test_load_queues);
	tcase_add_test(tc, test_load_queue_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("loader");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_conf_load);
	tcase_add_test(tc, test_conf_load_errors);
	tcase_add_test(tc, test_conf_load_cwd);
	tcase_add_test(tc, test_load_tenants);
	tcase_add_test(tc, test_load_retention);
	tcase_add_test(tc, test_load_log_level);
	tcase_add_test(tc, test_load_replication);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(conf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
