#include "daemon/steering/admission.hpp"

#include <algorithm>

namespace coloc::daemon {

namespace {

// Released jobs stand in the round's copy of the cluster under ids no running job has.
constexpr place::JobId kReleasedIds = place::JobId{1} << 62;

// A job colocd keeps pending, and when it is expected to find its GPUs.
struct Kept {
    const PendingJob* job;
    double start_s;  // seconds from now
};

void add_released(place::ClusterState& state, const PendingJob& job, const place::Candidate& where) {
    place::RunningJob r;
    r.id = kReleasedIds + static_cast<place::JobId>(job.id);
    r.profile = job.profile;
    r.where = where.where;
    state.add(std::move(r), false);
}

// GPUs of `node` idle `within_s` from now: idle now, or used only by jobs whose known ends come
// by then; the GPUs `taking` takes there (null: none) are left out.
int gpus_idle_within(const place::ClusterState& state, const place::TimeOutlook& time, int node, double within_s,
                     const place::Placement* taking = nullptr) {
    int idle = 0;
    for (int g = 0; g < state.topology().type_of(node).gpus; ++g) {
        if (taking && std::find(taking->gpus.begin(), taking->gpus.end(), g) != taking->gpus.end()) continue;
        const std::vector<place::JobId>& on = state.jobs_on_gpu(node, g);
        idle += std::all_of(on.begin(), on.end(), [&](place::JobId id) {
            const place::RunningJob* r = state.find(id);
            return r && time.remaining_s(*r) <= within_s;
        });
    }
    return idle;
}

// Whether a job placed at `where` until past `k`'s expected start leaves `k` no node with GPUs of
// its own by then. Sharing a GPU whose jobs end before that start keeps it from `k` as surely as
// taking an idle one.
bool takes_its_start(const place::ClusterState& state, const place::TimeOutlook& time, const Kept& k,
                     const std::vector<place::Placement>& where) {
    const int need = std::max(1, k.job->slots_per_node);
    bool lost = false;
    for (const place::Placement& p : where)
        lost = lost || (may_run_on(*k.job, p.node) && gpus_idle_within(state, time, p.node, k.start_s) >= need &&
                        gpus_idle_within(state, time, p.node, k.start_s, &p) < need);
    if (!lost) return false;
    for (int n = 0; n < static_cast<int>(state.topology().nodes().size()); ++n) {
        const auto mine =
            std::find_if(where.begin(), where.end(), [&](const place::Placement& p) { return p.node == n; });
        if (may_run_on(*k.job, n) &&
            gpus_idle_within(state, time, n, k.start_s, mine == where.end() ? nullptr : &*mine) >= need)
            return false;
    }
    return true;
}

}  // namespace

std::vector<AdmissionVerdict> plan_admission(const place::ClusterState& cluster, const place::Policy& policy,
                                             const place::TimeOutlook& time, const std::vector<int>& nodes,
                                             const std::vector<PendingJob>& pending, const place::QueueDemand* demand,
                                             place::ExplorationBudget* exploration, place::ClusterState* planned) {
    place::ClusterState state = cluster;
    const place::Topology& topo = state.topology();
    std::vector<AdmissionVerdict> out;
    std::vector<Kept> kept;
    QueueAhead ahead;
    ahead.others_waiting = static_cast<int>(std::count_if(pending.begin(), pending.end(),
                                                          [](const PendingJob& j) { return !j.running; })) -
                           1;
    for (const PendingJob& job : pending) {
        AdmissionVerdict v;
        v.id = job.id;
        v.uid = job.uid;
        v.gated = job.gated;
        v.offered = job.offered;
        place::JobRequest request;
        if (job.gated && job.nodes > 1) {
            v.release = true;
            v.why = "released: a job on several nodes is not weighed (Slurm picks its nodes at once)";
            out.push_back(std::move(v));
            continue;
        }
        if (job.gated && std::none_of(nodes.begin(), nodes.end(), [&](int n) { return may_run_on(job, n); })) {
            v.release = true;
            v.why = "released: none of its nodes is one colocd shares (bind mode, several slots per GPU)";
            out.push_back(std::move(v));
            continue;
        }
        if (job.gated && job.time_limit_s <= 0) {
            v.release = true;
            v.why = "released: no time limit, so the rule cannot weigh what sharing costs it";
            out.push_back(std::move(v));
            continue;
        }
        // The first job held ahead is the head whose start the rule protects, as in the replay.
        place::HeadReservation head;
        if (!kept.empty())
            head = {kept.front().start_s,
                    std::max(1, kept.front().job->slots_per_node) * std::max(1, kept.front().job->nodes)};
        const Weighed w = weigh_pending(state, policy, time, job, nodes, ahead, demand, request, head,
                                        job.gated ? exploration : nullptr);
        const bool fits = w.outcome == Weighed::Outcome::OwnGpus || w.outcome == Weighed::Outcome::Shares;
        const std::string node = w.node >= 0 ? topo.nodes()[static_cast<std::size_t>(w.node)].name : "";
        if (!job.gated) {
            // In Slurm's hands: it starts wherever it fits first, whatever the sharing rule says of
            // it (a job colocd released in an earlier round is one too until it starts). One that
            // Slurm started already has no verdict: it only takes its GPUs.
            if (w.decision.placed || w.decision.held)
                add_released(state, job, w.decision.chosen);
            else if (!job.running)
                ahead.add(job);
            if (job.running) continue;
            v.why = "not gated by coloc";
            out.push_back(std::move(v));
            continue;
        }
        const Kept* blocks = nullptr;  // a held job ahead whose GPUs this one would take
        if (fits)
            for (const Kept& k : kept)
                if (job.time_limit_s > k.start_s && takes_its_start(state, time, k, w.decision.chosen.where))
                    blocks = &k;
        if (fits && !blocks) {
            v.release = true;
            v.explores = w.decision.explores;
            if (!job.own_node_list) v.node = node;
            v.why = "released: " + w.why;
            add_released(state, job, w.decision.chosen);
        } else {
            v.why = blocks ? "held: would take GPUs on " + node + " that job " + std::to_string(blocks->job->id) +
                                 " ahead of it waits for, and runs past their expected start"
                           : (w.outcome == Weighed::Outcome::Held ? w.why : "held: " + w.why);
            const double start = time.wait_for_idle_nodes(1, std::max(1, job.slots_per_node));
            kept.push_back({&job, start});
            ahead.add(job);
        }
        out.push_back(std::move(v));
    }
    if (planned) *planned = std::move(state);
    return out;
}

std::vector<JobUpdate> AdmissionGate::set_enabled(bool on, std::int64_t now_s) {
    if (on == enabled_) return {};
    enabled_ = on;
    verdicts_.clear();
    return on ? std::vector<JobUpdate>{} : release_all(now_s);
}

std::vector<JobUpdate> AdmissionGate::release_all(std::int64_t now_s) {
    std::vector<JobUpdate> out;
    for (const auto& [job, _] : lease_until_) out.push_back({job, now_s, std::nullopt});
    lease_until_.clear();
    return out;
}

std::vector<JobUpdate> AdmissionGate::apply(const std::vector<AdmissionVerdict>& verdicts, std::int64_t now_s) {
    if (!enabled_) return {};
    ++rounds_;
    last_round_s_ = now_s;
    verdicts_ = verdicts;
    std::vector<JobUpdate> releases, renewals, unpins;
    std::map<std::int64_t, std::int64_t> leases, pinned;  // of the jobs still pending
    for (const AdmissionVerdict& v : verdicts) {
        if (const auto it = lease_until_.find(v.id); it != lease_until_.end()) leases.insert(*it);
        if (const auto it = pinned_at_.find(v.id); it != pinned_at_.end()) pinned.insert(*it);
        if (v.offered) pinned.try_emplace(v.id, now_s);  // its node list is job_submit.lua's, from an offer
        if (v.gated) {
            last_seen_[v.id] = v;
            if (v.release) {
                releases.push_back({v.id, now_s, v.node.empty() ? std::nullopt : std::optional(v.node)});
            } else if (const auto it = leases.find(v.id); it == leases.end() || it->second - now_s < cfg_.lease_s / 2) {
                renewals.push_back({v.id, now_s + cfg_.lease_s, std::nullopt});
            }
        } else if (const auto it = pinned.find(v.id); it != pinned.end() && now_s - it->second >= cfg_.lease_s) {
            // Released with a node a lease ago and still pending: the node is no longer the
            // best guess, and Slurm may start it anywhere.
            unpins.push_back({v.id, now_s, std::string()});
        }
    }
    while (last_seen_.size() > kVerdictsKept) last_seen_.erase(last_seen_.begin());
    std::vector<JobUpdate> out = std::move(releases);
    out.insert(out.end(), renewals.begin(), renewals.end());
    out.insert(out.end(), unpins.begin(), unpins.end());
    const auto cap = static_cast<std::size_t>(std::max(cfg_.max_updates_per_round, 1));
    if (out.size() > cap) out.resize(cap);  // the rest are asked for again at the next round
    for (const JobUpdate& u : out) {
        if (u.nodes && u.nodes->empty()) {
            pinned.erase(u.job);
        } else if (u.begin == now_s) {
            leases.erase(u.job);
            if (u.nodes) pinned[u.job] = now_s;
            ++released_;
        } else {
            leases[u.job] = u.begin;
        }
    }
    lease_until_ = std::move(leases);  // jobs that started or left the queue are forgotten
    pinned_at_ = std::move(pinned);
    return out;
}

const AdmissionVerdict* AdmissionGate::verdict_of(std::int64_t job) const {
    const auto it = last_seen_.find(job);
    return it == last_seen_.end() ? nullptr : &it->second;
}

}  // namespace coloc::daemon
