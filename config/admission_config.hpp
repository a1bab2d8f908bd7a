// The `admission:` setting of colocd.yaml (colocd.yaml(5)); what it means is in
// daemon/steering/admission.hpp.
#pragma once

#include <string>

#include "place/arrival_window.hpp"

namespace coloc::daemon {

struct AdmissionConfig {
    bool enabled = true;             // at start; `colocctl admission on|off` switches at runtime
    int interval_s = 1;              // Slurm's pending jobs are read (and jobs released or held) this often
    int watch_ms = 250;              // and between reads slurmctld is asked this often whether a job changed
                                     // (0 = never): a new job is weighed within this, not a whole interval
    int lease_s = 60;                // a held job's BeginTime is at most this far ahead: it starts by itself
                                     // that long after colocd stops renewing it
    int max_updates_per_round = 64;  // job updates sent to Slurm per round (rate limit)
    int max_pending_jobs = 200;      // the head of Slurm's queue weighed per round (a round's cost)
    // The arrivals the sharing rule expects are those of the last one to two windows (0: every
    // submission since colocd started).
    int arrival_window_s = place::kArrivalWindowS;
    // The share (0 to 1) of the sharing rule's decisions that may release a job onto a pairing
    // only its margin holds back (place/sharing_rule.hpp: exploration); 0, the default, never:
    // on bench/replay-quality exploring cost more than it taught.
    double explore_share = 0;
    // Where colocd writes, after each round, the GPUs a job submitted now may take at once
    // (daemon/steering/standing_offers.hpp); job_submit.lua reads the same path. Empty = none:
    // every bind job waits for a round.
    std::string offers_file = "/run/coloc/offers";
};

}  // namespace coloc::daemon
