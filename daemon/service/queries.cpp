#include "daemon/service/queries.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "daemon/service/alternatives.hpp"
#include "daemon/service/group_commit.hpp"
#include "daemon/service/learning.hpp"
#include "daemon/service/reconciliation.hpp"
#include "daemon/service/slot_sizing.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"
#include "proto/jobs.hpp"
#include "proto/messages.hpp"
#include "slurm/release.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

Queries::Queries(State& state, const Access& access, Sources parts) : state_(state), access_(access), parts_(parts) {}

json Queries::on_status(const proto::Request&, const proto::Identity&) {
    const auto& topo = state_.cfg.topology;
    const auto [slots, used] = slot_totals();
    json status = {
        {"version", "coloc 0.1"},
        {"protocol", std::to_string(proto::kOldestVersion) + "-" + std::to_string(proto::kVersion)},
        {"cluster", state_.cfg.cluster},
        {"slurm_built_for", slurm::to_string(slurm::built_for())},
        {"libslurm", slurm::to_string(slurm::running())},
        {"config", state_.cfg.path},
        {"database", state_.cfg.database},
        {"schema_version", state_.store.schema_version()},
        {"listen", state_.cfg.listen},
        {"model", state_.model->name()},
        {"profiles", state_.catalogue.size()},
        {"started", state_.started_at},
        {"uptime_s", State::now_s() - state_.started_at},
        {"nodes", topo.nodes().size()},
        {"gpus", topo.total_gpus()},
        {"slots", slots},
        {"slots_used", used},
        {"running_jobs", state_.cluster.job_count()},
        {"jobs_in_history", state_.store.count_jobs()},
        {"requests", state_.counters.requests},
        {"refused", state_.counters.refused},
        {"auth_refused", state_.counters.auth_refused},
        {"placements", state_.counters.placements},
        {"reused", state_.counters.reused},
        {"adopted", state_.counters.adopted},
        {"moved", state_.counters.moved},
        {"ended", state_.counters.ended},
        {"observations", state_.counters.observations},
        {"steering", parts_.sizing.steering_on() ? "on" : "off"},
        {"elastic_slots", parts_.sizing.elastic_on() ? "on" : "off"},
        {"admission", parts_.sizing.admission_on() ? "on" : "off"},
    };
    hardware_status(status);
    parts_.learning.status(status);
    parts_.commits.status(status);
    parts_.reconciliation.status(status);
    return {{"status", status}};
}

json Queries::on_nodes(const proto::Request&, const proto::Identity&) {
    json nodes = json::array();
    const auto& topo = state_.cfg.topology;
    for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
        const int node = static_cast<int>(n);
        const auto& t = topo.type_of(node);
        json gpus = json::array();
        for (int g = 0; g < t.gpus; ++g) gpus.push_back({{"gpu", g}, {"jobs", state_.cluster.jobs_on_gpu(node, g)}});
        std::string mode = to_string(state_.cfg.default_mode);
        if (auto it = state_.cfg.node_modes.find(topo.nodes()[n].name); it != state_.cfg.node_modes.end())
            mode = to_string(it->second);
        nodes.push_back({{"node", topo.nodes()[n].name},
                         {"type", t.name},
                         {"link", topo.nodes()[n].link >= 0 ? topo.link_names()[topo.nodes()[n].link] : ""},
                         {"gpus", t.gpus},
                         {"slots_per_gpu", t.slots_per_gpu},
                         {"free_slots", state_.cluster.free_slots(node)},
                         {"jobs", state_.cluster.jobs_on_node(node).size()},
                         {"gpu_jobs", gpus}});
    }
    return {{"nodes", nodes}};
}

