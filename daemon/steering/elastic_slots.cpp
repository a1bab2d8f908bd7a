#include "daemon/steering/elastic_slots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace coloc::daemon {

KnownEnds::KnownEnds(const place::ClusterState& state, double now, std::map<place::JobId, double> ends)
    : now_(now), ends_(std::move(ends)), index_(state) {
    for (const auto& [id, end] : ends_)
        if (state.find(id)) index_.set(id, end);
}

double KnownEnds::remaining_s(const place::RunningJob& job) const {
    const auto it = ends_.find(job.id);
    if (it == ends_.end()) return std::numeric_limits<double>::infinity();
    return std::max(0.0, it->second - now_);
}

int full_slots(const place::Topology& topo, int node) {
    const place::NodeType& t = topo.type_of(node);
    return t.gpus * std::max(1, t.slots_per_gpu);
}

ElasticPlan plan_elastic_slots(const place::ClusterState& state, const place::Policy& policy,
                               const place::TimeOutlook& time, const std::vector<int>& nodes,
                               const std::vector<int>& running_use, const std::vector<PendingJob>& pending) {
    const place::Topology& topo = state.topology();
    const int node_count = static_cast<int>(topo.nodes().size());
    ElasticPlan plan;
    plan.slots.assign(static_cast<std::size_t>(node_count), -1);
    std::vector<int> used(static_cast<std::size_t>(node_count), 0), shared(used.size(), 0);
    std::vector<int> sized;
    for (int n : nodes) {
        if (n < 0 || n >= node_count) continue;
        int mine = 0;
        for (int g = 0; g < topo.type_of(n).gpus; ++g) mine += state.used_slots(n, g);
        const int slurm =
            static_cast<std::size_t>(n) < running_use.size() ? running_use[static_cast<std::size_t>(n)] : 0;
        used[static_cast<std::size_t>(n)] = std::max(mine, slurm);
        sized.push_back(n);
    }
    auto offered = [&](int n) {  // slots a job finds free on n with what is opened so far
        return std::min(full_slots(topo, n), used[n] + state.idle_gpus(n) + shared[n]) - used[n];
    };
    std::vector<const PendingJob*> held;  // jobs ahead that the rule holds
    QueueAhead ahead;                     // what they will take when they start
    ahead.others_waiting = static_cast<int>(pending.size()) - 1;
    for (const PendingJob& job : pending) {
        PendingVerdict v;
        v.id = job.id;
        v.uid = job.uid;
        place::JobRequest request;
        if (job.nodes > 1) {
            // Slurm picks all its nodes at once: a shared slot on each would be open to anyone.
            v.why = "waits for GPUs of its own: shared slots are opened for one-node jobs only";
        } else if (std::none_of(sized.begin(), sized.end(), [&](int n) { return may_run_on(job, n); })) {
            v.why = "none of its nodes has elastic slots";
        } else {
            // Elastic slots count no arrivals: the lever that is on by default, admission, does.
            const Weighed w = weigh_pending(state, policy, time, job, sized, ahead, nullptr, request);
            v.why = w.why;
            if (w.node >= 0) v.node = topo.nodes()[static_cast<std::size_t>(w.node)].name;
            if (w.outcome == Weighed::Outcome::Shares) {
                const int n = w.node, more = w.shared_gpus;
                if (used[n] + state.idle_gpus(n) + shared[n] + more > full_slots(topo, n)) {
                    v.why = "no shared slot left on " + v.node + " (" + w.why + ")";
                } else {
                    const int after = offered(n) + more;
                    const PendingJob* taker = nullptr;
                    for (const PendingJob* h : held)
                        if (may_run_on(*h, n) && h->nodes <= 1 && h->slots_per_node <= after) taker = h;
                    if (taker) {
                        v.why = "would share on " + v.node + ", but job " + std::to_string(taker->id) +
                                " ahead of it, held, would take the slot (" + w.why + ")";
                    } else {
                        shared[static_cast<std::size_t>(n)] += more;
                        v.opens = true;
                    }
                }
            } else if (w.outcome == Weighed::Outcome::Held) {
                held.push_back(&job);
                ahead.add(job);
            }
        }
        plan.verdicts.push_back(std::move(v));
    }
    for (int n : sized) plan.slots[static_cast<std::size_t>(n)] = used[n] + offered(n);
    return plan;
}

ElasticSlots::ElasticSlots(ElasticConfig cfg, int nodes)
    : cfg_(cfg), enabled_(cfg.enabled), applied_(static_cast<std::size_t>(nodes)) {}

std::vector<SlotUpdate> ElasticSlots::set_enabled(bool on, const place::Topology& topo) {
    std::vector<SlotUpdate> out;
    if (on == enabled_) return out;
    enabled_ = on;
    verdicts_.clear();
    if (on) return out;
    for (std::size_t n = 0; n < applied_.size(); ++n)
        if (applied_[n]) {
            out.push_back({topo.nodes()[n].name, std::nullopt, full_slots(topo, static_cast<int>(n))});
            applied_[n].reset();
        }
    return out;
}

std::vector<SlotUpdate> ElasticSlots::apply(const ElasticPlan& plan, const place::Topology& topo, std::int64_t now_s) {
    std::vector<SlotUpdate> out;
    if (!enabled_) return out;
    ++rounds_;
    last_round_s_ = now_s;
    if (applied_.size() < plan.slots.size()) applied_.resize(plan.slots.size());  // nodes added from Slurm
    verdicts_ = plan.verdicts;
    for (const PendingVerdict& v : plan.verdicts) last_seen_[v.id] = v;
    while (last_seen_.size() > kVerdictsKept) last_seen_.erase(last_seen_.begin());
    struct Change {
        int node, size, slots;
    };
    std::vector<Change> changes;
    for (std::size_t n = 0; n < plan.slots.size() && n < applied_.size(); ++n) {
        const int want = plan.slots[n];
        if (want < 0) continue;
        // A node never told is at its full count (Slurm's configuration).
        const int now = applied_[n].value_or(full_slots(topo, static_cast<int>(n)));
        if (applied_[n] && *applied_[n] == want) continue;
        if (!applied_[n] && want == now) continue;
        changes.push_back({static_cast<int>(n), std::abs(want - now), want});
    }
    // Openings and closings alike: the biggest changes first, equal ones in node order.
    std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.size > b.size; });
    if (changes.size() > static_cast<std::size_t>(std::max(cfg_.max_updates_per_round, 1)))
        changes.resize(static_cast<std::size_t>(std::max(cfg_.max_updates_per_round, 1)));
    for (const Change& c : changes) {
        applied_[static_cast<std::size_t>(c.node)] = c.slots;
        out.push_back({topo.nodes()[static_cast<std::size_t>(c.node)].name, c.slots, full_slots(topo, c.node)});
    }
    updates_ += static_cast<std::int64_t>(out.size());
    return out;
}

const PendingVerdict* ElasticSlots::verdict_of(std::int64_t job) const {
    const auto it = last_seen_.find(job);
    return it == last_seen_.end() ? nullptr : &it->second;
}

}  // namespace coloc::daemon
