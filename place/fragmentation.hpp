// Fragmentation: what a placement costs the jobs that need many idle GPUs on one node.
//
// A job that takes t idle GPUs of a node with i of them leaves it j = i - t: for the job's run
// time the node no longer takes a job that needs more than j GPUs on each node. Whatever node it
// goes to, it takes capacity from jobs of its own size or smaller (that competition is the
// queue's and the sharing rule's business); what the choice of node decides is whether it also
// takes a node from jobs larger than itself. So a placement of a job of g GPUs per node is
// charged for the sizes k in (max(j, g), i] that someone asks for.
//
// Priced in the engine's units, throughput lost (GPU-weighted): while the jobs that take k
// GPUs per node want more nodes with k idle GPUs than there are, a node lost to them is k GPUs
// of their work put off for as long as the job runs, and its idle GPUs left do not take them.
// With Q_k the nodes the queued jobs of k or more GPUs per node want, N_k those the arrivals ask
// for over the job's run time W (a Poisson count at the rate seen so far, trusted as far ahead as
// it was seen, like the sharing rule's arrivals), and S_k the nodes with k idle GPUs now:
//
//   value_k = k P(Q_k + N_k >= S_k)        (0 when no job asks for exactly k GPUs per node)
//   price   = max over k in (max(j, g), i] of value_k
//
// The maximum, not the sum: the node takes one of those jobs, not each of them.
//
// What is charged is the price beyond the least that GPUs of its own would cost it (the floor:
// what the costliest of the cheapest nodes with idle GPUs enough charges, as many nodes as the
// job needs; 0 when no node has them): what the choice among GPUs of its own costs.
// A GPU that another job uses never becomes cheaper than GPUs of its own by this price: taking
// one keeps a node whole only by leaving its GPUs idle, for a large job that may come, at a
// slowdown that is certain; that trade is the sharing rule's (share or wait), and the price
// counts neither side of it. (Without the floor, coloc and its oracle shared GPUs to keep nodes
// whole on the tiresias trace of bench/replay-quality, and lost up to 1.5 x exclusive there.)
//
// Nothing is paid when such nodes are plentiful for what is asked, or when nobody asks for
// them. The supply counted is the nodes idle now, not those the expected ends free while the job
// runs: other placements take from those too, so this errs towards packing, whose cost is what
// the node-level term predicts, a prior that is small and never measured here. That term is
// weighed at its predicted value, not within its uncertainty: wherever some job is short of
// nodes the price is k times a probability, far above it, so its margin would decide only where
// the price is near 0, that is where spreading costs nobody much.
//
// Without an outlook that says what is asked for (colocd placing a job Slurm already started on
// the nodes it chose), there is no demand to weigh: no price, and the engine's best-fit tie-break
// keeps whole nodes whole between placements the model cannot tell apart.
#pragma once

#include <vector>

#include "place/cluster_state.hpp"
#include "place/policy.hpp"

namespace coloc::place {

// What is asked of nodes, by the GPUs a job takes on each node (index k, 0 unused): kept by the
// caller (the replay's queue, colocd's pending jobs) and handed over with SharingOutlook.
struct NodeDemand {
    std::vector<double> queued;     // [k]: nodes wanted by the jobs queued now
    std::vector<double> submitted;  // [k]: nodes asked for by the jobs submitted over ArrivalRates::counted_s
    // A job of `nodes` nodes with `per_node` GPUs on each joins (+1) or leaves (-1) `to`.
    static void count(std::vector<double>& to, int per_node, int nodes, int sign);
};

// The price for one decision: read once from the request's outlook and the cluster's counts of
// nodes by idle GPUs (O(1) each), then O(GPUs per node) per node at most.
class FragmentationPrice {
public:
    FragmentationPrice(const ClusterState& state, const JobRequest& request);
    // Whether any placement of the request pays anything (else every price is 0).
    bool any() const { return any_; }
    // The price of leaving a node that has `idle` idle GPUs with `left` of them.
    double of(int idle, int left) const;
    // What losing nodes with k idle GPUs costs (index k; 0 for sizes not priced), for explain and tests.
    const std::vector<double>& values() const { return value_; }
    // The least a placement on idle GPUs pays (subtracted from every price).
    double floor() const { return floor_; }

private:
    // The price before the floor is taken off.
    double raw(int idle, int left) const;

    int own_ = 1;  // the request's GPUs per node: sizes up to it are not priced
    bool any_ = false;
    std::vector<double> value_;
    double floor_ = 0;
};

// P(N >= n) for N Poisson with mean `mean`.
double poisson_at_least(double mean, double n);

}  // namespace coloc::place
