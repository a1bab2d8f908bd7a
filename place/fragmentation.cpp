#include "place/fragmentation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "place/sharing_rule.hpp"

namespace coloc::place {

void NodeDemand::count(std::vector<double>& to, int per_node, int nodes, int sign) {
    if (per_node < 1 || nodes < 1) return;
    if (to.size() <= static_cast<std::size_t>(per_node)) to.resize(static_cast<std::size_t>(per_node) + 1, 0.0);
    to[static_cast<std::size_t>(per_node)] += sign * nodes;
}

double poisson_at_least(double mean, double n) {
    n = std::ceil(n);
    if (n <= 0) return 1;
    if (!(mean > 0)) return 0;
    // Summed from the term nearest n outward: the terms shrink away from the mean, so the sum
    // stops after a few standard deviations' worth of terms.
    constexpr int kMaxTerms = 100000;
    if (n > mean) {
        double term = std::exp(-mean + n * std::log(mean) - std::lgamma(n + 1)), sum = 0;
        for (int x = 0; x < kMaxTerms && term > 1e-17 * sum && term > 0; ++x) {
            sum += term;
            term *= mean / (n + x + 1);
        }
        return std::min(1.0, sum);
    }
    double term = std::exp(-mean + (n - 1) * std::log(mean) - std::lgamma(n)), below = 0;
    for (double x = n - 1; x >= 0 && term > 1e-17 * below && term > 0; --x) {
        below += term;
        term *= x / mean;
    }
    return std::max(0.0, 1 - below);
}

FragmentationPrice::FragmentationPrice(const ClusterState& state, const JobRequest& request)
    : own_(std::max(1, request.gpus_per_node)) {
    const SharingOutlook* o = request.outlook;
    if (!o || !o->nodes_wanted || !(o->work_s > 0)) return;
    const NodeDemand& d = *o->nodes_wanted;
    const int top = state.max_gpus_per_node();
    if (own_ >= top) return;  // it leaves no node with more idle GPUs than it takes
    value_.assign(static_cast<std::size_t>(top) + 1, 0.0);
    const auto at = [](const std::vector<double>& v, int k) {
        return static_cast<std::size_t>(k) < v.size() ? std::max(0.0, v[static_cast<std::size_t>(k)]) : 0.0;
    };
    const double seen = o->arrivals.seen_s;
    const double span = o->arrivals.counted_s > 0 ? o->arrivals.counted_s : seen;
    // Arrivals over W (as far ahead as they were seen), per one counted.
    const double ahead = seen > 0 && span > 0 ? std::min(o->work_s, seen) / span : 0.0;
    // From the largest size down: the jobs of k or more GPUs per node all want nodes with k idle.
    double queued = 0, arriving = 0;
    for (int k = top; k > own_; --k) {
        const double q = at(d.queued, k), s = at(d.submitted, k);
        queued += q;
        arriving += s * ahead;
        if (!(q > 0) && !(s > 0)) continue;  // nobody asks for exactly k per node
        const int nodes = state.nodes_with_at_least(Capacity::Idle, k);
        const double short_of_nodes = poisson_at_least(arriving, nodes - queued);
        value_[static_cast<std::size_t>(k)] = k * short_of_nodes;
        any_ = any_ || short_of_nodes > 0;
    }
    if (!any_) return;
    // The least that GPUs of its own cost it on as many nodes as it needs: the price of the
    // costliest of the cheapest nodes with idle GPUs enough (all of them when there are fewer).
    thread_local std::vector<std::pair<double, int>> offers;  // (price, how many nodes)
    offers.clear();
    if (request.allowed_nodes.empty()) {
        for (int i = own_; i <= top; ++i)
            if (const int n = state.nodes_with(Capacity::Idle, i).size(); n > 0)
                offers.push_back({raw(i, i - own_), n});
    } else {
        for (int n : request.allowed_nodes)
            if (const int i = state.idle_gpus(n); i >= own_) offers.push_back({raw(i, i - own_), 1});
    }
    std::sort(offers.begin(), offers.end());
    int counted = 0;
    for (const auto& [price, n] : offers) {
        floor_ = price;
        if ((counted += n) >= request.nodes) break;
    }
}

double FragmentationPrice::raw(int idle, int left) const {
    double price = 0;
    const int top = std::min(idle, static_cast<int>(value_.size()) - 1);
    for (int k = std::max(left, own_) + 1; k <= top; ++k) price = std::max(price, value_[static_cast<std::size_t>(k)]);
    return price;
}

double FragmentationPrice::of(int idle, int left) const { return any_ ? std::max(0.0, raw(idle, left) - floor_) : 0.0; }

}  // namespace coloc::place
