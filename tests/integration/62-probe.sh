#!/usr/bin/env bash
# colocctl probe on the local cluster: three emulated classes (bench/live's, half as long) alone
# and in pairs on one GPU of n1, through sbatch, the plugin and colocd; the pair speeds it takes
# from the jobs' reports match those measured outside Slurm (tests/workload/calibrate) within
# 0.03, --fit writes the parameters, nothing is left in Slurm, and bad input is refused by name.
#   COLOC_PROBE_CLASSES=4 adds a fourth class (10 runs: bench/probe), COLOC_PROBE_ITERATIONS sets
#   each job's length (default 40 iterations of about 50 ms).
source "$(dirname "$0")/lib.sh"
require_colocd
require_plugin
workload=$COLOC_BUILD_DIR/tests/coloc-workload
[ -x "$workload" ] || skip "the emulated job is not built (make workload)"

# NAME:COMPUTE_MS:IO_MS per iteration (1 ms of host work besides)
classes=(dense:42:8 light:10:40 mid:25:25)
[ "${COLOC_PROBE_CLASSES:-3}" != 4 ] || classes+=(heavy:30:20)
iterations=${COLOC_PROBE_ITERATIONS:-40}
out=$ITEST_OUT/probe
rm -rf "$out" "$ITEST_OUT/cal"

note "calibration outside Slurm: ${classes[*]}"
COLOC_BUILD_DIR=$COLOC_BUILD_DIR "$ITEST_REPO/tests/workload/calibrate" "$ITEST_OUT/cal" "$iterations" "${classes[@]}"
note "calibration: $(tr '\n' ' ' <"$ITEST_OUT/cal/measured.csv")"

# As root the calibration runs at a real-time priority (so that load does not delay wake-ups): the
# probe's jobs too, or the two would measure different machines.
run=
if [ "$(id -u)" = 0 ] && chrt -f 5 true 2>/dev/null; then run="chrt -f 5"; fi
jobs=()
for c in "${classes[@]}"; do
    IFS=: read -r name compute io <<<"$c"
    jobs+=(--job "$name=COLOC_WORKLOAD_DIR=$ITEST_OUT/gpus $run $workload --compute-ms $compute --io-ms $io --host-ms 1 --iterations $iterations")
done

note "bad input is refused, naming the argument; nothing is submitted"
before=$(squeue -h | wc -l)
set +e
msg=$(colocctl probe --job dense --node n1 --gpu-type v100 --out "$out" 2>&1)
rc=$?
set -e
assert_eq 2 "$rc" "exit status for --job without a command"
grep -q "\-\-job 'dense': expected NAME=COMMAND" <<<"$msg" || fail "message for a bad --job: $msg"
set +e
msg=$(colocctl probe --job "a=true" --job "a=false" --node n1 --gpu-type v100 --out "$out" 2>&1)
rc=$?
set -e
assert_eq 2 "$rc" "exit status for a name given twice"
grep -q "'a' is given twice" <<<"$msg" || fail "message for a name given twice: $msg"
set +e
msg=$(colocctl probe --job "a=true" --node nowhere --gpu-type v100 --out "$out" 2>&1)
rc=$?
set -e
assert_eq 1 "$rc" "exit status for an unknown node"
grep -q "colocd does not know node 'nowhere'" <<<"$msg" || fail "message for an unknown node: $msg"
assert_eq "$before" "$(squeue -h | wc -l)" "jobs queued after refused probes"

# NVML as the jobs see it: a stand-in nvidia-smi on their PATH (sbatch passes the environment on)
# that samples 80 % SM and 40 % memory utilisation.
mkdir -p "$ITEST_OUT/bin"
cat >"$ITEST_OUT/bin/nvidia-smi" <<'SMI'
#!/bin/bash
while :; do echo "80, 40"; sleep 0.1; done
SMI
chmod +x "$ITEST_OUT/bin/nvidia-smi"

