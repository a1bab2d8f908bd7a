// Zero-shot cross-validation of the same-GPU term: what the model predicts for pairs it has
// never seen any of, next to the simple rules measured on the same pairs. Two ways of holding
// data out, as a new site meets it: (a) a whole GPU type (its pairs gone; its jobs' solo facts
// kept), (b) a whole job family (every pair with one of its jobs gone, on every GPU type).
// Shared by bench/model-accuracy and the model's own choice of how far transfer is trusted.
#pragma once

#include <string>
#include <vector>

#include "model/coloc_model.hpp"
#include "model/measurements.hpp"
#include "model/validation.hpp"

namespace coloc::model {

// One held-out group (a GPU type or a family) and the errors on its pairs.
struct ZeroShotScores {
    std::string held_out;
    Mae model, none, median, util;  // util: min(1, 1 / (sm_util + sm_util)), defaults where unknown
    double uncertainty = 0;         // mean uncertainty the model gave those predictions
    int pairs() const { return model.n; }
};

// (a) Each GPU type with same-GPU pairs in turn: predicted from the other types' pairs.
std::vector<ZeroShotScores> leave_one_gpu_type_out(const Measurements& m, const ColocParams& params = {});
// (b) Each family in turn: its pairs on every GPU type, predicted from the other families' pairs.
std::vector<ZeroShotScores> leave_one_family_out(const Measurements& m, const ColocParams& params = {});

// The simple rule from SM utilisations: two jobs that fill more than the GPU share it.
double utilisation_rule(const JobProfile& a, const JobProfile& b);

}  // namespace coloc::model
