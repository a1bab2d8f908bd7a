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

// How long each stage of one step's placement took, in ms (-1: the stage did not run); logged
// at debug level and, with the plugstack argument timings=FILE, written there (one line a step).
struct StageTimes {
    std::string path = "none";  // none | reuse | colocd | moved (colocd's GPUs full here) | fallback | off
    double lock_ms = -1;        // reading the node-local record under its lock
    double lookup_ms = -1;      // Slurm's slot count, asked in a forked child (fallback, --coloc=off)
    double munge_ms = -1;       // the request's credential
    double call_ms = -1;        // the round trip to colocd, less the credential
    double record_ms = -1;      // recording the holding under the lock
    double place_ms = -1;       // the whole of choose_step_gpus
    double fence_ms = -1;       // the first task's device fence (bind mode, task_post_fork)
};

// What slurm_spank_task_init applies and slurm_spank_task_post_fork reports.
struct Outcome {
    bool set_devices = false;
    std::string visible_devices;  // the new CUDA_VISIBLE_DEVICES
    std::string decision_label;   // COLOC_DECISION: the decision id, or "local"; empty = unset
    std::vector<int> gpus;        // physical GPUs, for the `started` report
    std::int64_t decision = 0;
    // The `started` report is due: this step got its decision from colocd just now, or chose
    // its GPUs here (decision 0), which colocd adopts as reported.
    bool report_started = false;
    StageTimes times;
    // COLOC_PHASE_OFFSET_S / COLOC_PHASE_PERIOD_S: the job's burst slot from colocd's reply.
    std::optional<double> phase_offset_s, phase_period_s;
    bool profile_unknown = false;  // colocd does not know --coloc-profile: the job runs as the default
};

// The outside world, replaceable in tests. lookup_slots runs in a forked child, killed at its
// deadline; call runs in the plugin's process and must bound itself by options.timeout_ms.
struct Services {
    // Slurm's count of bind slots for the job on this node; -1 with `why` when unknown. Asked
    // only to choose without colocd (colocd reads the count itself).
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
inline constexpr int kReplyMarginMs = 5;  // the call gives up this long before the deadline
inline constexpr int kKillMarginMs = 10;  // the slot lookup's child is killed this long after its deadline
// When colocd used the whole deadline, the slot lookup for a local choice may take this much
// more: slurmctld answers in tens of ms, and a job with two slots must not get one GPU.
inline constexpr int kFallbackLookupMs = 60;
// How long the background report of a local choice may wait for colocd (no launch waits for it).
inline constexpr int kLocalReportMs = 2000;

// Runs in slurm_spank_init_post_opt. Never throws; logs at most one line.
Outcome choose_step_gpus(const PluginConfig& config, const UserOptions& options, const JobFacts& facts,
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
