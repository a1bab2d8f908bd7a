// What the jobs submitted lately and those queued now ask for: the sharing rule reads from it
// what is to come (ArrivalRates: the rate seen over the window, trusted as far ahead as it was
// seen, and the GPU-seconds queued), the engine's price of fragmentation what is asked of nodes
// (NodeDemand). One record for the replay, which adds each job of its trace as it arrives and
// takes it off the queue when it starts, and for colocd, which builds it from its reads of
// Slurm's queue (daemon/service/slot_sizing.hpp).
//
// The window: a site's load moves (the week, the term, a deadline), and a colocd that runs for
// months must not expect this afternoon's arrivals at the rate of its first month. The
// submissions are counted in epochs of window_s; the rates are those of the current epoch and
// the one before it, so they are counted over between one and two windows (0: every submission
// since the first, as one epoch). How far ahead they are trusted is still how long arrivals
// have been watched (ArrivalRates::seen_s), not the window.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "place/fragmentation.hpp"
#include "place/partner_price.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::place {

class QueueDemand {
public:
    explicit QueueDemand(double window_s = 0) : window_s_(window_s > 0 ? window_s : 0) {}

    // A job of `nodes` nodes with `per_node` GPUs on each, submitted at `submit_s`, with a time
    // limit of `limit_s` (<= 0: unknown, no GPU-seconds asked). Submit times may come out of
    // order (colocd's first read shows jobs submitted before it started); one older than the
    // window (at first: a window before the latest time seen) is not counted. `profile`: its
    // class, for who is asking (partners(); null: not counted there).
    void submitted(double submit_s, int per_node, int nodes, double limit_s,
                   const model::JobProfile* profile = nullptr);
    // The job joins (+1) or leaves (-1) the queue.
    void queued(int per_node, int nodes, double limit_s, int sign, const model::JobProfile* profile = nullptr);
    // Time has reached `now`: the epochs older than the window are let go. Before rates(now) and
    // nodes_wanted() when time has moved on since the last submission.
    void advance(double now);
    // The rates at `now`.
    ArrivalRates rates(double now) const;
    const NodeDemand& nodes_wanted() const { return nodes_; }
    // Who asks, at `now` (after advance(now)): the classes of the queued jobs and of the
    // submissions counted, by GPUs asked, and the GPUs asked for now and per second.
    const PartnerDemand& partners(double now) const;
    double queued_gpu_s() const { return queued_gpu_s_; }
    // Every submission given, in the window or older.
    std::size_t submitted_count() const { return arrived_; }

private:
    using Classes = std::unordered_map<const model::JobProfile*, double>;  // GPUs asked, by class
    struct Epoch {
        std::size_t jobs = 0;
        double asked_gpu_s = 0, gpus = 0, limited_gpus = 0;  // limited: of the GPUs, those with a time limit
        std::vector<double> nodes;  // [k]: nodes asked for with k GPUs each (NodeDemand::count)
        Classes classes;
    };
    void add(Epoch& e, int per_node, int nodes, double gpu_s, const model::JobProfile* profile);

    double window_s_;
    std::size_t arrived_ = 0;
    // The counted span starts at span_start_ (the previous epoch's start, or the first
    // submission); the current epoch at epoch_start_.
    double span_start_ = 0, epoch_start_ = 0;
    double latest_ = 0;        // the latest time seen (a submission or advance())
    double first_submit_ = 0;  // the oldest submission seen, counted or not: rates are trusted
                               // as far ahead as arrivals have been watched
    Epoch previous_, current_;
    long queued_jobs_ = 0;
    double queued_gpu_s_ = 0, queued_gpus_ = 0;
    NodeDemand nodes_;  // submitted: previous_ + current_
    Classes queued_classes_;
    // partners(), kept while no class count changes.
    mutable bool classes_changed_ = true;
    mutable PartnerDemand partners_;
};

}  // namespace coloc::place
