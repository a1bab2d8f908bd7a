#include "daemon/reconcile.hpp"

#include <map>
#include <set>

namespace coloc::daemon {

ReconcilePlan plan_reconciliation(const std::vector<OpenPlacement>& open, const slurm::SlurmSnapshot& slurm,
                                  const std::function<bool(std::int64_t, const std::string&)>& recorded,
                                  const std::function<bool(const std::string&)>& known_node,
                                  const ReconcileOptions& options) {
    std::map<std::int64_t, const slurm::SlurmJob*> by_id;
    for (const slurm::SlurmJob& j : slurm.jobs) by_id[j.job_id] = &j;
    const std::int64_t settled = slurm.taken_at - options.grace_s;

    ReconcilePlan plan;
    // Close: open placements whose job Slurm no longer runs (on that node).
    std::map<std::int64_t, int> open_left;  // per job: open placements not closed by this plan
    for (const OpenPlacement& p : open) ++open_left[p.job_id];
    for (const OpenPlacement& p : open) {
        if (p.created > settled) continue;
        auto it = by_id.find(p.job_id);
        const slurm::SlurmJob* job = it == by_id.end() ? nullptr : it->second;
        CloseAction c{p.job_id, p.node, slurm.taken_at, std::nullopt, false};
        if (job && job->running) {
            bool on_node = false;
            for (const auto& n : job->nodes) on_node = on_node || n.node == p.node;
            if (on_node) continue;  // runs there: nothing to do
        } else if (job && job->start_time == 0) {
            // Pending again (requeued): the placement is over; no end time yet.
        } else if (job) {
            if (job->end_time > settled) continue;  // just ended: the plugin's report is on its way
            if (job->end_time > 0) c.time = job->end_time;
            c.exit_status = job->exit_status;
        }
        plan.close.push_back(std::move(c));
        --open_left[p.job_id];
    }
    for (CloseAction& c : plan.close) c.job_done = open_left[c.job_id] == 0;

    // Adopt: nodes where Slurm runs a job and colocd has no record of it at all.
    for (const slurm::SlurmJob& job : slurm.jobs) {
        if (!job.running || job.start_time == 0 || job.start_time > settled) continue;
        for (const slurm::SlurmJobNode& n : job.nodes) {
            if (!known_node(n.node) || recorded(job.job_id, n.node)) continue;
            plan.adopt.push_back({job.job_id, job.uid, job.name, job.partition, job.start_time, n});
        }
    }
    return plan;
}

}  // namespace coloc::daemon
