// What a replay writes: the description of the run (what was read, how jobs got their profiles,
// the cluster, the models), the per-job CSV and the JSON summary. Plots: replay/plots.hpp.
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "replay/replay.hpp"
#include "replay/trace.hpp"
#include "replay/workload.hpp"

namespace coloc::replay {

struct ReplayContext {
    std::string trace_source;
    std::string trace_format;
    std::size_t records = 0, bad = 0;
    std::vector<BadLine> bad_lines;
    std::map<std::string, std::size_t> skipped, notes;
    WorkloadReport workload;
    std::vector<std::string> rule_names;  // per rule, for the profile counts ("rule 2 (line 7)")
    std::string cluster;                  // "16 nodes x 4 GPUs, 2 slots per GPU"
    int total_gpus = 0;
    int total_slots = 0;   // job slots of all GPUs (for the plots)
    std::string model;     // what coloc places by
    std::string truth;     // what decides how fast jobs run
    std::string learning;  // whether and how coloc's model learns in the replay ("" = not said)
    double load = 1;
    std::uint64_t seed = 1;
};

// The lines printed above the table.
std::string describe(const ReplayContext& context);

// One row per policy and job: policy,job_id,profile,gpus,nodes,submit_s,start_s,end_s,wait_s,
// jct_s,solo_s,slowdown (times in seconds from the first submission).
void write_jobs_csv(std::ostream& out, const Workload& workload, const ReplayResult& result);

// {"context":{...},"policies":[{summary}...]}
nlohmann::json summary_json(const ReplayContext& context, const ReplayResult& result);

}  // namespace coloc::replay
