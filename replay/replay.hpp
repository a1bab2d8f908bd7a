// One replay: the same workload through each policy, every one under the same truth model.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "place/coloc_policy.hpp"
#include "place/topology.hpp"
#include "replay/metrics.hpp"
#include "replay/simulator.hpp"
#include "replay/workload.hpp"

namespace coloc::replay {

struct ReplaySetup {
    const place::Topology* topology = nullptr;
    std::vector<std::string> policies = {"exclusive", "slurm", "pack", "spread", "coloc"};
    const model::InterferenceModel* model = nullptr;  // what the coloc policy places by
    const model::InterferenceModel* truth = nullptr;  // how fast jobs really run
    place::ColocOptions coloc;
    // coloc learns while it places, as colocd does (SimLearning: its jobs' iteration reports and
    // ended jobs' elapsed times), on a private copy of `model` per run, so that the other
    // policies and the next run are not touched by it: `learning_model` makes the copy (default:
    // a copy of `model` when it is coloc's model; a model that cannot learn stays as it is).
    // Off: coloc places by `model` as it is, as `coloc-nolearn` always does.
    bool learning = true;
    // The share of the learning coloc's sharing decisions that may explore (see
    // place/sharing_rule.hpp); 0 (the default): none. On bench/replay-quality exploring one
    // decision in twenty cost more than it taught: the pairs coloc forms anyway teach enough.
    double explore_share = 0;
    // coloc's jobs (coloc, coloc-nolearn, oracle: colocd with admission) may start no sooner
    // than this after their submission: a gated job waits for colocd's next read of the queue.
    double admission_delay_s = 0;
    std::function<std::unique_ptr<model::InterferenceModel>()> learning_model;
    SimOptions sim;  // sim.learning: the reports' interval, noise, seed and the elapsed window
    std::function<void(const std::string& policy)> on_policy;  // before each policy's replay
};

struct ReplayResult {
    std::vector<PolicyRun> runs;
    std::vector<Summary> summaries;
};

// The policies a replay knows: make_policy's, `coloc-nolearn` (coloc with its model as it is) and
// `oracle`, coloc's engine and sharing rule with the truth as its model (how much a better model
// would still win; it does not learn: it knows).
const std::vector<std::string>& replay_policy_names();

// What a job needs on a node under `policy`: idle GPUs for exclusive, GPUs with a free slot for
// the others.
place::Capacity capacity_of(const std::string& policy);

// Throws std::invalid_argument for an unknown policy or a missing topology, model or truth.
ReplayResult run_replay(const Workload& workload, const ReplaySetup& setup);

}  // namespace coloc::replay
