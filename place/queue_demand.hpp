// What the jobs submitted so far and those queued now ask for: the sharing rule reads from it
// what is to come (ArrivalRates: the rate seen so far, trusted as far ahead as it was seen, and
// the GPU-seconds queued), the engine's price of fragmentation what is asked of nodes
// (NodeDemand). One record for the replay, which adds each job of its trace as it arrives and
// takes it off the queue when it starts, and for colocd, which builds it from its reads of
// Slurm's queue (daemon/steering/queue_outlook.hpp).
#pragma once

#include <cstddef>

#include "place/fragmentation.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::place {

class QueueDemand {
public:
    // A job of `nodes` nodes with `per_node` GPUs on each, submitted at `submit_s`, with a time
    // limit of `limit_s` (<= 0: unknown, no GPU-seconds asked). Submit times may come out of
    // order (colocd's first read shows jobs submitted before it started).
    void submitted(double submit_s, int per_node, int nodes, double limit_s);
    // The job joins (+1) or leaves (-1) the queue.
    void queued(int per_node, int nodes, double limit_s, int sign);
    // The rates at `now`.
    ArrivalRates rates(double now) const;
    const NodeDemand& nodes_wanted() const { return nodes_; }
    double queued_gpu_s() const { return queued_gpu_s_; }
    std::size_t submitted_count() const { return arrived_; }

private:
    std::size_t arrived_ = 0;
    double first_submit_ = 0;
    double asked_gpu_s_ = 0;
    long queued_jobs_ = 0;
    double queued_gpu_s_ = 0;
    NodeDemand nodes_;
};

}  // namespace coloc::place
