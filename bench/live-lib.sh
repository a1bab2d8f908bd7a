# bench/live's steps, sourced by it: the emulated classes' calibration and catalogue, the local
# cluster and colocd, one round of jobs through sbatch, and what a round is judged by. A
# scenario sets, before calling them:
#   classes     "NAME NODES COMPUTE_MS IO_MS BURST_MS" per class
#   pattern     the round's classes in submission order (repeated)
#   per_round, gap_s, iterations
#   cal         the scenario's calibration directory (solo-NAME, measured.csv)
#   submit_args extra sbatch arguments of every job (a time limit, --begin=now)
#   jitter      1: gaps jittered around gap_s (run_round); else exactly gap_s
# and the globals repo, state, cluster, build, workload, link, link_rate, work, run,
# round_deadline_s, leaf_port.

class_field() { # NAME FIELD(2..5)
    local c
    for c in "${classes[@]}"; do
        read -r -a f <<<"$c"
        [ "${f[0]}" = "$1" ] && { echo "${f[$(($2 - 1))]}"; return; }
    done
    echo "live: unknown class $1" >&2
    exit 1
}
class_names() { local c; for c in "${classes[@]}"; do echo "${c%% *}"; done; }

# start_link NAME: a coloc-link in the background, its port in $work/NAME.port.
start_link() {
    "${run[@]}" "$link" --rate "$link_rate" --port-file "$work/$1.port" >/dev/null &
    pids+=($!)
    local _
    for _ in $(seq 50); do
        [ -s "$work/$1.port" ] && return
        sleep 0.1
    done
    echo "live: coloc-link $1 did not start within 5 s" >&2
    exit 1
}

# Mean iteration time of a workload's output after 5 warm-up iterations.
mean_iter() { awk '$1 == "iter" && $2 >= 5 { s += $3; n++ } END { if (n) printf "%.6f", s / n; else print "nan" }' "$@"; }

# ---- calibration: solo and same-GPU pair speeds, outside Slurm --------------------------------
# tests/workload/calibrate: every run on a fake GPU of its own, each job with a link of its own,
# so that only the GPU is shared; each class beside itself too. $cal/measured.csv: job,neighbour,speed.
calibrate() {
    local c f specs=()
    for c in "${classes[@]}"; do
        read -r -a f <<<"$c"
        specs+=("${f[0]}:${f[2]}:${f[3]}:${f[4]}")
    done
    COLOC_BUILD_DIR=$build COLOC_CALIBRATE_LINK_RATE=$link_rate "$repo/tests/workload/calibrate" --self "$cal" 45 \
        "${specs[@]}" || { echo "live: the calibration failed" >&2; exit 1; }
}

# write_catalogue FILE [utilisation]: the classes with their measured solo times, no pairs; with
# "utilisation", also each class's solo GPU utilisation (its compute share of an iteration), what
# a site's catalogue holds when `colocctl probe` read NVML on its GPUs.
write_catalogue() {
    local name file=$1 c io
    echo "# bench/live: the emulated classes; solo iteration times measured by the calibration" >"$file"
    echo "profiles:" >>"$file"
    while read -r name; do
        cat >>"$file" <<EOF
  - name: $name
    iter_time_s: $(mean_iter "$cal/solo-$name")
    gpus: 1
    nodes: $(class_field "$name" 2)
EOF
        [ "${2:-}" = utilisation ] || continue
        c=$(class_field "$name" 3) io=$(class_field "$name" 4)
        awk -v c="$c" -v io="$io" 'BEGIN { u = c / (c + io + 1); printf "    sm_util: %.3f\n    mem_bw_util: %.3f\n", u, u }' >>"$file"
    done < <(class_names)
}

# ---- the cluster and colocd ---------------------------------------------------------------------

# cluster_up SLOTS_PER_GPU
cluster_up() {
    "$cluster" down --state-dir "$state" >/dev/null 2>&1 || true
    COLOC_CLUSTER_SLOTS_PER_GPU=$1 "$cluster" up --state-dir "$state" >/dev/null 2>"$work/up.err" ||
        { cat "$work/up.err" >&2; exit 1; }
    eval "$("$cluster" env --state-dir "$state")"
}

