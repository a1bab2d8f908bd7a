// The jobs of a trace, made ready to replay on a given cluster: GPUs split into GPUs per node ×
// nodes, arrival times scaled by the load, a time limit for backfill planning, and a profile
// per job that knows the job's size (the model's communication terms depend on it).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "model/profile.hpp"
#include "place/topology.hpp"
#include "replay/profile_rules.hpp"
#include "replay/trace.hpp"

namespace coloc::replay {

struct ReplayJob {
    std::uint64_t trace_id = 0;
    std::size_t trace_index = 0;
    double submit = 0;  // seconds since the first submission, divided by the load
    double work = 0;    // solo run time (s): what the job must get done
    double limit = 0;   // time limit backfill plans with (s), >= work
    int gpus_per_node = 1;
    int nodes = 1;
    const model::JobProfile* profile = nullptr;  // never null
    int gpus() const { return gpus_per_node * nodes; }
};

struct WorkloadOptions {
    double load = 1.0;  // > 1 = the same jobs arrive faster
};

struct WorkloadReport {
    std::size_t jobs = 0;                 // replayed
    std::size_t cpu_only = 0;             // asked for no GPU: not replayed (GPU placement only)
    std::size_t too_large = 0;            // more GPUs per node or nodes than the cluster has
    std::size_t rounded_up = 0;           // GPUs not divisible over the nodes: rounded up per node
    std::size_t limit_from_run_time = 0;  // no time limit in the log: the run time is used
    std::size_t limit_raised = 0;         // ran longer than its limit: the run time is used
    ProfileCounts profiles;
};

class Workload {
public:
    Workload() = default;
    Workload(Workload&&) = default;  // the profiles stay where they are: jobs keep pointing at them
    Workload& operator=(Workload&&) = default;
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    std::vector<ReplayJob> jobs;  // in submission order
    WorkloadReport report;

    // `base` sized for gpus_per_node × nodes (same name and id, so model caches still apply).
    const model::JobProfile* sized(const model::JobProfile* base, int gpus_per_node, int nodes);

private:
    std::deque<model::JobProfile> variants_;
    std::map<std::tuple<const model::JobProfile*, int, int>, const model::JobProfile*> index_;
};

// `profiles[i]` is trace.jobs[i]'s profile (assign_profiles).
Workload build_workload(const Trace& trace, const std::vector<const model::JobProfile*>& profiles,
                        const ProfileCounts& counts, const place::Topology& topology, const WorkloadOptions& options);

}  // namespace coloc::replay
