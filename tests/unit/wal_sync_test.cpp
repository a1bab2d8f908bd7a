// The WAL's sync off the request thread (daemon/store/wal_sync.hpp): a ticket is settled only
// once a sync that began after it succeeded; a failed sync fails it and every later ticket until
// the WAL is trusted again.
#include <doctest/doctest.h>

#include <poll.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "daemon/store/wal_sync.hpp"

using coloc::daemon::WalSync;
using Outcome = WalSync::Outcome;

namespace {

// A sync the test lets through one at a time, or fails.
struct Gate {
    std::mutex mutex;
    std::condition_variable cv;
    int open = 0;     // syncs let through
    int started = 0;  // syncs begun
    bool fail = false;
    WalSync::SyncCall call() {
        return [this]() -> std::string {
            std::unique_lock lock(mutex);
            ++started;
            cv.notify_all();
            cv.wait(lock, [&] { return open > 0; });
            --open;
            return fail ? "cannot sync the WAL: disk I/O error" : "";
        };
    }
    void let_one(bool failing = false) {
        std::lock_guard lock(mutex);
        fail = failing;
        ++open;
        cv.notify_all();
    }
    void wait_started(int n) {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return started >= n; });
    }
};

bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

}  // namespace

TEST_CASE("wal sync: a ticket is pending until a sync begun after it has succeeded") {
    Gate gate;
    WalSync sync;
    sync.set_sync_call(gate.call());
    const std::uint64_t first = sync.request();
    gate.wait_started(1);  // this sync covers `first` only
    const std::uint64_t second = sync.request();
    const std::uint64_t third = sync.request();
    CHECK(sync.outcome(first) == Outcome::Pending);
    CHECK_FALSE(readable(sync.event_fd(), 50));
    gate.let_one();
    CHECK(sync.wait(first) == Outcome::Synced);
    CHECK(readable(sync.event_fd(), 1000));
    sync.read_events();
    gate.wait_started(2);  // the next sync covers both later tickets at once
    CHECK(sync.outcome(second) == Outcome::Pending);
    const std::uint64_t fourth = sync.request();  // written after that sync began
    gate.let_one();
    CHECK(sync.wait(third) == Outcome::Synced);
    CHECK(sync.outcome(second) == Outcome::Synced);
    CHECK(sync.outcome(fourth) == Outcome::Pending);
    gate.wait_started(3);
    gate.let_one();
    CHECK(sync.wait(fourth) == Outcome::Synced);
    CHECK(gate.started == 3);
    CHECK(sync.latest() == fourth);
}

TEST_CASE("wal sync: a failed sync fails its tickets and every later one until reset") {
    Gate gate;
    WalSync sync;
    sync.set_sync_call(gate.call());
    const std::uint64_t ok = sync.request();
    gate.let_one();
    REQUIRE(sync.wait(ok) == Outcome::Synced);
    const std::uint64_t lost = sync.request();
    gate.let_one(/*failing=*/true);
    CHECK(sync.wait(lost) == Outcome::Failed);
    CHECK(sync.error().find("disk I/O error") != std::string::npos);
    CHECK(sync.outcome(ok) == Outcome::Synced);
    // Written after the failure: a later sync could succeed without the lost pages.
    const std::uint64_t after = sync.request();
    CHECK(sync.outcome(after) == Outcome::Failed);
    sync.reset();
    CHECK(sync.outcome(lost) == Outcome::Failed);
    CHECK(sync.outcome(after) == Outcome::Failed);
    const std::uint64_t fresh = sync.request();
    CHECK(sync.outcome(fresh) == Outcome::Pending);
    gate.let_one();
    CHECK(sync.wait(fresh) == Outcome::Synced);
    CHECK(sync.outcome(after) == Outcome::Failed);
}
