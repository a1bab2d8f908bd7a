// place::ExpectedEnds against the plain walk it replaces: running jobs taken one by one in order
// of expected end, each giving back its GPUs in proportion of the slots it holds, until enough
// GPUs (or enough nodes with enough idle GPUs) are idle. Random clusters with shared GPUs and
// multi-node jobs, ends that move, jobs that start and end, every question asked of both.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "place/cluster_state.hpp"
#include "place/expected_ends.hpp"
#include "place/topology.hpp"

using namespace coloc::place;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const coloc::model::JobProfile kJob = [] {
    coloc::model::JobProfile p;
    p.name = "job";
    return p;
}();

RunningJob running(JobId id, std::vector<Placement> where) {
    RunningJob job;
    job.id = id;
    job.profile = &kJob;
    job.where = std::move(where);
    return job;
}

// The walk, written for clarity: what the index must answer.
struct Walk {
    const ClusterState& state;
    const std::map<JobId, double>& ends;
    std::vector<std::pair<double, JobId>> order() const {
        std::vector<std::pair<double, JobId>> by_end;
        for (auto [id, end] : ends) by_end.emplace_back(end, id);
        std::sort(by_end.begin(), by_end.end());
        return by_end;
    }
    double gpus(double now, int need) const {
        double idle = state.topology().total_gpus() - state.busy_gpus();
        if (idle >= need) return 0;
        for (auto [end, id] : order()) {
            for (const Placement& p : state.find(id)->where)
                for (int g : p.gpus) idle += 1.0 / state.used_slots(p.node, g);
            if (idle + 1e-9 >= need) return std::max(0.0, end - now);
        }
        return kInf;
    }
    double nodes(double now, int want, int per_node) const {
        std::vector<double> idle;
        int whole = 0;
        for (std::size_t n = 0; n < state.topology().nodes().size(); ++n) {
            idle.push_back(state.idle_gpus(static_cast<int>(n)));
            whole += idle.back() + 1e-9 >= per_node;
        }
        if (whole >= want) return 0;
        for (auto [end, id] : order()) {
            for (const Placement& p : state.find(id)->where) {
                double& i = idle[static_cast<std::size_t>(p.node)];
                const bool was = i + 1e-9 >= per_node;
                for (int g : p.gpus) i += 1.0 / state.used_slots(p.node, g);
                whole += !was && i + 1e-9 >= per_node;
            }
            if (whole >= want) return std::max(0.0, end - now);
        }
        return kInf;
    }
};

// Places a job of `nodes` x `per_node` GPUs with free slots, at random; false when none fits.
bool place_random(ClusterState& state, JobId id, int nodes, int per_node, std::mt19937_64& rng) {
    std::vector<int> order(state.topology().nodes().size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::shuffle(order.begin(), order.end(), rng);
    RunningJob job;
    job.id = id;
    job.profile = &kJob;
    for (int n : order) {
        std::vector<int> gpus;
        for (int g = 0; g < state.topology().type_of(n).gpus; ++g)
            if (state.free_slots(n, g) > 0) gpus.push_back(g);
        if (static_cast<int>(gpus.size()) < per_node) continue;
        std::shuffle(gpus.begin(), gpus.end(), rng);
        gpus.resize(static_cast<std::size_t>(per_node));
        std::sort(gpus.begin(), gpus.end());
        job.where.push_back({n, gpus});
        if (static_cast<int>(job.where.size()) == nodes) break;
    }
    if (static_cast<int>(job.where.size()) < nodes) return false;
    std::sort(job.where.begin(), job.where.end(),
              [](const Placement& a, const Placement& b) { return a.node < b.node; });
    return state.add(std::move(job));
}

}  // namespace

