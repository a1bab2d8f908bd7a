#include "place/prediction_cache.hpp"

#include <algorithm>

namespace coloc::place {

double current_slowdown(const model::InterferenceModel& model, const RunningJob& job,
                        std::span<const model::Neighbour> neighbours, model::DelaySum& sum) {
    if (!model.additive()) return model.slowdown(*job.profile, neighbours);
    sum.clear();
    for (const model::Neighbour& n : neighbours) sum.add(n.where, n.gpus, model.delay(*job.profile, n));
    return sum.slowdown();
}

PredictionCache::Entry& PredictionCache::slot(JobId id) {
    std::uint32_t* at = nullptr;
    if (id < kDense) {
        if (id >= dense_.size()) dense_.resize(id + 1 + dense_.size() / 2, 0);
        at = &dense_[id];
    } else {
        at = &sparse_[id];
    }
    if (*at == 0) {
        if (unused_.empty()) {
            pool_.emplace_back();
            *at = static_cast<std::uint32_t>(pool_.size());
        } else {
            *at = unused_.back() + 1;
            unused_.pop_back();
        }
        live_.push_back(id);
    }
    return pool_[*at - 1];
}

void PredictionCache::forget_ended(const ClusterState& state) {
    std::erase_if(live_, [&](JobId id) {
        if (state.find(id)) return false;
        std::uint32_t& at = id < kDense ? dense_[id] : sparse_[id];
        pool_[at - 1].stamp = 0;
        unused_.push_back(at - 1);
        if (id < kDense)
            at = 0;
        else
            sparse_.erase(id);
        return true;
    });
}

const PredictionCache::Entry& PredictionCache::get(const ClusterState& state, const model::InterferenceModel& model,
                                                   const RunningJob& job) {
    if (instance_ != state.instance() || model_version_ != model.version()) {
        pool_.clear();
        unused_.clear();
        dense_.clear();
        sparse_.clear();
        live_.clear();
        instance_ = state.instance();
        model_version_ = model.version();
    }
    if (live_.size() > 2 * state.job_count() + 1024) forget_ended(state);
    Entry& e = slot(job.id);
    if (e.stamp == 0 || e.stamp < state.last_change(job)) {
        e.base.clear();
        state.neighbours_of(job, e.base);
        e.before = current_slowdown(model, job, e.base, e.sum);
        e.stamp = state.changes();  // >= every stamp so far; never 0 while a job runs
    }
    return e;
}

}  // namespace coloc::place
