// What a replay of one policy comes to: the figures of the table, from the per-job outcomes.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "replay/simulator.hpp"
#include "replay/workload.hpp"

namespace coloc::replay {

// The model's error on the pairs a policy formed (PolicyRun::model_error): the mean absolute
// error of the speed in the first and the last tenth of the started jobs, by start order (NaN
// where no pair formed).
struct ModelErrorTenths {
    std::size_t first_pairs = 0, last_pairs = 0;
    double first_mae = std::numeric_limits<double>::quiet_NaN();
    double last_mae = std::numeric_limits<double>::quiet_NaN();
};
ModelErrorTenths model_error_tenths(const PolicyRun& run);

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
    // Policies with a model (coloc, coloc-nolearn): its error on the pairs formed, and what it
    // learned from (PolicyRun).
    bool judged = false, learned = false;
    ModelErrorTenths model_error;
    std::size_t pairs_formed = 0, reports = 0, refits = 0;
};

Summary summarize(const std::vector<ReplayJob>& jobs, const PolicyRun& run, int total_gpus);

// Nearest-rank percentile of `values` (0 < p <= 100); 0 for none. Reorders `values`.
double percentile(std::vector<double>& values, double p);

// "45s", "12.5m", "3.20h", "2.5d"
std::string format_duration(double seconds);

// The table, one row per policy, with each policy's change in mean JCT against pack and
// exclusive (when they were replayed); below it, the error of each judged policy's model on
// the pairs it formed, early and late, and what it learned from.
std::string format_table(const std::vector<Summary>& summaries);

}  // namespace coloc::replay
