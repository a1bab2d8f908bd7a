// Node steering: Slurm picks a job's nodes before colocd hears of the job, so colocd steers the
// choice the ways Slurm offers. For every node it predicts the loss of throughput a new job
// would meet there (a probe job placed by the engine, its own slowdown plus the harm it adds to
// the node's jobs) and turns it into
//   - extra node Weight (Slurm chooses lower weights first): the busier, the heavier;
//   - one Slurm feature per job class (e.g. coloc_quietnet) on the nodes where a probe of that
//     class would lose almost nothing, so that jobs can ask for them with `--prefer`.
// Changes are damped (hysteresis) and rate-limited so that Slurm is not flooded with updates.
// This file decides; daemon/steering/node_writer.* (through slurm/nodes.*) tells Slurm.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/steering_config.hpp"
#include "model/catalogue.hpp"
#include "model/model.hpp"
#include "place/cluster_state.hpp"
#include "place/policy.hpp"

namespace coloc::daemon {

// coloc's part of what Slurm should know about a node; the admin's weight and features are
// added to it when it is applied.
struct NodeAdvice {
    int extra_weight = 0;
    std::vector<std::string> features;  // sorted
    bool operator==(const NodeAdvice&) const = default;
};

// One node's advice to send; nullopt = give the node back its admin's settings.
struct NodeUpdate {
    std::string node;
    std::optional<NodeAdvice> advice;
};

// The built-in probe of a class feature: a two-node job with heavy gradient traffic for
// coloc_quietnet, a one-GPU compute-bound job for coloc_quietgpu; other names get the default.
model::JobProfile builtin_probe(const std::string& feature);

// Predicted loss of throughput per GPU of `probe` placed on `node` by `policy` (its own slowdown
// plus the harm to the node's jobs; a multi-node probe also counts the jobs on the node's link);
// +infinity when it does not fit there.
double probe_loss(const place::ClusterState& state, const place::Policy& policy, const model::InterferenceModel& model,
                  const model::JobProfile& probe, int node);

// Advice for one node from its probes' losses (`class_losses` in the order of cfg.classes),
// damped against what was applied last (`last`, nullopt = nothing applied yet).
NodeAdvice advise(const SteeringConfig& cfg, double weight_loss, const std::vector<double>& class_losses,
                  const std::optional<NodeAdvice>& last);

// The steering state colocd keeps: on or off, what each node was last told, when the last round
// ran. Rounds run from colocd's main loop; what they return goes to Slurm.
class Steering {
public:
    // Throws std::invalid_argument naming a class profile the catalogue does not hold.
    Steering(SteeringConfig cfg, const model::ProfileCatalogue& catalogue, int nodes);

    bool enabled() const { return enabled_; }
    const SteeringConfig& config() const { return cfg_; }
    // Switching off returns the updates that give every node touched its admin's settings back.
    std::vector<NodeUpdate> set_enabled(bool on, const place::Topology& topo);
    // Something changed (a job started or ended): the next round recomputes.
    void mark_dirty() { dirty_ = true; }
    // One round when enabled, due (interval) and something changed; at most
    // max_updates_per_round updates, the biggest weight changes first. A call looks at no more
    // than `max_nodes` nodes: a round over a large cluster is spread over several calls (the
    // updates come with the call that ends it), so colocd's loop never stalls for long.
    std::vector<NodeUpdate> round(const place::ClusterState& state, const place::Policy& policy,
                                  const model::InterferenceModel& model, std::int64_t now_ms,
                                  int max_nodes = std::numeric_limits<int>::max());
    const std::optional<NodeAdvice>& applied(int node) const { return applied_[static_cast<std::size_t>(node)]; }
    // The least extra weight any node was given (the nodes Slurm tries first); nullopt = none.
    std::optional<int> least_extra_weight() const;
    std::int64_t rounds() const { return rounds_; }
    std::int64_t updates() const { return updates_; }

private:
    SteeringConfig cfg_;
    std::vector<model::JobProfile> builtin_;  // probes not from the catalogue (stable addresses)
    std::vector<const model::JobProfile*> class_probes_;
    const model::JobProfile* weight_probe_ = nullptr;
    void set_applied(int node, std::optional<NodeAdvice> advice);

    std::vector<std::optional<NodeAdvice>> applied_;
    std::map<int, int> extra_weights_;  // extra weight -> nodes given it, for least_extra_weight
    bool enabled_ = false;
    bool dirty_ = true;
    std::int64_t last_round_ms_ = -1;
    struct Change {
        int node;
        int weight_change;
        NodeAdvice advice;
    };
    int cursor_ = -1;              // the next node of the round under way; -1 = none
    std::vector<Change> pending_;  // what the round under way would change
    std::int64_t rounds_ = 0;
    std::int64_t updates_ = 0;
};

}  // namespace coloc::daemon
