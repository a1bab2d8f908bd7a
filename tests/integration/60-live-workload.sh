#!/usr/bin/env bash
# The closed loop, short: 20 emulated training jobs (tests/workload) of 4 classes through plain
# sbatch, the plugin and colocd, sharing one loopback link. Whatever the timing: every job is
# placed once, no GPU ever holds more jobs than its slots, and every job's report is stored.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
workload=$COLOC_BUILD_DIR/tests/coloc-workload
link=$COLOC_BUILD_DIR/tests/coloc-link
[ -x "$workload" ] && [ -x "$link" ] || skip "the emulated job is not built (make workload)"

port_file=$ITEST_OUT/link.port
rm -f "$port_file"
"$link" --rate 20000000 --port-file "$port_file" >/dev/null &
link_pid=$!
trap 'kill $link_pid 2>/dev/null || true' EXIT
has_port() { [ -s "$port_file" ]; }
wait_for 5 has_port || fail "coloc-link did not start"
port=$(cat "$port_file")

note "20 jobs of 4 classes at once, one GPU slot each, anywhere"
classes=("20 5" "10 10" "30 3" "5 15") # compute ms, burst ms
ids=()
for i in $(seq 0 19); do
    read -r c b <<<"${classes[$((i % 4))]}"
    ids+=("$(submit -p bind --gres=gpuslot:1 <<JOB
#!/bin/bash
echo "start \$EPOCHREALTIME \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES \$COLOC_DECISION"
COLOC_WORKLOAD_DIR=$ITEST_OUT/gpus "$workload" --compute-ms $c --burst-ms $b --iterations 25 \
    --link 127.0.0.1:$port
echo "end \$EPOCHREALTIME"
JOB
)")
done
wait_jobs 90 "${ids[@]}"
for id in "${ids[@]}"; do assert_job_ok "$id"; done

note "every job placed once, by colocd"
db=$COLOC_CLUSTER_DIR/coloc.db
for id in "${ids[@]}"; do
    assert_eq 1 "$(sqlite3 "$db" "SELECT count(*) FROM placements WHERE job_id = $id")" "placements of job $id"
    [[ $(job_out "$id" | awk '$1 == "start" { print $5 }') =~ ^[0-9]+$ ]] || fail "job $id ran without a decision"
done

note "no GPU held more jobs than its 2 slots at any moment (the jobs' own clocks)"
over=$(for id in "${ids[@]}"; do
    job_out "$id" | awk '$1 == "start" { key = $3 ":" $4; t0 = $2 } $1 == "end" { print key, t0, "+1"; print key, $2, "-1" }'
done | sort -k1,1 -k2,2n -k3,3r | awk '{ n[$1] += $3; if (n[$1] > 2) print $1 }' | sort -u)
[ -z "$over" ] || fail "GPUs over their slots: $over"

note "every job's report stored: one observation each, its own mean iteration time"
stored() {
    local id
    for id in "${ids[@]}"; do
        [ "$(sqlite3 "$db" "SELECT count(*) FROM observations WHERE job_id = $id")" = 1 ] || return 1
    done
}
wait_for 10 stored || fail "observations: $(sqlite3 "$db" "SELECT job_id, count(*) FROM observations GROUP BY job_id" | tr '\n' ' ')"
for id in "${ids[@]}"; do
    mean=$(job_out "$id" | awk '$1 == "mean" { print $2 }')
    got=$(sqlite3 "$db" "SELECT iter_time_s FROM observations WHERE job_id = $id")
    awk -v a="$mean" -v b="$got" 'BEGIN { exit !(a > 0 && (a - b) / a < 1e-3 && (b - a) / a < 1e-3) }' ||
        fail "job $id reported a mean of $mean s, colocd stored $got"
done
