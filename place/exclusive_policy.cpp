#include "place/exclusive_policy.hpp"

#include "place/policy_support.hpp"

namespace coloc::place {

Decision ExclusivePolicy::place(const ClusterState& state, const JobRequest& request, int) const {
    return place_by_rule(state, request, {Capacity::Idle, NodeOrder::FirstFit, GpuOrder::Index}, annotate_);
}

}  // namespace coloc::place
