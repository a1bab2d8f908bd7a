// Scores GPU sets on one node with the same formula as score_candidate, reading the node's
// running jobs (and their current neighbours) once. For a multi-node job it scores the node as
// if the job ran there alone (its other nodes are chosen the same way), links included.
//
// What a GPU set costs depends only on the kind of sharing it gives each resident job (its
// signature), and a resident's harm only on its own kind of sharing. GPUs with the same NVLink
// island, PCIe switch and jobs are interchangeable: the choices are enumerated per set of such
// GPU classes (the lowest GPUs of each class stand for it), and each signature is scored once.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "model/model.hpp"
#include "place/cluster_state.hpp"
#include "place/policy.hpp"
#include "place/prediction_cache.hpp"
#include "place/ranking.hpp"

namespace coloc::place {

// What a multi-node job reached only over a shared link would lose if the new (multi-node) job
// joined its link: the same for every candidate node on that link, so worked out once per job
// and decision.
class LinkHarm {
public:
    LinkHarm(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
             PredictionCache* kept)
        : state_(state), model_(model), request_(request), kept_(kept) {}

    // What joining the link of running job `id` costs it (worked out once per job).
    const NeighbourEffect& effect(JobId id);

private:
    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    PredictionCache* kept_;
    std::unordered_map<JobId, NeighbourEffect> cache_;
    std::vector<model::Neighbour> scratch_;
};

// What NodeScorer works in: kept from node to node and decision to decision, so that a decision
// allocates little. Whoever scores owns one and hands it to each NodeScorer in turn.
struct ScorerScratch {
    struct Resident {
        const RunningJob* job = nullptr;
        const Placement* at = nullptr;
        std::size_t here = 0;                                 // its position in the node's running jobs
        bool ranked = false;                                  // its GPUs here are ascending, on a node of <= 64 GPUs
        std::uint64_t mask = 0;                               // its GPUs here as bits, on a node of <= 64 GPUs
        bool linked = false;                                  // also shares a link with the new job
        const std::vector<model::Neighbour>* base = nullptr;  // its neighbours now (in the cache)
        std::vector<model::Neighbour> own;                    // or here, without a cache (base null)
        const std::vector<model::Neighbour>& neighbours() const { return base ? *base : own; }
        double before = 1.0;
        int gpus = 0;
        int first = 0;  // its GPUs on earlier nodes (Neighbour::gpus)
        // Its slowdown with the new job, per kind of sharing (NaN = not worked out yet): it
        // depends only on how it would share with the new job, and, when it has several GPUs
        // here and shares one with the new job, on which of them (after_gpu, by GPU bits).
        std::array<double, 4> after{};
        std::vector<std::pair<std::uint64_t, double>> after_gpu;
        std::array<double, 4> harm{};  // its lost throughput added, per kind of sharing (see harm())
        // The new job's slowdown beside this resident alone, per kind of sharing (NaN = not yet).
        std::array<double, 4> alone{};
        // With an additive model: its neighbours' delays now, and the delay it would add to the
        // new job and the new job to it, per kind of sharing (NaN = not yet) and over a link.
        const model::DelaySum* sum = nullptr;  // in the cache, or own_sum (null)
        model::DelaySum own_sum;
        const model::DelaySum& delays() const { return sum ? *sum : own_sum; }
        std::array<double, 4> to_new{}, from_new{};
        double to_new_link = 0, from_new_link = 0;
    };
    struct GpuClass {
        std::vector<int> gpus;            // ascending
        std::vector<std::uint8_t> level;  // per resident: sharing with a GPU of the class
    };
    struct Memo {
        std::uint64_t key = 0;
        double job_slowdown = 1, loss = 0;
        bool complete = true;  // false: loss is only a lower bound, already past the bound
    };
    struct Slot {
        std::uint64_t generation = 0;
        std::size_t at = 0;
    };
    static constexpr std::size_t kSlots = 1024;
    static constexpr std::uint8_t kUnknown = 0xff;

