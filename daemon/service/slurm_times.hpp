// Jobs' submit times and time limits as Slurm's queue shows them, for colocd's history: a
// replay of that history waits for running jobs' ends by their time limits, as colocd did.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "slurm/jobs.hpp"

namespace coloc::daemon {

struct SlurmJobTimes {
    std::int64_t submitted = 0;
    double time_limit_s = 0;  // 0 = none
};

using SlurmTimes = std::map<std::int64_t, SlurmJobTimes>;

// The pending and running jobs' times in one read of Slurm's queue.
SlurmTimes times_in(const slurm::SlurmSnapshot& snap);

// The running jobs of `now` that the read before it (`before`) did not show and that colocd
// launched (`launched`): Slurm started them between the two reads, so their launch found no
// times to record, and their history gets them from `now`.
std::vector<std::pair<std::int64_t, SlurmJobTimes>> launched_between_reads(
    const slurm::SlurmSnapshot& now, const SlurmTimes& before, const std::function<bool(std::int64_t)>& launched);

}  // namespace coloc::daemon
