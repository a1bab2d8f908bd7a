// A placement policy answers "where should this job go" against the cluster as it is.
// colocd, the replay and the benchmarks all place through this interface; the `coloc` policy
// is the engine that scores candidates with the interference model.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "place/cluster_state.hpp"

namespace coloc::place {

struct SharingOutlook;  // place/sharing_rule.hpp
struct PartnerDemand;   // place/partner_price.hpp

struct JobRequest {
    JobId id = 0;
    const model::JobProfile* profile = nullptr;  // never null
    int gpus_per_node = 1;                       // one slot on each of that many GPUs
    int nodes = 1;
    std::vector<int> allowed_nodes;  // empty = any node (Slurm already chose when not empty)
    std::vector<int> allowed_gpus;   // narrow mode: the GPUs the step holds; empty = any
    // Narrow mode on several nodes: the GPUs Slurm gave the job on each node (node, GPUs). A
    // node listed here may use only its own list; allowed_gpus holds for the others.
    std::vector<std::pair<int, std::vector<int>>> allowed_gpus_per_node;
    // What the sharing rule weighs a wait with (the queue, expected ends); null = no queue known,
    // the job is never held for it.
    const SharingOutlook* outlook = nullptr;
    // Who the queue and the arrivals are (place/partner_price.hpp); null = unknown, no partner price.
    const PartnerDemand* partners = nullptr;

    // Whether the request may take `gpu` of `node` (one rule for every policy).
    bool allows(int node, int gpu) const;
};

// The effect of one candidate placement, as the model predicts it.
struct NeighbourEffect {
    JobId id = 0;
    double before = 1.0;  // predicted slowdown now
    double after = 1.0;   // predicted slowdown with the new job in place
    double after_sd = 0;  // uncertainty of the speed 1 / after (0 = certain or not asked for)
};

struct Candidate {
    std::vector<Placement> where;
    double job_slowdown = 1.0;  // the new job's predicted slowdown there
    double job_sd = 0;          // uncertainty of its speed 1 / job_slowdown (0 = certain or not asked for)
    double harm = 0.0;          // throughput the neighbours lose (GPU-weighted)
    double loss = 0.0;          // total predicted loss of throughput (GPU-weighted)
    // The coloc engine's price for the nodes it leaves unable to take larger jobs, in the same
    // units (place/fragmentation.hpp); the engine ranks by loss + fragmentation + partner, lower first.
    double fragmentation = 0.0;
    // Its price for the slots it takes from the jobs to come (place/partner_price.hpp).
    double partner = 0.0;
    std::vector<NeighbourEffect> effects;
};

struct Decision {
    bool placed = false;
    std::string reason;     // why not, when not placed
    std::string sharing;    // the sharing rule's verdict on the chosen candidate (coloc policy), for explain
    bool held = false;      // not placed because the sharing rule holds it (chosen is what it weighed)
    bool explores = false;  // placed on a pairing only the rule's margin held: exploration
    Candidate chosen;
    std::vector<Candidate> ranked;  // best first, at most the requested number, chosen included
};

class Policy {
public:
    virtual ~Policy() = default;
    virtual std::string name() const = 0;
    // `keep` = how many ranked candidates to return (for explain); 1 is enough to place.
    virtual Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const = 0;
    // `where` (a candidate it chose earlier) scored again as it would score it now, without a
    // search; nothing when it does not score placements.
    virtual std::optional<Candidate> rescore(const ClusterState& /*state*/, const JobRequest& /*request*/,
                                             const Candidate& /*where*/) const {
        return std::nullopt;
    }
};

// Scores one candidate with `model`: the job's own predicted slowdown and the harm it adds to
// each neighbour (slowdown before and after), as GPU-weighted lost throughput.
Candidate score_candidate(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                          std::vector<Placement> where);

// The same with each prediction's uncertainty (model::InterferenceModel::predict), for the
// sharing rule's price on the candidate it weighs.
Candidate score_candidate_with_uncertainty(const ClusterState& state, const model::InterferenceModel& model,
                                           const JobRequest& request, std::vector<Placement> where);

// A running job's neighbours now and its predicted slowdown with them.
struct CurrentLoad {
    std::span<const model::Neighbour> neighbours;
    double slowdown = 1.0;
};
// The same, with each neighbour's current load from `current` (a caller that keeps them between
// decisions) instead of worked out afresh.
Candidate score_candidate(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                          std::vector<Placement> where, const std::function<CurrentLoad(const RunningJob&)>& current);

// The GPUs on `node` the request may take one slot of (free slot, allowed).
std::vector<int> eligible_gpus(const ClusterState& state, const JobRequest& request, int node);

// Candidate nodes in index order: the allowed ones, else all, with enough eligible GPUs.
std::vector<int> candidate_nodes(const ClusterState& state, const JobRequest& request);

}  // namespace coloc::place
