#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "config/config.hpp"
#include "daemon/steering/node_writer.hpp"
#include "daemon/steering/steering.hpp"
#include "model/coloc_model.hpp"
#include "place/coloc_policy.hpp"

using namespace coloc;
using namespace coloc::daemon;

namespace {

// Four 4-GPU nodes, n1-n2 on leaf1 and n3-n4 on leaf2; the real coloc model.
struct SteeringFixture {
    place::Topology topo = [] {
        place::Topology t;
        place::NodeType quad;
        quad.name = "quad";
        quad.gpus = 4;
        quad.slots_per_gpu = 2;
        quad.island = {0, 0, 1, 1};
        quad.pcie_switch = {0, 0, 1, 1};
        quad.nic = {0, 0, 0, 0};
        const int type = t.add_type(quad);
        t.add_node("n1", type, "leaf1");
        t.add_node("n2", type, "leaf1");
        t.add_node("n3", type, "leaf2");
        t.add_node("n4", type, "leaf2");
        return t;
    }();
    place::ClusterState state{topo};
    model::ProfileCatalogue catalogue;
    model::ColocModel model{catalogue};
    place::ColocPolicy policy{model};
    model::JobProfile comm = builtin_probe("coloc_quietnet");

    // A communication-heavy job on all four GPUs of n1 and n2.
    void load_n1_n2() {
        place::RunningJob j;
        j.id = 7;
        j.profile = &comm;
        j.where = {{0, {0, 1, 2, 3}}, {1, {0, 1, 2, 3}}};
        REQUIRE(state.add(j));
    }
};

bool has(const NodeAdvice& a, const std::string& f) {
    return std::find(a.features.begin(), a.features.end(), f) != a.features.end();
}

}  // namespace

TEST_CASE("steering: a node's extra weight grows with the predicted loss, damped by hysteresis") {
    SteeringConfig cfg;  // max_extra_weight 100, full at 0.5 per GPU, hysteresis 5
    CHECK(advise(cfg, 0.0, {}, std::nullopt).extra_weight == 0);
    CHECK(advise(cfg, 0.1, {}, std::nullopt).extra_weight == 20);   // 0.1 / 0.5 of 100
    CHECK(advise(cfg, 0.001, {}, std::nullopt).extra_weight == 1);  // any loss ranks behind none
    CHECK(advise(cfg, 2.0, {}, std::nullopt).extra_weight == 100);  // capped
    CHECK(advise(cfg, std::numeric_limits<double>::infinity(), {}, std::nullopt).extra_weight == 100);  // full
    NodeAdvice last{20, {}};
    CHECK(advise(cfg, 0.11, {}, last).extra_weight == 20);  // 22: within 5 of 20, kept
    CHECK(advise(cfg, 0.13, {}, last).extra_weight == 26);  // 26: moved far enough
    CHECK(advise(cfg, 0.0, {}, last).extra_weight == 0);    // back to no loss: always follows
}

TEST_CASE("steering: class features go on quiet nodes, and stay until the loss passes the hysteresis") {
    SteeringConfig cfg;  // classes coloc_quietnet, coloc_quietgpu; quiet at <= 0.05, +0.02 to leave
    NodeAdvice a = advise(cfg, 0, {0.04, 0.2}, std::nullopt);
    CHECK(a.features == std::vector<std::string>{"coloc_quietnet"});
    CHECK(advise(cfg, 0, {0.06, 0.2}, std::nullopt).features.empty());  // not quiet yet
    CHECK(advise(cfg, 0, {0.06, 0.2}, a).features == a.features);       // quiet still: 0.06 <= 0.07
    CHECK(advise(cfg, 0, {0.08, 0.2}, a).features.empty());             // 0.08 > 0.07: gone
}

