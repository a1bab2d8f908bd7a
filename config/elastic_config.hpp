// The `elastic_slots:` setting of colocd.yaml (colocd.yaml(5)); what it means is in
// daemon/steering/elastic_slots.hpp.
#pragma once

namespace coloc::daemon {

struct ElasticConfig {
    bool enabled = false;            // at start; `colocctl elastic on|off` switches at runtime
    int interval_s = 5;              // Slurm's pending jobs are read (and counts sent) at most this often
    int max_updates_per_round = 64;  // node updates sent to Slurm per round (rate limit)
    int max_pending_jobs = 200;      // the head of Slurm's queue weighed per round (a round's cost)
};

}  // namespace coloc::daemon
