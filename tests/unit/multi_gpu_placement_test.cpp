// The engine with jobs on several GPUs: which of a job's GPUs each neighbour shares, and
// placements that spare a multi-GPU job's slowest GPU.
#include <doctest/doctest.h>

#include <algorithm>

#include "model/coloc_model.hpp"
#include "place/coloc_policy.hpp"
#include "tests/support/place_reference.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

model::JobProfile named(const std::string& name, double sm_util = 0.6) {
    model::JobProfile p;
    p.name = name;
    p.sm_util = sm_util;
    p.known = {{"sm_util", true}};
    return p;
}

const model::Neighbour* listed(const std::vector<model::Neighbour>& ns, const model::JobProfile& p,
                               model::Sharing where) {
    auto it = std::find_if(ns.begin(), ns.end(), [&](const auto& n) { return n.profile == &p && n.where == where; });
    return it == ns.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("neighbours carry which of the job's GPUs they share, along its GPU list") {
    Topology topo = uniform_topology(2, 4, 3);
    ClusterState state(topo);
    const model::JobProfile wide = named("wide"), a = named("a"), b = named("b"), c = named("c");
    REQUIRE(state.add({1, &wide, {{0, {1, 2}}, {1, {0, 3}}}, 0}));
    REQUIRE(state.add({2, &a, {{0, {2}}}, 0}));
    REQUIRE(state.add({3, &b, {{1, {3}}}, 0}));
    REQUIRE(state.add({4, &c, {{0, {1, 2}}}, 0}));
    std::vector<model::Neighbour> ns;
    state.neighbours_of(*state.find(1), ns);
    REQUIRE(listed(ns, a, model::Sharing::Gpu));
    CHECK(listed(ns, a, model::Sharing::Gpu)->gpus == 0b0010);  // its 2nd GPU: node 0, GPU 2
    REQUIRE(listed(ns, b, model::Sharing::Gpu));
    CHECK(listed(ns, b, model::Sharing::Gpu)->gpus == 0b1000);  // its 4th: node 1, GPU 3
    REQUIRE(listed(ns, c, model::Sharing::Gpu));
    CHECK(listed(ns, c, model::Sharing::Gpu)->gpus == 0b0011);  // both on node 0
    // From the one-GPU side, the shared GPU is its only one.
    ns.clear();
    state.neighbours_of(*state.find(2), ns);
    REQUIRE(listed(ns, wide, model::Sharing::Gpu));
    CHECK(listed(ns, wide, model::Sharing::Gpu)->gpus == 1);
    // A candidate placement counts along the placement it is given.
    ns.clear();
    const std::vector<Placement> at = {{0, {0, 2}}};
    state.neighbours_at(at, false, 99, ns);
    CHECK(listed(ns, a, model::Sharing::Gpu)->gpus == 0b10);
}

TEST_CASE("a new one-GPU job does not stack on a multi-GPU neighbour's slowest GPU") {
    // r runs on GPUs 0 and 1; h (beside which r crawls) shares GPU 0, x (harmless) GPU 1. The
    // new job j is a little happier beside h than beside x, and slows r on whichever GPU it
    // joins. Summing r's neighbours, j costs r the same on either GPU, and j's own preference
    // sends it to GPU 0; at the slowest GPU's pace, GPU 0 slows r and GPU 1 does not.
    model::ProfileCatalogue cat;
    for (const char* n : {"r", "h", "x", "j"}) cat.intern(named(n));
    for (const model::MeasuredPair& p : std::vector<model::MeasuredPair>{{"r", "h", "v100", 0.3},
                                                                         {"r", "x", "v100", 0.9},
                                                                         {"r", "j", "v100", 0.5},
                                                                         {"j", "h", "v100", 0.85},
                                                                         {"j", "x", "v100", 0.8},
                                                                         {"j", "r", "v100", 0.9},
                                                                         {"h", "r", "v100", 0.9},
                                                                         {"x", "r", "v100", 0.9},
                                                                         {"h", "j", "v100", 0.9},
                                                                         {"x", "j", "v100", 0.9}})
        cat.add_pair(p);
    const model::ColocModel model(std::move(cat));
    const auto& c = model.catalogue();
    Topology topo = uniform_topology(1, 2, 3);
    ClusterState state(topo);
    REQUIRE(state.add({1, c.find("r"), {{0, {0, 1}}}, 0}));
    REQUIRE(state.add({2, c.find("h"), {{0, {0}}}, 0}));
    REQUIRE(state.add({3, c.find("x"), {{0, {1}}}, 0}));
    JobRequest req;
    req.id = 4;
    req.profile = c.find("j");
    for (bool reuse : {false, true}) {
        CAPTURE(reuse);
        ColocOptions o;
        o.reuse_predictions = reuse;
        const ColocPolicy policy(model, o);
        const Decision d = policy.place(state, req);
        REQUIRE(d.placed);
        CHECK(d.chosen.where.front().gpus == std::vector<int>{1});
        // r is not slowed on GPU 1: its pace is GPU 0's.
        auto r =
            std::find_if(d.chosen.effects.begin(), d.chosen.effects.end(), [](const auto& e) { return e.id == 1; });
        REQUIRE(r != d.chosen.effects.end());
        CHECK(r->after == doctest::Approx(r->before).epsilon(1e-12));
        // The engine's shortcuts agree with scoring the placements one by one.
        const Candidate on0 = score_candidate(state, model, req, {{0, {0}}});
        const Candidate on1 = score_candidate(state, model, req, {{0, {1}}});
        CHECK(on1.loss < on0.loss);
        CHECK(d.chosen.loss == doctest::Approx(on1.loss).epsilon(1e-12));
        CHECK(on0.job_slowdown < on1.job_slowdown);  // j alone would rather have GPU 0
    }
}

TEST_CASE("engine shortcuts agree with scoring every GPU set when GPUs are several") {
    // Residents on one and on several GPUs, new jobs on one to three GPUs: the best set the
    // engine finds (its signatures and caches included) is the best of all sets scored alone.
    const model::ColocModel model;  // the physics prior: busy shares by sm_util
    std::vector<model::JobProfile> profiles;
    for (int i = 0; i < 6; ++i) profiles.push_back(named("p" + std::to_string(i), 0.2 + 0.13 * i));
    Topology topo = uniform_topology(1, 4, 3);
    ClusterState mixed(topo);
    REQUIRE(mixed.add({1, &profiles[5], {{0, {0, 1}}}, 0}));
    REQUIRE(mixed.add({2, &profiles[4], {{0, {0}}}, 0}));
    REQUIRE(mixed.add({3, &profiles[1], {{0, {1, 2, 3}}}, 0}));
    REQUIRE(mixed.add({4, &profiles[3], {{0, {3}}}, 0}));
    REQUIRE(mixed.add({5, &profiles[0], {{0, {2}}}, 0}));
    // Two jobs that meet on GPU 0: GPUs {0, 1} and {2, 3} give both the same kind of sharing
    // (a GPU each), but {0, 1} stacks them on one of the new job's GPUs.
    ClusterState crossed(topo);
    REQUIRE(crossed.add({1, &profiles[5], {{0, {0, 2}}}, 0}));
    REQUIRE(crossed.add({2, &profiles[4], {{0, {0, 3}}}, 0}));
    for (const ClusterState* s : {&mixed, &crossed})
        for (int k = 1; k <= 3; ++k)
            for (int who : {0, 2, 5})
                for (bool reuse : {false, true}) {
                    CAPTURE(k);
                    CAPTURE(who);
                    CAPTURE(reuse);
                    const ClusterState& state = *s;
                    JobRequest req;
                    req.id = 10;
                    req.profile = &profiles[static_cast<std::size_t>(who)];
                    req.gpus_per_node = k;
                    ColocOptions o;
                    o.reuse_predictions = reuse;
                    const ColocPolicy policy(model, o);
                    const Decision d = policy.place(state, req);
                    REQUIRE(d.placed);
                    double best = 1e9;
                    for (const auto& set : gpu_subsets({0, 1, 2, 3}, k, 1000))
                        best = std::min(best, score_candidate(state, model, req, {{0, set}}).loss);
                    CHECK(d.chosen.loss == doctest::Approx(best).epsilon(1e-12));
                    const Candidate again = score_candidate(state, model, req, d.chosen.where);
                    CHECK(d.chosen.loss == doctest::Approx(again.loss).epsilon(1e-12));
                    CHECK(d.chosen.job_slowdown == doctest::Approx(again.job_slowdown).epsilon(1e-12));
                    // Explain ranks the sets with the same numbers.
                    const Decision ranked = policy.place(state, req, 50);
                    for (const Candidate& cand : ranked.ranked)
                        CHECK(cand.loss ==
                              doctest::Approx(score_candidate(state, model, req, cand.where).loss).epsilon(1e-12));
                }
}
