// slurm-coloc (the replay's colocd without admission): Slurm's first-fit node, the model's GPUs
// on it, and never held back.
#include <doctest/doctest.h>

#include "place/coloc_policy.hpp"
#include "place/slurm_node_policy.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// Two heavy jobs on one GPU run at half speed; a light one slows nobody.
class HeavyPairs final : public model::InterferenceModel {
public:
    double slowdown(const model::JobProfile& job, std::span<const model::Neighbour> neighbours) const override {
        double s = 1;
        for (const model::Neighbour& n : neighbours)
            if (n.where == model::Sharing::Gpu && job.name == "heavy" && n.profile->name == "heavy") s += 1;
        return s;
    }
    std::string name() const override { return "heavy-pairs"; }
};

}  // namespace

TEST_CASE("slurm-coloc: Slurm's node even when another is idle, the model's GPU on it, shared without a rule") {
    const Topology topo = uniform_topology(2, 2, 2);  // 2 nodes x 2 GPUs x 2 slots
    ClusterState state(topo);
    model::JobProfile heavy, light;
    heavy.name = "heavy";
    light.name = "light";
    RunningJob a{.id = 1, .profile = &heavy, .where = {{0, {0}}}};
    RunningJob b{.id = 2, .profile = &light, .where = {{0, {1}}}};
    REQUIRE(state.add(std::move(a)));
    REQUIRE(state.add(std::move(b)));
    HeavyPairs model;
    JobRequest r;
    r.id = 9;
    r.profile = &heavy;

    // Slurm fills node 0's slots first; colocd then picks the GPU beside the light job.
    const SlurmNodeColocGpus installed(model, ColocOptions{});
    const Decision d = installed.place(state, r);
    REQUIRE(d.placed);
    CHECK(d.chosen.where[0].node == 0);
    CHECK(d.chosen.where[0].gpus == std::vector<int>{1});

    // Node 0 with only the heavy job's GPU open: coloc goes to the idle node 1, colocd without
    // admission shares all the same, nothing holding the job back.
    RunningJob c{.id = 3, .profile = &heavy, .where = {{0, {1}}}};
    REQUIRE(state.add(std::move(c)));
    const Decision coloc = ColocPolicy(model).place(state, r);
    REQUIRE(coloc.placed);
    CHECK(coloc.chosen.where[0].node == 1);
    const Decision forced = installed.place(state, r);
    REQUIRE(forced.placed);
    CHECK_FALSE(forced.held);
    CHECK(forced.chosen.where[0].node == 0);
    CHECK(forced.chosen.where[0].gpus == std::vector<int>{0});
    CHECK(forced.chosen.job_slowdown == doctest::Approx(2.0));
}
