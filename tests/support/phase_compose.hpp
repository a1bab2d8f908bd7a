// The link term for several jobs on one link at once. Pairwise extras (phase.hpp) added up are
// right for two jobs and for bursts in step, but three or more drifting jobs slow one another
// more than the sum says: a neighbour's burst that overlaps a third job's is itself stretched,
// and its period with it, so it is on the link longer than its solo burst. Here each drifting
// pair's expected overlap uses the neighbour's burst and period as stretched by everyone but the
// job itself, solved as a fixed point; with two jobs this is the pairwise form. Same-period pairs
// keep their pairwise term (in step, or at a known offset). Whatever the phases, a job is slowed at least until all the bursts fit
// into its period (the link's capacity). bench/phase measures both against emulated jobs.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "model/phase.hpp"

namespace coloc::model {

struct LinkJob {
    Burst burst;
    std::optional<double> offset_s;  // the burst's position in the period, where known
};

// Extra time per iteration of each job (seconds), jobs[i] against all the others.
std::vector<double> composed_link_extra(std::span<const LinkJob> jobs);

}  // namespace coloc::model
