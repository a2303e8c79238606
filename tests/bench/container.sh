#!/bin/bash
# Container benchmark (not part of make check; root, runc, umoci,
# mksquashfs, busybox-static):
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/container.sh [SIZE_MB [RUNS [NODES]]]
#
# Builds an image of busybox and SIZE_MB (default 100) of random bytes,
# as an OCI layout and as a squashfs, on a cohort-local cluster of NODES
# nodes (default 1); every job is a gang over all of them. Prints:
#  - the time each node's agent took to prepare each image for its first
#    job (unpacked) and for a second job (cached), from its log, and the
#    job's ImagePull phase (the controller's "preparing image" event to
#    its "RUNNING" line), as the nodes prepare in parallel;
#  - for a gang of `true`, RUNS times (default 5) without a container
#    and in the (cached) squashfs image: submitted -> RUNNING (the
#    controller's log) and rank 0's started -> ended (node01's log), the
#    medians, and the extra each costs in the image;
#  - the cache at its cap: node01 restarted with a cache_size under two
#    small images, then three images used in turn (an entry used in the
#    last minute is never evicted, so the third comes a minute later):
#    the cache's size and entries after each.
# Figures are printed, never compared with anything.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_root

SIZE_MB=${1:-100}
RUNS=${2:-5}
NODES=${3:-1}
for v in "$SIZE_MB" "$RUNS" "$NODES"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "SIZE_MB, RUNS and NODES must be positive integers, not '$v'"
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
cluster_up "$C" --nodes "$NODES" --gpus 1
for ((n = 1; n <= NODES; n++)); do
	wait_node 30 "$(printf 'node%02d' "$n")" "n['state'] == 'UP'"
done
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
	id=$(job_submit --workdir "$W" --max-restarts 0 --nodes "$NODES" \
		--gpus-per-node 1 "$@" -- true)
	wait_state 600 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
		fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
	echo "$id"
}
# prep_ms ID: each agent's "image ... ready (...) in N ms" for job ID,
# the slowest node's, and the controller's ImagePull phase.
prep_ms() {
	local n f ms a b
	for ((n = 1; n <= NODES; n++)); do
		f=$C/$(printf 'node%02d' "$n").log
		grep -o "job $1: image ready ([a-z]*) in [0-9]* ms, ahead of the launch" "$f" |
			sed 's/.* ready (\([a-z]*\)) in \([0-9]*\) ms.*/\2 \1/'
	done >"$T/prep"
	ms=$(sort -n "$T/prep" | tail -1)
	a=$(grep -m1 "job $1: .*preparing image\|job $1: launching on" "$C/cohortd.log" | cut -d' ' -f1)
	b=$(grep -m1 "job $1: RUNNING on" "$C/cohortd.log" | cut -d' ' -f1)
	echo "$(wc -l <"$T/prep") node(s), slowest ${ms% *} ms (${ms#* }), ImagePull -> RUNNING $(($(stamp_ms "$b") - $(stamp_ms "$a"))) ms"
}
# gang_ms ID: the controller's submitted -> RUNNING.
gang_ms() {
	local a b
	a=$(grep -m1 "job $1: submitted by" "$C/cohortd.log" | cut -d' ' -f1)
	b=$(grep -m1 "job $1: RUNNING on" "$C/cohortd.log" | cut -d' ' -f1)
	echo $(($(stamp_ms "$b") - $(stamp_ms "$a")))
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
: >"$T/gplain"
: >"$T/gctr"
for ((r = 1; r <= RUNS; r++)); do
	id=$(run_job)
	task_ms "$id" >>"$T/plain"
	gang_ms "$id" >>"$T/gplain"
	id=$(run_job --container-image "$T/img.sqsh")
	task_ms "$id" >>"$T/ctr"
	gang_ms "$id" >>"$T/gctr"
done
extra() { awk -v a="$1" -v b="$2" 'BEGIN { print a - b }'; }
p=$(median <"$T/gplain")
c=$(median <"$T/gctr")
echo "$NODES-node gang of true, submitted -> RUNNING, median of $RUNS: no container ${p} ms, in the (cached) image ${c} ms, extra $(extra "$c" "$p") ms"
p=$(median <"$T/plain")
c=$(median <"$T/ctr")
echo "$NODES-node gang of true, rank 0 started -> ended, median of $RUNS: no container ${p} ms, in the image ${c} ms, extra $(extra "$c" "$p") ms"

### The cache at its cap: three 8 MB images, room for one and a half.
small() {
	local d=$T/small-$1
	mkdir -p "$d/bin" && cp "$(command -v busybox)" "$d/bin/busybox" &&
		ln -s busybox "$d/bin/true" &&
		head -c $((8 * 1024 * 1024)) /dev/urandom >"$d/blob" &&
		mksquashfs "$d" "$T/small-$1.sqsh" -quiet -noappend -all-root >/dev/null ||
		fail "cannot build small image $1"
}
for i in a b c; do small "$i"; done
printf '\n[container]\ncache_size = 12M\n' >>"$C/node01.conf"
cohort-local kill "$C" node01 >/dev/null 2>&1 && cohort-local start "$C" node01 >/dev/null 2>&1 ||
	fail "cannot restart node01 with a small cache"
wait_node 30 node01 "n['state'] == 'UP'"
NODES=1
# The cache's directory, from the agent's "(ENTRY)" of an unpack.
cache_of() {
	dirname "$(grep -o "small-$1.sqsh: unpacked for uid [0-9]* in [0-9]* ms ([^)]*)" "$C/node01.log" | tail -1 | sed 's/.*(\(.*\))$/\1/')"
}
entries() { echo "$(du -sk "$1" | cut -f1) KiB in $(find "$1" -mindepth 1 -maxdepth 1 -type d | wc -l) entries"; }
run_job --nodelist node01 --container-image "$T/small-a.sqsh" >/dev/null
run_job --nodelist node01 --container-image "$T/small-b.sqsh" >/dev/null
cache=$(cache_of b)
echo "cache at its cap (12 MiB, images of ~9 MiB): a, then b: $(entries "$cache")"
sleep 61
run_job --nodelist node01 --container-image "$T/small-a.sqsh" >/dev/null
run_job --nodelist node01 --container-image "$T/small-c.sqsh" >/dev/null
echo "cache at its cap: a used again (cached), then c a minute later: $(entries "$cache")"
