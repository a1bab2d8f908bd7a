// What one job step does on its node: reuse the job's decision, or ask colocd once within the
// deadline, or fall back (Slurm's GPUs in narrow mode, a node-local choice in bind mode); and
// the `started` and `ended` reports. Free of SPANK calls so that unit tests can drive it.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "proto/client.hpp"
#include "spank/plugin_args.hpp"
#include "spank/user_options.hpp"

namespace coloc::spank {

struct JobFacts {
    std::int64_t job_id = 0;
    std::int64_t uid = -1;
    std::string node;  // SLURMD_NODENAME: names the node-local state file
    std::string partition;
    std::string job_name;
    std::vector<std::string> job_nodes;  // SLURM_JOB_NODELIST, expanded
    std::vector<int> slurm_gpus;         // physical GPUs Slurm gave the step; empty in bind mode
    std::vector<int> cuda_visible;       // CUDA_VISIBLE_DEVICES as Slurm set it
};

// What slurm_spank_task_init applies and slurm_spank_task_post_fork reports.
struct Outcome {
    bool set_devices = false;
    std::string visible_devices;  // the new CUDA_VISIBLE_DEVICES
    std::string decision_label;   // COLOC_DECISION: the decision id, or "local"; empty = unset
    std::vector<int> gpus;        // physical GPUs, for the `started` report
    std::int64_t decision = 0;
    bool report_started = false;   // this step got its decision from colocd just now
    bool profile_unknown = false;  // colocd does not know --coloc-profile: the job runs as the default
};

// The outside world, replaceable in tests. lookup_slots and call run in a forked child.
struct Services {
    // Slurm's count of bind slots for the job on this node; -1 with `why` when unknown.
    std::function<int(const JobFacts&, const std::string& gres, std::string& why)> lookup_slots;
    std::function<nlohmann::json(const std::string& endpoint, const nlohmann::json& body,
                                 const proto::CallOptions& options)>
        call;
    std::function<std::int64_t()> now;            // epoch seconds
    std::function<void(const std::string&)> log;  // one line; the sink adds "coloc: "
};

inline constexpr int kLockWaitMs = 100;  // peers hold the node lock for well under 1 ms,
                                         // but a loaded node may not run them for a while
// The job epilog delays no launch: it waits longer rather than leave a job's slots taken.
inline constexpr int kEpilogLockWaitMs = 2000;
inline constexpr int kReplyMarginMs = 5;  // the child gives up this long before the deadline
inline constexpr int kKillMarginMs = 10;  // the parent kills the child this long after it

// Runs in slurm_spank_init_post_opt. Never throws; logs at most one line.
Outcome place_step(const PluginConfig& config, const UserOptions& options, const JobFacts& facts,
                   const Services& services);

// Runs once the step's first task is forked; sends the report from a detached child and
// returns at once. Never throws; logs at most one line.
void report_started(const PluginConfig& config, const JobFacts& facts, const Outcome& outcome,
                    const Services& services);

// Runs in the job epilog on each node of the job: ends the job's holding here (freeing its
// slots) and tells colocd, along with ends earlier epilogs could not deliver; what colocd does
// not take stays in the state for the next place request or epilog. Never throws; at most one line.
void report_ended(const PluginConfig& config, std::int64_t job_id, const std::string& node,
                  std::optional<int> exit_code, const Services& services);

}  // namespace coloc::spank