TEST_CASE("steering: n1 and n2 busy with a communication-heavy job weigh more, n3 and n4 carry the features") {
    SteeringFixture f;
    SteeringConfig cfg;
    cfg.enabled = true;
    Steering steering(cfg, f.catalogue, 4);
    f.load_n1_n2();
    const auto updates = steering.round(f.state, f.policy, f.model, 0);
    REQUIRE(updates.size() == 4);  // the first round tells Slurm about every node
    for (int n : {0, 1}) {
        const NodeAdvice& a = *steering.applied(n);
        CHECK(a.extra_weight > 0);
        CHECK_FALSE(has(a, "coloc_quietnet"));
        CHECK_FALSE(has(a, "coloc_quietgpu"));
    }
    for (int n : {2, 3}) {
        const NodeAdvice& a = *steering.applied(n);
        CHECK(a.extra_weight == 0);
        CHECK(a.features == std::vector<std::string>{"coloc_quietgpu", "coloc_quietnet"});
    }
    // The busiest nodes first: Slurm hears of the biggest changes before the rate limit cuts in.
    CHECK((updates[0].node == "n1" || updates[0].node == "n2"));
    REQUIRE(steering.least_extra_weight().has_value());
    CHECK(*steering.least_extra_weight() == 0);  // n3 and n4
    steering.set_enabled(false, f.topo);
    CHECK_FALSE(steering.least_extra_weight().has_value());
}

TEST_CASE("steering: a multi-node job's traffic makes the nodes of its link loud for the network class") {
    SteeringFixture f;
    f.load_n1_n2();
    // n3 and n4 sit on another link: nothing of the job reaches them.
    CHECK(probe_loss(f.state, f.policy, f.model, f.comm, 2) == doctest::Approx(0.0));
    // n2's GPUs are all shared: a network-heavy probe loses on GPU and link.
    CHECK(probe_loss(f.state, f.policy, f.model, f.comm, 1) > 0.05);
}

TEST_CASE("steering: rounds are rate-limited and run only when due and something changed") {
    SteeringFixture f;
    SteeringConfig cfg;
    cfg.enabled = true;
    cfg.interval_s = 10;
    cfg.max_updates_per_round = 1;
    Steering steering(cfg, f.catalogue, 4);
    CHECK(steering.round(f.state, f.policy, f.model, 0).size() == 1);
    CHECK(steering.round(f.state, f.policy, f.model, 5000).empty());       // not due
    CHECK(steering.round(f.state, f.policy, f.model, 10000).size() == 1);  // due, and 3 were left
    CHECK(steering.round(f.state, f.policy, f.model, 20000).size() == 1);
    CHECK(steering.round(f.state, f.policy, f.model, 30000).size() == 1);
    CHECK(steering.round(f.state, f.policy, f.model, 40000).empty());  // all told, nothing changed
    steering.mark_dirty();
    CHECK(steering.round(f.state, f.policy, f.model, 50000).empty());  // changed, but the same advice
    CHECK(steering.updates() == 4);
}

TEST_CASE("steering: switched off, every node told anything gets its admin's settings back") {
    SteeringFixture f;
    SteeringConfig cfg;
    cfg.enabled = true;
    cfg.max_updates_per_round = 2;
    Steering steering(cfg, f.catalogue, 4);
    REQUIRE(steering.round(f.state, f.policy, f.model, 0).size() == 2);
    const auto back = steering.set_enabled(false, f.topo);
    REQUIRE(back.size() == 2);
    for (const auto& u : back) CHECK_FALSE(u.advice.has_value());
    CHECK_FALSE(steering.applied(0).has_value());
    CHECK(steering.round(f.state, f.policy, f.model, 100000).empty());  // off: no rounds
    CHECK(steering.set_enabled(true, f.topo).empty());
    CHECK(steering.round(f.state, f.policy, f.model, 100001).size() == 2);  // on again: at once
}

TEST_CASE("steering: a class profile the catalogue lacks is refused by name") {
    model::ProfileCatalogue catalogue;
    SteeringConfig cfg;
    cfg.classes = {{"coloc_quietnet", "no-such-profile"}};
    CHECK_THROWS_WITH_AS(Steering(cfg, catalogue, 1),
                         "steering class coloc_quietnet: profile 'no-such-profile' is not in the profile catalogue",
                         std::invalid_argument);
}

TEST_CASE("steering: the admin's features are kept, coloc's added and removed") {
    CHECK(admin_features("bigmem,coloc_quietnet,ib") == "bigmem,ib");
    CHECK(admin_features("") == "");
    CHECK(with_coloc_features("bigmem,coloc_old", {"coloc_quietnet", "coloc_quietgpu"}) ==
          "bigmem,coloc_quietnet,coloc_quietgpu");
    CHECK(with_coloc_features("", {}) == "");
}

