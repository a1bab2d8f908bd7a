#include "daemon/service/service.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string_view>

#include "daemon/log.hpp"
#include "model/factory.hpp"
#include "model/io/profiles_yaml.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

using proto::json;
using proto::Op;
using proto::ProtoError;
namespace code = proto::code;

// The launch-path messages (proto/messages.hpp) spell the same ops.
static_assert(std::string_view(proto::op::kPlace) == proto::op_name(Op::Place));
static_assert(std::string_view(proto::op::kStarted) == proto::op_name(Op::Started));
static_assert(std::string_view(proto::op::kEnded) == proto::op_name(Op::Ended));

namespace {

model::ProfileCatalogue load_catalogue(const std::string& path) {
    if (path.empty()) return {};
    try {
        return model::io::load_profiles_yaml(path);
    } catch (const std::exception& e) {
        throw ConfigError(std::string("profiles: ") + e.what());
    }
}

constexpr const char* kReport = "report placements";

}  // namespace

// Who may send what. Reads are open to every user (jobs, history and explain then show a plain
// user only their own jobs); observe is open too, its handler lets only reporters and the job's
// owner report for a job.
const Service::Route Service::kRoutes[] = {
    {Op::Place, Role::Reporter, &Service::on_place, kReport},
    {Op::Started, Role::Reporter, &Service::on_started, kReport},
    {Op::Ended, Role::Reporter, &Service::on_ended, kReport},
    {Op::Status, Role::User, &Service::on_status},
    {Op::Nodes, Role::User, &Service::on_nodes},
    {Op::Jobs, Role::User, &Service::on_jobs},
    {Op::History, Role::User, &Service::on_history},
    {Op::Explain, Role::User, &Service::on_explain},
    {Op::Observe, Role::User, &Service::on_observe},
    {Op::Metrics, Role::User, &Service::on_metrics},
    // Reading is for everyone; switching ({"enabled": ...}) for admins.
    {Op::Steering, Role::User, &Service::on_steering, "switch node steering", "enabled"},
    {Op::Profiles, Role::User, &Service::on_profiles},
    {Op::Elastic, Role::User, &Service::on_elastic, "switch elastic slots", "enabled"},
};

std::span<const Service::Route> Service::routes() { return kRoutes; }

Role Service::role_for(const Route& route, const json& body) {
    if (route.admin_field && body.is_object() && body.contains(route.admin_field)) return Role::Admin;
    return route.role;
}

std::int64_t Service::now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

Service::Service(Config config, JobGpusLookup::Query job_gpus, JobGresLookup::Query job_gres)
    : cfg_(std::move(config)),
      access_(cfg_.admins, cfg_.slurm_user),
      store_(cfg_.database, false, {cfg_.database_backlog_max, cfg_.database_retry_s, cfg_.database_retry_max_s}),
      catalogue_(load_catalogue(cfg_.profiles)),
      model_(model::make_model(cfg_.model, catalogue_)),
      policy_(*model_),
      cluster_(cfg_.topology),
      started_at_(now_s()),
      job_gpus_(std::move(job_gpus)),
      job_gres_(std::move(job_gres)) {
    hardware_notes_ = init_hardware();
    load_learned_params();
    load_solo_runs();
    load_ended_runs();
    recover_running_jobs();
}

Service::~Service() = default;

std::string Service::handle(std::string_view bytes) { return handle_round({bytes}).front(); }

