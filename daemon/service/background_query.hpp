// Asking Slurm what runs and pends without ever making a request wait for it: the libslurm query
// runs on its own thread (it can take Slurm's MessageTimeout when slurmctld is slow or down), and
// colocd's loop picks the answer up between requests and uses it on its own thread.
// Reconciliation and admission (or elastic slots) each keep one, at their own interval.
//
// Admission also watches: between full reads it asks slurmctld every watch interval whether any
// job changed since the last answer, which slurmctld answers without packing its job table, and
// answers with the new table as soon as something did. A job that was just submitted is then
// weighed within a watch interval, not a full one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "slurm/jobs.hpp"

namespace coloc::daemon {

struct SlurmAnswer {
    bool ok = false;
    slurm::SlurmSnapshot snapshot;
    std::string error;  // when !ok
};

class BackgroundQuery {
public:
    using Query = std::function<slurm::SlurmSnapshot()>;
    // Given a snapshot's updated_at (0 = none yet): the job table, or nullopt when nothing changed.
    using ChangedQuery = std::function<std::optional<slurm::SlurmSnapshot>(std::int64_t updated_at)>;
    // interval_s = 0: never. The first query is due at once.
    explicit BackgroundQuery(int interval_s, Query query = slurm::load_slurm_jobs);
    // A full read every interval_s, and a watch every watch_ms between them (0 = none).
    BackgroundQuery(int interval_s, int watch_ms, ChangedQuery query = slurm::load_slurm_jobs_changed_since);
    ~BackgroundQuery();
    BackgroundQuery(const BackgroundQuery&) = delete;
    BackgroundQuery& operator=(const BackgroundQuery&) = delete;

    // Starts a query when one is due and none is under way; returns an answer once one came
    // (a watch that found nothing changed is no answer). `now_ms` is a steady clock in ms.
    std::optional<SlurmAnswer> poll(std::int64_t now_ms);
    bool enabled() const { return interval_ms_ > 0; }
    bool querying() const { return pending_ != nullptr; }  // asked, its answer not yet picked up
    std::int64_t watches() const { return watches_; }      // watch queries asked, for status

private:
    struct Pending;
    std::int64_t interval_ms_;
    std::int64_t watch_ms_ = 0;
    ChangedQuery query_;
    std::int64_t next_due_ms_ = -1;    // the next full read; -1: at the first poll
    std::int64_t next_watch_ms_ = -1;  // the next watch
    std::int64_t updated_at_ = 0;      // the last answer's job table (0: none, so no watch yet)
    std::int64_t watches_ = 0;
    std::shared_ptr<Pending> pending_;
};

}  // namespace coloc::daemon
