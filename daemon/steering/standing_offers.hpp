// Standing offers: GPUs a job submitted now may take at once, without waiting for an admission
// round. Admission gates a job until colocd weighs it, and Slurm starts a released job only at
// its next scheduling pass: on a quiet cluster every job would start half a second later than
// without coloc, for a verdict that is known before it is submitted. A job that finds GPUs of
// its own is never held by the sharing rule, so colocd says after each round which GPUs those
// are, and job_submit.lua, at submission, lets a one-node job that fits them pass ungated with
// its node list set to the node (tagged coloc_offer), so that Slurm starts it at once there.
//
// Offers are made only while no job colocd holds is waiting (a new job must not pass one in
// Slurm's order), and count as taken what the round's plan gives the pending jobs (released,
// and those in Slurm's hands) and what runs in Slurm that colocd has not seen launch yet.
// job_submit.lua takes each offer once: a job taken after the queue read the offers rest on
// (`as_of`) is counted against them until a later read sees it. Offers expire (`expires`) when
// colocd stops writing them: then every job is gated as before. This file decides (pure, no I/O).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/steering/admission.hpp"
#include "place/cluster_state.hpp"

namespace coloc::daemon {

struct StandingOffer {
    int node = -1;
    int gpus = 0;  // idle GPUs a job may take there (one slot each)
};

// The offers after a round of `round` (the jobs plan_admission weighed): none while a gated job
// is held; else, per node of `nodes`, the GPUs idle on `planned` (the round's copy of the
// cluster, with the jobs it released and those Slurm will start) less the slots there of the
// jobs Slurm runs that colocd has not seen launch (PendingJob::running): the plan put them where
// the engine would, and their launch may take other GPUs of the node. The nodes with the fewest
// first (a job takes the first that fits: whole nodes stay free for jobs that need them), then
// in node order.
std::vector<StandingOffer> standing_offers(const place::ClusterState& planned, const std::vector<int>& nodes,
                                           const std::vector<AdmissionVerdict>& verdicts,
                                           const std::vector<PendingJob>& round);

// The file job_submit.lua reads: `as_of` (epoch seconds: the queue read the offers rest on),
// `expires` (epoch seconds: after it, no offer holds), then one `offer NODE GPUS` line per offer.
std::string offers_text(const std::vector<StandingOffer>& offers, const place::Topology& topo, std::int64_t as_of,
                        std::int64_t expires);

}  // namespace coloc::daemon
