// The device fence of a bind-mode step: its tasks are moved into a cgroup of their own, below
// the one Slurm put them in, that refuses the node's GPUs coloc did not give the step. cgroup v1:
// the devices controller's devices.deny; cgroup v2: a device program (spank/cgroup_v2_bpf.hpp).
// Made in slurm_spank_task_post_fork (slurmstepd, as root): after Slurm's own cgroup moves of
// the task and before the task may exec.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "spank/device_rules.hpp"

namespace coloc::spank {

enum class DeviceCgroup { Auto, V1, V2 };  // auto: the v1 devices controller if mounted, else cgroup2

struct FenceTarget {
    pid_t pid = 0;
    std::string node;  // several slurmds may share a host (and so a cgroup tree)
    pid_t stepd = 0;   // the step's slurmstepd: no two live steps on a host share it
    std::int64_t job_id = 0;
    std::uint32_t step = 0;
    std::vector<DeviceNumber> denied;
};

// "coloc_n1_42_0_1234": the fence cgroup's directory name, one per step and node; the
// slurmstepd's pid keeps apart steps of clusters that share a host and their job ids.
std::string fence_name(const std::string& node, std::int64_t job_id, std::uint32_t step, pid_t stepd);

struct FenceResult {
    std::string dir;    // the fence cgroup, for remove_fence; empty when none was made
    std::string error;  // why the process is not fenced; empty on success
};

// Moves target.pid into its step's fence cgroup, made (or found, for a later task) below the
// process's current cgroup in the chosen hierarchy.
FenceResult fence_process(DeviceCgroup which, const FenceTarget& target);

// Removes a fence cgroup once the step's processes have left it; a busy or missing one is left.
void remove_fence(const std::string& dir);

// Removes the fences in `parent` whose slurmstepd is gone (a step's last process may leave its
// fence only after slurmstepd's last try, or slurmstepd may die): rmdir takes only empty ones,
// and a live slurmstepd's fence, made but not yet entered, is left. Returns how many went.
int sweep_stale_fences(const std::string& parent);

}  // namespace coloc::spank
