#!/usr/bin/env bash
# colocd's database on a small tmpfs that the test fills up: real sbatch jobs are still placed by
# colocd (COLOC_DECISION is its decision id, not "local"), `colocctl status` shows the backlog of
# history records it could not write; once the filler is deleted the backlog drains (with a
# deadline) and every job is in the placements table, ended. Then, with the journal on a second
# tmpfs, the disk is filled again and colocd SIGKILLed while acknowledged records are only in
# its journal: the next colocd stores them, once. Last, the database on a loop-mounted ext4 that
# the kernel remounts read-only under colocd (errors=remount-ro, trigger_fs_error): colocd goes on
# placing, and after the admin's repair (stop, e2fsck, mount) the next colocd stores what it owed;
# what was committed before the error outlived it (database_sync: full, the default, syncs each
# commit: with normal, the unsynced commits are lost with the page cache). The cluster's colocd is
# restarted on the tmpfs (its colocd.yaml's database lines, put back afterwards) and back on its
# own history.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin
[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/install-deps)"

cluster=$ITEST_REPO/scripts/slurm-cluster
mnt=$ITEST_OUT/dbfs
jmnt=$ITEST_OUT/journalfs
loopmnt=$ITEST_OUT/ext4fs
image=$ITEST_OUT/ext4.img
yaml=$COLOC_CLUSTER_DIR/colocd.yaml  # scripts/slurm-cluster writes it there
yaml_saved=$ITEST_OUT/colocd.yaml.saved
mkdir -p "$mnt" "$jmnt"
mount -t tmpfs -o size=4m coloc-db-trouble "$mnt" 2>/dev/null || skip "cannot mount a tmpfs here"
mount -t tmpfs -o size=2m coloc-journal "$jmnt" || { umount "$mnt"; skip "cannot mount a second tmpfs here"; }
cp "$yaml" "$yaml_saved"
cleanup() {
    "$cluster" colocd-stop >/dev/null 2>&1 || true
    cp "$yaml_saved" "$yaml"
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    umount "$jmnt" 2>/dev/null || umount -l "$jmnt" 2>/dev/null || true
    umount "$loopmnt" 2>/dev/null || umount -l "$loopmnt" 2>/dev/null || true
    "$cluster" colocd-start >/dev/null 2>&1 || echo "# could not restart the cluster's colocd" >&2
}
trap cleanup EXIT

note "colocd restarted with its history on a 4 MiB tmpfs (journal beside it, 1 MiB), retrying at most every 2 s"
"$cluster" colocd-stop >/dev/null
db=$mnt/coloc.db
sed -i "s|^database: .*|database: $db|" "$yaml"
printf 'database_retry_max_s: 2\ndatabase_journal_reserve_mb: 1\n' >>"$yaml"
"$cluster" colocd-start >/dev/null
[ -f "$db" ] || fail "colocd did not create its history at $db"
assert_eq 1048576 "$(stat -c %s "$db.backlog")" "bytes reserved for the journal beside the database"

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

