#!/usr/bin/env bash
# With colocd stopped or frozen, jobs still start and finish, each launch delayed by at most the
# plugin's deadline plus a small margin: narrow jobs keep Slurm's GPUs, bind jobs get a local
# choice within slots, and colocd learns of those when it is back.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin

deadline_ms=$(sed -n 's/.*timeout_ms=\([0-9]*\).*/\1/p' "$COLOC_CLUSTER_DIR/plugstack.conf")
deadline_ms=${deadline_ms:-250}
margin_ms=150

# The plugin logs how long each launch waited for colocd; none may exceed deadline + margin.
check_delays() { # NODE WHAT
    local worst
    worst=$({ grep -ho 'coloc: .*after [0-9]* ms' "$(slurmd_log "$1")" || true; } |
        sed 's/.*after \([0-9]*\) ms.*/\1/' | sort -n | tail -n 1)
    [ -n "$worst" ] || fail "$2: the plugin logged no fallback on $1 (see $(slurmd_log "$1"))"
    [ "$worst" -le $((deadline_ms + margin_ms)) ] ||
        fail "$2: a launch waited ${worst} ms for colocd (deadline ${deadline_ms} ms + ${margin_ms} ms)"
    note "$2: longest wait for colocd ${worst} ms (deadline ${deadline_ms} ms)"
}

for how in stopped frozen; do
    : >"$(slurmd_log n4)"
    if [ $how = stopped ]; then
        scripts_dir=$ITEST_REPO/scripts
        "$scripts_dir/slurm-cluster" colocd-stop >/dev/null
    else
        kill -STOP "$(cat "$COLOCD_PIDFILE")"
    fi

    note "colocd $how: narrow jobs on n4 run with Slurm's own GPUs"
    read -ra narrow <<<"$(run_together 2 -p narrow -w n4 --gres=gpu:2)"
    for id in "${narrow[@]}"; do
        assert_eq "$(slurm_gpus_of "$id")" "$(gpus_of "$id")" "CUDA_VISIBLE_DEVICES of narrow job $id with colocd $how"
        assert_eq unset "$(decision_of "$id")" "COLOC_DECISION of narrow job $id with colocd $how"
    done

    note "colocd $how: eight bind jobs on n4 at once get a local choice within slots"
    read -ra bind <<<"$(run_together 8 -p bind -w n4 --gres=gpuslot:1)"
    assert_eq "0:2 1:2 2:2 3:2 " "$(jobs_per_gpu "${bind[@]}")" "jobs per GPU with colocd $how"
    for id in "${bind[@]}"; do assert_eq local "$(decision_of "$id")" "COLOC_DECISION of bind job $id"; done
    check_delays n4 "colocd $how"

    if [ $how = stopped ]; then
        "$ITEST_REPO/scripts/slurm-cluster" colocd-start >/dev/null
    else
        kill -CONT "$(cat "$COLOCD_PIDFILE")"
    fi
    wait_for 10 colocctl status || fail "colocd does not answer after being $how"

    note "colocd back: the next launch on n4 reports the local choices, and colocd adopts them"
    run_job 30 -p bind -w n4 --gres=gpuslot:1 --wrap true >/dev/null
    known=$(colocctl jobs -P -h -o job_id,source | awk -F'|' '$2 == "fallback" {print $1}' | sort -n | tr '\n' ' ')
    for id in "${bind[@]}"; do
        [[ " $known " == *" $id "* ]] || fail "colocd did not learn of fallback job $id (fallback jobs: $known)"
    done
done
