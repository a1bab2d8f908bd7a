#!/usr/bin/env bash
# Bind mode without changing job scripts: etc/job_submit.lua turns --gres=gpu:N and --gpus=N in
# the bind partition into GPU slots, and colocd places the job; the narrow partition keeps gres/gpu.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin
grep -q '^JobSubmitPlugins=lua' "$SLURM_CONF" || skip "the cluster's slurm.conf has no JobSubmitPlugins=lua"
# 24.11 and later write gres/NAME where 22.05 writes gres:NAME.
tres_per_node() { job_field "$1" TresPerNode | sed 's|^gres/|gres:|'; }

note "--gres=gpu:1 in the bind partition asks for one slot and gets one GPU from colocd"
read -r id <<<"$(run_together 1 -p bind -w n1 --gres=gpu:1)"
assert_eq "gres:gpuslot:1" "$(tres_per_node "$id")" "TresPerNode of job $id"
[[ $(gpus_of "$id") =~ ^[0-3]$ ]] || fail "job $id got CUDA_VISIBLE_DEVICES='$(gpus_of "$id")', expected one GPU"
[[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id was not placed by colocd: COLOC_DECISION='$(decision_of "$id")'"

note "--gpus=2 in the default partition (bind) gets two GPUs from colocd"
read -r id <<<"$(run_together 1 -w n2 --gpus=2)"
[[ $(gpus_of "$id") =~ ^[0-3],[0-3]$ ]] || fail "job $id got CUDA_VISIBLE_DEVICES='$(gpus_of "$id")', expected two GPUs"
[[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id was not placed by colocd: COLOC_DECISION='$(decision_of "$id")'"

note "--gres=gpu:2 in the narrow partition stays a GPU request"
read -r id <<<"$(run_together 1 -p narrow -w n3 --gres=gpu:2)"
assert_eq "gres:gpu:2" "$(tres_per_node "$id")" "TresPerNode of narrow job $id"
