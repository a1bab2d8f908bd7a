// The engine's price of fragmentation on hand-made cases: a model that charges a little for a
// neighbour on the node (as coloc's node-level prior does) and much for one on the GPU, and an
// outlook that says which jobs want nodes with many idle GPUs.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "place/coloc_policy.hpp"
#include "place/fragmentation.hpp"
#include "place/sharing_rule.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// A neighbour on the job's GPU costs 0.9 of its time, one elsewhere on its node `node` (0.005).
struct NodeCosts final : model::InterferenceModel {
    double node = 0.005;
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        double s = 1;
        for (const model::Neighbour& n : neighbours)
            s += n.where == model::Sharing::Gpu ? 0.9 : n.where == model::Sharing::Link ? 0.0 : node;
        return s;
    }
    std::string name() const override { return "node-costs"; }
};

// No time outlook is read by the price; the rule never weighs here (no shared GPU is chosen).
struct NoEnds final : TimeOutlook {
    double wait_for_idle_gpus(int) const override { return 0; }
    double remaining_s(const RunningJob&) const override { return 0; }
    double now() const override { return 0; }
    double longest_wait() const override { return 0; }
};

struct Cluster {
    Topology topo;
    ClusterState state;
    model::JobProfile profile;
    NodeCosts model;
    NoEnds ends;
    NodeDemand wanted;
    SharingOutlook outlook;
    Cluster(int nodes, int gpus) : topo(uniform_topology(nodes, gpus, 2)), state(topo) {
        profile.name = "job";
        outlook.time = &ends;
        outlook.work_s = 1000;
        outlook.nodes_wanted = &wanted;
    }
    void run(JobId id, int node, std::vector<int> gpus) {
        RunningJob j;
        j.id = id;
        j.profile = &profile;
        j.where = {{node, std::move(gpus)}};
        REQUIRE(state.add(std::move(j)));
    }
    // Queued jobs that want `nodes` nodes with `per_node` idle GPUs each.
    void queued(int per_node, int nodes) { NodeDemand::count(wanted.queued, per_node, nodes, +1); }
    JobRequest request(int gpus, bool with_outlook = true, int nodes = 1) const {
        JobRequest r;
        r.id = 99;
        r.profile = &profile;
        r.gpus_per_node = gpus;
        r.nodes = nodes;
        r.outlook = with_outlook ? &outlook : nullptr;
        return r;
    }
    int node_for(int gpus, bool with_outlook = true) const {
        const Decision d = ColocPolicy(model).place(state, request(gpus, with_outlook));
        REQUIRE(d.placed);
        return d.chosen.where.front().node;
    }
};

}  // namespace

TEST_CASE("fragmentation: P(N >= n) of a Poisson count") {
    CHECK(poisson_at_least(2.0, 0) == 1.0);
    CHECK(poisson_at_least(0.0, 1) == 0.0);
    CHECK(poisson_at_least(0.5, 1) == doctest::Approx(1 - std::exp(-0.5)));
    CHECK(poisson_at_least(2.0, 3) == doctest::Approx(1 - std::exp(-2.0) * (1 + 2 + 2)));
    CHECK(poisson_at_least(2.0, 2.5) == doctest::Approx(poisson_at_least(2.0, 3)));  // whole nodes
    // Far from the mean on either side, and about a half at it.
    CHECK(poisson_at_least(1000, 1) == doctest::Approx(1.0));
    CHECK(poisson_at_least(1000, 2000) < 1e-100);
    CHECK(poisson_at_least(1000, 1000) == doctest::Approx(0.508).epsilon(0.01));
}

TEST_CASE("fragmentation: a one-GPU job goes beside others while the whole nodes are all wanted") {
    Cluster c(3, 4);
    c.run(1, 0, {0});  // node 0: 3 idle GPUs; nodes 1 and 2 whole
    // Nobody wants whole nodes: the neighbour on node 0 costs, the empty node wins.
    CHECK(c.node_for(1) != 0);
    // A queued job of 4 GPUs on each of 2 nodes wants both whole nodes: breaking one puts it off,
    // and taking node 0 to 2 idle GPUs costs nobody (no job wants 3 on a node).
    c.queued(4, 2);
    const Decision d = ColocPolicy(c.model).place(c.state, c.request(1));
    REQUIRE(d.placed);
    CHECK(d.chosen.where.front().node == 0);
    CHECK(d.chosen.fragmentation == 0);
    // Without an outlook nothing is known of what is wanted: the node-level cost decides.
    CHECK(c.node_for(1, false) != 0);
}

