#!/usr/bin/env bash
# Narrow mode: colocd picks within the GPUs Slurm gave the step, never outside them.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin

subset_of() { # LIST SUPERSET: every GPU of LIST is in SUPERSET
    local g
    for g in ${1//,/ }; do [[ ",$2," == *",$g,"* ]] || return 1; done
}

note "four narrow jobs at once on n3, two GPUs each: each gets GPUs of its own allocation"
read -ra ids <<<"$(run_together 2 -p narrow -w n3 --gres=gpu:2)"
for id in "${ids[@]}"; do
    cvd=$(gpus_of "$id")
    own=$(slurm_gpus_of "$id")
    [[ $cvd =~ ^[0-3](,[0-3])*$ ]] || fail "job $id has CUDA_VISIBLE_DEVICES='$cvd'"
    [[ $own =~ ^[0-3](,[0-3])*$ ]] || fail "job $id has SLURM_JOB_GPUS='$own'"
    subset_of "$cvd" "$own" || fail "job $id got GPUs $cvd outside its allocation $own"
    [[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id has COLOC_DECISION='$(decision_of "$id")'"
done

note "colocd recorded them in narrow mode with the GPUs it returned"
for id in "${ids[@]}"; do
    assert_eq "narrow $(gpus_of "$id")" \
        "$(colocctl jobs -P -h -o job_id,mode,gpus | awk -F'|' -v id="$id" '$1 == id {print $2, $3}')" \
        "colocctl's record of narrow job $id"
done
