// How scored placements are ranked: what a placement costs in lost throughput, and the one
// tie-break rule, shared by the engine, its explain ranking and the tests' brute-force reference.
#pragma once

#include "place/policy.hpp"

namespace coloc::place {

// Losses closer than this are the same loss: sums of predictions taken in another order differ
// in their last bits, and ties must still resolve the same way.
constexpr double kLossTie = 1e-12;

// The throughput a job on `gpus` GPUs loses when it runs `slowdown` times slower (GPU-weighted).
inline double lost_throughput(double slowdown, int gpus) { return gpus * (1.0 - 1.0 / slowdown); }

// What the new job costs a neighbour on `gpus` GPUs that it slows from e.before to e.after.
inline double harm_to(const NeighbourEffect& e, int gpus) {
    return lost_throughput(e.after, gpus) - lost_throughput(e.before, gpus);
}

// Whether a placement of loss `a` ranks before one of loss `b`: the lower loss, and between
// equal losses the one `tie_first()` puts first (callers order ties by what they know of the
// placements: node index, the room a node keeps, GPU indices).
template <class TieFirst>
bool ranks_before(double a, double b, TieFirst&& tie_first) {
    if (a < b - kLossTie) return true;
    if (b < a - kLossTie) return false;
    return tie_first();
}

}  // namespace coloc::place
