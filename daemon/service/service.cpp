#include "daemon/service/service.hpp"

#include <algorithm>
#include <chrono>

#include "daemon/log.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

using proto::json;
using proto::Op;
using proto::ProtoError;
namespace code = proto::code;

namespace {
constexpr const char* kReport = "report placements";
}  // namespace

// Who may send what, and which part answers. Reads are open to every user (jobs, history and
// explain then show a plain user only their own jobs); observe is open too, its handler lets
// only reporters and the job's owner report for a job.
const Service::Route Service::kRoutes[] = {
    {Op::Place, Role::Reporter, &to<&Service::launch_, &Launch::on_place>, kReport},
    {Op::Started, Role::Reporter, &to<&Service::launch_, &Launch::on_started>, kReport},
    {Op::Ended, Role::Reporter, &to<&Service::launch_, &Launch::on_ended>, kReport},
    {Op::Status, Role::User, &to<&Service::queries_, &Queries::on_status>},
    {Op::Nodes, Role::User, &to<&Service::queries_, &Queries::on_nodes>},
    {Op::Jobs, Role::User, &to<&Service::queries_, &Queries::on_jobs>},
    {Op::History, Role::User, &to<&Service::queries_, &Queries::on_history>},
    {Op::Explain, Role::User, &to<&Service::queries_, &Queries::on_explain>},
    {Op::Observe, Role::User, &to<&Service::learning_, &Learning::on_observe>},
    {Op::Metrics, Role::User, &to<&Service::queries_, &Queries::on_metrics>},
    // Reading is for everyone; switching ({"enabled": ...}) for admins.
    {Op::Steering, Role::User, &to<&Service::sizing_, &SlotSizing::on_steering>, "switch node steering", "enabled"},
    {Op::Profiles, Role::User, &to<&Service::learning_, &Learning::on_profiles>},
    {Op::Elastic, Role::User, &to<&Service::sizing_, &SlotSizing::on_elastic>, "switch elastic slots", "enabled"},
    {Op::Admission, Role::User, &to<&Service::sizing_, &SlotSizing::on_admission>, "switch admission", "enabled"},
};

std::span<const Service::Route> Service::routes() { return kRoutes; }

Role Service::role_for(const Route& route, const json& body) {
    if (route.admin_field && body.is_object() && body.contains(route.admin_field)) return Role::Admin;
    return route.role;
}

Service::Service(Config config, slurm::JobGpusLookup::Query job_gpus, slurm::JobGresLookup::Query job_gres)
    : access_(config.admins, config.slurm_user),
      state_(std::move(config)),
      launch_(state_, learning_, sizing_, std::move(job_gpus), std::move(job_gres)) {}

std::string Service::handle(std::string_view bytes) { return handle_round({bytes}).front(); }

// Envelopes and credentials first, side by side; then the handlers, in order, in one transaction.
std::vector<std::string> Service::handle_round(const std::vector<std::string_view>& requests) {
    return commits_.settle(start_round(requests));
}

GroupCommit::PendingRound Service::start_round(const std::vector<std::string_view>& requests) {
    launch_.start_round();
    std::vector<Opened> opened = opener_.open_all(requests);
    std::vector<int> versions;  // each reply speaks its request's protocol version
    std::vector<std::string> nonces;
    versions.reserve(opened.size());
    nonces.reserve(opened.size());
    for (Opened& o : opened) {
        versions.push_back(o.req.version);
        nonces.push_back(std::move(o.nonce));
    }
    return commits_.start(versions, std::move(nonces), [&](std::size_t i) { return dispatch(std::move(opened[i])); });
}

json Service::dispatch(Opened&& o) {
    ++state_.counters.requests;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string op = o.op ? proto::op_name(*o.op) : "unknown";  // only known ops become metric labels
    auto timed = [&](json reply) {
        auto& h = state_.metrics.request_seconds_by_op.try_emplace(op, latency_histogram()).first->second;
        const double handled = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        h.observe(o.seconds + handled);
        state_.metrics.request_stages.open.observe(o.seconds);
        state_.metrics.request_stages.handle.observe(handled);
        return reply;
    };
    auto refuse = [&](const std::string& error, const std::string& message) {
        ++state_.counters.refused;
        ++state_.metrics.refused_by_code[error];
        return timed(proto::error_reply_object(error, message, o.req.version));
    };
    try {
        if (o.refused) {
            if (o.bad_credential) ++state_.counters.auth_refused;
            throw *o.refused;
        }
        const auto route =
            std::find_if(std::begin(kRoutes), std::end(kRoutes), [&](const Route& r) { return r.op == *o.op; });
        if (route == std::end(kRoutes)) throw ProtoError(code::kUnknownOp, "unknown op '" + o.req.op + "'");
        // The one role check: handlers only narrow what a user sees of the data.
        access_.require(role_for(*route, o.req.body), o.who.uid, route->action);
        return timed(proto::ok_reply_object(route->handler(*this, o.req, o.who), o.req.version));
    } catch (const ProtoError& e) {
        log_debug("refused: " + e.code() + ": " + e.what());
        return refuse(e.code(), e.what());
    } catch (const BacklogFull& e) {
        return refuse(code::kUnavailable, e.what());
    } catch (const StoreError& e) {
        return refuse(code::kInternal, std::string("database: ") + e.what());
    } catch (const std::exception& e) {
        return refuse(code::kInternal, e.what());
    }
}

// After a failed commit: the running jobs and what was learned, as the store holds them.
void Service::reload_from_store() {
    state_.cluster = place::ClusterState(state_.cfg.topology);
    learning_.load();
    launch_.recover_running_jobs();
}

}  // namespace coloc::daemon
