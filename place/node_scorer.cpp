#include "place/node_scorer.hpp"

#include <span>

namespace coloc::place {

namespace {

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

}  // namespace

const NeighbourEffect& LinkHarm::effect(JobId id) {
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

NodeScorer::NodeScorer(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                       int node, LinkHarm* link, PredictionCache* cache, ScorerScratch& scratch)
    : state_(state),
      model_(model),
      request_(request),
      node_(node),
      hardware_(state.topology().hardware_of(node)),
      multi_(link != nullptr),
      additive_(model.additive()),
      small_(state.topology().type_of(node).gpus <= 64),
      by_set_(request.gpus_per_node > 1),
      need_set_(by_set_),
      s_(scratch) {
    s_.memo.clear();
    ++s_.generation;
    s_.link_only.clear();
    link_harm_ = 0;
    const std::vector<const RunningJob*>& here = state.running_on_node(node);
    s_.here_at.clear();
    for (const RunningJob* job : here) s_.here_at.push_back(job->on_node(node));
    bool pairwise = false;
    for (std::size_t j = 0; j < here.size(); ++j) {
        const RunningJob* job = here[j];
        if (job->id == request.id) continue;
        Resident& r = next_resident();
        r.job = job;
        r.at = s_.here_at[j];
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
            r.base = nullptr;  // r.own (s_.residents may still move)
            r.before = current_slowdown(model, *job, r.own, r.own_sum);
            r.sum = nullptr;  // r.own_sum
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
            s_.link_only.push_back(&e);
            link_harm_ += harm_to(e, job.gpu_count());
            if (additive_)
                link_only_delay_ += model.delay(*request.profile, {job.profile, model::Sharing::Link, std::nullopt});
        }
    if (pairwise) sum_pairwise(here);
}

Candidate NodeScorer::candidate(const std::vector<int>& gpus) {
    bound_ = std::numeric_limits<double>::infinity();
    const Memo m = entry(gpus);
    Candidate c;
    c.where = {{node_, gpus}};
    c.job_slowdown = m.job_slowdown;
    c.loss = m.loss;
    c.harm = m.loss - lost_throughput(m.job_slowdown, static_cast<int>(gpus.size()));
    c.effects.reserve(count_ + s_.link_only.size());
    for (std::size_t i = 0; i < count_; ++i)
        c.effects.push_back({s_.residents[i].job->id, s_.residents[i].before, after(i, s_.levels[i], &gpus)});
    for (const NeighbourEffect* e : s_.link_only) c.effects.push_back(*e);
    return c;
}

NodeScorer::Resident& NodeScorer::next_resident() {
    if (count_ == s_.residents.size()) s_.residents.emplace_back();
    return s_.residents[count_++];
}

const NodeScorer::Memo& NodeScorer::entry(const std::vector<int>& gpus) {
    Placement mine{node_, gpus};
    s_.levels.clear();
    for (std::size_t i = 0; i < count_; ++i)
        s_.levels.push_back(static_cast<std::uint8_t>(state_.intra_node_sharing(mine, *s_.residents[i].at)));
    return score_levels(s_.levels.data(), static_cast<int>(gpus.size()), &gpus);
}

void NodeScorer::sum_pairwise(const std::vector<const RunningJob*>& here) {
    const std::size_t n = here.size();
    s_.pair_levels.assign(n * n, ScorerScratch::kUnknown);
    for (std::size_t i = 0; i < count_; ++i) {
        Resident& r = s_.residents[i];
        if (r.base || r.sum || r.job->multi_node()) continue;  // listed in the constructor
        r.own_sum.clear();
        for (std::size_t j = 0; j < n; ++j) {
            if (j == r.here) continue;
            std::uint8_t& level = s_.pair_levels[std::min(j, r.here) * n + std::max(j, r.here)];
            if (level == ScorerScratch::kUnknown)
                level = static_cast<std::uint8_t>(state_.intra_node_sharing(*r.at, *s_.here_at[j]));
            const auto where = static_cast<model::Sharing>(level);
            const std::uint64_t bits =
                where == model::Sharing::Gpu ? shared_gpus(r.at->gpus, 0, s_.here_at[j]->gpus) : 1;
            r.own_sum.add(where, bits,
                          model_.delay(*r.job->profile, {here[j]->profile, where, std::nullopt, bits, hardware_}));
        }
        r.before = r.own_sum.slowdown();
    }
}

double NodeScorer::harm(std::size_t i, std::uint8_t level, const std::vector<int>* gpus) {
    Resident& r = s_.residents[i];
    const bool by_gpu = level == static_cast<std::uint8_t>(model::Sharing::Gpu) && r.at->gpus.size() > 1 && gpus;
    if (by_gpu) return harm_to({r.job->id, r.before, after(i, level, gpus)}, r.gpus);
    double& h = r.harm[level];
    if (std::isnan(h)) h = harm_to({r.job->id, r.before, after(i, level, gpus)}, r.gpus);
    return h;
}

double NodeScorer::after(std::size_t i, std::uint8_t level, const std::vector<int>* gpus) {
    Resident& r = s_.residents[i];
    if (additive_) {
        // Its delays now plus the new job's: O(its GPUs), no prediction from the whole list.
        const double link = r.linked ? r.from_new_link : 0;
        const double d = from_new(i, level);
        if (level != static_cast<std::uint8_t>(model::Sharing::Gpu)) return r.delays().slowdown_with(0, 0, d + link);
        std::uint64_t bits = model::gpu_bit(r.first);
        if (r.at->gpus.size() > 1 && gpus)
            bits = r.ranked ? shared_ranks(r.mask & mask_of(*gpus), r.mask, r.first)
                            : shared_gpus(r.at->gpus, r.first, *gpus);
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
        s_.with.assign(r.neighbours().begin(), r.neighbours().end());
        s_.with.push_back({request_.profile, static_cast<model::Sharing>(level), std::nullopt, bits});
        if (r.linked) s_.with.push_back({request_.profile, model::Sharing::Link, std::nullopt});
        *slot = model_.slowdown(*r.job->profile, s_.with);
    }
    return *slot;
}

const NodeScorer::Memo& NodeScorer::score_levels(const std::uint8_t* lv, int gpus, const std::vector<int>* set) {
    std::uint64_t key = 0;
    const bool packed =
        by_set_ ? set && std::all_of(set->begin(), set->end(), [](int g) { return g < 64; }) : count_ <= 21;
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
        model::DelaySum& mine = s_.mine_sum;
        mine.clear();
        mine.rest = link_only_delay_;
        // The set is ascending: which of its GPUs a resident shares, from bits.
        const std::uint64_t set_mask = small_ && set ? mask_of(*set) : 0;
        for (std::size_t i = 0; i < count_; ++i) {
            const Resident& r = s_.residents[i];
            const bool gpu = lv[i] == static_cast<std::uint8_t>(model::Sharing::Gpu);
            std::uint64_t bits = 1;
            if (gpu && by_set_ && set)
                bits = small_ ? shared_ranks(set_mask & r.mask, set_mask, 0) : shared_gpus(*set, 0, r.at->gpus);
            mine.add(static_cast<model::Sharing>(lv[i]), bits, to_new(i, lv[i]));
            if (r.linked) mine.rest += r.to_new_link;
        }
        m.job_slowdown = mine.slowdown();
    } else {
        s_.mine.clear();
        for (std::size_t i = 0; i < count_; ++i) {
            const bool gpu = lv[i] == static_cast<std::uint8_t>(model::Sharing::Gpu);
            s_.mine.push_back({s_.residents[i].job->profile, static_cast<model::Sharing>(lv[i]), std::nullopt,
                               gpu && by_set_ && set ? shared_gpus(*set, 0, s_.residents[i].at->gpus) : 1});
            if (s_.residents[i].linked)
                s_.mine.push_back({s_.residents[i].job->profile, model::Sharing::Link, std::nullopt});
        }
        for (const NeighbourEffect* e : s_.link_only)
            s_.mine.push_back({state_.find(e->id)->profile, model::Sharing::Link, std::nullopt});
        m.job_slowdown = model_.slowdown(*request_.profile, s_.mine);
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

const NodeScorer::Memo& NodeScorer::keep_memo(const Memo& m, Memo* known, bool packed) {
    if (!packed) {
        unpacked_ = m;
        return unpacked_;
    }
    if (known) {
        *known = m;
        return *known;
    }
    s_.memo.push_back(m);
    index_memo(m.key, s_.memo.size() - 1);
    return s_.memo.back();
}

double NodeScorer::own_lower_bound(const std::uint8_t* lv) {
    if (!std::isfinite(bound_)) return 1.0;
    double lb = 1.0;
    for (std::size_t i = 0; i < count_; ++i)
        if (lv[i] <= static_cast<std::uint8_t>(model::Sharing::Island)) lb = std::max(lb, alone(i, lv[i]));
    return lb;
}

double NodeScorer::alone(std::size_t i, std::uint8_t level) {
    Resident& r = s_.residents[i];
    double& a = r.alone[level];
    if (std::isnan(a)) {
        const model::Neighbour one{r.job->profile, static_cast<model::Sharing>(level), std::nullopt, 1, hardware_};
        a = additive_ ? std::max(1.0, 1.0 + to_new(i, level)) : model_.slowdown(*request_.profile, std::span(&one, 1));
    }
    return a;
}

double NodeScorer::to_new(std::size_t i, std::uint8_t level) {
    Resident& r = s_.residents[i];
    double& d = r.to_new[level];
    if (std::isnan(d))
        d = model_.delay(*request_.profile,
                         {r.job->profile, static_cast<model::Sharing>(level), std::nullopt, 1, hardware_});
    return d;
}

double NodeScorer::from_new(std::size_t i, std::uint8_t level) {
    Resident& r = s_.residents[i];
    double& d = r.from_new[level];
    if (std::isnan(d))
        d = model_.delay(*r.job->profile,
                         {request_.profile, static_cast<model::Sharing>(level), std::nullopt, 1, hardware_});
    return d;
}

NodeScorer::Memo* NodeScorer::find_memo(std::uint64_t key) {
    for (std::size_t i = hash(key);; i = (i + 1) & (ScorerScratch::kSlots - 1)) {
        const ScorerScratch::Slot& s = s_.slots[i];
        if (s.generation != s_.generation) return nullptr;
        if (s_.memo[s.at].key == key) return &s_.memo[s.at];
    }
}

void NodeScorer::index_memo(std::uint64_t key, std::size_t at) {
    if (s_.memo.size() > ScorerScratch::kSlots / 2) return;  // full enough: later ones are just not found
    for (std::size_t i = hash(key);; i = (i + 1) & (ScorerScratch::kSlots - 1))
        if (s_.slots[i].generation != s_.generation) {
            s_.slots[i] = {s_.generation, at};
            return;
        }
}

std::size_t NodeScorer::hash(std::uint64_t key) {
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ULL;
    return static_cast<std::size_t>(key >> 40) & (ScorerScratch::kSlots - 1);
}

void NodeScorer::build_classes(const std::vector<int>& eligible) {
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
            if (same(s_.classes[c].gpus.front(), g)) home = &s_.classes[c];
        if (!home) {
            if (classes_used_ == s_.classes.size()) s_.classes.emplace_back();
            home = &s_.classes[classes_used_++];
            home->gpus.clear();
            home->level.clear();
            Placement one{node_, {g}};
            for (std::size_t i = 0; i < count_; ++i)
                home->level.push_back(static_cast<std::uint8_t>(state_.intra_node_sharing(one, *s_.residents[i].at)));
        }
        home->gpus.push_back(g);
    }
    s_.suffix.assign(classes_used_ + 1, 0);
    for (std::size_t c = classes_used_; c-- > 0;)
        s_.suffix[c] = s_.suffix[c + 1] + static_cast<int>(s_.classes[c].gpus.size());
}

bool NodeScorer::count_choices(std::size_t c, int taken, int covered, int k, std::size_t limit, std::size_t& n) const {
    if (c == classes_used_) {
        if (taken > 0 && covered >= k) return ++n <= limit;
        return true;
    }
    if (taken > k || covered + s_.suffix[c] < k) return true;
    if (taken < k &&
        !count_choices(c + 1, taken + 1, covered + static_cast<int>(s_.classes[c].gpus.size()), k, limit, n))
        return false;
    return count_choices(c + 1, taken, covered, k, limit, n);
}

}  // namespace coloc::place
