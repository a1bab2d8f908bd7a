#include "place/coloc_policy.hpp"

#include <algorithm>
#include <cstdint>

namespace coloc::place {

namespace {

constexpr std::size_t kMaxSubsets = 256;
constexpr double kTie = 1e-12;

std::size_t choose(std::size_t n, std::size_t k) {
    if (k > n) return 0;
    std::size_t r = 1;
    for (std::size_t i = 1; i <= k; ++i) {
        r = r * (n - k + i) / i;
        if (r > 1'000'000) return r;
    }
    return r;
}

double lost_throughput(double slowdown, int gpus) { return gpus * (1.0 - 1.0 / slowdown); }

// A scored GPU set before its details (effects on each neighbour) are worked out.
struct Scored {
    int node = -1;
    std::vector<int> gpus;
    double loss = 0;
};

bool lighter(const Scored& a, const Scored& b) {
    if (a.loss < b.loss - kTie) return true;
    if (b.loss < a.loss - kTie) return false;
    if (a.node != b.node) return a.node < b.node;
    return a.gpus < b.gpus;
}

// Scores GPU sets on one node for a single-node job with the same formula as score_candidate,
// reading the node's running jobs (and their current neighbours) once. Sets that give every
// resident the same kind of sharing score the same, and are scored once.
class NodeScorer {
public:
    NodeScorer(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request, int node)
        : state_(state), model_(model), request_(request), node_(node) {
        memo_.clear();
        for (JobId id : state.jobs_on_node(node)) {
            if (id == request.id) continue;
            const RunningJob* job = state.find(id);
            Resident& r = next_resident();
            r.job = job;
            r.at = job->on_node(node);
            r.base.clear();
            state.neighbours_of(*job, r.base);
            r.before = model.slowdown(*job->profile, r.base);
            r.gpus = job->gpu_count();
        }
    }

    double loss(const std::vector<int>& gpus) {
        Placement mine{node_, gpus};
        signature_.clear();
        for (std::size_t i = 0; i < resident_count_; ++i)
            signature_.push_back(static_cast<std::uint8_t>(state_.intra_node_sharing(mine, *residents_[i].at)));
        for (const auto& [sig, value] : memo_)
            if (sig == signature_) return value;

        mine_.clear();
        for (std::size_t i = 0; i < resident_count_; ++i)
            mine_.push_back({residents_[i].job->profile, static_cast<model::Sharing>(signature_[i]), std::nullopt});
        double loss = lost_throughput(model_.slowdown(*request_.profile, mine_), static_cast<int>(gpus.size()));
        for (std::size_t i = 0; i < resident_count_; ++i) {
            Resident& r = residents_[i];
            r.base.push_back({request_.profile, static_cast<model::Sharing>(signature_[i]), std::nullopt});
            double after = model_.slowdown(*r.job->profile, r.base);
            r.base.pop_back();
            loss += lost_throughput(after, r.gpus) - lost_throughput(r.before, r.gpus);
        }
        memo_.emplace_back(signature_, loss);
        return loss;
    }

private:
    struct Resident {
        const RunningJob* job = nullptr;
        const Placement* at = nullptr;
        std::vector<model::Neighbour> base;  // its neighbours now
        double before = 1.0;
        int gpus = 0;
    };