namespace {

// A job's record as colocctl reads it (proto/jobs.hpp), with its placements.
proto::JobRecord job_record(State& state, const JobRow& job) {
    Store& store = state.store;
    const model::ProfileCatalogue& catalogue = state.catalogue;
    proto::JobRecord r;
    r.job_id = job.job_id;
    r.uid = job.uid;
    r.user = job.user;
    r.job_name = job.job_name;
    r.partition = job.partition;
    r.profile = job.profile;
    // colocd keeps the name typed; what it placed by is the default profile (catalogue lookup).
    r.profile_unknown = state.profile_unknown(job.profile);
    const double profile_iter_s = catalogue.lookup(job.profile).iter_time_s;
    if (const auto iter = store.last_iter_time(job.job_id)) r.measured_slowdown = std::max(1.0, *iter / profile_iter_s);
    r.state = to_string(job.state);
    r.submit = job.submitted.value_or(job.first_seen);
    r.start = job.start;
    r.end = job.end;
    r.exit_status = job.exit_status;
    r.elapsed_s = job.elapsed_s;
    r.time_limit_s = job.time_limit_s;
    // Against the solo time colocd learns by (Learning::on_observe), as the model is.
    if (job.elapsed_s)
        if (const auto speed =
                store.mean_speed(job.job_id, state.learned.solo_iter_time(catalogue.lookup(job.profile))))
            r.work_s = *job.elapsed_s * *speed;
    r.end_reason = job.end_reason;
    for (const PlacementRow& p : store.placements_of(job.job_id))
        r.placements.push_back(
            {p.decision, p.node, p.mode, p.gpus, p.predicted_slowdown, p.source, p.created, p.ended});
    return r;
}

}  // namespace

json Queries::job_json(const JobRow& job) { return job_record(state_, job).to_json(); }

json Queries::on_jobs(const proto::Request& req, const proto::Identity& who) {
    const int limit = static_cast<int>(proto::get_int_or(req.body, "limit", 1000, 1, 100000));
    const bool all = proto::get_bool_or(req.body, "all", true);
    const std::int64_t uid = access_.is_admin(who.uid) ? -1 : static_cast<std::int64_t>(who.uid);
    json jobs = json::array();
    for (const JobRow& j : state_.store.jobs(uid, limit)) {
        if (!all && j.state == JobState::Ended) continue;
        jobs.push_back(job_json(j));
    }
    return {{"jobs", jobs}};
}

json Queries::on_history(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int_or(req.body, "job_id", 0, 0, proto::kMaxJobId);
    if (job_id == 0) {
        const int limit = static_cast<int>(proto::get_int_or(req.body, "limit", 1000, 1, 1000000));
        const std::int64_t uid = access_.is_admin(who.uid) ? -1 : static_cast<std::int64_t>(who.uid);
        json jobs = json::array();
        // With colocations: each job's co-locations too (colocctl history --export, for
        // learning from elapsed times).
        const bool colocations = proto::get_bool_or(req.body, "colocations", false);
        for (const JobRow& j : state_.store.jobs(uid, limit)) {
            if (!colocations) {
                jobs.push_back(job_json(j));
                continue;
            }
            proto::JobRecord entry = job_record(state_, j);
            entry.colocations.emplace();
            for (const ColocationRow& c : state_.store.colocations_of(j.job_id))
                entry.colocations->push_back(
                    {j.job_id, c.job_a == j.job_id ? c.job_b : c.job_a, c.node, c.sharing, c.start, c.end});
            jobs.push_back(entry.to_json());
        }
        return {{"history", jobs}};
    }
    auto job = state_.store.job(job_id);
    if (!job || !access_.may_see(job->uid, who.uid))
        throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not in the history");
    proto::JobRecord entry = job_record(state_, *job);
    entry.colocations.emplace();
    for (const ColocationRow& c : state_.store.colocations_of(job_id)) {
        std::int64_t other = c.job_a == job_id ? c.job_b : c.job_a;
        entry.colocations->push_back({job_id, other, c.node, c.sharing, c.start, c.end});
    }
    json record = entry.to_json();
    // Each report as it came, with the neighbours of that moment: what colocctl probe averages.
    json observations = json::array();
    for (const ObservationRow& o : state_.store.observations_of(job_id)) {
        json neighbours = json::parse(o.neighbours, nullptr, /*allow_exceptions=*/false);
        observations.push_back({{"time", o.time},
                                {"iter_time_s", o.iter_time_s},
                                {"neighbours", neighbours.is_discarded() ? json::array() : neighbours}});
    }
    record["observations"] = observations;
    return {{"history", json::array({record})}};
}

