// The bind slots a job holds on a node, asked of slurmctld. Meant to run inside run_in_child():
// slurm_load_job() has no deadline of its own.
#pragma once

#include <cstdint>
#include <string>

namespace coloc::spank {

// Slurm's count of GRES `gres` (e.g. gpuslot) allocated to `job_id` on `node`; -1 with `why`
// set when slurmctld cannot tell.
int slurm_job_gres_count(std::uint32_t job_id, const std::string& node, const std::string& gres, std::string& why);

}  // namespace coloc::spank
