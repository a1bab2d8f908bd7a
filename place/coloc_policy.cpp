#include "place/coloc_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>

#include "place/candidate_nodes.hpp"
#include "place/prediction_cache.hpp"

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

// A GPU list of a node of at most 64 GPUs as bits.
std::uint64_t mask_of(const std::vector<int>& gpus) {
    std::uint64_t m = 0;
    for (int g : gpus) m |= std::uint64_t{1} << g;
    return m;
}

// shared_gpus for an ascending GPU list given as bits (`mask`): the positions in it of the GPUs
// in `common` (a subset), counted from `first`; GPU 0 when there are none.
std::uint64_t shared_ranks(std::uint64_t common, std::uint64_t mask, int first) {
    std::uint64_t out = 0;
    for (; common; common &= common - 1)
        out |= model::gpu_bit(first + __builtin_popcountll(mask & ((common & (~common + 1)) - 1)));
    return out ? out : 1;
}

// A scored GPU set before its details (effects on each neighbour) are worked out.
struct Scored {
    int node = -1;
    std::vector<int> gpus;
    double loss = 0;
};


// What a multi-node job reached only over a shared link would lose if the new (multi-node) job
// joined its link: the same for every candidate node on that link, so worked out once per job
// and decision.
class LinkHarm {
public:
    LinkHarm(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
             PredictionCache* kept)
        : state_(state), model_(model), request_(request), kept_(kept) {}

    const NeighbourEffect& effect(JobId id) {
        auto it = cache_.find(id);
        if (it != cache_.end()) return it->second;
        const RunningJob& job = *state_.find(id);
        scratch_.clear();
        NeighbourEffect e{id, 1.0, 1.0};
        if (kept_) {
            const PredictionCache::Entry& k = kept_->get(state_, model_, job);
            scratch_.assign(k.base.begin(), k.base.end());
            e.before = k.before;
        } else {
            state_.neighbours_of(job, scratch_);
            e.before = model_.slowdown(*job.profile, scratch_);
        }
        scratch_.push_back({request_.profile, model::Sharing::Link, std::nullopt});
        e.after = model_.slowdown(*job.profile, scratch_);
        return cache_.emplace(id, e).first->second;
    }

private:
    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    PredictionCache* kept_;
    std::unordered_map<JobId, NeighbourEffect> cache_;
    std::vector<model::Neighbour> scratch_;
};

// score_candidate, with each neighbour's current neighbours and slowdown from the cache.
Candidate score_kept(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                     std::vector<Placement> where, PredictionCache* kept) {
    if (!kept) return score_candidate(state, model, request, std::move(where));
    return score_candidate(state, model, request, std::move(where), [&](const RunningJob& job) {
        const PredictionCache::Entry& e = kept->get(state, model, job);
        return CurrentLoad{e.base, e.before};
    });
}

