#!/usr/bin/env bash
# Narrow mode, a job on two nodes is one placement: colocd asks slurmctld for the GPUs Slurm gave
# each node and places both at the first request; every node's tasks get GPUs of that one
# decision, each within its own node's Slurm GPUs (which differ here: n2's first two are taken).
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin

subset_of() { # LIST SUPERSET: every GPU of LIST is in SUPERSET
    local g
    for g in ${1//,/ }; do [[ ",$2," == *",$g,"* ]] || return 1; done
}

# A one-node narrow job holds two GPUs of n2, so that Slurm gives the two-node job other GPUs
# on n2 than on n1.
holder=$(submit -p narrow -w n2 --gres=gpu:2 --wrap 'sleep 300')
held() { [ "$(colocctl jobs --json | jq --argjson id "$holder" '[.jobs[] | select(.job_id == $id) | .placements[]] | length')" = 1 ]; }
wait_for 30 held || fail "job $holder not placed on n2 within 30s"

# Each task prints its node, GPUs, Slurm's GPUs for the step and decision.
script='#!/bin/bash
srun bash -c '"'"'echo "task $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS $COLOC_DECISION"'"'"''
job=$(run_job 60 -p narrow -N 2 -w n1,n2 --ntasks-per-node=1 --gres=gpu:2 <<<"$script")
scancel "$holder"

json=$(colocctl jobs --json)
placed() { # NODE: "mode gpus decision" as colocd recorded them
    jq -r --argjson id "$job" --arg node "$1" '.jobs[] | select(.job_id == $id) | .placements[]
        | select(.node == $node) | "\(.mode) \(.gpus | map(tostring) | join(",")) \(.decision)"' <<<"$json"
}
declare -A slurm
for node in n1 n2; do
    read -r cvd step decision < <(job_out "$job" | sed -n "s/^task $node //p")
    [[ $step =~ ^[0-3](,[0-3])*$ ]] || fail "job $job's task on $node: SLURM_STEP_GPUS='$step'"
    slurm[$node]=$step
    subset_of "$cvd" "$step" || fail "job $job got GPUs $cvd on $node, outside Slurm's $step there"
    assert_eq "narrow $cvd $decision" "$(placed "$node")" "colocd's record of job $job on $node and what its task got"
done
[ "${slurm[n1]}" != "${slurm[n2]}" ] || fail "Slurm gave job $job the same GPUs on both nodes (${slurm[n1]}): the test proves less"

# One decision over both nodes: every node's record shows the same one candidate, covering both
# nodes, each with that node's GPUs.
explain=$(colocctl explain --json "$job")
assert_eq 2 "$(jq '.explain | length' <<<"$explain")" "decisions recorded for job $job"
assert_eq 1 "$(jq -c '[.explain[].candidates] | unique | length' <<<"$explain")" "distinct candidate lists of job $job"
assert_eq 2 "$(jq '.explain[0].candidates[0].where | length' <<<"$explain")" "nodes in job $job's candidate"
for node in n1 n2; do
    assert_eq "$(placed "$node" | cut -d' ' -f2)" \
        "$(jq -r --arg n "$node" '.explain[0].candidates[0].where[] | select(.node == $n) | .gpus | map(tostring) | join(",")' <<<"$explain")" \
        "job $job's candidate on $node"
done
line=$(grep -m 1 "job $job on n[12]: .*one placement over 2 nodes" "$COLOC_CLUSTER_DIR/log/colocd.log") ||
    fail "colocd's log does not say job $job was placed as one over 2 nodes"
note "job $job: n1 $(placed n1) (Slurm ${slurm[n1]}), n2 $(placed n2) (Slurm ${slurm[n2]}); ${line#*(}"
echo "narrow multi-node: one decision over both nodes, each node within its own Slurm GPUs"
