// Bounds colocd's wait for one answer of slurmctld. colocd serves requests on one thread, and
// the plugin waits for its answer only a few hundred milliseconds (then starts the job without
// it): the query runs on a thread of its own, and the serving thread waits for it no longer than
// it is told. An answer that comes later is dropped; while a query is still out, the next ask
// does not start another (slurmctld is not answering) and fails at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace coloc::slurm {

template <class T>
class BoundedLookup {
public:
    using Query = std::function<T(std::int64_t job_id)>;
    explicit BoundedLookup(Query query) : query_(std::move(query)) {}
    BoundedLookup(const BoundedLookup&) = delete;
    BoundedLookup& operator=(const BoundedLookup&) = delete;

    struct Answer {
        std::optional<T> value;  // set when slurmctld told in time
        std::string error;       // why not, otherwise
        double seconds = 0;      // how long the caller waited
    };

    Answer ask(std::int64_t job_id, std::chrono::milliseconds wait) {
        const auto t0 = std::chrono::steady_clock::now();
        Answer a;
        if (pending_) {
            std::lock_guard<std::mutex> lock(pending_->mu);
            if (!pending_->done) {
                a.error = "slurmctld has not answered an earlier lookup yet";
                return a;
            }
        }
        pending_ = std::make_shared<Pending>();
        std::thread([p = pending_, query = query_, job_id] {
            std::optional<T> value;
            std::string error;
            try {
                value = query(job_id);
            } catch (const std::exception& e) {
                error = e.what();
            }
            std::lock_guard<std::mutex> lock(p->mu);
            p->value = std::move(value);
            p->error = std::move(error);
            p->done = true;
            p->done_cv.notify_all();
        }).detach();
        std::unique_lock<std::mutex> lock(pending_->mu);
        if (pending_->done_cv.wait_for(lock, wait, [&] { return pending_->done; })) {
            a.value = std::move(pending_->value);
            a.error = pending_->error;
        } else {
            a.error = "slurmctld did not answer within " + std::to_string(wait.count()) + " ms";
        }
        a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return a;
    }

private:
    // Shared with the query's thread, which outlives a wait that gave up on it.
    struct Pending {
        std::mutex mu;
        std::condition_variable done_cv;
        bool done = false;
        std::optional<T> value;
        std::string error;
    };
    Query query_;
    std::shared_ptr<Pending> pending_;  // the query still out, if any
};

}  // namespace coloc::slurm
