// colocctl fit --history: pair delays from ended jobs' elapsed times (ctl/fit_history.cpp).
#pragma once

#include <string>

#include "ctl/commands.hpp"

namespace coloc::ctl {

struct FitHistoryArgs {
    std::string history, profiles, params, params_out, gpu_type;
    bool json = false;
};

int run_fit_history(const CtlOptions& opts, const FitHistoryArgs& a);

}  // namespace coloc::ctl