// Scores GPU sets on one node with the same formula as score_candidate, reading the node's
// running jobs (and their current neighbours) once. For a multi-node job it scores the node as
// if the job ran there alone (its other nodes are chosen the same way), links included.
//
// What a GPU set costs depends only on the kind of sharing it gives each resident job (its
// signature), and a resident's harm only on its own kind of sharing. GPUs with the same NVLink
// island, PCIe switch and jobs are interchangeable: the choices are enumerated per set of such
// GPU classes (the lowest GPUs of each class stand for it), and each signature is scored once.
class NodeScorer {
public:
    NodeScorer(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request, int node,
               LinkHarm* link, PredictionCache* cache)
        : state_(state), model_(model), request_(request), node_(node), multi_(link != nullptr),
          additive_(model.additive()), small_(state.topology().type_of(node).gpus <= 64), by_set_(request.gpus_per_node > 1),
          need_set_(by_set_) {
        memo_.clear();
        ++generation_;
        link_only_.clear();
        link_harm_ = 0;
        const std::vector<const RunningJob*>& here = state.running_on_node(node);
        here_at_.clear();
        for (const RunningJob* job : here) here_at_.push_back(job->on_node(node));
        bool pairwise = false;
        for (std::size_t j = 0; j < here.size(); ++j) {
            const RunningJob* job = here[j];
            if (job->id == request.id) continue;
            Resident& r = next_resident();
            r.job = job;
            r.at = here_at_[j];
            r.here = j;
            r.linked = multi_ && job->multi_node();
            if (cache) {
                const PredictionCache::Entry& e = cache->get(state, model, *job);
                r.base = &e.base;
                r.before = e.before;
                r.sum = &e.sum;
            } else if (additive_ && !job->multi_node()) {
                r.base = nullptr;  // its delays are summed below, its neighbours not listed
                r.sum = nullptr;
                pairwise = true;
            } else {
                r.own.clear();
                state.neighbours_of(*job, r.own);
                r.base = nullptr;  // r.own (residents_ may still move)
                r.before = current_slowdown(model, *job, r.own, r.own_sum);
                r.sum = nullptr;   // r.own_sum
            }
            r.gpus = job->gpu_count();
            r.first = gpus_before(*job, node);
            r.ranked = small_ && std::is_sorted(r.at->gpus.begin(), r.at->gpus.end());
            r.mask = small_ ? mask_of(r.at->gpus) : 0;
            r.after.fill(std::numeric_limits<double>::quiet_NaN());
            r.harm.fill(std::numeric_limits<double>::quiet_NaN());
            r.after_gpu.clear();
            if (additive_) {
                r.to_new.fill(std::numeric_limits<double>::quiet_NaN());
                r.from_new.fill(std::numeric_limits<double>::quiet_NaN());
                if (r.linked) {
                    r.to_new_link = model.delay(*request.profile, {job->profile, model::Sharing::Link, std::nullopt});
                    r.from_new_link = model.delay(*job->profile, {request.profile, model::Sharing::Link, std::nullopt});
                }
            }
            // A resident on several GPUs here is slowed by the new job on the one it joins.
            need_set_ = need_set_ || r.at->gpus.size() > 1;
            r.alone.fill(std::numeric_limits<double>::quiet_NaN());
        }
        const int l = state.topology().nodes()[static_cast<std::size_t>(node)].link;
        link_only_delay_ = 0;
        if (multi_ && l >= 0)
            for (JobId id : state.multi_node_jobs_on_link(l)) {
                if (id == request.id || state.find(id)->on_node(node)) continue;
                const NeighbourEffect& e = link->effect(id);
                const RunningJob& job = *state.find(id);
                link_only_.push_back(&e);
                link_harm_ += lost_throughput(e.after, job.gpu_count()) - lost_throughput(e.before, job.gpu_count());
                if (additive_)
                    link_only_delay_ += model.delay(*request.profile, {job.profile, model::Sharing::Link, std::nullopt});
            }
        if (pairwise) sum_pairwise(here);
    }

    // Work stops on a candidate once its loss reaches `bound` (it cannot win): its loss is then
    // reported as at least the bound.
    void set_bound(double bound) { bound_ = bound; }

    // Loss of an explicit GPU set.
    double loss(const std::vector<int>& gpus) { return entry(gpus).loss; }

    // The full candidate for a GPU set: the numbers score_candidate gives.
    Candidate candidate(const std::vector<int>& gpus) {
        bound_ = std::numeric_limits<double>::infinity();
        const Memo m = entry(gpus);
        Candidate c;
        c.where = {{node_, gpus}};
        c.job_slowdown = m.job_slowdown;
        c.loss = m.loss;
        c.harm = m.loss - lost_throughput(m.job_slowdown, static_cast<int>(gpus.size()));
        c.effects.reserve(count_ + link_only_.size());
        for (std::size_t i = 0; i < count_; ++i)
            c.effects.push_back({residents_[i].job->id, residents_[i].before, after(i, levels_[i], &gpus)});
        for (const NeighbourEffect* e : link_only_) c.effects.push_back(*e);
        return c;
    }

    // Calls visit(loss, gpus) once per distinct choice of k GPUs among `eligible`, where gpus()
    // gives the choice's GPUs (ascending); false (and no call) when there are more than `limit`
    // choices.
    template <class Visit>
    bool for_each_choice(const std::vector<int>& eligible, int k, std::size_t limit, Visit visit) {
        build_classes(eligible);
        std::size_t choices = 0;
        // At most 8 classes give at most 255 choices: only more need counting first.
        if ((classes_used_ > 8 || limit < 255) && !count_choices(0, 0, 0, k, limit, choices)) return false;
        chosen_.clear();
        // Row d of level_rows_: the residents' levels with the first d chosen classes.
        level_rows_.assign((static_cast<std::size_t>(k) + 1) * std::max<std::size_t>(count_, 1),
                           static_cast<std::uint8_t>(model::Sharing::Node));
        lb_rows_.assign(static_cast<std::size_t>(k) + 1, 1.0);
        walk(0, 0, k, visit);
        return true;
    }

private:
    struct Resident {
        const RunningJob* job = nullptr;
        const Placement* at = nullptr;
        std::size_t here = 0;                // its position in the node's running jobs
        bool ranked = false;                 // its GPUs here are ascending, on a node of <= 64 GPUs
        std::uint64_t mask = 0;              // its GPUs here as bits, on a node of <= 64 GPUs
        bool linked = false;                 // also shares a link with the new job
        const std::vector<model::Neighbour>* base = nullptr;  // its neighbours now (in the cache)
        std::vector<model::Neighbour> own;   // or here, without a cache (base null)
        const std::vector<model::Neighbour>& neighbours() const { return base ? *base : own; }
        double before = 1.0;
        int gpus = 0;
        int first = 0;                       // its GPUs on earlier nodes (Neighbour::gpus)
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

