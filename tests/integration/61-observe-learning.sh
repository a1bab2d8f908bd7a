#!/usr/bin/env bash
# Learning from inside jobs: plain sbatch jobs that share GPUs report their iteration times with
# the Python client (client/coloc_report.py, in the environment the plugin sets), and the model
# colocd learned from them predicts that pair's speed closer to the reported one than before.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
command -v python3 >/dev/null || skip "python3 is not installed"

profile=resnet50-b64
solo=$(awk -v p="$profile" '$0 ~ "name: "p"$" {f=1} f && /iter_time_s:/ {print $2; exit}' "$ITEST_REPO/etc/profiles.yaml")
[ -n "$solo" ] || fail "no iter_time_s for $profile in etc/profiles.yaml"
n=8  # n1's 4 GPUs x 2 slots: every GPU holds two of these jobs

pairs=$ITEST_OUT/pairs.csv
echo "$profile,$profile,gpu" >"$pairs"
db=$COLOC_CLUSTER_DIR/coloc.db
# The pair's predicted speed with what colocd has learned so far (its stored parameters).
predicted_speed() {
    local params=$ITEST_OUT/params.json
    sqlite3 "$db" "SELECT params FROM model_params WHERE name = 'coloc'" >"$params"
    [ -s "$params" ] || echo '{}' >"$params"
    colocctl predict --profiles "$ITEST_REPO/etc/profiles.yaml" --pairs "$pairs" --params "$params" --json |
        jq -r '.predictions[0].job_speed'
}
before=$(predicted_speed)
# The jobs report a speed well away from the prediction, on whichever side has room.
reported_speed=$(awk -v b="$before" 'BEGIN { if (b > 0) printf "%.3f", b <= 0.7 ? b + 0.25 : b - 0.3 }')
note "predicted speed of $profile beside itself before: $before; the jobs report $reported_speed"
[ -n "$reported_speed" ] || fail "no prediction to start from ($before)"

barrier=$ITEST_OUT/barrier
mkdir -p "$barrier/running" "$barrier/reported"
job_script() {
    cat <<PY
#!/usr/bin/env python3
# Waits until all $n jobs run, reports iteration times of speed $reported_speed, and keeps its
# slot until every job has reported (a report is learned against the neighbours of that moment).
import os, sys, time
sys.path.insert(0, "$ITEST_REPO/client")
import coloc_report

def wait_all(folder):
    open(os.path.join(folder, os.environ["SLURM_JOB_ID"]), "w").close()
    deadline = time.monotonic() + 40
    while len(os.listdir(folder)) < $n:
        if time.monotonic() > deadline:
            sys.exit("not all $n jobs reached %s" % folder)
        time.sleep(0.1)

print("COLOC_DECISION=%s COLOC_ENDPOINT=%s" % (os.environ.get("COLOC_DECISION"), os.environ.get("COLOC_ENDPOINT")))
wait_all("$barrier/running")
if not coloc_report.init():
    sys.exit("coloc_report.init() found no coloc job in the environment")
reporter = coloc_report._reporter
for _ in range(20):
    coloc_report.iteration($solo / $reported_speed)
coloc_report.close()
print("sent=%d failed=%d" % (reporter.sent, reporter.failed))
wait_all("$barrier/reported")
sys.exit(0 if reporter.sent == 1 and reporter.failed == 0 else 1)
PY
}

note "$n jobs of $profile share n1's GPUs and report through coloc_report.py"
ids=()
for ((i = 0; i < n; i++)); do
    ids+=("$(job_script | COLOC_REPORT_INTERVAL_S=3600 COLOC_REPORT_TIMEOUT_MS=10000 \
        submit -p bind -w n1 --gres=gpuslot:1 --coloc-profile="$profile")")
done
wait_jobs 60 "${ids[@]}"
for id in "${ids[@]}"; do
    assert_job_ok "$id"
    assert_eq "sent=1 failed=0" "$(job_out "$id" | grep '^sent=')" "reports of job $id"
done
assert_eq "$n" "$(sqlite3 "$db" "SELECT count(*) FROM observations WHERE job_id IN ($(IFS=,; echo "${ids[*]}"))")" \
    "observations recorded for the jobs"

after=$(predicted_speed)
note "predicted speed after: $after"
awk -v b="$before" -v a="$after" -v r="$reported_speed" \
    'BEGIN { d0 = r - b; if (d0 < 0) d0 = -d0; d1 = r - a; if (d1 < 0) d1 = -d1; exit !(d1 < d0 / 2) }' ||
    fail "the prediction did not move halfway toward the reported speed $reported_speed: $before before, $after after"

note "a job without a profile runs alone and reports: its user and job name get a learned profile"
learned="$(id -un)/solo-train"
id=$(submit -p bind -w n2 --gres=gpuslot:1 -J solo-train <<PY
#!/usr/bin/env python3
import sys, time
sys.path.insert(0, "$ITEST_REPO/client")
import coloc_report
if not coloc_report.init():
    sys.exit("coloc_report.init() found no coloc job in the environment")
reporter = coloc_report._reporter
for _ in range(5):
    coloc_report.iteration(0.5)
coloc_report.close()
time.sleep(1.5)  # a runtime of whole seconds
sys.exit(0 if reporter.sent == 1 else 1)
PY
)
wait_jobs 30 "$id"
assert_job_ok "$id"
profile_line() { colocctl profiles --learned -P -h -o name,kind,iter_time_s,iter_time_from,runtime_from | grep "^$learned|"; }
runtime_learned() { profile_line | grep -q '|learned from 1 solo run$'; }
wait_for 20 runtime_learned || fail "colocctl profiles after the solo run: '$(profile_line)'"
assert_eq "$learned|learned|0.500|learned from 1 solo run|learned from 1 solo run" "$(profile_line)" \
    "the learned profile of $learned"
