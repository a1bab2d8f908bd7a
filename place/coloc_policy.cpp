#include "place/coloc_policy.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>

#include "place/candidate_nodes.hpp"
#include "place/fragmentation.hpp"
#include "place/node_scorer.hpp"
#include "place/partner_price.hpp"
#include "place/prediction_cache.hpp"
#include "place/ranking.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::place {

namespace {

constexpr std::size_t kMaxSubsets = 256;
constexpr double kNone = std::numeric_limits<double>::infinity();

// A scored GPU set before its details (effects on each neighbour) are worked out.
struct Scored {
    int node = -1;
    std::vector<int> gpus;
    double score = 0;    // predicted loss + the fragmentation and partner prices: what ranks it
    double price = 0;    // of which the fragmentation price
    double partner = 0;  // and the partner price
};

// When explaining: one of a node's best sets, and the same worked out in full.
struct Ranked {
    Scored scored;
    Candidate full;
};

// Per node, how much later it is wholly idle with the job on it (Preferred), worked out once a
// decision: the run time of the job past the expected end of the last of the node's jobs.
struct WholeDelays {
    std::vector<std::pair<unsigned, double>> by_node;  // (decision it was worked out for, delay)
    unsigned decision = 0;
};

// Among placements the model cannot tell apart, the one on the node with the fewest idle GPUs
// (best fit), then the one whose jobs outlast it, then the fewest jobs, then the lowest index:
// nodes with many idle GPUs stay whole for the jobs that need them (a job on several GPUs of a
// node, or on whole nodes, waits while small jobs are spread over every node, even with idle
// GPUs to spare), and a node partly used is wholly idle again no later for the job put on it
// when the jobs there end after it (their expected ends, from the outlook; without one this
// key ties).
struct Preferred {
    const ClusterState& state;
    const SharingOutlook* outlook = nullptr;
    WholeDelays* delays = nullptr;
    double delays_whole(int n) const {
        if (!outlook || !outlook->time || !(outlook->work_s > 0) || !delays) return 0;
        auto& [at, delay] = delays->by_node[static_cast<std::size_t>(n)];
        if (at == delays->decision) return delay;
        double last = 0;
        for (const RunningJob* j : state.running_on_node(n)) last = std::max(last, outlook->time->remaining_s(*j));
        at = delays->decision;
        return delay = std::max(0.0, outlook->work_s - last);
    }
    bool operator()(int a, int b) const {
        const int ia = state.idle_gpus(a), ib = state.idle_gpus(b);
        if (ia != ib) return ia < ib;
        const double da = delays_whole(a), db = delays_whole(b);
        if (da != db) return da < db;
        const std::size_t ja = state.jobs_on_node(a).size(), jb = state.jobs_on_node(b).size();
        if (ja != jb) return ja < jb;
        return a < b;
    }
};

// Lower score first; on equal scores the preferred node, then the lower GPUs.
struct Lighter {
    Preferred preferred;
    bool operator()(const Scored& a, const Scored& b) const {
        return ranks_before(a.score, b.score,
                            [&] { return a.node != b.node ? preferred(a.node, b.node) : a.gpus < b.gpus; });
    }
    bool operator()(const Ranked& a, const Ranked& b) const { return (*this)(a.scored, b.scored); }
};

bool by_node(const Placement& a, const Placement& b) { return a.node < b.node; }

// score_candidate, with each neighbour's current neighbours and slowdown from the cache.
Candidate score_kept(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                     std::vector<Placement> where, PredictionCache* kept) {
    if (!kept) return score_candidate(state, model, request, std::move(where));
    return score_candidate(state, model, request, std::move(where), [&](const RunningJob& job) {
        const PredictionCache::Entry& e = kept->get(state, model, job);
        return CurrentLoad{e.base, e.before};
    });
}

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
            if (i == 0 || ranks_before(loss, best_loss, [] { return false; })) {  // ties: the first
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

// Storage a decision's search keeps for the next one (nothing a decision depends on), so
// that a decision allocates little.
struct SearchStorage {
    ScorerScratch scorer;
    std::vector<Scored> here;         // a node's scored sets, when explaining
    std::vector<Scored> per_node;     // the best set per node among the best nodes
    std::vector<double> top, lowest;  // the search's bounds
    std::vector<int> eligible;        // a node's GPUs the job may take
    WholeDelays whole;                // Preferred's, per node
    PartnerCache partners;            // the partner price's predictions
};

}  // namespace

// What ColocPolicy's decisions reuse, one decision at a time (see the header).
struct ColocPolicy::Reused {
    std::mutex lock;
    SearchStorage search;
    std::unique_ptr<PredictionCache> cache;  // with reuse_predictions
};

namespace {

// The per-node delays of a new decision: none worked out yet.
WholeDelays* start_delays(WholeDelays& d, const ClusterState& state) {
    const std::size_t nodes = state.topology().nodes().size();
    if (d.by_node.size() != nodes || ++d.decision == 0) {
        d.by_node.assign(nodes, {0, 0.0});
        d.decision = 1;
    }
    return &d;
}

// One decision, step by step: the candidate nodes, the likeliest winners first; on each, its
// best GPU set (and, when explaining, its best `keep` sets worked out in full) while it can
// still be among the best nodes; then the best node or nodes, and admission.
class Search {
public:
    Search(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request, int keep,
           PredictionCache* cache, SearchStorage& kept)
        : state_(state),
          model_(model),
          request_(request),
          keep_(keep),
          single_(request.nodes == 1),
          ranking_(keep > 1 && single_),
          prune_(keep <= 1),
          cache_(cache),
          scorer_scratch_(kept.scorer),
          here_(kept.here),
          eligible_(kept.eligible),
          link_harm_(state, model, request, cache),
          lighter_{Preferred{state, request.outlook, start_delays(kept.whole, state)}},
          per_node_(kept.per_node),
          top_(kept.top),
          lowest_(kept.lowest),
          fragmentation_(state, request),
          partner_(state, model, request, &kept.partners) {
        top_.clear();
        lowest_.clear();
    }

