#include "tests/support/phase_compose.hpp"

#include <algorithm>
#include <cmath>

namespace coloc::model {

std::vector<double> composed_link_extra(std::span<const LinkJob> jobs) {
    const std::size_t n = jobs.size();
    // e[i][j]: job i's extra from job j; fixed point from the pairwise terms.
    std::vector<std::vector<double>> e(n, std::vector<double>(n, 0.0));
    std::vector<double> extra(n, 0.0);
    constexpr int kRounds = 50;
    for (int round = 0; round < kRounds; ++round) {
        double change = 0;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const Burst& a = jobs[i].burst;
                const Burst& b = jobs[j].burst;
                double v = 0;
                if (a.burst_s <= 0 || b.burst_s <= 0) {
                    v = 0;
                } else if (same_period(a, b)) {
                    std::optional<double> offset;
                    if (jobs[i].offset_s && jobs[j].offset_s) offset = *jobs[j].offset_s - *jobs[i].offset_s;
                    v = link_extra(a, b, offset);
                } else {
                    // The pairwise form with j's burst and period as the others but i stretch them
                    // (the pairwise form already holds what i and j do to each other).
                    const double burst_j = b.burst_s + extra[j] - e[j][i];
                    const double period_j = b.period_s + extra[j] - e[j][i];
                    v = a.burst_s * std::min(1.0, burst_j / period_j);
                }
                change = std::max(change, std::abs(v - e[i][j]));
                e[i][j] = v;
            }
        for (std::size_t i = 0; i < n; ++i) {
            extra[i] = 0;
            for (std::size_t j = 0; j < n; ++j) extra[i] += e[i][j];
        }
        if (change < 1e-9) break;
    }
    // The link carries at most its rate: with more burst time per period than a period holds,
    // every job slows at least until its neighbours' bursts and its own fit into its period.
    double duty = 0;
    for (const auto& j : jobs) duty += j.burst.duty();
    for (std::size_t i = 0; i < n; ++i)
        if (jobs[i].burst.burst_s > 0) extra[i] = std::max(extra[i], (duty - 1) * jobs[i].burst.period_s);
    return extra;
}

}  // namespace coloc::model
