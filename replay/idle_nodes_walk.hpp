// place::wait_for_idle_nodes's answers, kept while the cluster and the time stay as they are.
//
// The jobs held in a deep queue are weighed one after another against the same state, and each
// multi-GPU one asks how long until some nodes have some GPUs idle each: a walk over every
// running job's end. Here one walk per GPUs-per-node count records, end by end, how many nodes
// have that many idle GPUs (place::IdleNodesCount); a question finds its answer in that record
// (the count and the ends only grow along it, so a binary search) or walks it further. The
// answers are exactly place::wait_for_idle_nodes's.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "place/cluster_state.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::replay {

class IdleNodesWalk {
public:
    using Ends = std::set<std::pair<double, int>>;  // (expected end, job id), ascending

    double wait(const place::ClusterState& state, double now, const Ends& ends, int nodes, int per_node,
                double enough) {
        if (static_cast<std::size_t>(per_node) >= walks_.size()) walks_.resize(static_cast<std::size_t>(per_node) + 1);
        Walk& w = walks_[static_cast<std::size_t>(per_node)];
        if (!w.started || w.changes != state.changes() || w.now != now) {
            w.started = true;
            w.changes = state.changes();
            w.now = now;
            w.at = ends.begin();
            w.count.reset(state, per_node);
            w.whole0 = w.count.whole();
            w.ends.clear();
            w.whole.clear();
        }
        if (w.whole0 >= nodes) return 0;
        const auto done = [&](std::size_t k) { return w.whole[k] >= nodes || w.ends[k] - now >= enough; };
        const auto answer = [&](std::size_t k) { return w.ends[k] > now ? w.ends[k] - now : 0.0; };
        // The first walked end that answers: enough nodes by then, or far enough ahead to know.
        std::size_t lo = 0, hi = w.ends.size();
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (done(mid))
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo < w.ends.size()) return answer(lo);
        for (; w.at != ends.end(); ++w.at) {
            w.count.end(*state.find(static_cast<place::JobId>(w.at->second)));
            w.ends.push_back(w.at->first);
            w.whole.push_back(w.count.whole());
            if (done(w.ends.size() - 1)) {
                ++w.at;
                return answer(w.ends.size() - 1);
            }
        }
        return std::numeric_limits<double>::infinity();
    }

private:
    struct Walk {
        bool started = false;
        std::uint64_t changes = 0;  // ClusterState::changes() it was walked on
        double now = 0;
        Ends::const_iterator at;  // the next end to walk
        place::IdleNodesCount count;
        int whole0 = 0;            // nodes with the GPUs idle now
        std::vector<double> ends;  // walked ends
        std::vector<int> whole;    // nodes with the GPUs idle once each has passed
    };
    std::vector<Walk> walks_;  // by GPUs per node
};

}  // namespace coloc::replay
