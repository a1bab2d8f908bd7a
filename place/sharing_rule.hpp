// When sharing pays: a job takes a GPU another job already uses only when that finishes the
// work sooner than waiting for GPUs of its own.
//
// Both choices are priced in job-seconds (how much later jobs finish, summed). Waiting costs
// the job its expected wait for GPUs of its own: the running jobs' expected ends, after the
// GPUs that the jobs queued ahead of it will take; when those ask for more than the cluster's
// G GPUs, they take turns, and the share (need - G) / need of their A GPU-seconds runs before
// it: + A (need - G) / (need G). Sharing costs, with W the job's solo work, s its slowdown
// there, and each neighbour k (on g_k GPUs) slowed from b_k to a_k with R_k of wall time left:
//
//   overlap  T   = min(W s, max_k R_k a_k / b_k)      (after that the job runs alone)
//   own extra    = T (1 - 1/s)
//   their extra  = sum_k d_k,  d_k = min(W s, R_k a_k / b_k) (1 - b_k / a_k)
//
// and the cluster's capacity, which every job waiting and every job that arrives before the
// queue drains shares. Sharing takes C GPU-seconds more of it than waiting: each neighbour
// holds all g_k of its GPUs d_k longer; the job, on g GPUs of which GPU i is shared with others
// for S_i of the overlap, holds the rest alone over T and gets g T / s of its work done without
// GPUs of its own:
//
//   C = sum_k g_k d_k + sum_i (T - S_i) - g T / s   (+ the backfill term below)
//
// Spread over the G GPUs, C delays each of N jobs by C / G: the Q queued now, and those that
// arrive (at the rate seen so far, lambda) until the queue drains. A queue of B GPU-seconds
// drains at G less the offered load (GPU-seconds asked for per second); at or past capacity it
// never does, and the arrivals count as far ahead as the rates were seen (H), no further:
//
//   N = Q + lambda min(H, B / (G - offered))        queue extra = N max(C, 0) / G
//
// Only a loss counts: what a pair saves (C < 0) comes back as a slot on a shared GPU, which a
// job waiting for GPUs of its own cannot take (counting it made the oracle, which places by
// the true speeds, worse in bench/replay-quality).
//
// Backfill: when the first queued job waits for GPUs that the neighbour k gives back by the
// time it is to start (R_k <= its start), slowing k past that start delays it and keeps the
// GPUs held for it idle meanwhile: its delay counts once more, and its GPUs idle over that
// delay join C.
//
//   share  <=>  own extra + their extra + head's delay + queue extra  <  expected wait
//
// Under uncertainty the prices are taken at pessimistic speeds (one standard deviation of each
// prediction slower): a prior that is wrong then costs little. A job that the pessimistic price
// holds but the expected price lets share may share anyway as exploration, when what it may
// lose at the pessimistic price is no more than what it gains at the expected one, and within a
// budget the caller keeps (a bounded share of the decisions weighed): a pairing never tried is
// never learned.
//
// Never held: a job whose candidate shares no GPU, or whose caller knows no queue or run time. No
// constant: the rule follows from predictions (slowdowns, their uncertainty), expected run
// times, the queue and the arrivals seen.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "place/cluster_state.hpp"
#include "place/policy.hpp"

