// Restart reconciliation inside colocd: the libslurm query runs off the request path
// (ReconcileRunner); its answer is applied here, between requests, with the rules of
// plan_reconciliation (daemon/reconcile.cpp).
#include <chrono>
#include <ctime>

#include "daemon/log.hpp"
#include "daemon/reconcile.hpp"
#include "daemon/service/service.hpp"

namespace coloc::daemon {

void Service::tick() {
    const auto now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    std::optional<SlurmAnswer> answer = reconciler_.poll(now_ms);
    if (!answer) return;
    if (!answer->ok) {
        if (last_reconcile_.error != answer->error) log_error("reconciliation: cannot ask Slurm: " + answer->error);
        last_reconcile_.error = answer->error;
        return;
    }
    try {
        reconcile(answer->snapshot);
    } catch (const std::exception& e) {
        last_reconcile_.error = e.what();
        log_error("reconciliation failed: " + last_reconcile_.error);
    }
}

Service::ReconcileSummary Service::reconcile(const SlurmSnapshot& slurm) {
    store_.begin_unit();  // a full backlog refuses its first write, before anything changed
    std::vector<OpenPlacement> open;
    for (const PlacementRow& p : store_.open_placements()) open.push_back({p.job_id, p.node, p.created});
    auto recorded = [this](std::int64_t job, const std::string& node) {
        for (const PlacementRow& p : store_.placements_of(job))
            if (p.node == node) return true;
        return false;
    };
    auto known_node = [this](const std::string& node) { return cfg_.topology.node_index(node) >= 0; };
    const ReconcilePlan plan = plan_reconciliation(open, slurm, recorded, known_node);

    for (const CloseAction& c : plan.close) {
        store_.record_closed_by_colocd(c.job_id, c.node, c.time, c.exit_status, c.job_done, kEndedWhileAway);
        if (int node = cfg_.topology.node_index(c.node); node >= 0) release(c.job_id, node);
        log_info("job " + std::to_string(c.job_id) + " on " + c.node + ": " + kEndedWhileAway +
                 " (closed from Slurm's records)");
    }
    for (const AdoptAction& a : plan.adopt) {
        const int node = cfg_.topology.node_index(a.where.node);
        JobRow job;
        job.job_id = a.job_id;
        job.uid = a.uid;
        job.user = user_name(a.uid);
        job.job_name = a.name;
        job.partition = a.partition;
        job.first_seen = a.since;
        job.state = "running";
        job.start = a.since;
        GpuMode mode = cfg_.default_mode;
        if (auto it = cfg_.node_modes.find(a.where.node); it != cfg_.node_modes.end())
            mode = it->second;
        else if (auto p = cfg_.partition_modes.find(a.partition); p != cfg_.partition_modes.end())
            mode = p->second;
        PlacementRow row;
        row.job_id = a.job_id;
        row.node = a.where.node;
        row.mode = to_string(mode);
        row.gpus = a.where.gpus;  // Slurm's GPUs when it names them; unknown (empty) for count-only slots
        row.source = "reconciled";
        row.created = a.since;
        store_.record_placement(job, row, {});
        store_.record_started(a.job_id, a.since);
        occupy(a.job_id, profile_for(""), node, row.gpus, /*enforce_slots=*/false, a.since);
        log_info("job " + std::to_string(a.job_id) + " on " + a.where.node + ": adopted from Slurm (GPUs " +
                 (row.gpus.empty() ? std::string("unknown") : proto::gpu_list(row.gpus)) + ")");
    }
    last_reconcile_ = {slurm.taken_at, static_cast<std::int64_t>(slurm.jobs.size()),
                       static_cast<std::int64_t>(plan.close.size()), static_cast<std::int64_t>(plan.adopt.size()), ""};
    if (!plan.close.empty() || !plan.adopt.empty())
        log_info("reconciled with Slurm: " + std::to_string(plan.close.size()) + " closed, " +
                 std::to_string(plan.adopt.size()) + " adopted");
    return last_reconcile_;
}

// Flat keys, so that `colocctl status` lists them like every other line.
void Service::reconcile_status(proto::json& status) const {
    status["reconcile_interval_s"] = cfg_.reconcile_interval_s;
    status["last_reconcile"] = last_reconcile_.time;
    status["reconcile_slurm_jobs"] = last_reconcile_.slurm_jobs;
    status["reconcile_closed"] = last_reconcile_.closed;
    status["reconcile_adopted"] = last_reconcile_.adopted;
    status["reconcile_error"] = last_reconcile_.error;
}

}  // namespace coloc::daemon
