#!/bin/bash
# Jobs in container images (root only; the images are built here, from
# busybox-static, with umoci and mksquashfs):
#  1. a 2-node job in an OCI layout sees the image's files and not the
#     host's, runs as the job's user, has its rank environment, and
#     writes through --container-mounts to a host directory; the image
#     and its manifest digest are shown by cohort show;
#  2. a job in the squashfs of the same tree runs, read only unless
#     --container-writable, and a second job of the same image finds it
#     cached; both show the file's sha256 as the image's digest;
#  3. a missing image fails the job at once, naming the image, and is
#     not retried;
#  4. an image the job's user cannot read fails the job, naming it, even
#     when the node has it cached from an earlier job;
#  5. requeue's checkpoint signal and SIGTERM reach the container's
#     process, the job starts in its image again and resumes from the
#     checkpoint it wrote in a mounted directory, cancel's SIGTERM
#     reaches it too, and the container is gone afterwards;
#  6. srun's Pyxis options run a batch job's steps in an image, a named
#     container keeps a step's file for the next step, and a step in a
#     missing image fails, naming it;
#  7. a job waits PENDING, "ImagePull: 1 of 2 nodes ready", no rank
#     started, while one node still unpacks its image (held on a FIFO
#     the test fills), and `cohort events` has an image event per node;
#  8. a job in an image whose node's agent is killed mid-run restarts in
#     the image on the other node from its checkpoint, and the returning
#     agent stops the old attempt's container;
#  9. with a short [container] prepare_timeout on node02, an unpack held
#     on a FIFO is killed past it: the job backs off and tries again,
#     its reason and a start-failed event naming the image and the
#     timeout;
# 10. registry images (docker://, offline): a bad form is refused at
#     submit; a registry the node's [container] registries does not
#     allow fails the job at once, naming the registry and the setting;
#     an allowed one without skopeo fails at once naming skopeo, or,
#     where skopeo is installed, an import that cannot reach its
#     registry backs off (no real pull is made);
# 11. node01 again with a CDI spec (cdi_dirs): a GPU job in an image sees
#     the spec's "driver library" (a file the test writes) read only at
#     its container path, and the spec's env for its GPU; the spec's hook
#     is not run.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the jobs this test makes fail.
expect_log_error 'warning: container image .*(missing|private|shared)\.sqsh: cannot read'
expect_log_error 'warning: job [0-9]+: cannot read the container image'
expect_log_error 'warning: job [0-9]+: start failed: rank 0 on node[0-9]+: cannot read the container image'
# Section 8's node goes DOWN, its job restarts.
expect_log_error 'cohortd: warning: node node[0-9]+: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*went DOWN \(no heartbeat'
# Sections 9 and 10: preparations killed past prepare_timeout, registry
# images refused or not importable here.
expect_log_error 'cohort-agent: warning: (job [0-9]+|container image [^ ]+): .*prepare_timeout \([0-9]+ s\)'
expect_log_error 'warning: job [0-9]+: start failed: .*(prepare_timeout|cannot import the container image|cannot prepare the container image .docker://)'
expect_log_error 'warning: (job [0-9]+: )?(container image docker://.*: )?cannot (import|prepare) the container image .docker://'
# Section 11: the spec's hook is skipped, saying so.
expect_log_error 'cohort-agent: warning: CDI spec .*: its 1 hooks are not run'
need_root

for c in runc umoci mksquashfs busybox; do
	command -v "$c" >/dev/null || { echo "SKIP: no $c here (scripts/deps installs it)"; exit 77; }
done
BUSYBOX=$(command -v busybox)
ldd "$BUSYBOX" >/dev/null 2>&1 && { echo "SKIP: $BUSYBOX is not static (busybox-static)"; exit 77; }
getent passwd nobody >/dev/null || { echo "SKIP: no user 'nobody' here"; exit 77; }
NOBODY_UID=$(id -u nobody)