    // The nodes worth scoring, the likeliest winners first so that the bound prunes early.
    std::vector<int> nodes_in_order(int max_nodes_scored) const {
        std::vector<int> nodes = nodes_to_score(state_, request_, max_nodes_scored, fragmentation_.any());
        std::sort(nodes.begin(), nodes.end(), lighter_.preferred);
        return nodes;
    }

    void score_node(int node) {
        eligible_into(state_, request_, node, eligible_);
        if (static_cast<int>(eligible_.size()) < request_.gpus_per_node) return;
        node_ = node;
        best_.node = -1;  // none yet (its GPU list keeps its storage)
        here_count_ = 0;
        price_range();
        NodeScorer scorer(state_, model_, request_, node, single_ ? nullptr : &link_harm_, cache_, scorer_scratch_);
        choose_sets(scorer);
        if (ranking_) rank_sets(scorer);
        keep_best_set(scorer);
    }

    Decision decide(double max_loss_per_gpu, bool sharing_rule) {
        Decision d;
        if (static_cast<int>(per_node_count_) < request_.nodes) {
            d.reason = "no node has " + std::to_string(request_.gpus_per_node) + " GPU(s) with a free slot" +
                       (request_.nodes > 1 ? " on " + std::to_string(request_.nodes) + " nodes" : "");
            return d;
        }
        d.chosen = single_ ? std::move(best_single_) : join_best_nodes();
        d.ranked = ranking_ ? best_ranked() : std::vector<Candidate>{d.chosen};
        const int gpus = request_.gpus_per_node * request_.nodes;
        if (d.chosen.loss > max_loss_per_gpu * gpus) {
            d.reason = "the best placement's predicted loss (" + std::to_string(d.chosen.loss / gpus) +
                       " per GPU) exceeds the admission limit (" + std::to_string(max_loss_per_gpu) + ")";
            return d;
        }
        if (sharing_rule && !rule_lets_it_start(d)) return d;
        d.placed = true;
        return d;
    }

private:
    // The sharing rule on the chosen candidate; false when the job is to wait instead. A job that the
    // cluster has idle GPUs for now is never held (the engine chose to share, not to wait).
    bool rule_lets_it_start(Decision& d) const {
        if (!request_.outlook) return true;
        SharingVerdict v = judge_sharing(state_, request_, d.chosen, *request_.outlook);
        // Held at the predicted speeds, it is held at any slower one: the margin matters only
        // to a job the prediction lets share (and the uncertainty costs a prediction more).
        if (v.weighed && !v.hold) {
            with_uncertainty(d.chosen);
            v = judge_sharing(state_, request_, d.chosen, *request_.outlook);
        }
        const bool words = request_.outlook->in_words;
        if (words) d.sharing = v.why();
        if (!v.hold) {
            note_decision(*request_.outlook, v);
            d.explores = v.explores;
            return true;
        }
        if (idle_fits()) {
            if (words) d.sharing = "shares: GPUs of its own are idle elsewhere, so it is not held (" + v.why() + ")";
            return true;
        }
        note_decision(*request_.outlook, v);
        d.reason = "the sharing rule holds it" + (words ? ": " + v.why() : std::string());
        d.held = true;
        return false;
    }

