// Changing a pending job through libslurm (slurm_update_job), for admission
// (daemon/steering/admission.hpp): its BeginTime, which keeps it pending until then, and its
// node list, which names the node it starts on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace coloc::slurm {

// Sets job `job_id`'s BeginTime to `begin` (epoch seconds) and, when `nodes` is given, its node
// list (--nodelist; "" clears it). One RPC; false with `why` set when Slurm refuses or cannot
// be reached (a job that started or ended meanwhile is refused).
bool update_pending_job(std::int64_t job_id, std::int64_t begin, const std::optional<std::string>& nodes,
                        std::string& why);

}  // namespace coloc::slurm
