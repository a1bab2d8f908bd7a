// Admission: colocd decides, per pending job of a bind partition, whether it may start now,
// and on which node, through two fields of the job that Slurm itself applies.
//
//   - job_submit.lua gives every such job that has a time limit a BeginTime a short lease ahead
//     (and the tag coloc_gate in its AdminComment): it pends (Reason BeginTime) until colocd
//     weighs it, and starts by itself when the lease runs out, so a colocd that is stopped,
//     killed or cut off from slurmctld delays a job by at most one lease, never for good.
//   - Each round colocd weighs the gated jobs in Slurm's order (priority, then submission)
//     where the engine would place them now, by the sharing rule (pending_weigh.hpp):
//       GPUs of its own, or a shared slot that pays  -> released: BeginTime now, and its node
//         list set to the engine's node (unless the user named nodes), so that Slurm starts it
//         where colocd weighed it;
//       a shared slot that does not pay, or no place -> held: its lease renewed.
//     A released job goes onto the round's copy of the cluster, so the jobs behind it see it; so
//     does a job that is no longer gated (one released in an earlier round that has not started
//     yet, or one job_submit.lua let pass), where the engine would place it: Slurm starts it
//     whatever the sharing rule says of it. So does a job Slurm started whose launch colocd has
//     not heard yet (PendingJob::running, first in the list), on its nodes: else its GPUs look
//     idle for the few hundred ms until its launch, and a job is released onto them.
//   - A job held is not given the backfill reservation Slurm would give it, so colocd keeps
//     it: a job behind it that would take a GPU idle by the held job's expected start (idle
//     now, or shared with jobs that end by then) is released only when its time limit ends
//     before that start, and the first held job is the head whose delay
//     the sharing rule prices for a job behind it that would share (as the replay's backfill
//     gives its first queued job's reservation).
//   - A job colocd gave a node that is still pending a lease later gets its node list cleared;
//     so does a job that took a standing offer (standing_offers.hpp) and has not started.
// Slurm's priorities decide who is weighed first; priority/basic and multifactor keep a job's
// priority across BeginTime changes (checked on 22.05). This file decides (pure, no I/O).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/admission_config.hpp"
#include "daemon/steering/pending_weigh.hpp"

namespace coloc::daemon {

struct AdmissionVerdict {
    std::int64_t id = 0;
    std::int64_t uid = -1;
    bool gated = false;    // colocd's to decide (the rest are counted as what Slurm starts first)
    bool release = false;  // may start now
    std::string node;      // the node its node list is set to; empty = Slurm picks
    std::string why;
    bool explores = false;  // released onto a pairing only the rule's margin held (exploration)
    bool offered = false;   // took a standing offer at submission (standing_offers.hpp)
};

// The verdict on each job of `pending` (every pending bind job, Slurm's order). `state` is
// copied: released jobs are added to the copy. `demand`: the jobs submitted and queued, as the
// round's read of Slurm's queue shows them (null: the rule expects no arrivals and the engine
// prices no fragmentation). `exploration`: the account held pairings may be tried from, kept
// across rounds (null: none), as the replay keeps it across decisions. `planned`, when given,
// receives the copy: the cluster with the jobs released and those Slurm will start.
std::vector<AdmissionVerdict> plan_admission(const place::ClusterState& state, const place::Policy& policy,
                                             const place::TimeOutlook& time, const std::vector<int>& nodes,
                                             const std::vector<PendingJob>& pending,
                                             const place::QueueDemand* demand = nullptr,
                                             place::ExplorationBudget* exploration = nullptr,
                                             place::ClusterState* planned = nullptr);

// One change of a pending job: its BeginTime, and its node list when set ("" clears it).
struct JobUpdate {
    std::int64_t job = 0;
    std::int64_t begin = 0;
    std::optional<std::string> nodes;
};

// What admission keeps between rounds: the jobs it holds (the BeginTime it last set) and those
// it gave a node.
class AdmissionGate {
public:
    explicit AdmissionGate(AdmissionConfig cfg) : cfg_(cfg), enabled_(cfg.enabled) {
        exploration_.share = cfg.explore_share;
    }
    bool enabled() const { return enabled_; }
    const AdmissionConfig& config() const { return cfg_; }
    // Switching off releases every job held.
    std::vector<JobUpdate> set_enabled(bool on, std::int64_t now_s);
    // The updates a round's verdicts ask for: releases first, then leases about to run out
    // (renewed once less than half a lease is left), then node lists to clear; at most
    // max_updates_per_round (the rest at the next round).
    std::vector<JobUpdate> apply(const std::vector<AdmissionVerdict>& verdicts, std::int64_t now_s);
    // Every job held now, released (what colocd gives back when it stops).
    std::vector<JobUpdate> release_all(std::int64_t now_s);

    const std::vector<AdmissionVerdict>& verdicts() const { return verdicts_; }
    const AdmissionVerdict* verdict_of(std::int64_t job) const;
    std::size_t held() const { return lease_until_.size(); }
    std::int64_t rounds() const { return rounds_; }
    std::int64_t released() const { return released_; }
    std::int64_t last_round_s() const { return last_round_s_; }
    // The rounds' exploration account (null when explore_share is 0).
    place::ExplorationBudget* exploration() { return exploration_.share > 0 ? &exploration_ : nullptr; }
    const place::ExplorationBudget& exploration_account() const { return exploration_; }

private:
    AdmissionConfig cfg_;
    bool enabled_;
    std::map<std::int64_t, std::int64_t> lease_until_;  // held jobs: the BeginTime colocd set
    std::map<std::int64_t, std::int64_t> pinned_at_;    // released with a node list (or seen with an offer's): when
    std::vector<AdmissionVerdict> verdicts_;
    std::map<std::int64_t, AdmissionVerdict> last_seen_;  // the latest verdict per job, for explain
    std::int64_t rounds_ = 0, released_ = 0, last_round_s_ = 0;
    place::ExplorationBudget exploration_;
};

}  // namespace coloc::daemon
