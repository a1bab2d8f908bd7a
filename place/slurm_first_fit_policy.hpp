// The `slurm` policy: Slurm's cons_tres on shared nodes. The first node in index order with
// enough GPUs that have a free slot; on it, the least used GPUs (lowest index on ties).
#pragma once

#include "place/policy.hpp"

namespace coloc::place {

class SlurmFirstFitPolicy final : public Policy {
public:
    // With `annotate`, decisions carry the model's predictions for the chosen placement.
    explicit SlurmFirstFitPolicy(const model::InterferenceModel* annotate = nullptr) : annotate_(annotate) {}
    std::string name() const override { return "slurm"; }
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;

private:
    const model::InterferenceModel* annotate_;
};

}  // namespace coloc::place
