#!/usr/bin/env bash
# The closed loop, short (bench/live's mix, small): 20 emulated training jobs (tests/workload) of
# 4 classes through plain sbatch, the plugin and colocd, two of them on two nodes with bursts over
# one shared loopback link. Whatever the timing: every job is placed once (one decision per node
# it runs on, where its tasks ran), no GPU ever holds more jobs than its slots, and every task's
# report is stored.
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

note "20 jobs of 4 classes at once, one GPU slot per node, anywhere; every 10th on two nodes"
# compute, input wait and burst ms per iteration (bench/live's classes, a fifth as long)
classes=("17 3 0" "4 16 0" "10 10 0" "10 8 2")
ids=()
declare -A nodes_of
for i in $(seq 0 19); do
    read -r c w b <<<"${classes[$((i % 4))]}"
    n=1
    [ $((i % 10)) != 3 ] || n=2
    args="--compute-ms $c --io-ms $w --host-ms 1 --iterations 25"
    [ "$b" = 0 ] || args+=" --burst-ms $b --link 127.0.0.1:$port"
    id=$(submit -p bind -N $n --ntasks-per-node=1 --gres=gpuslot:1 <<JOB
#!/bin/bash
srun bash -c 'echo "start \$EPOCHREALTIME \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES \$COLOC_DECISION"
COLOC_WORKLOAD_DIR=$ITEST_OUT/gpus "$workload" $args
echo "end \$EPOCHREALTIME \$SLURMD_NODENAME"'
JOB
)
    ids+=("$id")
    nodes_of[$id]=$n
done
wait_jobs 90 "${ids[@]}"
for id in "${ids[@]}"; do assert_job_ok "$id"; done

note "every job placed once, by colocd: one decision per node, on the nodes its tasks ran on"
db=$COLOC_CLUSTER_DIR/coloc.db
fallbacks=0
for id in "${ids[@]}"; do
    ran=$(job_out "$id" | awk '$1 == "start" { print $3 }' | sort | tr '\n' ' ')
    placed=$(sqlite3 "$db" "SELECT node FROM placements WHERE job_id = $id ORDER BY node" | tr '\n' ' ')
    assert_eq "${nodes_of[$id]}" "$(wc -w <<<"$ran")" "tasks of job $id"
    assert_eq "$ran" "$placed" "nodes colocd placed job $id on"
    # A task runs on colocd's decision, with the GPUs colocd recorded for its node, or (when
    # colocd could not answer within the plugin's deadline, e.g. slurmctld slow to tell it the
    # job's slots during the burst of submissions) on GPUs the plugin chose locally.
    while read -r _ _ node gpus decision; do
        case $decision in
            local) fallbacks=$((fallbacks + 1)) ;;
            *[!0-9]* | "") fail "job $id's task on $node ran without a decision ('$decision')" ;;
            *) assert_eq "$(sqlite3 "$db" "SELECT gpus FROM placements WHERE job_id = $id AND node = '$node'" | jq -r 'join(",")')" \
                "$gpus" "GPUs of job $id's task on $node (decision $decision)" ;;
        esac
    done < <(job_out "$id" | grep '^start ')
done
[ "$fallbacks" = 0 ] || note "$fallbacks tasks ran on the plugin's local choice (colocd did not answer in time)"

note "no GPU held more jobs than its 2 slots at any moment (the tasks' own clocks)"
over=$(for id in "${ids[@]}"; do
    job_out "$id" | awk '$1 == "start" { key[$3] = $3 ":" $4; t0[$3] = $2 }
        $1 == "end" { print key[$3], t0[$3], "+1"; print key[$3], $2, "-1" }'
done | sort -k1,1 -k2,2n -k3,3r | awk '{ n[$1] += $3; if (n[$1] > 2) print $1 }' | sort -u)
[ -z "$over" ] || fail "GPUs over their slots: $over"

note "every task's report stored: one observation per task, its own mean iteration time"
stored() {
    local id
    for id in "${ids[@]}"; do
        [ "$(sqlite3 "$db" "SELECT count(*) FROM observations WHERE job_id = $id")" = "${nodes_of[$id]}" ] || return 1
    done
}
wait_for 10 stored || fail "observations: $(sqlite3 "$db" "SELECT job_id, count(*) FROM observations GROUP BY job_id" | tr '\n' ' ')"
for id in "${ids[@]}"; do
    means=$(job_out "$id" | awk '$1 == "mean" { print $2 }' | sort -g | tr '\n' ' ')
    got=$(sqlite3 "$db" "SELECT iter_time_s FROM observations WHERE job_id = $id ORDER BY iter_time_s" | tr '\n' ' ')
    paste <(tr ' ' '\n' <<<"$means" | sed '/^$/d') <(tr ' ' '\n' <<<"$got" | sed '/^$/d') |
        awk 'NF != 2 || !($1 > 0 && ($1 - $2) / $1 < 1e-3 && ($2 - $1) / $1 < 1e-3) { bad = 1 } END { exit bad }' ||
        fail "job $id's tasks reported means of $means s, colocd stored $got"
done
