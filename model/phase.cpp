#include "model/phase.hpp"

#include <algorithm>
#include <cmath>

namespace coloc::model {

const char* to_string(PhaseRegime r) {
    switch (r) {
        case PhaseRegime::InStep:
            return "in-step";
        case PhaseRegime::Offset:
            return "offset";
        case PhaseRegime::Interleaved:
            return "interleaved";
        case PhaseRegime::Drifting:
            return "drifting";
    }
    return "in-step";
}

bool same_period(const Burst& a, const Burst& b, double tolerance) {
    const double m = std::max(a.period_s, b.period_s);
    return m > 0 && std::abs(a.period_s - b.period_s) <= tolerance * m;
}

double extra_in_step(const Burst& a, const Burst& b) { return std::min(a.burst_s, b.burst_s); }

namespace {
double overlap(double lo1, double hi1, double lo2, double hi2) {
    return std::max(0.0, std::min(hi1, hi2) - std::max(lo1, lo2));
}
}  // namespace

double extra_offset(const Burst& a, const Burst& b, double offset_s) {
    const double T = a.period_s;
    if (T <= 0) return extra_in_step(a, b);
    const double A = std::min(a.burst_s, T), B = std::min(b.burst_s, T);
    double d = std::fmod(offset_s, T);
    if (d < 0) d += T;
    // B's burst and its neighbours one period either side, against A's burst [0, A).
    return overlap(0, A, d, d + B) + overlap(0, A, d - T, d - T + B) + overlap(0, A, d + T, d + T + B);
}

double extra_interleaved(const Burst& a, const Burst& b) { return std::max(0.0, a.burst_s + b.burst_s - a.period_s); }

double extra_drifting(const Burst& a, const Burst& b) {
    return b.period_s > 0 ? a.burst_s * std::min(1.0, b.duty()) : 0.0;
}

PhaseRegime regime(const Burst& a, const Burst& b, std::optional<double> offset_s) {
    if (!same_period(a, b)) return PhaseRegime::Drifting;
    return offset_s ? PhaseRegime::Offset : PhaseRegime::InStep;
}

double link_extra(const Burst& a, const Burst& b, std::optional<double> offset_s) {
    if (a.burst_s <= 0 || b.burst_s <= 0) return 0;
    switch (regime(a, b, offset_s)) {
        case PhaseRegime::Drifting:
            return extra_drifting(a, b);
        case PhaseRegime::Offset:
            return extra_offset(a, b, *offset_s);
        case PhaseRegime::Interleaved:
            return extra_interleaved(a, b);
        case PhaseRegime::InStep:
            break;
    }
    return extra_in_step(a, b);
}

double link_delta(const Burst& a, const Burst& b, std::optional<double> offset_s) {
    return a.period_s > 0 ? link_extra(a, b, offset_s) / a.period_s : 0;
}

}  // namespace coloc::model