note "the journal on a second tmpfs; the database's tmpfs full again"
"$cluster" colocd-stop >/dev/null
echo "database_journal: $jmnt/coloc.backlog" >>"$yaml"
"$cluster" colocd-start >/dev/null
dd if=/dev/zero of="$mnt/filler" bs=4096 >/dev/null 2>&1 || true
read -ra kept_ids <<<"$(run_together 2 -p bind -w n1 --gres=gpuslot:1)"
for id in "${kept_ids[@]}"; do
    [[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id has COLOC_DECISION='$(decision_of "$id")' on a full disk"
done
[ "$(status_of database_backlog)" -ge 2 ] || fail "database_backlog='$(status_of database_backlog)' on a full disk"
[ "$(status_of database_journal_used)" -gt 0 ] || fail "database_journal_used='$(status_of database_journal_used)'"

note "colocd SIGKILLed with its backlog unstored; the next colocd stores it from the journal, once"
kill -KILL "$(cat "$COLOCD_PIDFILE")"
wait_for 10 eval '! colocd_running' || fail "colocd survived SIGKILL"
rm -f "$mnt/filler"
"$cluster" colocd-start >/dev/null
kept_in_db() { sqlite3 "$db" "SELECT count(*) FROM placements WHERE job_id IN ($(IFS=,; echo "${kept_ids[*]}"))"; }
assert_eq 2 "$(kept_in_db)" "placements made while the disk was full, stored after the restart"
for id in "${kept_ids[@]}"; do
    assert_eq "ended:$(decision_of "$id")" "$(history_of "$id")" "job $id in the history after the restart"
done
assert_eq 0 "$(status_of database_journal_used)" "journal bytes in use once it is stored"
"$cluster" colocd-stop >/dev/null
"$cluster" colocd-start >/dev/null
assert_eq 2 "$(kept_in_db)" "placements after one more start (each stored once)"
assert_eq 5 "$(sqlite3 "$db" "SELECT count(*) FROM jobs")" "jobs in the history"

note "the database on a loop-mounted ext4 that the kernel remounts read-only under colocd"
if ! command -v mkfs.ext4 >/dev/null || ! command -v e2fsck >/dev/null; then
    note "skipped: no mkfs.ext4 or e2fsck (e2fsprogs)"
    exit 0
fi
"$cluster" colocd-stop >/dev/null
mkdir -p "$loopmnt"
truncate -s 16M "$image" && mkfs.ext4 -q -F "$image"
mount -o loop,errors=remount-ro "$image" "$loopmnt" || { note "skipped: cannot loop-mount an ext4 image here"; exit 0; }
loopdev=$(findmnt -n -o SOURCE "$loopmnt")
trigger=/sys/fs/ext4/${loopdev#/dev/}/trigger_fs_error
[ -w "$trigger" ] || { note "skipped: this kernel has no $trigger"; exit 0; }
db=$loopmnt/coloc.db
sed -i "s|^database: .*|database: $db|" "$yaml"
"$cluster" colocd-start >/dev/null
read -ra ro_ids <<<"$(run_together 1 -p bind -w n1 --gres=gpuslot:1)"
echo 1 >"$trigger"
# Older kernels remount read-only ("ro"); newer ones keep "rw" and add "emergency_ro".
wait_for 5 grep -Eq "$loopmnt ext4 (ro,|.*emergency_ro)" /proc/mounts ||
    fail "$loopmnt was not remounted read-only: $(grep "$loopmnt" /proc/mounts)"
! touch "$loopmnt/write-probe" 2>/dev/null || fail "$loopmnt still takes writes after the error"
read -ra ro_more <<<"$(run_together 2 -p bind -w n1 --gres=gpuslot:1)"
for id in "${ro_more[@]}"; do
    [[ $(decision_of "$id") =~ ^[0-9]+$ ]] || fail "job $id has COLOC_DECISION='$(decision_of "$id")' on a read-only file system"
done
[[ $(status_of database_state) == "unwritable since "* ]] || fail "database_state='$(status_of database_state)'"
[ "$(status_of database_backlog)" -ge 2 ] || fail "database_backlog='$(status_of database_backlog)' on a read-only file system"

note "the admin's repair: colocd stopped, e2fsck, mounted again; the next colocd stores the journal"
"$cluster" colocd-stop >/dev/null
umount "$loopmnt"
e2fsck -fy "$image" >/dev/null 2>&1 || [ $? -le 1 ] || fail "e2fsck could not repair $image"
mount -o loop,errors=remount-ro "$image" "$loopmnt"
"$cluster" colocd-start >/dev/null
ro_ids+=("${ro_more[@]}")
for id in "${ro_ids[@]}"; do
    assert_eq "ended:$(decision_of "$id")" "$(history_of "$id")" "job $id in the history after the repair"
done
assert_eq 3 "$(sqlite3 "$db" "SELECT count(*) FROM placements")" "placements on the repaired file system"
