#!/usr/bin/env bash
# Admission end to end, on by default: with every GPU busy and two transformer residents on n1
# (each on two GPUs of its own), job_submit.lua gates each timed bind job (BeginTime) and colocd
# weighs it. A resnet50 job whose pairing with the residents loses more than its wait stays
# pending (Reason BeginTime, its lease renewed, its priority Slurm's), while a transformer-b16
# job submitted after it, whose pairing pays, starts at once on the node colocd chose (its node
# list). When a resident ends, the held job is released onto the GPUs it freed. Killed colocd
# never leaves a job held: a held job starts by itself once its lease runs out, and no node is
# drained or changed. On an idle cluster, a timed job takes colocd's standing offer: job_submit.lua
# gives it an idle node at submission, and Slurm starts it at once, ungated; a clean stop of
# colocd withdraws the offers.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
cluster=$ITEST_REPO/scripts/slurm-cluster

own_colocd_yaml
wait_for 20 no_jobs || fail "jobs of an earlier test still listed: $(squeue -h -o '%i %T' | tr '\n' ' ')"
grep -q "^admission" "$yaml" && fail "the cluster's colocd.yaml sets admission: the default is under test"
# Only quicker rounds and a shorter lease than the defaults, so that the test is short.
cat >>"$yaml" <<'EOF2'
admission:
  interval_s: 1
  lease_s: 20
EOF2
"$cluster" colocd-stop >/dev/null
"$cluster" colocd-start >/dev/null || fail "colocd did not start"
[ "$(colocctl status | sed -n 's/^admission *= *//p')" = on ] || fail "admission is not on by default: $(colocctl status | grep admission)"

running() { [ "$(job_state "$1")" = RUNNING ]; }
wait_running() { wait_for "${2:-20}" running "$1" || fail "job $1 not running within ${2:-20}s (state $(job_state "$1"), reason $(job_field "$1" Reason))"; }
verdict() { colocctl admission --json | jq -c --argjson id "$1" '.admission.pending[] | select(.job_id == $id)'; }
held() { v=$(verdict "$1") && [ -n "$v" ] && [ "$(jq -r .released <<<"$v")" = false ] && [[ $(jq -r .why <<<"$v") == held* ]]; }
pends_for_begin() { [ "$(job_state "$1")" = PENDING ] && [ "$(job_field "$1" Reason)" = BeginTime ]; }
job_gpus() { colocctl explain --json "$1" | jq -r '.explain[0].gpus | join(",")'; }
priority() { squeue -h -j "$1" -o %Q; }
nodes_untouched() { # no node drained, every node at its full count
    local n
    for n in n1 n2 n3 n4; do
        [[ $(scontrol show node -o "$n") == *"Gres=gpu:4,gpuslot:8 "* ]] || return 1
        [[ $(scontrol show node -o "$n" | tr ' ' '\n' | sed -n 's/^State=//p') != *DRAIN* ]] || return 1
    done
}

note "an idle cluster: timed jobs take colocd's standing offers and start at submission, ungated"
offers=/run/coloc/offers
has_offers() { grep -q '^offer n' "$offers"; }
wait_for 10 has_offers || fail "colocd wrote no standing offers in $offers: $(cat "$offers" 2>&1)"
colocctl admission | grep -q "^standing offers in $offers: n[1-4] 4 GPUs, " || fail "colocctl admission: $(colocctl admission)"
o1=$(submit -p bind --gres=gpuslot:3 -t 5 --coloc-profile=resnet50-b64 --wrap 'sleep 300')
o2=$(submit -p bind --gres=gpuslot:3 -t 5 --coloc-profile=resnet50-b64 --wrap 'sleep 300')
for id in "$o1" "$o2"; do
    wait_running "$id" 10
    [[ $(scontrol show job -o "$id") == *"AdminComment=coloc_profile=resnet50-b64 coloc_offer "* ]] ||
        fail "job $id did not take an offer: $(scontrol show job -o "$id")"
    assert_eq "$(job_field "$id" ReqNodeList)" "$(job_field "$id" NodeList)" "node of job $id (the offer's)"
    started=$(($(date -d "$(job_field "$id" StartTime)" +%s) - $(date -d "$(job_field "$id" SubmitTime)" +%s)))
    [ "$started" -le 1 ] || fail "job $id started ${started} s after its submission"
done
# 3 GPUs each on nodes of 4: each offer was taken once.
[ "$(job_field "$o1" NodeList)" != "$(job_field "$o2" NodeList)" ] || fail "jobs $o1 and $o2 both took $(job_field "$o1" NodeList)"
# Launched before any read of the queue showed them: colocd's next read gives their history
# Slurm's time limit, which a replay of it waits by as colocd did.
for id in "$o1" "$o2"; do
    timed() { [ "$(colocctl history -j "$id" --json | jq '.history[0].time_limit_s')" = 300 ]; }
    wait_for 10 timed || fail "no time limit in colocd's history of job $id: $(colocctl history -j "$id" --json)"
    assert_eq "$(date -d "$(job_field "$id" SubmitTime)" +%s)" "$(colocctl history -j "$id" --json | jq '.history[0].submit')" \
        "submit time in colocd's history of job $id"
done
scancel "$o1" "$o2"
wait_for 20 no_jobs || fail "jobs $o1 $o2 still listed"

note "every GPU busy: fillers on n2-n4, two transformer residents on n1"
fillers=()
for n in n2 n3 n4; do
    fillers+=("$(submit -p bind -w $n --gres=gpuslot:4 -t 30 --coloc-profile=resnet50-b64 --wrap 'sleep 300')")
