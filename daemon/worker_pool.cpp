#include "daemon/worker_pool.hpp"

namespace coloc::daemon {

WorkerPool::WorkerPool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { serve(); });
}

WorkerPool::~WorkerPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
}

void WorkerPool::drain(std::unique_lock<std::mutex>& lock) {
    while (work_ && next_ < count_) {
        const std::size_t i = next_++;
        const auto* work = work_;
        ++running_;
        lock.unlock();
        (*work)(i);
        lock.lock();
        if (--running_ == 0 && next_ >= count_) done_.notify_all();
    }
}

void WorkerPool::serve() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stop_ || (work_ && next_ < count_); });
        if (stop_) return;
        drain(lock);
    }
}

void WorkerPool::for_each(std::size_t n, const std::function<void(std::size_t)>& work) {
    if (n == 0) return;
    if (n == 1 || threads_.empty()) {  // nothing to overlap: no hand-off
        for (std::size_t i = 0; i < n; ++i) work(i);
        return;
    }
    std::unique_lock lock(mutex_);
    work_ = &work;
    next_ = 0;
    count_ = n;
    wake_.notify_all();
    drain(lock);
    done_.wait(lock, [&] { return running_ == 0 && next_ >= count_; });
    work_ = nullptr;
}

}  // namespace coloc::daemon
