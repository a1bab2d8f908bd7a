// Cross-validation of the same-GPU term on measured pairs, shared by `colocctl fit` and
// bench/model-accuracy: (a) leave one pair out, (b) leave one job type out (only its solo
// facts known), each next to the baselines the issue asks for, computed on the same folds.
#pragma once

#include <string>
#include <vector>

#include "model/catalogue.hpp"
#include "model/eigen.hpp"
#include "model/gpu_share.hpp"

namespace coloc::model {

// Measured same-GPU speeds among the job types with a solo throughput on one GPU type.
struct GpuPairData {
    std::string gpu;
    std::vector<const JobProfile*> types;  // point into the catalogue given to gpu_pair_data
    Eigen::MatrixXd S;                     // S(i, j): speed of type i beside type j; NaN = none
    int observations() const;
};

GpuPairData gpu_pair_data(const ProfileCatalogue& catalogue, const std::string& gpu);

struct Mae {
    double sum = 0;
    int n = 0;
    void add(double pred, double truth);
    double value() const;
};

// coloc's error and the baselines': none = speed 1.0, median = constant median of the training
// folds, baseline = per-type row/column averages (a) or the nearest type of the same family by
// batch size (b).
struct CvScores {
    Mae coloc, none, median, baseline;
};

CvScores leave_one_pair_out(const GpuPairData& d, const GpuShareParams& params);
CvScores leave_one_type_out(const GpuPairData& d, const GpuShareParams& params);

}  // namespace coloc::model
