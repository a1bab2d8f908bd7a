// Elastic slots on hand-made cases whose answer is known (the pair model of pending_cluster.hpp).
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "daemon/steering/elastic_slots.hpp"
#include "place/coloc_policy.hpp"
#include "slurm/nodes.hpp"
#include "tests/unit/pending_cluster.hpp"

using namespace coloc;
using namespace coloc::daemon;
using place::JobId;

namespace {

struct Cluster : PendingCluster {
    ElasticPlan plan(const std::vector<PendingJob>& queue, std::vector<int> running_use = {}) const {
        const KnownEnds time(state, 0, ends);
        return plan_elastic_slots(state, policy, time, {0}, running_use, queue);
    }
};

}  // namespace

TEST_CASE("elastic slots: a shared slot opens when the wait is long and the pairing good") {
    Cluster c;
    c.run(1, 0, 1000);
    c.run(2, 1, 1000);
    const ElasticPlan p = c.plan({c.pending(10, c.light, 1000)});
    // 52.5 s + 52.5 s of extra time against a 1000 s wait.
    CHECK(p.slots[0] == 3);
    REQUIRE(p.verdicts.size() == 1);
    CHECK(p.verdicts[0].opens);
    CHECK(p.verdicts[0].node == "n1");
}

TEST_CASE("elastic slots: closed when the pairing loses more than the wait") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    const ElasticPlan p = c.plan({c.pending(10, c.heavy, 1000)});
    // 90 s + 90 s of extra time against a 100 s wait: it waits for a GPU of its own.
    CHECK(p.slots[0] == 2);
    REQUIRE(p.verdicts.size() == 1);
    CHECK_FALSE(p.verdicts[0].opens);
    CHECK(p.verdicts[0].why.find("held") == 0);
}

TEST_CASE("elastic slots: the same heavy job shares when the wait is long") {
    Cluster c;
    c.run(1, 0, 5000);
    c.run(2, 1, 5000);
    const ElasticPlan p = c.plan({c.pending(10, c.heavy, 100)});
    CHECK(p.slots[0] == 3);
}

TEST_CASE("elastic slots: nothing pending keeps only idle GPUs' slots open") {
    Cluster c;
    c.run(1, 0, 1000);
    CHECK(c.plan({}).slots[0] == 2);  // 1 used + 1 idle GPU
    Cluster empty;
    CHECK(empty.plan({}).slots[0] == 2);  // one slot per idle GPU, none shared
}

TEST_CASE("elastic slots: never below what running jobs use") {
    Cluster c;
    c.run(1, 0, 100);
    // Slurm counts 3 slots in use on the node (a job colocd has not heard of yet).
    CHECK(c.plan({c.pending(10, c.heavy, 1000)}, {3}).slots[0] >= 3);
    CHECK(c.plan({}, {4}).slots[0] == 4);
}

TEST_CASE("elastic slots: no known time limit is never held") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    const ElasticPlan p = c.plan({c.pending(10, c.heavy, 0)});
    CHECK(p.slots[0] == 3);
    Cluster unknown_ends;
    unknown_ends.run(1, 0, 0);
    unknown_ends.run(2, 1, 0);
    CHECK(unknown_ends.plan({unknown_ends.pending(10, unknown_ends.heavy, 1000)}).slots[0] == 3);
}

TEST_CASE("elastic slots: a held job ahead that would take the slot keeps it closed") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    const ElasticPlan p = c.plan({c.pending(10, c.heavy, 1000), c.pending(11, c.light, 1000)});
    CHECK(p.slots[0] == 2);
    REQUIRE(p.verdicts.size() == 2);
    CHECK_FALSE(p.verdicts[1].opens);
    CHECK(p.verdicts[1].why.find("job 10") != std::string::npos);
    // The held job asks for two slots: the one opened for the light job does not fit it.
    const ElasticPlan q = c.plan({c.pending(10, c.heavy, 1000, 2), c.pending(11, c.light, 1000)});
    CHECK(q.slots[0] == 3);
    CHECK(q.verdicts[1].opens);
}

TEST_CASE("elastic slots: counts sent only when they change, given back when switched off") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    ElasticSlots e(ElasticConfig{.enabled = true}, 1);
    auto sent = e.apply(c.plan({}), c.topo, 0);
    REQUIRE(sent.size() == 1);
    CHECK(sent[0].node == "n1");
    CHECK(sent[0].slots == 2);
    CHECK(sent[0].full == 4);
    CHECK(e.apply(c.plan({}), c.topo, 1).empty());
    const auto back = e.set_enabled(false, c.topo);
    REQUIRE(back.size() == 1);
    CHECK_FALSE(back[0].slots.has_value());
    CHECK(back[0].full == 4);
    CHECK(e.apply(c.plan({}), c.topo, 2).empty());  // off: nothing sent
}

TEST_CASE("elastic slots: a node's Gres string keeps every GRES when the slot count changes") {
    CHECK(slurm::node_gres_count("gpu:4,gpuslot:8", "gpuslot") == 8);
    CHECK(slurm::node_gres_count("gpu:a100:4(S:0-1),gpuslot:8", "gpu") == 4);
    CHECK(slurm::node_gres_count("gpu:4", "gpuslot") == -1);
    CHECK(slurm::with_node_gres_count("gpu:4,gpuslot:8", "gpuslot", 5) == "gpu:4,gpuslot:5");
    CHECK(slurm::with_node_gres_count("gpu:a100:4(S:0-1),gpuslot:8", "gpuslot", 6) == "gpu:a100:4,gpuslot:6");
}

TEST_CASE("elastic slots: colocd.yaml") {
    const std::string base =
        "node_types:\n  quad: { gpus: 4, slots_per_gpu: 2 }\nnodes:\n  - { names: n1, type: quad }\n";
    CHECK_FALSE(parse_config(base, "t").elastic.enabled);
    CHECK(parse_config(base + "elastic_slots: on\n", "t").elastic.enabled);
    const Config c = parse_config(base + "elastic_slots: { enabled: true, interval_s: 2 }\n", "t");
    CHECK(c.elastic.enabled);
    CHECK(c.elastic.interval_s == 2);
    CHECK_THROWS_WITH_AS(parse_config(base + "elastic_slots: maybe\n", "t"), doctest::Contains("elastic_slots"),
                         ConfigError);
}
