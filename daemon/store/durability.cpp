// Where the history's writes go: into the database (a round's transaction, or their own), or,
// while the database cannot be written, into the backlog, and from there into the database
// again once a retry succeeds. Order is kept throughout: once one write is queued, every later
// one queues behind it until the whole backlog is stored, so that a job's end is never stored
// before its placement.
#include <chrono>
#include <ctime>

#include "daemon/log.hpp"
#include "daemon/store/store.hpp"
#include "daemon/store/write_codec.hpp"

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
// Journal space a unit (one request's writes) may need: a unit starts only when this much is left.
constexpr std::uint64_t kUnitJournalBytes = 64 << 10;

}  // namespace

void Store::write(StoreWrite w) {
    const bool first_of_unit = unit_writes_++ == 0;
    if (backlog_.writable()) {
        if (!in_round_) end_deferred_sync();  // a write of its own is synced by SQLite
        try {
            Transaction tx(*db_);
            apply(w);
            tx.commit();
            if (in_round_) round_writes_.push_back(std::move(w));
            return;
        } catch (const StoreError& e) {
            if (!e.write_trouble()) throw;
            became_unwritable(e.what());
        }
    } else if (first_of_unit) {
        if (backlog_.full()) throw BacklogFull(backlog_.refusal());
        refuse_unit_if_journal_cannot_take_it();
    }
    // A round's writes are synced at its end, before any of them is acknowledged.
    const std::size_t backlog_mark = backlog_.size();
    const std::uint64_t journal_mark = journal_ ? journal_->mark() : 0, seq_mark = next_seq_;
    try {
        queue(std::move(w));
        if (!in_round_) sync_queued();
    } catch (...) {
        if (!in_round_) drop_queued_after(backlog_mark, journal_mark, seq_mark);
        throw;
    }
}

void Store::queue(StoreWrite w) {
    if (journal_) {
        if (!journal_trouble_.empty()) throw StoreError(journal_trouble_);
        try {
            journal_->append(next_seq_, encode_write(w));
        } catch (const JournalError& e) {
            journal_failed(e);
            throw StoreError(journal_trouble_);
        }
    }
    backlog_.push(std::move(w), now_s(), next_seq_++);
}

void Store::sync_queued() {
    if (!journal_) return;
    if (!journal_trouble_.empty()) throw StoreError(journal_trouble_);
    try {
        journal_->sync();
    } catch (const JournalError& e) {
        journal_failed(e);
        throw StoreError(journal_trouble_);
    }
}

void Store::drop_queued_after(std::size_t backlog_mark, std::uint64_t journal_mark, std::uint64_t seq_mark) {
    if (backlog_.size() <= backlog_mark) return;
    backlog_.truncate(backlog_mark);
    next_seq_ = seq_mark;  // the journal's numbers stay consecutive
    if (!journal_) return;
    try {
        journal_->rewind(journal_mark);
    } catch (const JournalError& e) {
        journal_failed(e);
    }
}

void Store::journal_failed(const JournalError& e) {
    journal_trouble_ = e.what();
    log_error(journal_trouble_ + "; while the database cannot be written, writing requests are refused");
}

void Store::refuse_unit_if_journal_cannot_take_it() {
    if (!journal_) return;
    if (!journal_trouble_.empty())
        throw BacklogFull("the database cannot be written (" + backlog_.last_error() + ") and " + journal_trouble_);
    if (!journal_->fits(kUnitJournalBytes))
        throw BacklogFull("the database cannot be written (" + backlog_.last_error() + ") and journal " +
                          journal_->path() + " is full (" + std::to_string(journal_->reserve() >> 20) +
                          " MiB reserved, database_journal_reserve_mb)");
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
    std::vector<StoreWrite> earlier = std::move(round_writes_);
    round_writes_.clear();
    for (StoreWrite& w : earlier) queue(std::move(w));
}