    // The uncertainty of the chosen candidate's predictions, which the rule's margin needs (only
    // for a candidate it weighs: the search itself ranks by the predictions alone).
    void with_uncertainty(Candidate& c) const {
        const Candidate u = score_candidate_with_uncertainty(state_, model_, request_, c.where);
        c.job_sd = u.job_sd;
        // The same placement scored again lists its neighbours in the same order.
        for (std::size_t k = 0; k < c.effects.size() && k < u.effects.size(); ++k)
            if (u.effects[k].id == c.effects[k].id) c.effects[k].after_sd = u.effects[k].after_sd;
    }

    bool idle_fits() const {
        if (request_.allowed_nodes.empty())
            return state_.nodes_with_at_least(Capacity::Idle, request_.gpus_per_node) >= request_.nodes;
        int fit = 0;
        for (int n : request_.allowed_nodes) fit += state_.idle_gpus(n) >= request_.gpus_per_node;
        return fit >= request_.nodes;
    }

    // What a node must beat to matter: the n-th best loss so far, one per node, for a job on n
    // nodes (a job on n nodes needs only the n best).
    double cut() const { return static_cast<int>(top_.size()) == request_.nodes ? top_.back() : kNone; }

    // Where scoring a candidate may stop: past the node's best set and the cut; when explaining,
    // one past the keep-th best so far. (A multi-node explain wants every candidate's score.)
    double bound() const {
        if (ranking_) return static_cast<int>(lowest_.size()) == keep_ ? lowest_.back() + 2 * kLossTie : kNone;
        const double b = std::min(cut(), best_.node >= 0 ? best_.score : cut());
        return prune_ ? b + 2 * kLossTie : kNone;
    }

    // The same for the scorer, which sees the predicted loss alone: every set on the node pays
    // at least the node's lowest price.
    double loss_bound() const { return bound() - price_floor_; }

    // The node's prices: taking as few of its idle GPUs as the eligible shared ones allow, and
    // as many as the job takes (equal on most nodes: then no set's GPUs are needed to price it).
    void price_range() {
        idle_ = state_.idle_gpus(node_);
        price_floor_ = 0;
        price_varies_ = false;
        if (!fragmentation_.any()) return;
        int idle_eligible = 0;
        for (int g : eligible_) idle_eligible += state_.used_slots(node_, g) == 0;
        const int k = request_.gpus_per_node;
        const int fewest = std::max(0, k - (static_cast<int>(eligible_.size()) - idle_eligible));
        const int most = std::min(k, idle_eligible);
        price_floor_ = fragmentation_.of(idle_, idle_ - fewest);
        price_varies_ = fragmentation_.of(idle_, idle_ - most) > price_floor_;
    }

    // The price of taking `set` on the node: what its idle GPUs leave.
    double price_of(const std::vector<int>& set) const {
        int taken = 0;
        for (int g : set) taken += state_.used_slots(node_, g) == 0;
        return fragmentation_.of(idle_, idle_ - taken);
    }

