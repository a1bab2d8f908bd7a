#include "daemon/service/group_commit.hpp"

#include <ctime>

#include "daemon/log.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

GroupCommit::GroupCommit(State& state, std::function<void()> reload) : state_(state), reload_(std::move(reload)) {}

std::vector<std::string> GroupCommit::run(const std::vector<int>& versions,
                                          const std::function<proto::json(std::size_t)>& handle) {
    Store& store = state_.store;
    std::vector<proto::json> replies;
    std::vector<bool> wrote;
    replies.reserve(versions.size());
    std::string why;
    try {
        store.begin_round();
        for (std::size_t i = 0; i < versions.size(); ++i) {
            store.begin_unit();
            replies.push_back(handle(i));
            wrote.push_back(store.unit_writes() > 0);
        }
        const Durability durability = store.finish_round();
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
    store.abandon_round();
    log_error("group commit of " + std::to_string(versions.size()) + " requests failed: " + why);
    try {
        reload_();
    } catch (const std::exception& e) {
        log_error("cannot reload the running jobs from the store: " + std::string(e.what()));
    }
    state_.counters.refused += static_cast<std::int64_t>(versions.size());
    state_.metrics.refused_by_code[proto::code::kInternal] += static_cast<std::int64_t>(versions.size());
    std::vector<std::string> out;
    for (int version : versions)
        out.push_back(proto::error_reply(proto::code::kInternal, "database: commit failed: " + why, version));
    return out;
}

void GroupCommit::run_due(std::int64_t) { state_.store.retry_backlog_if_due(); }

std::size_t GroupCommit::store_before_stop() {
    const StoreBacklog& backlog = state_.store.backlog();
    if (backlog.writable()) return 0;
    state_.store.retry_backlog_now();
    if (backlog.empty()) {
        log_info("stopping: the backlog of history writes is stored");
        return 0;
    }
    const Journal* journal = state_.store.journal();
    log_error("stopping with " + std::to_string(backlog.size()) + " history records that could not be stored (" +
              backlog.last_error() + "): " +
              (journal ? "they are in the journal " + journal->path() + " and are stored at the next start"
                       : "they are lost; running jobs among them are adopted from Slurm at the next start when "
                         "reconciliation is on"));
    return backlog.size();
}

void GroupCommit::status(proto::json& status) const {
    const StoreBacklog& b = state_.store.backlog();
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    status["database_state"] = b.state();
    status["database_backlog"] = b.size();
    status["database_backlog_max"] = b.settings().max_records;
    status["database_backlog_oldest_s"] = b.empty() ? 0 : now - b.oldest_queued_at();
    status["database_last_error"] = b.last_error();
    status["database_last_retry"] = b.last_retry() ? proto::json(b.last_retry()) : proto::json(nullptr);
    status["database_write_failures"] = b.write_failures();
    status["database_written_late"] = b.written_late();
    if (const Journal* journal = state_.store.journal()) {
        status["database_journal"] = journal->path();
        status["database_journal_used"] = journal->used();
        status["database_journal_reserve"] = journal->reserve();
        status["database_journal_error"] = state_.store.journal_trouble();
    }
}

}  // namespace coloc::daemon
