#include "place/queue_demand.hpp"

#include <algorithm>

namespace coloc::place {

namespace {
double gpu_s(int per_node, int nodes, double limit_s) {
    return limit_s > 0 ? static_cast<double>(per_node) * nodes * limit_s : 0.0;
}
}  // namespace

void QueueDemand::add(Epoch& e, int per_node, int nodes, double asked, const model::JobProfile* profile) {
    ++e.jobs;
    e.asked_gpu_s += asked;
    const double gpus = static_cast<double>(std::max(0, per_node) * std::max(0, nodes));
    e.gpus += gpus;
    if (asked > 0) e.limited_gpus += gpus;
    if (profile) {
        e.classes[profile] += gpus;
        classes_changed_ = true;
    }
    NodeDemand::count(e.nodes, per_node, nodes, +1);
    NodeDemand::count(nodes_.submitted, per_node, nodes, +1);
}

void QueueDemand::submitted(double submit_s, int per_node, int nodes, double limit_s,
                            const model::JobProfile* profile) {
    const double asked = gpu_s(per_node, nodes, limit_s);
    first_submit_ = arrived_ == 0 ? submit_s : std::min(first_submit_, submit_s);
    if (arrived_++ == 0) span_start_ = epoch_start_ = latest_ = submit_s;
    advance(submit_s);  // nothing when it is older than the latest time seen
    if (submit_s >= epoch_start_) return add(current_, per_node, nodes, asked, profile);
    if (span_start_ < epoch_start_) {  // an epoch before the current one is counted
        if (submit_s >= span_start_) add(previous_, per_node, nodes, asked, profile);
        return;  // else older than the window
    }
    // Older than every submission so far, in the first epoch: the epoch starts earlier, as far
    // back as a window before the latest time seen (it must still hold that time).
    if (window_s_ > 0 && submit_s < latest_ - window_s_) return;
    span_start_ = epoch_start_ = submit_s;
    add(current_, per_node, nodes, asked, profile);
}

void QueueDemand::advance(double now) {
    if (!(window_s_ > 0) || arrived_ == 0) return;
    latest_ = std::max(latest_, now);
    while (now >= epoch_start_ + window_s_) {
        if (now >= epoch_start_ + 2 * window_s_) {  // both epochs are past: a window seen empty
            previous_ = {};
            current_ = {};
            classes_changed_ = true;
            nodes_.submitted.assign(nodes_.submitted.size(), 0.0);
            epoch_start_ = now;
            span_start_ = now - window_s_;
            return;
        }
        for (std::size_t k = 0; k < previous_.nodes.size(); ++k) nodes_.submitted[k] -= previous_.nodes[k];
        previous_ = std::move(current_);
        current_ = {};
        classes_changed_ = true;
        span_start_ = epoch_start_;
        epoch_start_ += window_s_;
    }
}

void QueueDemand::queued(int per_node, int nodes, double limit_s, int sign, const model::JobProfile* profile) {
    queued_jobs_ += sign;
    // Back to exactly 0 when the queue empties: sums and differences of doubles drift.
    queued_gpu_s_ = queued_jobs_ > 0 ? queued_gpu_s_ + sign * gpu_s(per_node, nodes, limit_s) : 0.0;
    const double gpus = static_cast<double>(std::max(0, per_node) * std::max(0, nodes));
    queued_gpus_ = queued_jobs_ > 0 ? queued_gpus_ + sign * gpus : 0.0;
    if (profile) {
        double& n = queued_classes_[profile];
        n += sign * gpus;
        if (!(n > 0.5)) queued_classes_.erase(profile);  // counts are whole GPUs
        classes_changed_ = true;
    }
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

const PartnerDemand& QueueDemand::partners(double now) const {
    const ArrivalRates a = rates(now);
    PartnerDemand& d = partners_;
    d.queued_gpus = queued_gpus_;
    d.seen_s = a.seen_s;
    const double gpus = previous_.gpus + current_.gpus, limited = previous_.limited_gpus + current_.limited_gpus;
    d.gpus_per_s = a.counted_s > 0 ? gpus / a.counted_s : 0.0;
    d.typical_run_s = limited > 0 ? (previous_.asked_gpu_s + current_.asked_gpu_s) / limited : 0.0;
    if (!classes_changed_) return d;
    classes_changed_ = false;
    Classes all = queued_classes_;
    for (const Epoch* e : {&previous_, &current_})
        for (const auto& [c, n] : e->classes) all[c] += n;
    d.mix.assign(all.begin(), all.end());
    // The classes that ask for the most GPUs (ties: by name, so that the mix does not depend on
    // where the classes lie in memory).
    const auto heavier = [](const auto& a, const auto& b) {
        if (a.second != b.second) return a.second > b.second;
        return a.first->name < b.first->name;
    };
    if (d.mix.size() > kMixClasses) {
        std::partial_sort(d.mix.begin(), d.mix.begin() + kMixClasses, d.mix.end(), heavier);
        d.mix.resize(kMixClasses);
    } else {
        std::sort(d.mix.begin(), d.mix.end(), heavier);
    }
    double total = 0;
    for (const auto& [c, n] : d.mix) total += n;
    if (!(total > 0)) d.mix.clear();
    for (auto& [c, n] : d.mix) n /= total;
    return d;
}

}  // namespace coloc::place
