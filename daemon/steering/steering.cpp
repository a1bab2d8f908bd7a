#include "daemon/steering/steering.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace coloc::daemon {

model::JobProfile builtin_probe(const std::string& feature) {
    model::JobProfile p;
    p.name = "probe:" + feature;
    if (feature == "coloc_quietnet") {
        // Data-parallel training across two nodes: a third of each iteration is gradient exchange.
        p.gpus = 2;
        p.nodes = 2;
        p.iter_time_s = 0.5;
        p.sm_util = 0.7;
        p.mem_bw_util = 0.5;
        p.host_pressure = 0.2;
        p.comm_bytes = 2e9;
        p.comm_fraction = 0.35;
        for (const char* k :
             {"gpus", "nodes", "iter_time_s", "sm_util", "mem_bw_util", "host_pressure", "comm_bytes", "comm_fraction"})
            p.known[k] = true;
    } else if (feature == "coloc_quietgpu") {
        // One GPU, compute and memory-bandwidth bound: what suffers most from a shared GPU.
        p.gpus = 1;
        p.sm_util = 0.95;
        p.mem_bw_util = 0.7;
        p.host_pressure = 0.1;
        for (const char* k : {"gpus", "sm_util", "mem_bw_util", "host_pressure"}) p.known[k] = true;
    }
    return p;
}

double probe_loss(const place::ClusterState& state, const place::Policy& policy, const model::InterferenceModel& model,
                  const model::JobProfile& probe, int node) {
    const int gpus = std::min(std::max(probe.gpus, 1), state.topology().type_of(node).gpus);
    if (gpus < 1) return std::numeric_limits<double>::infinity();
    // Alone on a node (and, for a multi-node probe, on a link without multi-node traffic) a job
    // loses nothing: no need to ask the engine, which keeps rounds cheap on mostly idle clusters.
    const int link = state.topology().nodes()[static_cast<std::size_t>(node)].link;
    if (state.jobs_on_node(node).empty() &&
        (probe.nodes <= 1 || link < 0 || state.multi_node_jobs_on_link(link).empty()))
        return 0.0;
    place::JobRequest request;
    request.id = 0;  // never a running job's id
    request.profile = &probe;
    request.gpus_per_node = gpus;
    request.allowed_nodes = {node};
    const place::Decision d = policy.place(state, request);
    if (!d.placed) return std::numeric_limits<double>::infinity();
    double loss = d.chosen.loss;
    if (probe.nodes > 1) {
        // The engine chose the GPUs on this node; scored as one node of a multi-node job, the
        // probe also meets the multi-node jobs on the node's link.
        request.nodes = probe.nodes;
        loss = place::score_candidate(state, model, request, d.chosen.where).loss;
    }
    return loss / gpus;
}

NodeAdvice advise(const SteeringConfig& cfg, double weight_loss, const std::vector<double>& class_losses,
                  const std::optional<NodeAdvice>& last) {
    NodeAdvice a;
    // Any predicted loss weighs at least 1: a node where a job would lose nothing always ranks
    // before one where it would lose something.
    const double share = cfg.full_weight_loss > 0 ? weight_loss / cfg.full_weight_loss : 1.0;
    const double raw = std::ceil(std::clamp(share, 0.0, 1.0) * cfg.max_extra_weight - 1e-9);
    a.extra_weight = weight_loss > 1e-9 ? std::max(1, static_cast<int>(raw)) : 0;
    if (!std::isfinite(weight_loss)) a.extra_weight = cfg.max_extra_weight;
    if (last) {
        const int change = std::abs(a.extra_weight - last->extra_weight);
        const bool crossed_zero = (a.extra_weight == 0) != (last->extra_weight == 0);
        if (change < cfg.weight_hysteresis && !crossed_zero) a.extra_weight = last->extra_weight;
    }
    for (std::size_t i = 0; i < cfg.classes.size() && i < class_losses.size(); ++i) {
        const std::string& f = cfg.classes[i].feature;
        const bool had = last && std::find(last->features.begin(), last->features.end(), f) != last->features.end();
        const double limit = cfg.quiet_loss + (had ? cfg.quiet_hysteresis : 0.0);
        if (class_losses[i] <= limit) a.features.push_back(f);
    }
    std::sort(a.features.begin(), a.features.end());
    return a;
}

