#!/usr/bin/env bash
# Node steering end to end: with n1 and n2 busy with a communication-heavy two-node job, colocd
# raises their Slurm Weight and tags the quiet nodes with coloc_quietnet, and a new
# communication-heavy job lands on n3 or n4 (also when it asks with --prefer). Switched off
# (`colocctl steering off`, admins only), the admin's weights and features come back and the
# same job lands on n1 by Slurm's own order; what an admin changed while steering was on stays.
# A clean stop of colocd also gives them back.
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
cluster=$ITEST_REPO/scripts/slurm-cluster

# For this test only: n1-n2 and n3-n4 on two leaf links, steering on with a round every second.
restore_more() {
    scontrol update NodeName=n3 AvailableFeatures= ActiveFeatures= 2>/dev/null
    scontrol update NodeName=n4 Weight=1 AvailableFeatures= ActiveFeatures= 2>/dev/null
}
own_colocd_yaml
grep -q 'names: "n\[1-4\]", type: quad, link: leaf1' "$yaml" || fail "unexpected node list in $yaml"
sed -i 's/names: "n\[1-4\]", type: quad, link: leaf1 }/names: "n[1-2]", type: quad, link: leaf1 }\n  - { names: "n[3-4]", type: quad, link: leaf2 }/' "$yaml"
cat >>"$yaml" <<'EOF'
steering:
  enabled: true
  interval_s: 1
EOF
# An admin's feature on n3, set before colocd reads the node, must survive steering.
scontrol update NodeName=n3 AvailableFeatures=bigmem ActiveFeatures=bigmem || fail "cannot set a feature on n3"
"$cluster" colocd-stop >/dev/null
"$cluster" colocd-start >/dev/null || fail "colocd did not start with steering on"

