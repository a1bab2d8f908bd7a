// The `pack` policy: bin packing blind to interference. The fullest node that still fits, and on
// it the fullest GPUs, so a GPU is shared before another one is opened.
#pragma once

#include "place/policy.hpp"

namespace coloc::place {

class PackPolicy final : public Policy {
public:
    // With `annotate`, decisions carry the model's predictions for the chosen placement.
    explicit PackPolicy(const model::InterferenceModel* annotate = nullptr) : annotate_(annotate) {}
    std::string name() const override { return "pack"; }
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;

private:
    const model::InterferenceModel* annotate_;
};

}  // namespace coloc::place
