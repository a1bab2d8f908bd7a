#include "place/policy_support.hpp"

#include <algorithm>

namespace coloc::place {

namespace {

// Visits nodes offering at least k GPUs of `kind` in `order` until `visit` returns true.
template <class Visit>
void for_each_node(const ClusterState& state, Capacity kind, NodeOrder order, int k, Visit visit) {
    const int top = state.max_gpus_per_node();
    switch (order) {
        case NodeOrder::FirstFit:
            for (int n = state.next_node_with_at_least(kind, k); n >= 0; n = state.next_node_with_at_least(kind, k, n))
                if (visit(n)) return;
            return;
        case NodeOrder::Fullest:
            // Fewest free slots first (a node whose GPUs are half used is fuller than an idle one
            // with as many open GPUs); nodes that cannot take the job are passed over.
            for (int v = 0; v <= state.max_slots_per_node(); ++v) {
                const NodeSet& set = state.nodes_with_free_slots(v);
                for (int n = set.next(-1); n >= 0; n = set.next(n))
                    if (state.capacity(kind, n) >= k && visit(n)) return;
            }
            return;
        case NodeOrder::Emptiest:
            // Nodes with k idle GPUs first (no sharing needed), the idlest first; then nodes that
            // can take the job only by sharing, the most open first.
            for (int v = top; v >= std::max(k, 0); --v) {
                const NodeSet& set = state.nodes_with(Capacity::Idle, v);
                for (int n = set.next(-1); n >= 0; n = set.next(n))
                    if (state.capacity(kind, n) >= k && visit(n)) return;
            }
            if (kind == Capacity::Idle) return;
            for (int v = top; v >= std::max(k, 0); --v) {
                const NodeSet& set = state.nodes_with(Capacity::Open, v);
                for (int n = set.next(-1); n >= 0; n = set.next(n))
                    if (state.idle_gpus(n) < k && visit(n)) return;
            }
            return;
    }
}

int order_key(const ClusterState& state, NodeOrder order, int node) {
    const int top = state.max_gpus_per_node() + 1;
    switch (order) {
        case NodeOrder::FirstFit:
            return 0;
        case NodeOrder::Fullest:
            return state.free_slots(node);
        case NodeOrder::Emptiest:
            return -(state.idle_gpus(node) * top + state.open_gpus(node));
    }
    return 0;
}

}  // namespace

std::vector<int> pick_gpus(const ClusterState& state, const JobRequest& request, int node, Capacity kind,
                           GpuOrder order) {
    std::vector<int> gpus;
    const int count = state.topology().type_of(node).gpus;
    for (int g = 0; g < count; ++g) {
        const bool free = kind == Capacity::Idle ? state.used_slots(node, g) == 0 : state.free_slots(node, g) > 0;
        if (free && request.allows(node, g)) gpus.push_back(g);
    }
    if (static_cast<int>(gpus.size()) < request.gpus_per_node) return {};
    if (order != GpuOrder::Index) {
        const int sign = order == GpuOrder::MostUsed ? -1 : 1;
        std::stable_sort(gpus.begin(), gpus.end(), [&](int a, int b) {
            return sign * state.used_slots(node, a) < sign * state.used_slots(node, b);
        });
    }
    gpus.resize(static_cast<std::size_t>(request.gpus_per_node));
    std::sort(gpus.begin(), gpus.end());
    return gpus;
}

Decision place_by_rule(const ClusterState& state, const JobRequest& request, const SimpleRule& rule,
                       const model::InterferenceModel* annotate) {
    Decision d;
    if (request.gpus_per_node < 1 || request.nodes < 1) {
        d.reason = "the job asks for no GPU";
        return d;
    }
    std::vector<Placement> where;
    auto take = [&](int node) {
        std::vector<int> gpus = pick_gpus(state, request, node, rule.kind, rule.gpus);
        if (!gpus.empty()) where.push_back({node, std::move(gpus)});
        return static_cast<int>(where.size()) == request.nodes;
    };
    if (!request.allowed_nodes.empty()) {
        std::vector<int> nodes;
        const int count = static_cast<int>(state.topology().nodes().size());
        for (int n : request.allowed_nodes)
            if (n >= 0 && n < count && std::find(nodes.begin(), nodes.end(), n) == nodes.end() &&
                state.capacity(rule.kind, n) >= request.gpus_per_node)
                nodes.push_back(n);
        std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
            int ka = order_key(state, rule.nodes, a), kb = order_key(state, rule.nodes, b);
            return ka != kb ? ka < kb : a < b;
        });
        for (int n : nodes)
            if (take(n)) break;
    } else {
        for_each_node(state, rule.kind, rule.nodes, request.gpus_per_node, take);
    }
    if (static_cast<int>(where.size()) < request.nodes) {
        d.reason = "no node has " + std::to_string(request.gpus_per_node) +
                   (rule.kind == Capacity::Idle ? " idle GPU(s)" : " GPU(s) with a free slot") +
                   (request.nodes > 1 ? " on " + std::to_string(request.nodes) + " nodes" : "");
        return d;
    }
    std::sort(where.begin(), where.end(), [](const Placement& a, const Placement& b) { return a.node < b.node; });
    d.placed = true;
    if (annotate) {
        d.chosen = score_candidate(state, *annotate, request, std::move(where));
    } else {
        d.chosen.where = std::move(where);
    }
    d.ranked = {d.chosen};
    return d;
}

}  // namespace coloc::place