void Store::begin_round() {
    in_round_ = true;
    round_ticket_ = 0;
    round_writes_.clear();
    round_mark_ = {backlog_.size(), journal_ ? journal_->mark() : 0, next_seq_};
    if (!backlog_.writable()) return;  // the round's writes queue behind the backlog
    try {
        if (wal_sync_ && !deferred_sync_) {
            // The round's commit is written, not synced: wal_sync_ syncs it before any reply
            // says so. Every other commit (retries, writes outside a round) is synced by SQLite.
            db_->exec("PRAGMA synchronous=NORMAL");
            deferred_sync_ = true;
        }
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
    if (!backlog_.writable()) {
        sync_queued();  // throws: the caller abandons the round
        return Durability::Queued;
    }
    try {
        db_->exec("COMMIT");
        if (deferred_sync_) {
            watch_wal_file();
            round_ticket_ = wal_sync_->request();
        }
    } catch (const StoreError& e) {
        if (!e.write_trouble()) throw;  // the caller abandons the round
        became_unwritable(e.what());
        end_deferred_sync();
        sync_queued();
        return Durability::Queued;
    }
    end_deferred_sync();
    round_writes_.clear();
    return Durability::Stored;
}

// The WAL is synced through SQLite's own file object, so that it goes through the VFS the
// connection uses; the thread calls only its xSync, which the unix VFS makes an fdatasync.
void Store::watch_wal_file() {
    sqlite3_file* wal = nullptr;
    if (sqlite3_file_control(db_->handle(), "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK || !wal ||
        !wal->pMethods)
        wal = nullptr;
    if (wal == synced_file_) return;
    synced_file_ = wal;
    const std::string name = std::string(sqlite3_db_filename(db_->handle(), "main")) + "-wal";
    wal_sync_->set_sync_call([wal, name]() -> std::string {
        if (!wal) return "cannot sync " + name + ": SQLite holds no WAL open";
        const int rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
        return rc == SQLITE_OK ? "" : "cannot sync " + name + ": " + sqlite3_errstr(rc);
    });
}

void Store::end_deferred_sync() {
    if (!deferred_sync_ || db_->in_transaction()) return;
    try {
        db_->exec("PRAGMA synchronous=FULL");
        deferred_sync_ = false;
    } catch (const StoreError& e) {
        log_error("cannot set the database's synchronous mode back to FULL: " + std::string(e.what()));
    }
}

std::uint64_t Store::sync_ticket() const {
    if (!wal_sync_) return 0;
    // The round's own commit: its ticket, settled or not. The sync may have failed before this
    // is asked, and the failure must still reach the replies it covers.
    if (round_ticket_ != 0) return round_ticket_;
    const std::uint64_t latest = wal_sync_->latest();
    return wal_sync_->outcome(latest) == WalSync::Outcome::Pending ? latest : 0;
}

void Store::sync_failed(const std::string& why) {
    if (wal_suspect_) return;  // the same trouble, told once; the retry clears it
    wal_suspect_ = true;
    if (backlog_.writable())
        log_error("database " + std::string(sqlite3_db_filename(db_->handle(), "main")) + " cannot be synced: " + why +
                  "; the requests waiting for it are refused, later writes are queued");
    backlog_.failed(why, now_s(), steady_ms());
}

// After a failed sync the WAL may hold pages the disk lost; a checkpoint copies the whole WAL
// into the database file from memory and syncs that, after which the WAL is trusted again.
void Store::checkpoint_suspect_wal() {
    if (!wal_suspect_) return;
    const int rc = sqlite3_wal_checkpoint_v2(db_->handle(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    if (rc != SQLITE_OK)
        throw StoreError(std::string("checkpoint after a failed sync: ") + sqlite3_errmsg(db_->handle()), rc);
    wal_suspect_ = false;
    if (wal_sync_) wal_sync_->reset();
}

void Store::abandon_round() {
    in_round_ = false;
    round_writes_.clear();
    // What the round queued was never acknowledged.
    drop_queued_after(round_mark_.backlog, round_mark_.journal, round_mark_.seq);
    if (db_->in_transaction()) {
        try {
            db_->exec("ROLLBACK");
        } catch (const StoreError&) {}
    }
    end_deferred_sync();
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
    end_deferred_sync();
    std::size_t stored = 0;
    try {
        checkpoint_suspect_wal();
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
    if (backlog_.empty()) clear_journal();
    if (backlog_.empty() && !backlog_.writable() && !wal_suspect_) {
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
                mark_applied(entries[i].seq);
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
        mark_applied(entries[n - 1].seq);  // in the same transaction
        tx.commit();
        return n;
    } catch (const StoreError& e) {
        if (e.write_trouble()) throw;  // tx rolled back
    }
    return one_by_one();
}

void Store::open_journal() {
    next_seq_ = applied_seq() + 1;
    const BacklogSettings& settings = backlog_.settings();
    if (settings.journal_path.empty()) return;
    journal_ = std::make_unique<Journal>(settings.journal_path, settings.journal_reserve_bytes);
    const std::uint64_t applied = next_seq_ - 1;
    for (const Journal::Record& r : journal_->found()) {
        next_seq_ = std::max(next_seq_, r.seq + 1);
        if (r.seq <= applied) continue;  // stored before colocd stopped
        try {
            StoreWrite w = decode_write(r.payload);
            if (const auto* p = std::get_if<PlacementWrite>(&w))
                next_decision_ = std::max(next_decision_, p->placement.decision + 1);
            backlog_.push(std::move(w), now_s(), r.seq);
        } catch (const StoreError& e) {
            log_error("journal " + journal_->path() + ": record " + std::to_string(r.seq) +
                      " cannot be read and is left out: " + e.what());
        }
    }
    if (backlog_.empty()) {
        clear_journal();
        return;
    }
    log_info("journal " + journal_->path() + ": " + std::to_string(backlog_.size()) +
             " acknowledged records the database had not stored; storing them");
    store_backlog(-1);  // what the database cannot take yet stays queued, and in the journal
}

void Store::clear_journal() {
    if (!journal_ || (journal_->used() == 0 && journal_trouble_.empty())) return;
    try {
        journal_->clear();
        journal_trouble_.clear();
    } catch (const JournalError& e) {
        journal_failed(e);
    }
}

}  // namespace coloc::daemon
