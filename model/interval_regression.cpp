#include "model/interval_regression.hpp"

#include <algorithm>
#include <cmath>

#include "model/eigen.hpp"

namespace coloc::model {

bool usable_run(const EndedRun& run, const IntervalOptions& o, LeftOut& left_out) {
    if (run.state != "COMPLETED" && run.state != "ended") {
        ++left_out.failed;
        return false;
    }
    if (!(run.elapsed_s >= o.min_elapsed_s)) {
        ++left_out.too_short;
        return false;
    }
    if (!(run.solo_s > 0)) {
        ++left_out.no_solo;
        return false;
    }
    for (const RunInterval& k : run.intervals)
        if (k.duration_s > 0 && !k.neighbours.empty()) return true;
    ++left_out.alone;
    return false;
}

IntervalFit fit_interval_delays(const std::vector<EndedRun>& runs, const PriorDelay& prior, const IntervalOptions& o) {
    IntervalFit fit;
    std::vector<const EndedRun*> used;
    std::map<PairKey, int> index;
    std::vector<PairKey> keys;
    for (const EndedRun& r : runs) {
        if (!usable_run(r, o, fit.left_out)) continue;
        used.push_back(&r);
        for (const RunInterval& k : r.intervals)
            for (const auto& [name, where] : k.neighbours) {
                PairKey key{r.job, name, where};
                if (index.emplace(key, static_cast<int>(keys.size())).second) keys.push_back(key);
            }
    }
    fit.used = static_cast<int>(used.size());
    const auto P = static_cast<Eigen::Index>(keys.size());
    if (P == 0) return fit;
    Eigen::VectorXd d0(P), ridge(P);
    for (Eigen::Index p = 0; p < P; ++p) {
        const DelayPrior pr = prior(keys[static_cast<std::size_t>(p)]);
        d0[p] = pr.delay;
        ridge[p] = 1 / std::max(pr.sd * pr.sd, 1e-6);
    }
    Eigen::VectorXd d = d0;
    Eigen::MatrixXd A(P, P);
    Eigen::VectorXd b(P);
    // Both in inverse variances: an equation's noise is noise * E; a pair's prior has its sd.
    Eigen::VectorXd row(P);
    for (int pass = 0; pass < std::max(1, o.max_passes); ++pass) {
        A.setZero();
        b.setZero();
        for (const EndedRun* r : used) {
            row.setZero();
            for (const RunInterval& k : r->intervals) {
                if (!(k.duration_s > 0) || k.neighbours.empty()) continue;
                double D = 0;
                for (const auto& [name, where] : k.neighbours) D += d[index.at({r->job, name, where})];
                const double work = k.duration_s / (1 + std::max(D, -0.5));
                for (const auto& [name, where] : k.neighbours) row[index.at({r->job, name, where})] += work;
            }
            const double sd = o.noise * r->elapsed_s;
            const double w = 1 / (sd * sd);
            A.noalias() += w * row * row.transpose();
            b += w * (r->elapsed_s - r->solo_s) * row;
        }
        Eigen::MatrixXd M = A;
        M.diagonal() += ridge;
        Eigen::VectorXd next = M.ldlt().solve(b + ridge.cwiseProduct(d0));
        next = next.cwiseMax(1.0 / 1.5 - 1.0);  // a neighbour never makes a job more than 1.5x faster
        const double moved = (next - d).cwiseAbs().maxCoeff();
        d = next;
        if (moved < 1e-6) break;
    }
    for (Eigen::Index p = 0; p < P; ++p)
        fit.pairs[keys[static_cast<std::size_t>(p)]] = {d[p], A(p, p) / ridge[p], d0[p]};
    return fit;
}

}  // namespace coloc::model
