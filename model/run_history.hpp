// From what colocd records about ended jobs to the runs the interval regression learns from
// (interval_regression.hpp): a job's co-location records become intervals with the neighbours
// it had in each, and its solo work comes from runs of the same profile (or, for jobs without
// one, the same user and job name) that never shared anything.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/interval_regression.hpp"

namespace coloc::model {

struct SharedSpan {
    std::int64_t other = 0;  // the neighbour's job id
    Sharing where = Sharing::Gpu;
    double start = 0, end = 0;  // seconds
};

struct JobHistory {
    std::int64_t job_id = 0;
    std::string profile;  // "" = none
    std::string user, job_name;
    std::string state;  // as recorded: "ended" / Slurm's COMPLETED are usable
    double start = 0, end = 0;
    int gpus = 1;  // all nodes together
    std::optional<int> exit_status;
    std::vector<SharedSpan> shared;
};

// The GPUs a job held, all nodes together: each node's latest placement (a job may have
// moved), at least 1. `Placement` has `node` and `gpus` (colocd's rows, colocctl's records).
template <class Placement>
int gpus_held(const std::vector<Placement>& placements) {
    std::map<std::string, int> on_node;
    for (const Placement& p : placements) on_node[p.node] = static_cast<int>(p.gpus.size());
    int gpus = 0;
    for (const auto& [node, n] : on_node) gpus += n;
    return std::max(gpus, 1);
}

// The key a job's solo work is kept under: its profile, else its user and job name.
std::string solo_key(const JobHistory& job);

// Ended well: state ended/COMPLETED, exit status 0 (or unknown), a positive span.
bool completed(const JobHistory& job);

// The job's span cut at every start and end of a shared span inside it; each interval lists the
// neighbours that shared over all of it, named by `name_of(job id)`.
std::vector<RunInterval> intervals_of(const JobHistory& job, const std::function<std::string(std::int64_t)>& name_of);

// Every job as a run: its solo work is the median elapsed time of the completed runs under
// the same key that never shared (0 = unknown: the regression leaves it out and counts it).
// A job's state other than ended/COMPLETED, or a non-zero exit status, marks it failed.
std::vector<EndedRun> runs_from_history(const std::vector<JobHistory>& jobs);

}  // namespace coloc::model
