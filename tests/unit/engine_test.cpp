#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "model/baseline.hpp"
#include "place/coloc_policy.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

struct Fixture {
    Topology topo = uniform_topology(2, 4, 2);  // 2 nodes x 4 GPUs, 2 slots each, islands {0,1},{2,3}
    ClusterState state{topo};
    model::BaselineModel model;
    ColocPolicy policy{model};
    model::JobProfile profile;

    JobRequest request(JobId id, int gpus, std::vector<int> nodes = {0}) {
        JobRequest r;
        r.id = id;
        r.profile = &profile;
        r.gpus_per_node = gpus;
        r.allowed_nodes = std::move(nodes);
        return r;
    }

    Decision place_and_add(JobId id, int gpus, std::vector<int> nodes = {0}) {
        Decision d = policy.place(state, request(id, gpus, std::move(nodes)));
        if (d.placed) {
            RunningJob j;
            j.id = id;
            j.profile = &profile;
            j.where = d.chosen.where;
            REQUIRE(state.add(j));
        }
        return d;
    }
};

}  // namespace

TEST_CASE("cluster state counts slots and refuses to overfill a GPU") {
    Fixture f;
    model::JobProfile p;
    CHECK(f.state.add({1, &p, {{0, {0, 1}}}, 0}));
    CHECK(f.state.add({2, &p, {{0, {0}}}, 0}));
    CHECK(f.state.free_slots(0, 0) == 0);
    CHECK(f.state.busy_gpus() == 2);
    CHECK_FALSE(f.state.add({3, &p, {{0, {0}}}, 0}));                     // GPU 0 is full
    CHECK_FALSE(f.state.add({3, &p, {{0, {2, 2}}}, 0}));                  // one slot per GPU per job
    CHECK_FALSE(f.state.add({3, &p, {{0, {9}}}, 0}));                     // no such GPU
    CHECK_FALSE(f.state.add({2, &p, {{1, {0}}}, 0}));                     // already running
    CHECK(f.state.add({3, &p, {{0, {0}}}, 0}, /*enforce_slots=*/false));  // Slurm bound it
    CHECK(f.state.free_slots(0) == 8 - 4);
    CHECK(f.state.remove(1));
    CHECK(f.state.remove(3));
    CHECK_FALSE(f.state.remove(3));
    CHECK(f.state.free_slots(0, 0) == 1);
    CHECK(f.state.free_slots(0) == 7);
    CHECK(f.state.busy_gpus() == 1);
}

TEST_CASE("neighbours are found at the tightest level they share") {
    Fixture f;
    model::JobProfile p;
    f.state.add({1, &p, {{0, {0}}}, 0});
    f.state.add({2, &p, {{0, {1}}}, 0});
    f.state.add({3, &p, {{0, {3}}}, 0});
    std::vector<Placement> at = {{0, {0}}};
    std::vector<model::Neighbour> n;
    f.state.neighbours_at(at, false, 99, n);
    REQUIRE(n.size() == 3);
    std::multiset<model::Sharing> kinds;
    for (auto& x : n) kinds.insert(x.where);
    CHECK(kinds.count(model::Sharing::Gpu) == 1);
    CHECK(kinds.count(model::Sharing::Island) == 1);
    CHECK(kinds.count(model::Sharing::Node) == 1);
}

TEST_CASE("the engine spreads jobs over GPUs before it shares one, and never exceeds slots") {
    Fixture f;
    std::set<int> first_four;
    for (JobId id = 1; id <= 4; ++id) {
        Decision d = f.place_and_add(id, 1);
        REQUIRE(d.placed);
        first_four.insert(d.chosen.where[0].gpus[0]);
    }
    CHECK(first_four.size() == 4);  // fewer jobs than GPUs: no two share one
    for (JobId id = 5; id <= 8; ++id) REQUIRE(f.place_and_add(id, 1).placed);
    for (int g = 0; g < 4; ++g) CHECK(f.state.used_slots(0, g) == 2);
    Decision full = f.place_and_add(9, 1);
    CHECK_FALSE(full.placed);
    CHECK(full.reason.find("free slot") != std::string::npos);
}

TEST_CASE("a two-GPU job avoids GPUs in use and prefers an island of its own") {
    Fixture f;
    model::JobProfile p;
    f.state.add({1, &p, {{0, {0}}}, 0});
    Decision d = f.place_and_add(2, 2);
    REQUIRE(d.placed);
    CHECK(d.chosen.where[0].gpus == std::vector<int>{2, 3});
    CHECK(d.chosen.job_slowdown > 1.0);  // it still shares the node
    REQUIRE(d.chosen.effects.size() == 1);
    CHECK(d.chosen.effects[0].after > d.chosen.effects[0].before);
}

TEST_CASE("narrow mode chooses only among the step's GPUs") {
    Fixture f;
    model::JobProfile p;
    f.state.add({1, &p, {{0, {1}}}, 0});
    JobRequest r = f.request(2, 1);
    r.allowed_gpus = {1, 3};
    Decision d = f.policy.place(f.state, r, 5);
    REQUIRE(d.placed);
    CHECK(d.chosen.where[0].gpus == std::vector<int>{3});
    CHECK(d.ranked.size() == 2);  // both allowed GPUs were considered, ranked
    CHECK(d.ranked[0].loss <= d.ranked[1].loss);
}

TEST_CASE("equal candidates resolve the same way every time") {
    Fixture f;
    Decision a = f.policy.place(f.state, f.request(1, 1, {0, 1}));
    Decision b = f.policy.place(f.state, f.request(1, 1, {1, 0}));
    REQUIRE(a.placed);
    CHECK(a.chosen.where[0].node == 0);
    CHECK(a.chosen.where[0].gpus == std::vector<int>{0});
    CHECK(b.chosen.where[0].node == a.chosen.where[0].node);
}

TEST_CASE("a multi-node job is one placement over several nodes") {
    Fixture f;
    JobRequest r = f.request(1, 2, {});
    r.nodes = 2;
    Decision d = f.policy.place(f.state, r);
    REQUIRE(d.placed);
    REQUIRE(d.chosen.where.size() == 2);
    CHECK(d.chosen.where[0].node != d.chosen.where[1].node);
    r.nodes = 3;
    CHECK_FALSE(f.policy.place(f.state, r).placed);
}
