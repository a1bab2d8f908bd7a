// A job on several nodes is one placement: the first of its nodes' plugins to ask makes colocd
// place the whole job (the same number of GPUs on every node Slurm gave it, scored together, the
// link term counting its traffic on every link it crosses); the other nodes' plugins are then
// answered from that decision, so every node gets GPUs of the same, consistent choice.
// In narrow mode the asking step knows only its own node's GPUs: colocd asks slurmctld for the
// others' and places within each node's own; when slurmctld cannot tell in time, node by node.
#include <algorithm>
#include <cstdio>

#include "daemon/log.hpp"
#include "daemon/service/launch.hpp"
#include "proto/errors.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

std::optional<place::JobRequest> Launch::whole_job_request(const proto::PlaceRequest& r,
                                                           const model::JobProfile& profile) {
    if (state_.cluster.find(static_cast<place::JobId>(r.job_id)) || !state_.store.placements_of(r.job_id).empty())
        return std::nullopt;  // part of it is placed already (e.g. before a restart): node by node
    place::JobRequest request;
    request.id = static_cast<place::JobId>(r.job_id);
    request.profile = &profile;
    for (const std::string& name : r.job_nodes) {
        const int n = state_.cfg.topology.node_index(name);
        if (n < 0) return std::nullopt;  // a node colocd does not describe: each node for itself
        if (std::find(request.allowed_nodes.begin(), request.allowed_nodes.end(), n) == request.allowed_nodes.end())
            request.allowed_nodes.push_back(n);
    }
    request.nodes = static_cast<int>(request.allowed_nodes.size());
    const int asking = state_.cfg.topology.node_index(r.node);
    if (request.nodes < 2 ||
        std::find(request.allowed_nodes.begin(), request.allowed_nodes.end(), asking) == request.allowed_nodes.end())
        return std::nullopt;
    return request;
}

std::optional<proto::PlaceReply> Launch::place_whole_bind_job(const Placing& p) {
    const proto::PlaceRequest& r = p.r;
    if (p.mode != proto::GpuMode::Bind || r.slots <= 0 || r.job_nodes.size() <= 1) return std::nullopt;
    const model::JobProfile& profile = *p.profile;
    std::optional<place::JobRequest> request = whole_job_request(r, profile);
    if (!request) return std::nullopt;
    request->gpus_per_node = r.slots;
    place::Decision decision = decide(*request, 1);
    if (!decision.placed || static_cast<int>(decision.chosen.where.size()) != request->nodes)
        throw ProtoError(code::kNoCapacity, "job " + std::to_string(r.job_id) + " on " +
                                                std::to_string(request->nodes) + " nodes: " + decision.reason);
    return record_whole_job(r, profile, *request, decision.chosen, proto::GpuMode::Bind, "", p.now);
}

