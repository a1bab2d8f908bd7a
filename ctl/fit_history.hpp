// colocctl fit --history: pair delays from ended jobs' elapsed times (ctl/fit_history.cpp).
#pragma once

#include <string>

#include "ctl/options.hpp"

namespace coloc::ctl {

struct FitHistoryArgs {
    std::string history, profiles, params, params_out, gpu_type;
    bool json = false;
    std::string node_sharing = "node";  // sacct: what jobs overlapping on a node share
    double min_elapsed_s = 300;         // shorter runs are left out
    bool skip_bad = false;              // sacct: skip and count malformed lines
};

int run_fit_history(const CtlOptions& opts, const FitHistoryArgs& a);

}  // namespace coloc::ctl
