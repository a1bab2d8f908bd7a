#include "daemon/steering/pending_weigh.hpp"

#include <algorithm>

namespace coloc::daemon {

namespace {

int shared_gpus(const place::ClusterState& state, const place::Candidate& c) {
    int n = 0;
    for (const place::Placement& p : c.where)
        for (int g : p.gpus) n += state.used_slots(p.node, g) > 0;
    return n;
}

}  // namespace

bool may_run_on(const PendingJob& job, int node) {
    return job.allowed_nodes.empty() ||
           std::find(job.allowed_nodes.begin(), job.allowed_nodes.end(), node) != job.allowed_nodes.end();
}

void QueueAhead::add(const PendingJob& job) {
    const int g = std::max(1, job.slots_per_node) * std::max(1, job.nodes);
    gpus += g;
    gpu_s += g * std::max(0.0, job.time_limit_s);
}

Weighed weigh_pending(const place::ClusterState& state, const place::Policy& policy, const place::TimeOutlook& time,
                      const PendingJob& job, const std::vector<int>& nodes, const QueueAhead& ahead,
                      const place::QueueDemand* demand, place::JobRequest& request, const place::HeadReservation& head,
                      place::ExplorationBudget* exploration) {
    request = {};
    request.id = 0;  // never a running job's id
    request.profile = job.profile;
    request.gpus_per_node = std::max(1, job.slots_per_node);
    request.nodes = std::max(1, job.nodes);
    for (int n : nodes)
        if (may_run_on(job, n)) request.allowed_nodes.push_back(n);
    const place::SharingOutlook outlook{.time = &time,
                                        .work_s = job.time_limit_s,
                                        .gpus_ahead = ahead.gpus,
                                        .ahead_gpu_s = ahead.gpu_s,
                                        .others_waiting = ahead.others_waiting,
                                        .arrivals = demand ? demand->rates(time.now()) : place::ArrivalRates{},
                                        .head = head,
                                        .exploration = exploration,
                                        .nodes_wanted = demand ? &demand->nodes_wanted() : nullptr};
    request.outlook = &outlook;
    request.partners = demand ? &demand->partners(time.now()) : nullptr;
    Weighed w;
    w.decision = policy.place(state, request);
    request.outlook = nullptr;
    request.partners = nullptr;
    if (!w.decision.placed && !w.decision.held) {
        w.why = "no place even shared: " + w.decision.reason;
        return w;
    }
    w.node = w.decision.chosen.where.front().node;
    w.shared_gpus = shared_gpus(state, w.decision.chosen);
    const std::string& name = state.topology().nodes()[static_cast<std::size_t>(w.node)].name;
    if (w.decision.held) {
        w.outcome = Weighed::Outcome::Held;
        w.why = w.decision.sharing;
    } else if (w.shared_gpus == 0) {
        w.outcome = Weighed::Outcome::OwnGpus;
        w.why = "GPUs of its own on " + name + ": never held";
    } else {
        w.outcome = Weighed::Outcome::Shares;
        // A policy without the sharing rule (blind packing) shares whenever a slot is free.
        w.why = w.decision.sharing.empty() ? "shares on " + name + ": " + policy.name() + " has no sharing rule"
                                           : w.decision.sharing;
    }
    return w;
}

}  // namespace coloc::daemon
