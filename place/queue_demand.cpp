#include "place/queue_demand.hpp"

#include <algorithm>

namespace coloc::place {

namespace {
double gpu_s(int per_node, int nodes, double limit_s) {
    return limit_s > 0 ? static_cast<double>(per_node) * nodes * limit_s : 0.0;
}
}  // namespace

void QueueDemand::add(Epoch& e, int per_node, int nodes, double asked) {
    ++e.jobs;
    e.asked_gpu_s += asked;
    NodeDemand::count(e.nodes, per_node, nodes, +1);
    NodeDemand::count(nodes_.submitted, per_node, nodes, +1);
}

void QueueDemand::submitted(double submit_s, int per_node, int nodes, double limit_s) {
    const double asked = gpu_s(per_node, nodes, limit_s);
    first_submit_ = arrived_ == 0 ? submit_s : std::min(first_submit_, submit_s);
    if (arrived_++ == 0) span_start_ = epoch_start_ = latest_ = submit_s;
    advance(submit_s);  // nothing when it is older than the latest time seen
    if (submit_s >= epoch_start_) return add(current_, per_node, nodes, asked);
    if (span_start_ < epoch_start_) {  // an epoch before the current one is counted
        if (submit_s >= span_start_) add(previous_, per_node, nodes, asked);
        return;  // else older than the window
    }
    // Older than every submission so far, in the first epoch: the epoch starts earlier, as far
    // back as a window before the latest time seen (it must still hold that time).
    if (window_s_ > 0 && submit_s < latest_ - window_s_) return;
    span_start_ = epoch_start_ = submit_s;
    add(current_, per_node, nodes, asked);
}

void QueueDemand::advance(double now) {
    if (!(window_s_ > 0) || arrived_ == 0) return;
    latest_ = std::max(latest_, now);
    while (now >= epoch_start_ + window_s_) {
        if (now >= epoch_start_ + 2 * window_s_) {  // both epochs are past: a window seen empty
            previous_ = {};
            current_ = {};
            nodes_.submitted.assign(nodes_.submitted.size(), 0.0);
            epoch_start_ = now;
            span_start_ = now - window_s_;
            return;
        }
        for (std::size_t k = 0; k < previous_.nodes.size(); ++k) nodes_.submitted[k] -= previous_.nodes[k];
        previous_ = std::move(current_);
        current_ = {};
        span_start_ = epoch_start_;
        epoch_start_ += window_s_;
    }
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
    a.counted_s = arrived_ ? now - span_start_ : 0;
    if (a.counted_s > 0) {
        a.jobs_per_s = static_cast<double>(previous_.jobs + current_.jobs) / a.counted_s;
        a.offered_gpus = (previous_.asked_gpu_s + current_.asked_gpu_s) / a.counted_s;
    }
    a.queued_gpu_s = queued_gpu_s_;
    return a;
}

}  // namespace coloc::place
