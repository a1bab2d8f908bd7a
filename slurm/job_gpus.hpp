// The GPUs Slurm gave one job on each of its nodes, asked of slurmctld while the job's first
// place request waits: what lets colocd place a narrow job on several nodes as one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slurm/bounded_lookup.hpp"

namespace coloc::slurm {

struct JobGpus {
    std::int64_t job_id = 0;
    std::vector<std::pair<std::string, std::vector<int>>> nodes;  // node, its GPUs; node-list order
};

// From the job's node list ("n[1-2]") and its gres detail per node, in the same order. Throws
// std::runtime_error naming the job and the reason: a node list that does not expand, a detail
// per node missing, a detail that does not parse (slurm/gres_detail.hpp), a node without GPUs.
JobGpus job_gpus_from(std::int64_t job_id, const std::string& nodelist, const std::vector<std::string>& details);

// Asks slurmctld (slurm_load_job with details). Can take Slurm's MessageTimeout when slurmctld
// is slow or gone; throws std::runtime_error naming the reason.
JobGpus load_job_gpus(std::int64_t job_id);

// Bounded as every slurmctld question of colocd's serving thread is (slurm/bounded_lookup.hpp).
using JobGpusLookup = BoundedLookup<JobGpus>;

}  // namespace coloc::slurm
