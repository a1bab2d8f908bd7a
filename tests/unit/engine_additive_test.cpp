// The engine's incremental scoring: a running job's slowdown with one more neighbour from its
// delays added up (model::DelaySum), kept between decisions while the model learns, and the
// explain ranking cut at the keep-th best, all checked against scoring from the whole list.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "model/coloc_model.hpp"
#include "place/coloc_policy.hpp"
#include "tests/unit/engine_checks.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

std::vector<model::JobProfile> kinds() {
    std::vector<model::JobProfile> out;
    for (int i = 0; i < 5; ++i) {
        model::JobProfile p;
        p.name = "k" + std::to_string(i);
        p.sm_util = 0.2 + 0.15 * i;
        p.mem_bw_util = 0.8 - 0.12 * i;
        p.host_pressure = 0.05 * i;
        p.comm_fraction = 0.1 * (i % 3);
        p.comm_bytes = 1e8 * (i % 3);
        p.iter_time_s = 0.1 + 0.05 * i;
        p.known = {{"sm_util", true}, {"mem_bw_util", true}, {"host_pressure", true}, {"comm_fraction", true}};
        out.push_back(p);
    }
    return out;
}

model::ProfileCatalogue catalogue_of(const std::vector<model::JobProfile>& ps) {
    model::ProfileCatalogue c;
    for (const auto& p : ps) c.intern(p);
    return c;
}

}  // namespace

TEST_CASE("model: the slowdown with one more neighbour is its delay added to the others' sum") {
    const model::ColocModel m(catalogue_of(kinds()));
    const auto& ps = m.catalogue().profiles();
    std::mt19937 rng(5);
    const model::Sharing levels[] = {model::Sharing::Gpu, model::Sharing::Island, model::Sharing::Switch,
                                     model::Sharing::Node, model::Sharing::Link};
    for (int round = 0; round < 300; ++round) {
        const model::JobProfile& job = ps[rng() % ps.size()];
        std::vector<model::Neighbour> base;
        const int n = static_cast<int>(rng() % 7);
        for (int i = 0; i < n; ++i)
            base.push_back({&ps[rng() % ps.size()], levels[rng() % 5], std::nullopt, 1 + rng() % 15});
        const model::Neighbour extra{&ps[rng() % ps.size()], levels[rng() % 5], std::nullopt, 1 + rng() % 15};
        std::vector<model::Neighbour> all = base;
        all.push_back(extra);
        const double d = m.delay(job, extra);
        const bool gpu = extra.where == model::Sharing::Gpu;
        CAPTURE(round);
        CHECK(m.delays(job, base).slowdown_with(gpu ? extra.gpus : 0, gpu ? d : 0, gpu ? 0 : d) ==
              doctest::Approx(m.slowdown(job, all)).epsilon(1e-12));
        CHECK(m.delays(job, all).slowdown() == doctest::Approx(m.slowdown(job, all)).epsilon(1e-12));
    }
}

TEST_CASE("coloc: kept predictions follow a model that learns between decisions; explain keeps the best") {
    Topology topo = uniform_topology(6, 4, 3, 2, 2);
    ClusterState state(topo);
    model::ColocModel m(catalogue_of(kinds()));
    const auto& ps = m.catalogue().profiles();
    ColocOptions kept;
    kept.reuse_predictions = true;
    const ColocPolicy with(m, kept), without(m);
    std::mt19937 rng(11);
    std::vector<JobId> running;
    int compared = 0, learned = 0;
    for (JobId id = 1; id < 400; ++id) {
        if (!running.empty() && rng() % 3 == 0) {
            const std::size_t i = rng() % running.size();
            REQUIRE(state.remove(running[i]));
            running.erase(running.begin() + static_cast<long>(i));
        }
        if (!running.empty() && rng() % 4 == 0) {
            // Something measured: every later prediction may change.
            const RunningJob& job = *state.find(running[rng() % running.size()]);
            std::vector<model::Neighbour> ns;
            state.neighbours_of(job, ns);
            if (!ns.empty()) {
                m.observe(*job.profile, ns, 1.5 * m.slowdown(*job.profile, ns));
                ++learned;
            }
        }
        JobRequest r;
        r.id = id;
        r.profile = &ps[rng() % ps.size()];
        r.gpus_per_node = 1 + static_cast<int>(rng() % 3);
        r.nodes = rng() % 6 == 0 ? 2 : 1;
        const Decision a = with.place(state, r, 5), b = without.place(state, r, 5);
        REQUIRE(a.placed == b.placed);
        if (!a.placed) continue;
        CAPTURE(id);
        test::check_same_choice(a, b);
        CHECK(a.chosen.loss == doctest::Approx(score_candidate(state, m, r, a.chosen.where).loss).epsilon(1e-12));
        if (r.nodes == 1) {
            // The five best of every candidate, worked out with no cut.
            const Decision all = without.place(state, r, 100);
            REQUIRE(a.ranked.size() == std::min<std::size_t>(5, all.ranked.size()));
            for (std::size_t i = 0; i < a.ranked.size(); ++i) {
                CHECK(a.ranked[i].loss == doctest::Approx(all.ranked[i].loss).epsilon(1e-12));
                CHECK(a.ranked[i].loss ==
                      doctest::Approx(score_candidate(state, m, r, a.ranked[i].where).loss).epsilon(1e-12));
            }
        }
        ++compared;
        test::start_chosen(state, r, a, running);
    }
    CHECK(compared > 150);
    CHECK(learned > 50);
}

TEST_CASE("coloc: a multi-node neighbour is slowed on the GPU of its own that the new job joins") {
    // `wide` runs one GPU on each of two nodes: GPU 1 of node 0 (its GPU 0, shared with `busy`)
    // and GPU 3 of node 1 (its GPU 1). A new job on GPU 3 of node 1 joins wide's GPU 1, not the
    // GPU that `busy` slows, so wide runs at the pace of the slower of the two.
    Topology topo = uniform_topology(2, 4, 2, 2, 2);
    ClusterState state(topo);
    const model::ColocModel m(catalogue_of(kinds()));
    const auto& ps = m.catalogue().profiles();
    REQUIRE(state.add({1, &ps[1], {{0, {1}}, {1, {3}}}, 0}));
    REQUIRE(state.add({2, &ps[4], {{0, {1}}}, 0}));
    const ColocPolicy policy(m);
    JobRequest r;
    r.id = 3;
    r.profile = &ps[3];
    r.allowed_nodes = {1};
    r.allowed_gpus = {3};
    const Decision d = policy.place(state, r);
    REQUIRE(d.placed);
    const Candidate want = score_candidate(state, m, r, {{1, {3}}});
    REQUIRE(d.chosen.effects.size() == want.effects.size());
    for (const NeighbourEffect& e : want.effects) {
        CAPTURE(e.id);
        auto got =
            std::find_if(d.chosen.effects.begin(), d.chosen.effects.end(), [&](const auto& x) { return x.id == e.id; });
        REQUIRE(got != d.chosen.effects.end());
        CHECK(got->after == doctest::Approx(e.after).epsilon(1e-12));
    }
    CHECK(d.chosen.loss == doctest::Approx(want.loss).epsilon(1e-12));
}
