// A bind job's slots when the plugin leaves them to colocd: the plugin makes no slurmctld call
// on the launch path, and colocd has libslurm initialised already, so one bounded lookup here
// costs a few milliseconds, once per job (its other nodes find the answer kept).
#include "daemon/log.hpp"
#include "daemon/service/launch.hpp"
#include "proto/errors.hpp"
#include "slurm/session.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

namespace {
// A few running jobs' worth is all a later node of the same job needs; drop the lot beyond this.
constexpr std::size_t kKeptJobs = 4096;
}  // namespace

slurm::JobGres load_job_gres_for_colocd(std::int64_t job_id) {
    slurm::init_libslurm();
    return slurm::load_job_gres(job_id);
}

std::optional<proto::PlaceReply> Launch::resolve_slots(Placing& p) {
    proto::PlaceRequest& r = p.r;
    if (p.mode != proto::GpuMode::Bind || r.slots > 0 || r.slots_gres.empty()) return std::nullopt;
    auto seen = job_gres_seen_.find(r.job_id);
    if (seen == job_gres_seen_.end()) {
        if (slurmctld_left_.count() <= 0)
            throw ProtoError(code::kUnavailable, "this round of requests has already waited " +
                                                     std::to_string(kSlurmctldWait.count()) + " ms for slurmctld");
        const slurm::JobGresLookup::Answer answer =
            job_gres_.ask(r.job_id, std::chrono::duration_cast<std::chrono::milliseconds>(slurmctld_left_));
        slurmctld_left_ -= std::chrono::microseconds(static_cast<std::int64_t>(answer.seconds * 1e6));
        if (!answer.value)
            throw ProtoError(code::kUnavailable, "bind slots of job " + std::to_string(r.job_id) + ": " + answer.error);
        log_debug("job " + std::to_string(r.job_id) + ": slurmctld told its GRES in " +
                  std::to_string(static_cast<int>(answer.seconds * 1000)) + " ms");
        if (job_gres_seen_.size() >= kKeptJobs) job_gres_seen_.clear();
        seen = job_gres_seen_.emplace(r.job_id, *answer.value).first;
    }
    try {
        r.slots = slurm::gres_count_on(seen->second, r.node, r.slots_gres);
    } catch (const std::exception& e) {
        throw ProtoError(code::kUnavailable, e.what());
    }
    if (r.slots > 0) return std::nullopt;
    // No slots here (a CPU-only job): nothing to place, nothing to record; the plugin remembers it.
    proto::PlaceReply none{.mode = proto::GpuMode::Bind};
    none.slots = 0;
    return none;
}

}  // namespace coloc::daemon
