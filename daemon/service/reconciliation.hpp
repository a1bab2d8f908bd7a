// The service's reconciliation part: with what Slurm says runs, colocd closes what ended while it
// was away and adopts what it never placed. Slurm is asked off the serving thread
// (BackgroundQuery); its answer is applied between requests, with the rules of
// plan_reconciliation (daemon/reconcile.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "daemon/service/background_query.hpp"
#include "daemon/service/periodic.hpp"
#include "daemon/service/state.hpp"
#include "proto/envelope.hpp"

namespace coloc::daemon {

class Reconciliation : public Periodic {
public:
    explicit Reconciliation(State& state);

    // Picks up Slurm's answer and applies it, and starts the next query when one is due. Never
    // waits for Slurm.
    void run_due(std::int64_t now_ms) override;

    // What one reconciliation did; `colocctl status` shows the last one.
    struct Summary {
        std::int64_t time = 0;        // epoch seconds of Slurm's answer, 0 = never
        std::int64_t slurm_jobs = 0;  // jobs slurmctld listed
        std::int64_t closed = 0, adopted = 0;
        std::string error;  // the last query's failure, empty when it worked
    };
    Summary reconcile(const slurm::SlurmSnapshot& slurm);
    // Status lines (flat keys, so that `colocctl status` lists them like every other line).
    void status(proto::json& status) const;

private:
    State& state_;
    BackgroundQuery slurm_jobs_;
    Summary last_;
};

}  // namespace coloc::daemon
