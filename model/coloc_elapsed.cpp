// Learning from ended jobs' elapsed times (Learner::learn_elapsed): the interval regression's
// settled same-GPU pairs join the reference tables as the pairs observed live do, so colocd's
// online path, `colocctl fit --history` and bench/model-learning learn through this one place.
#include <algorithm>

#include "model/coloc_model.hpp"

namespace coloc::model {

IntervalFit ColocModel::learn_elapsed(const std::vector<EndedRun>& runs, const IntervalOptions& options,
                                      const std::string& gpu_type) {
    // The prior must not already hold what these runs taught an earlier call for this type.
    ObservedPairs others;
    for (const auto& [key, seen] : elapsed_.all())
        if (std::get<0>(key) != gpu_type) others.set(std::get<0>(key), std::get<1>(key), std::get<2>(key), seen);
    if (others.all().size() != elapsed_.all().size()) {
        elapsed_ = std::move(others);
        rebuild(false);  // the prior is asked of a few pairs: the tables are rebuilt after the fit
    }
    std::uint16_t hardware = 0;
    const std::vector<GpuHardware> kinds = this->hardware();
    for (std::size_t i = 0; i < kinds.size(); ++i)
        if (kinds[i].gpu_type == gpu_type) {
            hardware = static_cast<std::uint16_t>(i);
            break;
        }
    auto prior = [&](const PairKey& k) {
        Neighbour n{&catalogue_.lookup(k.neighbour), k.where, std::nullopt};
        n.hardware = hardware;
        const Prediction p = predict(catalogue_.lookup(k.job), std::span(&n, 1));
        return DelayPrior{1 / p.speed - 1, std::max(p.uncertainty, 0.01) / (p.speed * p.speed)};
    };
    IntervalFit fit = fit_interval_delays(runs, prior, options);
    for (const auto& [k, d] : fit.pairs) {
        if (k.where != Sharing::Gpu || d.evidence < 1) continue;
        // Only catalogue profiles name a pair; the default profile stands for many different jobs.
        const JobProfile* a = catalogue_.find(k.job);
        const JobProfile* b = catalogue_.find(k.neighbour);
        if (!a || !b || a->id == 0 || b->id == 0) continue;
        elapsed_.set(gpu_type, a->name, b->name, {table_speed(*a, *b, 1 + d.delay), 1});
    }
    ++version_;
    rebuild();
    return fit;
}

}  // namespace coloc::model
