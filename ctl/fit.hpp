// colocctl fit --measurements: the one fit of a measurement table, for `fit` and `probe --fit`
// (ctl/fit.cpp).
#pragma once

#include <string>

#include "ctl/options.hpp"

namespace coloc::ctl {

struct FitFiles {
    std::string measurements, out, params_out;  // params_out "" = no parameters file
    std::string gpu_type;                       // "" = the measurements'
    bool json = false;
};

// Fits, writes `out` (and `params_out`), prints the cross-validated errors; returns the exit
// status (1 with a "colocctl: error:" line on failure).
int run_fit(const CtlOptions& opts, const FitFiles& a);

}  // namespace coloc::ctl
