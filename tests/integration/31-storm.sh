#!/usr/bin/env bash
# A storm on the real cluster: 300 sbatch jobs in one burst through the four nodes while colocd is
# restarted twice. No job fails, no GPU ever holds more jobs than its slots among the jobs colocd
# placed, and every job is in colocd's history: placed by colocd, or placed by the plugin on its
# own while colocd was away (source fallback) or adopted from Slurm (source reconciled).
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/install-deps)"

jobs_total=${COLOC_STORM_JOBS:-300}
slots_per_gpu=2
db=$COLOC_CLUSTER_DIR/coloc.db
cluster=$ITEST_REPO/scripts/slurm-cluster

# Jobs of a fraction of a second, one or two GPU slots each.
job_script() {
    cat <<'EOF'
#!/bin/bash
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} COLOC_DECISION=${COLOC_DECISION-unset}"
sleep 0.$((RANDOM % 3))
EOF
}

# The burst: four submitters at once.
submit_share() { # FIRST STEP
    local i
    for ((i = $1; i <= jobs_total; i += $2)); do
        job_script | sbatch --parsable -p bind --gres=gpuslot:$((i % 3 == 0 ? 2 : 1)) -J "storm$$-$i" \
            -o "$ITEST_OUT/%j.out" || echo "sbatch-failed-$i"
    done
}
t0=$SECONDS
for s in 1 2 3 4; do submit_share "$s" 4 >"$ITEST_OUT/ids-$s" & done

done_count() { grep -c "^JobId=.* Name=storm$$-" "$JOBCOMP_LOG" 2>/dev/null || true; }
at_least_done() { [ "$(done_count)" -ge "$1" ]; }
restart_colocd() { # WHY
    "$cluster" colocd-stop >/dev/null 2>&1 || fail "colocd-stop failed ($1)"
    sleep 1  # launches during this second go without colocd
    "$cluster" colocd-start >/dev/null 2>&1 || fail "colocd-start failed ($1); read $COLOC_CLUSTER_DIR/log/colocd.log"
    note "colocd restarted $1 (after $((SECONDS - t0)) s, $(done_count) jobs done)"
}
wait_for 120 at_least_done $((jobs_total / 3)) || fail "only $(done_count) jobs done after 120 s"
restart_colocd "a first time"
wait_for 120 at_least_done $((2 * jobs_total / 3)) || fail "only $(done_count) jobs done after 240 s"
restart_colocd "a second time"
wait
ids=$(cut -d";" -f1 "$ITEST_OUT"/ids-*)
grep -q sbatch-failed <<<"$ids" && fail "sbatch failed: $(grep -c sbatch-failed <<<"$ids") submissions"
read -ra ids <<<"$(tr '\n' ' ' <<<"$ids")"
assert_eq "$jobs_total" "${#ids[@]}" "jobs submitted"
# One look at the jobcomp log per poll: 300 squeue calls per round would cost more than the jobs.
wait_for 180 at_least_done "$jobs_total" || fail "only $(done_count) of $jobs_total jobs done after the burst"
note "$jobs_total jobs done in $((SECONDS - t0)) s"

failed=$(awk -v name="Name=storm$$-" 'index($0, name) {
    id = ""; st = ""; ec = ""
    for (i = 1; i <= NF; i++) {
        if ($i ~ /^JobId=/) id = substr($i, 7)
        if ($i ~ /^JobState=/) st = substr($i, 10)
        if ($i ~ /^ExitCode=/) ec = substr($i, 10)
    }
    if (st != "COMPLETED" || ec != "0:0") printf "%s(%s %s) ", id, st, ec
}' "$JOBCOMP_LOG")
[ -z "$failed" ] || fail "jobs failed: $(cut -c1-300 <<<"$failed")"

# Fallback choices reach colocd with the next launch on the same node: one more job per node.
for n in n1 n2 n3 n4; do run_job 60 -p bind -w "$n" --gres=gpuslot:1 --wrap true >/dev/null; done

# Slots per GPU over time among colocd's own placements: +1 at the placement, -1 at its end
# (ends first at equal times), never above slots_per_gpu.
over=$(sqlite3 "$db" <<SQL
WITH ev AS (
    SELECT p.node, g.value AS gpu, p.created AS t, 1 AS d FROM placements p, json_each(p.gpus) g
    WHERE p.mode = 'bind' AND p.source = 'colocd'
    UNION ALL
    SELECT p.node, g.value, p.ended, -1 FROM placements p, json_each(p.gpus) g
    WHERE p.mode = 'bind' AND p.source = 'colocd' AND p.ended IS NOT NULL
), levels AS (
    SELECT node, gpu, sum(d) OVER (PARTITION BY node, gpu ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS level FROM ev
)
SELECT node || ':' || gpu || '=' || max(level) FROM levels GROUP BY node, gpu HAVING max(level) > $slots_per_gpu;
SQL
) || fail "cannot read $db"
[ -z "$over" ] || fail "GPUs above their $slots_per_gpu slots among colocd's placements: $over"

# Every job in colocd's history, and how it got there.
list=$(IFS=,; echo "${ids[*]}")
missing=$(sqlite3 "$db" "WITH want(id) AS (SELECT value FROM json_each('[$list]'))
    SELECT id FROM want WHERE id NOT IN (SELECT job_id FROM placements);") || fail "cannot read $db"
[ -z "$missing" ] || fail "jobs missing from colocd's history: $(echo $missing | cut -c1-200)"
sources=$(sqlite3 "$db" "SELECT source || ' ' || count(DISTINCT job_id) FROM placements
    WHERE job_id IN ($list) GROUP BY source ORDER BY source;" | tr '\n' ',')
note "storm: $jobs_total jobs, 0 failed, colocd restarted twice; in the history by source: ${sources%,}"