    std::vector<Resident> residents;  // the node's running jobs but the new one (a prefix of it)
    std::vector<GpuClass> classes;    // the eligible GPUs by class (a prefix of it)
    std::vector<Memo> memo;           // scored signatures, found through `slots`
    std::array<Slot, kSlots> slots{};
    std::uint64_t generation = 0;  // one per NodeScorer: older slots are empty
    std::vector<const NeighbourEffect*> link_only;
    std::vector<std::uint8_t> levels, level_rows;
    std::vector<double> lb_rows;
    std::vector<model::Neighbour> mine, with;
    model::DelaySum mine_sum;
    std::vector<const Placement*> here_at;  // the node's jobs' placements here
    std::vector<std::uint8_t> pair_levels;  // [i * n + j], i < j: their sharing
    std::vector<std::size_t> chosen;
    std::vector<int> gpus, spare, suffix;
};

class NodeScorer {
public:
    // Reads the node's running jobs (and, from `cache` when there is one, their current neighbours).
    // `link`: the new job runs on several nodes (null: on one). Works in `scratch`, which it
    // clears of the previous node's state; one scorer at a time per scratch.
    NodeScorer(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request, int node,
               LinkHarm* link, PredictionCache* cache, ScorerScratch& scratch);

    // Work stops on a candidate once its loss reaches `bound` (it cannot win): its loss is then
    // reported as at least the bound.
    void set_bound(double bound) { bound_ = bound; }

    // Loss of an explicit GPU set.
    double loss(const std::vector<int>& gpus) { return entry(gpus).loss; }

    // The full candidate for a GPU set: the numbers score_candidate gives.
    Candidate candidate(const std::vector<int>& gpus);

    // Calls visit(loss, gpus) once per distinct choice of k GPUs among `eligible`, where gpus()
    // gives the choice's GPUs (ascending); false (and no call) when there are more than `limit`
    // choices.
    template <class Visit>
    bool for_each_choice(const std::vector<int>& eligible, int k, std::size_t limit, Visit visit) {
        build_classes(eligible);
        std::size_t choices = 0;
        // At most 8 classes give at most 255 choices: only more need counting first.
        if ((classes_used_ > 8 || limit < 255) && !count_choices(0, 0, 0, k, limit, choices)) return false;
        s_.chosen.clear();
        // Row d of s_.level_rows: the residents' levels with the first d chosen classes.
        s_.level_rows.assign((static_cast<std::size_t>(k) + 1) * std::max<std::size_t>(count_, 1),
                             static_cast<std::uint8_t>(model::Sharing::Node));
        s_.lb_rows.assign(static_cast<std::size_t>(k) + 1, 1.0);
        walk(0, 0, k, visit);
        return true;
    }

private:
    using Resident = ScorerScratch::Resident;
    using GpuClass = ScorerScratch::GpuClass;
    using Memo = ScorerScratch::Memo;

