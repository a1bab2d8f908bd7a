// The `exclusive` policy. One job per GPU, nodes first fit in index order (what Slurm does with
// gres/gpu and no sharing).
#pragma once

#include "place/policy.hpp"

namespace coloc::place {

class ExclusivePolicy final : public Policy {
public:
    // With `annotate`, decisions carry the model's predictions for the chosen placement.
    explicit ExclusivePolicy(const model::InterferenceModel* annotate = nullptr) : annotate_(annotate) {}
    std::string name() const override { return "exclusive"; }
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;

private:
    const model::InterferenceModel* annotate_;
};

}  // namespace coloc::place
