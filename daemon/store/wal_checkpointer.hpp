// Checkpoints the store's write-ahead log from a thread and a connection of its own. A
// checkpoint copies the WAL's pages into the database file and syncs it: SQLite would otherwise
// do that on the committing connection, in the middle of a commit, so that every thousandth
// commit (and every reply waiting on it) pays for the copy and the sync. The committing
// connection's WAL hook wakes this thread instead, once per kPages pages added to the WAL.
// Copying beside a writer rarely catches up with it, and only a fully copied WAL starts again
// from its beginning; so when the WAL reaches kInlinePages the committing connection copies
// the few pages left itself, between two rounds, and its next write starts the WAL afresh.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/store/sqlite.hpp"

namespace coloc::daemon {

class WalCheckpointer {
public:
    // Watches the commits of `committing` (a connection in WAL mode to `path`).
    WalCheckpointer(Database& committing, const std::string& path, bool synchronous_full);
    ~WalCheckpointer();
    WalCheckpointer(const WalCheckpointer&) = delete;
    WalCheckpointer& operator=(const WalCheckpointer&) = delete;

    static constexpr int kPages = 1000;         // SQLite's own automatic checkpoint threshold
    static constexpr int kInlinePages = 8'000;  // about 32 MB of WAL: finish the copy on the spot

private:
    static int on_commit(void* self, sqlite3* db, const char* name, int pages);
    void loop();

    Database& committing_;
    Database own_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<bool> due_{false};
    int woken_at_ = 0;  // WAL pages when this thread was last woken (committing thread only)
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace coloc::daemon
