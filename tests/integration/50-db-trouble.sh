#!/usr/bin/env bash
# colocd's database on a small tmpfs that the test fills up: real sbatch jobs are still placed by
# colocd (COLOC_DECISION is its decision id, not "local"), `colocctl status` shows the backlog of
# history records it could not write; once the filler is deleted the backlog drains (with a
# deadline) and every job is in the placements table, ended. The cluster's colocd is restarted
# on the tmpfs (its colocd.yaml's database line, put back afterwards) and back on its own history.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin
[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/install-deps)"

cluster=$ITEST_REPO/scripts/slurm-cluster
mnt=$ITEST_OUT/dbfs
yaml=$COLOC_CLUSTER_DIR/colocd.yaml  # scripts/slurm-cluster writes it there
yaml_saved=$ITEST_OUT/colocd.yaml.saved
mkdir -p "$mnt"
mount -t tmpfs -o size=2m coloc-db-trouble "$mnt" 2>/dev/null || skip "cannot mount a tmpfs here"
cp "$yaml" "$yaml_saved"
cleanup() {
    "$cluster" colocd-stop >/dev/null 2>&1 || true
    cp "$yaml_saved" "$yaml"
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    "$cluster" colocd-start >/dev/null 2>&1 || echo "# could not restart the cluster's colocd" >&2
}
trap cleanup EXIT

note "colocd restarted with its history on a 2 MiB tmpfs, retrying at most every 2 s"
"$cluster" colocd-stop >/dev/null
db=$mnt/coloc.db
sed -i "s|^database: .*|database: $db|" "$yaml"
echo "database_retry_max_s: 2" >>"$yaml"
"$cluster" colocd-start >/dev/null
[ -f "$db" ] || fail "colocd did not create its history at $db"

status_of() { colocctl -P status | sed -n "s/^$1|//p"; }

note "the tmpfs filled to the last byte"
dd if=/dev/zero of="$mnt/filler" bs=4096 >/dev/null 2>&1 || true
assert_eq 0 "$(df --output=avail -B1 "$mnt" | tail -n 1 | tr -d ' ')" "bytes left on the tmpfs"

note "three jobs at once: colocd places them from memory"
read -ra ids <<<"$(run_together 3 -p bind -w n1 --gres=gpuslot:1)"
for id in "${ids[@]}"; do
    [[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id has COLOC_DECISION='$(decision_of "$id")', expected colocd's decision"
done
backlog=$(status_of database_backlog)
[[ $backlog =~ ^[0-9]+$ ]] && [ "$backlog" -ge 3 ] || fail "colocctl status shows database_backlog='$backlog', expected >= 3"
[[ $(status_of database_state) == "unwritable since "* ]] || fail "database_state='$(status_of database_state)'"
[[ $(status_of database_last_error) == *full* ]] || fail "database_last_error='$(status_of database_last_error)'"
metric=$(colocctl metrics | sed -n 's/^coloc_database_backlog //p')
[ "${metric:-0}" -ge 3 ] || fail "metrics show coloc_database_backlog '$metric', expected >= 3"
in_db() { sqlite3 "$db" "SELECT count(*) FROM placements WHERE job_id IN ($(IFS=,; echo "${ids[*]}"))"; }
assert_eq 0 "$(in_db)" "placements stored while the disk is full"

note "space again: the backlog drains and every job is in the history, placed and ended"
rm -f "$mnt/filler"
backlog_empty() { [ "$(status_of database_backlog)" = 0 ] && [ "$(status_of database_state)" = writable ]; }
wait_for 15 backlog_empty || fail "backlog still $(status_of database_backlog) ($(status_of database_last_error))"
[ "$(status_of database_written_late)" -ge 3 ] || fail "database_written_late='$(status_of database_written_late)'"
assert_eq 3 "$(in_db)" "placements of the three jobs in the history"
history_of() { sqlite3 "$db" "SELECT j.state || ':' || p.decision FROM jobs j JOIN placements p USING (job_id) WHERE job_id = $1"; }
all_ended() {
    local id
    for id in "${ids[@]}"; do [ "$(history_of "$id")" = "ended:$(decision_of "$id")" ] || return 1; done
}
wait_for 15 all_ended || fail "history: $(for id in "${ids[@]}"; do echo -n "$id=$(history_of "$id") "; done)"