TEST_CASE("fragmentation: whole nodes to spare cost nothing") {
    Cluster c(4, 4);
    c.run(1, 0, {0});
    c.queued(4, 2);  // 3 whole nodes, 2 wanted: one to spare, and no arrivals
    CHECK(c.node_for(1) != 0);
    const FragmentationPrice price(c.state, c.request(1));
    CHECK_FALSE(price.any());
    c.queued(4, 1);  // now all 3 are wanted
    CHECK(c.node_for(1) == 0);
    CHECK(FragmentationPrice(c.state, c.request(1)).values()[4] == doctest::Approx(4.0));
}

TEST_CASE("fragmentation: the arrivals count over the job's run time, at the rate seen") {
    Cluster c(3, 4);
    c.run(1, 0, {0});
    // Jobs of 4 GPUs per node asked for 2 nodes a second over the 1000 s seen so far.
    NodeDemand::count(c.wanted.submitted, 4, 2000, +1);
    c.outlook.arrivals.seen_s = 1000;
    c.outlook.work_s = 1000;  // 2000 nodes asked for while it runs: both whole nodes are wanted
    CHECK(c.node_for(1) == 0);
    c.outlook.work_s = 0.001;  // 0.002 nodes: two of them almost never
    const double p = FragmentationPrice(c.state, c.request(1)).values()[4];
    CHECK(p == doctest::Approx(4 * poisson_at_least(0.002, 2)));
    CHECK(p < 0.005);
    CHECK(c.node_for(1) != 0);
    // Rates seen over a short time are trusted no further ahead than that time.
    c.outlook.work_s = 1e6;
    c.outlook.arrivals.seen_s = 0.001;
    c.wanted.submitted[4] = 0.002;
    CHECK(FragmentationPrice(c.state, c.request(1)).values()[4] == doctest::Approx(p));
    // Counted over an arrival window shorter than the time watched: a rate per the window's
    // span, trusted as far ahead as arrivals were watched.
    c.outlook.work_s = 0.001;
    c.outlook.arrivals.seen_s = 10000;
    c.outlook.arrivals.counted_s = 1000;
    c.wanted.submitted[4] = 2000;
    CHECK(FragmentationPrice(c.state, c.request(1)).values()[4] == doctest::Approx(p));
}

TEST_CASE("fragmentation: the node whose size left is not wanted, over the best fit") {
    Cluster c(3, 4);
    c.model.node = 0;     // only a shared GPU costs: the tie-break decides between idle ones
    c.run(1, 0, {0, 1});  // node 0: 2 idle GPUs
    c.run(2, 1, {0});     // node 1: 3 idle GPUs
    c.run(3, 2, {0});     // node 2: 3 idle GPUs
    // Without a price the best fit takes node 0 (as few idle GPUs as fit); but two-GPU jobs want
    // every node with 2 idle GPUs, and nobody wants 3.
    CHECK(c.node_for(1) == 0);
    c.queued(2, 3);
    CHECK(c.node_for(1) != 0);
    // A job's own size and smaller are not priced: it takes them wherever it goes.
    const FragmentationPrice own(c.state, c.request(2));
    CHECK_FALSE(own.any());
    CHECK(own.of(4, 0) == 0);
}

TEST_CASE("fragmentation: the price is the most valued size the node can no longer take") {
    Cluster c(3, 8);
    c.run(1, 2, {0});  // node 2: 7 idle GPUs, which nobody asks for
    c.queued(8, 2);    // both whole nodes wanted by a job of 8 per node
    c.queued(4, 4);    // and more than there are nodes with 4 idle GPUs
    const FragmentationPrice p(c.state, c.request(1));
    CHECK(p.values()[8] == doctest::Approx(8.0));
    CHECK(p.values()[4] == doctest::Approx(4.0));
    CHECK(p.values()[6] == 0);                  // nobody wants 6 per node
    CHECK(p.floor() == 0);                      // node 2 costs nothing
    CHECK(p.of(8, 7) == doctest::Approx(8.0));  // it can no longer take the 8
    CHECK(p.of(8, 3) == doctest::Approx(8.0));  // nor a 4: the node takes one of them, not both
    CHECK(p.of(5, 4) == 0);                     // it still takes a 4
    CHECK(p.of(4, 3) == doctest::Approx(4.0));
    // The engine takes node 2, and says what a whole node would have cost.
    const Decision d = ColocPolicy(c.model).place(c.state, c.request(1), 20);
    REQUIRE(d.placed);
    CHECK(d.chosen.where.front().node == 2);
    CHECK(d.chosen.fragmentation == 0);
    int whole = 0;
    for (const Candidate& r : d.ranked)
        if (r.where.front().node != 2) {
            CHECK(r.fragmentation == doctest::Approx(8.0));
            ++whole;
        }
    CHECK(whole > 0);
}

