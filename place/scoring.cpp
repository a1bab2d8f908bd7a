#include "place/policy.hpp"

#include <algorithm>

#include "place/ranking.hpp"

namespace coloc::place {

bool JobRequest::allows(int node, int gpu) const {
    const std::vector<int>* allowed = &allowed_gpus;
    for (const auto& [n, gpus] : allowed_gpus_per_node)
        if (n == node) allowed = &gpus;
    return allowed->empty() || std::find(allowed->begin(), allowed->end(), gpu) != allowed->end();
}

std::vector<int> eligible_gpus(const ClusterState& state, const JobRequest& request, int node) {
    std::vector<int> out;
    const int gpus = state.topology().type_of(node).gpus;
    for (int g = 0; g < gpus; ++g) {
        if (state.free_slots(node, g) > 0 && request.allows(node, g)) out.push_back(g);
    }
    return out;
}

std::vector<int> candidate_nodes(const ClusterState& state, const JobRequest& request) {
    std::vector<int> out;
    auto consider = [&](int n) {
        if (n >= 0 && n < static_cast<int>(state.topology().nodes().size()) &&
            state.free_slots(n) >= request.gpus_per_node &&
            static_cast<int>(eligible_gpus(state, request, n).size()) >= request.gpus_per_node)
            out.push_back(n);
    };
    if (!request.allowed_nodes.empty()) {
        for (int n : request.allowed_nodes) consider(n);
    } else {
        for (int n = 0; n < static_cast<int>(state.topology().nodes().size()); ++n) consider(n);
    }
    return out;
}

namespace {

CurrentLoad load_now(const ClusterState& state, const model::InterferenceModel& model, const RunningJob& job) {
    thread_local std::vector<model::Neighbour> now;
    now.clear();
    state.neighbours_of(job, now);
    return CurrentLoad{now, model.slowdown(*job.profile, now)};
}

// A slowdown from the model, with the uncertainty of its speed when asked for.
model::Prediction predicted(const model::InterferenceModel& model, const model::JobProfile& job,
                            std::span<const model::Neighbour> neighbours, bool uncertainty) {
    if (uncertainty) return model.predict(job, neighbours);
    return {1.0 / model.slowdown(job, neighbours), 0.0};
}

Candidate score(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                std::vector<Placement> where, const std::function<CurrentLoad(const RunningJob&)>& current,
                bool uncertainty);

}  // namespace

Candidate score_candidate(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                          std::vector<Placement> where) {
    return score(
        state, model, request, std::move(where), [&](const RunningJob& job) { return load_now(state, model, job); },
        false);
}

Candidate score_candidate_with_uncertainty(const ClusterState& state, const model::InterferenceModel& model,
                                           const JobRequest& request, std::vector<Placement> where) {
    return score(
        state, model, request, std::move(where), [&](const RunningJob& job) { return load_now(state, model, job); },
        true);
}

Candidate score_candidate(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                          std::vector<Placement> where, const std::function<CurrentLoad(const RunningJob&)>& current) {
    return score(state, model, request, std::move(where), current, false);
}

namespace {

Candidate score(const ClusterState& state, const model::InterferenceModel& model, const JobRequest& request,
                std::vector<Placement> where, const std::function<CurrentLoad(const RunningJob&)>& current,
                bool uncertainty) {
    thread_local std::vector<model::Neighbour> mine, theirs;
    Candidate c;
    c.where = std::move(where);
    const bool multi = c.where.size() > 1 || request.nodes > 1;

    mine.clear();
    state.neighbours_at(c.where, multi, request.id, mine);
    const model::Prediction own = predicted(model, *request.profile, mine, uncertainty);
    c.job_slowdown = 1.0 / own.speed;
    c.job_sd = own.uncertainty;
    int my_gpus = 0;
    for (const auto& p : c.where) my_gpus += static_cast<int>(p.gpus.size());
    c.loss = lost_throughput(c.job_slowdown, my_gpus);

    // Each job that would share something with the new one, once: those on its nodes and,
    // for a multi-node job, the multi-node jobs on its links.
    thread_local std::vector<JobId> seen;
    seen.clear();
    auto note = [&](JobId other) {
        if (other != request.id && std::find(seen.begin(), seen.end(), other) == seen.end()) seen.push_back(other);
    };
    for (const Placement& p : c.where) {
        for (JobId other : state.jobs_on_node(p.node)) note(other);
        int link = state.topology().nodes()[p.node].link;
        if (multi && link >= 0)
            for (JobId other : state.multi_node_jobs_on_link(link)) note(other);
    }

    for (JobId other : seen) {
        const RunningJob& them = *state.find(other);
        const CurrentLoad load = current(them);
        theirs.assign(load.neighbours.begin(), load.neighbours.end());
        NeighbourEffect e{other, load.slowdown, 1.0};
        for (const Placement& p : c.where)
            if (const Placement* tp = them.on_node(p.node)) {
                const model::Sharing level = state.intra_node_sharing(*tp, p);
                theirs.push_back(
                    {request.profile, level, std::nullopt,
                     level == model::Sharing::Gpu ? shared_gpus(tp->gpus, gpus_before(them, p.node), p.gpus) : 1,
                     state.topology().hardware_of(p.node)});
            }
        if (multi && them.multi_node()) theirs.push_back({request.profile, model::Sharing::Link, std::nullopt});
        const model::Prediction after = predicted(model, *them.profile, theirs, uncertainty);
        e.after = 1.0 / after.speed;
        e.after_sd = after.uncertainty;
        c.harm += harm_to(e, them.gpu_count());
        c.effects.push_back(e);
    }
    c.loss += c.harm;
    return c;
}

}  // namespace

}  // namespace coloc::place
