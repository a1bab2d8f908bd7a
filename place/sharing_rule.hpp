// When sharing pays: a job takes a GPU another job already uses only when that finishes the
// work sooner than waiting for GPUs of its own.
//
// Sharing now costs the extra time the placement adds: the new job's own (it runs `slowdown`
// times slower while its neighbours stay) and each neighbour's (it runs after/before times
// slower while the two overlap). Waiting costs the expected wait until enough GPUs of its own
// free up: the running jobs' expected ends (their time limits, or what the caller predicts),
// after the GPUs that the jobs queued ahead of it will take. With W the job's solo work, s its
// slowdown there, and each neighbour k slowed from b_k to a_k with R_k of wall time left:
//
//   overlap  T   = min(W s, max_k R_k a_k / b_k)      (after that the job runs alone)
//   own extra    = T (1 - 1/s)
//   their extra  = sum_k min(W s, R_k a_k / b_k) (1 - b_k / a_k)
//   share  <=>  own extra + their extra + waiting extra  <  expected wait
//
// (both sides are the time the job and its neighbours finish later: W itself is the same
// either way). While other jobs wait, the cluster's throughput is theirs too: when the pair gets
// less work done over the overlap than the neighbours alone did (L solo GPU-seconds lost: the
// neighbours' loss less the job's own progress), the G GPUs of the cluster drain the queue L / G
// later, for each of the Q jobs waiting:
//
//   waiting extra = Q L / G   (only a loss counts: a pair that gets more done frees nothing a
//                              waiting job can use unless it shares too)
// Never held: a job whose candidate shares no GPU, or whose caller knows no queue or run time. No
// constant: the rule follows from predictions (slowdowns), expected run times and the queue.
#pragma once

#include <limits>
#include <string>

#include "place/cluster_state.hpp"
#include "place/policy.hpp"

namespace coloc::place {

// What a caller knows about time: when running jobs end and how long they have left.
class TimeOutlook {
public:
    virtual ~TimeOutlook() = default;
    // The expected seconds until `gpus` GPUs are idle (no job on them), counting the GPUs idle
    // now; may stop looking and return any value >= `enough` once the wait is known to reach it.
    virtual double wait_for_idle_gpus(int gpus, double enough) const = 0;
    // A running job's expected wall time left at its present pace (seconds; >= 0).
    virtual double remaining_s(const RunningJob& job) const = 0;
};

// What the rule is given with a request.
struct SharingOutlook {
    const TimeOutlook* time = nullptr;  // never null when an outlook is given
    double work_s = 0;                  // the job's expected solo run time (<= 0: unknown, never held)
    int gpus_ahead = 0;                 // GPUs the jobs queued ahead of it ask for
    int others_waiting = 0;             // other jobs queued (ahead or behind): the cluster's throughput is theirs too
};

struct SharingVerdict {
    bool shares = false;   // the candidate takes a slot of a GPU another job uses
    bool weighed = false;  // shares, and a wait was weighed (an outlook with the job's work)
    bool hold = false;     // the job waits instead
    double own_extra_s = 0;
    double neighbours_extra_s = 0;
    // What the jobs waiting in the queue lose when the pair gets less done than the neighbours
    // alone (see above); 0 when it gets as much or more, or nobody waits.
    double waiting_extra_s = 0;
    double wait_s = 0;  // expected wait for GPUs of its own (a lower bound once past the cost)
    int need = 0;       // GPUs waited for: the job's and those of the jobs queued ahead
    int ahead = 0;      // of them, asked for by the jobs queued ahead
    // One line for explain (built on demand: a deep queue weighs many verdicts it never shows).
    std::string why() const;
};

// Whether `c` takes a slot of a GPU that another job uses now.
bool takes_shared_gpu(const ClusterState& state, const Candidate& c);

// The rule on the engine's best candidate `c`: held when the expected wait for GPUs of its own is
// no longer than what sharing costs (never when `c` shares no GPU, see above).
SharingVerdict judge_sharing(const ClusterState& state, const JobRequest& request, const Candidate& c,
                             const SharingOutlook& outlook);

// The GPUs `job` gives back when it ends, in proportion of the slots it holds on each (a GPU
// shared by two frees half).
double gpus_freed_by(const ClusterState& state, const RunningJob& job);

// The expected wait for `need` idle GPUs from running jobs' expected ends, one implementation
// for the replay and the daemon: `ends` visits (expected end, job) pairs in ascending order of
// end until it returns false. A job ending frees each of its GPUs in proportion of the slots
// it holds there (a GPU shared by two frees half when one ends). `now` is the time the ends
// are counted from; the result is >= 0, or infinity when the ends never free enough.
template <class Ends>
double wait_for_idle(const ClusterState& state, double now, int need, double enough, Ends&& ends) {
    double idle = state.topology().total_gpus() - state.busy_gpus();
    if (idle >= need) return 0;
    double wait = std::numeric_limits<double>::infinity();
    ends([&](double end, const RunningJob& job) {
        idle += gpus_freed_by(state, job);
        if (idle + 1e-9 >= need || end - now >= enough) {
            wait = end > now ? end - now : 0.0;
            return false;
        }
        return true;
    });
    return wait;
}

}  // namespace coloc::place
