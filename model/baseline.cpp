#include "model/baseline.hpp"

namespace coloc::model {

namespace {
// Extra time per neighbour by what it shares: a shared GPU roughly halves each job's speed;
// a shared switch or node costs a few per cent; a shared link costs little on average.
constexpr double kCost[] = {0.9, 0.08, 0.05, 0.03, 0.02};
}  // namespace

double BaselineModel::slowdown(const JobProfile&, std::span<const Neighbour> neighbours) const {
    double s = 1.0;
    for (const Neighbour& n : neighbours) s += kCost[static_cast<int>(n.where)];
    return s;
}

}  // namespace coloc::model
