// Shared-link term: periodic communication bursts that share a link fairly.
//
// Each job repeats: compute, then a burst needing `burst_s` seconds of the whole link. While k
// bursts overlap each gets 1/k of the link. For two jobs, the extra time each burst takes equals
// the overlap of the two bursts as they would be unshared (A alone for d, both at half speed
// until the shorter remainder is done: both finish min(a-d, b) later). With equal periods the
// offset is then preserved every iteration (DESIGN.md, "The model"), so:
//   in step (offset 0):      extra = min(a, b)                       the synchronised worst case
//   known offset d:          extra = circular overlap of [0,a) and [d,d+b) on the period
//   interleaved (best):      extra = max(0, a + b - T)               bursts placed apart
//   drifting (periods differ): the relative phase is uniform, extra = a * b / T_b (expected
//                            overlap), i.e. a slowdown of duty_a * duty_b
// Several neighbours on one link add their extras (exact for disjoint overlaps, an
// approximation when three or more bursts meet). All of this is O(1) and allocation-free.
#pragma once

#include <optional>

namespace coloc::model {

struct Burst {
    double period_s = 0;  // iteration period (solo)
    double burst_s = 0;   // link time per period at full link speed
    double duty() const { return period_s > 0 ? burst_s / period_s : 0; }
};

enum class PhaseRegime { InStep, Offset, Interleaved, Drifting };

const char* to_string(PhaseRegime r);

// Relative period difference below which two jobs count as having the same period.
inline constexpr double kSamePeriodTolerance = 0.02;

bool same_period(const Burst& a, const Burst& b, double tolerance = kSamePeriodTolerance);

double extra_in_step(const Burst& a, const Burst& b);
double extra_offset(const Burst& a, const Burst& b, double offset_s);
double extra_interleaved(const Burst& a, const Burst& b);
double extra_drifting(const Burst& a, const Burst& b);

// What the model assumes: drifting when the periods differ; with equal periods the given
// offset, or in step when the offset is unknown (jobs launched together fall into step and stay).
PhaseRegime regime(const Burst& a, const Burst& b, std::optional<double> offset_s);

// Extra time per iteration of `a` (seconds) under the assumed regime.
double link_extra(const Burst& a, const Burst& b, std::optional<double> offset_s);

// Slowdown increment of `a` (extra time / solo period); 0 when either job does not communicate.
double link_delta(const Burst& a, const Burst& b, std::optional<double> offset_s);

}  // namespace coloc::model
