#include "daemon/service/background_query.hpp"

#include <mutex>
#include <thread>

namespace coloc::daemon {

// Shared with the query thread, which may outlive its BackgroundQuery when slurmctld hangs at shutdown.
struct BackgroundQuery::Pending {
    std::mutex mu;
    bool done = false;
    SlurmAnswer answer;
};

BackgroundQuery::BackgroundQuery(int interval_s, Query query)
    : interval_ms_(static_cast<std::int64_t>(interval_s) * 1000), query_(std::move(query)) {}

BackgroundQuery::~BackgroundQuery() = default;

std::optional<SlurmAnswer> BackgroundQuery::poll(std::int64_t now_ms) {
    if (interval_ms_ <= 0) return std::nullopt;
    if (pending_) {
        std::lock_guard<std::mutex> lock(pending_->mu);
        if (!pending_->done) return std::nullopt;
        SlurmAnswer answer = std::move(pending_->answer);
        pending_.reset();
        return answer;
    }
    if (next_due_ms_ >= 0 && now_ms < next_due_ms_) return std::nullopt;
    next_due_ms_ = now_ms + interval_ms_;
    pending_ = std::make_shared<Pending>();
    std::thread([p = pending_, query = query_] {
        SlurmAnswer a;
        try {
            a.snapshot = query();
            a.ok = true;
        } catch (const std::exception& e) {
            a.error = e.what();
        }
        std::lock_guard<std::mutex> lock(p->mu);
        p->answer = std::move(a);
        p->done = true;
    }).detach();
    return std::nullopt;
}

}  // namespace coloc::daemon