    Resident& next_resident() {
        if (count_ == residents_.size()) residents_.emplace_back();
        return residents_[count_++];
    }

    const Memo& entry(const std::vector<int>& gpus) {
        Placement mine{node_, gpus};
        levels_.clear();
        for (std::size_t i = 0; i < count_; ++i)
            levels_.push_back(static_cast<std::uint8_t>(state_.intra_node_sharing(mine, *residents_[i].at)));
        return score_levels(levels_.data(), static_cast<int>(gpus.size()), &gpus);
    }

    // With an additive model and no cache: the delays of each resident that runs on this node
    // only, from the other jobs here, which are all its neighbours (what neighbours_of lists for
    // it, without listing it); each pair's sharing is worked out once.
    void sum_pairwise(const std::vector<const RunningJob*>& here) {
        const std::size_t n = here.size();
        pair_levels_.assign(n * n, kUnknown);
        for (std::size_t i = 0; i < count_; ++i) {
            Resident& r = residents_[i];
            if (r.base || r.sum || r.job->multi_node()) continue;  // listed in the constructor
            r.own_sum.clear();
            for (std::size_t j = 0; j < n; ++j) {
                if (j == r.here) continue;
                std::uint8_t& level = pair_levels_[std::min(j, r.here) * n + std::max(j, r.here)];
                if (level == kUnknown) level = static_cast<std::uint8_t>(state_.intra_node_sharing(*r.at, *here_at_[j]));
                const auto where = static_cast<model::Sharing>(level);
                const std::uint64_t bits = where == model::Sharing::Gpu ? shared_gpus(r.at->gpus, 0, here_at_[j]->gpus) : 1;
                r.own_sum.add(where, bits, model_.delay(*r.job->profile, {here[j]->profile, where, std::nullopt, bits}));
            }
            r.before = r.own_sum.slowdown();
        }
    }

    // The throughput resident i would lose (GPU-weighted) with the new job on `gpus`, sharing
    // `level` with it: the same for every set unless it depends on which of the resident's GPUs
    // the new job joins.
    double harm(std::size_t i, std::uint8_t level, const std::vector<int>* gpus) {
        Resident& r = residents_[i];
        const bool by_gpu = level == static_cast<std::uint8_t>(model::Sharing::Gpu) && r.at->gpus.size() > 1 && gpus;
        if (by_gpu) return lost_throughput(after(i, level, gpus), r.gpus) - lost_throughput(r.before, r.gpus);
        double& h = r.harm[level];
        if (std::isnan(h)) h = lost_throughput(after(i, level, gpus), r.gpus) - lost_throughput(r.before, r.gpus);
        return h;
    }

    // Resident i's slowdown with the new job on `gpus`, sharing `level` with it.
    double after(std::size_t i, std::uint8_t level, const std::vector<int>* gpus) {
        Resident& r = residents_[i];
        if (additive_) {
            // Its delays now plus the new job's: O(its GPUs), no prediction from the whole list.
            const double link = r.linked ? r.from_new_link : 0;
            const double d = from_new(i, level);
            if (level != static_cast<std::uint8_t>(model::Sharing::Gpu)) return r.delays().slowdown_with(0, 0, d + link);
            std::uint64_t bits = model::gpu_bit(r.first);
            if (r.at->gpus.size() > 1 && gpus)
                bits = r.ranked ? shared_ranks(r.mask & mask_of(*gpus), r.mask, r.first) : shared_gpus(r.at->gpus, r.first, *gpus);
            return r.delays().slowdown_with(bits, d, link);
        }
        const bool several = level == static_cast<std::uint8_t>(model::Sharing::Gpu) && r.at->gpus.size() > 1 && gpus;
        const std::uint64_t bits = several ? shared_gpus(r.at->gpus, r.first, *gpus) : model::gpu_bit(r.first);
        double* slot = &r.after[level];
        if (several) {
            auto it = std::find_if(r.after_gpu.begin(), r.after_gpu.end(), [&](const auto& e) { return e.first == bits; });
            if (it == r.after_gpu.end()) it = r.after_gpu.insert(it, {bits, std::numeric_limits<double>::quiet_NaN()});
            slot = &it->second;
        }
        if (std::isnan(*slot)) {
            with_.assign(r.neighbours().begin(), r.neighbours().end());
            with_.push_back({request_.profile, static_cast<model::Sharing>(level), std::nullopt, bits});
            if (r.linked) with_.push_back({request_.profile, model::Sharing::Link, std::nullopt});
            *slot = model_.slowdown(*r.job->profile, with_);
        }
        return *slot;
    }

