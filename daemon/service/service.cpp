#include "daemon/service/service.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <tuple>

#include "daemon/service/alternatives.hpp"
#include "daemon/log.hpp"
#include "model/coloc_model.hpp"
#include "model/factory.hpp"
#include "model/io/profiles_yaml.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

namespace {

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

model::ProfileCatalogue load_catalogue(const std::string& path) {
    if (path.empty()) return {};
    try {
        return model::io::load_profiles_yaml(path);
    } catch (const std::exception& e) {
        throw ConfigError(std::string("profiles: ") + e.what());
    }
}

GpuMode resolve_mode(const Config& cfg, const proto::PlaceRequest& r) {
    if (r.mode) return *r.mode;
    if (auto it = cfg.node_modes.find(r.node); it != cfg.node_modes.end()) return it->second;
    if (auto it = cfg.partition_modes.find(r.partition); it != cfg.partition_modes.end()) return it->second;
    if (!r.slurm_gpus.empty()) return GpuMode::Narrow;
    if (r.slots > 0) return GpuMode::Bind;
    return cfg.default_mode;
}

}  // namespace

const Service::Route Service::kRoutes[] = {
    {"place", &Service::on_place},     {"started", &Service::on_started}, {"ended", &Service::on_ended},
    {"status", &Service::on_status},   {"nodes", &Service::on_nodes},     {"jobs", &Service::on_jobs},
    {"history", &Service::on_history}, {"explain", &Service::on_explain}, {"observe", &Service::on_observe},
    {"metrics", &Service::on_metrics}, {"steering", &Service::on_steering},
};

Service::Service(Config config, JobGpusLookup::Query job_gpus)
    : cfg_(std::move(config)),
      access_(cfg_.admins, cfg_.slurm_user),
      store_(cfg_.database, false, {cfg_.database_backlog_max, cfg_.database_retry_s, cfg_.database_retry_max_s}),
      catalogue_(load_catalogue(cfg_.profiles)),
      model_(model::make_model(cfg_.model, catalogue_)),
      policy_(*model_),
      cluster_(cfg_.topology),
      started_at_(now_s()),
      job_gpus_(std::move(job_gpus)) {
    load_learned_params();
    recover_running_jobs();
}

void Service::load_learned_params() {
    auto* learner = dynamic_cast<model::ColocModel*>(model_.get());
    if (!learner) return;
    auto saved = store_.load_model_params(model_->name());
    if (!saved) return;
    try {
        learner->load_params_json(json::parse(*saved));
        log_info("model parameters learned earlier loaded from " + cfg_.database);
    } catch (const std::exception& e) {
        log_error("ignoring the stored model parameters: " + std::string(e.what()));
    }
}

Service::~Service() = default;

std::string Service::handle(std::string_view bytes) { return handle_round({bytes}).front(); }