TEST_CASE("expected ends: every wait is the walk's, as jobs start, end and move their ends") {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        const Topology topo = uniform_topology(6, 4, seed % 2 ? 2 : 3);
        ClusterState state(topo);
        ExpectedEnds index(state);
        std::map<JobId, double> ends;
        JobId next = 1;
        double now = 0;
        int started = 0, shared = 0;
        for (int step = 0; step < 300; ++step) {
            now += std::uniform_real_distribution<double>(0, 5)(rng);
            const int what = std::uniform_int_distribution<int>(0, 9)(rng);
            if (what < 5) {  // a job starts, some with no known end
                const int nodes = std::uniform_int_distribution<int>(1, 3)(rng) == 3 ? 2 : 1;
                const int per_node = std::uniform_int_distribution<int>(1, 4)(rng);
                const JobId id = next++;
                if (place_random(state, id, nodes, per_node, rng)) {
                    ++started;
                    if (std::uniform_int_distribution<int>(0, 9)(rng) > 0) {
                        // Ends fall on a grid so that some are equal (ties go by id).
                        ends[id] = now + 10.0 * std::uniform_int_distribution<int>(0, 30)(rng);
                        index.set(id, ends[id]);
                    } else {
                        for (const Placement& p : state.find(id)->where) index.node_changed(p.node);
                    }
                }
            } else if (what < 8 && state.job_count() > 0) {  // a job ends
                auto it = state.jobs().begin();
                std::advance(it, std::uniform_int_distribution<std::size_t>(0, state.job_count() - 1)(rng));
                const JobId id = it->first;
                const std::vector<Placement> where = it->second.where;
                state.remove(id);
                if (ends.erase(id))
                    index.erase(id);
                else
                    for (const Placement& p : where) index.node_changed(p.node);
            } else if (!ends.empty()) {  // an expected end moves (the job's pace changed)
                auto it = ends.begin();
                std::advance(it, std::uniform_int_distribution<std::size_t>(0, ends.size() - 1)(rng));
                it->second = now + 10.0 * std::uniform_int_distribution<int>(0, 30)(rng);
                index.set(it->first, it->second);
            }
            shared += state.used_slots_total() > state.busy_gpus();
            const Walk walk{state, ends};
            for (int g = 1; g <= topo.total_gpus() + 1; g += 3) {
                INFO("seed " << seed << " step " << step << " gpus " << g);
                CHECK(index.wait_for_idle_gpus(now, g) == walk.gpus(now, g));
            }
            for (int per_node = 1; per_node <= 5; ++per_node)
                for (int n = 1; n <= 7; n += 2) {
                    INFO("seed " << seed << " step " << step << " nodes " << n << " x " << per_node);
                    CHECK(index.wait_for_idle_nodes(now, n, per_node) == walk.nodes(now, n, per_node));
                }
        }
        CHECK(started > 50);  // the questions met busy clusters
        CHECK(shared > 50);   // with shared GPUs
    }
}

TEST_CASE("expected ends: a shared GPU is freed in part by each of its jobs") {
    const Topology topo = uniform_topology(1, 2, 2);
    ClusterState state(topo);
    REQUIRE(state.add(running(1, {{0, {0}}})));
    REQUIRE(state.add(running(2, {{0, {0}}})));
    REQUIRE(state.add(running(3, {{0, {1}}})));
    ExpectedEnds index(state);
    index.set(1, 50);
    index.set(2, 400);
    index.set(3, 100);
    CHECK(index.wait_for_idle_gpus(0, 1) == 100);      // GPU 1 at 100 (GPU 0 is half free at 50)
    CHECK(index.wait_for_idle_gpus(0, 2) == 400);      // both jobs of GPU 0 gone
    CHECK(index.wait_for_idle_nodes(0, 1, 2) == 400);  // the node whole
    CHECK(index.wait_for_idle_gpus(120, 1) == 0);      // past its end: expected now
    // Job 1 ends: GPU 0 now holds job 2 alone, which frees all of it.
    state.remove(1);
    index.erase(1);
    index.set(2, 90);
    CHECK(index.wait_for_idle_gpus(0, 1) == 90);
    CHECK(index.last_end() == 100);
    CHECK(index.size() == 2);
}
