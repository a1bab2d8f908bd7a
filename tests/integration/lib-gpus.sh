# Helpers for tests about the GPUs jobs get; sourced after lib.sh.
# shellcheck shell=bash

# A job script that reports its GPUs and decision, checks in under BARRIER_DIR, and holds its
# slot until COUNT jobs have checked in (30 s at most), so that all of them run at the same time.
hold_script() { # BARRIER_DIR COUNT
    cat <<EOF
#!/bin/bash
echo "CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES-unset} COLOC_DECISION=\${COLOC_DECISION-unset} SLURM_JOB_GPUS=\${SLURM_JOB_GPUS-unset}"
touch "$1/\$SLURM_JOB_ID"
for _ in \$(seq 300); do [ "\$(ls "$1" | wc -l)" -ge $2 ] && exit 0; sleep 0.1; done
exit 1
EOF
}

# run_together COUNT SBATCH_ARGS...: COUNT jobs that run at the same time; waits for them,
# requires success, prints their ids.
run_together() {
    local n=$1 barrier ids=() i
    shift
    barrier=$ITEST_OUT/barrier-$n-$RANDOM
    mkdir -p "$barrier"
    for ((i = 0; i < n; i++)); do
        ids+=("$(hold_script "$barrier" "$n" | submit "$@")")
    done
    wait_jobs 60 "${ids[@]}" >&2
    for i in "${ids[@]}"; do assert_job_ok "$i" >&2; done
    echo "${ids[@]}"
}

# What a hold_script job printed.
gpus_of() { job_out "$1" | sed -n 's/^CUDA_VISIBLE_DEVICES=\([^ ]*\) .*/\1/p'; }
decision_of() { job_out "$1" | sed -n 's/.* COLOC_DECISION=\([^ ]*\).*/\1/p'; }
slurm_gpus_of() { job_out "$1" | sed -n 's/.* SLURM_JOB_GPUS=\([^ ]*\).*/\1/p'; }

# "GPU:jobs " for every GPU some job used, in GPU order.
jobs_per_gpu() { # ID...
    local id
    for id in "$@"; do gpus_of "$id" | tr ',' '\n'; done | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}'
}

# The slurmd log of a node, where the plugin's lines go.
slurmd_log() { echo "$COLOC_CLUSTER_DIR/log/slurmd-$1.log"; }
