#include "model/phase_offset.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace coloc::model {

namespace {

double wrap(double x, double T) {
    double r = std::fmod(x, T);
    return r < 0 ? r + T : r;
}

// Where the burst of a job with iteration offset `o` starts within the period.
double burst_start(const Burst& b, double o, double T) { return wrap(o + T - std::min(b.burst_s, T), T); }

}  // namespace

double phased_extra(const Burst& job, double offset_s, std::span<const PhasedBurst> neighbours) {
    const double T = job.period_s;
    if (T <= 0 || job.burst_s <= 0) return 0;
    const double mine = burst_start(job, offset_s, T);
    double extra = 0;
    for (const auto& n : neighbours) {
        if (!same_period(job, n.burst) || n.burst.burst_s <= 0) continue;
        extra += extra_offset(job, n.burst, burst_start(n.burst, n.offset_s, T) - mine);
    }
    return extra;
}

double interleave_offset(const Burst& job, std::span<const PhasedBurst> neighbours) {
    const double T = job.period_s;
    const double b = std::min(job.burst_s, T);
    if (T <= 0 || b <= 0) return 0;
    // The busy intervals [start, end) of same-period neighbours, unrolled from the first start.
    std::vector<std::pair<double, double>> busy;
    for (const auto& n : neighbours) {
        if (!same_period(job, n.burst) || n.burst.burst_s <= 0) continue;
        const double s = burst_start(n.burst, n.offset_s, T);
        busy.emplace_back(s, s + std::min(n.burst.burst_s, T));
    }
    if (busy.empty()) return 0;
    std::sort(busy.begin(), busy.end());
    // Free gaps on the circle: from the furthest end so far to the next start.
    std::vector<std::pair<double, double>> gaps;  // (start, length)
    const double origin = busy.front().first;
    double reach = busy.front().second;
    for (std::size_t i = 1; i < busy.size(); ++i) {
        if (busy[i].first > reach) gaps.emplace_back(reach, busy[i].first - reach);
        reach = std::max(reach, busy[i].second);
    }
    if (origin + T > reach) gaps.emplace_back(reach, origin + T - reach);

    const double guard = kPhaseGuardShare * T;
    auto tightest = [&](double need) -> const std::pair<double, double>* {
        const std::pair<double, double>* best = nullptr;
        for (const auto& g : gaps)
            if (g.second >= need && (!best || g.second < best->second)) best = &g;
        return best;
    };
    std::optional<double> start;
    if (const auto* g = tightest(b + 2 * guard))
        start = g->first + guard;
    else if (const auto* g2 = tightest(b))
        start = g2->first + (g2->second - b) / 2;
    auto to_offset = [&](double s) { return wrap(s - (T - b), T); };
    if (start) return to_offset(*start);

    // No room: the start, among neighbours' ends and an even sweep, with the least overlap.
    std::vector<double> candidates;
    for (const auto& [s, e] : busy) candidates.push_back(e);
    constexpr int kSweep = 64;
    for (int i = 0; i < kSweep; ++i) candidates.push_back(origin + T * i / kSweep);
    double best_offset = 0, best_extra = std::numeric_limits<double>::infinity();
    for (double s : candidates) {
        const double o = to_offset(s);
        const double e = phased_extra(job, o, neighbours);
        if (e < best_extra - 1e-12) {
            best_extra = e;
            best_offset = o;
        }
    }
    return best_offset;
}

}  // namespace coloc::model
