#!/usr/bin/env bash
# Slurm as the source of the layout: every copy of it agrees on the local cluster and `check`
# names a planted disagreement; colocd with a colocd.yaml that names no nodes reads them from
# slurmctld and places jobs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin
yaml=$COLOC_CLUSTER_DIR/colocd.yaml
cluster=$ITEST_REPO/scripts/slurm-cluster

note "colocctl check and colocd --check: the local cluster's copies agree"
colocctl check -c "$yaml" >"$ITEST_OUT/check.out" 2>&1 || { cat "$ITEST_OUT/check.out"; fail "colocctl check failed"; }
grep -q "every copy agrees" "$ITEST_OUT/check.out" || fail "colocctl check said: $(cat "$ITEST_OUT/check.out")"
colocd --check -c "$yaml" >/dev/null 2>&1 || fail "colocd --check failed on the local cluster"

note "a planted mismatch (plugstack slots_per_gpu=3 against gpuslot:8 over gpu:4) is named with file and line"
planted=$ITEST_OUT/planted
mkdir -p "$planted"
cp "$COLOC_CLUSTER_DIR/gres.conf" "$planted/"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$planted/plugstack.conf|" "$SLURM_CONF" >"$planted/slurm.conf"
sed 's/slots_per_gpu=[0-9]*/slots_per_gpu=3/' "$COLOC_CLUSTER_DIR/plugstack.conf" >"$planted/plugstack.conf"
if colocctl check -c "$yaml" --slurm-conf "$planted/slurm.conf" >"$ITEST_OUT/planted.out" 2>&1; then
    fail "colocctl check passed a planted mismatch"
fi
grep -q "^$planted/plugstack.conf:1: slots_per_gpu=3, but $planted/slurm.conf:[0-9]* gives gpuslot:8 over gpu:4" \
    "$ITEST_OUT/planted.out" || fail "colocctl check said: $(cat "$ITEST_OUT/planted.out")"

note "colocd.yaml without nodes: colocd reads them from slurmctld and places a job"
cp "$yaml" "$ITEST_OUT/colocd.yaml.orig"
restore() {
    "$cluster" colocd-stop >/dev/null 2>&1 || true
    cp "$ITEST_OUT/colocd.yaml.orig" "$yaml"
    "$cluster" colocd-start >/dev/null 2>&1 || echo "could not restart colocd with the original colocd.yaml" >&2
}
trap restore EXIT
"$cluster" colocd-stop >/dev/null 2>&1
{ sed '/^node_types:/,$d' "$ITEST_OUT/colocd.yaml.orig"; echo "cluster: coloc"; } >"$yaml"
grep -q "^nodes:" "$yaml" && fail "the test's colocd.yaml still names nodes"
"$cluster" colocd-start >/dev/null 2>&1 || fail "colocd did not start without nodes: $(tail -n 5 "$COLOC_CLUSTER_DIR/log/colocd.log")"
nodes_known() { [ "$(colocctl status | sed -n 's/^nodes *= *//p')" = 4 ]; }
wait_for 20 nodes_known || fail "colocd does not know Slurm's four nodes: $(colocctl status | grep -E '^(nodes|gpus|slots) ')"
grep -q "read 4 nodes (16 GPUs) from Slurm" "$COLOC_CLUSTER_DIR/log/colocd.log" || fail "colocd's log does not say it read the nodes"
read -r id <<<"$(run_together 1 -p bind -w n3 --gres=gpuslot:2)"
[[ $(gpus_of "$id") =~ ^[0-3],[0-3]$ ]] || fail "job $id got CUDA_VISIBLE_DEVICES='$(gpus_of "$id")', expected two GPUs"
[[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id was not placed by colocd: COLOC_DECISION='$(decision_of "$id")'"

note "colocctl -M: the name colocd serves is accepted, another is refused naming both"
colocctl -M coloc status >/dev/null || fail "colocctl -M coloc status failed"
if colocctl -M elsewhere status >"$ITEST_OUT/wrong.out" 2>&1; then fail "colocctl -M elsewhere was served"; fi
grep -q "serves cluster 'coloc', not 'elsewhere'" "$ITEST_OUT/wrong.out" || fail "colocctl -M elsewhere said: $(cat "$ITEST_OUT/wrong.out")"

note "colocd started before slurmctld waits for it in rounds, then serves Slurm's nodes"
"$cluster" colocd-stop >/dev/null 2>&1
ctld=$(cat "$COLOC_CLUSTER_DIR/pid/slurmctld.pid")
kill "$ctld"
ctld_gone() { ! kill -0 "$ctld"; }
wait_for 30 ctld_gone || fail "slurmctld $ctld did not stop"
env COLOC_CLUSTER_DAEMON="$COLOC_CLUSTER_DIR" setsid colocd -f -c "$yaml" </dev/null >>"$COLOC_CLUSTER_DIR/log/colocd.log" 2>&1 &
echo $! >"$COLOC_CLUSTER_DIR/pid/colocd.pid"
waiting_logged() { grep -q "waiting for slurmctld: cannot read the nodes" "$COLOC_CLUSTER_DIR/log/colocd.log"; }
wait_for 30 waiting_logged || fail "colocd did not say it waits for slurmctld: $(tail -n 3 "$COLOC_CLUSTER_DIR/log/colocd.log")"
env COLOC_CLUSTER_DAEMON="$COLOC_CLUSTER_DIR" slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start again"
wait_for 30 nodes_known || fail "colocd did not serve Slurm's nodes once slurmctld answered"
