#include "model/run_history.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace coloc::model {

namespace {
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}
}  // namespace

std::string solo_key(const JobHistory& job) {
    return job.profile.empty() ? "user:" + job.user + "/" + job.job_name : job.profile;
}

bool completed(const JobHistory& j) {
    const bool state_ok = j.state == "ended" || j.state == "COMPLETED";
    return state_ok && (!j.exit_status || *j.exit_status == 0) && j.end > j.start;
}

std::vector<RunInterval> intervals_of(const JobHistory& j, const std::function<std::string(std::int64_t)>& name_of) {
    std::set<double> cuts = {j.start, j.end};
    for (const SharedSpan& s : j.shared) {
        if (s.start > j.start && s.start < j.end) cuts.insert(s.start);
        if (s.end > j.start && s.end < j.end) cuts.insert(s.end);
    }
    std::vector<RunInterval> out;
    for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) {
        const double from = *it, to = *std::next(it);
        RunInterval k{to - from, {}};
        for (const SharedSpan& s : j.shared)
            if (s.start <= from && s.end >= to) k.neighbours.push_back({name_of(s.other), s.where});
        out.push_back(std::move(k));
    }
    return out;
}

std::vector<EndedRun> runs_from_history(const std::vector<JobHistory>& jobs) {
    std::map<std::int64_t, const JobHistory*> by_id;
    for (const JobHistory& j : jobs) by_id[j.job_id] = &j;
    std::map<std::string, std::vector<double>> alone;
    for (const JobHistory& j : jobs)
        if (completed(j) && j.shared.empty()) alone[solo_key(j)].push_back(j.end - j.start);

    std::vector<EndedRun> runs;
    for (const JobHistory& j : jobs) {
        EndedRun r;
        r.job = solo_key(j);
        r.state = completed(j) ? "COMPLETED" : (j.state.empty() ? "unknown" : j.state);
        r.elapsed_s = j.end - j.start;
        r.gpus = j.gpus;
        if (auto it = alone.find(r.job); it != alone.end()) r.solo_s = median(it->second);
        r.intervals = intervals_of(j, [&](std::int64_t id) {
            auto other = by_id.find(id);
            return other == by_id.end() ? std::string() : solo_key(*other->second);
        });
        runs.push_back(std::move(r));
    }
    return runs;
}

}  // namespace coloc::model
