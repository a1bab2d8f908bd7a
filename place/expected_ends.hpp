// The running jobs' expected ends, kept so that the sharing rule's two waits are answered in
// O(log n) however many jobs run: how long until `gpus` GPUs are idle, and how long until
// `nodes` nodes each have `per_node` idle GPUs (a job on several GPUs of a node). One
// implementation for colocd (daemon/steering: Slurm's start + time limit) and the replay
// (replay/simulator.cpp: the end its planner expects, moved as the job's pace changes).
//
// A job frees its GPUs when it ends, each in proportion of the slots it holds there (a GPU
// shared by two frees half when one of them ends); a job with no known end never frees them.
// The ends sit in a tree ordered by (end, id) whose nodes carry the sum of what their subtree
// frees, so the first end by which enough GPUs are idle is one descent. For the nodes, each
// node's own jobs give the end by which it has k idle GPUs, for every k; one order-statistic
// tree per k holds those times, and the wait for n such nodes is the n-th smallest.
//
// Changes are taken lazily: a start, an end or a moved end marks the nodes it touches, and the
// next question works out again what those nodes' jobs free (a co-tenant changes what a job
// frees) before it answers.
#pragma once

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <cstddef>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "place/cluster_state.hpp"

namespace coloc::place {

namespace detail {

// pb_ds node update: each tree node carries the GPUs its whole subtree frees.
template <class NodeCItr, class NodeItr, class CmpFn, class Alloc>
struct FreedSums {
    using metadata_type = double;
    void operator()(NodeItr it, NodeCItr end) {
        double sum = (*it)->second;
        if (const NodeItr l = it.get_l_child(); l != end) sum += l.get_metadata();
        if (const NodeItr r = it.get_r_child(); r != end) sum += r.get_metadata();
        const_cast<double&>(it.get_metadata()) = sum;
    }
    virtual NodeCItr node_begin() const = 0;
    virtual NodeCItr node_end() const = 0;
    virtual ~FreedSums() = default;
};

}  // namespace detail

class ExpectedEnds {
public:
    explicit ExpectedEnds(const ClusterState& state);
    ExpectedEnds(const ExpectedEnds&) = delete;
    ExpectedEnds& operator=(const ExpectedEnds&) = delete;

    // `id`, running in the state, is expected to end at `end` (absolute seconds); it may be set
    // again as the expectation moves.
    void set(JobId id, double end);
    // `id` ends (before or after the state forgets it).
    void erase(JobId id);
    // A job that is not kept here started or ended on `node`: its GPUs' slots changed.
    void node_changed(int node);

    // The expected seconds from `now` until `gpus` GPUs are idle, counting those idle now; 0 when
    // they are, infinity when the known ends never free enough.
    double wait_for_idle_gpus(double now, int gpus) const;
    // The same until `nodes` nodes have `per_node` idle GPUs each.
    double wait_for_idle_nodes(double now, int nodes, int per_node) const;

    std::size_t size() const { return jobs_.size(); }
    // The latest expected end (the time by which every job with a known end is gone); -infinity when none.
    double last_end() const;
    // The longest either wait can last from `now` for GPUs the cluster has: until every running
    // job is gone; infinity when one has no known end.
    double longest_wait(double now) const;

private:
    using Key = std::pair<double, JobId>;
    using FreedTree = __gnu_pbds::tree<Key, double, std::less<Key>, __gnu_pbds::rb_tree_tag, detail::FreedSums>;
    using TimeTree = __gnu_pbds::tree<std::pair<double, int>, __gnu_pbds::null_type, std::less<std::pair<double, int>>,
                                      __gnu_pbds::rb_tree_tag, __gnu_pbds::tree_order_statistics_node_update>;
    struct Job {
        double end = 0;
        double freed = 0;  // what its end frees, as the tree has it
        std::vector<int> nodes;
    };

    void mark(int node) const;
    void flush() const;
    void refresh_node(int node) const;
    double freed_by(const RunningJob& job) const;

    const ClusterState& state_;
    mutable std::unordered_map<JobId, Job> jobs_;
    mutable FreedTree ends_;
    // by_k_[k - 1]: (time the node first has k idle GPUs, node); -infinity: it has them now.
    mutable std::vector<TimeTree> by_k_;
    mutable std::vector<std::vector<double>> node_times_;  // [node][k - 1], +infinity: never
    mutable std::vector<char> dirty_;
    mutable std::vector<int> dirty_nodes_;
};

}  // namespace coloc::place
