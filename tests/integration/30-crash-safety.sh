#!/usr/bin/env bash
# colocd killed with SIGKILL at random moments while several concurrent clients send it place,
# started and ended requests (real munge credentials): after every restart each acknowledged
# record is in SQLite, PRAGMA integrity_check is ok, and colocd serves again within a second.
# This colocd is the test's own (own socket and database, no reconciliation: its jobs are not
# Slurm's); the cluster provides munge.
source "$(dirname "$0")/lib.sh"

build_dir=${COLOC_BUILD_DIR:-$ITEST_REPO/build}
load=$build_dir/tests/coloc-load
[ -x "$load" ] || skip "$load not built (make BUILD=... $load)"
colocd_bin=$(command -v colocd) || fail "colocd is not on PATH"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/install-deps)"
kills=${COLOC_CRASH_KILLS:-10}
clients=${COLOC_CRASH_CLIENTS:-4}
serve_limit_ms=1000
# An ASan + UBSan colocd starts several times slower; that run judges memory safety, not speed.
[ -z "${COLOC_SANITIZED_DIR-}" ] || serve_limit_ms=3000

dir=$ITEST_OUT
# This test's own colocd has no CURVE key (coloc-load speaks plain): colocctl asks it without one.
unset COLOC_SERVER_KEY
rm -rf "$dir/acks" "$dir/stop" "$dir"/crash.db*
mkdir -p "$dir/acks"
endpoint=ipc://$dir/crash.sock
db=$dir/crash.db
cat >"$dir/colocd.yaml" <<EOF
listen: [ "$endpoint" ]
database: $db
munge_socket: $COLOC_MUNGE_SOCKET
admins: [root]
reconcile_interval_s: 0
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-4]", type: quad }
EOF

colocd_pid= load_pid=
cleanup() {
    touch "$dir/stop"
    [ -z "$colocd_pid" ] || kill -KILL "$colocd_pid" 2>/dev/null || true
    [ -z "$load_pid" ] || wait "$load_pid" 2>/dev/null || true
}
trap cleanup EXIT

# start_colocd: starts it (in this shell, so that $colocd_pid is kept) and sets serve_ms to the
# time until it answered `colocctl status`.
start_colocd() {
    local t0
    t0=$(now_us)
    "$colocd_bin" -c "$dir/colocd.yaml" -f </dev/null >>"$dir/colocd.log" 2>&1 &
    colocd_pid=$!
    # The plain colocctl (not a sanitized one): its own start-up is part of the time measured.
    "$build_dir/colocctl" --endpoint "$endpoint" --timeout 3000 status >/dev/null ||
        fail "colocd did not answer within 3 s of its start (see $dir/colocd.log)"
    serve_ms=$((($(now_us) - t0) / 1000))
}

# check_acks FILE: every acknowledged record is stored; prints the number of records checked.
check_acks() {
    awk 'NF >= 3 { print $1 " " $2 " " $3 " " ($4 == "" ? 0 : $4) }' "$1" >"$1.import"
    local out missing
    out=$(sqlite3 "$db" <<SQL
.bail on
CREATE TEMP TABLE acks (kind TEXT, job INTEGER, node TEXT, decision INTEGER);
.separator " "
.import $1.import acks
SELECT 'checked ' || count(*) FROM acks;
SELECT 'missing place ' || count(*) FROM acks a WHERE kind = 'place' AND NOT EXISTS
    (SELECT 1 FROM placements p WHERE p.job_id = a.job AND p.node = a.node AND p.decision = a.decision);
SELECT 'missing started ' || count(*) FROM acks a WHERE kind = 'started' AND NOT EXISTS
    (SELECT 1 FROM jobs j WHERE j.job_id = a.job AND j.start IS NOT NULL);
SELECT 'missing ended ' || count(*) FROM acks a WHERE kind = 'ended' AND NOT EXISTS
    (SELECT 1 FROM placements p JOIN jobs j ON j.job_id = p.job_id
     WHERE p.job_id = a.job AND p.node = a.node AND p.ended IS NOT NULL AND j.state = 'ended');
SELECT 'integrity ' || group_concat(integrity_check, '; ') FROM pragma_integrity_check;
SQL
    ) || fail "sqlite3 could not read $db: $out"
    missing=$(awk '/^missing/ { n += $3 } END { print n + 0 }' <<<"$out")
    [ "$missing" = 0 ] || fail "acknowledged records not in the database: $(grep '^missing' <<<"$out" | tr '\n' ' ')"
    grep -qx 'integrity ok' <<<"$out" || fail "PRAGMA integrity_check: $(grep '^integrity' <<<"$out")"
    sed -n 's/^checked //p' <<<"$out"
}

start_colocd
"$load" --endpoint "$endpoint" --acks "$dir/acks" --clients "$clients" --duration-s 300 --timeout-ms 500 \
    --stop-file "$dir/stop" >"$dir/load.out" 2>"$dir/load.err" &
load_pid=$!

worst_ms=0 checked=0
for ((k = 1; k <= kills; k++)); do
    # A random moment: 0.2 to 0.9 s into this colocd's life, under load.
    sleep "0.$((RANDOM % 8 + 2))"
    kill -KILL "$colocd_pid"
    wait "$colocd_pid" 2>/dev/null || true
    colocd_pid=
    # What colocd acknowledged before it died: every reply came before the kill.
    cat "$dir"/acks/*.acks >"$dir/acked-$k" 2>/dev/null || : >"$dir/acked-$k"
    start_colocd
    [ "$serve_ms" -le $serve_limit_ms ] || fail "restart $k: colocd served after $serve_ms ms (limit $serve_limit_ms ms)"
    [ "$serve_ms" -le "$worst_ms" ] || worst_ms=$serve_ms
    checked=$(check_acks "$dir/acked-$k")
    note "kill $k: $checked acknowledged records checked, serving again after $serve_ms ms"
done

touch "$dir/stop"
wait "$load_pid" || fail "the load clients had requests refused: $(cat "$dir/load.err")"
load_pid=
read -r _ places starts ends _ retries _ refused <"$dir/load.out"
cat "$dir"/acks/*.acks >"$dir/acked-final"
checked=$(check_acks "$dir/acked-final")
[ "$places" -gt $((kills * 2)) ] || fail "too little load to prove anything: $places placements acknowledged"
note "kills survived: $kills; records checked after the last restart: $checked" \
    "(place $places, started $starts, ended $ends, refused $refused; $retries requests sent again);" \
    "slowest restart $worst_ms ms"