Service::Opened Service::open(std::string_view bytes) const {
    const auto t0 = std::chrono::steady_clock::now();
    Opened o;
    try {
        o.req = proto::open_request(bytes);
        for (const Route& r : kRoutes)
            if (o.req.op == r.op) o.route = &r;
        if (!o.route) throw ProtoError(code::kUnknownOp, "unknown op '" + o.req.op + "'");
        if (o.req.cred.empty()) {
            o.bad_credential = true;
            throw ProtoError(code::kAuthMissing, "request carries no munge credential");
        }
        try {
            o.who = proto::verify_credential(o.req.cred, o.req.canonical, cfg_.munge_socket, cfg_.credential_max_age_s);
        } catch (const ProtoError&) {
            o.bad_credential = true;
            throw;
        }
    } catch (const ProtoError& e) {
        o.refused = e;
    } catch (const std::exception& e) {
        o.refused = ProtoError(code::kInternal, e.what());
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return o;
}

json Service::dispatch(Opened&& o) {
    ++counters_.requests;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string op = o.route ? o.route->op : "unknown";  // only known ops become metric labels
    auto timed = [&](json reply) {
        auto& h = metrics_.request_seconds_by_op.try_emplace(op, latency_histogram()).first->second;
        h.observe(o.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return reply;
    };
    try {
        if (o.refused) {
            if (o.bad_credential) ++counters_.auth_refused;
            throw *o.refused;
        }
        return timed(proto::ok_reply_object((this->*(o.route->handler))(o.req, o.who)));
    } catch (const ProtoError& e) {
        ++counters_.refused;
        log_debug("refused: " + e.code() + ": " + e.what());
        ++metrics_.refused_by_code[e.code()];
        return timed(proto::error_reply_object(e.code(), e.what()));
    } catch (const BacklogFull& e) {
        ++counters_.refused;
        ++metrics_.refused_by_code[code::kUnavailable];
        return timed(proto::error_reply_object(code::kUnavailable, e.what()));
    } catch (const StoreError& e) {
        ++counters_.refused;
        ++metrics_.refused_by_code[code::kInternal];
        return timed(proto::error_reply_object(code::kInternal, std::string("database: ") + e.what()));
    } catch (const std::exception& e) {
        ++counters_.refused;
        ++metrics_.refused_by_code[code::kInternal];
        return timed(proto::error_reply_object(code::kInternal, e.what()));
    }
}

void Service::require_reporter(const proto::Identity& who) const {
    if (!access_.may_report(who.uid))
        throw ProtoError(code::kForbidden, "only slurmstepd (root or SlurmUser) may report placements; uid " +
                                               std::to_string(who.uid) + " may not");
}

bool Service::visible_to(std::int64_t job_uid, const proto::Identity& who) const {
    return access_.is_admin(who.uid) || job_uid == static_cast<std::int64_t>(who.uid);
}

const model::JobProfile* Service::profile_for(const std::string& name) const { return &catalogue_.lookup(name); }

void Service::occupy(std::int64_t job_id, const std::string& profile, int node, const std::vector<int>& gpus,
                     bool enforce_slots, std::int64_t since) {
    auto id = static_cast<place::JobId>(job_id);
    place::Placement p{node, gpus};
    steering_.mark_dirty();
    if (cluster_.find(id)) {
        cluster_.extend(id, p, enforce_slots);
        return;
    }
    place::RunningJob job;
    job.id = id;
    job.profile = profile_for(profile);
    job.where = {p};
    job.since = static_cast<double>(since);
    cluster_.add(std::move(job), enforce_slots);
}

void Service::release(std::int64_t job_id, int node) {
    auto id = static_cast<place::JobId>(job_id);
    const place::RunningJob* job = cluster_.find(id);
    if (!job) return;
    steering_.mark_dirty();
    place::RunningJob rest = *job;
    cluster_.remove(id);
    std::erase_if(rest.where, [&](const place::Placement& p) { return p.node == node; });
    if (rest.where.empty()) return;
    cluster_.add(std::move(rest), /*enforce_slots=*/false);
}

void Service::recover_running_jobs() {
    for (const PlacementRow& p : store_.open_placements()) {
        int node = cfg_.topology.node_index(p.node);
        if (node < 0) continue;  // the node left colocd.yaml; its history stays in the store
        auto job = store_.job(p.job_id);
        occupy(p.job_id, job ? job->profile : "", node, p.gpus, /*enforce_slots=*/false, p.created);
    }
}

void Service::adopt(const std::string& node_name, const proto::LocalPlacement& local, std::int64_t now) {
    int node = cfg_.topology.node_index(node_name);
    if (node < 0) return;
    for (const PlacementRow& p : store_.placements_of(local.job_id))
        if (p.node == node_name) {  // already known; only its end may be news
            if (local.ended > 0 && !p.ended) {
                store_.record_ended(local.job_id, node_name, local.ended, local.exit_status, local.elapsed_s, true);
                release(local.job_id, node);
            }
            return;
        }
    JobRow job;
    job.job_id = local.job_id;
    job.first_seen = local.since ? local.since : now;
    job.state = "running";
    PlacementRow row;
    row.job_id = local.job_id;
    row.node = node_name;
    row.mode = "bind";
    row.gpus = local.gpus;
    row.source = "fallback";
    row.created = job.first_seen;
    store_.record_placement(job, row, {});
    ++counters_.adopted;
    if (local.ended > 0) {  // it came and went while colocd was away
        store_.record_ended(local.job_id, node_name, local.ended, local.exit_status, local.elapsed_s, true);
        return;
    }
    occupy(local.job_id, "", node, local.gpus, /*enforce_slots=*/false, job.first_seen);
}

place::Decision Service::decide(const place::JobRequest& request, int keep) {
    // The CPU clock is read outside the timed span (on this kind of host it is a system call).
    const double cpu0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    place::Decision decision = policy_.place(cluster_, request, keep);
    metrics_.decision_seconds.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    metrics_.decision_cpu_seconds.observe(thread_cpu_seconds() - cpu0);
    return decision;
}

json Service::on_place(const proto::Request& req, const proto::Identity& who) {
    require_reporter(who);
    const auto r = proto::PlaceRequest::from_json(req.body);
    const std::int64_t now = now_s();
    int node = cfg_.topology.node_index(r.node);
    if (node < 0) throw ProtoError(code::kNotFound, "node '" + r.node + "' is not described in " + cfg_.path);
    for (const auto& local : r.unreported) adopt(r.node, local, now);

    for (const PlacementRow& p : store_.placements_of(r.job_id))
        if (p.node == r.node) {
            ++counters_.reused;
            proto::PlaceReply reply{p.decision, proto::parse_mode(p.mode).value_or(GpuMode::Narrow), p.gpus,
                                    p.predicted_slowdown, true, ""};
            return reply.to_json();
        }

    const GpuMode mode = resolve_mode(cfg_, r);
    const model::JobProfile* profile = profile_for(r.profile);
    if (mode == GpuMode::Bind && r.slots > 0 && r.job_nodes.size() > 1)
        if (auto whole = place_whole_job(r, *profile, now)) return *whole;
    place::JobRequest request;
    request.id = static_cast<place::JobId>(r.job_id);
    request.profile = profile;
    // One node's share (single-node jobs, narrow mode, or a job placed node by node): that node only.
    request.nodes = 1;
    request.allowed_nodes = {node};

    std::vector<int> gpus;
    place::Decision decision;
    const int gpu_count = cfg_.topology.type_of(node).gpus;
    for (int g : r.slurm_gpus)
        if (g >= gpu_count)
            throw ProtoError(code::kBadField, "field 'slurm_gpus': GPU " + std::to_string(g) + " does not exist on " +
                                                  r.node + " (" + std::to_string(gpu_count) + " GPUs)");
    if (mode == GpuMode::Narrow && !r.slurm_gpus.empty() && r.job_nodes.size() > 1)
        if (auto whole = place_whole_narrow_job(r, *profile, now)) return *whole;
    if (mode == GpuMode::Bind) {
        if (r.slots < 1) throw ProtoError(code::kBadField, "field 'slots': bind mode needs the number of GPU slots");
        request.gpus_per_node = r.slots;
        decision = decide(request, cfg_.explain_candidates);
        if (!decision.placed) throw ProtoError(code::kNoCapacity, r.node + ": " + decision.reason);
        gpus = decision.chosen.where.front().gpus;
    } else if (mode == GpuMode::Narrow) {
        if (r.slurm_gpus.empty())
            throw ProtoError(code::kBadField, "field 'slurm_gpus': narrow mode needs the GPUs Slurm gave the step");
        int want = static_cast<int>(r.slurm_gpus.size());
        if (profile->known.count("gpus") && profile->gpus < want) want = profile->gpus;
        request.gpus_per_node = want;
        request.allowed_gpus = r.slurm_gpus;
        decision = decide(request, cfg_.explain_candidates);
        if (decision.placed) {
            gpus = decision.chosen.where.front().gpus;
        } else {
            // Slurm owns these GPUs whatever colocd counts; keep its choice, score it as it is.
            gpus = r.slurm_gpus;
            decision.chosen = place::score_candidate(cluster_, *model_, request, {{node, gpus}});
            decision.ranked = {decision.chosen};
        }
    } else {
        gpus = r.slurm_gpus;
        request.gpus_per_node = static_cast<int>(gpus.size());
        if (!gpus.empty()) decision.chosen = place::score_candidate(cluster_, *model_, request, {{node, gpus}});
    }

    const JobRow job = placed_job_row(r, now);

    PlacementRow row;
    row.job_id = r.job_id;
    row.node = r.node;
    row.mode = to_string(mode);
    row.gpus = gpus;
    row.predicted_slowdown = decision.chosen.job_slowdown;
    row.created = now;
    AlternativesWriter alternatives;
    for (const auto& c : decision.ranked) write_candidate(alternatives, c);
    row.alternatives = alternatives.finish();

    // Who this job will share something with, from now on.
    std::vector<ColocationRow> opened;
    const place::Placement mine{node, gpus};
    for (place::JobId other : cluster_.jobs_on_node(node)) {
        if (other == request.id) continue;
        const place::RunningJob& them = *cluster_.find(other);
        model::Sharing s = cluster_.intra_node_sharing(mine, *them.on_node(node));
        opened.push_back({r.job_id, static_cast<std::int64_t>(other), r.node, model::to_string(s), now, std::nullopt});
    }

    store_.record_placement(job, row, opened);  // stored or queued before anything is acknowledged
    record_steering_advice(row.decision, r.job_id, r.node, *profile);
    occupy(r.job_id, r.profile, node, gpus, /*enforce_slots=*/mode == GpuMode::Bind, now);
    ++counters_.placements;
    metrics_.predicted_slowdown.observe(row.predicted_slowdown);
    log_info("job " + std::to_string(r.job_id) + " on " + r.node + ": GPUs " + proto::gpu_list(gpus) + " (" +
             row.mode + ", decision " + std::to_string(row.decision) + ", predicted slowdown " +
             std::to_string(row.predicted_slowdown) + ")");
    proto::PlaceReply reply{row.decision, mode, gpus, row.predicted_slowdown, false, ""};
    return reply.to_json();
}

json Service::on_started(const proto::Request& req, const proto::Identity& who) {
    require_reporter(who);
    const auto r = proto::StartedReport::from_json(req.body);
    if (r.decision == 0 && !r.gpus.empty()) adopt(r.node, {r.job_id, r.gpus, r.time ? r.time : now_s()}, now_s());
    store_.record_started(r.job_id, r.time ? r.time : now_s());
    return json::object();
}

json Service::on_ended(const proto::Request& req, const proto::Identity& who) {
    require_reporter(who);
    const auto r = proto::EndedReport::from_json(req.body);
    const std::int64_t when = r.time ? r.time : now_s();
    int node = cfg_.topology.node_index(r.node);
    bool still_elsewhere = false;
    if (const place::RunningJob* job = cluster_.find(static_cast<place::JobId>(r.job_id)))
        for (const auto& p : job->where)
            if (p.node != node) still_elsewhere = true;
    store_.record_ended(r.job_id, r.node, when, r.exit_status, r.elapsed_s, !still_elsewhere);
    if (node >= 0) release(r.job_id, node);
    ++counters_.ended;
    return {{"known", store_.job(r.job_id).has_value()}};
}

json Service::on_status(const proto::Request&, const proto::Identity&) {
    const auto& topo = cfg_.topology;
    const auto [slots, used] = slot_totals();
    json status = {
        {"version", "coloc 0.1"},
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
        {"ended", counters_.ended},
        {"observations", counters_.observations},
        {"steering", steering_.enabled() ? "on" : "off"},
    };
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
        if (auto it = cfg_.node_modes.find(topo.nodes()[n].name); it != cfg_.node_modes.end()) mode = to_string(it->second);
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

json Service::job_json(const JobRow& job) {
    json placements = json::array();
    for (const PlacementRow& p : store_.placements_of(job.job_id))
        placements.push_back({{"decision", p.decision}, {"node", p.node}, {"mode", p.mode}, {"gpus", p.gpus},
                              {"predicted_slowdown", p.predicted_slowdown}, {"source", p.source},
                              {"created", p.created}, {"ended", p.ended ? json(*p.ended) : json(nullptr)}});
    auto opt = [](const auto& o) { return o ? json(*o) : json(nullptr); };
    return {{"job_id", job.job_id}, {"uid", job.uid}, {"user", job.user}, {"job_name", job.job_name},
            {"partition", job.partition}, {"profile", job.profile}, {"state", job.state},
            {"submit", job.first_seen}, {"start", opt(job.start)}, {"end", opt(job.end)},
            {"exit_status", opt(job.exit_status)}, {"elapsed_s", opt(job.elapsed_s)},
            {"end_reason", opt(job.end_reason)}, {"placements", placements}};
}

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
        for (const JobRow& j : store_.jobs(uid, limit)) jobs.push_back(job_json(j));
        return {{"history", jobs}};
    }
    auto job = store_.job(job_id);
    if (!job || !visible_to(job->uid, who))
        throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not in the history");
    json intervals = json::array();
    for (const ColocationRow& c : store_.colocations_of(job_id)) {
        std::int64_t other = c.job_a == job_id ? c.job_b : c.job_a;
        intervals.push_back({{"job_id", job_id}, {"other", other}, {"node", c.node}, {"sharing", c.sharing},
                             {"start", c.start}, {"end", c.end ? json(*c.end) : json(nullptr)}});
    }
    json entry = job_json(*job);
    entry["colocations"] = intervals;
    return {{"history", json::array({entry})}};
}

json Service::on_explain(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int(req.body, "job_id", 1, proto::kMaxJobId);
    auto job = store_.job(job_id);
    if (!job || !visible_to(job->uid, who))
        throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not in the history");
    json decisions = json::array();
    for (const PlacementRow& p : store_.placements_of(job_id)) {
        json alternatives = explain_candidates(p.alternatives);
        decisions.push_back({{"decision", p.decision}, {"node", p.node}, {"mode", p.mode}, {"gpus", p.gpus},
                             {"predicted_slowdown", p.predicted_slowdown}, {"source", p.source},
                             {"model", model_->name()},
        {"profiles", catalogue_.size()}, {"candidates", alternatives},
                             {"steering", steering_advice_of(p.decision)}});
    }
    return {{"explain", decisions}};
}

}  // namespace coloc::daemon