# The image: busybox and a file only it has.
R=$T/rootfs
mkdir -p "$R/bin" "$R/etc" "$R/tmp" && chmod 1777 "$R/tmp" &&
	cp "$BUSYBOX" "$R/bin/busybox" || fail "cannot make $R"
for c in sh id cat ls echo env sleep test touch mkdir rm stat true; do
	ln -s busybox "$R/bin/$c"
done
echo cohort-test-image >"$R/etc/only-in-image"
umoci init --layout "$T/oci" >"$T/umoci.out" 2>&1 &&
	umoci new --image "$T/oci:v1" >>"$T/umoci.out" 2>&1 &&
	umoci insert --image "$T/oci:v1" "$R" / >>"$T/umoci.out" 2>&1 ||
	fail "umoci could not build the image: $(cat "$T/umoci.out")"
# umoci writes index.json for root alone: shared as a site shares images.
chmod -R a+rX "$T/oci"
mksquashfs "$R" "$T/img.sqsh" -quiet -noappend -all-root >"$T/mksq.out" 2>&1 ||
	fail "mksquashfs failed: $(cat "$T/mksq.out")"

# runc must be able to run a container here at all; else this machine
# cannot test this (a container without the privileges, say).
mkdir -p "$T/probe" && cp -a "$R" "$T/probe/rootfs" &&
	cat >"$T/probe/config.json" <<EOF
{"ociVersion":"1.0.2","process":{"user":{"uid":0,"gid":0},"args":["/bin/true"],"cwd":"/"},
 "root":{"path":"rootfs","readonly":true},
 "mounts":[{"destination":"/proc","type":"proc","source":"proc"}],
 "linux":{"namespaces":[{"type":"mount"}]}}
EOF
if ! runc --root "$T/probe-state" run --bundle "$T/probe" "cohort-probe-$$" >"$T/probe.out" 2>&1; then
	echo "SKIP: runc cannot run a container here: $(tail -1 "$T/probe.out")"
	exit 77
fi

# Section 8 kills an agent: its node is DOWN after 5 s without heartbeats.
export COHORT_LOCAL_NODE_TIMEOUT=5s
C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir out)
SPOOL1=$C/$(sed -n "s/^spool = //p" "$C/node01.conf")
[ -d "$SPOOL1" ] || fail "no spool in $C/node01.conf"