    // Every choice of GPUs on the node, or a greedy one when there are too many.
    void choose_sets(NodeScorer& scorer) {
        scorer.set_bound(loss_bound());
        const int k = request_.gpus_per_node;
        if (scorer.for_each_choice(eligible_, k, kMaxSubsets,
                                   [&](double loss, auto&& gpus) { consider(scorer, loss, gpus); }))
            return;
        scorer.set_bound(kNone);
        const std::vector<int> set =
            greedy_set(k, eligible_, [&](const std::vector<int>& s) { return scorer.loss(s); });
        consider(scorer, scorer.loss(set), [&]() -> const std::vector<int>& { return set; });
    }

    // A set of the node's with its predicted loss; `gpus()` gives its GPUs, asked for only when it
    // is kept or its price depends on them.
    template <class Gpus>
    void consider(NodeScorer& scorer, double loss, Gpus&& gpus) {
        const double price = price_varies_ ? price_of(gpus()) : price_floor_;
        const double partner = partner_.any() ? partner_.of(node_, gpus()) : 0.0;
        const double score = loss + price + partner;
        if (keep_ <= 1 && best_.node >= 0 && score > best_.score + kLossTie) return;  // cannot win
        const bool ranks = ranking_ && (static_cast<int>(lowest_.size()) < keep_ || score <= lowest_.back() + kLossTie);
        const bool wins = best_.node < 0 || ranks_before(score, best_.score, [&] { return gpus() < best_.gpus; });
        if (!wins && !ranks) return;
        const std::vector<int>& set = gpus();
        if (ranks) {
            if (here_count_ == here_.size()) here_.emplace_back();
            keep_in(here_[here_count_++], set, score, price, partner);
            lowest_.insert(std::upper_bound(lowest_.begin(), lowest_.end(), score), score);
            if (static_cast<int>(lowest_.size()) > keep_) lowest_.pop_back();
        }
        if (wins) keep_in(best_, set, score, price, partner);
        scorer.set_bound(loss_bound());
    }

    // Into storage kept from earlier candidates and decisions: little to allocate.
    void keep_in(Scored& to, const std::vector<int>& set, double score, double price, double partner) const {
        to.node = node_;
        to.gpus.assign(set.begin(), set.end());
        to.score = score;
        to.price = price;
        to.partner = partner;
    }

    // A set worked out in full, with its price.
    Candidate full(NodeScorer& scorer, const Scored& s) const {
        Candidate c = scorer.candidate(s.gpus);
        c.fragmentation = s.price;
        c.partner = s.partner;
        return c;
    }

    // When explaining: the node's best `keep` sets, worked out in full while its scorer still
    // holds what they share with whom.
    void rank_sets(NodeScorer& scorer) {
        const auto end = here_.begin() + static_cast<long>(here_count_);
        const std::size_t n = std::min(here_count_, static_cast<std::size_t>(keep_));
        std::partial_sort(here_.begin(), here_.begin() + static_cast<long>(n), end, lighter_);
        for (std::size_t i = 0; i < n; ++i) ranked_.push_back({here_[i], full(scorer, here_[i])});
    }

    // The node's best set, unless the best nodes so far already beat it; for a single-node job
    // also worked out in full when it is the best so far.
    void keep_best_set(NodeScorer& scorer) {
        if (best_.node < 0) return;
        if (best_.score >= cut() + 2 * kLossTie && prune_) return;  // beaten
        if (single_ && (best_single_.where.empty() ||
                        ranks_before(best_.score, best_single_.loss + best_single_.fragmentation + best_single_.partner,
                                     [&] { return lighter_.preferred(node_, best_single_.where.front().node); })))
            best_single_ = full(scorer, best_);
        top_.insert(std::upper_bound(top_.begin(), top_.end(), best_.score), best_.score);
        if (static_cast<int>(top_.size()) > request_.nodes) top_.pop_back();
        if (per_node_count_ == per_node_.size()) per_node_.emplace_back();
        Scored& kept = per_node_[per_node_count_++];
        kept.node = best_.node;
        kept.gpus.assign(best_.gpus.begin(), best_.gpus.end());
        kept.score = best_.score;
        kept.price = best_.price;
        kept.partner = best_.partner;
    }

