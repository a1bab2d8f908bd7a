#!/usr/bin/env bash
# A job on two nodes is one placement: colocd places both nodes on the first request, every
# node's tasks get the GPUs of that one decision (as colocctl shows them), and a second job on
# the same two nodes avoids the first one's GPUs.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin

# Each task prints its node, GPUs and decision; the batch step on the first node prints too.
script='#!/bin/bash
echo "batch $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $COLOC_DECISION"
srun bash -c '"'"'echo "task $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $COLOC_DECISION"'"'"''

first=$(run_job 60 -p bind -N 2 -w n1,n2 --ntasks-per-node=1 --gres=gpuslot:2 --coloc-profile=gpt-1b-2node <<<"$script")
json=$(colocctl jobs --json)
placed() { # ID NODE: "gpus decision" as colocd recorded them
    jq -r --argjson id "$1" --arg node "$2" '.jobs[] | select(.job_id == $id) | .placements[]
        | select(.node == $node) | "\(.gpus | map(tostring) | join(",")) \(.decision)"' <<<"$json"
}
for node in n1 n2; do
    want=$(placed "$first" "$node")
    [[ $want =~ ^[0-3],[0-3]\ [0-9]+$ ]] || fail "colocd's record of job $first on $node: '$want'"
    got=$(job_out "$first" | sed -n "s/^task $node //p")
    assert_eq "$want" "$got" "GPUs and decision of job $first's task on $node"
done
assert_eq "$(placed "$first" n1)" "$(job_out "$first" | sed -n 's/^batch n1 //p')" "the batch step on n1"
# Both nodes were decided by the first request: the same predicted slowdown, one scored candidate.
[ "$(colocctl explain --json "$first" | jq -c '[.explain[].candidates[0].where | length] | unique')" = "[2]" ] ||
    fail "explain of job $first does not show one candidate over both nodes"
note "job $first: n1 $(placed "$first" n1), n2 $(placed "$first" n2)"

# While a two-node job holds GPUs on n1 and n2, a second one gets the other GPUs on both nodes.
hold='#!/bin/bash
srun bash -c '"'"'echo "task $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"; sleep 300'"'"''
holder=$(submit -p bind -N 2 -w n1,n2 --ntasks-per-node=1 --gres=gpuslot:2 --coloc-profile=gpt-1b-2node <<<"$hold")
both_placed() { [ "$(colocctl jobs --json | jq --argjson id "$holder" '[.jobs[] | select(.job_id == $id) | .placements[]] | length')" = 2 ]; }
wait_for 30 both_placed || fail "job $holder not placed on both nodes within 30s"
second=$(run_job 60 -p bind -N 2 -w n1,n2 --ntasks-per-node=1 --gres=gpuslot:2 --coloc-profile=gpt-1b-2node <<<"$script")
json=$(colocctl jobs --json)
for node in n1 n2; do
    held=$(placed "$holder" "$node" | cut -d' ' -f1)
    got=$(placed "$second" "$node" | cut -d' ' -f1)
    common=$(comm -12 <(tr ',' '\n' <<<"$held" | sort) <(tr ',' '\n' <<<"$got" | sort))
    [ -z "$common" ] || fail "on $node job $second got GPUs $got, sharing $common with job $holder ($held)"
done
scancel "$holder"
echo "multi-node: one decision per job over both nodes, tasks got it, neighbours kept apart"
