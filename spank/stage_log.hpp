// One line of stage timings per step (StageTimes and the `started` report), and one for applying
// the outcome in the step's first task, for slurmd's log at debug level and for the timings=
// file that bench/launch-overhead reads:
//   job=12 step=batch node=n1 path=colocd lock=0.08 lookup=- munge=0.61 call=2.10 record=0.09
//   place=3.02 report=0.35
//   job=12 step=batch node=n1 apply=0.01
#pragma once

#include <cstdint>
#include <string>

#include "spank/placement.hpp"

namespace coloc::spank {

// `report_ms` < 0: not run (written "-", as every stage that did not run).
std::string stage_line(std::int64_t job_id, std::uint32_t step, const std::string& node, const StageTimes& times,
                       double report_ms);
std::string apply_line(std::int64_t job_id, std::uint32_t step, const std::string& node, double apply_ms);

// Appends `line` and a newline in one write (O_APPEND: lines of concurrent steps do not mix).
// Never throws; a file that cannot be written is passed over (timings are for people).
void append_stage_line(const std::string& path, const std::string& line);

}  // namespace coloc::spank
