#!/bin/bash
# Container benchmark (not part of make check; root, runc, umoci,
# mksquashfs, busybox-static):
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/container.sh [SIZE_MB [RUNS]]
#
# Builds an image of busybox and SIZE_MB (default 100) of random bytes,
# as an OCI layout and as a squashfs, on a cohort-local cluster of one
# node. Prints:
#  - the time the agent took to prepare each image for its first job
#    (unpacked) and for a second job (cached), from its log;
#  - the time from "rank 0: started" to "task ended" in the agent's log
#    of a 1-node job of `true`, RUNS times (default 5) without a
#    container and in the (cached) squashfs image: the medians, and the
#    difference, the extra start latency a container adds.
# Figures are printed, never compared with anything.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_root

SIZE_MB=${1:-100}
RUNS=${2:-5}
for v in "$SIZE_MB" "$RUNS"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "SIZE_MB and RUNS must be positive integers, not '$v'"
done
for c in runc umoci mksquashfs busybox; do
	command -v "$c" >/dev/null || fail "no $c here (scripts/deps installs it)"
done

R=$T/rootfs
mkdir -p "$R/bin" "$R/tmp" && cp "$(command -v busybox)" "$R/bin/busybox" || fail "cannot make $R"
for c in sh true; do ln -s busybox "$R/bin/$c"; done
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$R/blob" || fail "cannot write the blob"
umoci init --layout "$T/oci" >/dev/null 2>&1 && umoci new --image "$T/oci:v1" >/dev/null 2>&1 &&
	umoci insert --image "$T/oci:v1" "$R" / >/dev/null 2>&1 || fail "umoci failed"
chmod -R a+rX "$T/oci"
mksquashfs "$R" "$T/img.sqsh" -quiet -noappend -all-root >/dev/null || fail "mksquashfs failed"
echo "# image: busybox + ${SIZE_MB} MB; OCI layout $(du -sm "$T/oci" | cut -f1) MB, squashfs $(du -sm "$T/img.sqsh" | cut -f1) MB"

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 1
wait_node 20 node01 "n['state'] == 'UP'"
W=$(world_dir out)

stamp_ms() {
	"$PYTHON" -c '
import datetime, sys
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ")
print(int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000))' "$1"
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
run_job() {
	local id
	id=$(job_submit --workdir "$W" --max-restarts 0 "$@" -- true)
	wait_state 600 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
		fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
	echo "$id"
}
# prep_ms ID: the agent's "image ... ready (...) in N ms" for job ID.
prep_ms() {
	grep -o "job $1: image .* ready ([a-z]*) in [0-9]* ms" "$C/node01.log" |
		sed 's/.* ready (\([a-z]*\)) in \([0-9]*\) ms/\2 ms (\1)/'
}
# task_ms ID: rank 0's started -> ended, from the agent's log.
task_ms() {
	local a b
	a=$(grep -m1 "job $1 rank 0: started" "$C/node01.log" | cut -d' ' -f1)
	b=$(grep -m1 "job $1 rank 0: task ended" "$C/node01.log" | cut -d' ' -f1)
	echo $(($(stamp_ms "$b") - $(stamp_ms "$a")))
}

for img in "$T/img.sqsh" "oci:$T/oci:v1"; do
	first=$(run_job --container-image "$img")
	again=$(run_job --container-image "$img")
	echo "prepare $img: first $(prep_ms "$first"), again $(prep_ms "$again")"
done

: >"$T/plain"
: >"$T/ctr"
for ((r = 1; r <= RUNS; r++)); do
	id=$(run_job)
	task_ms "$id" >>"$T/plain"
	id=$(run_job --container-image "$T/img.sqsh")
	task_ms "$id" >>"$T/ctr"
done
p=$(median <"$T/plain")
c=$(median <"$T/ctr")
echo "1-node job of true, started -> ended, median of $RUNS: no container ${p} ms, in the image ${c} ms, extra $(awk -v a="$c" -v b="$p" 'BEGIN { print a - b }') ms"
