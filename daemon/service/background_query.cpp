#include "daemon/service/background_query.hpp"

#include <mutex>
#include <thread>

namespace coloc::daemon {

// Shared with the query thread, which may outlive its BackgroundQuery when slurmctld hangs at shutdown.
struct BackgroundQuery::Pending {
    std::mutex mu;
    bool done = false;
    bool unchanged = false;  // a watch that found nothing new
    std::int64_t started_ms = 0;
    SlurmAnswer answer;
};

BackgroundQuery::BackgroundQuery(int interval_s, Query query)
    : interval_ms_(static_cast<std::int64_t>(interval_s) * 1000),
      query_([query = std::move(query)](std::int64_t) { return std::optional<slurm::SlurmSnapshot>(query()); }) {}

BackgroundQuery::BackgroundQuery(int interval_s, int watch_ms, ChangedQuery query)
    : interval_ms_(static_cast<std::int64_t>(interval_s) * 1000),
      watch_ms_(interval_s > 0 ? watch_ms : 0),
      query_(std::move(query)) {}

BackgroundQuery::~BackgroundQuery() = default;

std::optional<SlurmAnswer> BackgroundQuery::poll(std::int64_t now_ms) {
    if (interval_ms_ <= 0) return std::nullopt;
    if (pending_) {
        std::lock_guard<std::mutex> lock(pending_->mu);
        if (!pending_->done) return std::nullopt;
        std::shared_ptr<Pending> p = std::move(pending_);
        if (p->unchanged) return std::nullopt;
        if (p->answer.ok) {
            updated_at_ = p->answer.snapshot.updated_at;
            // A fresh table, whatever asked for it: the next full read is an interval after it.
            next_due_ms_ = p->started_ms + interval_ms_;
        }
        return std::move(p->answer);
    }
    const bool full = next_due_ms_ < 0 || now_ms >= next_due_ms_;
    const bool watch = watch_ms_ > 0 && updated_at_ > 0 && now_ms >= next_watch_ms_;
    if (!full && !watch) return std::nullopt;
    if (full) next_due_ms_ = now_ms + interval_ms_;
    next_watch_ms_ = now_ms + watch_ms_;
    const std::int64_t since = full ? 0 : updated_at_;
    if (!full) ++watches_;
    pending_ = std::make_shared<Pending>();
    pending_->started_ms = now_ms;
    std::thread([p = pending_, query = query_, since] {
        SlurmAnswer a;
        bool unchanged = false;
        try {
            std::optional<slurm::SlurmSnapshot> snap = query(since);
            unchanged = !snap;
            if (snap) a.snapshot = std::move(*snap);
            a.ok = true;
        } catch (const std::exception& e) {
            a.error = e.what();
        }
        std::lock_guard<std::mutex> lock(p->mu);
        p->answer = std::move(a);
        p->unchanged = unchanged;
        p->done = true;
    }).detach();
    return std::nullopt;
}

}  // namespace coloc::daemon