    // Scores the GPU set `set` whose levels (the signature) are `lv`, once per signature while
    // it fits a 64-bit key. A job moves at its slowest GPU's pace, so for a new job on several
    // GPUs the levels do not tell what it costs (two residents that share one of its GPUs each
    // cost less than two stacked on one): its signature is then the set itself. One GPU with
    // the same levels as another holds the same jobs, and costs the same. Stops as soon as the
    // loss reaches bound_: a neighbour never makes a job faster, so the rest could only add to
    // it (the result is then a lower bound, marked incomplete).
    const Memo& score_levels(const std::uint8_t* lv, int gpus, const std::vector<int>* set) {
        std::uint64_t key = 0;
        const bool packed = by_set_ ? set && std::all_of(set->begin(), set->end(), [](int g) { return g < 64; })
                                    : count_ <= 21;
        Memo* known = nullptr;
        if (packed) {
            if (by_set_)
                for (int g : *set) key |= std::uint64_t{1} << g;
            else
                for (std::size_t i = 0; i < count_; ++i) key |= std::uint64_t{lv[i]} << (3 * i);
            if (Memo* m = find_memo(key)) {
                if (m->complete || m->loss >= bound_) return *m;
                known = m;
            }
        }
        Memo m;
        m.key = key;
        if (known && !std::isnan(known->job_slowdown)) {
            m.job_slowdown = known->job_slowdown;
        } else if (double lb = own_lower_bound(lv); lost_throughput(lb, gpus) + link_harm_ >= bound_) {
            // Beside its tightest neighbours alone the job already loses too much.
            m.job_slowdown = std::numeric_limits<double>::quiet_NaN();
            m.loss = lost_throughput(lb, gpus) + link_harm_;
            m.complete = false;
            return keep_memo(m, known, packed);
        } else if (additive_) {
            model::DelaySum& mine = mine_sum_;
            mine.clear();
            mine.rest = link_only_delay_;
            // The set is ascending: which of its GPUs a resident shares, from bits.
            const std::uint64_t set_mask = small_ && set ? mask_of(*set) : 0;
            for (std::size_t i = 0; i < count_; ++i) {
                const Resident& r = residents_[i];
                const bool gpu = lv[i] == static_cast<std::uint8_t>(model::Sharing::Gpu);
                std::uint64_t bits = 1;
                if (gpu && by_set_ && set)
                    bits = small_ ? shared_ranks(set_mask & r.mask, set_mask, 0) : shared_gpus(*set, 0, r.at->gpus);
                mine.add(static_cast<model::Sharing>(lv[i]), bits, to_new(i, lv[i]));
                if (r.linked) mine.rest += r.to_new_link;
            }
            m.job_slowdown = mine.slowdown();
        } else {
            mine_.clear();
            for (std::size_t i = 0; i < count_; ++i) {
                const bool gpu = lv[i] == static_cast<std::uint8_t>(model::Sharing::Gpu);
                mine_.push_back({residents_[i].job->profile, static_cast<model::Sharing>(lv[i]), std::nullopt,
                                 gpu && by_set_ && set ? shared_gpus(*set, 0, residents_[i].at->gpus) : 1});
                if (residents_[i].linked)
                    mine_.push_back({residents_[i].job->profile, model::Sharing::Link, std::nullopt});
            }
            for (const NeighbourEffect* e : link_only_)
                mine_.push_back({state_.find(e->id)->profile, model::Sharing::Link, std::nullopt});
            m.job_slowdown = model_.slowdown(*request_.profile, mine_);
        }
        m.loss = lost_throughput(m.job_slowdown, gpus) + link_harm_;
        for (std::size_t i = 0; i < count_ && m.complete; ++i) {
            if (m.loss >= bound_) {
                m.complete = false;
                break;
            }
            m.loss += harm(i, lv[i], set);
        }
        return keep_memo(m, known, packed);
    }