namespace coloc::daemon {

// A job's measured iteration time (from the job itself or a monitor) with the neighbours it has
// now: the model learns the slowdown against the profile's solo time, and what it learned is
// committed before the reply.
json Service::on_observe(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int(req.body, "job_id", 1, proto::kMaxJobId);
    const double iter_time = proto::get_number_or(req.body, "iter_time_s", 0, 1e-6, 1e6);
    if (iter_time <= 0) throw ProtoError(code::kBadField, "field 'iter_time_s': missing");
    auto job = store_.job(job_id);
    if (!job) throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not known to colocd");
    if (!access_.may_report(who.uid) && job->uid != static_cast<std::int64_t>(who.uid))
        throw ProtoError(code::kForbidden, "uid " + std::to_string(who.uid) + " may not report for job " +
                                               std::to_string(job_id));
    const place::RunningJob* running = cluster_.find(static_cast<place::JobId>(job_id));
    if (!running) throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not running");
    std::vector<model::Neighbour> neighbours;
    cluster_.neighbours_of(*running, neighbours);
    json listed = json::array();
    for (const auto& n : neighbours) listed.push_back({{"profile", n.profile->name}, {"where", model::to_string(n.where)}});
    const double solo = running->profile->iter_time_s;
    const double measured = std::max(1.0, iter_time / solo);
    const double predicted = model_->slowdown(*running->profile, neighbours);
    std::string params = "{}";
    if (auto* learner = dynamic_cast<model::ColocModel*>(model_.get())) {
        model::ColocModel before = *learner;
        learner->observe(*running->profile, neighbours, measured);
        params = learner->params_json().dump();
        try {
            store_.record_observation(job_id, now_s(), iter_time, listed.dump(), model_->name(), params);
        } catch (...) {
            *learner = std::move(before);  // what is not stored is not learned
            throw;
        }
    } else {
        store_.record_observation(job_id, now_s(), iter_time, listed.dump(), model_->name(), params);
    }
    ++counters_.observations;
    metrics_.observed_slowdown.observe(measured);
    return {{"measured_slowdown", measured}, {"predicted_before", predicted},
            {"predicted_now", model_->slowdown(*running->profile, neighbours)}};
}

}  // namespace coloc::daemon

namespace coloc::daemon {

// Prometheus text: totals only, so every authenticated user may read them.
json Service::on_metrics(const proto::Request&, const proto::Identity&) { return {{"metrics", render_metrics(metrics())}}; }

MetricsSnapshot Service::metrics() const {
    MetricsSnapshot m = metrics_;
    m.start_time_s = started_at_;
    m.requests = counters_.requests;
    m.placements = counters_.placements;
    m.reused = counters_.reused;
    m.adopted = counters_.adopted;
    m.ended = counters_.ended;
    m.observations = counters_.observations;
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
