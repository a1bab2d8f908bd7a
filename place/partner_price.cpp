#include "place/partner_price.hpp"

#include <algorithm>
#include <cstdint>

#include "place/fragmentation.hpp"
#include "place/ranking.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::place {

double PartnerDemand::scarcity(int idle, double horizon_s, int placing) const {
    if (mix.empty()) return 0;
    const double ahead = std::min(std::max(0.0, horizon_s), std::max(0.0, seen_s));
    const double queued = std::max(0.0, queued_gpus - placing);
    // More asked than idle: at least idle - queued + 1 GPUs arrive.
    return poisson_at_least(gpus_per_s * ahead, idle - queued + 1);
}

namespace {

// A neighbour on the same GPU, as the engine lists one (its first GPU shared).
model::Neighbour on_gpu(const model::JobProfile* p, std::uint16_t hardware) {
    return {p, model::Sharing::Gpu, std::nullopt, 1, hardware};
}

// The class, the GPU kind and the occupants (sorted) as one key.
void key_of(const model::JobProfile& c, const std::vector<std::pair<const model::JobProfile*, int>>& occupants,
            std::uint16_t hardware, std::vector<std::uintptr_t>& key) {
    key.clear();
    key.push_back(reinterpret_cast<std::uintptr_t>(&c));
    key.push_back(hardware);
    for (const auto& [p, g] : occupants) {
        key.push_back(reinterpret_cast<std::uintptr_t>(p));
        key.push_back(static_cast<std::uintptr_t>(g));
    }
}

}  // namespace

std::size_t PartnerCache::KeyHash::operator()(const Key& key) const {
    std::uint64_t h = 1469598103934665603ull;
    for (std::uintptr_t v : key) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
}

// Kept until the model's pair predictions are worked out afresh (settled_version), not dropped
// at each online learning step: what a slot is worth to the jobs to come is a valuation, for
// which the latest rebuild is close enough, and a learning model moves at every report.
void PartnerCache::check_version(const model::InterferenceModel& model) {
    if (model.settled_version() == version_ && kept_.size() <= 100000 && valued_.size() <= 100000) return;
    kept_.clear();
    valued_.clear();
    version_ = model.settled_version();
}

void PartnerCache::use_mix(const model::InterferenceModel& model,
                           const std::vector<std::pair<const model::JobProfile*, double>>& mix) {
    check_version(model);
    if (mix == mix_) return;
    mix_ = mix;
    valued_.clear();
}

double PartnerCache::slot_value(const model::InterferenceModel& model,
                                const std::vector<std::pair<const model::JobProfile*, int>>& occupants,
                                std::uint16_t hardware) {
    check_version(model);
    thread_local Key key;
    key.clear();
    key.push_back(hardware);
    for (const auto& [p, g] : occupants) {
        key.push_back(reinterpret_cast<std::uintptr_t>(p));
        key.push_back(static_cast<std::uintptr_t>(g));
    }
    if (const auto it = valued_.find(key); it != valued_.end()) return it->second;
    double f = 0;
    for (const auto& [c, w] : mix_) f += w * keeps(model, *c, occupants, hardware);
    return valued_[key] = f;
}

double PartnerCache::keeps(const model::InterferenceModel& model, const model::JobProfile& c,
                           const std::vector<std::pair<const model::JobProfile*, int>>& occupants,
                           std::uint16_t hardware) {
    check_version(model);
    thread_local Key key;
    key_of(c, occupants, hardware, key);
    if (const auto it = kept_.find(key); it != kept_.end()) return it->second;
    std::vector<model::Neighbour> around;
    for (const auto& o : occupants) around.push_back(on_gpu(o.first, hardware));
    double lost = lost_throughput(std::max(1.0, model.slowdown(c, around)), 1);
    for (std::size_t i = 0; i < occupants.size(); ++i) {
        std::vector<model::Neighbour> others;
        for (std::size_t k = 0; k < occupants.size(); ++k)
            if (k != i) others.push_back(on_gpu(occupants[k].first, hardware));
        const double before = std::max(1.0, model.slowdown(*occupants[i].first, others));
        others.push_back(on_gpu(&c, hardware));
        const double after = std::max(before, model.slowdown(*occupants[i].first, others));
        lost += lost_throughput(after, occupants[i].second) - lost_throughput(before, occupants[i].second);
    }
    return kept_[key] = std::max(0.0, 1.0 - lost);
}

PartnerPrice::PartnerPrice(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                           PartnerCache* cache)
    : state_(state), model_(model), request_(request), cache_(cache ? cache : &own_cache_) {
    const PartnerDemand* d = request.partners;
    if (!d || d->mix.empty()) return;
    const double horizon = request.outlook && request.outlook->work_s > 0 ? request.outlook->work_s : d->typical_run_s;
    scarcity_ =
        d->scarcity(state.topology().total_gpus() - state.busy_gpus(), horizon, request.gpus_per_node * request.nodes);
    if (scarcity_ > 0) cache_->use_mix(model, d->mix);
}

const PartnerPrice::Kind& PartnerPrice::kind(std::uint16_t hw) {
    for (const Kind& k : kinds_)
        if (k.hardware == hw) return k;
    const auto slot_beside = [&](const model::JobProfile* first, int gpus) {
        const std::vector<std::pair<const model::JobProfile*, int>> one{{first, gpus}};
        return cache_->slot_value(model_, one, hw);
    };
    Kind k{hw, 0, 0};
    for (const auto& [first, w] : request_.partners->mix) k.next += w * slot_beside(first, 1);
    // An idle GPU offers a job alone (1) and a slot beside it (m) for each slot more; taken, it
    // offers a slot beside the job for each slot left.
    k.own = std::max(0.0, 1 + k.next - slot_beside(request_.profile, request_.gpus_per_node * request_.nodes));
    kinds_.push_back(k);
    return kinds_.back();
}

std::pair<double, double> PartnerPrice::offers(int node, int gpu) {
    const std::uint16_t hw = state_.topology().hardware_of(node);
    const int room = state_.free_slots(node, gpu);
    const auto offer = [&](int r) {
        if (r <= 0) return 0.0;
        std::sort(occupants_.begin(), occupants_.end());
        const double f = cache_->slot_value(model_, occupants_, hw);
        return r == 1 ? f : f + (r - 1) * kind(hw).next;
    };
    occupants_.clear();
    for (JobId id : state_.jobs_on_gpu(node, gpu))
        if (const RunningJob* j = state_.find(id)) occupants_.push_back({j->profile, j->gpu_count()});
    const double before = offer(room);
    occupants_.push_back({request_.profile, request_.gpus_per_node * request_.nodes});
    return {before, offer(room - 1)};
}

double PartnerPrice::of(int node, const std::vector<int>& gpus) {
    if (!any()) return 0;
    double taken = 0;
    for (int g : gpus) {
        if (state_.used_slots(node, g) == 0) continue;  // GPUs of its own: the floor, not charged
        const double own = kind(state_.topology().hardware_of(node)).own;
        const auto [before, after] = offers(node, g);
        taken += std::max(0.0, before - after - own);
    }
    return scarcity_ * taken;
}

}  // namespace coloc::place
