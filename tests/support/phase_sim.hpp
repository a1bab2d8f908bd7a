// A small time-stepped simulator of jobs sharing one link fairly: the reference the closed
// form in phase.hpp is tested against (tests, bench/model-accuracy). Not for the hot path.
#pragma once

#include <span>
#include <vector>

namespace coloc::model {

struct SimJob {
    double compute_s = 0;  // compute time per iteration (never slowed by the link)
    double burst_s = 0;    // link time per iteration at full link speed
    double start_s = 0;    // when the job's first burst starts
};

struct SimResult {
    std::vector<double> mean_iter_s;  // mean iteration time after warm-up
    std::vector<double> slowdown;     // mean_iter_s / (compute_s + burst_s)
};

// Each iteration is a burst followed by compute; k bursts in progress get 1/k of the link each.
// Runs until `horizon_s` with step `dt_s` and ignores each job's first `warmup` iterations.
SimResult simulate_link(std::span<const SimJob> jobs, double horizon_s, double dt_s, int warmup = 2);

}  // namespace coloc::model
