// What the engine worked out about running jobs (their neighbours and predicted slowdown), kept
// between decisions while their neighbours and the model's predictions stay the same
// (ClusterState's change stamps, the model's version()). The owner passes it to each decision;
// without one every decision works them out afresh, with the same results.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/model.hpp"
#include "place/cluster_state.hpp"

namespace coloc::place {

// A running job's predicted slowdown beside `neighbours`; with an additive model also their
// delays added up (`sum`), to which the engine adds a new job's delay instead of predicting again.
double current_slowdown(const model::InterferenceModel& model, const RunningJob& job,
                        std::span<const model::Neighbour> neighbours, model::DelaySum& sum);

class PredictionCache {
public:
    struct Entry {
        std::uint64_t stamp = 0;  // ClusterState::changes() when worked out; 0 = never
        double before = 1;
        std::vector<model::Neighbour> base;
        model::DelaySum sum;  // with an additive model
    };

    // The entry of `job`, brought up to date. It stays where it is until the job ends.
    const Entry& get(const ClusterState& state, const model::InterferenceModel& model, const RunningJob& job);

private:
    Entry& slot(JobId id);
    void forget_ended(const ClusterState& state);

    // Entries live in a pool sized by the running jobs (a deque: growing it leaves them where
    // they are, and decisions hold on to them). Small ids (the replay numbers its jobs 0..n-1)
    // find theirs through `dense`, others through `sparse`.
    static constexpr JobId kDense = JobId{1} << 22;
    std::uint64_t instance_ = 0;       // the ClusterState it is about
    std::uint64_t model_version_ = 0;  // the model's version() it was worked out with
    std::deque<Entry> pool_;
    std::vector<std::uint32_t> unused_;  // pool positions free for reuse
    std::vector<std::uint32_t> dense_;   // id -> pool position + 1; 0 = none
    std::unordered_map<JobId, std::uint32_t> sparse_;
    std::vector<JobId> live_;  // ids with an entry, to free those of ended jobs
};

}  // namespace coloc::place
