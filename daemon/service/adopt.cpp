// What the plugin placed on its own (colocd away, or colocd's GPUs full in the node's record),
// recorded as it is; and, at start, the jobs the store holds open.
#include <algorithm>

#include "daemon/log.hpp"
#include "daemon/service/launch.hpp"

namespace coloc::daemon {

namespace {

bool same_gpus(std::vector<int> a, std::vector<int> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

}  // namespace

void Launch::recover_running_jobs() {
    for (const PlacementRow& p : state_.store.open_placements()) {
        int node = state_.cfg.topology.node_index(p.node);
        if (node < 0) continue;  // the node left colocd.yaml; its history stays in the store
        auto job = state_.store.job(p.job_id);
        state_.occupy(p.job_id,
                      job ? state_.profile_for(job->profile, job->user, job->job_name) : state_.profile_for(""), node,
                      p.gpus, /*enforce_slots=*/false, p.created);
    }
}

void Launch::adopt(const std::string& node_name, const proto::LocalPlacement& local, std::int64_t now,
                   std::int64_t uid) {
    int node = state_.cfg.topology.node_index(node_name);
    if (node < 0) return;
    Store& store = state_.store;
    for (const PlacementRow& p : store.placements_of(local.job_id))
        if (p.node == node_name) {  // already known; its end, or where it really runs, may be news
            if (local.ended > 0 && !p.ended) {
                store.record_ended(local.job_id, node_name, local.ended, local.exit_status, local.elapsed_s, true);
                state_.release(local.job_id, node);
            } else if (local.ended == 0 && !p.ended && !local.gpus.empty() && !same_gpus(p.gpus, local.gpus)) {
                move_to(local.job_id, node_name, node, local.gpus);
            }
            return;
        }
    const JobRow job{
        .job_id = local.job_id, .uid = uid, .first_seen = local.since ? local.since : now, .state = JobState::Running};
    PlacementRow row{.job_id = local.job_id,
                     .node = node_name,
                     .mode = "bind",
                     .gpus = local.gpus,
                     .source = "fallback",
                     .created = job.first_seen};
    store.record_placement(job, row, {});
    ++state_.counters.adopted;
    if (local.ended > 0) {  // it came and went while colocd was away
        store.record_ended(local.job_id, node_name, local.ended, local.exit_status, local.elapsed_s, true);
        return;
    }
    state_.occupy(local.job_id, state_.profile_for(""), node, local.gpus, /*enforce_slots=*/false, job.first_seen);
}

// The plugin found colocd's GPUs for the job full in its node-local record (a local choice
// colocd had not heard of yet) and chose others: colocd's view follows the node's.
void Launch::move_to(std::int64_t job_id, const std::string& node_name, int node, const std::vector<int>& gpus) {
    const auto id = static_cast<place::JobId>(job_id);
    const place::RunningJob* running = state_.cluster.find(id);
    const model::JobProfile* profile = running ? running->profile : state_.profile_for("");
    const std::int64_t since = running ? static_cast<std::int64_t>(running->since) : State::now_s();
    state_.store.record_moved(job_id, node_name, gpus);
    state_.release(job_id, node);
    state_.occupy(job_id, profile, node, gpus, /*enforce_slots=*/false, since);
    ++state_.counters.moved;
    log_info("job " + std::to_string(job_id) + " on " + node_name + ": runs on GPUs " + proto::gpu_list(gpus) +
             ", chosen by the plugin (colocd's choice was full on the node)");
}

}  // namespace coloc::daemon
