// Where the history's writes go: into the database (a round's transaction, or their own), or,
// while the database cannot be written, into the backlog, and from there into the database
// again once a retry succeeds. Order is kept throughout: once one write is queued, every later
// one queues behind it until the whole backlog is stored, so that a job's end is never stored
// before its placement.
#include <chrono>
#include <ctime>

#include "daemon/log.hpp"
#include "daemon/store/store.hpp"

namespace coloc::daemon {

namespace {

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }
std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// How long a write waits for another process's lock before it counts as write trouble, and
// how long a retry waits: a retry runs in the request loop, so it gives up soon.
constexpr int kBusyTimeoutMs = 2000;
constexpr int kRetryBusyTimeoutMs = 100;
// Backlog records stored per transaction by a retry.
constexpr std::size_t kRetryChunk = 1000;

}  // namespace

void Store::write(StoreWrite w) {
    const bool first_of_unit = unit_writes_++ == 0;
    if (!backlog_.writable()) {
        if (first_of_unit && backlog_.full()) throw BacklogFull(backlog_.refusal());
        backlog_.push(std::move(w), now_s());
        return;
    }
    try {
        Transaction tx(*db_);
        apply(w);
        tx.commit();
    } catch (const StoreError& e) {
        if (!e.write_trouble()) throw;
        became_unwritable(e.what());
        backlog_.push(std::move(w), now_s());
        return;
    }
    if (in_round_) round_writes_.push_back(std::move(w));
}

void Store::became_unwritable(const std::string& why) {
    if (db_->in_transaction()) {
        try {
            db_->exec("ROLLBACK");
        } catch (const StoreError&) {
            // SQLite may have rolled it back itself already.
        }
    }
    if (backlog_.writable())
        log_error("database " + std::string(sqlite3_db_filename(db_->handle(), "main")) + " cannot be written: " + why +
                  "; placing from memory and queueing the history's writes");
    backlog_.failed(why, now_s(), steady_ms());
    // The round's earlier writes were rolled back with it: they go first, in their order.
    for (StoreWrite& w : round_writes_) backlog_.push(std::move(w), now_s());
    round_writes_.clear();
}

void Store::begin_round() {
    in_round_ = true;
    round_writes_.clear();
    if (!backlog_.writable()) return;  // the round's writes queue behind the backlog
    try {
        db_->exec("BEGIN IMMEDIATE");
    } catch (const StoreError& e) {
        if (!e.write_trouble()) {
            in_round_ = false;
            throw;
        }
        became_unwritable(e.what());
    }
}

Durability Store::finish_round() {
    in_round_ = false;
    if (!backlog_.writable()) return Durability::Queued;
    try {
        db_->exec("COMMIT");
    } catch (const StoreError& e) {
        if (!e.write_trouble()) throw;  // the caller abandons the round
        became_unwritable(e.what());
        return Durability::Queued;
    }
    round_writes_.clear();
    return Durability::Stored;
}

void Store::abandon_round() {
    in_round_ = false;
    round_writes_.clear();
    if (db_->in_transaction()) {
        try {
            db_->exec("ROLLBACK");
        } catch (const StoreError&) {}
    }
}

std::size_t Store::retry_backlog_if_due(int budget_ms) {
    if (!backlog_.retry_due(steady_ms())) return 0;
    return store_backlog(budget_ms);
}

std::size_t Store::retry_backlog_now() { return backlog_.writable() ? 0 : store_backlog(-1); }

// Stores the backlog from its front, a chunk per transaction, until it is empty, a chunk
// fails for write trouble (the next retry waits longer), or `budget_ms` (>= 0) has passed.
std::size_t Store::store_backlog(int budget_ms) {
    const std::int64_t t0 = steady_ms();
    backlog_.retried(now_s());
    db_->set_busy_timeout(kRetryBusyTimeoutMs);
    std::size_t stored = 0;
    try {
        while (!backlog_.empty()) {
            const std::size_t n = store_chunk(std::min(kRetryChunk, backlog_.size()));
            stored += n;
            backlog_.pop_front(n);
            if (budget_ms >= 0 && steady_ms() - t0 >= budget_ms) break;
        }
    } catch (const StoreError& e) {
        // Write trouble still: store_chunk rolled back, the records stay queued, in order.
        backlog_.failed(e.what(), now_s(), steady_ms());
    }
    db_->set_busy_timeout(kBusyTimeoutMs);
    backlog_.count_written_late(stored);
    if (backlog_.empty() && !backlog_.writable()) {
        const std::int64_t took = backlog_.drained(now_s());
        log_info("database writable again: " + std::to_string(backlog_.written_late()) +
                 " queued records written in all, the last of them after " + std::to_string(took) + " s unwritable");
    }
    return stored;
}

// The first `n` records of the backlog in one transaction; returns how many were dealt with
// (stored, or refused by the database for a reason of their own: logged and dropped, as a
// direct write would have been refused). Throws StoreError on write trouble, having rolled back.
std::size_t Store::store_chunk(std::size_t n) {
    const auto& entries = backlog_.entries();
    auto one_by_one = [&] {
        // A record the database refuses (a constraint) must not hold up the others.
        for (std::size_t i = 0; i < n; ++i) {
            try {
                Transaction tx(*db_);
                apply(entries[i].write);
                tx.commit();
            } catch (const StoreError& e) {
                if (e.write_trouble()) {
                    backlog_.pop_front(i);  // those before it are stored
                    backlog_.count_written_late(i);
                    throw;
                }
                log_error("a queued history record is refused by the database and dropped: " + std::string(e.what()));
            }
        }
        return n;
    };
    try {
        Transaction tx(*db_);
        for (std::size_t i = 0; i < n; ++i) apply(entries[i].write);
        tx.commit();
        return n;
    } catch (const StoreError& e) {
        if (e.write_trouble()) throw;  // tx rolled back
    }
    return one_by_one();
}

}  // namespace coloc::daemon
