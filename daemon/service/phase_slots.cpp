// Phase slots: a job whose communication bursts cross a network link shared with other such jobs
// gets an iteration offset on the wall-clock grid (model/phase_offset.hpp) that interleaves its
// bursts with theirs; the plugin exports it as COLOC_PHASE_OFFSET_S and a job that opts in keeps
// to it (coloc_report_align). A slot is chosen once, at the job's first placement, against the
// slots of the jobs running on its links then; slots of jobs that ended are dropped, so later
// jobs are placed into the room they leave. Running jobs keep theirs: their phase is theirs.
#include <algorithm>

#include "daemon/service/launch.hpp"
#include "model/defaults.hpp"
#include "model/phase_offset.hpp"

namespace coloc::daemon {

void Launch::attach_phase_slot(proto::PlaceReply& reply, const proto::PlaceRequest& r) {
    std::erase_if(phase_slots_,
                  [&](const auto& entry) { return !state_.cluster.find(static_cast<place::JobId>(entry.first)); });
    auto have = phase_slots_.find(r.job_id);
    if (have == phase_slots_.end()) {
        const place::RunningJob* job = state_.cluster.find(static_cast<place::JobId>(r.job_id));
        if (!job) return;
        const model::Burst burst = model::link_burst(*job->profile);
        const bool crosses_link = job->multi_node() || job->profile->nodes > 1 || r.job_nodes.size() > 1;
        if (burst.burst_s <= 0 || burst.period_s <= 0 || !crosses_link) return;
        PhaseSlot slot;
        slot.period_s = burst.period_s;
        slot.burst_s = burst.burst_s;
        auto add_link = [&](const std::string& name) {
            const int n = state_.cfg.topology.node_index(name);
            if (n < 0) return;
            const int link = state_.cfg.topology.nodes()[static_cast<std::size_t>(n)].link;
            if (link >= 0 && std::find(slot.links.begin(), slot.links.end(), link) == slot.links.end())
                slot.links.push_back(link);
        };
        for (const auto& p : job->where) add_link(state_.cfg.topology.nodes()[static_cast<std::size_t>(p.node)].name);
        for (const auto& name : r.job_nodes) add_link(name);
        std::vector<model::PhasedBurst> neighbours;
        for (const auto& [id, other] : phase_slots_)
            if (std::any_of(other.links.begin(), other.links.end(), [&](int l) {
                    return std::find(slot.links.begin(), slot.links.end(), l) != slot.links.end();
                }))
                neighbours.push_back({{other.period_s, other.burst_s}, other.offset_s});
        slot.offset_s = model::interleave_offset(burst, neighbours);
        have = phase_slots_.emplace(r.job_id, std::move(slot)).first;
    }
    reply.phase_offset_s = have->second.offset_s;
    reply.phase_period_s = have->second.period_s;
}

}  // namespace coloc::daemon
