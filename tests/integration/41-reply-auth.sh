#!/usr/bin/env bash
# Authenticated replies (spank_coloc(8), THREAT MODEL): with colocd stopped, a server that is not
# colocd binds colocd's endpoint. One is a colocd with a key of its own; the other speaks no
# CURVE and records every byte that reaches it. Neither is sent a request: the plugin refuses it
# at the handshake and the job starts with the plugin's fallback; colocctl exits non-zero naming
# the endpoint and the reason.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-gpus.sh"
require_colocd
require_plugin
command -v python3 >/dev/null || skip "python3 is not installed"
[ -n "${COLOC_SERVER_KEY:-}" ] && [ -r "$COLOC_SERVER_KEY" ] ||
    skip "the cluster's colocd has no CURVE key (COLOC_SERVER_KEY)"
sock=${COLOC_ENDPOINT#ipc://}
[ "$sock" != "$COLOC_ENDPOINT" ] || skip "colocd's endpoint $COLOC_ENDPOINT is not ipc://"
cluster=$ITEST_REPO/scripts/slurm-cluster
rogue=$ITEST_OUT/rogue-$$
mkdir -p "$rogue"
rogue_pid=
stop_rogue() {
    if [ -n "$rogue_pid" ]; then kill "$rogue_pid" 2>/dev/null || true; wait "$rogue_pid" 2>/dev/null || true; fi
    rogue_pid=
    rm -f "$sock"
}
trap 'stop_rogue; "$cluster" colocd-start >/dev/null' EXIT
"$cluster" colocd-stop >/dev/null

# A bind job on n4 while the rogue holds the endpoint: it must start with a local choice, and the
# plugin must say why it did not use the reply.
job_with_fallback() { # WHAT
    : >"$(slurmd_log n4)"
    local id
    read -r id <<<"$(run_together 1 -p bind -w n4 --gres=gpuslot:1)"
    assert_eq local "$(decision_of "$id")" "COLOC_DECISION of bind job $id against $1"
    grep -q 'coloc: .*CURVE handshake' "$(slurmd_log n4)" ||
        fail "$1: the plugin logged no refused handshake on n4 (see $(slurmd_log n4))"
}

# colocctl against the rogue: non-zero, one line naming the endpoint and the handshake.
colocctl_refuses() { # WHAT
    local err rc=0
    err=$(colocctl status 2>&1 >/dev/null) || rc=$?
    [ "$rc" -ne 0 ] || fail "colocctl status against $1 exited 0"
    [[ "$err" == *"$COLOC_ENDPOINT"* && "$err" == *"CURVE handshake"* ]] ||
        fail "colocctl's error against $1 names neither the endpoint nor the handshake: $err"
    note "colocctl against $1: exit $rc: $err"
}

note "a colocd with another key on colocd's endpoint"
sed -e "s|^server_key_file:.*|server_key_file: $rogue/other.key|" -e "s|^database:.*|database: $rogue/rogue.db|" \
    -e "s|^pidfile:.*|pidfile: $rogue/colocd.pid|" "$COLOC_CLUSTER_DIR/colocd.yaml" >"$rogue/colocd.yaml"
grep -q "^server_key_file: $rogue/other.key" "$rogue/colocd.yaml" || fail "colocd.yaml names no server_key_file"
colocd -c "$rogue/colocd.yaml" -f </dev/null >"$rogue/colocd.log" 2>&1 &
rogue_pid=$!
rogue_status() { colocctl --server-key "$rogue/other.key.pub" --json status 2>/dev/null; }
wait_for 15 rogue_status >/dev/null || fail "the rogue colocd did not answer with its own key (see $rogue/colocd.log)"
before=$(rogue_status | jq '.status.requests')
job_with_fallback "a colocd with another key"
colocctl_refuses "a colocd with another key"
after=$(rogue_status | jq '.status.requests')
# Only our own two status requests reached it: no place request, no credential.
assert_eq $((before + 1)) "$after" "requests the rogue colocd saw besides our own status requests"
stop_rogue

note "a server that speaks no CURVE, recording every byte"
python3 - "$sock" "$rogue/bytes" "$rogue/ready" <<'PY' &
import os, socket, sys, threading
path, record, ready = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o666)
srv.listen(16)
open(ready, "w").close()
lock = threading.Lock()
def serve(conn):
    # ZMTP 3.0 greeting, NULL mechanism: an honest plain ZeroMQ server would send just this.
    conn.sendall(b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x01" + b"\x00" * 31)
    while True:
        data = conn.recv(65536)
        if not data:
            return
        with lock, open(record, "ab") as f:
            f.write(data)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
rogue_pid=$!
wait_for 10 test -e "$rogue/ready" || fail "the recording server did not start"
: >"$rogue/bytes"
job_with_fallback "a server without CURVE"
colocctl_refuses "a server without CURVE"
[ -s "$rogue/bytes" ] || fail "no client reached the recording server: the test proves nothing"
for leak in MUNGE: '"cred"' '"op"' '"job_id"' nonce; do
    ! grep -qaF "$leak" "$rogue/bytes" || fail "the recording server received $leak: a request reached it"
done
note "the recording server got $(stat -c %s "$rogue/bytes") bytes: greetings and handshakes, no request"
