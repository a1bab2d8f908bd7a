#include "model/pair_effects.hpp"

#include <cmath>

namespace coloc::model {

namespace {
constexpr double kEffectSd = 0.15;     // how far a job's own effect may plausibly be from 0
constexpr double kPairNoiseSd = 0.08;  // one pair's deviation from an additive picture
}  // namespace

void PairEffects::fit(const Eigen::MatrixXd& y, const Eigen::MatrixXd& x) {
    const Eigen::Index n = y.rows();
    mean_ = slope_ = x0_ = row_rms_ = col_rms_ = 0;
    row_.assign(static_cast<std::size_t>(n), 0.0);
    col_.assign(static_cast<std::size_t>(n), 0.0);
    if (n == 0) return;
    long measured = 0;
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < n; ++j)
            if (!std::isnan(y(i, j))) {
                x0_ += x(i, j);
                ++measured;
            }
    if (measured == 0) return;
    x0_ /= static_cast<double>(measured);
    const Eigen::Index P = 2 + 2 * n;  // mean, slope, rows, columns
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(P, P);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(P);
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < n; ++j) {
            if (std::isnan(y(i, j))) continue;
            const Eigen::Index k[4] = {0, 1, 2 + i, 2 + n + j};
            const double z[4] = {1, x(i, j) - x0_, 1, 1};
            for (int u = 0; u < 4; ++u) {
                b[k[u]] += z[u] * y(i, j);
                for (int v = 0; v < 4; ++v) A(k[u], k[v]) += z[u] * z[v];
            }
        }
    const double ridge = (kPairNoiseSd * kPairNoiseSd) / (kEffectSd * kEffectSd);
    A.diagonal().array() += ridge;
    A(0, 0) -= 0.9 * ridge;
    A(1, 1) -= 0.9 * ridge;
    const Eigen::VectorXd theta = A.ldlt().solve(b);
    mean_ = theta[0];
    slope_ = theta[1];
    std::vector<bool> in_row(static_cast<std::size_t>(n)), in_col(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < n; ++j)
            if (!std::isnan(y(i, j))) in_row[static_cast<std::size_t>(i)] = in_col[static_cast<std::size_t>(j)] = true;
    double rows = 0, cols = 0, row_sq = 0, col_sq = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        row_[k] = theta[2 + i];
        col_[k] = theta[2 + n + i];
        if (in_row[k]) rows += 1, row_sq += row_[k] * row_[k];
        if (in_col[k]) cols += 1, col_sq += col_[k] * col_[k];
    }
    row_rms_ = rows > 0 ? std::sqrt(row_sq / rows) : 0;
    col_rms_ = cols > 0 ? std::sqrt(col_sq / cols) : 0;
}

double PairEffects::value(int i, int j, double x) const {
    double v = mean_ + slope_ * (x - x0_);
    if (i >= 0 && static_cast<std::size_t>(i) < row_.size()) v += row_[static_cast<std::size_t>(i)];
    if (j >= 0 && static_cast<std::size_t>(j) < col_.size()) v += col_[static_cast<std::size_t>(j)];
    return v;
}

}  // namespace coloc::model
