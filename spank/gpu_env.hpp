// GPU lists as Slurm writes them into a step's environment, and the value coloc writes back
// into CUDA_VISIBLE_DEVICES.
#pragma once

#include <string>
#include <vector>

namespace coloc::spank {

// "0,2-3" -> {0,2,3}. Tolerant: garbage (or an index above 1023) gives an empty list.
std::vector<int> parse_index_list(const std::string& text);

// The GPUs Slurm gave this step, as physical indices: SLURM_STEP_GPUS, else SLURM_JOB_GPUS,
// else CUDA_VISIBLE_DEVICES (shards, MPS). Empty when Slurm named no GPU (count-only GRES: bind
// mode). `coloc_decision` is the step's COLOC_DECISION: when set, CUDA_VISIBLE_DEVICES came with
// it from an earlier step of the job (srun forwards the batch script's environment), so it is
// coloc's own choice and not Slurm's.
std::vector<int> slurm_gpus_from(const std::string& step_gpus, const std::string& job_gpus,
                                 const std::string& cuda_visible, const std::string& coloc_decision);

// The CUDA_VISIBLE_DEVICES value for the physical GPUs `chosen`. When Slurm constrains devices,
// CUDA_VISIBLE_DEVICES is renumbered (0..n-1) while SLURM_*_GPUS keep physical indices; the
// chosen GPUs are then mapped by position. Otherwise the indices are written as they are.
std::string visible_devices_for(const std::vector<int>& chosen, const std::vector<int>& slurm_gpus,
                                const std::vector<int>& cuda_visible);

// The GPUs of `chosen` that are also in `allowed`, in the order of `chosen`.
std::vector<int> intersect(const std::vector<int>& chosen, const std::vector<int>& allowed);

// A wait status as Slurm reports it (SLURM_JOB_EXIT_CODE, S_TASK_EXIT_STATUS) -> the exit code
// a shell would show: the code for a normal exit, 128 + signal for a killed job.
int exit_code_from_wait_status(int status);

}  // namespace coloc::spank