    const Memo& keep_memo(const Memo& m, Memo* known, bool packed) {
        if (!packed) {
            scratch_ = m;
            return scratch_;
        }
        if (known) {
            *known = m;
            return *known;
        }
        memo_.push_back(m);
        index_memo(m.key, memo_.size() - 1);
        return memo_.back();
    }

    // A lower bound of the new job's slowdown for levels_ (a neighbour never makes a job faster,
    // so the slowdown beside all of them is at least that beside any one): the residents it
    // would share a GPU or an island with, one at a time, while the bound can still cut.
    double own_lower_bound(const std::uint8_t* lv) {
        if (!std::isfinite(bound_)) return 1.0;
        double lb = 1.0;
        for (std::size_t i = 0; i < count_; ++i)
            if (lv[i] <= static_cast<std::uint8_t>(model::Sharing::Island)) lb = std::max(lb, alone(i, lv[i]));
        return lb;
    }

    // The new job's slowdown beside resident i alone, sharing `level` with it.
    double alone(std::size_t i, std::uint8_t level) {
        Resident& r = residents_[i];
        double& a = r.alone[level];
        if (std::isnan(a)) {
            const model::Neighbour one{r.job->profile, static_cast<model::Sharing>(level), std::nullopt};
            a = additive_ ? std::max(1.0, 1.0 + to_new(i, level)) : model_.slowdown(*request_.profile, std::span(&one, 1));
        }
        return a;
    }

    // With an additive model: the delay resident i would add to the new job, and the new job to
    // it, sharing `level` with each other.
    double to_new(std::size_t i, std::uint8_t level) {
        Resident& r = residents_[i];
        double& d = r.to_new[level];
        if (std::isnan(d)) d = model_.delay(*request_.profile, {r.job->profile, static_cast<model::Sharing>(level), std::nullopt});
        return d;
    }
    double from_new(std::size_t i, std::uint8_t level) {
        Resident& r = residents_[i];
        double& d = r.from_new[level];
        if (std::isnan(d)) d = model_.delay(*r.job->profile, {request_.profile, static_cast<model::Sharing>(level), std::nullopt});
        return d;
    }

    // Signature -> memo_ position, open addressing; a slot is live only in this generation.
    Memo* find_memo(std::uint64_t key) {
        for (std::size_t i = hash(key);; i = (i + 1) & (kSlots - 1)) {
            const Slot& s = slots_[i];
            if (s.generation != generation_) return nullptr;
            if (memo_[s.at].key == key) return &memo_[s.at];
        }
    }
    void index_memo(std::uint64_t key, std::size_t at) {
        if (memo_.size() > kSlots / 2) return;  // full enough: later ones are just not found
        for (std::size_t i = hash(key);; i = (i + 1) & (kSlots - 1))
            if (slots_[i].generation != generation_) {
                slots_[i] = {generation_, at};
                return;
            }
    }
    static std::size_t hash(std::uint64_t key) {
        key ^= key >> 29;
        key *= 0xbf58476d1ce4e5b9ULL;
        return static_cast<std::size_t>(key >> 40) & (kSlots - 1);
    }

    void build_classes(const std::vector<int>& eligible) {
        const NodeType& t = state_.topology().type_of(node_);
        classes_used_ = 0;
        auto same = [&](int a, int b) {
            if (t.island[a] != t.island[b] || t.pcie_switch[a] != t.pcie_switch[b]) return false;
            const auto& ja = state_.jobs_on_gpu(node_, a);
            const auto& jb = state_.jobs_on_gpu(node_, b);
            if (ja.size() != jb.size()) return false;
            if (ja.size() == 1) return ja[0] == jb[0];
            return std::is_permutation(ja.begin(), ja.end(), jb.begin());
        };
        for (int g : eligible) {
            GpuClass* home = nullptr;
            for (std::size_t c = 0; c < classes_used_ && !home; ++c)
                if (same(classes_[c].gpus.front(), g)) home = &classes_[c];
            if (!home) {
                if (classes_used_ == classes_.size()) classes_.emplace_back();
                home = &classes_[classes_used_++];
                home->gpus.clear();
                home->level.clear();
                Placement one{node_, {g}};
                for (std::size_t i = 0; i < count_; ++i)
                    home->level.push_back(static_cast<std::uint8_t>(state_.intra_node_sharing(one, *residents_[i].at)));
            }
            home->gpus.push_back(g);
        }
        suffix_.assign(classes_used_ + 1, 0);
        for (std::size_t c = classes_used_; c-- > 0;)
            suffix_[c] = suffix_[c + 1] + static_cast<int>(classes_[c].gpus.size());
    }

