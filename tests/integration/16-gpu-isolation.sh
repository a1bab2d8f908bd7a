#!/usr/bin/env bash
# Bind mode keeps jobs to their GPUs: a job opens only the GPUs coloc gave it (colocd's choice,
# a --coloc=off job's own slots, a local choice while colocd is away), with the cgroup v1 devices
# controller and with a cgroup v2 device program. The fake GPUs (c 195:N, no driver) open with
# ENXIO where the cgroup lets them through and with EPERM where it refuses them.
# A fence whose slurmstepd is gone is swept by the next one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin
[ "$(id -u)" = 0 ] || skip "the fence needs slurmstepd as root"

plugstack=$COLOC_CLUSTER_DIR/plugstack.conf
dev=$COLOC_CLUSTER_DIR/dev
[ "$(stat -c %t "$dev/nvidia0")" = c3 ] || skip "$dev/nvidia0 is not c 195:0 (cluster made by an older slurm-cluster)"
for f in "$dev"/nvidia*; do
    opened=$(python3 -c 'import os,sys; os.open(sys.argv[1], os.O_RDONLY)' "$f" 2>&1 || true)
    [[ $opened == *"No such device or address"* ]] ||
        skip "$f does not open with ENXIO outside a job (a GPU driver is loaded?)"
done

# The job prints its GPUs and, for each fake GPU of the node, how opening it ended.
probe='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES COLOC_DECISION=${COLOC_DECISION:-unset}"
python3 - '"$dev"'/nvidia* <<PY
import errno, os, sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_RDONLY))
        print("open", p[-1], "opened")
    except OSError as e:
        print("open", p[-1], errno.errorcode[e.errno])
PY'

# Every GPU given to job ID opens as far as the driver (ENXIO); every other is refused (EPERM).
check_fenced() { # ID WHAT
    local gpus want got i
    gpus=$(gpus_of "$1")
    [[ $gpus =~ ^[0-3](,[0-3])*$ ]] || fail "$2: job $1 got CUDA_VISIBLE_DEVICES='$gpus'"
    want="" got=""
    for i in 0 1 2 3; do
        if [[ ,$gpus, == *,$i,* ]]; then want+="$i:ENXIO "; else want+="$i:EPERM "; fi
    done
    got=$(job_out "$1" | awk '$1 == "open" {printf "%s:%s ", $2, $3}')
    assert_eq "$want" "$got" "$2: how job $1 (GPUs $gpus) opened the node's GPUs"
}

no_fence_left() { # ID...
    local id
    for id in "$@"; do
        ! compgen -G "/sys/fs/cgroup/devices/coloc_*_${id}_*" >/dev/null || return 1
        ! compgen -G "/sys/fs/cgroup/unified/coloc_*_${id}_*" >/dev/null || return 1
    done
}

note "bind jobs with colocd's GPUs (cgroup v1 devices controller): their own GPUs only"
# A fence left by a slurmstepd that is gone (its pid names no process): the next fence sweeps it.
true &
dead=$!
wait "$dead"
stale=/sys/fs/cgroup/devices/coloc_n9_1_0_$dead
mkdir "$stale"
id1=$(run_job 30 -p bind -w n1 --gres=gpuslot:1 --wrap "$probe")
check_fenced "$id1" "colocd's choice"
[ ! -d "$stale" ] || { rmdir "$stale"; fail "the fence of a gone slurmstepd ($stale) was not swept by the next fence"; }
[[ $(decision_of "$id1") =~ ^[0-9]+$ ]] || fail "job $id1 has COLOC_DECISION='$(decision_of "$id1")'"
id2=$(run_job 30 -p bind -w n1 --gres=gpuslot:2 --wrap "$probe")
check_fenced "$id2" "colocd's choice of two"

