// What a GPU type's measured pairs say about each job, beyond a prediction made elsewhere:
//   y(i, j) ~ mean + slope * (x(i, j) - x0) + row(i) + col(j)
// with y the measured speed less the prediction x made elsewhere: slope says how much of that
// prediction carries over to this type (-1: none, 0: all of it); row(i): how much more job i suffers on this type than predicted, beside anyone; col(j): how
// much more job j hurts its neighbours. A ridge regression over the pairs measured so far,
// each effect drawn toward 0 with prior standard deviation kEffectSd against the noise of one
// pair (kPairNoiseSd): a job seen in one pair moves a little, one seen in ten moves most of the
// way; mean and slope, shared by all pairs, are drawn toward 0 ten times more weakly. Exact
// least squares each time it is fitted, so the same pairs give the same effects in
// whatever order they came.
#pragma once

#include <vector>

#include "model/eigen.hpp"

namespace coloc::model {

class PairEffects {
public:
    // y(i, j) and x(i, j) for jobs 0..n-1; y NaN = not measured.
    void fit(const Eigen::MatrixXd& y, const Eigen::MatrixXd& x);
    // The effect for job i beside job j, predicted x elsewhere (-1: a job with no measured pair:
    // no effect of its own).
    double value(int i, int j, double x) const;
    double mean() const { return mean_; }
    // How far the jobs measured differ from one another (root mean square of their effects): what
    // a job with no measured pair may differ by, as sufferer (row) and as neighbour (col).
    double row_spread() const { return row_rms_; }
    double col_spread() const { return col_rms_; }

private:
    double mean_ = 0, slope_ = 0, x0_ = 0, row_rms_ = 0, col_rms_ = 0;
    std::vector<double> row_, col_;
};

}  // namespace coloc::model
