// A few threads that run the independent parts of a poll round side by side: checking a munge
// credential is a round trip to munged, and the requests of one round need not wait for each
// other's. The caller's thread takes part, so a pool of n threads runs n + 1 items at once.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace coloc::daemon {

class WorkerPool {
public:
    explicit WorkerPool(int threads);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // Calls work(i) once for every i in [0, n) and returns when all calls have returned. `work`
    // must not throw. One caller at a time.
    void for_each(std::size_t n, const std::function<void(std::size_t)>& work);

private:
    void serve();
    // Runs items of the current batch until none is left; called with the lock held.
    void drain(std::unique_lock<std::mutex>& lock);

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* work_ = nullptr;
    std::size_t next_ = 0, count_ = 0, running_ = 0;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace coloc::daemon
