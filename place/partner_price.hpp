// The partner price: what a placement beside another job costs the jobs to come, who could
// have used that slot.
//
// A free slot of a busy GPU is worth what the jobs to come could get from it, and that depends
// on who runs there: beside a job that every job pairs well with, any of them runs at full
// speed; beside one that few pair well with, only those few do. A job that pairs well with all
// of them should therefore take the slot beside the job few pair well with, and leave the easy
// neighbour's slot to those who need it (two jobs that pair well with anyone, on one GPU,
// spend a place the others could not find elsewhere).
//
// Priced in the engine's units (throughput, GPU-weighted). A job of class c beside the jobs O
// on a GPU keeps f_c(O) = max(0, 1 - l_c(O)) of a GPU's throughput, l_c(O) being what the
// engine would charge it there (its own throughput lost and what it costs each job of O, on
// all of that job's GPUs). Over the mix w_c of what the queue and the arrivals ask for (by
// GPUs), a slot beside O is worth f(O) = sum_c w_c f_c(O). A GPU with r free slots beside O
// offers f(O) + (r - 1) m, with m = sum_c w_c f({c}) what a slot beside the next to come is
// worth; an idle GPU offers a GPU alone (1) and m for each slot more. A placement takes what
// the offer of each GPU it uses falls by, charged at the probability that the jobs to come
// need shared slots at all: that those queued and those arriving over the job's run (a
// Poisson count at the rate seen so far, trusted as far ahead as it was seen, as in
// place/fragmentation.hpp) ask for more GPUs than are idle.
//
// What is charged is the fall beyond what an idle GPU's would be (1 + m - f({the job})), and
// never below 0: an idle GPU costs nothing, and a shared slot never becomes cheaper than GPUs
// of its own by this price (whether to share at all is the sharing rule's trade, as with
// fragmentation: a GPU worth little to the others must not pull a job into a harmful pair
// while a GPU of its own is free).
//
//   price = P(Q + N > I) x sum over its busy GPUs of max(0, fall - (1 + m - f({job})))
//
// So a job that pairs well with everyone goes beside the job few pair well with rather than
// beside another easy one; where every class pairs well with every other, the falls are all
// alike and the price is ~0 (the engine's best fit decides, as before). Nothing is paid when
// the idle GPUs are plenty for what is asked, or nobody is asked about. Only the GPU itself
// is weighed: what a job costs its node's other GPUs and links is the engine's loss, and
// differs little between the slots a node offers.
//
// The mix keeps the classes that ask for the most GPUs (kMixClasses): each occupant set seen is
// predicted once per class, and a deep mix of rare classes would change no choice.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "place/cluster_state.hpp"
#include "place/policy.hpp"

namespace coloc::place {

inline constexpr std::size_t kMixClasses = 8;

// Who is expected to want a slot, and how many: kept by the caller (place/queue_demand.hpp) and
// handed to the engine with the request.
struct PartnerDemand {
    std::vector<std::pair<const model::JobProfile*, double>> mix;  // class and weight (summing to 1)
    double queued_gpus = 0;    // GPUs the queued jobs ask for (the one placed not among them)
    double gpus_per_s = 0;     // GPUs the arrivals ask for per second
    double seen_s = 0;         // how far ahead the rate is trusted
    double typical_run_s = 0;  // the mean time limit asked for: the horizon without the job's own
    // The probability that the jobs to come within `horizon_s` ask for more GPUs than `idle`;
    // `placing`: the GPUs of the job being placed, counted off those queued.
    double scarcity(int idle, double horizon_s, int placing = 0) const;
};

// What the engine keeps between decisions: f_c(O) per class, occupants and GPU kind, until the
// model's pair predictions are worked out afresh (its settled_version()).
class PartnerCache {
public:
    // f_c(O): the throughput a job of class `c` keeps beside `occupants` (profile, GPU count).
    double keeps(const model::InterferenceModel& model, const model::JobProfile& c,
                 const std::vector<std::pair<const model::JobProfile*, int>>& occupants, std::uint16_t hardware);
    // The decisions that follow value slots for `mix`: f(O) is kept while it stays the same (a
    // replay's pass weighs many jobs against one queue).
    void use_mix(const model::InterferenceModel& model,
                 const std::vector<std::pair<const model::JobProfile*, double>>& mix);
    // f(O) over that mix.
    double slot_value(const model::InterferenceModel& model,
                      const std::vector<std::pair<const model::JobProfile*, int>>& occupants, std::uint16_t hardware);

private:
    using Key = std::vector<std::uintptr_t>;
    struct KeyHash {
        std::size_t operator()(const Key& key) const;
    };
    void check_version(const model::InterferenceModel& model);
    std::uint64_t version_ = 0;
    std::unordered_map<Key, double, KeyHash> kept_;
    std::vector<std::pair<const model::JobProfile*, double>> mix_;
    std::unordered_map<Key, double, KeyHash> valued_;  // f(O) for mix_
};

// The price for one decision.
class PartnerPrice {
public:
    // No price without the request's PartnerDemand, or when the idle GPUs are surely enough.
    // Keeps references: `request` outlives the price.
    PartnerPrice(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                 PartnerCache* cache);
    bool any() const { return scarcity_ > 0; }
    // The price of taking one slot on each GPU of `gpus` on `node`.
    double of(int node, const std::vector<int>& gpus);

private:
    // The GPU's offer, f(O) + (r - 1) m, before and after the job takes a slot of it.
    std::pair<double, double> offers(int node, int gpu);
    // On GPUs of one kind: m, and what an idle GPU's offer falls by when the job takes it.
    struct Kind {
        std::uint16_t hardware;
        double next, own;
    };
    const Kind& kind(std::uint16_t hardware);

    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    PartnerCache* cache_;
    PartnerCache own_cache_;  // when the caller keeps none
    double scarcity_ = 0;
    std::vector<Kind> kinds_;  // worked out when asked for
    std::vector<std::pair<const model::JobProfile*, int>> occupants_;
};

}  // namespace coloc::place
