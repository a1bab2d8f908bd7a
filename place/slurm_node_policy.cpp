#include "place/slurm_node_policy.hpp"

#include <limits>

namespace coloc::place {

namespace {

ColocOptions sharing_always(ColocOptions o) {
    o.sharing_rule = false;
    o.max_loss_per_gpu = std::numeric_limits<double>::infinity();
    return o;
}

}  // namespace

SlurmNodeColocGpus::SlurmNodeColocGpus(const model::InterferenceModel& model, ColocOptions options)
    : gpus_(model, sharing_always(options), "slurm-coloc") {}

Decision SlurmNodeColocGpus::place(const ClusterState& state, const JobRequest& request, int keep) const {
    const Decision slurm = slurm_.place(state, request, 1);
    if (!slurm.placed) return slurm;
    JobRequest on_slurms_nodes = request;
    on_slurms_nodes.allowed_nodes.clear();
    for (const Placement& p : slurm.chosen.where) on_slurms_nodes.allowed_nodes.push_back(p.node);
    return gpus_.place(state, on_slurms_nodes, keep);
}

}  // namespace coloc::place
