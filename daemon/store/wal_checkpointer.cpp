#include "daemon/store/wal_checkpointer.hpp"

#include "daemon/log.hpp"

namespace coloc::daemon {

WalCheckpointer::WalCheckpointer(Database& committing, const std::string& path, bool synchronous_full)
    : committing_(committing), own_(path) {
    // The checkpoint syncs as the committing connection would (synchronous is per connection).
    own_.exec(synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    thread_ = std::thread([this] { loop(); });
    sqlite3_wal_hook(committing_.handle(), &WalCheckpointer::on_commit, this);  // replaces the automatic checkpoint
}

WalCheckpointer::~WalCheckpointer() {
    sqlite3_wal_autocheckpoint(committing_.handle(), kPages);  // back to SQLite's own
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

int WalCheckpointer::on_commit(void* self, sqlite3* db, const char* name, int pages) {
    auto* me = static_cast<WalCheckpointer*>(self);
    if (pages < me->woken_at_) me->woken_at_ = 0;  // the WAL started again
    if (pages >= kInlinePages) {
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    } else if (pages >= me->woken_at_ + kPages && !me->due_.exchange(true)) {
        me->woken_at_ = pages;
        std::lock_guard lock(me->mutex_);
        me->wake_.notify_one();
    }
    return SQLITE_OK;
}

void WalCheckpointer::loop() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stop_ || due_.load(); });
        if (stop_) return;
        lock.unlock();
        // PASSIVE: never waits for the committing connection, never holds it up. What it cannot
        // copy yet (pages committed meanwhile) waits for the next one.
        const int rc = sqlite3_wal_checkpoint_v2(own_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            log_error(std::string("store: checkpoint failed: ") + sqlite3_errmsg(own_.handle()));
        due_ = false;
        lock.lock();
    }
}

}  // namespace coloc::daemon
