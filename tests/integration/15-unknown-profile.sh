#!/usr/bin/env bash
# No surprises: a mistyped --coloc-profile is told in the job's own stderr and shown by colocctl
# as what colocd used; colocd reports the GPU hardware colocd.yaml names.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin

note "colocctl status names each node type's GPU type and memory"
status=$(colocctl status)
grep -q '^gpu_hardware *= quad: v100, 32 GB$' <<<"$status" || fail "no gpu_hardware line for quad in: $status"

note "a job with an unknown profile and one with a known profile, together"
unknown=$(submit -p bind --gres=gpuslot:1 --coloc-profile=no-such-profile --wrap 'echo ran')
known=$(submit -p bind --gres=gpuslot:1 --coloc-profile=bert-base-b32 --wrap 'echo ran')
wait_jobs 60 "$unknown" "$known"
assert_job_ok "$unknown"
assert_job_ok "$known"

note "the unknown profile is one line in that job's output, and none in the other's"
assert_eq 1 "$(job_out "$unknown" | grep -c "^coloc: --coloc-profile 'no-such-profile' is not a profile colocd knows")" \
    "lines about the unknown profile in job $unknown's output"
assert_eq 0 "$(job_out "$known" | grep -c '^coloc:')" "coloc lines in job $known's output"

note "colocctl jobs shows what colocd placed it as"
assert_eq "default (unknown: no-such-profile)" \
    "$(colocctl jobs -P -h -o job_id,profile | awk -F'|' -v id="$unknown" '$1 == id {print $2}')" \
    "colocctl's profile of job $unknown"
assert_eq "bert-base-b32" "$(colocctl jobs -P -h -o job_id,profile | awk -F'|' -v id="$known" '$1 == id {print $2}')" \
    "colocctl's profile of job $known"