note "four bind jobs at once on n4: four different GPUs, each job fenced to its own"
barrier=$ITEST_OUT/barrier-$RANDOM
mkdir -p "$barrier"
together=()
for _ in 1 2 3 4; do
    together+=("$(submit -p bind -w n4 --gres=gpuslot:1 <<EOF
#!/bin/bash
$probe
touch "$barrier/\$SLURM_JOB_ID"
for _ in \$(seq 300); do [ "\$(ls "$barrier" | wc -l)" -ge 4 ] && exit 0; sleep 0.1; done
exit 1
EOF
)")
done
wait_jobs 60 "${together[@]}"
for id in "${together[@]}"; do
    assert_job_ok "$id"
    check_fenced "$id" "one of four jobs at once"
done
assert_eq "0:1 1:1 2:1 3:1 " "$(jobs_per_gpu "${together[@]}")" "jobs per GPU"

note "an srun step of a bind job is fenced to the job's GPUs too"
step=$ITEST_OUT/step-probe.sh
printf '#!/bin/bash\n%s\n' "$probe" >"$step"
chmod 755 "$step"
id3=$(run_job 30 -p bind -w n2 --gres=gpuslot:1 --wrap "srun $step")
check_fenced "$id3" "srun step"

note "--coloc=off in the bind partition: fenced to the GPUs of its own slots"
id4=$(run_job 30 -p bind -w n2 --gres=gpuslot:1 --coloc=off --wrap "$probe")
assert_eq local "$(decision_of "$id4")" "COLOC_DECISION of opted-out job $id4"
check_fenced "$id4" "--coloc=off"

note "colocd stopped: the local choice is fenced the same way"
"$ITEST_REPO/scripts/slurm-cluster" colocd-stop >/dev/null
trap '"$ITEST_REPO/scripts/slurm-cluster" colocd-start >/dev/null' EXIT
id5=$(run_job 30 -p bind -w n3 --gres=gpuslot:1 --wrap "$probe")
assert_eq local "$(decision_of "$id5")" "COLOC_DECISION of fallback job $id5"
check_fenced "$id5" "local fallback choice"
"$ITEST_REPO/scripts/slurm-cluster" colocd-start >/dev/null
trap - EXIT

note "cgroup v2 (device_cgroup=v2): a device program fences the same way"
grep -q ' - cgroup2 ' /proc/self/mountinfo || skip "no cgroup2 hierarchy mounted for the v2 half"
cp "$plugstack" "$plugstack.v1"
trap 'mv "$plugstack.v1" "$plugstack"' EXIT
sed -i 's|spank_coloc.so |spank_coloc.so device_cgroup=v2 |' "$plugstack"
id6=$(run_job 30 -p bind -w n3 --gres=gpuslot:1 --wrap "$probe")
check_fenced "$id6" "cgroup v2 device program"
grep -q "job $id6: .*not fenced" "$(slurmd_log n3)" && fail "the plugin could not fence job $id6: $(grep "job $id6" "$(slurmd_log n3)")"
mv "$plugstack.v1" "$plugstack"
trap - EXIT

# That this step was unfenced also shows slurmstepd reads plugstack.conf afresh for each step,
# so the device_cgroup=v2 half above did run with the device program.
note "isolate=off: no fence (the checks above fail when the protection is removed)"
cp "$plugstack" "$plugstack.on"
trap 'mv "$plugstack.on" "$plugstack"' EXIT
sed -i 's|spank_coloc.so |spank_coloc.so isolate=off |' "$plugstack"
id7=$(run_job 30 -p bind -w n3 --gres=gpuslot:1 --wrap "$probe")
assert_eq "0:ENXIO 1:ENXIO 2:ENXIO 3:ENXIO " "$(job_out "$id7" | awk '$1 == "open" {printf "%s:%s ", $2, $3}')" \
    "how unfenced job $id7 opened the node's GPUs"
mv "$plugstack.on" "$plugstack"
trap - EXIT

note "the fence cgroups go when their steps end"
wait_for 10 no_fence_left "${together[@]}" "$id1" "$id2" "$id3" "$id4" "$id5" "$id6" ||
    fail "fence cgroups left: $(ls -d /sys/fs/cgroup/devices/coloc_* /sys/fs/cgroup/unified/coloc_* 2>/dev/null | tr '\n' ' ')"
