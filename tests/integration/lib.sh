# Helpers for the integration tests; each test sources this file.
# tests/integration/run brings the cluster up and sets COLOC_CLUSTER_DIR; a test may also be run
# by hand against a cluster started with scripts/slurm-cluster up (same COLOC_CLUSTER_DIR).
# shellcheck shell=bash
set -euo pipefail

ITEST_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ITEST_NAME=$(basename "$0" .sh)
eval "$("$ITEST_REPO/scripts/slurm-cluster" env)"
# Job output files of this test (slurmd writes them as root; the directory must exist).
ITEST_OUT=$COLOC_CLUSTER_DIR/itest/$ITEST_NAME
mkdir -p "$ITEST_OUT"
JOBCOMP_LOG=$COLOC_CLUSTER_DIR/jobcomp.log

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }
# skip "why": the runner counts exit 77 as skipped.
skip() { echo "SKIP: $*"; exit 77; }

# wait_for TIMEOUT_S CMD...: poll CMD (every 0.1 s) until it succeeds; 1 when the deadline passes.
now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }
wait_for() {
    local deadline=$(($(now_us) + $1 * 1000000)); shift
    until "$@" >/dev/null 2>&1; do
        [ "$(now_us)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

assert_eq() { # EXPECTED ACTUAL WHAT
    [ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'"
}

# submit [SBATCH_ARGS...]: sbatch --parsable with output to $ITEST_OUT/<jobid>.out; prints the
# job id. The script comes from --wrap or, without it, from stdin.
submit() {
    local id
    id=$(sbatch --parsable -o "$ITEST_OUT/%j.out" "$@") || fail "sbatch $* failed"
    echo "${id%%;*}"
}

job_out() { cat "$ITEST_OUT/$1.out" 2>/dev/null; }

# Slurm's view while the job is known to slurmctld (MinJobAge=300 keeps finished ones).
job_field() { # ID FIELD
    scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
job_state() { job_field "$1" JobState; }

# jobcomp/filetxt writes one Key=Value line per finished job.
jobcomp_line() { grep -m 1 "^JobId=$1 " "$JOBCOMP_LOG" 2>/dev/null; }
jobcomp_field() { # ID FIELD
    jobcomp_line "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# A job is done when squeue no longer lists it and its jobcomp line is written.
job_done() {
    [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && jobcomp_line "$1" >/dev/null
}

all_done() {
    local id
    for id in "$@"; do job_done "$id" || return 1; done
}

# wait_jobs TIMEOUT_S ID...: wait until every job is done; fail naming the ones that are not.
wait_jobs() {
    local timeout=$1 id left=(); shift
    if ! wait_for "$timeout" all_done "$@"; then
        for id in "$@"; do job_done "$id" || left+=("$id=$(job_state "$id")"); done
        fail "jobs not done within ${timeout}s: ${left[*]}"
    fi
}

# assert_job_ok ID: finished COMPLETED with exit code 0; shows its output otherwise.
assert_job_ok() {
    local state exit_code
    state=$(jobcomp_field "$1" JobState)
    exit_code=$(jobcomp_field "$1" ExitCode)
    if [ "$state" != COMPLETED ] || [ "$exit_code" != 0:0 ]; then
        echo "--- output of job $1:" >&2
        job_out "$1" >&2 || true
        fail "job $1 ended $state with exit code $exit_code"
    fi
}

# run_job TIMEOUT_S SBATCH_ARGS...: submit, wait, require success; prints the job id.
run_job() {
    local timeout=$1 id; shift
    id=$(submit "$@")
    wait_jobs "$timeout" "$id" >&2
    assert_job_ok "$id" >&2
    echo "$id"
}

colocd_running() { [ -r "$COLOCD_PIDFILE" ] && kill -0 "$(cat "$COLOCD_PIDFILE")" 2>/dev/null; }
require_colocd() { colocd_running || skip "colocd does not run (cluster started with --no-colocd)"; }
require_plugin() { [ -f "$COLOC_BUILD_DIR/spank_coloc.so" ] || skip "$COLOC_BUILD_DIR/spank_coloc.so not built"; }

no_jobs() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }

# For a test that runs colocd with a colocd.yaml of its own ($yaml, edited after this call):
# on exit every job is cancelled and waited for (colocd hears of the ends), the cluster's file
# comes back and colocd restarts with it. A test's `restore_more`, when it defines one, runs
# while colocd is stopped.
own_colocd_yaml() {
    yaml=$COLOC_CLUSTER_DIR/colocd.yaml
    cp "$yaml" "$ITEST_OUT/colocd.yaml.orig"
    trap restore_colocd_yaml EXIT
}
restore_colocd_yaml() {
    local ids
    ids=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    # shellcheck disable=SC2086
    [ -z "$ids" ] || scancel $ids 2>/dev/null
    wait_for 20 no_jobs || true
    cp "$ITEST_OUT/colocd.yaml.orig" "$yaml"
    "$ITEST_REPO/scripts/slurm-cluster" colocd-stop >/dev/null 2>&1
    if declare -F restore_more >/dev/null; then restore_more; fi
    "$ITEST_REPO/scripts/slurm-cluster" colocd-start >/dev/null 2>&1
}
