// The bind slots (a count-only GRES such as gpuslot) a job holds on each node, as slurmctld
// details them. colocd asks once per job, bounded (slurm/bounded_lookup.hpp), so that the plugin
// makes no slurmctld call on the launch path; the plugin asks itself only when colocd could not
// answer and it must choose GPUs alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slurm/bounded_lookup.hpp"

namespace coloc::slurm {

// What slurmctld says of a job's GRES: its node list and one detail per node (in that order),
// and what it asked for per node (tres_per_node), for a job without details.
struct JobGres {
    std::int64_t job_id = 0;
    std::string nodes;                 // "n[1-2]"
    std::vector<std::string> details;  // "gpuslot(CNT:2)" per node
    std::string tres_per_node;         // "gres:gpuslot:2"
};

// slurm_load_job with details. No deadline of its own (Slurm's MessageTimeout): run it bounded.
// Does not read slurm.conf first (colocd calls init_libslurm; slurmstepd has read it). Throws
// std::runtime_error naming the job and the reason.
JobGres load_job_gres(std::int64_t job_id);

// The units of GRES `gres` the job holds on `node`: from the node's detail, else from
// tres_per_node, else 0 (the job asked for no GRES). Throws std::runtime_error naming the job
// and the reason when neither is readable.
int gres_count_on(const JobGres& job, const std::string& node, const std::string& gres);

// load_job_gres + gres_count_on; -1 with `why` when slurmctld cannot tell. For the plugin.
int job_gres_count(std::uint32_t job_id, const std::string& node, const std::string& gres, std::string& why);

using JobGresLookup = BoundedLookup<JobGres>;

}  // namespace coloc::slurm
