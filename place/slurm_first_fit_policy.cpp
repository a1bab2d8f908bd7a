#include "place/slurm_first_fit_policy.hpp"

#include "place/policy_support.hpp"

namespace coloc::place {

Decision SlurmFirstFitPolicy::place(const ClusterState& state, const JobRequest& request, int) const {
    return place_by_rule(state, request, {Capacity::Open, NodeOrder::FirstFit, GpuOrder::LeastUsed}, annotate_);
}

}  // namespace coloc::place
