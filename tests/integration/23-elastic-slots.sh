#!/usr/bin/env bash
# Elastic slots end to end: with every GPU of the cluster busy and two transformer residents on
# n1 (each on two GPUs of its own), colocd keeps n1's gpuslot count at what runs, so that a
# resnet50 job whose pairing with them would lose more than its wait pends (Resources), while
# a transformer-b16 job that pairs well gets a shared slot opened and starts at once. When a
# resident ends, the pending job starts on the GPUs it freed. (Elastic slots do not reorder
# Slurm's queue: Slurm's backfill keeps n1 for the held job ahead, so the good job behind it asks
# for a time limit that ends before the residents' do.) `colocctl elastic off` and a
# clean stop of colocd give every node its full count back.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
cluster=$ITEST_REPO/scripts/slurm-cluster

restore_more() { for n in n1 n2 n3 n4; do scontrol update NodeName=$n Gres=gpu:4,gpuslot:8 2>/dev/null; done; }
own_colocd_yaml
wait_for 20 no_jobs || fail "jobs of an earlier test still listed: $(squeue -h -o '%i %T' | tr '\n' ' ')"
[ "$(colocctl status | sed -n 's/^running_jobs *= *//p')" = 0 ] || fail "colocd counts running jobs before the test"
cat >>"$yaml" <<'EOF2'
elastic_slots:
  enabled: true
  interval_s: 1
EOF2
"$cluster" colocd-stop >/dev/null
"$cluster" colocd-start >/dev/null || fail "colocd did not start with elastic slots on"

slots() { scontrol show node -o "$1" | tr ' ' '\n' | sed -n 's/^Gres=//p' | sed -n 's/.*gpuslot:\([0-9]*\).*/\1/p'; }
gres_of() { scontrol show node -o "$1" | tr ' ' '\n' | sed -n 's/^Gres=//p'; }
running() { [ "$(job_state "$1")" = RUNNING ]; }
wait_running() { wait_for 20 running "$1" || fail "job $1 not running within 20s (state $(job_state "$1"), reason $(job_field "$1" Reason))"; }
verdict() { # ID: the latest elastic verdict on the pending job, as JSON
    colocctl elastic --json | jq -c --argjson id "$1" '.elastic_slots.pending[] | select(.job_id == $id)'
}
held() { v=$(verdict "$1") && [ -n "$v" ] && [ "$(jq -r .opens <<<"$v")" = false ] && [[ $(jq -r .why <<<"$v") == held* ]]; }
slots_at() { [ "$(slots "$1")" = "$2" ]; }
job_gpus() { colocctl explain --json "$1" | jq -r '.explain[0].gpus | join(",")'; }

note "no job: every node offers one slot per idle GPU"
for n in n1 n2 n3 n4; do
    wait_for 10 slots_at $n 4 || fail "$n: gpuslot $(slots $n), expected 4 (Gres $(gres_of $n)); $(colocctl elastic --json | jq -c .elastic_slots); $(colocctl status | grep running_jobs)"
done
[[ $(gres_of n1) == gpu:4,* ]] || fail "n1 lost its gpu GRES: $(gres_of n1)"

note "every GPU busy: fillers on n2-n4, two transformer residents on n1"
fillers=()
for n in n2 n3 n4; do
    fillers+=("$(submit -p bind -w $n --gres=gpuslot:4 -t 30 --coloc-profile=resnet50-b64 --wrap 'sleep 300')")
done
r1=$(submit -p bind -w n1 --gres=gpuslot:2 -t 2 --coloc-profile=transformer-b64 --wrap 'sleep 300')
r2=$(submit -p bind -w n1 --gres=gpuslot:2 -t 2 --coloc-profile=transformer-b64 --wrap 'sleep 300')
for id in "${fillers[@]}" "$r1" "$r2"; do wait_running "$id"; done

note "a resnet50 job that would lose more than its wait pends"
bad=$(submit -p bind -w n1 --gres=gpuslot:2 -t 10 --coloc-profile=resnet50-b64 --wrap 'sleep 300')
wait_for 20 held "$bad" || fail "job $bad not held by elastic slots: $(verdict "$bad"); $(colocctl elastic)"
pends_for_resources() { [ "$(job_state "$1")" = PENDING ] && [ "$(job_field "$1" Reason)" = Resources ]; }
wait_for 20 pends_for_resources "$bad" || fail "job $bad is $(job_state "$bad") ($(job_field "$bad" Reason)), expected PENDING (Resources)"
assert_eq 4 "$(slots n1)" "n1's gpuslot count while only a losing job pends"
colocctl explain "$bad" | grep -q "no shared slot opened: held" || fail "explain $bad: $(colocctl explain "$bad")"

note "a transformer-b16 job that pairs well starts at once, the losing one still pends"
good=$(submit -p bind -w n1 --gres=gpuslot:1 -t 1 --coloc-profile=transformer-b16 --wrap 'sleep 300')
if ! wait_for 20 running "$good"; then
    # Elastic slots do not reorder Slurm's queue: when slurmctld's backfill keeps n1 for the
    # held job ahead, the opened slot waits for it (a documented limit, not a wrong count).
    [ "$(slots n1)" = 5 ] && [[ $(job_field "$good" Reason) == ReqNodeNotAvail* ]] &&
        skip "the slot opened (n1 at 5) but slurmctld's backfill kept n1 for the held job ahead ($(job_field "$good" Reason))"
    fail "job $good not running within 20s (state $(job_state "$good"), reason $(job_field "$good" Reason))"
fi
[ "$(job_state "$bad")" = PENDING ] || fail "job $bad started with the good one: $(job_state "$bad")"
held "$bad" || fail "job $bad no longer held: $(verdict "$bad")"
assert_eq 5 "$(slots n1)" "n1's gpuslot count with the good job in"

note "a resident ends: the pending job starts on the GPUs it freed"
gpus=$(job_gpus "$good")
other=$r1
[[ ",$(job_gpus "$r1")," == *",$gpus,"* ]] && other=$r2
scancel "$other"
wait_running "$bad"
freed=$(job_gpus "$other")
assert_eq "$freed" "$(job_gpus "$bad")" "GPUs of job $bad (those job $other freed)"

note "elastic slots off: every node gets its full count back"
colocctl elastic off >/dev/null || fail "colocctl elastic off failed"
for n in n1 n2 n3 n4; do wait_for 10 slots_at $n 8 || fail "$n: gpuslot $(slots $n) after elastic off"; done
[[ $(gres_of n1) == gpu:4,* ]] || fail "n1 lost its gpu GRES: $(gres_of n1)"

note "back on, then a clean stop of colocd gives them back"
colocctl elastic on >/dev/null || fail "colocctl elastic on failed"
wait_for 10 slots_at n2 4 || fail "n2: gpuslot $(slots n2) with elastic slots back on"
"$cluster" colocd-stop >/dev/null
for n in n1 n2 n3 n4; do slots_at $n 8 || fail "$n: gpuslot $(slots $n) after colocd stopped"; done
# colocd back before the jobs end, so that it hears of the ends.
cp "$ITEST_OUT/colocd.yaml.orig" "$yaml"
"$cluster" colocd-start >/dev/null || fail "colocd did not start again"
# shellcheck disable=SC2046
scancel $(squeue -h -o %i)
colocd_idle() { [ "$(colocctl status | sed -n 's/^running_jobs *= *//p')" = 0 ]; }
wait_for 20 colocd_idle || fail "colocd still counts running jobs after they ended"
echo "elastic slots: a losing job pended, a good one shared at once, the held one started when GPUs freed"
