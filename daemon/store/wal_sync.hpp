// Syncs the store's write-ahead log from a thread of its own, so that a round's commit need not
// wait for the disk in the request thread. With database_sync: full every acknowledged write must
// be on disk; a round's COMMIT writes its frames to the WAL without syncing them (SQLite's
// synchronous=NORMAL for that commit alone) and takes a ticket here; its replies leave once the
// ticket is synced. One fdatasync covers every commit written before it began, so the rounds that
// arrive while the disk is busy share the next sync (group commit across rounds), and the request
// thread decides them meanwhile.
//
// A sync that fails fails every ticket it covered and every later one: after a failed fsync the
// kernel may have dropped pages that a later sync would not report, so nothing written to the
// WAL since is trusted until reset() (the store has rewritten the database file from the WAL
// and synced it).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace coloc::daemon {

class WalSync {
public:
    // Makes the WAL's written pages durable; returns why it could not, or "" when it did. The
    // store syncs through SQLite's own file (its VFS), from this thread.
    using SyncCall = std::function<std::string()>;

    WalSync();
    ~WalSync();
    WalSync(const WalSync&) = delete;
    WalSync& operator=(const WalSync&) = delete;

    // A commit was written: its ticket (1, 2, ...), synced by the thread as soon as it can.
    std::uint64_t request();
    // The latest ticket taken; 0 before the first.
    std::uint64_t latest() const;

    enum class Outcome { Pending, Synced, Failed };
    Outcome outcome(std::uint64_t ticket) const;
    // Blocks until the ticket is synced or failed.
    Outcome wait(std::uint64_t ticket);
    // Why the failed tickets failed.
    std::string error() const;
    // Readable (an eventfd) each time tickets are settled; read_events() empties it.
    int event_fd() const { return event_fd_; }
    void read_events();
    // The WAL is trusted again (see the class); later tickets are synced afresh.
    void reset();

    // Before the first request, and whenever the file it syncs changes.
    void set_sync_call(SyncCall call);

private:
    void loop();
    void signal();
    Outcome outcome_locked(std::uint64_t ticket) const;

    int event_fd_ = -1;
    SyncCall call_;
    mutable std::mutex mutex_;
    std::condition_variable wake_, settled_;
    std::uint64_t requested_ = 0;  // the latest ticket taken
    std::uint64_t synced_ = 0;     // every ticket up to this one is on disk
    // The tickets that failed: from failed_from_ (0: none) to failed_through_, which stays
    // "forever" until reset().
    std::uint64_t failed_from_ = 0, failed_through_ = 0;
    std::string error_;
    bool stop_ = false;
    std::thread thread_;  // started at the first request
};

}  // namespace coloc::daemon
