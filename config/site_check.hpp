// `colocd --check` and `colocctl check`: every copy of what the cluster is made of (slurm.conf,
// gres.conf, colocd.yaml, the plugin's plugstack.conf arguments `gpus=` and `slots_per_gpu=`)
// compared, each disagreement named with the file and line of both sides.
#pragma once

#include <string>
#include <vector>

namespace coloc::daemon {

struct CheckReport {
    std::vector<std::string> disagreements;  // "FILE:LINE: what disagrees with what (FILE:LINE)"
    std::vector<std::string> notes;          // what was compared, what could not be
    bool ok() const { return disagreements.empty(); }
};

// Reads colocd.yaml at `colocd_yaml` and Slurm's files from `slurm_conf` (gres.conf,
// topology.conf beside it; plugstack.conf as PlugStackConfig= names it). A file that cannot be
// read or parsed is a disagreement too.
CheckReport check_site(const std::string& colocd_yaml, const std::string& slurm_conf);

// Prints the report (disagreements to `err`) and returns the exit status: 0 when every copy
// agrees, 1 otherwise.
int print_check_report(const CheckReport& report, const std::string& program);

}  // namespace coloc::daemon