Service::Opened Service::open(std::string_view bytes) const {
    const auto t0 = std::chrono::steady_clock::now();
    Opened o;
    try {
        o.req = proto::open_request(bytes);
        if (const std::optional<Op> op = proto::op_from_name(o.req.op))
            for (const Route& r : kRoutes)
                if (r.op == *op) o.route = &r;
        if (!o.route) throw ProtoError(code::kUnknownOp, "unknown op '" + o.req.op + "'");
        check_cluster(o.req.body);
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

void Service::check_cluster(const json& body) const {
    const auto it = body.find("cluster");
    if (it == body.end()) return;  // senders that name none (older ones, one-cluster sites) are served
    if (!it->is_string()) throw ProtoError(code::kBadField, "field 'cluster': expected a cluster name");
    if (cfg_.cluster.empty() || *it == cfg_.cluster) return;
    throw ProtoError(code::kWrongCluster, "this colocd serves cluster '" + cfg_.cluster + "', not '" +
                                              it->get<std::string>() + "': ask the colocd of that cluster");
}

json Service::dispatch(Opened&& o) {
    ++counters_.requests;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string op = o.route ? proto::op_name(o.route->op) : "unknown";  // only known ops become metric labels
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
        // The one role check: handlers only narrow what a user sees of the data.
        access_.require(role_for(*o.route, o.req.body), o.who.uid, o.route->action);
        return timed(proto::ok_reply_object((this->*(o.route->handler))(o.req, o.who), o.req.version));
    } catch (const ProtoError& e) {
        ++counters_.refused;
        log_debug("refused: " + e.code() + ": " + e.what());
        ++metrics_.refused_by_code[e.code()];
        return timed(proto::error_reply_object(e.code(), e.what(), o.req.version));
    } catch (const BacklogFull& e) {
        ++counters_.refused;
        ++metrics_.refused_by_code[code::kUnavailable];
        return timed(proto::error_reply_object(code::kUnavailable, e.what(), o.req.version));
    } catch (const StoreError& e) {
        ++counters_.refused;
        ++metrics_.refused_by_code[code::kInternal];
        return timed(proto::error_reply_object(code::kInternal, std::string("database: ") + e.what(), o.req.version));
    } catch (const std::exception& e) {
        ++counters_.refused;
        ++metrics_.refused_by_code[code::kInternal];
        return timed(proto::error_reply_object(code::kInternal, e.what(), o.req.version));
    }
}

bool Service::visible_to(std::int64_t job_uid, const proto::Identity& who) const {
    return access_.is_admin(who.uid) || job_uid == static_cast<std::int64_t>(who.uid);
}

const model::JobProfile* Service::profile_for(const std::string& name, const std::string& user,
                                              const std::string& job_name) const {
    return &learned_.profile_for(name, user, job_name);
}

void Service::occupy(std::int64_t job_id, const model::JobProfile* profile, int node, const std::vector<int>& gpus,
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
    job.profile = profile;
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

bool Service::same_gpus(std::vector<int> a, std::vector<int> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

void Service::recover_running_jobs() {
    for (const PlacementRow& p : store_.open_placements()) {
        int node = cfg_.topology.node_index(p.node);
        if (node < 0) continue;  // the node left colocd.yaml; its history stays in the store
        auto job = store_.job(p.job_id);
        occupy(p.job_id, job ? profile_for(job->profile, job->user, job->job_name) : profile_for(""), node, p.gpus,
               /*enforce_slots=*/false, p.created);
    }
}

void Service::adopt(const std::string& node_name, const proto::LocalPlacement& local, std::int64_t now,
                    std::int64_t uid) {
    int node = cfg_.topology.node_index(node_name);
    if (node < 0) return;
    for (const PlacementRow& p : store_.placements_of(local.job_id))
        if (p.node == node_name) {  // already known; its end, or where it really runs, may be news
            if (local.ended > 0 && !p.ended) {
                store_.record_ended(local.job_id, node_name, local.ended, local.exit_status, local.elapsed_s, true);
                release(local.job_id, node);
            } else if (local.ended == 0 && !p.ended && !local.gpus.empty() && !same_gpus(p.gpus, local.gpus)) {
                move_to(local.job_id, node_name, node, local.gpus);
            }
            return;
        }
    JobRow job;
    job.job_id = local.job_id;
    job.uid = uid;
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
    occupy(local.job_id, profile_for(""), node, local.gpus, /*enforce_slots=*/false, job.first_seen);
}

// The plugin found colocd's GPUs for the job full in its node-local record (a local choice
// colocd had not heard of yet) and chose others: colocd's view follows the node's.
void Service::move_to(std::int64_t job_id, const std::string& node_name, int node, const std::vector<int>& gpus) {
    const auto id = static_cast<place::JobId>(job_id);
    const place::RunningJob* running = cluster_.find(id);
    const model::JobProfile* profile = running ? running->profile : profile_for("");
    const std::int64_t since = running ? static_cast<std::int64_t>(running->since) : now_s();
    store_.record_moved(job_id, node_name, gpus);
    release(job_id, node);
    occupy(job_id, profile, node, gpus, /*enforce_slots=*/false, since);
    ++counters_.moved;
    log_info("job " + std::to_string(job_id) + " on " + node_name + ": runs on GPUs " + proto::gpu_list(gpus) +
             ", chosen by the plugin (colocd's choice was full on the node)");
}

}  // namespace coloc::daemon