TEST_CASE("fragmentation: a job never shares a GPU to keep a node whole") {
    Cluster c(2, 4);
    for (int g = 0; g < 4; ++g) c.run(static_cast<JobId>(g + 1), 0, {g});  // node 0: each GPU has a free slot
    c.queued(4, 1);  // a queued job wants node 1, the only whole node
    // Node 1 is the only place with GPUs of its own: the least it can pay, so it pays nothing
    // beyond it, and a shared GPU (slowed 1.9 x) is not bought with the price.
    const FragmentationPrice p(c.state, c.request(1));
    CHECK(p.values()[4] == doctest::Approx(4.0));
    CHECK(p.floor() == doctest::Approx(4.0));
    const Decision d = ColocPolicy(c.model).place(c.state, c.request(1));
    REQUIRE(d.placed);
    CHECK(d.chosen.where.front().node == 1);
    CHECK(d.chosen.fragmentation == 0);
}

TEST_CASE("fragmentation: a job on several nodes pays beyond the cheapest nodes it needs") {
    Cluster c(3, 8);
    c.run(1, 0, {0, 1, 2, 3});             // node 0: 4 idle GPUs
    c.run(2, 2, {0, 1, 2, 3, 4});          // node 2: 3 idle GPUs, 5 with a free slot
    c.queued(8, 1);                        // a queued job wants node 1, the only whole node
    JobRequest r = c.request(4, true, 2);  // 4 GPUs on each of 2 nodes
    const FragmentationPrice p(c.state, r);
    CHECK(p.values()[8] == doctest::Approx(8.0));
    // Node 0 alone is not enough: GPUs of its own on two nodes cost it node 1.
    CHECK(p.floor() == doctest::Approx(8.0));
    const Decision d = ColocPolicy(c.model).place(c.state, r);
    REQUIRE(d.placed);
    REQUIRE(d.chosen.where.size() == 2);
    CHECK(d.chosen.where[0].node == 0);
    CHECK(d.chosen.where[1].node == 1);  // not a shared GPU on node 2
    CHECK(d.chosen.fragmentation == 0);
}

TEST_CASE("fragmentation: a bounded search scores nodes with GPUs of its own, not only the most open") {
    Cluster c(200, 8);
    JobId id = 1;
    for (int n = 0; n < 100; ++n)  // 100 nodes with every GPU used once: 8 open, none idle
        for (int g = 0; g < 8; ++g) c.run(id++, n, {g});
    c.run(id++, 100, {0});  // node 100: 7 idle GPUs, GPU 0 full, so only 7 open
    c.run(id++, 100, {0});
    c.queued(8, 99);                                                       // every whole node is wanted
    const Decision d = ColocPolicy(c.model).place(c.state, c.request(1));  // 32 occupied nodes scored
    REQUIRE(d.placed);
    CHECK(d.chosen.where.front().node == 100);  // neither a shared GPU nor a whole node
    CHECK(d.chosen.fragmentation == 0);
}

TEST_CASE("fragmentation: between nodes as full, the one whose jobs outlast the job") {
    // Each running job's expected time left, by id.
    struct EndsById final : TimeOutlook {
        std::map<JobId, double> left;
        double wait_for_idle_gpus(int) const override { return 0; }
        double remaining_s(const RunningJob& j) const override { return left.at(j.id); }
        double now() const override { return 0; }
        double longest_wait() const override { return 0; }
    };
    Cluster c(3, 4);
    c.model.node = 0;  // only a shared GPU costs: the tie-break decides between idle ones
    EndsById ends;
    c.outlook.time = &ends;
    c.run(1, 0, {0});  // node 0: 3 idle GPUs, its job ends in 100 s
    c.run(2, 1, {0});  // node 1: 3 idle GPUs, its job ends in 5000 s
    ends.left = {{1, 100}, {2, 5000}};
    // A job of 1000 s keeps node 0 from being wholly idle for 900 s more; on node 1, not at all.
    CHECK(c.node_for(1) == 1);
    // Both jobs outlast it: nothing to choose by, the lower index.
    ends.left = {{1, 2000}, {2, 5000}};
    CHECK(c.node_for(1) == 0);
    // The one whose jobs end the later, where neither outlasts it.
    ends.left = {{1, 300}, {2, 100}};
    CHECK(c.node_for(1) == 0);
    ends.left = {{1, 100}, {2, 300}};
    CHECK(c.node_for(1) == 1);
    // Without an outlook (a job Slurm already started) nothing is known of ends: the lower index.
    ends.left = {{1, 100}, {2, 5000}};
    CHECK(c.node_for(1, false) == 0);
}
