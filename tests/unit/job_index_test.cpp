// JobIndex, ClusterState::find's table: after any mix of inserts and erases (runs that wrap
// around the table's end, erases inside long runs, growth), every id inserted and not erased is
// found with its job and no other id is.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

#include "place/cluster_state.hpp"
#include "place/job_index.hpp"

using namespace coloc::place;

TEST_CASE("the job index finds exactly the jobs inserted and not erased, through growth and erases in runs") {
    std::vector<RunningJob> jobs(4000);
    std::map<std::uint64_t, const RunningJob*> truth;
    JobIndex index;
    std::mt19937_64 rng(7);
    // Ids from a small range collide at home often (long runs); large ones look like Slurm's.
    auto id_of = [&](std::size_t i) { return i % 3 == 0 ? std::uint64_t{i} : (std::uint64_t{1} << 40) + i * 64; };
    for (int step = 0; step < 40000; ++step) {
        const std::size_t i = rng() % jobs.size();
        const std::uint64_t id = id_of(i);
        if (truth.count(id)) {
            index.erase(id);
            truth.erase(id);
        } else {
            index.insert(id, &jobs[i]);
            truth[id] = &jobs[i];
        }
        if (step % 997 == 0)
            for (std::size_t k = 0; k < jobs.size(); ++k) {
                const auto it = truth.find(id_of(k));
                REQUIRE(index.find(id_of(k)) == (it == truth.end() ? nullptr : it->second));
            }
    }
    for (const auto& [id, job] : truth) CHECK(index.find(id) == job);
    index.erase(12345678);  // not there: nothing changes
    for (const auto& [id, job] : truth) CHECK(index.find(id) == job);
}

TEST_CASE("a copied cluster state finds its own jobs, and a removed job is found no more") {
    Topology topo = uniform_topology(2, 4, 2, 2, 0);
    coloc::model::JobProfile profile;
    ClusterState state(topo);
    REQUIRE(state.add({.id = 7, .profile = &profile, .where = {{0, {1}}}}));
    REQUIRE(state.add({.id = 9, .profile = &profile, .where = {{1, {0, 1}}}}));
    ClusterState copy(state);
    REQUIRE(copy.find(7) != nullptr);
    CHECK(copy.find(7) != state.find(7));  // its own job, not the original's
    CHECK(copy.find(7)->where.front().gpus == std::vector<int>{1});
    REQUIRE(state.remove(7));
    CHECK(state.find(7) == nullptr);
    CHECK(copy.find(7) != nullptr);
    CHECK(state.find(9) != nullptr);
}
