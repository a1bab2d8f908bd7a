#!/usr/bin/env bash
# Authorisation, as an ordinary user created for the test (removed afterwards): the user sees
# their own jobs only, cannot report place/started/ended (what only slurmstepd may do) or
# iteration times for another user's job, and a replayed or expired munge credential is refused.
# Counts every refusal it proves in "refusals tested: N".
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
[ "$(id -u)" = 0 ] || skip "needs root to create a throwaway user"
send=${COLOC_BUILD_DIR:-$ITEST_REPO/build}/tests/coloc-send
[ -x "$send" ] || skip "$send not built (make integration-test builds it)"

user=coloc-test-user
if ! id "$user" >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user" ||
        fail "useradd $user failed"
fi
trap 'userdel "$user" >/dev/null 2>&1 || true' EXIT
uid=$(id -u "$user")

# Everything the user needs must be reachable by others: state dir, munge socket, colocd socket.
userout=$ITEST_OUT/user
mkdir -p "$userout"
chmod 1777 "$userout"
as_user() {
    runuser -u "$user" -- env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" COLOC_ENDPOINT="$COLOC_ENDPOINT" \
        COLOC_MUNGE_SOCKET="$COLOC_MUNGE_SOCKET" COLOC_SERVER_KEY="${COLOC_SERVER_KEY-}" ASAN_OPTIONS="${ASAN_OPTIONS-}" \
        UBSAN_OPTIONS="${UBSAN_OPTIONS-}" "$@"
}
as_user colocctl status >/dev/null || fail "the test user cannot reach colocd: $(as_user colocctl status 2>&1)"

refusals=0
# refused CODE JSON [coloc-send options]: as the user, the request is refused with CODE.
refused_as_user() {
    local code=$1 body=$2 reply
    shift 2
    reply=$(as_user "$send" "$@" "$COLOC_ENDPOINT" "$body" | tail -n 1) || fail "coloc-send $body: no reply"
    assert_eq "$code" "$(jq -r '.error.code // "ok"' <<<"$reply")" "reply to $body as $user ($reply)"
    refusals=$((refusals + 1))
}
known_running() { # ID: colocd counts the job as running (as root sees it)
    colocctl jobs --running --json | jq -e --argjson id "$1" '.jobs[] | select(.job_id == $id)' >/dev/null
}

note "a job of root's and one of $user's run on n1, placed by colocd"
hold='for _ in $(seq 600); do [ -e '"$ITEST_OUT"'/release ] && exit 0; sleep 0.1; done'
theirs=$(submit -p bind -w n1 --gres=gpuslot:1 --wrap "$hold")
mine=$(as_user sbatch --parsable -p bind -w n1 --gres=gpuslot:1 -o "$userout/%j.out" --wrap "$hold") ||
    fail "sbatch as $user failed"
mine=${mine%%;*}
release() { touch "$ITEST_OUT/release"; }
trap 'release; userdel "$user" >/dev/null 2>&1 || true' EXIT
wait_for 30 known_running "$theirs" || fail "colocd never counted root's job $theirs as running"
wait_for 30 known_running "$mine" || fail "colocd never counted $user's job $mine as running"

note "$user sees their own job only (jobs, history, explain)"
assert_eq "$mine" "$(as_user colocctl jobs --json | jq -r '[.jobs[].job_id] | join(" ")')" "jobs $user sees"
assert_eq "$uid" "$(as_user colocctl jobs --json | jq -r '[.jobs[].uid] | unique | join(" ")')" "uids in $user's jobs"
assert_eq "$mine" "$(as_user colocctl history --json | jq -r '[.history[].job_id] | join(" ")')" "history $user sees"
as_user colocctl history -j "$mine" >/dev/null || fail "$user cannot read the history of their own job"
if as_user colocctl history -j "$theirs" >/dev/null 2>&1; then fail "$user read the history of root's job"; fi
refusals=$((refusals + 1))
if as_user colocctl explain "$theirs" >/dev/null 2>&1; then fail "$user read colocd's decision for root's job"; fi
refusals=$((refusals + 1))
refused_as_user not_found '{"op":"history","job_id":'"$theirs"'}'
refused_as_user not_found '{"op":"explain","job_id":'"$theirs"'}'
root_sees=$(colocctl jobs --json | jq -r '[.jobs[].job_id] | sort | join(" ")')
[[ " $root_sees " == *" $theirs "* && " $root_sees " == *" $mine "* ]] || fail "root (an admin) sees '$root_sees'"

