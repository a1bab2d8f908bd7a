// What colocctl reads: status, nodes, jobs, history, explain and metrics. Every authenticated
// user may ask; jobs, history and explain show a plain user only their own jobs (visible_to).
#include <algorithm>
#include <ctime>
#include <tuple>

#include "daemon/service/alternatives.hpp"
#include "daemon/service/service.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"
#include "proto/jobs.hpp"
#include "slurm/release.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

json Service::on_status(const proto::Request&, const proto::Identity&) {
    const auto& topo = cfg_.topology;
    const auto [slots, used] = slot_totals();
    json status = {
        {"version", "coloc 0.1"},
        {"protocol", std::to_string(proto::kOldestVersion) + "-" + std::to_string(proto::kVersion)},
        {"cluster", cfg_.cluster},
        {"slurm_built_for", slurm::to_string(slurm::built_for())},
        {"libslurm", slurm::to_string(slurm::running())},
        {"config", cfg_.path},
        {"database", cfg_.database},
        {"schema_version", store_.schema_version()},
        {"listen", cfg_.listen},
        {"model", model_->name()},
        {"profiles", catalogue_.size()},
        {"started", started_at_},
        {"uptime_s", now_s() - started_at_},
        {"nodes", topo.nodes().size()},
        {"gpus", topo.total_gpus()},
        {"slots", slots},
        {"slots_used", used},
        {"running_jobs", cluster_.job_count()},
        {"jobs_in_history", store_.count_jobs()},
        {"requests", counters_.requests},
        {"refused", counters_.refused},
        {"auth_refused", counters_.auth_refused},
        {"placements", counters_.placements},
        {"reused", counters_.reused},
        {"adopted", counters_.adopted},
        {"moved", counters_.moved},
        {"ended", counters_.ended},
        {"observations", counters_.observations},
        {"steering", steering_.enabled() ? "on" : "off"},
        {"elastic_slots", elastic_.enabled() ? "on" : "off"},
    };
    hardware_status(status);
    elapsed_status(status);
    store_status(status);
    reconcile_status(status);
    return {{"status", status}};
}

json Service::on_nodes(const proto::Request&, const proto::Identity&) {
    json nodes = json::array();
    const auto& topo = cfg_.topology;
    for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
        const int node = static_cast<int>(n);
        const auto& t = topo.type_of(node);
        json gpus = json::array();
        for (int g = 0; g < t.gpus; ++g) gpus.push_back({{"gpu", g}, {"jobs", cluster_.jobs_on_gpu(node, g)}});
        std::string mode = to_string(cfg_.default_mode);
        if (auto it = cfg_.node_modes.find(topo.nodes()[n].name); it != cfg_.node_modes.end())
            mode = to_string(it->second);
        nodes.push_back({{"node", topo.nodes()[n].name},
                         {"type", t.name},
                         {"link", topo.nodes()[n].link >= 0 ? topo.link_names()[topo.nodes()[n].link] : ""},
                         {"gpus", t.gpus},
                         {"slots_per_gpu", t.slots_per_gpu},
                         {"free_slots", cluster_.free_slots(node)},
                         {"jobs", cluster_.jobs_on_node(node).size()},
                         {"gpu_jobs", gpus}});
    }
    return {{"nodes", nodes}};
}

namespace {

// A job's record as colocctl reads it (proto/jobs.hpp), with its placements.
proto::JobRecord job_record(Store& store, const JobRow& job, const model::ProfileCatalogue& catalogue) {
    proto::JobRecord r;
    r.job_id = job.job_id;
    r.uid = job.uid;
    r.user = job.user;
    r.job_name = job.job_name;
    r.partition = job.partition;
    r.profile = job.profile;
    // colocd keeps the name typed; what it placed by is the default profile (catalogue lookup).
    r.profile_unknown = !job.profile.empty() && !catalogue.find(job.profile);
    if (const auto iter = store.last_iter_time(job.job_id))
        r.measured_slowdown = std::max(1.0, *iter / catalogue.lookup(job.profile).iter_time_s);
    r.state = job.state;
    r.submit = job.first_seen;
    r.start = job.start;
    r.end = job.end;
    r.exit_status = job.exit_status;
    r.elapsed_s = job.elapsed_s;
    r.end_reason = job.end_reason;
    for (const PlacementRow& p : store.placements_of(job.job_id))
        r.placements.push_back(
            {p.decision, p.node, p.mode, p.gpus, p.predicted_slowdown, p.source, p.created, p.ended});
    return r;
}

}  // namespace

json Service::job_json(const JobRow& job) { return job_record(store_, job, catalogue_).to_json(); }

json Service::on_jobs(const proto::Request& req, const proto::Identity& who) {
    const int limit = static_cast<int>(proto::get_int_or(req.body, "limit", 1000, 1, 100000));
    const bool all = proto::get_bool_or(req.body, "all", true);
    const std::int64_t uid = access_.is_admin(who.uid) ? -1 : static_cast<std::int64_t>(who.uid);
    json jobs = json::array();
    for (const JobRow& j : store_.jobs(uid, limit)) {
        if (!all && j.state == "ended") continue;
        jobs.push_back(job_json(j));
    }
    return {{"jobs", jobs}};
}

