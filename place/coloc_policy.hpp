// The coloc engine: every feasible GPU set on every candidate node is scored by the model's
// predicted loss of throughput (the new job's and its neighbours') plus, when the request's
// outlook says what is asked of nodes, the price of the nodes it leaves unable to take larger
// jobs (place/fragmentation.hpp), and the least wins.
//
// Candidate nodes come from ClusterState's capacity indexes, never from a scan of the cluster:
// nodes that run no job score alike for a single-node job, so one per node type stands for all
// of them; nodes that run jobs are all scored while there are at most `max_nodes_scored` of them,
// else that many, the most open first (from a start that rotates with the job id, so that equal
// nodes share the load). A node's running jobs are read once per node, not once per GPU set, and
// GPU sets that give every neighbour the same kind of sharing are scored once. With an additive
// model (coloc's), a neighbour's slowdown with the new job is its delays now plus the new job's,
// not a prediction from its whole neighbour list again.
#pragma once

#include <limits>
#include <memory>

#include "place/policy.hpp"

namespace coloc::place {

struct ColocOptions {
    // Occupied nodes scored per decision; 0 = all (exact on any cluster, slow on large ones).
    int max_nodes_scored = 32;
    // Admission: refuse to place (the job waits) when the best candidate's predicted loss per GPU
    // of the job exceeds this. 1.0 = co-locate only when the pair is predicted to get more done
    // than the two jobs one after the other. Infinity = never refuse (what colocd does: Slurm has
    // already started the job when colocd is asked).
    double max_loss_per_gpu = std::numeric_limits<double>::infinity();
    // Keep each running job's neighbours and predicted slowdown between decisions until they
    // change (ClusterState's change stamps) or the model's predictions do (its version()): a
    // PredictionCache in the policy. Decisions are the same with it or without.
    bool reuse_predictions = false;
    // The sharing rule (place/sharing_rule.hpp): with a request's outlook, hold a job back from a
    // shared GPU when waiting for GPUs of its own is expected to finish the work sooner. Off =
    // share whenever a slot is free (for comparison).
    bool sharing_rule = true;
};

class ColocPolicy final : public Policy {
public:
    // `name`: what the policy is called in reports (the replay's oracle is this engine too).
    explicit ColocPolicy(const model::InterferenceModel& model, ColocOptions options = {}, std::string name = "coloc");
    ~ColocPolicy() override;
    std::string name() const override { return name_; }
    // Safe from several threads at once: decisions take turns at what they reuse.
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;
    std::optional<Candidate> rescore(const ClusterState& state, const JobRequest& request,
                                     const Candidate& where) const override;
    const ColocOptions& options() const { return options_; }

private:
    // The node scorer's scratch, buffers and, with reuse_predictions, the PredictionCache.
    struct Reused;
    const model::InterferenceModel* model_;
    ColocOptions options_;
    std::string name_;
    // Behind a lock so that const place() stays safe from several threads (steering, tests and
    // benchmarks share a policy); no decision depends on what an earlier one left in it.
    std::unique_ptr<Reused> reused_;
};

}  // namespace coloc::place
