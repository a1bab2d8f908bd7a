// Asking Slurm what runs and pends without ever making a request wait for it: the libslurm query
// runs on its own thread (it can take Slurm's MessageTimeout when slurmctld is slow or down), and
// colocd's loop picks the answer up between requests and uses it on its own thread.
// Reconciliation and elastic slots each keep one, at their own interval.
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
    // interval_s = 0: never. The first query is due at once.
    explicit BackgroundQuery(int interval_s, Query query = slurm::load_slurm_jobs);
    ~BackgroundQuery();
    BackgroundQuery(const BackgroundQuery&) = delete;
    BackgroundQuery& operator=(const BackgroundQuery&) = delete;

    // Starts a query when one is due and none is under way; returns an answer once one came.
    // `now_ms` is a steady clock in milliseconds.
    std::optional<SlurmAnswer> poll(std::int64_t now_ms);
    bool enabled() const { return interval_ms_ > 0; }

private:
    struct Pending;
    std::int64_t interval_ms_;
    Query query_;
    std::int64_t next_due_ms_ = -1;  // -1: at the first poll
    std::shared_ptr<Pending> pending_;
};

}  // namespace coloc::daemon
