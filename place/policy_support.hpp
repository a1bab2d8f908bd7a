// What the simple (interference-blind) policies have in common: they differ only in the order
// in which they try nodes and GPUs, and in whether a GPU may be shared. The capacity indexes of
// ClusterState give each order without scanning the cluster.
#pragma once

#include "place/policy.hpp"

namespace coloc::place {

enum class NodeOrder {
    FirstFit,  // lowest node index first (Slurm's cons_tres on equal weights)
    Fullest,   // fewest free slots (best fit), then lowest index
    Emptiest,  // most idle GPUs, then most GPUs with a free slot, then lowest index
};

enum class GpuOrder {
    Index,      // lowest GPU index first
    LeastUsed,  // fewest jobs on the GPU, then lowest index
    MostUsed,   // most jobs on the GPU (fill a GPU before opening another), then lowest index
};

struct SimpleRule {
    Capacity kind = Capacity::Open;  // Idle = never share a GPU
    NodeOrder nodes = NodeOrder::FirstFit;
    GpuOrder gpus = GpuOrder::Index;
};

// The GPUs of `node` the request may take under `kind`, in `order`; empty when fewer than
// request.gpus_per_node.
std::vector<int> pick_gpus(const ClusterState& state, const JobRequest& request, int node, Capacity kind,
                           GpuOrder order);

// Places by `rule`: the first request.nodes nodes in the rule's order that offer enough GPUs.
// With `annotate`, the chosen candidate carries the model's predictions (for explain); without,
// only the placement.
Decision place_by_rule(const ClusterState& state, const JobRequest& request, const SimpleRule& rule,
                       const model::InterferenceModel* annotate);

}  // namespace coloc::place
