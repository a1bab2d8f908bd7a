// The `spread` policy: the emptiest node first (most idle GPUs), and on it the least used GPUs;
// a GPU is shared only when no node has enough idle ones.
#pragma once

#include "place/policy.hpp"

namespace coloc::place {

class SpreadPolicy final : public Policy {
public:
    // With `annotate`, decisions carry the model's predictions for the chosen placement.
    explicit SpreadPolicy(const model::InterferenceModel* annotate = nullptr) : annotate_(annotate) {}
    std::string name() const override { return "spread"; }
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;

private:
    const model::InterferenceModel* annotate_;
};

}  // namespace coloc::place
