// Standing offers on hand-made clusters (the pair model of pending_cluster.hpp): which GPUs a job
// submitted now may take without a round, and what job_submit.lua reads.
#include <doctest/doctest.h>

#include "daemon/steering/admission.hpp"
#include "daemon/steering/elastic_slots.hpp"
#include "daemon/steering/standing_offers.hpp"
#include "tests/unit/pending_cluster.hpp"

using namespace coloc;
using namespace coloc::daemon;

namespace {

struct Round {
    std::vector<PendingJob> queue;
    std::vector<AdmissionVerdict> verdicts;
    place::ClusterState planned;
};

Round plan(const PendingCluster& c, const std::vector<PendingJob>& queue) {
    const KnownEnds time(c.state, 0, c.ends);
    std::vector<int> nodes;
    for (int n = 0; n < static_cast<int>(c.topo.nodes().size()); ++n) nodes.push_back(n);
    Round r{.queue = queue, .verdicts = {}, .planned = place::ClusterState(c.topo)};
    r.verdicts = plan_admission(c.state, c.policy, time, nodes, queue, nullptr, nullptr, &r.planned);
    return r;
}

std::vector<int> all_nodes(const PendingCluster& c) {
    std::vector<int> out;
    for (int n = 0; n < static_cast<int>(c.topo.nodes().size()); ++n) out.push_back(n);
    return out;
}

}  // namespace

TEST_CASE("standing offers: the idle GPUs, the nodes with the fewest first") {
    PendingCluster c(3);  // 3 nodes x 2 GPUs
    c.run(1, 0, 100, 1);  // n2 keeps one idle GPU
    const Round r = plan(c, {});
    const auto o = standing_offers(r.planned, all_nodes(c), r.verdicts, r.queue);
    REQUIRE(o.size() == 3);
    CHECK(o[0].node == 1);
    CHECK(o[0].gpus == 1);
    CHECK(o[1].node == 0);
    CHECK(o[1].gpus == 2);
    CHECK(o[2].node == 2);
    // Only the nodes colocd shares are offered.
    CHECK(standing_offers(r.planned, {2}, r.verdicts, r.queue).size() == 1);
}

TEST_CASE("standing offers: what the round gives pending jobs, and what colocd has not seen launch, is taken") {
    PendingCluster c(2);
    c.run(1, 0, 100);
    // A gated job released onto n1's idle GPU, and a job Slurm will start (not gated) on n2.
    PendingJob gated = c.pending(10, c.heavy, 1000);
    gated.gated = true;
    const Round r = plan(c, {gated, c.pending(11, c.heavy, 1000)});
    REQUIRE(r.verdicts.size() == 2);
    REQUIRE(r.verdicts[0].release);
    const auto o = standing_offers(r.planned, all_nodes(c), r.verdicts, r.queue);
    REQUIRE(o.size() == 1);
    CHECK(o[0].node == 1);
    CHECK(o[0].gpus == 1);
    // And a job Slurm runs on n2 holding one slot, of which colocd has no launch yet.
    PendingJob started = c.pending(12, c.light, 1000);
    started.running = true;
    started.allowed_nodes = {1};
    const Round s = plan(c, {started, gated, c.pending(11, c.heavy, 1000)});
    CHECK(standing_offers(s.planned, all_nodes(c), s.verdicts, s.queue).empty());
}

TEST_CASE("standing offers: none while a job colocd holds waits") {
    PendingCluster c(2);
    c.run(1, 0, 100);
    c.run(2, 1, 100);  // n1 busy; n2 idle
    // A two-node-GPU heavy job would share on n1 (held, 90 + 90 s > 100 s) or take n2: n2 is
    // idle, so it is released there; a second one is held.
    PendingJob a = c.pending(10, c.heavy, 1000, 2), b = c.pending(11, c.heavy, 1000, 2);
    a.gated = b.gated = true;
    const Round r = plan(c, {a, b});
    REQUIRE(r.verdicts.size() == 2);
    CHECK(r.verdicts[0].release);
    CHECK_FALSE(r.verdicts[1].release);
    CHECK(standing_offers(r.planned, all_nodes(c), r.verdicts, r.queue).empty());
}

TEST_CASE("standing offers: the file job_submit.lua reads") {
    PendingCluster c(2);
    const std::string text = offers_text({{1, 2}, {0, 1}}, c.topo, 1000, 1003);
    CHECK(text.find("\nas_of 1000\nexpires 1003\noffer n2 2\noffer n1 1\n") != std::string::npos);
    CHECK(text.rfind("# ", 0) == 0);
}

TEST_CASE("admission gate: a job that took an offer and has not started gets its node list cleared a lease later") {
    AdmissionConfig cfg;
    cfg.lease_s = 60;
    AdmissionGate gate(cfg);
    const AdmissionVerdict pending{.id = 12,
                                   .uid = 1,
                                   .gated = false,
                                   .release = false,
                                   .node = "",
                                   .why = "",
                                   .explores = false,
                                   .offered = true};
    CHECK(gate.apply({pending}, 1000).empty());
    CHECK(gate.apply({pending}, 1059).empty());
    const auto u = gate.apply({pending}, 1060);
    REQUIRE(u.size() == 1);
    CHECK(u[0].job == 12);
    CHECK(u[0].nodes == std::optional<std::string>(""));
}
