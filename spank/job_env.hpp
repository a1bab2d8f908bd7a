// Reading the job's facts from SPANK and writing the outcome into a task's environment.
#pragma once

#include <optional>
#include <string>

#include "spank/placement.hpp"
#include "spank/spank_api.hpp"

namespace coloc::spank {

// The step's job id, or 0. `step_id` gets the step id (SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT, ...).
JobFacts read_job_facts(spank_t sp, std::uint32_t& step_id);

// Sets CUDA_VISIBLE_DEVICES, COLOC_DECISION and (with the decision) COLOC_ENDPOINT, colocd's
// endpoint, in the task's environment; returns an error text when Slurm refused.
std::string apply_outcome(spank_t sp, const Outcome& outcome, const std::string& endpoint);

// The job epilog's environment (job script context: plain getenv, spank_getenv does not work).
std::string epilog_env(const char* name);
std::optional<int> epilog_exit_code();

}  // namespace coloc::spank