done
r1=$(submit -p bind -w n1 --gres=gpuslot:2 -t 3 --coloc-profile=transformer-b64 --wrap 'sleep 300')
r2=$(submit -p bind -w n1 --gres=gpuslot:2 -t 3 --coloc-profile=transformer-b64 --wrap 'sleep 300')
for id in "${fillers[@]}" "$r1" "$r2"; do wait_running "$id"; done
scontrol show job -o "$r1" | grep -q "AdminComment=.*coloc_gate" || fail "job_submit.lua did not gate timed job $r1: $(scontrol show job -o "$r1")"

note "a resnet50 job whose pairing loses more than its wait is held"
bad=$(submit -p bind --gres=gpuslot:2 -t 10 --coloc-profile=resnet50-b64 --wrap 'sleep 300')
wait_for 20 held "$bad" || fail "job $bad not held: $(verdict "$bad"); $(colocctl admission)"
wait_for 10 pends_for_begin "$bad" || fail "job $bad is $(job_state "$bad") ($(job_field "$bad" Reason)), expected PENDING (BeginTime)"
colocctl explain "$bad" | grep -q "while pending, admission: held" || fail "explain $bad: $(colocctl explain "$bad")"
bad_priority=$(priority "$bad")

note "a transformer-b16 job behind it, whose pairing pays, starts at once where colocd chose"
good=$(submit -p bind --gres=gpuslot:1 -t 1 --coloc-profile=transformer-b16 --wrap 'sleep 300')
wait_running "$good"
assert_eq n1 "$(job_field "$good" NodeList)" "node of job $good"
assert_eq n1 "$(job_field "$good" ReqNodeList)" "node list colocd gave job $good"
pends_for_begin "$bad" || fail "job $bad started with the good one: $(job_state "$bad") ($(job_field "$bad" Reason))"
# What a replay of colocd's history waits and plans by: Slurm's own figures, read while it pended.
hist=$(colocctl history -j "$good" --json)
assert_eq "$(date -d "$(job_field "$good" SubmitTime)" +%s)" "$(jq '.history[0].submit' <<<"$hist")" "submit time in colocd's history of job $good"
assert_eq 60 "$(jq '.history[0].time_limit_s' <<<"$hist")" "time limit in colocd's history of job $good"

note "Slurm's queue order stands: the held job keeps its priority, above the job behind it"
sleep_until_renewed() { [ "$(colocctl admission --json | jq '.admission.slurm_updates_sent')" -ge 4 ]; }
wait_for 20 sleep_until_renewed || fail "no lease renewed: $(colocctl admission)"
assert_eq "$bad_priority" "$(priority "$bad")" "priority of job $bad after its lease was renewed"
# Slurm's order: priority, then submission (24.11's default multifactor gives these jobs equal ones).
good_priority=$(priority "$good")
[ "$bad_priority" -gt "$good_priority" ] || { [ "$bad_priority" = "$good_priority" ] && [ "$bad" -lt "$good" ]; } ||
    fail "job $bad (priority $bad_priority) not ahead of job $good (priority $good_priority) in Slurm's order"

note "the arrivals the rule expects are the bind jobs colocd saw submitted, over its arrival window"
arrivals=$(colocctl admission --json | jq -c '.admission.arrivals')
assert_eq 86400 "$(jq '.window_s' <<<"$arrivals")" "arrival window (colocd.yaml's default)"
jq -e '.jobs_per_hour > 0 and .counted_s > 0 and .seen_s >= .counted_s' <<<"$arrivals" >/dev/null ||
    fail "the jobs submitted were not counted as arrivals: $arrivals"
colocctl admission | grep -q "^arrivals expected: .* bind jobs/h" || fail "colocctl admission: $(colocctl admission)"

note "a resident ends: the held job is released onto the GPUs it freed"
gpus=$(job_gpus "$good")
other=$r1
[[ ",$(job_gpus "$r1")," == *",$gpus,"* ]] && other=$r2
scancel "$other"
wait_running "$bad"
assert_eq "$(job_gpus "$other")" "$(job_gpus "$bad")" "GPUs of job $bad (those job $other freed)"
assert_eq n1 "$(job_field "$bad" NodeList)" "node of job $bad"

note "a clean stop of colocd releases the job it holds at once"
bad2=$(submit -p bind --gres=gpuslot:2 -t 10 --coloc-profile=resnet50-b64 --wrap 'sleep 300')
wait_for 20 held "$bad2" || fail "job $bad2 not held: $(verdict "$bad2")"
"$cluster" colocd-stop >/dev/null
# Well inside the lease (20 s, renewed once half of it is gone): the release did it.
wait_for 8 running "$bad2" || fail "job $bad2 still $(job_state "$bad2") ($(job_field "$bad2" Reason)) after colocd stopped"
[ ! -e "$offers" ] || fail "colocd stopped and left its standing offers: $(cat "$offers")"
"$cluster" colocd-start >/dev/null || fail "colocd did not start again"
scancel "$bad2"

note "colocd killed while it holds a job: the job starts by itself when its lease runs out"
bad3=$(submit -p bind --gres=gpuslot:2 -t 10 --coloc-profile=resnet50-b64 --wrap 'sleep 300')
wait_for 20 held "$bad3" || fail "job $bad3 not held: $(verdict "$bad3")"
kill -9 "$(cat "$COLOCD_PIDFILE")"
wait_for 40 running "$bad3" || fail "job $bad3 still $(job_state "$bad3") ($(job_field "$bad3" Reason)) 40 s after colocd died"
nodes_untouched || fail "a node was changed: $(scontrol show node -o | cut -c1-200)"
# colocd back before the jobs end, so that it hears of the ends.
"$cluster" colocd-start >/dev/null || fail "colocd did not start again"
echo "admission: a losing job was held and a good one behind it started at once on colocd's node; the held one started when GPUs freed, and by itself when colocd died"
