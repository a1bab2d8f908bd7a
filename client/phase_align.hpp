// Phase alignment for a job that opts in (COLOC_PHASE_ALIGN=1): its iterations start on a grid of
// the wall clock, the slots offset_s + k * grid period (seconds since the epoch), so that jobs
// whose communication bursts share a link stay interleaved as colocd placed them. colocd gives
// each job sharing a link with same-period neighbours an offset (COLOC_PHASE_OFFSET_S) on the
// same grid; the wall clock is common to all nodes, so launch delays do not matter.
//
// The first iteration waits for its first slot (at most a period). Later a job only ever waits,
// never hurries: a little early for its slot, it sleeps until the slot, at most `max_share` of a
// period per iteration; late, it goes on and catches up over the next iterations. The grid period
// is the job's period stretched by `slack`, so that a job running at its period is slightly early
// and the grid, not noise, holds its phase.
#pragma once

#include <optional>
#include <string>

namespace coloc::client {

struct PhaseSettings {
    double offset_s = 0;     // the job's slot within the period (COLOC_PHASE_OFFSET_S)
    double period_s = 0;     // the job's iteration period alone (COLOC_PHASE_PERIOD_S)
    double max_share = 0.1;  // longest sleep at one boundary after the first, share of a period
    double slack = 0.02;     // grid period = period_s * (1 + slack)
};

// The settings from the environment, or nullopt when the job did not opt in; `why` says what was
// wrong with a setting (empty when the job simply did not opt in).
std::optional<PhaseSettings> phase_settings_from_env(std::string& why);

class PhaseAligner {
public:
    explicit PhaseAligner(PhaseSettings s) : s_(s) {}

    // Seconds to sleep before the iteration that would start at `now_s` (seconds since the epoch).
    double wait_before_iteration(double now_s);

    double grid_period() const { return s_.period_s * (1 + s_.slack); }

private:
    PhaseSettings s_;
    bool started_ = false;
};

}  // namespace coloc::client
