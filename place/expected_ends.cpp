#include "place/expected_ends.hpp"

#include <algorithm>
#include <limits>

namespace coloc::place {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1e-9;  // GPUs freed in halves and thirds add up with rounding

}  // namespace

ExpectedEnds::ExpectedEnds(const ClusterState& state)
    : state_(state),
      by_k_(static_cast<std::size_t>(std::max(0, state.max_gpus_per_node()))),
      node_times_(state.topology().nodes().size()),
      dirty_(state.topology().nodes().size(), 0) {
    // Every node starts as it is now (nodes idle now count at once).
    for (std::size_t n = 0; n < node_times_.size(); ++n) mark(static_cast<int>(n));
}

void ExpectedEnds::mark(int node) const {
    if (node < 0 || static_cast<std::size_t>(node) >= dirty_.size() || dirty_[static_cast<std::size_t>(node)]) return;
    dirty_[static_cast<std::size_t>(node)] = 1;
    dirty_nodes_.push_back(node);
}

void ExpectedEnds::set(JobId id, double end) {
    auto [it, fresh] = jobs_.try_emplace(id);
    Job& job = it->second;
    if (!fresh) {
        if (job.end == end) return;
        ends_.erase(Key{job.end, id});
    } else if (const RunningJob* running = state_.find(id)) {
        for (const Placement& p : running->where) job.nodes.push_back(p.node);
        job.freed = freed_by(*running);
    }
    job.end = end;
    ends_.insert({Key{end, id}, job.freed});
    for (int n : job.nodes) mark(n);
}

void ExpectedEnds::erase(JobId id) {
    const auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    ends_.erase(Key{it->second.end, id});
    for (int n : it->second.nodes) mark(n);
    jobs_.erase(it);
}

void ExpectedEnds::node_changed(int node) { mark(node); }

double ExpectedEnds::freed_by(const RunningJob& job) const {
    double freed = 0;
    for (const Placement& p : job.where)
        for (int g : p.gpus)
            if (const int used = state_.used_slots(p.node, g); used > 0) freed += 1.0 / used;
    return freed;
}

void ExpectedEnds::refresh_node(int node) const {
    thread_local std::vector<std::pair<Key, double>> here;  // (end, id), what it frees on this node
    here.clear();
    for (const RunningJob* job : state_.running_on_node(node)) {
        const auto it = jobs_.find(job->id);
        if (it == jobs_.end()) continue;  // no known end: its GPUs never come back
        // What it frees may have changed with its co-tenants here.
        const double freed = freed_by(*job);
        if (freed != it->second.freed) {
            Job& kept = it->second;
            ends_.erase(Key{kept.end, job->id});
            kept.freed = freed;
            ends_.insert({Key{kept.end, job->id}, freed});
        }
        double on_node = 0;
        for (const Placement& p : job->where)
            if (p.node == node)
                for (int g : p.gpus) on_node += 1.0 / std::max(1, state_.used_slots(node, g));
        here.push_back({Key{it->second.end, job->id}, on_node});
    }
    std::sort(here.begin(), here.end());
    std::vector<double>& times = node_times_[static_cast<std::size_t>(node)];
    const int gpus = state_.topology().type_of(node).gpus;
    const bool first = times.empty();
    for (int k = 1; k <= gpus; ++k) {
        double idle = state_.idle_gpus(node), when = -kInf;
        if (idle + kSlack < k) {
            when = kInf;
            for (const auto& [key, frees] : here) {
                idle += frees;
                if (idle + kSlack >= k) {
                    when = key.first;
                    break;
                }
            }
        }
        TimeTree& tree = by_k_[static_cast<std::size_t>(k - 1)];
        if (!first) {
            const double before = times[static_cast<std::size_t>(k - 1)];
            if (before == when) continue;
            if (before != kInf) tree.erase({before, node});
        }
        if (when != kInf) tree.insert({when, node});
        if (first)
            times.push_back(when);
        else
            times[static_cast<std::size_t>(k - 1)] = when;
    }
}

void ExpectedEnds::flush() const {
    for (int node : dirty_nodes_) {
        dirty_[static_cast<std::size_t>(node)] = 0;
        refresh_node(node);
    }
    dirty_nodes_.clear();
}

double ExpectedEnds::wait_for_idle_gpus(double now, int gpus) const {
    const double idle = state_.topology().total_gpus() - state_.busy_gpus();
    if (idle >= gpus) return 0;
    flush();
    // The first end by which the ends before it (and it) free `want` GPUs.
    double want = gpus - idle - kSlack, before = 0;
    auto node = ends_.node_begin();
    const auto none = ends_.node_end();
    if (node == none || node.get_metadata() < want) return kInf;
    while (true) {
        const auto l = node.get_l_child();
        const double left = l == none ? 0.0 : l.get_metadata();
        if (l != none && before + left >= want) {
            node = l;
            continue;
        }
        before += left + (*node)->second;
        if (before >= want) {
            const double end = (*node)->first.first;
            return end > now ? end - now : 0.0;
        }
        node = node.get_r_child();
        if (node == none) return kInf;  // rounding: the whole tree's sum said it was enough
    }
}

double ExpectedEnds::wait_for_idle_nodes(double now, int nodes, int per_node) const {
    if (nodes < 1 || per_node < 1) return 0;
    if (static_cast<std::size_t>(per_node) > by_k_.size()) return kInf;  // no node has that many GPUs
    flush();
    const TimeTree& tree = by_k_[static_cast<std::size_t>(per_node - 1)];
    if (static_cast<std::size_t>(nodes) > tree.size()) return kInf;
    const double when = tree.find_by_order(static_cast<std::size_t>(nodes - 1))->first;
    return when > now ? when - now : 0.0;
}

double ExpectedEnds::longest_wait(double now) const {
    if (state_.job_count() > jobs_.size()) return kInf;
    return std::max(0.0, last_end() - now);
}

double ExpectedEnds::last_end() const { return ends_.empty() ? -kInf : std::prev(ends_.end())->first.first; }

}  // namespace coloc::place