namespace coloc::place {

// What a caller knows about time: when running jobs end and how long they have left
// (place/expected_ends.hpp answers the two waits for colocd and the replay alike).
class TimeOutlook {
public:
    virtual ~TimeOutlook() = default;
    // The expected seconds until `gpus` GPUs are idle (no job on them), counting the GPUs idle
    // now; infinity when the known ends never free that many.
    virtual double wait_for_idle_gpus(int gpus) const = 0;
    // The same until `nodes` nodes each have `per_node` idle GPUs (a job on several GPUs of a
    // node: idle GPUs spread over many nodes do not take it). 0 where the caller cannot tell.
    virtual double wait_for_idle_nodes(int /*nodes*/, int /*per_node*/) const { return 0; }
    // A running job's expected wall time left at its present pace (seconds; >= 0).
    virtual double remaining_s(const RunningJob& job) const = 0;
    // The time the ends are counted from (seconds, the caller's clock).
    virtual double now() const = 0;
    // The longest either wait can last for GPUs the cluster has: until every running job is
    // gone (infinity when one has no known end).
    virtual double longest_wait() const = 0;
};

// What the cluster has been asked for so far: the rates the rule expects of the arrivals to come.
struct ArrivalRates {
    double jobs_per_s = 0;    // jobs submitted per second
    double offered_gpus = 0;  // GPU-seconds of work asked for per second (time limits x GPUs)
    double seen_s = 0;        // how long arrivals have been watched: how far ahead the rates are trusted
    double queued_gpu_s = 0;  // GPU-seconds the queued jobs ask for now (this one included)
    // Over how long the rates, and NodeDemand::submitted, were counted: the arrival window's
    // span (place/queue_demand.hpp); 0: all of seen_s.
    double counted_s = 0;
};

// The first queued job's reservation, as the scheduler plans it (for a job behind it).
struct HeadReservation {
    double starts_in_s = std::numeric_limits<double>::infinity();  // its expected start, from now
    int gpus = 0;                                                  // the GPUs it waits for
};

// Exploration's account, kept by the caller across decisions: a held pairing may be tried while
// explored <= share x weighed.
struct ExplorationBudget {
    double share = 0;   // 0: never explores
    long weighed = 0;   // decisions the rule weighed (placing, not explaining)
    long explored = 0;  // of them, shared as exploration
    bool allows() const { return share > 0 && explored + 1 <= share * static_cast<double>(weighed + 1); }
};

struct NodeDemand;  // place/fragmentation.hpp

// What the rule is given with a request (and the engine, for the price of fragmentation).
struct SharingOutlook {
    const TimeOutlook* time = nullptr;  // never null when an outlook is given
    double work_s = 0;                  // the job's expected solo run time (<= 0: unknown, never held)
    int gpus_ahead = 0;                 // GPUs the jobs queued ahead of it ask for
    double ahead_gpu_s = 0;             // GPU-seconds they ask for (time limits; 0: unknown)
    int others_waiting = 0;             // other jobs queued (ahead or behind): the cluster's throughput is theirs too
    ArrivalRates arrivals;              // zero: no arrivals are expected
    HeadReservation head;               // for a job behind the first queued one
    // The caller's exploration account (null: no exploration); the policy counts what it places.
    ExplorationBudget* exploration = nullptr;
    // What the queued and the submitted jobs ask of nodes, by GPUs per node (null: unknown, and
    // the engine prices no fragmentation: place/fragmentation.hpp).
    const NodeDemand* nodes_wanted = nullptr;
    // Whether the decision's verdict is put in words (Decision::sharing, reason): explain and
    // admission show them; the replay, which weighs every queued job, shows none.
    bool in_words = true;
};

struct SharingVerdict {
    bool shares = false;    // the candidate takes a slot of a GPU another job uses
    bool weighed = false;   // shares, and a wait was weighed (an outlook with the job's work)
    bool hold = false;      // the job waits instead
    bool explores = false;  // shares although the pessimistic price holds it: exploration
    // The prices at pessimistic speeds (those that decide).
    double own_extra_s = 0;
    double neighbours_extra_s = 0;
    double head_delay_s = 0;  // the first queued job's delay (backfill), 0 when none
    // What the jobs waiting now and arriving before the queue drains lose (see above); negative
    // when the pair gets more done than the neighbours alone.
    double waiting_extra_s = 0;
    double jobs_affected = 0;    // N above
    double cost_s = 0;           // all of sharing's price at pessimistic speeds
    double expected_cost_s = 0;  // the same at the predicted speeds
    double wait_s = 0;           // expected wait for GPUs of its own (a lower bound once past the cost)
    int need = 0;                // GPUs waited for: the job's and those of the jobs queued ahead
    int ahead = 0;               // of them, asked for by the jobs queued ahead
    // One line for explain (built on demand: a deep queue weighs many verdicts it never shows).
    std::string why() const;
    // Which speeds the prices are at: " (as predicted)", or the pessimistic ones and the margin.
    std::string price_basis() const;
};

// A held verdict kept so that it can be checked again in O(1) (the replay weighs a deep queue
// at every event). While nothing changes on the nodes and links whose jobs its price read, the
// price at pessimistic speeds falls no faster than the rates below as those jobs' time left
// runs out (the first queued job's share left out: it only adds), and no wait for GPUs the
// cluster has lasts longer than TimeOutlook::longest_wait() plus the turns of the jobs ahead.
// A price whose floor still exceeds that longest wait holds the job whatever the wait is now.
struct HoldBound {
    bool valid = false;
    double at = 0;                   // TimeOutlook::now() when worked out
    std::uint64_t stamp = 0;         // ClusterState::changes() then
    std::vector<int> nodes, links;   // where the jobs it read run
    std::vector<std::int64_t> read;  // the candidate's nodes, then the jobs it read (ids)
    double own = 0, own_rate = 0;    // the job's own extra seconds, and how fast they can fall
    double neighbours = 0, neighbours_rate = 0;
    double extra_gpu_s = 0, extra_rate = 0;  // the capacity sharing takes, before the jobs it reaches
};

// Whether a job held with `bound` is held still, for certain (false: weigh it again).
bool certainly_held(const ClusterState& state, const JobRequest& request, const SharingOutlook& outlook,
                    const HoldBound& bound);

// Whether `c` takes a slot of a GPU that another job uses now.
bool takes_shared_gpu(const ClusterState& state, const Candidate& c);

// The rule on the engine's best candidate `c`: held when the expected wait for GPUs of its own is
// no longer than what sharing costs (never when `c` shares no GPU, see above). Reads, never
// changes, the outlook's exploration budget (note_decision counts).
// With `bound`, a verdict that holds the job also says how it may be checked again (certainly_held).
SharingVerdict judge_sharing(const ClusterState& state, const JobRequest& request, const Candidate& c,
                             const SharingOutlook& outlook, HoldBound* bound = nullptr);

// Counts a decision the policy takes on `v` in the outlook's exploration budget, if any.
void note_decision(const SharingOutlook& outlook, const SharingVerdict& v);

// The GPUs `job` gives back when it ends, in proportion of the slots it holds on each (a GPU
// shared by two frees half).
double gpus_freed_by(const ClusterState& state, const RunningJob& job);

}  // namespace coloc::place