# colocd_fresh MODEL CATALOGUE [YAML_LINES]: colocd with the catalogue and no history; YAML_LINES
# (printf's format) end its configuration, replacing any steering: or admission: section.
colocd_fresh() {
    "$cluster" colocd-stop --state-dir "$state" >/dev/null 2>&1 || true
    rm -f "$state"/coloc.db "$state"/coloc.db-*
    local yaml=$state/colocd.yaml
    sed -i -e "s|^model: .*|model: $1|" -e "s|^profiles: .*|profiles: $2|" -e '/^steering:/,$d' -e '/^admission:/,$d' "$yaml"
    [ -z "${3:-}" ] || printf "$3" >>"$yaml"
    "$cluster" colocd-start --state-dir "$state" >/dev/null 2>&1 ||
        { echo "live: colocd did not start; read $state/log/colocd.log" >&2; exit 1; }
}

# ---- one round ----------------------------------------------------------------------------------

# run_round NAME REPORT(1|0): submits the mix, waits for it; writes $work/NAME.jobs
# ("id class submit_s" lines) and each job's output to $work/NAME/ID.out.
run_round() {
    local name=$1 report=$2 out=$work/$1 i cls nodes c io b args id script
    mkdir -p "$out"
    : >"$work/$name.jobs"
    # With jitter=1 (scenario 2), gaps of gap_s on average, uniform within half a second (at most
    # half a gap) either side, the same sequence in every round: Slurm starts jobs at passes about
    # a second apart, and evenly spaced submissions meet them at one phase per round, luckier for
    # one policy than another (up to a quarter of a second per job at 1.5 s gaps). Else gap_s apart.
    RANDOM=1
    for ((i = 0; i < per_round; i++)); do
        cls=${pattern[$((i % ${#pattern[@]}))]}
        nodes=$(class_field "$cls" 2) c=$(class_field "$cls" 3) io=$(class_field "$cls" 4) b=$(class_field "$cls" 5)
        args="--compute-ms $c --io-ms $io --host-ms 1 --iterations $iterations"
        [ "$b" = 0 ] || args+=" --burst-ms $b --link 127.0.0.1:$leaf_port"
        [ "$nodes" = 1 ] || args+=" --lockstep"  # its tasks meet at each burst, as an all-reduce does
        script="#!/bin/bash
srun --ntasks-per-node=1 bash -c 'echo \"task \$EPOCHREALTIME \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES \${COLOC_DECISION:-none}\"
  ${run[*]} $workload --state-dir $work/gpus $args; echo \"done \$EPOCHREALTIME \$SLURMD_NODENAME\"'
echo \"end \$EPOCHREALTIME\""
        local t0=$EPOCHREALTIME
        # shellcheck disable=SC2086 # submit_args are words
        id=$(COLOC_REPORT=$report COLOC_REPORT_INTERVAL_S=1 sbatch --parsable -p bind -N "$nodes" \
            --ntasks-per-node=1 --gres=gpuslot:1 --coloc-profile="$cls" -J "live-$cls" $submit_args \
            -o "$out/%j.out" <<<"$script")
        echo "$id $cls $t0" >>"$work/$name.jobs"
        sleep "$(awk -v g="$gap_s" -v r="$RANDOM" -v on="${jitter:-0}" 'BEGIN { j = on ? g / 2 : 0; if (j > 0.5) j = 0.5; printf "%.3f", g - j + 2 * j * r / 32767 }')"
    done
    local deadline=$((SECONDS + round_deadline_s)) left
    while :; do
        left=$(squeue -h -o %j | grep -c '^live-' || true)
        [ "$left" = 0 ] && break
        [ $SECONDS -lt $deadline ] || { echo "live: round $name: $left jobs still queued or running after ${round_deadline_s}s" >&2; exit 1; }
        sleep 0.5
    done
    while read -r id cls _; do
        grep -q '^end ' "$out/$id.out" 2>/dev/null || { echo "live: round $name: job $id ($cls) did not finish: $(tail -n 3 "$out/$id.out" 2>/dev/null)" >&2; exit 1; }
    done <"$work/$name.jobs"
}

# jct NAME: "mean_jct_s mean_slowdown floor_s se_s" of a round (slowdown: a job's mean iteration
# time over its class's solo time; floor: the mean JCT less the time the slowdowns added, what no
# placement of these jobs, started when they started, could beat; se: the mean JCT's standard
# error, its jobs' JCTs' standard deviation over the root of their number).
jct() {
    local name=$1 id cls t0 end
    while read -r id cls t0; do
        end=$(awk '$1 == "end" { print $2 }' "$work/$name/$id.out")
        echo "$cls $t0 $end $(mean_iter "$work/$name/$id.out") $(mean_iter "$cal/solo-$cls")"
    done <"$work/$name.jobs" | awk -v it="$iterations" '
        { j += $3 - $2; q += ($3 - $2) ^ 2; s += $4 / $5; extra = it * ($4 - $5); f += $3 - $2 - (extra > 0 ? extra : 0); n++ }
        END { v = n > 1 ? (q - j * j / n) / (n - 1) : 0; printf "%.2f %.3f %.2f %.3f", j / n, s / n, f / n, sqrt(v > 0 ? v / n : 0) }'
}

# jct_by_class NAME: per class mean JCT, for the record.
jct_by_class() {
    local id cls t0 end
    while read -r id cls t0; do
        end=$(awk '$1 == "end" { print $2 }' "$work/$1/$id.out")
        echo "$cls $(awk -v a="$t0" -v b="$end" 'BEGIN { print b - a }')"
    done <"$work/$1.jobs" | awk '{ s[$1] += $2; n[$1]++ } END { for (c in s) printf " %s %.1f", c, s[c] / n[c] }'
}

# bad_pairs NAME: the share of the round's GPU sharing (seconds two tasks ran on one GPU) spent
# in pairs the calibration measured below 0.9 speed for either job: how well the placements
# avoided the pairs that hurt, whatever the model predicted.
bad_pairs() {
    local id cls
    while read -r id cls _; do
        awk -v c="$cls" '$1 == "task" { s[$3] = $2; g[$3] = $4 } $1 == "done" { print $3 ":" g[$3], s[$3], $2, c }' \
            "$work/$1/$id.out"
    done <"$work/$1.jobs" | awk -F'[ ,]' -v measured="$cal/measured.csv" '
        BEGIN { while ((getline l < measured) > 0) { split(l, f, ","); if (f[3] < 0.9) bad[f[1] " " f[2]] = 1 } }
        { k[NR] = $1; a[NR] = $2; b[NR] = $3; c[NR] = $4 }
        END {
            for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
                if (k[i] != k[j]) continue
                o = (b[i] < b[j] ? b[i] : b[j]) - (a[i] > a[j] ? a[i] : a[j])
                if (o <= 0) continue
                all += o
                if ((c[i] " " c[j]) in bad || (c[j] " " c[i]) in bad) hurt += o
            }
            printf "%.0f%% of %.0f s", all ? 100 * hurt / all : 0, all
        }'
}

# ---- the model's error on the pairs -------------------------------------------------------------

# model_predictions CATALOGUE: the model's same-GPU speed of each ordered pair of classes, with
# what colocd has stored so far, into $work/predicted.json.
model_predictions() {
    local params=$work/params.json pairs=$work/pairs.csv
    sqlite3 "$state/coloc.db" "SELECT params FROM model_params WHERE name = 'coloc'" >"$params"
    [ -s "$params" ] || { echo "live: colocd stored no learned parameters" >&2; exit 1; }
    cut -d, -f1,2 "$cal/measured.csv" | sed 's/$/,gpu/' >"$pairs"
    colocctl predict --profiles "$1" --pairs "$pairs" --params "$params" --json >"$work/predicted.json"
}

# pair_speeds ROUND...: what the rounds measured of each class beside each other class on one GPU:
# "job neighbour speed iterations" per ordered pair, neighbour "none" for a task alone on its GPU.
# An iteration (after 5 warm-up ones) counts where exactly one other task (or none) held the
# job's GPUs (all of them: a two-node job's tasks run in lock step) from the iteration's start to
# its end, by the tasks' "task" and "done" lines; speed is the class's solo iteration time (the
# calibration's) over the mean of those iterations.
pair_speeds() {
    local round id cls
    for round in "$@"; do
        while read -r id cls _; do echo "$work/$round/$id.out $cls"; done <"$work/$round.jobs"
    done >"$work/pair-files"
    while read -r cls; do echo "$cls $(mean_iter "$cal/solo-$cls")"; done < <(class_names) >"$work/pair-solo"
    # shellcheck disable=SC2046 # one file name per word
    awk -v files="$work/pair-files" -v solos="$work/pair-solo" '
        BEGIN {
            while ((getline l < files) > 0) { split(l, f, " "); cls[f[1]] = f[2] }
            while ((getline l < solos) > 0) { split(l, f, " "); solo[f[1]] = f[2] }
        }
        $1 == "task" { r = FILENAME SUBSEP $3; start[r] = $2; gpu[r] = $3 ":" $4; on[gpu[r]] = on[gpu[r]] " " r; tasks[FILENAME] = tasks[FILENAME] " " r }
        $1 == "done" { stop[FILENAME SUBSEP $3] = $2 }
        $1 == "end" { last[FILENAME] = $2 }
        $1 == "iter" && $2 >= 5 && NF >= 6 { n++; it_rank[n] = FILENAME SUBSEP $6; it_dt[n] = $3; it_at[n] = $5 }
        END {
            for (k = 1; k <= n; k++) {
                r = it_rank[k]; split(r, rf, SUBSEP); from = it_at[k]; to = from + it_dt[k]
                seen = 0; nb = "none"; t = split(tasks[rf[1]], own, " ")
                for (w = 1; w <= t; w++) {
                    m = split(on[gpu[own[w]]], others, " ")
                    for (o = 1; o <= m; o++) {
                        q = others[o]; split(q, qf, SUBSEP)
                        if (qf[1] == rf[1]) continue
                        end = (q in stop) ? stop[q] : last[qf[1]]
                        if (start[q] <= from && end >= to) { seen++; nb = cls[qf[1]] }
                    }
                }
                if (seen > 1) continue
                key = cls[rf[1]] " " nb; sum[key] += it_dt[k]; count[key]++
            }
            for (key in sum) { split(key, kf, " "); printf "%s %.4f %d\n", key, solo[kf[1]] * count[key] / sum[key], count[key] }
        }' $(cut -d' ' -f1 "$work/pair-files")
}

# model_mae ROUND...: the model's predictions (model_predictions) against the same-GPU pairs as
# the rounds measured them, each relative to its class alone on a GPU in the same rounds (so that
# what the rounds add to every pair, the leaf link's traffic for the two-node class, is divided
# out), and against the calibration (each pair alone, each job with a link of its own). Pairs
# measured for fewer than 100 iterations are left out of the first. Prints "mae pairs mae_cal
# all_pairs"; the table in $work/mae.txt.
model_mae() {
    pair_speeds "$@" >"$work/pair-speeds.txt"
    jq -r '.predictions[] | "\(.job),\(.neighbour),\(.job_speed)"' "$work/predicted.json" |
        paste -d, - <(cut -d, -f3 "$cal/measured.csv") | awk -F, -v measured="$work/pair-speeds.txt" '
        BEGIN { while ((getline l < measured) > 0) { split(l, f, " "); speed[f[1] " " f[2]] = f[3]; its[f[1] " " f[2]] = f[4] } }
        {
            k = $1 " " $2; alone = speed[$1 " none"]; live = "-"
            if (its[k] >= 100 && alone > 0) { live = speed[k] / alone; e = $3 - live; s += e < 0 ? -e : e; n++ }
            c = $3 - $4; sc += c < 0 ? -c : c; nc++
            printf "  %-6s beside %-6s predicted %.3f  measured live %s (%d iterations)  calibration %.3f\n",
                $1, $2, $3, live == "-" ? "  -  " : sprintf("%.3f", live), its[k], $4 >"/dev/stderr"
        }
        END { printf "%.4f %d %.4f %d", n ? s / n : 1, n, sc / nc, nc }' 2>"$work/mae.txt"
}

# ---- fidelity: the round's own log replayed -----------------------------------------------------

# truth_csv FILE: the calibration as the fit CSV (colocctl fit, replay --truth measured:FILE) on
# the cluster's GPU type: each class's solo throughput and its throughput beside each neighbour.
truth_csv() {
    local name solo
    echo "job,family,batch_size,gpu_type,neighbour,where,throughput" >"$1"
    while read -r name; do
        solo=$(mean_iter "$cal/solo-$name")
        echo "$name,,,v100,,,$(awk -v t="$solo" 'BEGIN { printf "%.6f", 1 / t }')" >>"$1"
        awk -F, -v j="$name" -v t="$solo" '$1 == j { printf "%s,,,v100,%s,gpu,%.6f\n", j, $2, $3 / t }' \
            "$cal/measured.csv" >>"$1"
    done < <(class_names)
}

# pass_interval: the seconds between the passes that start this cluster's queued jobs, its
# backfill's bf_interval (Slurm's default 30 where SchedulerParameters does not set it).
pass_interval() {
    scontrol show config | awk -F'[ =,]+' '$1 == "SchedulerParameters" {
        for (i = 2; i <= NF; i++) if ($i == "bf_interval") v = $(i + 1) } END { print v ? v : 30 }'
}

# replayed NAME POLICY CATALOGUE [MORE]: the round's history as colocd exported it (colocctl
# history --export), replayed by `colocctl replay` with POLICY (and the policies MORE lists,
# comma-separated: replayed_also reads them) on the same cluster, its jobs started at its
# backfill passes, its jobs reporting every second as they do here, the calibration as the
# truth; prints POLICY's replayed mean JCT (submit to end, s). Call while the round's colocd runs.
replayed() {
    local hist=$work/$1.history truth=$work/truth-$(basename "$cal").csv
    [ -s "$truth" ] || truth_csv "$truth"
    colocctl history --export "$hist" || { echo "live: colocctl history --export failed" >&2; exit 1; }
    colocctl replay "$hist" --policy "$2${4:+,$4}" --config "$state/colocd.yaml" --profiles "$3" --gpu-type v100 \
        --pass-interval "$(pass_interval)" --report-interval 1 \
        --truth "measured:$truth" --json --no-progress >"$work/$1.replay.json" 2>"$work/$1.replay.err" ||
        { echo "live: colocctl replay of $1 failed: $(cat "$work/$1.replay.err")" >&2; exit 1; }
    replayed_also "$1" "$2"
}

# replayed_also NAME POLICY: POLICY's mean JCT in the replay of round NAME (s).
replayed_also() {
    jq -r --arg p "$2" '.policies[] | select(.policy == $p) | .mean_jct_s' "$work/$1.replay.json"
}

# start_and_run NAME: "S s, R s": the round's mean time from sbatch to its task's start, and from
# its start to its end.
start_and_run() {
    local id cls t0
    while read -r id cls t0; do
        awk -v t0="$t0" '$1 == "task" && !s { s = $2 } $1 == "end" { e = $2 } END { printf "%.3f %.3f\n", s - t0, e - s }' \
            "$work/$1/$id.out"
    done <"$work/$1.jobs" | awk '{ a += $1; b += $2; n++ } END { printf "%.2f s, %.2f s", a / n, b / n }'
}

# solo_run: the mean solo run time of the round's mix (each class's iterations at its solo pace).
solo_run() {
    local c total=0 n=0 t
    for c in "${pattern[@]}"; do
        t=$(mean_iter "$cal/solo-$c")
        total=$(awk -v a="$total" -v t="$t" -v i="$iterations" 'BEGIN { print a + t * i }')
        n=$((n + 1))
    done
    awk -v a="$total" -v n="$n" 'BEGIN { printf "%.2f", a / n }'
}

# release_delays NAME: from slurmctld's log, the round's median time from a job's submission to
# colocd's release of it (its BeginTime set to now; for a job held, after its wait), and from
# that release to Slurm starting it ("-" where colocd released none); and for the jobs that took a
# standing offer (never gated), from submission to start.
release_delays() {
    local pairs
    pairs=$(awk -v ids="$(cut -d' ' -f1 "$work/$1.jobs" | tr '\n' ' ')" '
        # [YYYY-MM-DDTHH:MM:SS.mmm]: seconds from the month start (a round lasts minutes)
        function t(s) { return ((substr(s, 10, 2) * 24 + substr(s, 13, 2)) * 60 + substr(s, 16, 2)) * 60 + substr(s, 19, 6) }
        function job(s) { match(s, /JobId=[0-9]+/); return substr(s, RSTART + 6, RLENGTH - 6) }
        BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
        /_slurm_rpc_submit_batch_job: JobId=/ { j = job($0); if (j in want) sub_t[j] = t($1) }
        # A release sets the BeginTime to now; renewing the lease of a held job sets it ahead.
        /_update_job: setting begin to/ {
            j = job($0); match($0, /begin to [0-9T:-]+/)
            if ((j in sub_t) && !(j in st_t) && t("[" substr($0, RSTART + 9, RLENGTH - 9) ".000") <= t($1)) rel_t[j] = t($1) }
        # Started without a release: it took a standing offer (never gated).
        /sched: Allocate JobId=|_start_job: Started JobId=/ {
            j = job($0); if (!(j in sub_t) || (j in st_t)) next; st_t[j] = t($1)
            if (j in rel_t) printf "%.3f %.3f\n", rel_t[j] - sub_t[j], st_t[j] - rel_t[j]
            else printf "offer %.3f\n", st_t[j] - sub_t[j] }' \
        "$state/log/slurmctld.log") || pairs=""  # no log: nothing to show, the bench goes on
    median() { sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else printf "%.0f ms", 1000 * (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
    local gated offered
    gated=$(grep -v '^offer' <<<"$pairs" || true) offered=$(sed -n 's/^offer //p' <<<"$pairs")
    printf 'submission to release %s, release to start %s (%d jobs released); submission to start %s (%d jobs that took a standing offer)' \
        "$(cut -d' ' -f1 <<<"$gated" | grep . | median)" "$(cut -d' ' -f2 <<<"$gated" | grep . | median)" \
        "$(grep -c . <<<"$gated" || true)" "$(grep . <<<"$offered" | median)" "$(grep -c . <<<"$offered" || true)"
}
