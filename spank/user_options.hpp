// What the user said with --coloc-profile=NAME and --coloc=on|off. Slurm forwards SPANK options
// to the remote context (and to srun steps inside a batch script), so slurmstepd sees them too.
#pragma once

#include <string>

namespace coloc::spank {

struct UserOptions {
    std::string profile;  // empty = none given
    bool off = false;     // --coloc=off: no request, nothing changed, nothing recorded
};

// Each returns an empty string when `value` is accepted (and stores it), else why not.
std::string set_profile(UserOptions& options, const char* value);
std::string set_switch(UserOptions& options, const char* value);

}  // namespace coloc::spank