node_field() { # NODE FIELD
    scontrol show node -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
weight() { node_field "$1" Weight; }
features() { node_field "$1" AvailableFeatures; }
has_feature() { [[ ",$(features "$1")," == *",$2,"* ]]; }
running_on() { # ID: the node list once RUNNING
    [ "$(job_state "$1")" = RUNNING ] || return 1
    job_field "$1" NodeList
}
wait_running() { # ID
    wait_for 30 running_on "$1" || fail "job $1 not running within 30s (state $(job_state "$1"))"
    running_on "$1"
}
gone() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
cancel() { # ID
    scancel "$1"
    wait_for 20 gone "$1" || fail "job $1 still listed 20s after scancel"
}
admin_settings() { # [N4_WEIGHT]: every node back at its admin's weight without coloc features
    local n
    for n in n1 n2 n3 n4; do
        [ "$(weight "$n")" = "$([ "$n" = n4 ] && echo "${1:-1}" || echo 1)" ] || return 1
        [[ $(features "$n") != *coloc_* ]] || return 1
    done
}

note "before any job: every node is quiet, none is heavier"
steered_idle() { has_feature n1 coloc_quietnet && has_feature n4 coloc_quietnet && [ "$(weight n1)" = 1 ]; }
wait_for 20 steered_idle || fail "idle cluster: n1 Weight=$(weight n1) features=$(features n1), n4 features=$(features n4)"

note "n1 and n2 busy with a communication-heavy two-node job"
load=$(submit -p bind -N 2 -w n1,n2 --gres=gpuslot:4 --coloc-profile=gpt-1b-2node --wrap 'srun sleep 300')
assert_eq n[1-2] "$(wait_running "$load")" "nodes of the load job"
steered() {
    [ "$(weight n1)" -gt "$(weight n3)" ] && [ "$(weight n2)" -gt "$(weight n4)" ] &&
        has_feature n3 coloc_quietnet && has_feature n4 coloc_quietnet &&
        ! has_feature n1 coloc_quietnet && ! has_feature n2 coloc_quietnet && has_feature n3 bigmem
}
wait_for 20 steered || fail "not steered within 20s: $(for n in n1 n2 n3 n4; do printf '%s Weight=%s Features=%s; ' "$n" "$(weight "$n")" "$(features "$n")"; done)"
note "weights n1..n4: $(weight n1) $(weight n2) $(weight n3) $(weight n4); n3 features $(features n3)"

note "steering on: a new communication-heavy job lands on n3 or n4"
job=$(submit -p bind -N 1 --gres=gpuslot:2 --coloc-profile=gpt-1b-2node --wrap 'sleep 300')
node=$(wait_running "$job")
[[ $node == n3 || $node == n4 ]] || fail "steered job $job landed on $node, expected n3 or n4"
advice=$(colocctl explain --json "$job" | jq -c '.explain[0].steering')
[ "$(jq -r .followed <<<"$advice")" = true ] || fail "explain of job $job does not record the advice it followed: $advice"
cancel "$job"

note "steering on: --prefer=coloc_quietnet lands on n3 or n4"
job=$(submit -p bind -N 1 --gres=gpuslot:2 --prefer=coloc_quietnet --wrap 'sleep 300')
node=$(wait_running "$job")
[[ $node == n3 || $node == n4 ]] || fail "job $job with --prefer=coloc_quietnet landed on $node"
cancel "$job"

note "only admins may switch steering"
out=$(runuser -u nobody -- env -i PATH="$PATH" COLOC_ENDPOINT="$COLOC_ENDPOINT" \
    COLOC_MUNGE_SOCKET="$COLOC_MUNGE_SOCKET" COLOC_SERVER_KEY="${COLOC_SERVER_KEY-}" colocctl steering off 2>&1) && fail "nobody switched steering off: $out"
[[ $out == *"admins"* ]] || fail "refusal does not say why: $out"
[ "$(colocctl steering --json | jq -r .steering.enabled)" = true ] || fail "steering no longer on after a refused switch"

note "an admin changes n4 while it is steered: the change is the admin's from then on"
scontrol update NodeName=n4 Weight=7 AvailableFeatures=ssd ActiveFeatures=ssd || fail "cannot update n4"

note "steering off: the admin's weights and features come back"
colocctl steering off >/dev/null || fail "colocctl steering off failed"
wait_for 20 admin_settings 7 || fail "after steering off: $(for n in n1 n2 n3 n4; do printf '%s Weight=%s Features=%s; ' "$n" "$(weight "$n")" "$(features "$n")"; done)"
assert_eq bigmem "$(features n3)" "n3's own feature after steering off"
assert_eq ssd "$(features n4)" "the feature the admin gave n4 while it was steered"
scontrol update NodeName=n4 Weight=1 AvailableFeatures= ActiveFeatures= || fail "cannot reset n4"

note "steering off: the same job lands by Slurm's order, on n1"
job=$(submit -p bind -N 1 --gres=gpuslot:2 --coloc-profile=gpt-1b-2node --wrap 'sleep 300')
node=$(wait_running "$job")
[[ $node == n1 || $node == n2 ]] || fail "unsteered job $job landed on $node, expected Slurm's first nodes"
cancel "$job"

note "steering back on, then a clean stop of colocd gives the nodes back"
colocctl steering on >/dev/null || fail "colocctl steering on failed"
wait_for 20 steered || fail "not steered again within 20s"
"$cluster" colocd-stop >/dev/null
admin_settings || fail "after colocd stopped: $(for n in n1 n2 n3 n4; do printf '%s Weight=%s Features=%s; ' "$n" "$(weight "$n")" "$(features "$n")"; done)"
assert_eq bigmem "$(features n3)" "n3's own feature after colocd stopped"
# colocd back before the load ends, so that it hears of the end.
"$cluster" colocd-start >/dev/null || fail "colocd did not start again"
cancel "$load"
colocd_idle() { [ "$(colocctl status | sed -n 's/^running_jobs *= *//p')" = 0 ]; }
wait_for 20 colocd_idle || fail "colocd still counts running jobs after the load ended"
scontrol update NodeName=n3 AvailableFeatures= ActiveFeatures= 2>/dev/null || true
echo "steering: weights and features followed the load, and came back"
