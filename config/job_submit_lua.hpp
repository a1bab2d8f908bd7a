// What coloc's job_submit.lua (etc/job_submit.lua, beside slurm.conf) is set to, for the site
// check: the bind partitions it maps and gates, and where it reads colocd's standing offers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coloc::daemon {

struct JobSubmitLua {
    std::string path;
    int partitions_line = 0;  // 0: no `local bind_partitions = { ... }` line
    std::vector<std::string> bind_partitions;
    int offers_line = 0;  // 0: no `local OFFERS_FILE = "..."` line (a script from before offers)
    std::string offers_file;
};

// The script at `path`, nullopt when it cannot be read.
std::optional<JobSubmitLua> read_job_submit_lua(const std::string& path);

}  // namespace coloc::daemon
