#include "daemon/service/group_commit.hpp"

#include <chrono>
#include <ctime>

#include "daemon/log.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

GroupCommit::GroupCommit(State& state, std::function<void()> reload) : state_(state), reload_(std::move(reload)) {}

GroupCommit::PendingRound GroupCommit::start(const std::vector<int>& versions, std::vector<std::string> nonces,
                                             const std::function<proto::json(std::size_t)>& handle) {
    Store& store = state_.store;
    PendingRound round;
    round.versions = versions;
    round.nonces = std::move(nonces);
    round.nonces.resize(versions.size());
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
        const auto t0 = std::chrono::steady_clock::now();
        const Durability durability = store.finish_round();
        round.committed = std::chrono::steady_clock::now();
        const double commit_s = std::chrono::duration<double>(round.committed - t0).count();
        round.replies.reserve(replies.size());
        for (std::size_t i = 0; i < replies.size(); ++i) {
            if (wrote[i] && replies[i].value("ok", false)) replies[i][proto::kDurability] = to_string(durability);
            if (!round.nonces[i].empty()) replies[i][proto::kNonce] = round.nonces[i];
            round.replies.push_back(replies[i].dump());
            state_.metrics.request_stages.commit.observe(commit_s);
        }
        round.ticket = store.sync_ticket();
        return round;
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
    refuse_all(round, "database: commit failed: " + why);
    round.committed = std::chrono::steady_clock::now();
    round.ticket = store.sync_ticket();  // no reply overtakes an earlier round's
    return round;
}

bool GroupCommit::settled(const PendingRound& round) const {
    const WalSync* sync = state_.store.wal_sync();
    return round.ticket == 0 || !sync || sync->outcome(round.ticket) != WalSync::Outcome::Pending;
}

std::vector<std::string> GroupCommit::settle(PendingRound&& round) {
    WalSync* sync = state_.store.wal_sync();
    if (round.ticket != 0 && sync && sync->wait(round.ticket) == WalSync::Outcome::Failed) {
        const std::string why = sync->error();
        state_.store.sync_failed(why);
        refuse_all(round, "database: " + why);
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - round.committed).count();
    for (std::size_t i = 0; i < round.replies.size(); ++i) state_.metrics.request_stages.sync.observe(waited);
    return std::move(round.replies);
}

void GroupCommit::replied(std::size_t requests, double seconds) {
    for (std::size_t i = 0; i < requests; ++i) state_.metrics.request_stages.reply.observe(seconds);
}

void GroupCommit::refuse_all(PendingRound& round, const std::string& why) {
    const auto n = static_cast<std::int64_t>(round.versions.size());
    state_.counters.refused += n;
    state_.metrics.refused_by_code[proto::code::kInternal] += n;
    round.replies.clear();
    for (std::size_t i = 0; i < round.versions.size(); ++i) {
        proto::json reply = proto::error_reply_object(proto::code::kInternal, why, round.versions[i]);
        if (!round.nonces[i].empty()) reply[proto::kNonce] = round.nonces[i];
        round.replies.push_back(reply.dump());
    }
}

int GroupCommit::sync_fd() const {
    const WalSync* sync = state_.store.wal_sync();
    return sync ? sync->event_fd() : -1;
}

void GroupCommit::sync_events_seen() {
    if (WalSync* sync = state_.store.wal_sync()) sync->read_events();
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