note "probe: ${#classes[@]} solo runs and $((${#classes[@]} * (${#classes[@]} - 1) / 2)) pair runs on n1, with --fit"
t0=$SECONDS
set +e
PATH=$ITEST_OUT/bin:$PATH colocctl -P probe "${jobs[@]}" --node n1 --gpu-type v100 --out "$out" --seconds 60 --report-interval 0.25 --warmup 1 --fit \
    >"$ITEST_OUT/probe.out" 2>"$ITEST_OUT/probe.err"
rc=$?
set -e
took=$((SECONDS - t0))
cat "$ITEST_OUT/probe.err"
[ "$rc" = 0 ] || fail "colocctl probe exited $rc: $(cat "$ITEST_OUT/probe.out")"
note "probe took ${took}s"
assert_eq "" "$(squeue -h -n dense,light,mid,heavy)" "probe jobs left in Slurm"
for f in measurements.csv profiles.yaml fit.yaml params.json; do [ -s "$out/$f" ] || fail "probe wrote no $f"; done
grep -q "^dense,,,v100,,,[0-9.]*$" "$out/measurements.csv" || fail "no solo row for dense: $(cat "$out/measurements.csv")"
for c in "${classes[@]}"; do
    profile=$(sed -n "/name: ${c%%:*}$/,/name:/p" "$out/profiles.yaml" | tr '\n' ' ')
    grep -q "sm_util: 0.8 *mem_bw_util: 0.4 " <<<"$profile" || fail "the NVML samples are not in ${c%%:*}'s profile: $profile"
done

note "pair speeds (probe's table) against the calibration, within 0.03"
worst=$(awk -F'|' 'NR == FNR { split($0, f, ","); cal[f[1] "," f[2]] = f[3]; next }
    /^$/ { exit } FNR > 1 && $2 != "" { k = $1 "," $2; if (!(k in cal)) { print "missing " k; exit }
        d = $4 - cal[k]; if (d < 0) d = -d; printf "%s %.4f (probe %s, calibration %s)\n", k, d, $4, cal[k] }' \
    "$ITEST_OUT/cal/measured.csv" "$ITEST_OUT/probe.out" | tee "$ITEST_OUT/diff.txt" | sort -k2 -g | tail -n 1)
sed 's/^/#   /' "$ITEST_OUT/diff.txt"
[ "$(wc -l <"$ITEST_OUT/diff.txt")" = $((${#classes[@]} * (${#classes[@]} - 1))) ] || fail "pairs compared: $(cat "$ITEST_OUT/diff.txt")"
awk '{ if ($2 > 0.03) bad = 1 } END { exit bad }' "$ITEST_OUT/diff.txt" || fail "a pair speed is off by more than 0.03: $worst"
note "largest difference: $worst"

if ! command -v nvidia-smi >/dev/null; then
    note "without NVML the catalogue's utilisations stay, and probe says so"
    printf 'profiles:\n  - name: dense\n    iter_time_s: 0.05\n    sm_util: 0.55\n    mem_bw_util: 0.3\n' >"$ITEST_OUT/cat.yaml"
    colocctl probe "${jobs[@]:0:2}" --node n1 --gpu-type v100 --out "$ITEST_OUT/solo" --seconds 60 --report-interval 0.25 \
        --warmup 1 --profiles "$ITEST_OUT/cat.yaml" >/dev/null 2>"$ITEST_OUT/solo.err" || fail "$(cat "$ITEST_OUT/solo.err")"
    grep -q "dense: no NVML utilisation on n1 (nvidia-smi not found on n1, or no GPU given): sm_util and mem_bw_util kept from the catalogue" \
        "$ITEST_OUT/solo.err" || fail "probe did not say that NVML is absent: $(cat "$ITEST_OUT/solo.err")"
    grep -q "sm_util: 0.55" "$ITEST_OUT/solo/profiles.yaml" || fail "the catalogue's sm_util is lost: $(cat "$ITEST_OUT/solo/profiles.yaml")"
fi

note "colocctl fit reads the probe's CSV as it is"
colocctl fit --measurements "$out/measurements.csv" --out "$ITEST_OUT/refit.yaml" >/dev/null