    // Counts the sets of classes (at most k of them, with at least k GPUs) up to `limit`.
    bool count_choices(std::size_t c, int taken, int covered, int k, std::size_t limit, std::size_t& n) const {
        if (c == classes_used_) {
            if (taken > 0 && covered >= k) return ++n <= limit;
            return true;
        }
        if (taken > k || covered + suffix_[c] < k) return true;
        if (taken < k && !count_choices(c + 1, taken + 1, covered + static_cast<int>(classes_[c].gpus.size()), k, limit, n))
            return false;
        return count_choices(c + 1, taken, covered, k, limit, n);
    }

    template <class Visit>
    void walk(std::size_t c, int covered, int k, Visit& visit) {
        const int taken = static_cast<int>(chosen_.size());
        // Done when every class has been passed, or when k classes are chosen (no more can be).
        if (c == classes_used_ || taken == k) {
            if (taken == 0 || covered < k) return;
            const std::uint8_t* row = &level_rows_[static_cast<std::size_t>(taken) * std::max<std::size_t>(count_, 1)];
            // The GPUs only when asked for (a candidate that cannot win needs none): the lowest
            // GPU of each chosen class, then the lowest of the rest of them.
            auto gpus = [&]() -> const std::vector<int>& {
                gpus_.clear();
                spare_.clear();
                for (std::size_t ci : chosen_) {
                    gpus_.push_back(classes_[ci].gpus.front());
                    spare_.insert(spare_.end(), classes_[ci].gpus.begin() + 1, classes_[ci].gpus.end());
                }
                std::sort(spare_.begin(), spare_.end());
                for (std::size_t i = 0; static_cast<int>(gpus_.size()) < k; ++i) gpus_.push_back(spare_[i]);
                std::sort(gpus_.begin(), gpus_.end());
                return gpus_;
            };
            visit(score_levels(row, k, need_set_ ? &gpus() : nullptr).loss, gpus);
            return;
        }
        if (taken > k || covered + suffix_[c] < k) return;
        if (taken < k) {
            const std::size_t width = std::max<std::size_t>(count_, 1);
            const std::uint8_t* from = &level_rows_[static_cast<std::size_t>(taken) * width];
            std::uint8_t* to = &level_rows_[static_cast<std::size_t>(taken + 1) * width];
            // Every choice with this class shares at least this much with the residents it
            // tightens: once the new job's slowdown beside one of them alone reaches the bound,
            // no such choice can win (a neighbour never makes a job faster).
            double lb = lb_rows_[static_cast<std::size_t>(taken)];
            for (std::size_t r = 0; r < count_; ++r) {
                to[r] = std::min(from[r], classes_[c].level[r]);
                if (to[r] < from[r] && to[r] <= static_cast<std::uint8_t>(model::Sharing::Island) && std::isfinite(bound_))
                    lb = std::max(lb, alone(r, to[r]));
            }
            lb_rows_[static_cast<std::size_t>(taken + 1)] = lb;
            if (lost_throughput(lb, k) + link_harm_ < bound_) {
                chosen_.push_back(c);
                walk(c + 1, covered + static_cast<int>(classes_[c].gpus.size()), k, visit);
                chosen_.pop_back();
            }
        }
        walk(c + 1, covered, k, visit);
    }

