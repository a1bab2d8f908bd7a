// ClusterState's indexes by node, GPU and link, kept incrementally on every start, extension and
// end, against the same facts worked out by a full scan of the running jobs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "place/cluster_state.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

std::set<JobId> as_set(const std::vector<JobId>& v) { return {v.begin(), v.end()}; }

// Every index compared with what a scan of state.jobs() says it should hold.
void require_indexes_match_scan(const ClusterState& state) {
    const Topology& topo = state.topology();
    const int nodes = static_cast<int>(topo.nodes().size());
    std::map<std::pair<int, int>, std::set<JobId>> on_gpu;
    std::map<int, std::set<JobId>> on_node;
    std::map<int, std::set<JobId>> on_link;  // multi-node jobs only
    int used = 0;
    for (const auto& [id, job] : state.jobs()) {
        for (const Placement& p : job.where) {
            on_node[p.node].insert(id);
            for (int g : p.gpus) on_gpu[{p.node, g}].insert(id);
            used += static_cast<int>(p.gpus.size());
            const int link = topo.nodes()[static_cast<std::size_t>(p.node)].link;
            if (job.multi_node() && link >= 0) on_link[link].insert(id);
        }
    }
    REQUIRE(state.used_slots_total() == used);
    for (int n = 0; n < nodes; ++n) {
        const NodeType& t = topo.type_of(n);
        REQUIRE(as_set(state.jobs_on_node(n)) == on_node[n]);
        REQUIRE(state.jobs_on_node(n).size() == on_node[n].size());  // each job once
        const auto& ptrs = state.running_on_node(n);
        REQUIRE(ptrs.size() == state.jobs_on_node(n).size());
        for (std::size_t i = 0; i < ptrs.size(); ++i) REQUIRE(ptrs[i] == state.find(state.jobs_on_node(n)[i]));
        int free = 0;
        for (int g = 0; g < t.gpus; ++g) {
            REQUIRE(as_set(state.jobs_on_gpu(n, g)) == on_gpu[{n, g}]);
            REQUIRE(state.used_slots(n, g) == static_cast<int>(on_gpu[{n, g}].size()));
            free += t.slots_per_gpu - static_cast<int>(on_gpu[{n, g}].size());
        }
        REQUIRE(state.free_slots(n) == free);
        REQUIRE(state.nodes_with_free_slots(free).contains(n));
    }
    for (int l = 0; l < static_cast<int>(topo.link_names().size()); ++l)
        REQUIRE(as_set(state.multi_node_jobs_on_link(l)) == on_link[l]);
}

}  // namespace

TEST_CASE("cluster indexes by node, GPU and link agree with a full scan after random starts, extensions and ends") {
    // 12 nodes of 4 GPUs x 2 slots, 4 nodes per link: multi-node jobs cross links.
    Topology topo = uniform_topology(12, 4, 2, 2, 4);
    ClusterState state(topo);
    model::JobProfile profile;
    std::mt19937 rng(11);
    std::vector<JobId> running;
    JobId next = 1;
    auto free_gpus_on = [&](int node) {
        std::vector<int> gpus;
        for (int g = 0; g < 4; ++g)
            if (state.free_slots(node, g) > 0 && rng() % 2) gpus.push_back(g);
        return gpus;
    };
    int starts = 0, extensions = 0, ends = 0;
    for (int step = 0; step < 2000; ++step) {
        const unsigned action = rng() % 10;
        if (!running.empty() && action < 3) {  // an end
            const std::size_t i = rng() % running.size();
            REQUIRE(state.remove(running[i]));
            running.erase(running.begin() + static_cast<long>(i));
            ++ends;
        } else if (!running.empty() && action < 5) {  // another node of a running job
            const JobId id = running[rng() % running.size()];
            const int node = static_cast<int>(rng() % 12);
            if (state.find(id)->on_node(node)) continue;
            auto gpus = free_gpus_on(node);
            if (gpus.empty()) continue;
            REQUIRE(state.extend(id, {node, gpus}));
            ++extensions;
        } else {  // a start on one or two nodes
            RunningJob job;
            job.id = next;
            job.profile = &profile;
            const int first = static_cast<int>(rng() % 12);
            if (auto gpus = free_gpus_on(first); !gpus.empty()) job.where.push_back({first, gpus});
            const int second = static_cast<int>(rng() % 12);
            if (action == 9 && second != first)
                if (auto gpus = free_gpus_on(second); !gpus.empty()) job.where.push_back({second, gpus});
            if (job.where.empty()) continue;
            REQUIRE(state.add(std::move(job)));
            running.push_back(next++);
            ++starts;
        }
        require_indexes_match_scan(state);
    }
    CHECK(starts > 500);
    CHECK(extensions > 100);
    CHECK(ends > 300);
    // A copy keeps indexes of its own that agree with its own jobs, and stays apart from the original.
    ClusterState copy = state;
    require_indexes_match_scan(copy);
    if (!running.empty()) REQUIRE(copy.remove(running.front()));
    require_indexes_match_scan(copy);
    require_indexes_match_scan(state);
}
