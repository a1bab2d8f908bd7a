// Elastic slots: in bind mode Slurm counts GPU slots (the count-only GRES gpuslot) and starts a
// job whenever a node has enough of them, so colocd acts on when jobs start through the count:
// a node offers one slot per idle GPU always, and a further (shared) slot of a busy GPU only
// while the sharing rule (place/sharing_rule.hpp) says that sharing it pays for a pending job,
// i.e. costs the job and its neighbours less time than waiting for GPUs of its own would.
//
//   slots(node) = max(running use, min(full, running use + idle GPUs + shared slots that pay))
//
// Pending jobs are weighed in Slurm's order (priority, then submission). A shared slot opened
// for one job would go to any job ahead of it that fits there, so it is not opened while a job
// ahead that the rule holds would fit it. A job whose time limit is unknown, or whose wait
// cannot be told (the running jobs have no time limits), is never held: the rule needs both a
// cost and a wait to weigh, and holding without them would be a guess.
// This file decides (pure, no I/O); daemon/steering/node_writer.* tells Slurm.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/elastic_config.hpp"
#include "daemon/steering/pending_weigh.hpp"
#include "place/cluster_state.hpp"
#include "place/expected_ends.hpp"
#include "place/policy.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::daemon {

// Running jobs' expected ends (epoch seconds) as Slurm tells them (start + time limit); a job
// not listed has no known end.
class KnownEnds : public place::TimeOutlook {
public:
    KnownEnds(const place::ClusterState& state, double now, std::map<place::JobId, double> ends);
    double wait_for_idle_gpus(int gpus) const override { return index_.wait_for_idle_gpus(now_, gpus); }
    double wait_for_idle_nodes(int nodes, int per_node) const override {
        return index_.wait_for_idle_nodes(now_, nodes, per_node);
    }
    double remaining_s(const place::RunningJob& job) const override;
    double now() const override { return now_; }
    double longest_wait() const override { return index_.longest_wait(now_); }

private:
    double now_;
    std::map<place::JobId, double> ends_;
    place::ExpectedEnds index_;
};

struct PendingVerdict {
    std::int64_t id = 0;
    std::int64_t uid = -1;
    std::string node;  // where a slot was opened for it, or its best place; empty = none
    bool opens = false;
    std::string why;
};

struct ElasticPlan {
    std::vector<int> slots;  // per node index; -1 = not sized (not a bind node)
    std::vector<PendingVerdict> verdicts;
};

// The slot count of each node in `nodes` (indices) from the cluster as colocd knows it, the
// slots Slurm's running jobs hold per node (`running_use`, by node index; colocd's own record
// counts too), and the pending jobs in Slurm's order. `policy` finds each job's best place.
ElasticPlan plan_elastic_slots(const place::ClusterState& state, const place::Policy& policy,
                               const place::TimeOutlook& time, const std::vector<int>& nodes,
                               const std::vector<int>& running_use, const std::vector<PendingJob>& pending);

// A node's full slot count: GPUs x slots per GPU (what colocd gives back).
int full_slots(const place::Topology& topo, int node);

// One node's slot count to send; nullopt = give the node back its admin's count.
struct SlotUpdate {
    std::string node;
    std::optional<int> slots;
    int full = 0;  // the node's full count in colocd.yaml: what it is given back at least
};

// The elastic-slots state colocd keeps: on or off, what each node was last told.
class ElasticSlots {
public:
    ElasticSlots(ElasticConfig cfg, int nodes);
    bool enabled() const { return enabled_; }
    const ElasticConfig& config() const { return cfg_; }
    // Switching off returns the updates that give every node touched its full count back.
    std::vector<SlotUpdate> set_enabled(bool on, const place::Topology& topo);
    // The updates a plan asks for (changed counts only, at most max_updates_per_round, the
    // biggest changes first; the rest at the next plan). Keeps the plan's verdicts for status.
    std::vector<SlotUpdate> apply(const ElasticPlan& plan, const place::Topology& topo, std::int64_t now_s);
    const std::optional<int>& applied(int node) const { return applied_[static_cast<std::size_t>(node)]; }
    const std::vector<PendingVerdict>& verdicts() const { return verdicts_; }
    std::int64_t rounds() const { return rounds_; }
    std::int64_t updates() const { return updates_; }
    std::int64_t last_round_s() const { return last_round_s_; }
    // The verdict on a job from the latest round, when it was pending then.
    const PendingVerdict* verdict_of(std::int64_t job) const;

private:
    ElasticConfig cfg_;
    bool enabled_ = false;
    std::vector<std::optional<int>> applied_;
    std::vector<PendingVerdict> verdicts_;
    std::map<std::int64_t, PendingVerdict> last_seen_;  // the latest verdict per job, while pending
    std::int64_t rounds_ = 0, updates_ = 0, last_round_s_ = 0;
};

}  // namespace coloc::daemon
