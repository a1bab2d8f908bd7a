// Group commit. A commit per request caps colocd at the disk's commit rate; the requests that
// arrive in one poll round instead share one transaction (each request's own writes are a
// savepoint inside it, see Transaction), and their replies leave only after it has committed:
// an acknowledged write is a stored write, at any rate.
#include "daemon/log.hpp"
#include "daemon/service.hpp"
#include "proto/errors.hpp"

namespace coloc::daemon {

std::vector<std::string> Service::handle_round(const std::vector<std::string_view>& requests) {
    std::vector<std::string> replies;
    replies.reserve(requests.size());
    // Envelopes and credentials first, side by side; then the handlers, in order, in one
    // transaction.
    std::vector<Opened> opened(requests.size());
    openers_.for_each(requests.size(), [&](std::size_t i) { opened[i] = open(requests[i]); });
    std::string why;
    try {
        Transaction round(store_.db());
        for (Opened& o : opened) replies.push_back(dispatch(std::move(o)));
        round.commit();
        return replies;
    } catch (const std::exception& e) {
        why = e.what();
    }
    // Nothing of this round may be acknowledged; what is in memory follows what is stored.
    log_error("group commit of " + std::to_string(requests.size()) + " requests failed: " + why);
    try {
        reload_from_store();
    } catch (const std::exception& e) {
        log_error("cannot reload the running jobs from the store: " + std::string(e.what()));
    }
    counters_.refused += static_cast<std::int64_t>(requests.size());
    metrics_.refused_by_code[proto::code::kInternal] += static_cast<std::int64_t>(requests.size());
    return std::vector<std::string>(requests.size(),
                                    proto::error_reply(proto::code::kInternal, "database: commit failed: " + why));
}

void Service::reload_from_store() {
    cluster_ = place::ClusterState(cfg_.topology);
    recover_running_jobs();
    load_learned_params();
}

}  // namespace coloc::daemon
