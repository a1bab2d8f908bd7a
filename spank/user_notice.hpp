// What the plugin tells the user of a job, in the job's own stderr: task_init runs in the task
// after Slurm has pointed its stdio at the step's output, so a write to fd 2 lands where the
// user reads (the batch script's stderr file, srun's terminal); slurm_error would reach only
// the node's log.
#pragma once

#include <string>

namespace coloc::spank {

// The one line for a --coloc-profile colocd does not know (no newline).
std::string unknown_profile_line(const std::string& name);

// Writes `line` and a newline to fd 2, whole or not at all; never blocks the task for long.
void tell_user(const std::string& line);

}  // namespace coloc::spank
