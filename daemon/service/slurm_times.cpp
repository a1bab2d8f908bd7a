#include "daemon/service/slurm_times.hpp"

namespace coloc::daemon {

namespace {

bool timed(const slurm::SlurmJob& j) { return (j.pending || j.running) && j.submit_time > 0; }

SlurmJobTimes times_of(const slurm::SlurmJob& j) { return {j.submit_time, static_cast<double>(j.time_limit_s)}; }

}  // namespace

SlurmTimes times_in(const slurm::SlurmSnapshot& snap) {
    SlurmTimes times;
    for (const slurm::SlurmJob& j : snap.jobs)
        if (timed(j)) times[j.job_id] = times_of(j);
    return times;
}

std::vector<std::pair<std::int64_t, SlurmJobTimes>> launched_between_reads(
    const slurm::SlurmSnapshot& now, const SlurmTimes& before, const std::function<bool(std::int64_t)>& launched) {
    std::vector<std::pair<std::int64_t, SlurmJobTimes>> late;
    for (const slurm::SlurmJob& j : now.jobs)
        if (timed(j) && j.running && !before.count(j.job_id) && launched(j.job_id))
            late.emplace_back(j.job_id, times_of(j));
    return late;
}

}  // namespace coloc::daemon
