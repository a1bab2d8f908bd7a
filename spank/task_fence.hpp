// Whether and how one task of a step is fenced to its GPUs: bind-mode steps only (in narrow mode
// Slurm names the GPUs and its own ConstrainDevices applies), with the isolate= policy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "spank/placement.hpp"
#include "spank/plugin_args.hpp"

namespace coloc::spank {

// One step's fence across its tasks (each task is fenced in turn, into the same cgroup).
struct StepFence {
    std::string dir;  // the fence cgroup, removed when the step ends
    bool failure_logged = false;
};

struct TaskFenceResult {
    bool refuse = false;  // isolate=required and the task could not be fenced: fail the launch
    std::string error;    // to log (at most once per step: see StepFence::failure_logged)
    std::string done;     // what was fenced, for the debug log
};

TaskFenceResult fence_task(const PluginConfig& config, const JobFacts& facts, std::uint32_t step,
                           const Outcome& outcome, pid_t pid, StepFence& fence);

}  // namespace coloc::spank