    const ClusterState& state_;
    const model::InterferenceModel& model_;
    const JobRequest& request_;
    int node_;
    bool multi_;
    bool additive_;  // the model is additive (DelaySum): residents' slowdowns grow one delay at a time
    bool small_;     // the node has at most 64 GPUs: GPU sets fit in bits
    bool by_set_;    // the new job takes several GPUs: signatures are GPU sets
    bool need_set_;  // scoring needs the GPU set: by_set_, or a resident has several GPUs here
    std::size_t count_ = 0;
    std::size_t classes_used_ = 0;
    double link_harm_ = 0;
    double link_only_delay_ = 0;  // additive: what the link_only_ jobs add to the new job
    double bound_ = std::numeric_limits<double>::infinity();
    Memo scratch_;
    // Reused across decisions so that a decision allocates little.
    static thread_local std::vector<Resident> residents_;
    static thread_local std::vector<GpuClass> classes_;
    static thread_local std::vector<Memo> memo_;
    struct Slot {
        std::uint64_t generation = 0;
        std::size_t at = 0;
    };
    static constexpr std::size_t kSlots = 1024;
    static thread_local std::array<Slot, kSlots> slots_;
    static thread_local std::uint64_t generation_;
    static thread_local std::vector<const NeighbourEffect*> link_only_;
    static thread_local std::vector<std::uint8_t> levels_, level_rows_;
    static thread_local std::vector<double> lb_rows_;
    static thread_local std::vector<model::Neighbour> mine_, with_;
    static thread_local model::DelaySum mine_sum_;
    static constexpr std::uint8_t kUnknown = 0xff;
    static thread_local std::vector<const Placement*> here_at_;  // the node's jobs' placements here
    static thread_local std::vector<std::uint8_t> pair_levels_;  // [i * n + j], i < j: their sharing
    static thread_local std::vector<std::size_t> chosen_;
    static thread_local std::vector<int> gpus_, spare_, suffix_;
};

thread_local std::vector<NodeScorer::Resident> NodeScorer::residents_;
thread_local std::vector<NodeScorer::GpuClass> NodeScorer::classes_;
thread_local std::vector<NodeScorer::Memo> NodeScorer::memo_;
thread_local std::array<NodeScorer::Slot, NodeScorer::kSlots> NodeScorer::slots_;
thread_local std::uint64_t NodeScorer::generation_ = 0;
thread_local std::vector<const NeighbourEffect*> NodeScorer::link_only_;
thread_local std::vector<std::uint8_t> NodeScorer::levels_, NodeScorer::level_rows_;
thread_local std::vector<double> NodeScorer::lb_rows_;
thread_local std::vector<model::Neighbour> NodeScorer::mine_, NodeScorer::with_;
thread_local model::DelaySum NodeScorer::mine_sum_;
thread_local std::vector<const Placement*> NodeScorer::here_at_;
thread_local std::vector<std::uint8_t> NodeScorer::pair_levels_;
thread_local std::vector<std::size_t> NodeScorer::chosen_;
thread_local std::vector<int> NodeScorer::gpus_, NodeScorer::spare_, NodeScorer::suffix_;

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

ColocPolicy::ColocPolicy(const model::InterferenceModel& model, ColocOptions options)
    : model_(&model), options_(options), cache_(options.reuse_predictions ? std::make_shared<PredictionCache>() : nullptr) {}

Decision ColocPolicy::place(const ClusterState& state, const JobRequest& request, int keep) const {
    Decision d;
    if (request.gpus_per_node < 1 || request.nodes < 1) {
        d.reason = "the job asks for no GPU";
        return d;
    }
    const bool single = request.nodes == 1;
    // Explain (keep > 1): the best `keep` sets of each node, worked out in full while that
    // node's scorer still holds what they share with whom.
    const bool ranking = keep > 1 && single;
    struct Ranked {
        Scored scored;
        Candidate full;
    };
    std::vector<Ranked> ranked;
    thread_local std::vector<Scored> here;  // a node's scored sets, when ranking
    std::vector<Scored> per_node;  // the best set per node
    LinkHarm link_harm(state, *model_, request, cache_.get());
    Candidate best_single;         // the best one-node candidate, worked out in full
    // The best losses so far, one per node, as many as the job needs nodes: the n-th is what a
    // node must beat to matter.
    std::vector<double> top;
    std::vector<double> lowest;  // when ranking: the `keep` lowest losses so far, ascending
    auto cut = [&] {
        return static_cast<int>(top.size()) == request.nodes ? top.back() : std::numeric_limits<double>::infinity();
    };
    // Among placements the model cannot tell apart, the one on the node with the most idle GPUs,
    // then the fewest jobs, then the lowest index: it leaves the rest of the cluster best able to
    // take jobs without sharing (and, with an uninformed model, does what spread does).
    auto preferred = [&](int a, int b) {
        const int ia = state.idle_gpus(a), ib = state.idle_gpus(b);
        if (ia != ib) return ia > ib;
        const std::size_t ja = state.jobs_on_node(a).size(), jb = state.jobs_on_node(b).size();
        if (ja != jb) return ja < jb;
        return a < b;
    };
    auto lighter_here = [&](const Scored& a, const Scored& b) {
        if (a.loss < b.loss - kTie) return true;
        if (b.loss < a.loss - kTie) return false;
        if (a.node != b.node) return preferred(a.node, b.node);
        return a.gpus < b.gpus;
    };
    std::vector<int> nodes = nodes_to_score(state, request, options_.max_nodes_scored);
    // The likeliest winners first, so that the bound prunes early.
    std::sort(nodes.begin(), nodes.end(), preferred);
    thread_local std::vector<int> eligible_buffer;
    for (int node : nodes) {
        std::vector<int>& eligible = eligible_buffer;
        eligible_into(state, request, node, eligible);
        if (static_cast<int>(eligible.size()) < request.gpus_per_node) continue;
        Scored best;
        std::size_t here_count = 0;  // the node's scored sets in `here`, when ranking
        NodeScorer scorer(state, *model_, request, node, single ? nullptr : &link_harm, cache_.get());
        // A job on n nodes needs only the n best nodes: a candidate at or past the n-th best so
        // far is not worked out in full; when ranking, one past the keep-th best so far. (A
        // multi-node explain wants every candidate's loss.)
        const bool prune = keep <= 1;
        auto bound = [&] {
            if (ranking)
                return static_cast<int>(lowest.size()) == keep ? lowest.back() + 2 * kTie
                                                               : std::numeric_limits<double>::infinity();
            double b = std::min(cut(), best.node >= 0 ? best.loss : cut());
            return prune ? b + 2 * kTie : std::numeric_limits<double>::infinity();
        };
        scorer.set_bound(bound());
        auto consider = [&](double loss, auto&& gpus) {
            if (keep <= 1 && best.node >= 0 && loss > best.loss + kTie) return;  // cannot win
            const bool ranks = ranking && (static_cast<int>(lowest.size()) < keep || loss <= lowest.back() + kTie);
            const bool wins = best.node < 0 || loss < best.loss - kTie || (loss <= best.loss + kTie && gpus() < best.gpus);
            if (!wins && !ranks) return;
            const std::vector<int>& set = gpus();
            // Into storage kept from earlier candidates and decisions: little to allocate.
            auto keep_in = [&](Scored& to) {
                to.node = node;
                to.gpus.assign(set.begin(), set.end());
                to.loss = loss;
            };
            if (ranks) {
                if (here_count == here.size()) here.emplace_back();
                keep_in(here[here_count++]);
                lowest.insert(std::upper_bound(lowest.begin(), lowest.end(), loss), loss);
                if (static_cast<int>(lowest.size()) > keep) lowest.pop_back();
            }
            if (wins) keep_in(best);
            scorer.set_bound(bound());
        };
        if (!scorer.for_each_choice(eligible, request.gpus_per_node, kMaxSubsets, consider)) {
            scorer.set_bound(std::numeric_limits<double>::infinity());
            auto set = greedy_set(request.gpus_per_node, eligible,
                                  [&](const std::vector<int>& s) { return scorer.loss(s); });
            consider(scorer.loss(set), [&]() -> const std::vector<int>& { return set; });
        }
        if (ranking) {
            const auto end = here.begin() + static_cast<long>(here_count);
            const std::size_t n = std::min(here_count, static_cast<std::size_t>(keep));
            std::partial_sort(here.begin(), here.begin() + static_cast<long>(n), end, lighter_here);
            for (std::size_t i = 0; i < n; ++i) ranked.push_back({here[i], scorer.candidate(here[i].gpus)});
        }
        if (best.node >= 0 && best.loss >= cut() + 2 * kTie && prune) continue;  // beaten
        if (single && best.node >= 0 &&
            (best_single.where.empty() || best.loss < best_single.loss - kTie ||
             (best.loss <= best_single.loss + kTie && preferred(node, best_single.where.front().node))))
            best_single = scorer.candidate(best.gpus);
        if (best.node >= 0) {
            top.insert(std::upper_bound(top.begin(), top.end(), best.loss), best.loss);
            if (static_cast<int>(top.size()) > request.nodes) top.pop_back();
            per_node.push_back(std::move(best));
        }
    }
    if (static_cast<int>(per_node.size()) < request.nodes) {
        d.reason = "no node has " + std::to_string(request.gpus_per_node) + " GPU(s) with a free slot" +
                   (request.nodes > 1 ? " on " + std::to_string(request.nodes) + " nodes" : "");
        return d;
    }
    std::sort(per_node.begin(), per_node.end(), lighter_here);
    if (single) {
        d.chosen = std::move(best_single);
    } else {
        std::vector<Placement> where;
        for (int i = 0; i < request.nodes; ++i) where.push_back({per_node[i].node, per_node[i].gpus});
        std::sort(where.begin(), where.end(), [](const Placement& a, const Placement& b) { return a.node < b.node; });
        d.chosen = score_kept(state, *model_, request, std::move(where), cache_.get());
    }
    if (ranking) {
        std::sort(ranked.begin(), ranked.end(), [&](const Ranked& a, const Ranked& b) { return lighter_here(a.scored, b.scored); });
        if (static_cast<int>(ranked.size()) > keep) ranked.resize(static_cast<std::size_t>(keep));
        for (auto& r : ranked) d.ranked.push_back(std::move(r.full));
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
