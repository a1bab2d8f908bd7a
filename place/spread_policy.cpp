#include "place/spread_policy.hpp"

#include "place/policy_support.hpp"

namespace coloc::place {

Decision SpreadPolicy::place(const ClusterState& state, const JobRequest& request, int) const {
    return place_by_rule(state, request, {Capacity::Open, NodeOrder::Emptiest, GpuOrder::LeastUsed}, annotate_);
}

}  // namespace coloc::place