    Resident& next_resident() {
        if (resident_count_ == residents_.size()) residents_.emplace_back();
        return residents_[resident_count_++];
    }

    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    int node_;
    // Reused across decisions so that a decision allocates little.
    static thread_local std::vector<Resident> residents_;
    std::size_t resident_count_ = 0;
    static thread_local std::vector<std::pair<std::vector<std::uint8_t>, double>> memo_;
    static thread_local std::vector<std::uint8_t> signature_;
    static thread_local std::vector<model::Neighbour> mine_;
};

thread_local std::vector<NodeScorer::Resident> NodeScorer::residents_;
thread_local std::vector<std::pair<std::vector<std::uint8_t>, double>> NodeScorer::memo_;
thread_local std::vector<std::uint8_t> NodeScorer::signature_;
thread_local std::vector<model::Neighbour> NodeScorer::mine_;

// Greedy: add one GPU at a time, the one that keeps the partial set's loss lowest.
template <class Loss>
std::vector<int> greedy_set(int want, const std::vector<int>& eligible, Loss loss_of) {
    std::vector<int> set;
    std::vector<int> left = eligible;
    while (static_cast<int>(set.size()) < want && !left.empty()) {
        std::size_t best = 0;
        double best_loss = 0;
        for (std::size_t i = 0; i < left.size(); ++i) {
            std::vector<int> trial = set;
            trial.push_back(left[i]);
            std::sort(trial.begin(), trial.end());
            double loss = loss_of(trial);
            if (i == 0 || loss < best_loss - kTie) {
                best = i;
                best_loss = loss;
            }
        }
        set.push_back(left[best]);
        left.erase(left.begin() + static_cast<long>(best));
    }
    std::sort(set.begin(), set.end());
    return set;
}

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

// The nodes worth scoring for `request` (see the header).
std::vector<int> nodes_to_score(const ClusterState& state, const JobRequest& request, const ColocOptions& options) {
    if (!request.allowed_nodes.empty()) return candidate_nodes(state, request);
    std::vector<int> out;
    const int k = request.gpus_per_node;
    const auto& types = state.topology().types();
    int empties = 0;
    for (std::size_t t = 0; t < types.size(); ++t) {
        if (types[t].gpus < k) continue;
        const NodeSet& set = state.empty_nodes(static_cast<int>(t));
        empties += set.size();
        if (request.nodes == 1) {
            if (int n = set.next(-1); n >= 0) out.push_back(n);
            continue;
        }
        // A multi-node job sees the traffic on each node's link: keep enough empty nodes per link.
        std::vector<int> per_link(state.topology().link_names().size() + 1, 0);
        for (int n = set.next(-1); n >= 0; n = set.next(n)) {
            int link = state.topology().nodes()[static_cast<std::size_t>(n)].link + 1;
            if (per_link[static_cast<std::size_t>(link)]++ < request.nodes) out.push_back(n);
        }
    }
    const int occupied = state.nodes_with_at_least(Capacity::Open, k) - empties;
    if (occupied <= 0) return out;
    if (options.max_nodes_scored <= 0 || occupied <= options.max_nodes_scored) {
        for (int n = state.next_node_with_at_least(Capacity::Open, k); n >= 0;
             n = state.next_node_with_at_least(Capacity::Open, k, n))
            if (!state.jobs_on_node(n).empty()) out.push_back(n);
        return out;
    }
    const int count = static_cast<int>(state.topology().nodes().size());
    const int start = static_cast<int>(mix(request.id) % static_cast<std::uint64_t>(count));
    int taken = 0;
    for (int v = state.max_gpus_per_node(); v >= k && taken < options.max_nodes_scored; --v) {
        const NodeSet& set = state.nodes_with(Capacity::Open, v);
        auto visit = [&](int n) {
            if (state.jobs_on_node(n).empty()) return false;
            out.push_back(n);
            return ++taken >= options.max_nodes_scored;
        };
        bool done = false;
        for (int n = set.next(start - 1); n >= 0 && !done; n = set.next(n)) done = visit(n);
        for (int n = set.next(-1); n >= 0 && n < start && !done; n = set.next(n)) done = visit(n);
    }
    return out;
}

}  // namespace

bool better(const Candidate& a, const Candidate& b) {
    if (a.loss < b.loss - kTie) return true;
    if (b.loss < a.loss - kTie) return false;
    std::vector<std::pair<int, std::vector<int>>> ka, kb;
    for (const auto& p : a.where) ka.emplace_back(p.node, p.gpus);
    for (const auto& p : b.where) kb.emplace_back(p.node, p.gpus);
    return ka < kb;
}

std::vector<std::vector<int>> gpu_subsets(const std::vector<int>& gpus, int k, std::size_t limit) {
    std::vector<std::vector<int>> out;
    const int n = static_cast<int>(gpus.size());
    if (k <= 0 || k > n || choose(gpus.size(), static_cast<std::size_t>(k)) > limit) return out;
    std::vector<int> idx(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) idx[i] = i;
    while (true) {
        std::vector<int> set;
        for (int i : idx) set.push_back(gpus[i]);
        out.push_back(std::move(set));
        int i = k - 1;
        while (i >= 0 && idx[i] == n - k + i) --i;
        if (i < 0) break;
        ++idx[i];
        for (int j = i + 1; j < k; ++j) idx[j] = idx[j - 1] + 1;
    }
    return out;
}

Decision ColocPolicy::place(const ClusterState& state, const JobRequest& request, int keep) const {
    Decision d;
    if (request.gpus_per_node < 1 || request.nodes < 1) {
        d.reason = "the job asks for no GPU";
        return d;
    }
    const bool single = request.nodes == 1;
    std::vector<Scored> all;       // every scored set, when more than one is kept
    std::vector<Scored> per_node;  // the best set per node
    for (int node : nodes_to_score(state, request, options_)) {
        std::vector<int> eligible = eligible_gpus(state, request, node);
        if (static_cast<int>(eligible.size()) < request.gpus_per_node) continue;
        Scored best;
        auto consider = [&](std::vector<int> set, double loss) {
            Scored s{node, std::move(set), loss};
            if (best.node < 0 || lighter(s, best)) best = s;
            if (keep > 1) all.push_back(std::move(s));
        };
        auto sets = gpu_subsets(eligible, request.gpus_per_node, kMaxSubsets);
        if (single && state.jobs_on_node(node).empty()) {
            // No neighbour on the node: every set scores alike; the lowest GPUs are the most compact.
            if (sets.empty()) sets.push_back({eligible.begin(), eligible.begin() + request.gpus_per_node});
            else if (keep <= 1) sets.resize(1);
        }
        if (single) {
            NodeScorer scorer(state, *model_, request, node);
            if (sets.empty())
                sets.push_back(greedy_set(request.gpus_per_node, eligible,
                                          [&](const std::vector<int>& s) { return scorer.loss(s); }));
            for (auto& set : sets) {
                double loss = scorer.loss(set);
                consider(std::move(set), loss);
            }
        } else {
            auto loss_of = [&](const std::vector<int>& s) {
                return score_candidate(state, *model_, request, {{node, s}}).loss;
            };
            if (sets.empty()) sets.push_back(greedy_set(request.gpus_per_node, eligible, loss_of));
            for (auto& set : sets) {
                double loss = loss_of(set);
                consider(std::move(set), loss);
            }
        }
        if (best.node >= 0) per_node.push_back(std::move(best));
    }
    if (static_cast<int>(per_node.size()) < request.nodes) {
        d.reason = "no node has " + std::to_string(request.gpus_per_node) + " GPU(s) with a free slot" +
                   (request.nodes > 1 ? " on " + std::to_string(request.nodes) + " nodes" : "");
        return d;
    }
    std::sort(per_node.begin(), per_node.end(), lighter);
    if (single) {
        d.chosen = score_candidate(state, *model_, request, {{per_node.front().node, per_node.front().gpus}});
    } else {
        std::vector<Placement> where;
        for (int i = 0; i < request.nodes; ++i) where.push_back({per_node[i].node, per_node[i].gpus});
        std::sort(where.begin(), where.end(), [](const Placement& a, const Placement& b) { return a.node < b.node; });
        d.chosen = score_candidate(state, *model_, request, std::move(where));
    }
    if (keep > 1 && single) {
        std::sort(all.begin(), all.end(), lighter);
        if (static_cast<int>(all.size()) > keep) all.resize(static_cast<std::size_t>(keep));
        for (auto& s : all) d.ranked.push_back(score_candidate(state, *model_, request, {{s.node, std::move(s.gpus)}}));
    } else {
        d.ranked = {d.chosen};
    }
    int gpus = request.gpus_per_node * request.nodes;
    if (d.chosen.loss > options_.max_loss_per_gpu * gpus) {
        d.reason = "the best placement's predicted loss (" + std::to_string(d.chosen.loss / gpus) +
                   " per GPU) exceeds the admission limit (" + std::to_string(options_.max_loss_per_gpu) + ")";
        return d;
    }
    d.placed = true;
    return d;
}

}  // namespace coloc::place
