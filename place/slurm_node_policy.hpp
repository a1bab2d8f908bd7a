// colocd without admission, as the replay prices it: Slurm picks the node (cons_tres's first
// fit over nodes with free slots, SlurmFirstFitPolicy) and colocd then picks the GPUs on it by
// the model (the engine with the job's nodes fixed, as colocd places a bind job Slurm started).
// A GPU is shared whenever Slurm's slot count lets a job in: nothing holds a job back.
#pragma once

#include <string>

#include "place/coloc_policy.hpp"
#include "place/simple_policies.hpp"

namespace coloc::place {

class SlurmNodeColocGpus final : public Policy {
public:
    // `options.sharing_rule` is ignored: Slurm has started the job before colocd is asked.
    SlurmNodeColocGpus(const model::InterferenceModel& model, ColocOptions options);
    std::string name() const override { return "slurm-coloc"; }
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;

private:
    SlurmFirstFitPolicy slurm_;
    ColocPolicy gpus_;
};

}  // namespace coloc::place