    Resident& next_resident();
    const Memo& entry(const std::vector<int>& gpus);
    // With an additive model and no cache: the delays of each resident that runs on this node
    // only, from the other jobs here, which are all its neighbours (what neighbours_of lists for
    // it, without listing it); each pair's sharing is worked out once.
    void sum_pairwise(const std::vector<const RunningJob*>& here);
    // The throughput resident i would lose (GPU-weighted) with the new job on `gpus`, sharing
    // `level` with it: the same for every set unless it depends on which of the resident's GPUs
    // the new job joins.
    double harm(std::size_t i, std::uint8_t level, const std::vector<int>* gpus);
    // Resident i's slowdown with the new job on `gpus`, sharing `level` with it.
    double after(std::size_t i, std::uint8_t level, const std::vector<int>* gpus);
    // Scores the GPU set `set` whose levels (the signature) are `lv`, once per signature while
    // it fits a 64-bit key. A job moves at its slowest GPU's pace, so for a new job on several
    // GPUs the levels do not tell what it costs (two residents that share one of its GPUs each
    // cost less than two stacked on one): its signature is then the set itself. One GPU with
    // the same levels as another holds the same jobs, and costs the same. Stops as soon as the
    // loss reaches bound_: a neighbour never makes a job faster, so the rest could only add to
    // it (the result is then a lower bound, marked incomplete).
    const Memo& score_levels(const std::uint8_t* lv, int gpus, const std::vector<int>* set);
    const Memo& keep_memo(const Memo& m, Memo* known, bool packed);
    // A lower bound of the new job's slowdown for the levels `lv` (a neighbour never makes a job
    // faster, so the slowdown beside all of them is at least that beside any one): the residents
    // it would share a GPU or an island with, one at a time, while the bound can still cut.
    double own_lower_bound(const std::uint8_t* lv);
    // The new job's slowdown beside resident i alone, sharing `level` with it.
    double alone(std::size_t i, std::uint8_t level);
    // With an additive model: the delay resident i would add to the new job, and the new job to
    // it, sharing `level` with each other.
    double to_new(std::size_t i, std::uint8_t level);
    double from_new(std::size_t i, std::uint8_t level);
    // Signature -> s_.memo position, open addressing; a slot is live only in this generation.
    Memo* find_memo(std::uint64_t key);
    void index_memo(std::uint64_t key, std::size_t at);
    static std::size_t hash(std::uint64_t key);
    void build_classes(const std::vector<int>& eligible);
    // Counts the sets of classes (at most k of them, with at least k GPUs) up to `limit`.
    bool count_choices(std::size_t c, int taken, int covered, int k, std::size_t limit, std::size_t& n) const;
    template <class Visit>
    void walk(std::size_t c, int covered, int k, Visit& visit) {
        const int taken = static_cast<int>(s_.chosen.size());
        // Done when every class has been passed, or when k classes are chosen (no more can be).
        if (c == classes_used_ || taken == k) {
            if (taken == 0 || covered < k) return;
            const std::size_t width = std::max<std::size_t>(count_, 1);
            const std::uint8_t* row = &s_.level_rows[static_cast<std::size_t>(taken) * width];
            // The GPUs only when asked for (a candidate that cannot win needs none): the lowest
            // GPU of each chosen class, then the lowest of the rest of them.
            auto gpus = [&]() -> const std::vector<int>& {
                s_.gpus.clear();
                s_.spare.clear();
                for (std::size_t ci : s_.chosen) {
                    s_.gpus.push_back(s_.classes[ci].gpus.front());
                    s_.spare.insert(s_.spare.end(), s_.classes[ci].gpus.begin() + 1, s_.classes[ci].gpus.end());
                }
                std::sort(s_.spare.begin(), s_.spare.end());
                for (std::size_t i = 0; static_cast<int>(s_.gpus.size()) < k; ++i) s_.gpus.push_back(s_.spare[i]);
                std::sort(s_.gpus.begin(), s_.gpus.end());
                return s_.gpus;
            };
            visit(score_levels(row, k, need_set_ ? &gpus() : nullptr).loss, gpus);
            return;
        }
        if (taken > k || covered + s_.suffix[c] < k) return;
        if (taken < k) {
            const std::size_t width = std::max<std::size_t>(count_, 1);
            const std::uint8_t* from = &s_.level_rows[static_cast<std::size_t>(taken) * width];
            std::uint8_t* to = &s_.level_rows[static_cast<std::size_t>(taken + 1) * width];
            // Every choice with this class shares at least this much with the residents it
            // tightens: once the new job's slowdown beside one of them alone reaches the bound,
            // no such choice can win (a neighbour never makes a job faster).
            double lb = s_.lb_rows[static_cast<std::size_t>(taken)];
            for (std::size_t r = 0; r < count_; ++r) {
                to[r] = std::min(from[r], s_.classes[c].level[r]);
                const bool tighter = to[r] < from[r] && to[r] <= static_cast<std::uint8_t>(model::Sharing::Island);
                if (tighter && std::isfinite(bound_)) lb = std::max(lb, alone(r, to[r]));
            }
            s_.lb_rows[static_cast<std::size_t>(taken + 1)] = lb;
            if (lost_throughput(lb, k) + link_harm_ < bound_) {
                s_.chosen.push_back(c);
                walk(c + 1, covered + static_cast<int>(s_.classes[c].gpus.size()), k, visit);
                s_.chosen.pop_back();
            }
        }
        walk(c + 1, covered, k, visit);
    }

    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    int node_;
    std::uint16_t hardware_;  // the node's GPUs, for its same-GPU neighbours
    bool multi_;
    bool additive_;  // the model is additive (DelaySum): residents' slowdowns grow one delay at a time
    bool small_;     // the node has at most 64 GPUs: GPU sets fit in bits
    bool by_set_;    // the new job takes several GPUs: signatures are GPU sets
    bool need_set_;  // scoring needs the GPU set: by_set_, or a resident has several GPUs here
    std::size_t count_ = 0;
    std::size_t classes_used_ = 0;
    double link_harm_ = 0;
    double link_only_delay_ = 0;  // additive: what the s_.link_only jobs add to the new job
    double bound_ = std::numeric_limits<double>::infinity();
    Memo unpacked_;  // a memo that fits no key
    ScorerScratch& s_;
};

}  // namespace coloc::place
