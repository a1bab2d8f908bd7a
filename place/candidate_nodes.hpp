// Which nodes the coloc engine scores for a request, from ClusterState's capacity indexes and
// never from a scan of the cluster (see coloc_policy.hpp), and which of a node's GPUs it may take.
#pragma once

#include <vector>

#include "place/cluster_state.hpp"
#include "place/policy.hpp"

namespace coloc::place {

// The nodes worth scoring for `request`: the allowed ones when it names some; else one empty
// node per node type (enough per link for a multi-node job), and the occupied nodes that fit it,
// at most `max_nodes_scored` of them (0 = all), the most open first from a start that rotates
// with the job id. With `fewest_idle_too` (the engine prices fragmentation) a bounded search also
// takes, for each count of idle GPUs that fits, a few occupied nodes with that many: the most open
// nodes may have no idle GPU at all, and a price that tells nodes with GPUs of its own apart is
// of no use unless such nodes are scored.
std::vector<int> nodes_to_score(const ClusterState& state, const JobRequest& request, int max_nodes_scored,
                                bool fewest_idle_too = false);

// eligible_gpus() into a buffer that lives on (a decision looks at many nodes).
void eligible_into(const ClusterState& state, const JobRequest& request, int node, std::vector<int>& out);

}  // namespace coloc::place
