#include "replay/trace_history.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "slurm/hostlist.hpp"

namespace coloc::replay {

std::vector<model::JobHistory> history_from_trace(const Trace& trace, model::Sharing same_node) {
    std::vector<model::JobHistory> jobs;
    std::map<std::string, std::vector<std::size_t>> on_node;  // node -> indices into jobs
    for (const TraceJob& t : trace.jobs) {
        if (t.recorded_start < 0) continue;  // never started: nothing ran
        model::JobHistory h;
        h.job_id = static_cast<std::int64_t>(t.id);
        h.profile = t.profile;
        h.user = t.user;
        h.job_name = t.name;
        h.state = t.state.empty() ? "COMPLETED" : t.state;
        h.start = t.recorded_start;
        h.end = t.recorded_start + t.run_time;
        h.gpus = std::max(t.gpus, 1);
        if (!t.node_list.empty()) {
            const auto nodes = slurm::expand_hostlist(t.node_list);
            if (!nodes) throw TraceError(trace.source, t.line, "NodeList '" + t.node_list + "' is not a hostlist");
            for (const std::string& n : *nodes) on_node[n].push_back(jobs.size());
        }
        jobs.push_back(std::move(h));
    }
    // One span per pair of jobs, however many nodes they both held.
    std::set<std::pair<std::size_t, std::size_t>> seen;
    for (auto& [node, ids] : on_node) {
        std::sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) { return jobs[a].start < jobs[b].start; });
        for (std::size_t i = 0; i < ids.size(); ++i)
            for (std::size_t k = i + 1; k < ids.size() && jobs[ids[k]].start < jobs[ids[i]].end; ++k) {
                const std::size_t a = std::min(ids[i], ids[k]), b = std::max(ids[i], ids[k]);
                if (!seen.insert({a, b}).second) continue;
                const double from = std::max(jobs[a].start, jobs[b].start);
                const double to = std::min(jobs[a].end, jobs[b].end);
                if (!(to > from)) continue;
                jobs[a].shared.push_back({jobs[b].job_id, same_node, from, to});
                jobs[b].shared.push_back({jobs[a].job_id, same_node, from, to});
            }
    }
    return jobs;
}

}  // namespace coloc::replay