json Queries::on_explain(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int(req.body, "job_id", 1, proto::kMaxJobId);
    auto job = state_.store.job(job_id);
    // A job elastic slots weighed while it pended (perhaps still pending) has that verdict.
    json elastic = parts_.sizing.elastic_verdict_of(job_id, who);
    // And one admission weighed: whether it was held, or released to which node, and why.
    json admission = parts_.sizing.admission_verdict_of(job_id, who);
    if (!job || !access_.may_see(job->uid, who.uid)) {
        if (!elastic.is_null() || !admission.is_null())
            return {{"explain", json::array()}, {"elastic_slots", elastic}, {"admission", admission}};
        throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not in the history");
    }
    json decisions = json::array();
    const proto::JobRecord record = job_record(state_, *job);
    for (const PlacementRow& p : state_.store.placements_of(job_id)) {
        json alternatives = explain_candidates(p.alternatives);
        decisions.push_back({{"decision", p.decision},
                             {"node", p.node},
                             {"mode", p.mode},
                             {"gpus", p.gpus},
                             {"predicted_slowdown", p.predicted_slowdown},
                             {"measured_slowdown", record.measured_slowdown ? json(*record.measured_slowdown) : json()},
                             {"profile", record.profile_shown()},
                             {"source", p.source},
                             {"model", state_.model->name()},
                             {"profiles", state_.catalogue.size()},
                             {"candidates", alternatives},
                             {"sharing", explain_sharing(p.alternatives)},
                             {"steering", steering_advice_of(p.decision)}});
    }
    return {{"explain", decisions}, {"elastic_slots", elastic}, {"admission", admission}};
}

// Prometheus text: totals only, so every authenticated user may read them.
json Queries::on_metrics(const proto::Request&, const proto::Identity&) {
    return {{"metrics", render_metrics(metrics())}};
}

MetricsSnapshot Queries::metrics() const {
    MetricsSnapshot m = state_.metrics;
    m.start_time_s = state_.started_at;
    m.requests = state_.counters.requests;
    m.placements = state_.counters.placements;
    m.reused = state_.counters.reused;
    m.adopted = state_.counters.adopted;
    m.ended = state_.counters.ended;
    m.observations = state_.counters.observations;
    const Learning::ElapsedCounts elapsed = parts_.learning.elapsed_counts();
    m.elapsed_used = elapsed.used;
    m.elapsed_left_out = elapsed.left_out;
    m.elapsed_refits = state_.counters.elapsed_refits;
    m.auth_refused = state_.counters.auth_refused;
    m.running_jobs = static_cast<std::int64_t>(state_.cluster.job_count());
    m.database_backlog = static_cast<std::int64_t>(state_.store.backlog().size());
    if (const Journal* journal = state_.store.journal())
        m.database_journal_bytes = static_cast<std::int64_t>(journal->used());
    m.database_journal_failed = state_.store.journal_trouble().empty() ? 0 : 1;
    m.database_write_failures = state_.store.backlog().write_failures();
    m.database_written_late = state_.store.backlog().written_late();
    std::tie(m.slots_total, m.slots_used) = slot_totals();
    return m;
}

json Queries::steering_advice_of(std::int64_t decision) {
    const std::optional<std::string> stored = state_.store.steering_advice(decision);
    if (!stored) return nullptr;
    json advice = json::parse(*stored, nullptr, false);
    return advice.is_discarded() ? json(nullptr) : advice;
}

void Queries::hardware_status(json& status) const {
    json types = json::array();
    for (const place::NodeType& t : state_.cfg.topology.types()) {
        std::ostringstream o;
        o << t.name << ": " << t.gpu.gpu_type << ", " << t.gpu.memory_gb << " GB";
        if (auto it = state_.cfg.model_params_files.find(t.gpu.gpu_type); it != state_.cfg.model_params_files.end())
            o << ", parameters from " << it->second;
        types.push_back(o.str());
    }
    status["gpu_hardware"] = types;
    status["warnings"] = state_.hardware_notes;
}

std::pair<std::int64_t, std::int64_t> Queries::slot_totals() const {
    std::int64_t total = 0, used = 0;
    const auto& topo = state_.cfg.topology;
    for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
        const auto& t = topo.type_of(static_cast<int>(n));
        total += t.gpus * t.slots_per_gpu;
        used += t.gpus * t.slots_per_gpu - state_.cluster.free_slots(static_cast<int>(n));
    }
    return {total, used};
}

}  // namespace coloc::daemon
