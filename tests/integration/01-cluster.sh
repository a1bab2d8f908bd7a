#!/usr/bin/env bash
# The local cluster itself: four nodes with both GRES, multi-node steps, GPUs for narrow jobs,
# eight concurrent slot jobs on one node in bind and a ninth one waiting for a slot.
source "$(dirname "$0")/lib.sh"

note "four idle nodes in both partitions, each with gpu:4 and gpuslot:8"
for partition in bind narrow; do
    nodes=$(sinfo -h -N -p "$partition" -o '%N %T %G' | sort)
    assert_eq "n1 idle gpu:4,gpuslot:8
n2 idle gpu:4,gpuslot:8
n3 idle gpu:4,gpuslot:8
n4 idle gpu:4,gpuslot:8" "$nodes" "sinfo of partition $partition"
done

note "a -N 2 job runs one step task on each of two nodes"
id=$(run_job 30 -N 2 --wrap 'srun printenv SLURMD_NODENAME')
nodes=$(job_out "$id" | grep -E '^n[1-4]$' | sort -u | wc -l)
assert_eq 2 "$nodes" "distinct nodes of the -N 2 step"

note "a narrow job with --gres=gpu:2 sees two GPUs in the batch script and in its step"
id=$(run_job 30 -p narrow --gres=gpu:2 <<'EOF'
#!/bin/bash
echo "batch CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} SLURM_JOB_GPUS=${SLURM_JOB_GPUS-unset}"
srun bash -c 'echo "step CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} SLURM_STEP_GPUS=${SLURM_STEP_GPUS-unset}"'
EOF
)
out=$(job_out "$id")
count_ids() { tr ',' '\n' <<<"$1" | grep -c '^[0-9]\+$' || true; }
for where in batch step; do
    cvd=$(sed -n "s/^$where CUDA_VISIBLE_DEVICES=\([^ ]*\).*/\1/p" <<<"$out")
    assert_eq 2 "$(count_ids "$cvd")" "GPUs in CUDA_VISIBLE_DEVICES of the narrow $where ($out)"
done
assert_eq 2 "$(count_ids "$(sed -n 's/.*SLURM_JOB_GPUS=\([^ ]*\).*/\1/p' <<<"$out")")" "SLURM_JOB_GPUS ($out)"

note "a bind job with --gres=gpuslot:1 runs and gets no gres/gpu from Slurm"
id=$(run_job 30 -p bind --gres=gpuslot:1 --wrap 'echo "SLURM_JOB_GPUS=${SLURM_JOB_GPUS-unset}"')
assert_eq "SLURM_JOB_GPUS=unset" "$(job_out "$id")" "bind job environment"

note "eight gpuslot:1 jobs run at once on n1; a ninth waits for a slot"
barrier=$ITEST_OUT/barrier
release=$ITEST_OUT/release
mkdir -p "$barrier"
ids=()
for _ in 1 2 3 4 5 6 7 8; do
    # Each job checks in, then holds its slot until the test releases it (30 s at most).
    ids+=("$(submit -p bind -w n1 --gres=gpuslot:1 <<EOF
#!/bin/bash
touch "$barrier/\$SLURM_JOB_ID"
for _ in \$(seq 300); do [ -e "$release" ] && exit 0; sleep 0.1; done
exit 1
EOF
)")
done
eight_running() { [ "$(find "$barrier" -type f | wc -l)" -eq 8 ]; }
wait_for 30 eight_running ||
    fail "only $(find "$barrier" -type f | wc -l) of 8 slot jobs ran at once on n1; states: $(squeue -h -o '%i:%T:%r' | tr '\n' ' ')"
ninth=$(submit -p bind -w n1 --gres=gpuslot:1 --wrap true)
waits_for_resources() { [ "$(squeue -h -j "$ninth" -o '%T %r')" = "PENDING Resources" ]; }
wait_for 10 waits_for_resources ||
    fail "the ninth slot job on n1 is not waiting for resources: $(squeue -h -j "$ninth" -o '%T %r')"
touch "$release"
wait_jobs 60 "${ids[@]}" "$ninth"
for id in "${ids[@]}" "$ninth"; do assert_job_ok "$id"; done
assert_eq n1 "$(jobcomp_field "$ninth" NodeList)" "node of the ninth job"
