// Checkpoints the store's write-ahead log from a thread and a connection of its own. A
// checkpoint copies the WAL's pages into the database file and syncs it: SQLite would otherwise
// do that on the committing connection, in the middle of a commit, so that every thousandth
// commit (and every reply waiting on it) pays for the copy and the sync. The committing
// connection's WAL hook wakes this thread instead; only if the WAL grows past kInlinePages (this
// thread cannot keep up) does the committing connection checkpoint itself, as SQLite would.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/sqlite.hpp"

namespace coloc::daemon {

class WalCheckpointer {
public:
    // Watches the commits of `committing` (a connection in WAL mode to `path`).
    WalCheckpointer(Database& committing, const std::string& path, bool synchronous_full);
    ~WalCheckpointer();
    WalCheckpointer(const WalCheckpointer&) = delete;
    WalCheckpointer& operator=(const WalCheckpointer&) = delete;

    static constexpr int kPages = 1000;          // SQLite's own automatic checkpoint threshold
    static constexpr int kInlinePages = 50'000;  // about 200 MB of WAL: checkpoint on the spot

private:
    static int on_commit(void* self, sqlite3* db, const char* name, int pages);
    void loop();

    Database& committing_;
    Database own_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<bool> due_{false};
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace coloc::daemon
