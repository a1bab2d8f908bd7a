// A seeded synthetic job log, for the speed benchmark and for tests: Poisson arrivals sized to
// offer a given load, job sizes 1 to 64 GPUs (powers of two), log-normal run times, and time
// limits that overestimate the run time as users do.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "replay/trace.hpp"

namespace coloc::replay {

struct SyntheticOptions {
    std::size_t jobs = 100'000;
    std::uint64_t seed = 1;
    int cluster_gpus = 8000;     // the arrival rate is set for this many GPUs
    double offered_load = 0.9;   // GPU-time asked for / GPU-time the cluster has
    double median_run_s = 3600;  // log-normal run times: median and sigma of the log
    double sigma = 1.5;
    double max_run_s = 2 * 86400;  // a common GPU partition MaxTime (48 h)
    int max_gpus = 64;             // sizes 1, 2, 4, ..., max_gpus
    // Share of jobs by size (GPUs, weight); empty = the default mix (most ask for one GPU, few
    // for many). Sizes above max_gpus are left out either way.
    std::vector<std::pair<int, double>> sizes;
    // Daily cycle of the arrival rate: rate * (1 + daily_swing * sin(2 pi t / 1 day)), 0 <= swing
    // < 1. The mean load stays `offered_load`; at its peak more work arrives than the cluster
    // runs, so a queue builds in the day and drains at night, as on real clusters.
    double daily_swing = 0;
};

// Jobs carry no profile (the replay draws one per job from the catalogue, seeded).
Trace synthetic_trace(const SyntheticOptions& options);

}  // namespace coloc::replay
