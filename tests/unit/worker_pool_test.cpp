#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "daemon/worker_pool.hpp"

using coloc::daemon::WorkerPool;

TEST_CASE("worker pool: every item runs once, side by side, and for_each returns after the last") {
    WorkerPool pool(3);
    for (std::size_t n : {0u, 1u, 2u, 7u, 64u}) {
        std::vector<std::atomic<int>> runs(n);
        std::atomic<int> at_once{0}, most{0};
        pool.for_each(n, [&](std::size_t i) {
            const int now = ++at_once;
            for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {}
            std::this_thread::sleep_for(std::chrono::milliseconds(n > 2 ? 2 : 0));  // long enough to overlap
            ++runs[i];
            --at_once;
        });
        for (std::size_t i = 0; i < n; ++i) CHECK(runs[i] == 1);
        if (n >= 7) CHECK(most > 1);  // four threads (three and the caller's) shared the work
    }
}