json Service::on_history(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int_or(req.body, "job_id", 0, 0, proto::kMaxJobId);
    if (job_id == 0) {
        const int limit = static_cast<int>(proto::get_int_or(req.body, "limit", 1000, 1, 1000000));
        const std::int64_t uid = access_.is_admin(who.uid) ? -1 : static_cast<std::int64_t>(who.uid);
        json jobs = json::array();
        // With colocations: each job's co-locations too (colocctl history --export, for
        // learning from elapsed times).
        const bool colocations = proto::get_bool_or(req.body, "colocations", false);
        for (const JobRow& j : store_.jobs(uid, limit)) {
            if (!colocations) {
                jobs.push_back(job_json(j));
                continue;
            }
            proto::JobRecord entry = job_record(store_, j, catalogue_);
            entry.colocations.emplace();
            for (const ColocationRow& c : store_.colocations_of(j.job_id))
                entry.colocations->push_back(
                    {j.job_id, c.job_a == j.job_id ? c.job_b : c.job_a, c.node, c.sharing, c.start, c.end});
            jobs.push_back(entry.to_json());
        }
        return {{"history", jobs}};
    }
    auto job = store_.job(job_id);
    if (!job || !visible_to(job->uid, who))
        throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not in the history");
    proto::JobRecord entry = job_record(store_, *job, catalogue_);
    entry.colocations.emplace();
    for (const ColocationRow& c : store_.colocations_of(job_id)) {
        std::int64_t other = c.job_a == job_id ? c.job_b : c.job_a;
        entry.colocations->push_back({job_id, other, c.node, c.sharing, c.start, c.end});
    }
    return {{"history", json::array({entry.to_json()})}};
}

json Service::on_explain(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int(req.body, "job_id", 1, proto::kMaxJobId);
    auto job = store_.job(job_id);
    // A job elastic slots weighed while it pended (perhaps still pending) has that verdict.
    json elastic = elastic_verdict_of(job_id, who);
    if (!job || !visible_to(job->uid, who)) {
        if (!elastic.is_null()) return {{"explain", json::array()}, {"elastic_slots", elastic}};
        throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not in the history");
    }
    json decisions = json::array();
    const proto::JobRecord record = job_record(store_, *job, catalogue_);
    for (const PlacementRow& p : store_.placements_of(job_id)) {
        json alternatives = explain_candidates(p.alternatives);
        decisions.push_back({{"decision", p.decision},
                             {"node", p.node},
                             {"mode", p.mode},
                             {"gpus", p.gpus},
                             {"predicted_slowdown", p.predicted_slowdown},
                             {"measured_slowdown", record.measured_slowdown ? json(*record.measured_slowdown) : json()},
                             {"profile", record.profile_shown()},
                             {"source", p.source},
                             {"model", model_->name()},
                             {"profiles", catalogue_.size()},
                             {"candidates", alternatives},
                             {"sharing", explain_sharing(p.alternatives)},
                             {"steering", steering_advice_of(p.decision)}});
    }
    return {{"explain", decisions}, {"elastic_slots", elastic}};
}

// Prometheus text: totals only, so every authenticated user may read them.
json Service::on_metrics(const proto::Request&, const proto::Identity&) {
    return {{"metrics", render_metrics(metrics())}};
}

MetricsSnapshot Service::metrics() const {
    MetricsSnapshot m = metrics_;
    m.start_time_s = started_at_;
    m.requests = counters_.requests;
    m.placements = counters_.placements;
    m.reused = counters_.reused;
    m.adopted = counters_.adopted;
    m.ended = counters_.ended;
    m.observations = counters_.observations;
    const ElapsedCounts elapsed = elapsed_counts();
    m.elapsed_used = elapsed.used;
    m.elapsed_left_out = elapsed.left_out;
    m.elapsed_refits = counters_.elapsed_refits;
    m.auth_refused = counters_.auth_refused;
    m.running_jobs = static_cast<std::int64_t>(cluster_.job_count());
    m.database_backlog = static_cast<std::int64_t>(store_.backlog().size());
    m.database_write_failures = store_.backlog().write_failures();
    m.database_written_late = store_.backlog().written_late();
    std::tie(m.slots_total, m.slots_used) = slot_totals();
    return m;
}

std::pair<std::int64_t, std::int64_t> Service::slot_totals() const {
    std::int64_t total = 0, used = 0;
    const auto& topo = cfg_.topology;
    for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
        const auto& t = topo.type_of(static_cast<int>(n));
        total += t.gpus * t.slots_per_gpu;
        used += t.gpus * t.slots_per_gpu - cluster_.free_slots(static_cast<int>(n));
    }
    return {total, used};
}

}  // namespace coloc::daemon