    // A multi-node job: the best nodes' sets together, scored as one candidate.
    Candidate join_best_nodes() {
        const auto end = per_node_.begin() + static_cast<long>(per_node_count_);
        std::sort(per_node_.begin(), end, lighter_);
        std::vector<Placement> where;
        double price = 0, partner = 0;
        for (int i = 0; i < request_.nodes; ++i) {
            where.push_back({per_node_[i].node, per_node_[i].gpus});
            price += per_node_[i].price;
            partner += per_node_[i].partner;
        }
        std::sort(where.begin(), where.end(), by_node);
        Candidate c = score_kept(state_, model_, request_, std::move(where), cache_);
        c.fragmentation = price;
        c.partner = partner;
        return c;
    }

    // When explaining: the best `keep` sets over all nodes, best first.
    std::vector<Candidate> best_ranked() {
        std::sort(ranked_.begin(), ranked_.end(), lighter_);
        if (static_cast<int>(ranked_.size()) > keep_) ranked_.resize(static_cast<std::size_t>(keep_));
        std::vector<Candidate> out;
        for (auto& r : ranked_) out.push_back(std::move(r.full));
        return out;
    }

    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    const int keep_;
    const bool single_;
    const bool ranking_;  // explaining a single-node job: keep > 1 sets
    const bool prune_;    // only the best set matters: a candidate that cannot win is not worked out
    PredictionCache* cache_;
    ScorerScratch& scorer_scratch_;
    std::vector<Scored>& here_;   // the node's scored sets, when explaining (here_count_ of them)
    std::vector<int>& eligible_;  // the node's GPUs the job may take
    LinkHarm link_harm_;
    Lighter lighter_;
    // The node being scored.
    int node_ = -1;
    Scored best_;  // its best set so far (node -1: none yet)
    std::size_t here_count_ = 0;
    // The decision so far.
    std::vector<Ranked> ranked_;     // when explaining: each node's best sets
    std::vector<Scored>& per_node_;  // the best set per node that is among the best nodes (count below)
    std::size_t per_node_count_ = 0;
    Candidate best_single_;        // the best one-node candidate, worked out in full
    std::vector<double>& top_;     // the best scores, one per node, as many as the job needs nodes
    std::vector<double>& lowest_;  // when explaining: the `keep` lowest scores so far, ascending
    FragmentationPrice fragmentation_;
    PartnerPrice partner_;
    // The node's idle GPUs and prices (price_range()).
    int idle_ = 0;
    double price_floor_ = 0;
    bool price_varies_ = false;
};

}  // namespace

ColocPolicy::ColocPolicy(const model::InterferenceModel& model, ColocOptions options, std::string name)
    : model_(&model), options_(options), name_(std::move(name)), reused_(std::make_unique<Reused>()) {
    if (options.reuse_predictions) reused_->cache = std::make_unique<PredictionCache>();
}

ColocPolicy::~ColocPolicy() = default;

Decision ColocPolicy::place(const ClusterState& state, const JobRequest& request, int keep) const {
    if (request.gpus_per_node < 1 || request.nodes < 1) {
        Decision d;
        d.reason = "the job asks for no GPU";
        return d;
    }
    const std::lock_guard lock(reused_->lock);
    Reused& r = *reused_;
    Search search(state, *model_, request, keep, r.cache.get(), r.search);
    for (int node : search.nodes_in_order(options_.max_nodes_scored)) search.score_node(node);
    return search.decide(options_.max_loss_per_gpu, options_.sharing_rule);
}

std::optional<Candidate> ColocPolicy::rescore(const ClusterState& state, const JobRequest& request,
                                              const Candidate& where) const {
    const std::lock_guard lock(reused_->lock);
    return score_kept(state, *model_, request, where.where, reused_->cache.get());
}

}  // namespace coloc::place
