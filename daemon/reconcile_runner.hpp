// When to ask Slurm, without ever making a request wait for it: the libslurm query runs on its
// own thread (it can take Slurm's MessageTimeout when slurmctld is slow or down), and colocd's
// loop picks the answer up between requests and applies it on its own thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "slurm/jobs.hpp"

namespace coloc::daemon {

using slurm::load_slurm_jobs;
using slurm::SlurmSnapshot;

struct SlurmAnswer {
    bool ok = false;
    SlurmSnapshot snapshot;
    std::string error;  // when !ok
};

class ReconcileRunner {
public:
    using Query = std::function<SlurmSnapshot()>;
    // interval_s = 0: never. The first query is due at once (reconciliation on start).
    explicit ReconcileRunner(int interval_s, Query query = load_slurm_jobs);
    ~ReconcileRunner();
    ReconcileRunner(const ReconcileRunner&) = delete;
    ReconcileRunner& operator=(const ReconcileRunner&) = delete;

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
