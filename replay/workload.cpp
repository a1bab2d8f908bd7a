#include "replay/workload.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace coloc::replay {

const model::JobProfile* Workload::sized(const model::JobProfile* base, int gpus_per_node, int nodes) {
    if (base->gpus == gpus_per_node && base->nodes == nodes) return base;
    auto key = std::make_tuple(base, gpus_per_node, nodes);
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    model::JobProfile p = *base;
    p.gpus = gpus_per_node;
    p.nodes = nodes;
    variants_.push_back(std::move(p));
    index_.emplace(key, &variants_.back());
    return &variants_.back();
}

Workload build_workload(const Trace& trace, const std::vector<const model::JobProfile*>& profiles,
                        const ProfileCounts& counts, const place::Topology& topology, const WorkloadOptions& options) {
    if (!(options.load > 0)) throw std::invalid_argument("the load must be > 0");
    if (profiles.size() != trace.jobs.size()) throw std::invalid_argument("one profile per trace job is needed");
    Workload w;
    w.report.profiles = counts;
    int per_node = 0;
    for (const auto& t : topology.types()) per_node = std::max(per_node, t.gpus);
    const int cluster_nodes = static_cast<int>(topology.nodes().size());

    std::vector<std::size_t> order(trace.jobs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
    double first = order.empty() ? 0 : trace.jobs[order.front()].submit;
    w.jobs.reserve(order.size());
    for (std::size_t i : order) {
        const TraceJob& t = trace.jobs[i];
        if (t.gpus <= 0) {
            ++w.report.cpu_only;
            continue;
        }
        ReplayJob j;
        j.trace_id = t.id;
        j.trace_index = i;
        j.submit = (t.submit - first) / options.load;
        j.work = t.run_time;
        int nodes = t.nodes;
        if (nodes > 0 && t.gpus % nodes == 0 && t.gpus / nodes <= per_node) {
            j.nodes = nodes;
            j.gpus_per_node = t.gpus / nodes;
        } else {
            j.nodes = per_node > 0 ? (t.gpus + per_node - 1) / per_node : 1;
            j.gpus_per_node = (t.gpus + j.nodes - 1) / j.nodes;
            if (j.gpus_per_node * j.nodes != t.gpus) ++w.report.rounded_up;
        }
        if (j.nodes > cluster_nodes || j.gpus_per_node > per_node) {
            ++w.report.too_large;
            continue;
        }
        if (t.time_limit <= 0) {
            j.limit = t.run_time;
            ++w.report.limit_from_run_time;
        } else if (t.time_limit < t.run_time) {
            j.limit = t.run_time;
            ++w.report.limit_raised;
        } else {
            j.limit = t.time_limit;
        }
        j.profile = w.sized(profiles[i], j.gpus_per_node, j.nodes);
        w.jobs.push_back(j);
    }
    w.report.jobs = w.jobs.size();
    return w;
}

}  // namespace coloc::replay