std::optional<proto::PlaceReply> Launch::place_whole_narrow_job(const Placing& p) {
    const proto::PlaceRequest& r = p.r;
    if (p.mode != proto::GpuMode::Narrow || r.slurm_gpus.empty() || r.job_nodes.size() <= 1) return std::nullopt;
    const model::JobProfile& profile = *p.profile;
    std::optional<place::JobRequest> request = whole_job_request(r, profile);
    if (!request) return std::nullopt;
    const std::string job = "job " + std::to_string(r.job_id);
    auto node_by_node = [&](const std::string& why) -> std::optional<proto::PlaceReply> {
        log_info(job + " (narrow, " + std::to_string(request->nodes) + " nodes) is placed node by node: " + why);
        return std::nullopt;
    };
    if (slurmctld_left_.count() <= 0)
        return node_by_node("this round of requests has already waited " + std::to_string(kSlurmctldWait.count()) +
                            " ms for slurmctld");
    const slurm::JobGpusLookup::Answer answer =
        job_gpus_.ask(r.job_id, std::chrono::duration_cast<std::chrono::milliseconds>(slurmctld_left_));
    slurmctld_left_ -= std::chrono::microseconds(static_cast<std::int64_t>(answer.seconds * 1e6));
    if (!answer.value) return node_by_node(answer.error);
    // What slurmctld tells must agree with the step that asks and with colocd.yaml before it
    // decides anything: each node's plugin applies only GPUs of its own node's allocation.
    std::vector<int> step_gpus = r.slurm_gpus;
    std::sort(step_gpus.begin(), step_gpus.end());
    std::size_t count = 0;
    for (const auto& [name, gpus] : answer.value->nodes) {
        const int n = state_.cfg.topology.node_index(name);
        if (n < 0 ||
            std::find(request->allowed_nodes.begin(), request->allowed_nodes.end(), n) == request->allowed_nodes.end())
            return node_by_node("slurmctld places it on " + name + ", which its step's node list does not name");
        const int exist = state_.cfg.topology.type_of(n).gpus;
        for (int g : gpus)
            if (g >= exist)
                return node_by_node("Slurm gave it GPU " + std::to_string(g) + " on " + name + ", which has " +
                                    std::to_string(exist) + " GPUs in " + state_.cfg.path);
        for (const auto& [seen, _] : request->allowed_gpus_per_node)
            if (seen == n) return node_by_node("slurmctld lists " + name + " twice");
        if (count > 0 && gpus.size() != count)
            return node_by_node("Slurm gave it " + std::to_string(count) + " GPUs on one node and " +
                                std::to_string(gpus.size()) + " on " + name);
        count = gpus.size();
        if (name == r.node && gpus != step_gpus)
            return node_by_node("the step on " + name + " holds GPUs " + proto::gpu_list(r.slurm_gpus) + ", the job " +
                                proto::gpu_list(gpus));
        request->allowed_gpus_per_node.emplace_back(n, gpus);
    }
    if (static_cast<int>(request->allowed_gpus_per_node.size()) != request->nodes)
        return node_by_node("slurmctld lists " + std::to_string(answer.value->nodes.size()) + " nodes, its step " +
                            std::to_string(request->nodes));
    request->gpus_per_node = narrow_gpu_count(state_.cfg, profile, static_cast<int>(count));
    place::Decision decision = decide(*request, 1);
    if (!decision.placed || static_cast<int>(decision.chosen.where.size()) != request->nodes) {
        // Slurm owns these GPUs whatever colocd counts: keep its choice on every node, scored as it is.
        std::vector<place::Placement> where;
        for (const auto& [n, gpus] : request->allowed_gpus_per_node) where.push_back({n, gpus});
        std::sort(where.begin(), where.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
        decision.chosen = place::score_candidate(state_.cluster, *state_.model, *request, std::move(where));
    }
    char waited[32];
    std::snprintf(waited, sizeof waited, "%.1f", answer.seconds * 1000);
    return record_whole_job(r, profile, *request, decision.chosen, proto::GpuMode::Narrow,
                            std::string(", Slurm's GPUs from slurmctld in ") + waited + " ms", p.now);
}

std::optional<proto::PlaceReply> Launch::record_whole_job(const proto::PlaceRequest& r,
                                                          const model::JobProfile& profile,
                                                          const place::JobRequest& request,
                                                          const place::Candidate& chosen, proto::GpuMode mode,
                                                          const std::string& note, std::int64_t now) {
    const JobRow job = placed_job_row(r, now);
    AlternativesWriter writer;
    write_candidate(writer, chosen);
    const std::string alternatives = writer.finish();
    std::optional<proto::PlaceReply> mine;
    for (const place::Placement& p : chosen.where) {
        const std::string& name = state_.cfg.topology.nodes()[static_cast<std::size_t>(p.node)].name;
        PlacementRow row{.job_id = r.job_id,
                         .node = name,
                         .mode = to_string(mode),
                         .gpus = p.gpus,
                         .predicted_slowdown = chosen.job_slowdown,
                         .created = now,
                         .alternatives = alternatives};
        state_.store.record_placement(job, row, opened_colocations(r, p, name, now));
        record_steering_advice(row.decision, r.job_id, name);
        if (name == r.node)
            mine = proto::PlaceReply{
                .decision = row.decision, .mode = mode, .gpus = row.gpus, .predicted_slowdown = row.predicted_slowdown};
        log_info("job " + std::to_string(r.job_id) + " on " + name + ": GPUs " + proto::gpu_list(p.gpus) + " (" +
                 row.mode + ", one placement over " + std::to_string(request.nodes) + " nodes" + note + ", decision " +
                 std::to_string(row.decision) + ", predicted slowdown " + std::to_string(row.predicted_slowdown) + ")");
    }
    // Narrow: Slurm bound these GPUs, so colocd's slot count must not refuse them.
    state_.add_running(
        {.id = request.id, .profile = &profile, .where = chosen.where, .since = static_cast<double>(now)},
        /*enforce_slots=*/mode == proto::GpuMode::Bind);
    ++state_.counters.placements;
    state_.metrics.predicted_slowdown.observe(chosen.job_slowdown);
    if (!mine) return std::nullopt;  // cannot happen: the asking node is one of the job's
    attach_phase_slot(*mine, r);
    return mine;
}

}  // namespace coloc::daemon
