// Slurm hostlist expressions ("n[1-4,7]") through libslurm, so coloc reads node sets exactly
// as Slurm does.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coloc {

// The names in `expr`, in order; nullopt when libslurm cannot parse it.
std::optional<std::vector<std::string>> expand_hostlist(const std::string& expr);

}  // namespace coloc
