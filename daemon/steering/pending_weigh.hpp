// One pending job weighed by the sharing rule where the engine would place it now: the step
// that both of colocd's levers on when jobs start share (elastic slots, elastic_slots.hpp, and
// admission, admission.hpp). Pure: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "place/cluster_state.hpp"
#include "place/policy.hpp"
#include "place/queue_demand.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::daemon {

// A job Slurm holds pending in a bind partition.
struct PendingJob {
    std::int64_t id = 0;
    std::int64_t uid = -1;
    const model::JobProfile* profile = nullptr;  // never null (the default when untagged)
    int slots_per_node = 1;                      // gpuslot per node: one slot on each of that many GPUs
    int nodes = 1;
    double time_limit_s = 0;         // its expected solo run time; 0 = unknown (never held)
    std::vector<int> allowed_nodes;  // node indices it may run on; empty = any sized node
    bool gated = false;              // admission: pending until colocd releases it (job_submit.lua's BeginTime)
    bool own_node_list = false;      // the user named its nodes: colocd does not choose one for it
    bool offered = false;            // job_submit.lua set its node list from a standing offer
    bool running = false;            // Slurm started it on allowed_nodes; colocd has not heard its launch
};

bool may_run_on(const PendingJob& job, int node);

// Jobs whose latest verdict either lever keeps for explain (the oldest ids go first).
inline constexpr std::size_t kVerdictsKept = 4096;

// What the jobs queued ahead of a job will take before it (those the rule holds, and for
// admission those Slurm will start first).
struct QueueAhead {
    int gpus = 0;      // GPUs they will take when they start
    double gpu_s = 0;  // and the GPU-seconds they ask for (time limits)
    int others_waiting = 0;
    void add(const PendingJob& job);
};

struct Weighed {
    enum class Outcome {
        NoPlace,  // no place now, even shared
        OwnGpus,  // GPUs nobody uses: never held
        Shares,   // takes a slot of a busy GPU, and the rule says it pays
        Held,     // takes a slot of a busy GPU, and the rule says waiting costs less
    };
    Outcome outcome = Outcome::NoPlace;
    place::Decision decision;
    int shared_gpus = 0;  // the GPUs of the chosen place another job uses now
    int node = -1;        // the chosen place's first node
    std::string why;      // the rule's line, or why there is no place
};

// Weighs `job` on `state` with its allowed nodes narrowed to `nodes`, as the replay does: the
// policy decides with the sharing rule's outlook (the queue ahead, and from `demand` the
// arrivals seen and what is asked of nodes; null: neither known), so the engine may choose
// another place than the one a rule-blind search would, and the rule weighs it within the
// predictions' uncertainty. `head`: the first job held ahead of it, when it is due and the GPUs
// it waits for (the rule prices what sharing delays it; none: nothing held ahead). `exploration`:
// the account a held pairing may be tried from (null: none; the policy counts the decision). `request`
// is filled with what was asked of the policy (its outlook cleared, as it pointed into this call).
Weighed weigh_pending(const place::ClusterState& state, const place::Policy& policy, const place::TimeOutlook& time,
                      const PendingJob& job, const std::vector<int>& nodes, const QueueAhead& ahead,
                      const place::QueueDemand* demand, place::JobRequest& request,
                      const place::HeadReservation& head = {}, place::ExplorationBudget* exploration = nullptr);

}  // namespace coloc::daemon