Steering::Steering(SteeringConfig cfg, const model::ProfileCatalogue& catalogue, int nodes)
    : cfg_(std::move(cfg)), applied_(static_cast<std::size_t>(nodes)), enabled_(cfg_.enabled) {
    builtin_.reserve(cfg_.classes.size());
    for (const SteeringClass& c : cfg_.classes) {
        if (c.profile.empty()) {
            builtin_.push_back(builtin_probe(c.feature));
            class_probes_.push_back(&builtin_.back());
            continue;
        }
        const model::JobProfile* p = catalogue.find(c.profile);
        if (!p)
            throw std::invalid_argument("steering class " + c.feature + ": profile '" + c.profile +
                                        "' is not in the profile catalogue");
        class_probes_.push_back(p);
    }
    if (cfg_.weight_profile.empty()) {
        weight_probe_ = &catalogue.default_profile();
    } else {
        weight_probe_ = catalogue.find(cfg_.weight_profile);
        if (!weight_probe_)
            throw std::invalid_argument("steering.weight_profile: profile '" + cfg_.weight_profile +
                                        "' is not in the profile catalogue");
    }
}

std::vector<NodeUpdate> Steering::set_enabled(bool on, const place::Topology& topo) {
    std::vector<NodeUpdate> out;
    if (on == enabled_) return out;
    enabled_ = on;
    dirty_ = true;
    cursor_ = -1;  // a round under way is dropped
    pending_.clear();
    last_round_ms_ = -1;  // the first round after switching on runs at once
    if (on) return out;
    for (std::size_t n = 0; n < applied_.size(); ++n)
        if (applied_[n]) {
            out.push_back({topo.nodes()[n].name, std::nullopt});
            set_applied(static_cast<int>(n), std::nullopt);
        }
    return out;
}

std::vector<NodeUpdate> Steering::round(const place::ClusterState& state, const place::Policy& policy,
                                        const model::InterferenceModel& model, std::int64_t now_ms, int max_nodes) {
    std::vector<NodeUpdate> out;
    if (!enabled_) return out;
    if (cursor_ < 0) {  // no round under way: start one when due and something changed
        if (!dirty_) return out;
        if (last_round_ms_ >= 0 && now_ms - last_round_ms_ < static_cast<std::int64_t>(cfg_.interval_s) * 1000)
            return out;
        last_round_ms_ = now_ms;
        ++rounds_;
        dirty_ = false;
        cursor_ = 0;
        pending_.clear();
    }
    std::vector<double> losses(class_probes_.size());
    const int nodes = static_cast<int>(applied_.size());
    for (int budget = std::max(max_nodes, 1); cursor_ < nodes && budget > 0; ++cursor_, --budget) {
        const int n = cursor_;
        for (std::size_t c = 0; c < class_probes_.size(); ++c)
            losses[c] = probe_loss(state, policy, model, *class_probes_[c], n);
        const double weight_loss = probe_loss(state, policy, model, *weight_probe_, n);
        const auto& last = applied_[static_cast<std::size_t>(n)];
        NodeAdvice a = advise(cfg_, weight_loss, losses, last);
        if (last && *last == a) continue;
        const int change = std::abs(a.extra_weight - (last ? last->extra_weight : 0)) + (last ? 0 : 1);
        pending_.push_back({n, change, std::move(a)});
    }
    if (cursor_ < nodes) return out;  // the rest at the next call
    cursor_ = -1;
    // The biggest changes first; equal ones in node order.
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const Change& a, const Change& b) { return a.weight_change > b.weight_change; });
    const std::size_t limit = static_cast<std::size_t>(std::max(cfg_.max_updates_per_round, 1));
    if (pending_.size() > limit) {
        dirty_ = true;  // what is left waits for the next round
        pending_.resize(limit);
    }
    for (Change& c : pending_) {
        set_applied(c.node, c.advice);
        out.push_back({state.topology().nodes()[static_cast<std::size_t>(c.node)].name, std::move(c.advice)});
    }
    pending_.clear();
    updates_ += static_cast<std::int64_t>(out.size());
    return out;
}

void Steering::set_applied(int node, std::optional<NodeAdvice> advice) {
    auto& slot = applied_[static_cast<std::size_t>(node)];
    if (slot) {
        auto it = extra_weights_.find(slot->extra_weight);
        if (--it->second == 0) extra_weights_.erase(it);
    }
    if (advice) ++extra_weights_[advice->extra_weight];
    slot = std::move(advice);
}

std::optional<int> Steering::least_extra_weight() const {
    if (extra_weights_.empty()) return std::nullopt;
    return extra_weights_.begin()->first;
}

}  // namespace coloc::daemon
