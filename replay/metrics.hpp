// What a replay of one policy comes to: the figures of the table, from the per-job outcomes.
#pragma once

#include <string>
#include <vector>

#include "replay/simulator.hpp"
#include "replay/workload.hpp"

namespace coloc::replay {

struct Summary {
    std::string policy;
    std::size_t jobs = 0;  // finished
    std::size_t never_started = 0;
    double mean_jct = 0, p50_jct = 0, p95_jct = 0, p99_jct = 0;  // completion time: end - submit (s)
    double mean_wait = 0;                                        // start - submit (s)
    double makespan = 0;                                         // last end - first submit (s)
    double gpu_util = 0;                                         // busy GPU-seconds / (GPUs x makespan)
    double mean_slowdown = 1;                                    // run time under interference / solo run time
    double slowed_share = 0;                                     // share of jobs slowed by more than 10 %
    std::size_t events = 0, decisions = 0, backfilled = 0, declined = 0;
    double wall_s = 0;
};

Summary summarize(const std::vector<ReplayJob>& jobs, const PolicyRun& run, int total_gpus);

// Nearest-rank percentile of `values` (0 < p <= 100); 0 for none. Reorders `values`.
double percentile(std::vector<double>& values, double p);

// "45s", "12.5m", "3.20h", "2.5d"
std::string format_duration(double seconds);

// The table, one row per policy, with each policy's change in mean JCT against pack and
// exclusive (when they were replayed).
std::string format_table(const std::vector<Summary>& summaries);

}  // namespace coloc::replay