TEST_CASE("steering: colocd.yaml's steering section is read, and bad values name their key") {
    const std::string base = R"(node_types:
  quad: { gpus: 4 }
nodes:
  - { names: "n[1-2]", type: quad }
)";
    Config c = parse_config(base + R"(steering:
  enabled: true
  interval_s: 3
  max_updates_per_round: 8
  max_extra_weight: 50
  full_weight_loss: 0.25
  weight_hysteresis: 2
  quiet_loss: 0.1
  quiet_hysteresis: 0.01
  classes: { coloc_quietnet: gpt-1b-2node, coloc_quietgpu: }
)",
                            "t.yaml");
    CHECK(c.steering.enabled);
    CHECK(c.steering.interval_s == 3);
    CHECK(c.steering.max_updates_per_round == 8);
    CHECK(c.steering.max_extra_weight == 50);
    CHECK(c.steering.full_weight_loss == doctest::Approx(0.25));
    CHECK(c.steering.weight_hysteresis == 2);
    CHECK(c.steering.quiet_loss == doctest::Approx(0.1));
    REQUIRE(c.steering.classes.size() == 2);
    CHECK(c.steering.classes[0].feature == "coloc_quietnet");
    CHECK(c.steering.classes[0].profile == "gpt-1b-2node");
    CHECK(c.steering.classes[1].profile == "");
    CHECK_FALSE(parse_config(base, "t.yaml").steering.enabled);
    CHECK_THROWS_WITH_AS(parse_config(base + "steering: { interval_s: 0 }\n", "t.yaml"),
                         "t.yaml:5: key 'steering.interval_s': 0 is outside 1..86400", ConfigError);
    CHECK_THROWS_WITH_AS(parse_config(base + "steering: { classes: { quiet: x } }\n", "t.yaml"),
                         doctest::Contains("key 'steering.classes.quiet': a class feature is coloc_"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config(base + "steering: { enabled: maybe }\n", "t.yaml"),
                         doctest::Contains("key 'steering.enabled': expected true or false"), ConfigError);
}

TEST_CASE("steering: a round over 1,000 busy nodes, timed") {
    const place::Topology topo = place::uniform_topology(1000, 8, 2);
    place::ClusterState state(topo);
    model::ProfileCatalogue catalogue;
    model::ColocModel model(catalogue);
    place::ColocPolicy policy(model);
    const model::JobProfile comm = builtin_probe("coloc_quietnet");
    // Four 2-GPU jobs on every node, every tenth of them on two nodes.
    place::JobId id = 1;
    for (int n = 0; n < 1000; ++n)
        for (int k = 0; k < 4; ++k) {
            place::RunningJob j;
            j.id = id++;
            j.profile = &comm;
            j.where = {{n, {2 * k, 2 * k + 1}}};
            if (k == 0 && n % 10 == 0 && n + 1 < 1000) j.where.push_back({n + 1, {6, 7}});
            state.add(j, /*enforce_slots=*/false);
        }
    SteeringConfig cfg;
    cfg.enabled = true;
    cfg.max_updates_per_round = 100000;
    Steering steering(cfg, catalogue, 1000);
    const auto t0 = std::chrono::steady_clock::now();
    const auto updates = steering.round(state, policy, model, 0);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(updates.size() == 1000);
    MESSAGE("steering round over 1000 busy nodes x 3 probes: " << ms << " ms");
}

TEST_CASE("steering: a round spread over several calls ends with the same updates") {
    SteeringFixture f;
    f.load_n1_n2();
    SteeringConfig cfg;
    cfg.enabled = true;
    Steering whole(cfg, f.catalogue, 4), sliced(cfg, f.catalogue, 4);
    const auto all = whole.round(f.state, f.policy, f.model, 0);
    CHECK(sliced.round(f.state, f.policy, f.model, 0, 3).empty());  // 3 of 4 nodes looked at
    const auto rest = sliced.round(f.state, f.policy, f.model, 1, 3);
    REQUIRE(rest.size() == all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        CHECK(rest[i].node == all[i].node);
        CHECK(rest[i].advice == all[i].advice);
    }
    CHECK(sliced.rounds() == 1);
}
