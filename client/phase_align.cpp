#include "client/phase_align.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace coloc::client {

namespace {

// A finite number in [lo, hi] from the environment; nullopt (with `why`) when set but not one.
std::optional<double> env_number(const char* name, double fallback, double lo, double hi, std::string& why) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (*end || !std::isfinite(x) || x < lo || x > hi) {
        why =
            std::string(name) + "=" + v + ": not a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        return std::nullopt;
    }
    return x;
}

}  // namespace

std::optional<PhaseSettings> phase_settings_from_env(std::string& why) {
    why.clear();
    const char* on = std::getenv("COLOC_PHASE_ALIGN");
    if (!on || std::string(on) != "1") return std::nullopt;
    PhaseSettings s;
    auto offset = env_number("COLOC_PHASE_OFFSET_S", 0, 0, 3600, why);
    auto period = env_number("COLOC_PHASE_PERIOD_S", 0, 0, 3600, why);
    auto share = env_number("COLOC_PHASE_MAX_SLEEP", s.max_share, 0, 1, why);
    if (!offset || !period || !share) return std::nullopt;
    s.offset_s = *offset;
    s.period_s = *period;
    s.max_share = *share;
    return s;
}

double PhaseAligner::wait_before_iteration(double now_s) {
    const double T = grid_period();
    if (T <= 0) return 0;
    double late = std::fmod(now_s - s_.offset_s, T);  // past the last slot
    if (late < 0) late += T;
    const double early = T - late;  // before the next one
    if (!started_) {
        started_ = true;
        return late == 0 ? 0 : early;
    }
    if (late < early) return 0;  // late: catch up by running
    return std::min(early, s_.max_share * T);
}

}  // namespace coloc::client
