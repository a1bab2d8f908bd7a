#include "place/candidate_nodes.hpp"

#include <algorithm>
#include <cstdint>

namespace coloc::place {

namespace {

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

// Appends to `out` up to `want` nodes of `set` that run jobs, from `start` on and round again;
// returns how many.
int take_occupied(const ClusterState& state, const NodeSet& set, int start, int want, std::vector<int>& out) {
    int taken = 0;
    auto visit = [&](int n) {
        if (state.jobs_on_node(n).empty()) return false;
        out.push_back(n);
        return ++taken >= want;
    };
    bool done = want <= 0;
    for (int n = set.next(start - 1); n >= 0 && !done; n = set.next(n)) done = visit(n);
    for (int n = set.next(-1); n >= 0 && n < start && !done; n = set.next(n)) done = visit(n);
    return taken;
}

}  // namespace

std::vector<int> nodes_to_score(const ClusterState& state, const JobRequest& request, int max_nodes_scored,
                                bool fewest_idle_too) {
    if (!request.allowed_nodes.empty()) return candidate_nodes(state, request);
    std::vector<int> out;
    const int k = request.gpus_per_node;
    const auto& types = state.topology().types();
    int empties = 0;
    for (std::size_t t = 0; t < types.size(); ++t) {
        if (types[t].gpus < k) continue;
        const NodeSet& set = state.empty_nodes(static_cast<int>(t));
        empties += set.size();
        if (request.nodes == 1) {
            if (int n = set.next(-1); n >= 0) out.push_back(n);
            continue;
        }
        // A multi-node job sees the traffic on each node's link: keep enough empty nodes per link.
        std::vector<int> per_link(state.topology().link_names().size() + 1, 0);
        for (int n = set.next(-1); n >= 0; n = set.next(n)) {
            int link = state.topology().nodes()[static_cast<std::size_t>(n)].link + 1;
            if (per_link[static_cast<std::size_t>(link)]++ < request.nodes) out.push_back(n);
        }
    }
    // An occupied node is scored even when an empty one can take the job: it can do as well (a
    // neighbour the model finds harmless), and then it wins, keeping the empty node whole.
    const int occupied = state.nodes_with_at_least(Capacity::Open, k) - empties;
    if (occupied <= 0) return out;
    if (max_nodes_scored <= 0 || occupied <= std::max(max_nodes_scored, 2 * request.nodes)) {
        for (int n = state.next_node_with_at_least(Capacity::Open, k); n >= 0;
             n = state.next_node_with_at_least(Capacity::Open, k, n))
            if (!state.jobs_on_node(n).empty()) out.push_back(n);
        return out;
    }
    const int count = static_cast<int>(state.topology().nodes().size());
    const int start = static_cast<int>(mix(request.id) % static_cast<std::uint64_t>(count));
    // A multi-node job needs that many nodes to choose from, and some spare.
    const int limit = std::max(max_nodes_scored, 2 * request.nodes);
    int taken = 0;
    for (int v = state.max_gpus_per_node(); v >= k && taken < limit; --v)
        taken += take_occupied(state, state.nodes_with(Capacity::Open, v), start, limit - taken, out);
    if (!fewest_idle_too) return out;
    // As many as the job needs nodes (two at least) per count of idle GPUs, fewest first.
    const int per_count = std::max(2, request.nodes);
    for (int v = k; v <= state.max_gpus_per_node(); ++v)
        take_occupied(state, state.nodes_with(Capacity::Idle, v), start, per_count, out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

void eligible_into(const ClusterState& state, const JobRequest& request, int node, std::vector<int>& out) {
    out.clear();
    const int gpus = state.topology().type_of(node).gpus;
    for (int g = 0; g < gpus; ++g)
        if (state.free_slots(node, g) > 0 && request.allows(node, g)) out.push_back(g);
}

}  // namespace coloc::place
