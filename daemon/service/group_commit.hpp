// The service's group-commit part. A commit per request caps colocd at the disk's commit rate;
// the requests that arrive in one poll round instead share one transaction (each request's own
// writes are a savepoint inside it, see Transaction), and their replies leave only after it has
// committed: an acknowledged write is a stored write, at any rate. While the database cannot be
// written (disk full, locked, read-only...) the round's writes join the store's backlog
// (daemon/store/backlog.hpp) instead, what was decided stays in memory, and the replies say
// "queued"; between rounds the backlog is stored when a retry is due.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "daemon/service/periodic.hpp"
#include "daemon/service/state.hpp"
#include "proto/envelope.hpp"

namespace coloc::daemon {

class GroupCommit : public Periodic {
public:
    // `reload` brings what is in memory back to what is stored, after a failed commit.
    GroupCommit(State& state, std::function<void()> reload);

    // A round handled and committed whose replies may have to wait for the WAL's sync
    // (database_sync: full; daemon/store/wal_sync.hpp).
    struct PendingRound {
        std::vector<std::string> replies;  // as they leave once `ticket` is synced
        std::vector<int> versions;
        std::vector<std::string> nonces;  // each reply echoes its request's (when it has one)
        std::uint64_t ticket = 0;         // 0: nothing to wait for
        std::chrono::steady_clock::time_point committed;
    };
    // One round: `handle(i)` answers request i, whose reply speaks protocol `versions[i]`.
    // Each ok reply that wrote says "durability": "stored" or "queued". When the commit fails
    // for another reason than the database's trouble nothing of the round is acknowledged and
    // memory goes back to what is stored.
    // Each reply is written once, with its request's nonce `nonces[i]` (when given) in it.
    PendingRound start(const std::vector<int>& versions, std::vector<std::string> nonces,
                       const std::function<proto::json(std::size_t)>& handle);
    // Whether the round's ticket is synced or failed.
    bool settled(const PendingRound& round) const;
    // The round's replies once settled: as built when its commit is on disk; errors when the
    // sync failed (nothing of it is acknowledged; later writes queue until a retry).
    std::vector<std::string> settle(PendingRound&& round);
    // Readable when rounds may have settled (-1 when commits are synced by SQLite itself);
    // sync_events_seen() empties it.
    int sync_fd() const;
    void sync_events_seen();
    // The server wrote `requests` replies in `seconds` (the reply stage of each).
    void replied(std::size_t requests, double seconds);
    // Stores the backlog when a retry is due.
    void run_due(std::int64_t now_ms) override;
    // On a graceful stop: a last try to store the backlog; logs what is lost. Returns the
    // records that could not be stored.
    std::size_t store_before_stop();
    // Status lines (flat keys): the database's state and backlog.
    void status(proto::json& status) const;

    const StoreBacklog& backlog() const { return state_.store.backlog(); }
    // Tries to store the backlog at once, until it is done or fails; the records stored.
    std::size_t retry_now() { return state_.store.retry_backlog_now(); }
    // The connection colocd writes through: where the tests bring the database its trouble.
    Database& database() { return state_.store.db(); }

private:
    // Every reply of the round becomes an internal error saying `why`.
    void refuse_all(PendingRound& round, const std::string& why);

    State& state_;
    std::function<void()> reload_;
};

}  // namespace coloc::daemon
