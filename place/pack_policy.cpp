#include "place/pack_policy.hpp"

#include "place/policy_support.hpp"

namespace coloc::place {

Decision PackPolicy::place(const ClusterState& state, const JobRequest& request, int) const {
    return place_by_rule(state, request, {Capacity::Open, NodeOrder::Fullest, GpuOrder::MostUsed}, annotate_);
}

}  // namespace coloc::place
