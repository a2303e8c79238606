#!/bin/bash
# A real Prometheus server scrapes the cluster: prometheus
# (Debian's package) with scrape_interval 1s on the controller's http
# port; once it has scraped (bounded wait), its HTTP API answers
#  - up{job="cohort"} = 1 (the exposition parsed, no scrape error);
#  - cohort_jobs{state="RUNNING"} = 1 and sum(cohort_gpus) = 4, as
#    `cohort jobs` and `cohort nodes` say;
#  - histogram_quantile(0.9, rate(cohort_rpc_request_seconds_bucket
#    {type="list_jobs"}[1m])) is a number within the buckets (0 to 10 s),
#    after a few cohort jobs between scrapes; and the pass's p50 too.
# With COHORT_T701_SAMPLE=FILE set, the answers and a sample of the
# exposition are written to FILE (for people reading about it).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
command -v prometheus >/dev/null 2>&1 || {
	echo "SKIP: prometheus not found (Debian package prometheus; scripts/deps installs it)"
	exit 77
}

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)
hp=${COHORT_HTTP#http://}

run=$(job_submit --name t701 --gpus-per-node 2 --workdir "$W" -- \
	sh -c "$(gate go)")
wait_state 20 "$run" RUNNING

# A free port for Prometheus' own web listener (a race with other
# programs, but a short one).
port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cohort
    static_configs:
      - targets: ['$hp']
EOC
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$port" >"$T/prometheus.out" 2>&1 &
track_pid $!
P=http://127.0.0.1:$port

# query EXPR: the API's answer to an instant query, into $T/q.json; 0
# when it succeeded with at least one sample.
query() {
	curl -fsS -G --data-urlencode "query=$1" "$P/api/v1/query" >"$T/q.json" 2>/dev/null &&
		"$PYTHON" -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["status"] == "success" and d["data"]["result"] else 1)' "$T/q.json"
}
# value EXPR: the first sample's value.
value() {
	query "$1" || fail "Prometheus: no answer to $1: $(cat "$T/q.json" 2>/dev/null) $(tail -n 5 "$T/prometheus.out")"
	json_get "$T/q.json" 'd["data"]["result"][0]["value"][1]'
}
scraped() {
	query 'up{job="cohort"} == 1'
}
wait_for 20 scraped || fail "Prometheus did not scrape the controller within 20 s: $(cat "$T/q.json" 2>/dev/null; tail -n 5 "$T/prometheus.out")"
[ "$(value 'up{job="cohort"}')" = 1 ] || fail "up is not 1"
# Every scrape succeeds (a sample the parser refused would fail it).
[ "$(value 'scrape_samples_scraped{job="cohort"}')" -gt 100 ] ||
	fail "Prometheus took only $(value 'scrape_samples_scraped{job="cohort"}') samples from a scrape"

# What the cluster says, from Prometheus.
expect_exit 0 cohort jobs --json
running=$(json_get "$OUT" 'len([j for j in d["jobs"] if j["state"] == "RUNNING"])')
[ "$(value 'cohort_jobs{state="RUNNING"}')" = "$running" ] ||
	fail "Prometheus has cohort_jobs{state=\"RUNNING\"} $(value 'cohort_jobs{state="RUNNING"}'), cohort jobs $running"
[ "$(value 'sum(cohort_gpus)')" = 4 ] || fail "sum(cohort_gpus) is $(value 'sum(cohort_gpus)'), not 4"
[ "$(value 'cohort_gpus{state="allocated"}')" = 2 ] ||
	fail "cohort_gpus{state=\"allocated\"} is $(value 'cohort_gpus{state="allocated"}'), not 2"

# Requests between scrapes, so that the rate of the buckets is not 0.
q90='histogram_quantile(0.9, sum by (le) (rate(cohort_rpc_request_seconds_bucket{type="list_jobs"}[1m])))'
quantile_ready() {
	cohort jobs >/dev/null 2>&1
	query "$q90" && json_get "$T/q.json" 'd["data"]["result"][0]["value"][1]' |
		grep -Eq '^[0-9.]+(e-?[0-9]+)?$'
}
wait_for 20 quantile_ready || fail "no list_jobs p90 within 20 s: $(cat "$T/q.json")"
p90=$(value "$q90")
"$PYTHON" -c 'import sys; v = float(sys.argv[1]); sys.exit(0 if 0 < v <= 10 else 1)' "$p90" ||
	fail "list_jobs p90 is $p90 s, not within the buckets"
qpass='histogram_quantile(0.5, rate(cohort_sched_pass_seconds_bucket[1m]))'
pass50=$(value "$qpass")
log "Prometheus: list_jobs p90 $p90 s, pass p50 $pass50 s"

if [ -n "${COHORT_T701_SAMPLE:-}" ]; then
	{
		echo "# t701: Prometheus $(prometheus --version 2>&1 | head -n 1)"
		echo "# scraping cohortd at $hp every 1s; 2 nodes x 2 GPUs, one job RUNNING"
		for e in 'up{job="cohort"}' 'cohort_jobs' 'cohort_gpus' "$q90" "$qpass" \
			'sum by (type) (rate(cohort_rpc_request_seconds_count[1m]))'; do
			query "$e" || true
			echo "## query: $e"
			"$PYTHON" -c 'import json,sys
for r in json.load(open(sys.argv[1]))["data"]["result"]:
    print(r["metric"], r["value"][1])' "$T/q.json"
		done
		echo "## a sample of the exposition (GET /metrics)"
		curl -fsS "$COHORT_HTTP/metrics" | grep -E '^(# (HELP|TYPE) )?cohort_(jobs|gpus|nodes|sched_pass_seconds|rpc_request_seconds_(bucket|sum|count)\{type="submit"|queue_)' | awk "NR <= 80"
	} >"$COHORT_T701_SAMPLE"
fi
touch "$W/go"
wait_state 20 "$run" COMPLETED

# Every expression of the Grafana dashboard is valid PromQL to this
# Prometheus, with Grafana's variables filled in as Grafana would.
"$PYTHON" - "$top_srcdir/etc/grafana-cohort.json" >"$T/exprs" <<'EOP'
import json, sys
out = []
def walk(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "expr" and isinstance(v, str):
                out.append(v)
            else:
                walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(json.load(open(sys.argv[1])))
for e in out:
    print(e.replace("$__rate_interval", "1m").replace("$instance", ".*"))
EOP
[ -s "$T/exprs" ] || fail "no expressions in etc/grafana-cohort.json"
while IFS= read -r e; do
	curl -sS -G --data-urlencode "query=$e" "$P/api/v1/query" >"$T/q.json" ||
		fail "Prometheus: no answer to $e"
	[ "$(json_get "$T/q.json" 'd["status"]')" = success ] ||
		fail "etc/grafana-cohort.json: Prometheus refuses '$e': $(cat "$T/q.json")"
done <"$T/exprs"
log "Prometheus evaluates all $(wc -l <"$T/exprs") expressions of etc/grafana-cohort.json"
