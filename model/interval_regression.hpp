// Pair delays learned from jobs' elapsed times, with no report from the jobs themselves.
//
// A job whose solo work W (its elapsed time alone) is known ran for E seconds through intervals
// k of length t_k, each with a set of neighbours N_k. Its progress in interval k is
// t_k / (1 + D_k), with D_k the sum of its neighbours' delays, so
//     E - W = sum_k (t_k / (1 + D_k)) * D_k = sum_n d(job, n) * sum_{k: n in N_k} t_k / (1 + D_k),
// one linear equation on the delays of the pairs it formed, once the weights t_k / (1 + D_k)
// are taken at the current estimates. Many jobs give a least-squares problem, solved with a
// ridge toward the model's own prediction weighted by the model's own uncertainty (so a pair
// seen once moves only as far as the evidence allows), and re-weighted until the delays stop moving. Each
// equation is weighted by 1 / (noise E)^2: the noise of an elapsed time grows with it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "model/model.hpp"

namespace coloc::model {

struct RunInterval {
    double duration_s = 0;
    // Neighbours over the interval: profile name and how tightly they shared with the job.
    std::vector<std::pair<std::string, Sharing>> neighbours;
};

// One ended job. state: "COMPLETED" (or "ended") is usable; anything else is left out.
struct EndedRun {
    std::string job;  // profile name
    std::string state = "COMPLETED";
    double solo_s = 0;  // solo work; 0 = unknown
    double elapsed_s = 0;
    int gpus = 1;  // the GPUs it ran on, all nodes together
    std::vector<RunInterval> intervals;
};

// Why runs were left out, counted.
struct LeftOut {
    int failed = 0;     // did not complete (failed, cancelled, timed out, node failure)
    int too_short = 0;  // shorter than the minimum: start-up dominates
    int no_solo = 0;    // no solo work known for its profile
    int alone = 0;      // never shared anything: nothing to learn about pairs
    // On several GPUs with two or more neighbours on GPUs at once: they may have sat on different
    // GPUs of it, and it ran at its slowest GPU's pace, which no sum of their delays describes
    // (one such neighbour, or several on a one-GPU job's GPU, add up).
    int several_gpus = 0;
    int total() const { return failed + too_short + no_solo + alone + several_gpus; }
};

struct PairKey {
    std::string job, neighbour;
    Sharing where = Sharing::Gpu;
    auto tie() const { return std::tie(job, neighbour, where); }
    bool operator<(const PairKey& o) const { return tie() < o.tie(); }
};

struct PairDelay {
    double delay = 0;     // extra slowdown the neighbour adds to the job
    double evidence = 0;  // the data's weight on it, in units of the prior's (>= 1: the data dominates)
    double prior = 0;     // the delay before the evidence
};

struct IntervalFit {
    std::map<PairKey, PairDelay> pairs;
    int used = 0;  // runs that entered the fit
    LeftOut left_out;
};

struct IntervalOptions {
    double min_elapsed_s = 300;  // shorter runs are dominated by start-up and queue noise
    double noise = 0.05;         // relative noise of an elapsed time
    int max_passes = 50;         // re-weighting passes, until the delays stop moving
};

// The prior of a pair: the model's delay before this evidence and its standard deviation.
struct DelayPrior {
    double delay = 0;
    double sd = 0.3;
};
using PriorDelay = std::function<DelayPrior(const PairKey&)>;

IntervalFit fit_interval_delays(const std::vector<EndedRun>& runs, const PriorDelay& prior,
                                const IntervalOptions& options = {});

// Whether a run can be used; one that cannot is counted in `left_out` under its reason.
bool usable_run(const EndedRun& run, const IntervalOptions& options, LeftOut& left_out);

}  // namespace coloc::model
