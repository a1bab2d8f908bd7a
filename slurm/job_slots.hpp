// The bind slots a job holds on a node, asked of slurmctld. slurm_load_job() has no deadline of
// its own: the plugin calls it inside run_in_child().
#pragma once

#include <cstdint>
#include <string>

namespace coloc::slurm {

// Slurm's count of GRES `gres` (e.g. gpuslot) allocated to `job_id` on `node`; -1 with `why`
// set when slurmctld cannot tell.
int job_gres_count(std::uint32_t job_id, const std::string& node, const std::string& gres, std::string& why);

}  // namespace coloc::slurm
