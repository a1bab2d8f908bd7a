#include "proto/jobs.hpp"

namespace coloc::proto {

namespace {

template <typename T>
json opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

template <typename T>
void read(const json& j, const char* key, T& out) {
    if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

template <typename T>
void read(const json& j, const char* key, std::optional<T>& out) {
    if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

}  // namespace

json PlacementRecord::to_json() const {
    return {{"decision", decision},
            {"node", node},
            {"mode", mode},
            {"gpus", gpus},
            {"predicted_slowdown", predicted_slowdown},
            {"source", source},
            {"created", created},
            {"ended", opt(ended)}};
}

PlacementRecord PlacementRecord::from_json(const json& j) {
    PlacementRecord p;
    read(j, "decision", p.decision);
    read(j, "node", p.node);
    read(j, "mode", p.mode);
    read(j, "gpus", p.gpus);
    read(j, "predicted_slowdown", p.predicted_slowdown);
    read(j, "source", p.source);
    read(j, "created", p.created);
    read(j, "ended", p.ended);
    return p;
}

json ColocationRecord::to_json() const {
    return {{"job_id", job_id},   {"other", other}, {"node", node},
            {"sharing", sharing}, {"start", start}, {"end", opt(end)}};
}

ColocationRecord ColocationRecord::from_json(const json& j) {
    ColocationRecord c;
    read(j, "job_id", c.job_id);
    read(j, "other", c.other);
    read(j, "node", c.node);
    read(j, "sharing", c.sharing);
    read(j, "start", c.start);
    read(j, "end", c.end);
    return c;
}

json JobRecord::to_json() const {
    json ps = json::array();
    for (const PlacementRecord& p : placements) ps.push_back(p.to_json());
    json j = {{"job_id", job_id},
              {"uid", uid},
              {"user", user},
              {"job_name", job_name},
              {"partition", partition},
              {"profile", profile},
              {"profile_unknown", profile_unknown},
              {"measured_slowdown", opt(measured_slowdown)},
              {"state", state},
              {"submit", submit},
              {"start", opt(start)},
              {"end", opt(end)},
              {"exit_status", opt(exit_status)},
              {"elapsed_s", opt(elapsed_s)},
              {"time_limit_s", opt(time_limit_s)},
              {"work_s", opt(work_s)},
              {"end_reason", opt(end_reason)},
              {"placements", ps}};
    if (colocations) {
        json cs = json::array();
        for (const ColocationRecord& c : *colocations) cs.push_back(c.to_json());
        j["colocations"] = cs;
    }
    return j;
}

std::string JobRecord::profile_shown() const {
    if (profile.empty()) return "default";
    return profile_unknown ? "default (unknown: " + profile + ")" : profile;
}

JobRecord JobRecord::from_json(const json& j) {
    JobRecord r;
    read(j, "job_id", r.job_id);
    read(j, "uid", r.uid);
    read(j, "user", r.user);
    read(j, "job_name", r.job_name);
    read(j, "partition", r.partition);
    read(j, "profile", r.profile);
    read(j, "profile_unknown", r.profile_unknown);
    read(j, "measured_slowdown", r.measured_slowdown);
    read(j, "state", r.state);
    read(j, "submit", r.submit);
    read(j, "start", r.start);
    read(j, "end", r.end);
    read(j, "exit_status", r.exit_status);
    read(j, "elapsed_s", r.elapsed_s);
    read(j, "time_limit_s", r.time_limit_s);
    read(j, "work_s", r.work_s);
    read(j, "end_reason", r.end_reason);
    if (auto it = j.find("placements"); it != j.end() && it->is_array())
        for (const json& p : *it) r.placements.push_back(PlacementRecord::from_json(p));
    if (auto it = j.find("colocations"); it != j.end() && it->is_array()) {
        r.colocations.emplace();
        for (const json& c : *it) r.colocations->push_back(ColocationRecord::from_json(c));
    }
    return r;
}

}  // namespace coloc::proto
