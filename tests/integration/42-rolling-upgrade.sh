#!/usr/bin/env bash
# A rolling upgrade: colocd first, then the nodes. A plugin or colocctl of the previous protocol
# version is still served, and answered in its own version; colocctl -M names the cluster.
source "$(dirname "$0")/lib.sh"
require_colocd
send=${COLOC_BUILD_DIR:-$ITEST_REPO/build}/tests/coloc-send
[ -x "$send" ] || skip "$send not built (make build/tests/coloc-send)"

note "a status request of protocol version 1 is answered in version 1"
reply=$("$send" --proto 1 "$COLOC_ENDPOINT" '{"op":"status"}')
assert_eq "1 true" "$(jq -r '"\(.v) \(.ok)"' <<<"$reply")" "version and ok of the reply to a version-1 status"

note "a version-1 plugin's place and ended reports are served"
job=$((900000000 + RANDOM))
reply=$("$send" --proto 1 "$COLOC_ENDPOINT" \
    "{\"op\":\"place\",\"job_id\":$job,\"job_uid\":0,\"node\":\"n4\",\"partition\":\"bind\",\"slots\":1,\"job_nodes\":[\"n4\"]}")
assert_eq "1 true 1" "$(jq -r '"\(.v) \(.ok) \(.gpus | length)"' <<<"$reply")" "reply to a version-1 place"
reply=$("$send" --proto 1 "$COLOC_ENDPOINT" "{\"op\":\"ended\",\"job_id\":$job,\"node\":\"n4\",\"exit_status\":0}")
assert_eq "1 true" "$(jq -r '"\(.v) \(.ok)"' <<<"$reply")" "reply to a version-1 ended"

note "a version colocd does not speak is refused naming the versions it does"
reply=$("$send" --proto 9 "$COLOC_ENDPOINT" '{"op":"status"}')
assert_eq bad_version "$(jq -r .error.code <<<"$reply")" "code for version 9"

note "colocctl -M: a colocd without a cluster name serves any"
colocctl -M coloc status >/dev/null || fail "colocctl -M coloc status failed"
