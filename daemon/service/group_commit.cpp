// Group commit. A commit per request caps colocd at the disk's commit rate; the requests that
// arrive in one poll round instead share one transaction (each request's own writes are a
// savepoint inside it, see Transaction), and their replies leave only after it has committed:
// an acknowledged write is a stored write, at any rate. While the database cannot be written,
// the round's writes are queued in the store's backlog instead and the replies say so.
#include <ctime>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

std::vector<std::string> Service::handle_round(const std::vector<std::string_view>& requests) {
    std::vector<proto::json> replies;
    std::vector<bool> wrote;
    replies.reserve(requests.size());
    // Envelopes and credentials first, side by side; then the handlers, in order, in one
    // transaction.
    job_gpus_left_ = kJobGpusWait;
    std::vector<Opened> opened(requests.size());
    openers_.for_each(requests.size(), [&](std::size_t i) { opened[i] = open(requests[i]); });
    std::vector<int> versions;  // each reply speaks its request's protocol version
    for (const Opened& o : opened) versions.push_back(o.req.version);
    std::string why;
    try {
        store_.begin_round();
        for (Opened& o : opened) {
            store_.begin_unit();
            replies.push_back(dispatch(std::move(o)));
            wrote.push_back(store_.unit_writes() > 0);
        }
        const Durability durability = store_.finish_round();
        std::vector<std::string> out;
        out.reserve(replies.size());
        for (std::size_t i = 0; i < replies.size(); ++i) {
            if (wrote[i] && replies[i].value("ok", false)) replies[i][proto::kDurability] = to_string(durability);
            out.push_back(replies[i].dump());
        }
        return out;
    } catch (const std::exception& e) {
        why = e.what();
    }
    // Nothing of this round may be acknowledged; what is in memory follows what is stored.
    store_.abandon_round();
    log_error("group commit of " + std::to_string(requests.size()) + " requests failed: " + why);
    try {
        reload_from_store();
    } catch (const std::exception& e) {
        log_error("cannot reload the running jobs from the store: " + std::string(e.what()));
    }
    counters_.refused += static_cast<std::int64_t>(requests.size());
    metrics_.refused_by_code[proto::code::kInternal] += static_cast<std::int64_t>(requests.size());
    std::vector<std::string> out;
    for (int version : versions)
        out.push_back(proto::error_reply(proto::code::kInternal, "database: commit failed: " + why, version));
    return out;
}

void Service::reload_from_store() {
    cluster_ = place::ClusterState(cfg_.topology);
    load_solo_runs();
    recover_running_jobs();
    load_learned_params();
    load_ended_runs();
}

void Service::retry_store() { store_.retry_backlog_if_due(); }

std::size_t Service::store_before_stop() {
    const StoreBacklog& backlog = store_.backlog();
    if (backlog.writable()) return 0;
    store_.retry_backlog_now();
    if (backlog.empty()) {
        log_info("stopping: the backlog of history writes is stored");
        return 0;
    }
    log_error("stopping with " + std::to_string(backlog.size()) + " history records that could not be stored (" +
              backlog.last_error() +
              "): they are lost; running jobs among them are adopted from Slurm at the next start "
              "when reconciliation is on");
    return backlog.size();
}

// Flat keys, so that `colocctl status` lists them like every other line.
void Service::store_status(proto::json& status) const {
    const StoreBacklog& b = store_.backlog();
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    status["database_state"] = b.state();
    status["database_backlog"] = b.size();
    status["database_backlog_max"] = b.settings().max_records;
    status["database_backlog_oldest_s"] = b.empty() ? 0 : now - b.oldest_queued_at();
    status["database_last_error"] = b.last_error();
    status["database_last_retry"] = b.last_retry() ? proto::json(b.last_retry()) : proto::json(nullptr);
    status["database_write_failures"] = b.write_failures();
    status["database_written_late"] = b.written_late();
}

}  // namespace coloc::daemon
