// The score of a candidate by hand: the new job's lost throughput plus what every neighbour it
// would share a GPU, island, switch, node or link with loses on top, with a model whose slowdown
// is 1 + a fixed cost per neighbour and level, so that each figure can be worked out on paper.
#include <doctest/doctest.h>

#include "place/coloc_policy.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// slowdown = 1 + the sum of a cost per neighbour by what it shares.
class PerLevelModel final : public model::InterferenceModel {
public:
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        double s = 1.0;
        for (const auto& n : neighbours) s += cost(n.where);
        return s;
    }
    std::string name() const override { return "per-level"; }
    static double cost(model::Sharing w) {
        switch (w) {
            case model::Sharing::Gpu:
                return 0.5;
            case model::Sharing::Island:
                return 0.25;
            case model::Sharing::Switch:
                return 0.125;
            case model::Sharing::Node:
                return 0.0625;
            case model::Sharing::Link:
                return 1.0;
        }
        return 0;
    }
};

double lost(double slowdown, int gpus = 1) { return gpus * (1.0 - 1.0 / slowdown); }

struct Scoring {
    Topology topo = [] {
        Topology t;
        NodeType n;
        n.name = "four";
        n.gpus = 4;
        n.slots_per_gpu = 2;
        n.island = {0, 0, -1, -1};     // GPUs 0-1 on NVLink
        n.pcie_switch = {0, 0, 1, 1};  // 0-1 and 2-3 behind a switch each
        const int type = t.add_type(n);
        t.add_node("a1", type, "leaf1");
        t.add_node("a2", type, "leaf1");
        t.add_node("b1", type, "leaf2");
        t.add_node("b2", type, "leaf2");
        return t;
    }();
    ClusterState state{topo};
    PerLevelModel model;
    ColocPolicy policy{model, ColocOptions{.max_nodes_scored = 0}};
    model::JobProfile profile;

    void run(JobId id, std::vector<Placement> where) {
        RunningJob j;
        j.id = id;
        j.profile = &profile;
        j.where = std::move(where);
        REQUIRE(state.add(j));
    }
    JobRequest request(JobId id, int gpus, std::vector<int> nodes, int node_count = 1) {
        JobRequest r;
        r.id = id;
        r.profile = &profile;
        r.gpus_per_node = gpus;
        r.nodes = node_count;
        r.allowed_nodes = std::move(nodes);
        return r;
    }
};

}  // namespace

TEST_CASE("scoring: each candidate GPU costs the job's loss plus its neighbour's added loss") {
    Scoring s;
    s.run(1, {{0, {0}}});  // job 1 on GPU 0 of a1
    const Decision d = s.policy.place(s.state, s.request(2, 1, {0}), 4);
    REQUIRE(d.placed);
    // GPU 2 and 3 share only the node with job 1 (1.0625 each); GPU 1 its NVLink island (1.25
    // each); GPU 0 the GPU itself (1.5 each). GPUs 2 and 3 are alike: the engine scores one of
    // them, the lower.
    const std::vector<std::pair<int, double>> expected = {
        {2, 2 * lost(1.0625)}, {1, 2 * lost(1.25)}, {0, 2 * lost(1.5)}};
    REQUIRE(d.ranked.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        const Candidate& c = d.ranked[i];
        CHECK(c.where.front().gpus == std::vector<int>{expected[i].first});
        CHECK(c.loss == doctest::Approx(expected[i].second));
        CHECK(c.harm == doctest::Approx(expected[i].second / 2));  // job 1 loses as much as job 2
        REQUIRE(c.effects.size() == 1);
        CHECK(c.effects[0].id == 1);
        CHECK(c.effects[0].before == doctest::Approx(1.0));
    }
    CHECK(d.chosen.where.front().gpus == std::vector<int>{2});
}

TEST_CASE("scoring: a switch shared without NVLink costs less than an island, more than the node") {
    Scoring s;
    s.run(1, {{0, {2}}});  // job 1 on GPU 2 of a1 (switch 1, no island)
    const Decision d = s.policy.place(s.state, s.request(2, 1, {0}), 4);
    REQUIRE(d.ranked.size() == 3);
    CHECK(d.ranked[0].where.front().gpus == std::vector<int>{0});  // node only (GPUs 0 and 1 alike)
    CHECK(d.ranked[0].loss == doctest::Approx(2 * lost(1.0625)));
    CHECK(d.ranked[1].where.front().gpus == std::vector<int>{3});  // the switch
    CHECK(d.ranked[1].loss == doctest::Approx(2 * lost(1.125)));
    CHECK(d.ranked[2].where.front().gpus == std::vector<int>{2});  // the GPU itself
}

TEST_CASE("scoring: a multi-node job's link term reaches multi-node jobs on the links it crosses") {
    Scoring s;
    s.run(1, {{0, {0}}, {1, {0}}});  // a two-node job on leaf1 (a1, a2)
    // A two-node job on leaf2's nodes meets nobody: no GPU, node or link in common.
    const Decision quiet = s.policy.place(s.state, s.request(2, 1, {2, 3}, 2));
    REQUIRE(quiet.placed);
    CHECK(quiet.chosen.loss == doctest::Approx(0.0));
    CHECK(quiet.chosen.effects.empty());
    // One crossing both links (a2 and b1) shares a2 with job 1 (node level there) and its link:
    // its own slowdown 1 + 0.0625 + 1, job 1's the same; each runs on two GPUs.
    s.run(3, {{2, {3}}, {3, {3}}});  // another two-node job, on leaf2
    const Candidate c = score_candidate(s.state, s.model, s.request(4, 1, {1, 2}, 2), {{1, {2}}, {2, {2}}});
    // Job 4: node + link with job 1, node + link with job 3 (b1 holds job 3's GPU 3: switch 1).
    const double mine = 1 + PerLevelModel::cost(model::Sharing::Node) + PerLevelModel::cost(model::Sharing::Link) +
                        PerLevelModel::cost(model::Sharing::Switch) + PerLevelModel::cost(model::Sharing::Link);
    CHECK(c.job_slowdown == doctest::Approx(mine));
    // Before, jobs 1 and 3 share nothing (other nodes, other links).
    REQUIRE(c.effects.size() == 2);
    for (const auto& e : c.effects) {
        CAPTURE(e.id);
        CHECK(e.before == doctest::Approx(1.0));
        const double level =
            e.id == 1 ? PerLevelModel::cost(model::Sharing::Node) : PerLevelModel::cost(model::Sharing::Switch);
        CHECK(e.after == doctest::Approx(1 + level + PerLevelModel::cost(model::Sharing::Link)));
    }
    const double harm = lost(1 + 0.0625 + 1, 2) + lost(1 + 0.125 + 1, 2);
    CHECK(c.harm == doctest::Approx(harm));
    CHECK(c.loss == doctest::Approx(lost(mine, 2) + harm));
}
