#include "place/queue_demand.hpp"

#include <algorithm>

namespace coloc::place {

namespace {
double gpu_s(int per_node, int nodes, double limit_s) {
    return limit_s > 0 ? static_cast<double>(per_node) * nodes * limit_s : 0.0;
}
}  // namespace

void QueueDemand::submitted(double submit_s, int per_node, int nodes, double limit_s) {
    first_submit_ = arrived_++ == 0 ? submit_s : std::min(first_submit_, submit_s);
    asked_gpu_s_ += gpu_s(per_node, nodes, limit_s);
    NodeDemand::count(nodes_.submitted, per_node, nodes, +1);
}

void QueueDemand::queued(int per_node, int nodes, double limit_s, int sign) {
    queued_jobs_ += sign;
    // Back to exactly 0 when the queue empties: sums and differences of doubles drift.
    queued_gpu_s_ = queued_jobs_ > 0 ? queued_gpu_s_ + sign * gpu_s(per_node, nodes, limit_s) : 0.0;
    NodeDemand::count(nodes_.queued, per_node, nodes, sign);
}

ArrivalRates QueueDemand::rates(double now) const {
    ArrivalRates a;
    a.seen_s = arrived_ ? now - first_submit_ : 0;
    if (a.seen_s > 0) {
        a.jobs_per_s = static_cast<double>(arrived_) / a.seen_s;
        a.offered_gpus = asked_gpu_s_ / a.seen_s;
    }
    a.queued_gpu_s = queued_gpu_s_;
    return a;
}

}  // namespace coloc::place
