#include "daemon/service/reconciliation.hpp"

#include "daemon/log.hpp"
#include "daemon/reconcile.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

Reconciliation::Reconciliation(State& state) : state_(state), slurm_jobs_(state.cfg.reconcile_interval_s) {}

void Reconciliation::run_due(std::int64_t now_ms) {
    std::optional<SlurmAnswer> answer = slurm_jobs_.poll(now_ms);
    if (!answer) return;
    if (!answer->ok) {
        if (last_.error != answer->error) log_error("reconciliation: cannot ask Slurm: " + answer->error);
        last_.error = answer->error;
        return;
    }
    try {
        reconcile(answer->snapshot);
    } catch (const std::exception& e) {
        last_.error = e.what();
        log_error("reconciliation failed: " + last_.error);
    }
}

Reconciliation::Summary Reconciliation::reconcile(const slurm::SlurmSnapshot& slurm) {
    Store& store = state_.store;
    const place::Topology& topo = state_.cfg.topology;
    store.begin_unit();  // a full backlog refuses its first write, before anything changed
    std::vector<OpenPlacement> open;
    for (const PlacementRow& p : store.open_placements()) open.push_back({p.job_id, p.node, p.created});
    auto recorded = [&store](std::int64_t job, const std::string& node) {
        for (const PlacementRow& p : store.placements_of(job))
            if (p.node == node) return true;
        return false;
    };
    auto known_node = [&topo](const std::string& node) { return topo.node_index(node) >= 0; };
    const ReconcilePlan plan = plan_reconciliation(open, slurm, recorded, known_node);

    for (const CloseAction& c : plan.close) {
        store.record_closed_by_colocd(c.job_id, c.node, c.time, c.exit_status, c.job_done, kEndedWhileAway);
        if (int node = topo.node_index(c.node); node >= 0) state_.release(c.job_id, node);
        log_info("job " + std::to_string(c.job_id) + " on " + c.node + ": " + kEndedWhileAway +
                 " (closed from Slurm's records)");
    }
    for (const AdoptAction& a : plan.adopt) {
        const int node = topo.node_index(a.where.node);
        const JobRow job{.job_id = a.job_id,
                         .uid = a.uid,
                         .user = user_name(a.uid),
                         .job_name = a.name,
                         .partition = a.partition,
                         .first_seen = a.since,
                         .start = a.since,
                         .state = JobState::Running};
        const Config& cfg = state_.cfg;
        proto::GpuMode mode = cfg.default_mode;
        if (auto it = cfg.node_modes.find(a.where.node); it != cfg.node_modes.end())
            mode = it->second;
        else if (auto p = cfg.partition_modes.find(a.partition); p != cfg.partition_modes.end())
            mode = p->second;
        PlacementRow row{.job_id = a.job_id,
                         .node = a.where.node,
                         .mode = to_string(mode),
                         .gpus = a.where.gpus,  // Slurm's GPUs when it names them; unknown (empty) for count-only slots
                         .source = "reconciled",
                         .created = a.since};
        store.record_placement(job, row, {});
        store.record_started(a.job_id, a.since);
        state_.occupy(a.job_id, state_.profile_for(""), node, row.gpus, /*enforce_slots=*/false, a.since);
        log_info("job " + std::to_string(a.job_id) + " on " + a.where.node + ": adopted from Slurm (GPUs " +
                 (row.gpus.empty() ? std::string("unknown") : proto::gpu_list(row.gpus)) + ")");
    }
    last_ = {slurm.taken_at, static_cast<std::int64_t>(slurm.jobs.size()), static_cast<std::int64_t>(plan.close.size()),
             static_cast<std::int64_t>(plan.adopt.size()), ""};
    if (!plan.close.empty() || !plan.adopt.empty())
        log_info("reconciled with Slurm: " + std::to_string(plan.close.size()) + " closed, " +
                 std::to_string(plan.adopt.size()) + " adopted");
    return last_;
}

void Reconciliation::status(proto::json& status) const {
    status["reconcile_interval_s"] = state_.cfg.reconcile_interval_s;
    status["last_reconcile"] = last_.time;
    status["reconcile_slurm_jobs"] = last_.slurm_jobs;
    status["reconcile_closed"] = last_.closed;
    status["reconcile_adopted"] = last_.adopted;
    status["reconcile_error"] = last_.error;
}

}  // namespace coloc::daemon
