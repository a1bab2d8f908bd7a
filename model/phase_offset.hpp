// Phase offsets: where in the period a job's iterations should start so that its communication
// bursts interleave with those of the neighbours it shares a link with, instead of meeting them in
// step (the synchronised worst case of phase.hpp).
//
// Offsets are slots on a common grid of the wall clock: a job with offset o and period T starts
// iterations at o + k T (seconds since the epoch; the reporting client keeps it there,
// client/phase_align.hpp) and, computing first and communicating last, bursts over
// [o + T - b, o + T) modulo T. Only neighbours of the same period (phase.hpp's same_period) have a
// fixed relative phase; others drift and are left out.
#pragma once

#include <optional>
#include <span>

#include "model/phase.hpp"

namespace coloc::model {

struct PhasedBurst {
    Burst burst;
    double offset_s = 0;  // the neighbour's iteration slot on the grid
};

// Share of the period kept clear on each side of a new burst where the gap allows: how far from
// its slot the client lets a job start before it steps in (it waits at most a tenth of a period
// per iteration, client/phase_align.hpp).
inline constexpr double kPhaseGuardShare = 0.1;

// The iteration offset in [0, T) for `job` among `neighbours` on one link. With room, its burst
// goes into the tightest free gap that holds it with a guard on each side (keeping wider gaps for
// later jobs), else centred in the tightest gap that holds it at all; with no room, where it
// overlaps the others least. 0 when no neighbour has the same period.
double interleave_offset(const Burst& job, std::span<const PhasedBurst> neighbours);

// Extra time per iteration of `job` (seconds) from same-period neighbours at their offsets when
// the job sits at `offset_s`: phase.hpp's circular overlap, summed over the neighbours.
double phased_extra(const Burst& job, double offset_s, std::span<const PhasedBurst> neighbours);

}  // namespace coloc::model
