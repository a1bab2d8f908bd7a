// The writes colocd could not store yet. When the database cannot be written (disk full,
// locked, read-only, I/O error) colocd keeps placing from memory and keeps each write it owes
// the history here, in order, until a retry stores them: a bounded queue, the state of the
// trouble (since when, the last error, the next retry) and what the history would read if the
// queue were stored already (the overlay), so that colocd's own decisions see its own writes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "daemon/store/rows.hpp"

namespace coloc::daemon {

// One write of the history, with everything needed to make it later.
struct PlacementWrite {
    JobRow job;
    PlacementRow placement;  // its decision id is fixed when the write is made
    std::vector<ColocationRow> opened;
};
struct StartedWrite {
    std::int64_t job_id = 0, time = 0;
};
struct EndedWrite {
    std::int64_t job_id = 0;
    std::string node;
    std::int64_t time = 0;
    int exit_status = 0;
    double elapsed_s = 0;
    bool job_done = true;
};
struct ClosedWrite {  // an end colocd learned from Slurm
    std::int64_t job_id = 0;
    std::string node;
    std::int64_t time = 0;
    std::optional<int> exit_status;
    bool job_done = true;
    std::string reason;
};
struct ParamsWrite {
    std::string name, json;
    std::int64_t time = 0;
};
struct ObservationWrite {
    std::int64_t job_id = 0, time = 0;
    double iter_time_s = 0;
    std::string neighbours_json, model_name, params_json;
};
struct SoloRunWrite {  // a figure of a job that ran alone (model/learned_profiles.hpp)
    std::string key;
    bool learned = false;
    std::int64_t job_id = 0, time = 0;
    std::optional<double> iter_time_s, runtime_s;  // the one given; the other is kept
};
struct AdviceWrite {  // what node steering advised for a decision
    std::int64_t decision = 0, job_id = 0;
    std::string node, advice;
};
struct MovedWrite {  // the open placement of (job, node) runs on other GPUs than recorded
    std::int64_t job_id = 0;
    std::string node;
    std::vector<int> gpus;
};
// A job's submit time and time limit, read from Slurm's queue after its launch (a job that
// started between two reads launched before colocd knew them); kept where none was stored.
struct TimesWrite {
    std::int64_t job_id = 0, submitted = 0;
    std::optional<double> time_limit_s;
};
using StoreWrite = std::variant<PlacementWrite, StartedWrite, EndedWrite, ClosedWrite, ParamsWrite, ObservationWrite,
                                AdviceWrite, SoloRunWrite, MovedWrite, TimesWrite>;

// A request that would write while the backlog is full; colocd answers it `unavailable`.
class BacklogFull : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct BacklogSettings {
    std::size_t max_records = 100000;
    int retry_first_s = 1;  // the first retry; each failed one doubles the wait...
    int retry_max_s = 30;   // ...up to this
    // The backlog's copy on disk (daemon/store/journal.hpp) and the space reserved for it; no
    // path: the backlog is in memory only (tests, tools).
    std::string journal_path;
    std::uint64_t journal_reserve_bytes = 64ull << 20;
};

class StoreBacklog {
public:
    struct Entry {
        StoreWrite write;
        std::int64_t queued_at = 0;  // epoch seconds
        std::uint64_t seq = 0;       // its number in the journal
    };

    explicit StoreBacklog(BacklogSettings settings) : settings_(settings) {}

    // Writable: writes go to the database. Unwritable (since a write failed for write trouble,
    // until the backlog is stored): every write joins the queue, behind the earlier ones.
    bool writable() const { return unwritable_since_ == 0; }
    std::int64_t unwritable_since() const { return unwritable_since_; }
    bool empty() const { return entries_.empty(); }
    std::size_t size() const { return entries_.size(); }
    bool full() const { return entries_.size() >= settings_.max_records; }
    const BacklogSettings& settings() const { return settings_; }
    // "writable", or "unwritable since <UTC time>".
    std::string state() const;
    // Why a new writing request is refused now; for BacklogFull.
    std::string refusal() const;

    void push(StoreWrite write, std::int64_t now_s, std::uint64_t seq);
    const std::deque<Entry>& entries() const { return entries_; }
    void pop_front(std::size_t n);
    // Keeps the first `n` entries: those after them were never acknowledged (an abandoned round).
    void truncate(std::size_t n) { entries_.resize(std::min(n, entries_.size())); }

    // A write or a retry failed for write trouble at `now_ms` (steady clock): the database is
    // unwritable (from now, unless it was already), and the next retry waits longer.
    void failed(const std::string& why, std::int64_t now_s, std::int64_t now_ms);
    // The whole backlog is stored: writable again. Returns the seconds it was unwritable.
    std::int64_t drained(std::int64_t now_s);
    bool retry_due(std::int64_t now_ms) const { return !writable() && now_ms >= next_retry_ms_; }
    void retried(std::int64_t now_s) { last_retry_ = now_s; }

    std::int64_t oldest_queued_at() const { return entries_.empty() ? 0 : entries_.front().queued_at; }
    const std::string& last_error() const { return last_error_; }
    std::int64_t last_retry() const { return last_retry_; }
    std::int64_t write_failures() const { return write_failures_; }
    std::int64_t written_late() const { return written_late_; }
    void count_written_late(std::size_t n) { written_late_ += static_cast<std::int64_t>(n); }

    // The overlay: what the history's reads would return with the queue stored, applied to
    // what the database returned.
    void overlay_job(std::int64_t job_id, std::optional<JobRow>& row) const;
    void overlay_placements(std::int64_t job_id, std::vector<PlacementRow>& rows) const;
    void overlay_open_placements(std::vector<PlacementRow>& rows) const;
    void overlay_params(const std::string& name, std::optional<std::string>& params) const;
    void overlay_advice(std::int64_t decision, std::optional<std::string>& advice) const;

private:
    BacklogSettings settings_;
    std::deque<Entry> entries_;
    std::int64_t unwritable_since_ = 0;
    std::int64_t retry_wait_s_ = 0;
    std::int64_t next_retry_ms_ = 0;
    std::int64_t last_retry_ = 0;
    std::string last_error_;
    std::int64_t write_failures_ = 0;
    std::int64_t written_late_ = 0;
};

}  // namespace coloc::daemon