### 1. Two nodes in the OCI image.
id=$(job_submit --name ctr-oci -N 2 --workdir "$W" --max-restarts 0 \
	--container-image "oci:$T/oci:v1" --container-mounts "$W:/out" -- \
	sh -c 'id -u >/out/uid.$RANK; cat /etc/only-in-image >/out/img.$RANK;
	if test -e /etc/debian_version; then echo host; else echo image; fi >/out/root.$RANK;
	env >/out/env.$RANK; echo $PWD >/out/pwd.$RANK;
	if touch /tmp/probe 2>/dev/null; then echo rw; else echo ro; fi >/out/rw.$RANK')
wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(json_get "$T/job-$id.json" 'd["container"]["image"]')" = "oci:$T/oci:v1" ] ||
	fail "cohort show --json does not show the image: $(cat "$T/job-$id.json")"
cohort show "$id" >"$T/show.txt" 2>&1 || fail "cohort show $id failed"
grep -q "Container image.*oci:$T/oci:v1 (read only)" "$T/show.txt" ||
	fail "cohort show does not show the image: $(cat "$T/show.txt")"
# And what it is known by: the manifest digest of its tag.
OCI_DIGEST=$("$PYTHON" -c 'import json,sys
i = json.load(open(sys.argv[1] + "/index.json"))
print([m["digest"] for m in i["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == "v1"][0])' "$T/oci") ||
	fail "cannot read the digest of $T/oci:v1"
[ "$(json_get "$T/job-$id.json" 'd["image_digest"]')" = "$OCI_DIGEST" ] ||
	fail "cohort show --json has image_digest $(json_get "$T/job-$id.json" 'd["image_digest"]'), not $OCI_DIGEST"
grep -q "Image digest.*$OCI_DIGEST" "$T/show.txt" ||
	fail "cohort show does not show the image's digest: $(cat "$T/show.txt")"
for r in 0 1; do
	[ "$(cat "$W/uid.$r" 2>/dev/null)" = "$NOBODY_UID" ] ||
		fail "rank $r ran as uid '$(cat "$W/uid.$r" 2>/dev/null)', not nobody's ($NOBODY_UID)"
	[ "$(cat "$W/img.$r")" = cohort-test-image ] || fail "rank $r did not see the image's file"
	[ "$(cat "$W/root.$r")" = image ] || fail "rank $r saw the host's /etc/debian_version"
	grep -qx "RANK=$r" "$W/env.$r" || fail "rank $r has no RANK=$r: $(cat "$W/env.$r")"
	grep -qx "WORLD_SIZE=2" "$W/env.$r" || fail "rank $r has no WORLD_SIZE=2"
	grep -qx "COHORT_JOB_ID=$id" "$W/env.$r" || fail "rank $r has no COHORT_JOB_ID=$id"
	[ "$(cat "$W/rw.$r")" = ro ] || fail "rank $r could write the image's root without --container-writable"
done
[ "$(stat -c %u "$W/uid.0")" = "$NOBODY_UID" ] || fail "the mount's files are not the job user's"
# Its cgroups are gone with it, v1 hierarchies of a hybrid layout too.
CGBASE=$(grep -m1 -o 'a cgroup per job under [^;]*' "$C/node01.log" | sed 's/.* under //')
if [ -n "$CGBASE" ]; then
	_cg_gone() { ! ls -d /sys/fs/cgroup/*/"${CGBASE#/sys/fs/cgroup/unified/}"/job-"$id".* \
		/sys/fs/cgroup/*/"${CGBASE#/sys/fs/cgroup/}"/job-"$id".* >/dev/null 2>&1; }
	wait_for 30 _cg_gone || fail "job $id left cgroups: $(ls -d /sys/fs/cgroup/*/*/job-"$id".* 2>/dev/null)"
fi

### 2. The squashfs image, writable, twice: the second finds it cached.
for n in 1 2; do
	id=$(job_submit --name "ctr-sqsh$n" --workdir "$W" --max-restarts 0 \
		--container-image "$T/img.sqsh" --container-writable \
		--container-mounts "$W:/out:rw" --container-workdir /tmp -- \
		sh -c "cat /etc/only-in-image >/out/sq$n; echo \$PWD >/out/sqpwd$n; mkdir -p /tmp/new && echo rw >/out/sqrw$n")
	wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
		fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
	[ "$(cat "$W/sq$n")" = cohort-test-image ] || fail "job $id did not see the squashfs image's file"
	[ "$(cat "$W/sqpwd$n")" = /tmp ] || fail "job $id did not start in --container-workdir /tmp"
	[ "$(cat "$W/sqrw$n" 2>/dev/null)" = rw ] || fail "job $id could not write its --container-writable root"
	# The squashfs file's sha256, first unpacked and then cached.
	[ "$(json_get "$T/job-$id.json" 'd["image_digest"]')" = "sha256:$(sha256sum "$T/img.sqsh" | cut -d' ' -f1)" ] ||
		fail "job $id's image_digest is $(json_get "$T/job-$id.json" 'd["image_digest"]'), not the squashfs file's sha256"
done
grep -Eq "container image $T/img.sqsh: cached" "$C"/node0*.log ||
	fail "the second squashfs job did not find the image cached"
# The cache is root's alone: an image's files are reached through a
# container, after the read check, never by their path.
[ "$(stat -c %a:%u "$SPOOL1/images")" = 700:0 ] ||
	fail "the image cache $SPOOL1/images is $(stat -c %a:%u "$SPOOL1/images"), not 700:0"
# A writable container writes its own layer, never the shared cache.
! ls -d "$SPOOL1"/images/*/rootfs/tmp/new >/dev/null 2>&1 || fail "a job's write reached the image cache"

### 3. A missing image: FAILED at once, named, not retried.
id=$(job_submit --name ctr-missing --workdir "$W" --max-restarts 3 \
	--container-image "$T/missing.sqsh" -- true)
wait_state 60 "$id" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] || fail "job $id with a missing image did not fail"
json_get "$T/job-$id.json" 'd["reason"]' | grep -q "missing.sqsh" ||
	fail "the reason does not name the image: $(json_get "$T/job-$id.json" 'd["reason"]')"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 0 ] ||
	fail "job $id was retried ($(json_get "$T/job-$id.json" 'd["restarts"]') restarts)"

### 4. Another user's image, cached or not.
mkdir -p "$T/private" && chmod 700 "$T/private" && cp "$T/img.sqsh" "$T/private/private.sqsh" ||
	fail "cannot make a private image"
id=$(job_submit --name ctr-private --workdir "$W" --max-restarts 3 \
	--container-image "$T/private/private.sqsh" -- true)
wait_state 60 "$id" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] || fail "job $id ran in an image its user cannot read"
json_get "$T/job-$id.json" 'd["reason"]' | grep -q "private.sqsh.*Permission denied" ||
	fail "the reason does not say why: $(json_get "$T/job-$id.json" 'd["reason"]')"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 0 ] || fail "job $id was retried"
# Cached by a job that could read it, then closed to the user.
cp "$T/img.sqsh" "$T/shared.sqsh" && chmod 644 "$T/shared.sqsh"
id=$(job_submit --name ctr-shared --workdir "$W" --max-restarts 0 \
	--container-image "$T/shared.sqsh" -- true)
wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
chmod 600 "$T/shared.sqsh"
id=$(job_submit --name ctr-shared2 --workdir "$W" --max-restarts 3 \
	--container-image "$T/shared.sqsh" -- touch "$W/shared2-ran")
wait_state 60 "$id" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] ||
	fail "job $id used a cached image its user can no longer read"
[ ! -e "$W/shared2-ran" ] || fail "job $id ran"

### 5. Signals reach the process in the container; the checkpoint
### contract works inside (LATEST in a mounted directory).
CK=$(world_dir ckpt)
id=$(job_submit --name ctr-sig --workdir "$W" --max-restarts 0 --checkpoint-dir "$CK" \
	--container-image "oci:$T/oci:v1" --container-mounts "$W:/out,$CK" -- \
	sh -c 'ck() { mkdir -p "$COHORT_CHECKPOINT_DIR/step-1" &&
		echo "1 $COHORT_CHECKPOINT_DIR/step-1" >"$COHORT_CHECKPOINT_DIR/LATEST.tmp" &&
		mv "$COHORT_CHECKPOINT_DIR/LATEST.tmp" "$COHORT_CHECKPOINT_DIR/LATEST"; }
	trap "echo usr1 >>/out/sig; ck" USR1; trap "echo term >>/out/sig; exit 0" TERM;
	echo "$COHORT_RESUME_CHECKPOINT" >/out/resume; echo $$ >/out/sig.ready;
	while :; do sleep 0.1; done')
wait_for 60 test -s "$W/sig.ready" || fail "job $id did not start in its image: $(job_show "$id"; cat "$T/job-$id.json")"
# requeue: the checkpoint signal, then SIGTERM, then the job again.
expect_exit 0 cohort requeue "$id"
wait_for 60 grep -qx usr1 "$W/sig" || fail "the checkpoint signal (USR1) did not reach the container's process"
wait_for 60 grep -qx term "$W/sig" || fail "SIGTERM did not reach the container's process"
rm -f "$W/sig.ready"
wait_for 120 test -s "$W/sig.ready" || fail "job $id did not start in its image again after the requeue"
[ "$(cat "$W/resume")" = "$CK/step-1" ] || fail "the restart in the image did not resume from $CK/step-1: '$(cat "$W/resume")'"
expect_exit 0 cohort cancel "$id"
wait_state 60 "$id" CANCELLED FAILED COMPLETED
_two_terms() { [ "$(grep -cx term "$W/sig")" = 2 ]; }
wait_for 30 _two_terms || fail "cancel's SIGTERM did not reach the container's process: $(cat "$W/sig")"
_ctr_gone() { ! pgrep -f "cohort-$id\." >/dev/null && ! pgrep -u nobody -f 'echo usr1' >/dev/null; }
wait_for 30 _ctr_gone || fail "the container of job $id outlived it: $(pgrep -af "cohort-$id\.")"
### 6. A batch script on the node runs steps in images (srun's Pyxis
### options); a named container keeps what one step wrote for the next.
S=$(world_dir steps)
job_config "$S"
cat >"$S/steps.sh" <<SH
#!/bin/sh
set -u
srun --container-image=oci:$T/oci:v1 --container-name=setup --container-writable \
	sh -c 'echo made >/tmp/from-step0 && id -u'
srun --container-image=oci:$T/oci:v1 --container-name=setup --container-mounts=$S:/out \
	sh -c 'cat /tmp/from-step0 >/out/named'
srun --container-image=oci:$T/oci:v1 --container-mounts=$S:/out \
	sh -c 'cat /tmp/from-step0 >/out/unnamed 2>/dev/null || echo none >/out/unnamed'
srun --container-image=$T/missing.sqsh true
echo "MISSING_RC=\$?"
SH
chmod 755 "$S/steps.sh"
expect_exit 0 sbatch --parsable --export=XDG_CONFIG_HOME="$JOB_CFG" -o "$S/out.%j" \
	-D "$S" "$S/steps.sh"
id=$(cat "$OUT")
wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "batch job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]'): $(cat "$S/out.$id")"
grep -qx "$NOBODY_UID" "$S/out.$id" || fail "step 0 did not run as the job's user: $(cat "$S/out.$id")"
[ "$(cat "$S/named" 2>/dev/null)" = made ] || fail "the named container did not keep step 0's file: $(cat "$S/out.$id")"
[ "$(cat "$S/unnamed")" = none ] || fail "an unnamed container saw step 0's file"
grep -q "MISSING_RC=[1-9]" "$S/out.$id" || fail "a step in a missing image did not fail: $(cat "$S/out.$id")"
grep -q "missing.sqsh" "$S/out.$id" || fail "srun did not name the missing image: $(cat "$S/out.$id")"

### 7. A job waits as ImagePull until every node has its image: node01
### has it cached; node02's unpack reads a layer that is a FIFO, held
### until the test writes the layer into it.
cp -a "$T/oci" "$T/oci2" || fail "cannot copy the image"
id=$(job_submit --name ctr-warm --workdir "$W" --max-restarts 0 --nodelist node01 \
	--container-image "oci:$T/oci2:v1" -- true)
wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
LAYER=$T/oci2/blobs/sha256/$(ls -S "$T/oci2/blobs/sha256" | head -n 1)
mv "$LAYER" "$T/layer.blob" && mkfifo -m 644 "$LAYER" || fail "cannot make $LAYER a FIFO"
# Fill the FIFO once, here or (the test failing) on exit, so that no
# unpack is left waiting on it.
_release_layer() {
	[ -n "${LAYER_FED:-}" ] && return 0
	LAYER_FED=1
	timeout 60 sh -c 'cat "$1" >"$2"' - "$T/layer.blob" "$LAYER"
}
at_exit _release_layer
id=$(job_submit --name ctr-pull -N 2 --workdir "$W" --max-restarts 0 \
	--container-image "oci:$T/oci2:v1" --container-mounts "$W:/out" -- \
	sh -c 'cat /etc/only-in-image >/out/pull.$RANK')
wait_job 60 "$id" 'd["state"] == "PENDING" and d["reason"] == "ImagePull: 1 of 2 nodes ready"'
expect_exit 0 cohort events --job "$id" --kind image --json
cp "$OUT" "$T/pull-events.json"
json_get "$T/pull-events.json" '[e.get("node") for e in d["events"] if "ready" in e["detail"]]' |
	grep -q '"node01"' || fail "no image event for node01: $(cat "$T/pull-events.json")"
# Still waiting, and no rank started anywhere: the gang starts once
# every node has the image.
job_expr "$id" 'd["state"] == "PENDING"' || fail "job $id ran before node02 had its image"
[ ! -e "$W/pull.0" ] && [ ! -e "$W/pull.1" ] ||
	fail "a rank of job $id started before every node had the image"
_release_layer || fail "node02 did not read the layer of $T/oci2"
wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(cat "$W/pull.0" "$W/pull.1" 2>/dev/null)" = "cohort-test-image
cohort-test-image" ] || fail "job $id's ranks did not both run in the image"
expect_exit 0 cohort events --job "$id" --kind image --json
json_get "$OUT" '[e.get("node") for e in d["events"] if "ready" in e["detail"]]' |
	grep -q '"node02"' || fail "no image event for node02: $(cat "$OUT")"

### 8. The node of a job in an image fails mid-run: the job restarts in
### the image on the other node and resumes from its checkpoint.
CK2=$(world_dir ckpt2)
id=$(job_submit --name ctr-failover --workdir "$W" --max-restarts 2 --checkpoint-dir "$CK2" \
	--container-image "oci:$T/oci:v1" --container-mounts "$W:/out,$CK2" -- \
	sh -c 'echo "$COHORT_RESUME_CHECKPOINT" >/out/fo-resume.$COHORT_RESTART_COUNT
	if [ -n "$COHORT_RESUME_CHECKPOINT" ]; then cat /etc/only-in-image >/out/fo-img; exit 0; fi
	mkdir -p "$COHORT_CHECKPOINT_DIR/step-1" &&
	echo "1 $COHORT_CHECKPOINT_DIR/step-1" >"$COHORT_CHECKPOINT_DIR/LATEST.tmp" &&
	mv "$COHORT_CHECKPOINT_DIR/LATEST.tmp" "$COHORT_CHECKPOINT_DIR/LATEST"
	while :; do sleep 0.1; done')
wait_job 60 "$id" 'd["state"] == "RUNNING" and d["checkpoint"] is not None'
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
cohort-local kill "$C" "$node" >"$T/kill.out" 2>&1 || fail "cohort-local kill $node: $(cat "$T/kill.out")"
wait_node 30 "$node" 'n["state"] == "DOWN"'
wait_state 60 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 1 ] ||
	fail "job $id restarted $(json_get "$T/job-$id.json" 'd["restarts"]') times, not once"
json_get "$T/job-$id.json" '[p["node"] for p in d["placement"]]' | grep -q "\"$node\"" &&
	fail "job $id restarted on the DOWN node $node"
[ "$(cat "$W/fo-resume.1" 2>/dev/null)" = "$CK2/step-1" ] ||
	fail "the restart did not resume from $CK2/step-1: '$(cat "$W/fo-resume.1" 2>/dev/null)'"
[ "$(cat "$W/fo-img" 2>/dev/null)" = cohort-test-image ] || fail "the restart did not run in the image"
# The old attempt outlived its agent; the returning agent stops it.
pgrep -u nobody -f fo-resume >/dev/null ||
	fail "the old attempt's container ended with its agent: nothing left to check"
cohort-local start "$C" "$node" >"$T/start.out" 2>&1 || fail "cohort-local start $node: $(cat "$T/start.out")"
wait_for 30 not pgrep -u nobody -f fo-resume ||
	fail "the returning agent on $node left the old container running: $(pgrep -u nobody -af fo-resume)"
wait_node 30 "$node" 'n["state"] == "UP"'

### 9. node02 again with a short prepare_timeout and a registry it
### allows: an unpack held on a FIFO is killed past the timeout.
cohort-local kill "$C" node02 >"$T/kill.out" 2>&1 || fail "cohort-local kill node02: $(cat "$T/kill.out")"
printf '\n[container]\nprepare_timeout = 3s\nregistries = 127.0.0.1:1\n' >>"$C/node02.conf"
cohort-local start "$C" node02 >"$T/start.out" 2>&1 || fail "cohort-local start node02: $(cat "$T/start.out")"
wait_node 30 node02 'n["state"] == "UP"'
cp -a "$T/oci" "$T/oci3" || fail "cannot copy the image"
LAYER3=$T/oci3/blobs/sha256/$(ls -S "$T/oci3/blobs/sha256" | head -n 1)
mv "$LAYER3" "$T/layer3.blob" && mkfifo -m 644 "$LAYER3" || fail "cannot make $LAYER3 a FIFO"
# A preparation still on the FIFO when the test ends is let go.
_release_layer3() {
	pgrep -f "$T/oci3" >/dev/null || return 0
	timeout 10 sh -c 'cat "$1" >"$2"' - "$T/layer3.blob" "$LAYER3"
}
at_exit _release_layer3
id=$(job_submit --name ctr-hung --workdir "$W" --nodelist node02 \
	--container-image "oci:$T/oci3:v1" -- true)
# Killed, backed off and tried again: two start failures, each naming
# the image and the timeout.
timed_out() {
	expect_exit 0 cohort events --job "$1" --json
	json_get "$OUT" 'len([e for e in d["events"] if "prepare_timeout" in e["detail"] and "oci3:v1" in e["detail"]])' |
		grep -qx '[2-9]'
}
wait_for 120 timed_out "$id" || fail "job $id's preparation was not killed twice past prepare_timeout: $(cat "$OUT")"
job_show "$id"
json_get "$T/job-$id.json" 'd["state"]' | grep -qx PENDING ||
	fail "job $id did not wait to try again: $(cat "$T/job-$id.json")"
json_get "$T/job-$id.json" 'd["reason"]' | grep -q "prepare_timeout (3 s)" ||
	fail "job $id's reason does not name the timeout: $(json_get "$T/job-$id.json" 'd["reason"]')"
expect_exit 0 cohort cancel "$id"
# The last try's unpack is killed too, with nothing left to try.
wait_for 60 not pgrep -f "$T/oci3" || fail "an unpack of $T/oci3 outlived prepare_timeout: $(pgrep -af "$T/oci3")"

### 10. Registry images: refused at submit when malformed; a registry
### the node does not allow fails the job at once, naming it and the
### setting; no skopeo fails at once naming it.
expect_exit 2 cohort submit --container-image "docker://nvcr.io/nvidia/pytorch:24.01" -- true
grep -q "before '#'" "$ERR" || fail "a registry host not before '#' was not refused: $(cat "$ERR")"
expect_exit 2 cohort submit --container-image "docker://me@nvcr.io#nvidia/pytorch" -- true
grep -q "registry login" "$ERR" || fail "USER@ was not refused: $(cat "$ERR")"
id=$(job_submit --name ctr-reg-denied --workdir "$W" --nodelist node01 \
	--container-image "docker://nvcr.io#nvidia/pytorch:24.01-py3" -- true)
wait_state 60 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] ||
	fail "job $id from a registry node01 does not allow ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
json_get "$T/job-$id.json" 'd["reason"]' | grep -q "registry nvcr.io is not allowed on this node (\[container\] registries = none)" ||
	fail "job $id's reason does not name the registry and the setting: $(json_get "$T/job-$id.json" 'd["reason"]')"
id=$(job_submit --name ctr-reg-hub --workdir "$W" --nodelist node02 \
	--container-image "docker://busybox" -- true)
wait_state 60 "$id" COMPLETED FAILED CANCELLED TIMEOUT
json_get "$T/job-$id.json" 'd["reason"]' | grep -q "registry docker.io (the default) is not allowed on this node (\[container\] registries = 127.0.0.1:1)" ||
	fail "job $id's reason does not name Docker Hub and the setting: $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
id=$(job_submit --name ctr-reg-allowed --workdir "$W" --nodelist node02 \
	--container-image "docker://127.0.0.1:1#cohort/none:1" -- true)
if ! command -v skopeo >/dev/null; then
	wait_state 60 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] ||
		fail "job $id without skopeo ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
	json_get "$T/job-$id.json" 'd["reason"]' | grep -q "skopeo is not installed" ||
		fail "job $id's reason does not name skopeo: $(json_get "$T/job-$id.json" 'd["reason"]')"
else
	# Nothing listens there: the import fails, and the job backs off.
	wait_job 120 "$id" 'd["state"] == "PENDING" and "retry in" in d["reason"] and "127.0.0.1:1#cohort/none:1" in d["reason"]'
	expect_exit 0 cohort cancel "$id"
fi

### 11. A CDI spec on node01: the driver's files in a GPU job's image.
mkdir -p "$T/cdi" && echo fake-driver-library >"$T/libcuda.so.fake" ||
	fail "cannot write the fake driver"
cat >"$T/cdi/nvidia.json" <<EOF
{"cdiVersion":"0.5.0","kind":"nvidia.com/gpu",
 "containerEdits":{"env":["NVIDIA_CDI_TEST=common","COHORT_JOB_ID=0"],
  "mounts":[{"hostPath":"$T/libcuda.so.fake","containerPath":"/usr/lib/libcuda.so.1","options":["rw","bind"]}],
  "hooks":[{"hookName":"createContainer","path":"/bin/sh","args":["sh","-c","touch $T/hook-ran"]}]},
 "devices":[{"name":"0","containerEdits":{"env":["CDI_GPU=0"]}},
  {"name":"1","containerEdits":{"env":["CDI_GPU=1"]}}]}
EOF
chmod 644 "$T/cdi/nvidia.json"
cohort-local kill "$C" node01 >"$T/kill.out" 2>&1 || fail "cohort-local kill node01: $(cat "$T/kill.out")"
printf '\n[container]\ncdi_dirs = %s\n' "$T/cdi" >>"$C/node01.conf"
cohort-local start "$C" node01 >"$T/start.out" 2>&1 || fail "cohort-local start node01: $(cat "$T/start.out")"
wait_node 30 node01 'n["state"] == "UP"'
grep -q "CDI spec $T/cdi/nvidia.json: 2 devices" "$C/node01.log" ||
	fail "node01 did not read the CDI spec: $(grep CDI "$C/node01.log")"
id=$(job_submit --name ctr-cdi --workdir "$W" --nodelist node01 --gpus-per-node 1 \
	--max-restarts 0 --container-image "oci:$T/oci:v1" --container-mounts "$W:/out" -- \
	sh -c 'cat /usr/lib/libcuda.so.1 >/out/cdi.lib; env >/out/cdi.env;
	if echo x >>/usr/lib/libcuda.so.1; then echo rw; else echo ro; fi >/out/cdi.rw')
wait_state 120 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "CDI job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(cat "$W/cdi.lib" 2>/dev/null)" = fake-driver-library ] ||
	fail "the job did not see the spec's mount: '$(cat "$W/cdi.lib" 2>/dev/null)'"
[ "$(cat "$W/cdi.rw")" = ro ] || fail "the spec's mount was writable in the container"
grep -qx NVIDIA_CDI_TEST=common "$W/cdi.env" || fail "no common env from the spec: $(cat "$W/cdi.env")"
grep -qx CDI_GPU=0 "$W/cdi.env" || fail "no env of the job's GPU 0: $(cat "$W/cdi.env")"
! grep -q CDI_GPU=1 "$W/cdi.env" || fail "the job got GPU 1's edits"
grep -qx "COHORT_JOB_ID=$id" "$W/cdi.env" || fail "the spec overrode COHORT_JOB_ID: $(grep COHORT_JOB_ID "$W/cdi.env")"
[ ! -e "$T/hook-ran" ] || fail "the spec's hook ran"
exit 0