note "$user cannot pretend to be slurmstepd: place, started, ended are refused, for any job"
refused_as_user forbidden '{"op":"place","job_id":999001,"job_uid":'"$uid"',"node":"n1","mode":"bind","slots":8}'
refused_as_user forbidden '{"op":"place","job_id":'"$theirs"',"node":"n2","mode":"bind","slots":1}'
refused_as_user forbidden '{"op":"started","job_id":'"$theirs"',"node":"n1","decision":0,"gpus":[0,1,2,3]}'
refused_as_user forbidden '{"op":"ended","job_id":'"$theirs"',"node":"n1","exit_status":0}'
refused_as_user forbidden '{"op":"ended","job_id":'"$mine"',"node":"n1","exit_status":0}'
refused_as_user forbidden '{"op":"observe","job_id":'"$theirs"',"iter_time_s":100}'
refused_as_user forbidden '{"op":"place","job_id":999002,"node":"n1","mode":"bind","slots":1,"unreported":[{"job_id":'"$theirs"',"gpus":[0],"since":1,"ended":2}]}'
known_running "$theirs" || fail "root's job $theirs is no longer running in colocd after $user's refused reports"
known_running "$mine" || fail "$user's job $mine is no longer running in colocd after the refused reports"
db=$COLOC_CLUSTER_DIR/coloc.db
assert_eq 0 "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE job_id IN (999001, 999002)")" "jobs $user tried to place"
assert_eq 0 "$(sqlite3 "$db" "SELECT count(*) FROM placements WHERE job_id = $theirs AND ended IS NOT NULL")" \
    "placements of root's job closed by $user"

note "$user cannot run admin operations"
steering=$("$send" "$COLOC_ENDPOINT" '{"op":"steering"}') || fail "coloc-send steering: no reply"
if [ "$(jq -r '.error.code // "ok"' <<<"$steering")" = unknown_op ]; then
    note "this colocd has no admin operation besides the reports above"
else
    was=$(jq -c '.steering.enabled' <<<"$steering")
    refused_as_user forbidden '{"op":"steering","enabled":false}'
    refused_as_user forbidden '{"op":"steering","enabled":true}'
    if as_user colocctl steering off >/dev/null 2>&1; then fail "$user switched node steering off"; fi
    refusals=$((refusals + 1))
    assert_eq "$was" "$("$send" "$COLOC_ENDPOINT" '{"op":"steering"}' | jq -c '.steering.enabled')" \
        "node steering after $user's attempts"
fi

note "a replayed credential is refused, for the user and for root"
reply=$(as_user "$send" --replay "$COLOC_ENDPOINT" '{"op":"jobs"}') || fail "coloc-send --replay: no reply"
assert_eq "ok auth_replayed" "$(jq -r '.error.code // "ok"' <<<"$reply" | tr '\n' ' ' | sed 's/ $//')" \
    "first and replayed reply ($reply)"
refusals=$((refusals + 1))
reply=$("$send" --replay "$COLOC_ENDPOINT" '{"op":"status"}') ||
    fail "coloc-send --replay as root: no reply"
assert_eq auth_replayed "$(tail -n 1 <<<"$reply" | jq -r '.error.code')" "root's replayed request ($reply)"
refusals=$((refusals + 1))

note "an expired credential is refused"
refused_as_user auth_expired '{"op":"jobs"}' --ttl 1 --delay-ms 2200

note "$user's own job still ends normally, and colocd closes it"
release
wait_jobs 30 "$theirs" "$mine"
assert_eq COMPLETED "$(jobcomp_field "$mine" JobState)" "$user's job"
ended() { [ "$(sqlite3 "$db" "SELECT state FROM jobs WHERE job_id = $1")" = ended ]; }
wait_for 20 ended "$mine" || fail "colocd did not record the end of $user's job $mine"
echo "refusals tested: $refusals"
