#include "place/sharing_rule.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

namespace coloc::place {

namespace {

std::string seconds(double s) {
    char buf[32];
    if (s == std::numeric_limits<double>::infinity()) return "never";
    std::snprintf(buf, sizeof buf, "%.0f s", s);
    return buf;
}

}  // namespace

double gpus_freed_by(const ClusterState& state, const RunningJob& job) {
    double freed = 0;
    for (const Placement& p : job.where)
        for (int g : p.gpus)
            if (const int used = state.used_slots(p.node, g); used > 0) freed += 1.0 / used;
    return freed;
}

bool takes_shared_gpu(const ClusterState& state, const Candidate& c) {
    for (const Placement& p : c.where)
        for (int g : p.gpus)
            if (state.used_slots(p.node, g) > 0) return true;
    return false;
}

SharingVerdict judge_sharing(const ClusterState& state, const JobRequest& request, const Candidate& c,
                             const SharingOutlook& outlook) {
    SharingVerdict v;
    v.shares = takes_shared_gpu(state, c);
    if (!v.shares || !outlook.time || !(outlook.work_s > 0)) return v;
    v.weighed = true;
    // Extra time, own and the neighbours'.
    const double s = std::max(1.0, c.job_slowdown);
    const double alone_span = outlook.work_s * s;  // the job's time if its neighbours all stay
    double overlap = 0, lost_gpu_s = 0;
    for (const NeighbourEffect& e : c.effects) {
        const RunningJob* job = state.find(e.id);
        if (!job || !(e.after > e.before)) continue;
        const double left = outlook.time->remaining_s(*job) * e.after / std::max(1.0, e.before);
        const double together = std::min(alone_span, left);
        overlap = std::max(overlap, together);
        v.neighbours_extra_s += together * (1 - e.before / e.after);
        lost_gpu_s += job->gpu_count() * together * (1 / std::max(1.0, e.before) - 1 / e.after);
    }
    // Neighbours that are not slowed still share the GPU while they run.
    for (const Placement& p : c.where)
        for (int g : p.gpus)
            for (JobId id : state.jobs_on_gpu(p.node, g))
                if (const RunningJob* job = state.find(id))
                    overlap = std::max(overlap, std::min(alone_span, outlook.time->remaining_s(*job)));
    v.own_extra_s = overlap * (1 - 1 / s);
    const int gpus = request.gpus_per_node * request.nodes;
    const double net_lost = lost_gpu_s - gpus * overlap / s;
    if (outlook.others_waiting > 0 && net_lost > 0)
        v.waiting_extra_s = outlook.others_waiting * net_lost / state.topology().total_gpus();
    const double cost = v.own_extra_s + v.neighbours_extra_s + v.waiting_extra_s;
    v.ahead = std::max(0, outlook.gpus_ahead);
    v.need = gpus + v.ahead;
    v.wait_s = outlook.time->wait_for_idle_gpus(v.need, cost);
    v.hold = !(v.wait_s > cost);
    return v;
}

std::string SharingVerdict::why() const {
    if (!shares) return "GPUs of its own: never held";
    if (!weighed) return "shares a GPU: no queue or run time is known to weigh a wait against, so it is not held";
    const double cost = own_extra_s + neighbours_extra_s + waiting_extra_s;
    const std::string waiting =
        waiting_extra_s > 0 ? " and " + seconds(waiting_extra_s) + " to the jobs waiting" : std::string();
    return std::string(hold ? "held: " : "shares: ") + "sharing adds " + seconds(own_extra_s) + " to the job, " +
           seconds(neighbours_extra_s) + " to its neighbours" + waiting + "; GPUs of its own expected in " +
           (wait_s >= cost && !hold ? "over " + seconds(cost) : seconds(wait_s)) + " (" + std::to_string(need) +
           " GPUs wanted, " + std::to_string(ahead) + " of them by jobs queued ahead)";
}

}  // namespace coloc::place
