#include "daemon/store/backlog.hpp"

#include <algorithm>
#include <ctime>

namespace coloc::daemon {

namespace {

std::string utc_time(std::int64_t epoch) {
    const std::time_t t = static_cast<std::time_t>(epoch);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The variant's alternative, or nullptr: keeps the overlay loops short.
template <class T>
const T* as(const StoreBacklog::Entry& e) {
    return std::get_if<T>(&e.write);
}

}  // namespace

std::string StoreBacklog::state() const {
    return writable() ? "writable" : "unwritable since " + utc_time(unwritable_since_);
}

std::string StoreBacklog::refusal() const {
    return "database unwritable since " + utc_time(unwritable_since_) + " (" + last_error_ + "); backlog full (" +
           std::to_string(entries_.size()) + " of " + std::to_string(settings_.max_records) +
           " records): colocd takes no new writes until it can store them";
}

void StoreBacklog::push(StoreWrite write, std::int64_t now_s, std::uint64_t seq) {
    entries_.push_back({std::move(write), now_s, seq});
}

void StoreBacklog::pop_front(std::size_t n) {
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(std::min(n, entries_.size())));
}

void StoreBacklog::failed(const std::string& why, std::int64_t now_s, std::int64_t now_ms) {
    ++write_failures_;
    last_error_ = why;
    if (unwritable_since_ == 0) {
        unwritable_since_ = now_s;
        retry_wait_s_ = settings_.retry_first_s;
    } else {
        retry_wait_s_ = std::min<std::int64_t>(retry_wait_s_ * 2, settings_.retry_max_s);
    }
    next_retry_ms_ = now_ms + retry_wait_s_ * 1000;
}

std::int64_t StoreBacklog::drained(std::int64_t now_s) {
    const std::int64_t took = now_s - unwritable_since_;
    unwritable_since_ = 0;
    retry_wait_s_ = 0;
    return took;
}

// Each overlay follows the SQL of the write it stands for (daemon/store/store.cpp).

void StoreBacklog::overlay_job(std::int64_t job_id, std::optional<JobRow>& row) const {
    for (const Entry& e : entries_) {
        if (const auto* w = as<PlacementWrite>(e); w && w->job.job_id == job_id) {
            if (!row)
                row = w->job;
            else if (row->state != JobState::Ended)
                row->state = w->job.state;
        } else if (const auto* t = as<TimesWrite>(e); t && t->job_id == job_id && row) {
            if (!row->submitted) row->submitted = t->submitted;
            if (!row->time_limit_s) row->time_limit_s = t->time_limit_s;
        } else if (const auto* s = as<StartedWrite>(e); s && s->job_id == job_id && row) {
            if (!row->start) row->start = s->time;
            if (row->state == JobState::Placed) row->state = JobState::Running;
        } else if (const auto* d = as<EndedWrite>(e); d && d->job_id == job_id && row && d->job_done) {
            row->end = d->time;
            row->exit_status = d->exit_status;
            row->elapsed_s = d->elapsed_s;
            row->state = JobState::Ended;
            row->end_reason.reset();
        } else if (const auto* c = as<ClosedWrite>(e);
                   c && c->job_id == job_id && row && c->job_done && row->state != JobState::Ended) {
            if (!row->end) row->end = c->time;
            if (!row->exit_status) row->exit_status = c->exit_status;
            row->state = JobState::Ended;
            row->end_reason = c->reason;
        }
    }
}

namespace {

// The end time of the placement of (job, node) a queued write closes; nullopt for other writes.
std::optional<std::int64_t> closes(const StoreBacklog::Entry& e, std::int64_t job_id, const std::string& node) {
    if (const auto* d = as<EndedWrite>(e); d && d->job_id == job_id && d->node == node) return d->time;
    if (const auto* c = as<ClosedWrite>(e); c && c->job_id == job_id && c->node == node) return c->time;
    return std::nullopt;
}

// A queued correction of an open placement's GPUs, applied to `p` when it is that placement's.
void moves(const StoreBacklog::Entry& e, PlacementRow& p) {
    if (const auto* m = as<MovedWrite>(e); m && m->job_id == p.job_id && m->node == p.node && !p.ended) {
        p.gpus = m->gpus;
        p.source = "fallback";
    }
}

}  // namespace

void StoreBacklog::overlay_placements(std::int64_t job_id, std::vector<PlacementRow>& rows) const {
    for (const Entry& e : entries_) {
        if (const auto* w = as<PlacementWrite>(e); w && w->placement.job_id == job_id) rows.push_back(w->placement);
        for (PlacementRow& p : rows)
            if (!p.ended) {
                if (auto t = closes(e, job_id, p.node)) p.ended = t;
                moves(e, p);
            }
    }
}

void StoreBacklog::overlay_open_placements(std::vector<PlacementRow>& rows) const {
    for (const Entry& e : entries_) {
        if (const auto* w = as<PlacementWrite>(e)) {
            rows.push_back(w->placement);
            continue;
        }
        for (PlacementRow& p : rows) moves(e, p);
        std::erase_if(rows, [&](const PlacementRow& p) { return closes(e, p.job_id, p.node).has_value(); });
    }
}

void StoreBacklog::overlay_params(const std::string& name, std::optional<std::string>& params) const {
    for (const Entry& e : entries_) {
        if (const auto* p = as<ParamsWrite>(e); p && p->name == name) params = p->json;
        if (const auto* o = as<ObservationWrite>(e); o && o->model_name == name) params = o->params_json;
    }
}

void StoreBacklog::overlay_advice(std::int64_t decision, std::optional<std::string>& advice) const {
    for (const Entry& e : entries_)
        if (const auto* a = as<AdviceWrite>(e); a && a->decision == decision) advice = a->advice;
}

}  // namespace coloc::daemon
