#!/usr/bin/env bash
# Bind mode end to end: plain sbatch jobs get their GPUs from colocd; no GPU holds more jobs than
# its slots; fewer jobs than GPUs never share one; colocctl and the SQLite history show them.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin

note "three jobs at once on n1 (fewer than its four GPUs): three different GPUs"
read -ra three <<<"$(run_together 3 -p bind -w n1 --gres=gpuslot:1)"
gpus=()
for id in "${three[@]}"; do
    g=$(gpus_of "$id")
    [[ $g =~ ^[0-3]$ ]] || fail "job $id got CUDA_VISIBLE_DEVICES='$g', expected one GPU of n1"
    [[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id has COLOC_DECISION='$(decision_of "$id")'"
    gpus+=("$g")
done
assert_eq 3 "$(printf '%s\n' "${gpus[@]}" | sort -u | wc -l)" "distinct GPUs of three concurrent jobs (${gpus[*]})"

note "eight jobs at once on n1 (4 GPUs x 2 slots): every GPU holds exactly two"
read -ra eight <<<"$(run_together 8 -p bind -w n1 --gres=gpuslot:1)"
assert_eq "0:2 1:2 2:2 3:2 " "$(jobs_per_gpu "${eight[@]}")" "jobs per GPU"

note "colocctl jobs --json lists them with node, GPUs and times"
json=$(colocctl jobs --json)
for id in "${eight[@]}"; do
    line=$(jq -c --argjson id "$id" '.jobs[] | select(.job_id == $id)
        | [.placements[0].node, (.placements[0].gpus | map(tostring) | join(",")), (.submit != null)]' <<<"$json")
    assert_eq "[\"n1\",\"$(gpus_of "$id")\",true]" "$line" "colocctl's record of job $id"
done

note "after they end, the SQLite history has each job ended, with its placement closed"
db=$COLOC_CLUSTER_DIR/coloc.db
ended_in_db() {
    local id
    for id in "${eight[@]}"; do
        [ "$(sqlite3 "$db" "SELECT j.state || ':' || (p.ended IS NOT NULL) || ':' || p.gpus
              FROM jobs j JOIN placements p USING (job_id) WHERE job_id = $id")" = "ended:1:[$(gpus_of "$id")]" ] || return 1
    done
}
wait_for 20 ended_in_db ||
    fail "history rows: $(sqlite3 "$db" "SELECT job_id, state, end FROM jobs ORDER BY job_id" | tr '\n' ' ')"

note "a job's srun step reuses the decision of its batch step"
id=$(run_job 30 -p bind -w n2 --gres=gpuslot:2 <<'EOF'
#!/bin/bash
echo "batch $CUDA_VISIBLE_DEVICES $COLOC_DECISION"
srun bash -c 'echo "step $CUDA_VISIBLE_DEVICES $COLOC_DECISION"'
EOF
)
batch=$(job_out "$id" | sed -n 's/^batch //p')
step=$(job_out "$id" | sed -n 's/^step //p')
[[ $batch =~ ^[0-3],[0-3]\ [0-9]+$ ]] || fail "batch step of a gpuslot:2 job saw '$batch'"
assert_eq "$batch" "$step" "the srun step's GPUs and decision"
assert_eq 1 "$(sqlite3 "$db" "SELECT count(*) FROM placements WHERE job_id = $id")" "decisions recorded for job $id"

note "--coloc=off in the bind partition: GPUs of its own two slots, chosen on the node, never all four"
id=$(run_job 30 -p bind -w n2 --gres=gpuslot:2 --coloc=off <<'EOF2'
#!/bin/bash
echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES COLOC_DECISION=$COLOC_DECISION"
EOF2
)
[[ $(gpus_of "$id") =~ ^[0-3],[0-3]$ ]] ||
    fail "opted-out job $id in the bind partition saw CUDA_VISIBLE_DEVICES='$(gpus_of "$id")', expected two GPUs of n2"
assert_eq local "$(decision_of "$id")" "COLOC_DECISION of opted-out job $id"
