// Slurm hostlist expressions ("n[1-4,7]") through libslurm, so coloc reads node sets exactly
// as Slurm does.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coloc::slurm {

// The names in `expr`, in order; nullopt when it is malformed (libslurm cannot parse it, or it
// names more than 65,536 hosts).
std::optional<std::vector<std::string>> expand_hostlist(const std::string& expr);

}  // namespace coloc::slurm
