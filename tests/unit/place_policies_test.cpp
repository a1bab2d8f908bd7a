// The interference-blind policies on hand-made cluster states, the factory, ClusterState's
// capacity indexes, and the coloc engine's fast search against an exhaustive one.
#include <doctest/doctest.h>

#include <random>

#include "model/baseline.hpp"
#include "place/coloc_policy.hpp"
#include "place/policy_factory.hpp"
#include "place/simple_policies.hpp"
#include "tests/support/place_reference.hpp"
#include "tests/unit/engine_checks.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

struct Cluster {
    Topology topo;
    ClusterState state;
    model::JobProfile profile;
    Cluster(int nodes, int gpus, int slots) : topo(uniform_topology(nodes, gpus, slots)), state(topo) {}

    void run(JobId id, std::vector<Placement> where) {
        RunningJob j;
        j.id = id;
        j.profile = &profile;
        j.where = std::move(where);
        REQUIRE(state.add(std::move(j)));
    }
    JobRequest request(JobId id, int gpus, int nodes = 1) const {
        JobRequest r;
        r.id = id;
        r.profile = &profile;
        r.gpus_per_node = gpus;
        r.nodes = nodes;
        return r;
    }
};

std::vector<Placement> where_of(const Decision& d) {
    REQUIRE(d.placed);
    return d.chosen.where;
}

}  // namespace

TEST_CASE("exclusive: first fit on idle GPUs, never shares") {
    Cluster c(3, 4, 2);
    c.run(1, {{0, {0, 1, 2}}});
    ExclusivePolicy p;
    auto w = where_of(p.place(c.state, c.request(9, 1)));
    CHECK(w[0].node == 0);
    CHECK(w[0].gpus == std::vector<int>{3});
    w = where_of(p.place(c.state, c.request(9, 2)));
    CHECK(w[0].node == 1);  // node 0 has one idle GPU only
    CHECK(w[0].gpus == std::vector<int>{0, 1});
    c.run(2, {{0, {3}}});
    c.run(3, {{1, {0, 1, 2, 3}}});
    c.run(4, {{2, {0, 1, 2, 3}}});
    Decision d = p.place(c.state, c.request(9, 1));
    CHECK_FALSE(d.placed);  // every GPU has a free slot, none is idle
    CHECK(d.reason.find("idle") != std::string::npos);
}

TEST_CASE("slurm: first node in index order with enough open GPUs, least used GPUs on it") {
    Cluster c(3, 4, 2);
    c.run(1, {{0, {0, 1, 2, 3}}});
    c.run(2, {{0, {0, 1}}});
    SlurmFirstFitPolicy p;
    auto w = where_of(p.place(c.state, c.request(9, 2)));
    CHECK(w[0].node == 0);  // GPUs 2 and 3 still have a slot
    CHECK(w[0].gpus == std::vector<int>{2, 3});
    w = where_of(p.place(c.state, c.request(9, 3)));
    CHECK(w[0].node == 1);
    c.run(3, {{1, {0}}});
    w = where_of(p.place(c.state, c.request(9, 1)));
    CHECK(w[0].node == 0);
    CHECK(w[0].gpus == std::vector<int>{2});
    w = where_of(p.place(c.state, c.request(9, 2, 2)));
    CHECK(w.size() == 2);
    CHECK(w[0].node == 0);
    CHECK(w[1].node == 1);
    CHECK(w[1].gpus == std::vector<int>{1, 2});  // least used first: GPU 0 runs job 3
}

TEST_CASE("pack: the fullest node that fits, and on it a shared GPU before an idle one") {
    Cluster c(3, 4, 2);
    c.run(1, {{1, {0, 1, 2}}});
    c.run(2, {{2, {0}}});
    PackPolicy p;
    auto w = where_of(p.place(c.state, c.request(9, 1)));
    CHECK(w[0].node == 1);                    // 5 free slots: fuller than node 2 (7) and node 0 (8)
    CHECK(w[0].gpus == std::vector<int>{0});  // and a used GPU first
    c.run(3, {{1, {0, 1, 2}}});               // node 1: GPUs 0-2 full, GPU 3 idle
    w = where_of(p.place(c.state, c.request(9, 1)));
    CHECK(w[0].node == 1);
    CHECK(w[0].gpus == std::vector<int>{3});
    w = where_of(p.place(c.state, c.request(9, 2)));
    CHECK(w[0].node == 2);  // node 1 has one open GPU only; node 2 is fuller than node 0
    CHECK(w[0].gpus == std::vector<int>{0, 1});
    CHECK_FALSE(p.place(c.state, c.request(9, 4, 3)).placed);  // node 1 has 1 open GPU
}

TEST_CASE("spread: the node with the most idle GPUs, least used GPUs; shares only when it must") {
    Cluster c(2, 2, 2);
    c.run(1, {{0, {0}}});
    SpreadPolicy p;
    auto w = where_of(p.place(c.state, c.request(9, 1)));
    CHECK(w[0].node == 1);
    c.run(2, {{1, {0, 1}}});
    w = where_of(p.place(c.state, c.request(9, 1)));
    CHECK(w[0].node == 0);
    CHECK(w[0].gpus == std::vector<int>{1});  // the idle one
    c.run(3, {{0, {1}}});
    w = where_of(p.place(c.state, c.request(9, 2)));
    CHECK(w[0].node == 0);  // no idle GPU anywhere: both nodes have 2 open; lowest index
}

TEST_CASE("simple policies keep to the allowed nodes and GPUs") {
    Cluster c(3, 4, 1);
    for (const char* name : {"exclusive", "slurm", "pack", "spread"}) {
        CAPTURE(name);
        auto p = make_policy(name, nullptr);
        JobRequest r = c.request(9, 2);
        r.allowed_nodes = {2};
        r.allowed_gpus = {1, 3};
        auto w = where_of(p->place(c.state, r));
        CHECK(w[0].node == 2);
        CHECK(w[0].gpus == std::vector<int>{1, 3});
        r.allowed_gpus = {1};
        CHECK_FALSE(p->place(c.state, r).placed);
    }
}

TEST_CASE("every policy keeps a multi-node job to each node's own allowed GPUs") {
    Cluster c(3, 4, 1);
    c.run(1, {{1, {0}}});  // a neighbour on n1, so that coloc has something to weigh
    model::BaselineModel m;
    for (const std::string& name : policy_names()) {
        CAPTURE(name);
        auto p = make_policy(name, &m);
        JobRequest r = c.request(9, 2, 2);
        r.allowed_nodes = {0, 1};
        r.allowed_gpus = {0, 1};  // holds for no node here: both have their own lists
        r.allowed_gpus_per_node = {{0, {2, 3}}, {1, {1, 3}}};
        auto w = where_of(p->place(c.state, r));
        REQUIRE(w.size() == 2);
        CHECK(w[0].node == 0);
        CHECK(w[0].gpus == std::vector<int>{2, 3});
        CHECK(w[1].node == 1);
        CHECK(w[1].gpus == std::vector<int>{1, 3});
        // A node whose own list cannot hold the job stops it, whatever allowed_gpus says.
        r.allowed_gpus_per_node = {{0, {2, 3}}, {1, {0, 3}}};  // GPU 0 of n1 is taken
        CHECK_FALSE(p->place(c.state, r).placed);
    }
    JobRequest r = c.request(9, 1);
    r.allowed_gpus = {2};
    r.allowed_gpus_per_node = {{1, {3}}};
    CHECK(r.allows(0, 2));
    CHECK_FALSE(r.allows(0, 3));
    CHECK(r.allows(1, 3));
    CHECK_FALSE(r.allows(1, 2));
}

TEST_CASE("factory: names, the model coloc needs, errors that list the policies") {
    model::BaselineModel m;
    for (const auto& n : policy_names()) CHECK(make_policy(n, &m)->name() == n);
    CHECK_THROWS_WITH_AS(make_policy("coloc", nullptr), "policy 'coloc' needs an interference model",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(make_policy("best", &m),
                         "unknown policy 'best' (known: exclusive, slurm, pack, spread, coloc)", std::invalid_argument);
    CHECK(parse_policy_list("exclusive,pack, coloc") == std::vector<std::string>{"exclusive", "pack", "coloc"});
    CHECK_THROWS_AS(parse_policy_list("pack,,coloc"), std::invalid_argument);
    CHECK_THROWS_AS(parse_policy_list("pack,pack"), std::invalid_argument);
    // Annotated decisions carry the model's prediction.
    Cluster c(1, 2, 2);
    c.run(1, {{0, {0}}});
    auto pack = make_policy("pack", &m);
    Decision d = pack->place(c.state, c.request(9, 1));
    CHECK(d.chosen.job_slowdown == doctest::Approx(1.9));
}

TEST_CASE("capacity indexes agree with a count of the GPUs after random starts and ends") {
    Topology topo = uniform_topology(9, 4, 2);
    ClusterState state(topo);
    model::JobProfile p;
    std::mt19937 rng(5);
    std::vector<JobId> running;
    JobId next = 1;
    for (int step = 0; step < 3000; ++step) {
        if (!running.empty() && rng() % 3 == 0) {
            std::size_t i = rng() % running.size();
            REQUIRE(state.remove(running[i]));
            running.erase(running.begin() + static_cast<long>(i));
        } else {
            int node = static_cast<int>(rng() % 9);
            std::vector<int> gpus;
            for (int g = 0; g < 4; ++g)
                if (state.free_slots(node, g) > 0 && rng() % 2) gpus.push_back(g);
            if (gpus.empty()) continue;
            RunningJob j;
            j.id = next;
            j.profile = &p;
            j.where = {{node, gpus}};
            REQUIRE(state.add(j));
            running.push_back(next++);
        }
        int busy = 0;
        for (int n = 0; n < 9; ++n) {
            int open = 0, idle = 0;
            for (int g = 0; g < 4; ++g) {
                open += state.free_slots(n, g) > 0;
                idle += state.used_slots(n, g) == 0;
                busy += state.used_slots(n, g) > 0;
            }
            REQUIRE(state.open_gpus(n) == open);
            REQUIRE(state.idle_gpus(n) == idle);
            REQUIRE(state.nodes_with(Capacity::Open, open).contains(n));
            REQUIRE(state.nodes_with(Capacity::Idle, idle).contains(n));
            REQUIRE(state.empty_nodes(0).contains(n) == state.jobs_on_node(n).empty());
        }
        REQUIRE(state.busy_gpus() == busy);
        for (int k = 0; k <= 4; ++k) {
            int count = 0, first = -1;
            for (int n = 0; n < 9; ++n)
                if (state.open_gpus(n) >= k) {
                    ++count;
                    if (first < 0) first = n;
                }
            REQUIRE(state.nodes_with_at_least(Capacity::Open, k) == count);
            REQUIRE(state.next_node_with_at_least(Capacity::Open, k) == first);
        }
    }
}

TEST_CASE("NodeSet: insert, erase, ordered walk across words") {
    NodeSet s;
    s.resize(200);
    for (int n : {3, 64, 65, 130, 199}) s.insert(n);
    s.insert(64);
    CHECK(s.size() == 5);
    CHECK(s.next(-1) == 3);
    CHECK(s.next(3) == 64);
    CHECK(s.next(65) == 130);
    CHECK(s.next(199) == -1);
    s.erase(130);
    s.erase(130);
    CHECK(s.size() == 4);
    CHECK(s.next(65) == 199);
}

namespace {

// The engine's answer by brute force: every subset on every node, scored by score_candidate.
Candidate exhaustive(const ClusterState& state, const model::InterferenceModel& m, const JobRequest& r) {
    Candidate best;
    bool have = false;
    for (int node : candidate_nodes(state, r))
        for (auto& set : gpu_subsets(eligible_gpus(state, r, node), r.gpus_per_node, 1'000'000)) {
            Candidate c = score_candidate(state, m, r, {{node, set}});
            if (!have || better(c, best)) best = c;
            have = true;
        }
    return best;
}

// The best candidate on one node, by brute force.
Candidate exhaustive_on(const ClusterState& state, const model::InterferenceModel& m, JobRequest r, int node) {
    r.allowed_nodes = {node};
    return exhaustive(state, m, r);
}

// A neighbour on the job's GPU doubles its time; one elsewhere on the node costs nothing.
struct GpuOnly final : model::InterferenceModel {
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        for (const model::Neighbour& n : neighbours)
            if (n.where == model::Sharing::Gpu) return 2.0;
        return 1.0;
    }
    std::string name() const override { return "gpu-only"; }
};

}  // namespace

TEST_CASE("coloc: equal losses go to the node with the fewest idle GPUs that fit, then the fewest jobs") {
    Cluster c(4, 4, 2);
    c.run(1, {{0, {0}}});
    c.run(2, {{0, {1}}});
    c.run(3, {{0, {2}}});  // node 0: 1 idle GPU, 3 jobs
    c.run(4, {{1, {0}}});  // node 1: 3 idle GPUs
    c.run(5, {{2, {0, 1}}});
    c.run(6, {{2, {0}}});  // node 2: 2 idle GPUs, 2 jobs; node 3: empty
    GpuOnly m;             // a neighbour on the GPU costs, one on the node does not
    ColocPolicy policy(m);
    Decision d = policy.place(c.state, c.request(9, 2), 5);
    REQUIRE(d.placed);
    CHECK(d.chosen.where[0].node == 2);  // the fewest idle GPUs that still take two
    CHECK(d.chosen.where[0].gpus == std::vector<int>{2, 3});
    CHECK(d.chosen.loss == 0);
    REQUIRE_FALSE(d.ranked.empty());
    CHECK(d.ranked.front().where[0].node == 2);  // explain ranks the same way
    // One GPU: node 0 fits it best, and the empty node stays whole.
    d = policy.place(c.state, c.request(10, 1));
    CHECK(d.chosen.where[0].node == 0);
    c.run(7, {{2, {2}}});  // node 2: 1 idle GPU, 3 jobs
    c.run(8, {{0, {0}}});  // node 0: 1 idle GPU, 4 jobs
    d = policy.place(c.state, c.request(11, 1));
    CHECK(d.chosen.where[0].node == 2);  // as few idle GPUs, fewer jobs
}

TEST_CASE("coloc: the indexed search with GPU classes finds what the exhaustive search finds") {
    // Nodes of 8 GPUs in islands of 2, 2 slots per GPU, random residents of three kinds.
    Topology topo = uniform_topology(6, 8, 2, 2, 3);
    model::BaselineModel m;
    ColocOptions all;
    all.max_nodes_scored = 0;
    ColocPolicy policy(m, all);
    std::vector<model::JobProfile> kinds(3);
    for (int i = 0; i < 3; ++i) kinds[i].name = "k" + std::to_string(i);
    std::mt19937 rng(11);
    int compared = 0;
    for (int trial = 0; trial < 40; ++trial) {
        ClusterState state(topo);
        JobId id = 1;
        int jobs = static_cast<int>(rng() % 40);
        for (int j = 0; j < jobs; ++j) {
            int node = static_cast<int>(rng() % 6);
            std::vector<int> gpus;
            for (int g = 0; g < 8; ++g)
                if (state.free_slots(node, g) > 0 && rng() % 3 == 0) gpus.push_back(g);
            if (gpus.empty()) continue;
            RunningJob rj;
            rj.id = id++;
            rj.profile = &kinds[rng() % 3];
            rj.where = {{node, gpus}};
            REQUIRE(state.add(rj));
        }
        for (int k : {1, 2, 3, 5}) {
            JobRequest r;
            r.id = 1000;
            r.profile = &kinds[static_cast<std::size_t>(k % 3)];
            r.gpus_per_node = k;
            Decision d = policy.place(state, r);
            Candidate want = exhaustive(state, m, r);
            CAPTURE(trial);
            CAPTURE(k);
            if (want.where.empty()) {
                CHECK_FALSE(d.placed);
                continue;
            }
            REQUIRE(d.placed);
            CHECK(d.chosen.loss == doctest::Approx(want.loss).epsilon(1e-12));
            CHECK(d.chosen.job_slowdown == doctest::Approx(want.job_slowdown));
            CHECK(d.chosen.harm == doctest::Approx(want.harm));
            CHECK(d.chosen.effects.size() == want.effects.size());
            // A node the exhaustive search finds as good (ties between nodes may go either way;
            // between GPUs the model cannot tell apart, too).
            Candidate there = exhaustive_on(state, m, r, d.chosen.where[0].node);
            CHECK(there.loss == doctest::Approx(want.loss).epsilon(1e-12));
            ++compared;
        }
    }
    CHECK(compared > 100);
}

TEST_CASE("coloc: keeping predictions between decisions changes no decision") {
    // The same decisions with and without the cache, while jobs start and end around them
    // (one-node and multi-node jobs, on nodes that share links).
    Topology topo = uniform_topology(12, 4, 2, 2, 4);
    ClusterState state(topo);
    model::BaselineModel m;
    ColocOptions kept;
    kept.reuse_predictions = true;
    ColocPolicy with(m, kept), without(m);
    std::vector<model::JobProfile> kinds(3);
    for (int i = 0; i < 3; ++i) kinds[i].name = "k" + std::to_string(i);
    std::mt19937 rng(21);
    std::vector<JobId> running;
    int compared = 0;
    for (JobId id = 1; id < 600; ++id) {
        if (!running.empty() && rng() % 2) {
            std::size_t i = rng() % running.size();
            REQUIRE(state.remove(running[i]));
            running.erase(running.begin() + static_cast<long>(i));
        }
        JobRequest r;
        r.id = id;
        r.profile = &kinds[rng() % 3];
        r.gpus_per_node = 1 + static_cast<int>(rng() % 3);
        r.nodes = rng() % 5 == 0 ? 2 : 1;
        Decision a = with.place(state, r), b = without.place(state, r);
        REQUIRE(a.placed == b.placed);
        if (!a.placed) continue;
        CAPTURE(id);
        test::check_same_choice(a, b);
        ++compared;
        test::start_chosen(state, r, a, running);
    }
    CHECK(compared > 300);
}

TEST_CASE("coloc: a node without jobs wins for a one-node job; bounded search on big clusters") {
    Topology topo = uniform_topology(200, 8, 2);
    ClusterState state(topo);
    model::JobProfile p;
    model::BaselineModel m;
    // Every node but the last runs a job on GPU 0.
    for (int n = 0; n < 199; ++n) {
        RunningJob j;
        j.id = static_cast<JobId>(n + 1);
        j.profile = &p;
        j.where = {{n, {0}}};
        REQUIRE(state.add(j));
    }
    ColocPolicy policy(m);  // default: at most 64 occupied nodes scored
    JobRequest r;
    r.id = 5000;
    r.profile = &p;
    r.gpus_per_node = 4;
    Decision d = policy.place(state, r);
    REQUIRE(d.placed);
    CHECK(d.chosen.where[0].node == 199);
    CHECK(d.chosen.loss == 0);
    // Fill the last node too: now an occupied node, never a shared GPU.
    RunningJob j;
    j.id = 999;
    j.profile = &p;
    j.where = {{199, {0}}};
    REQUIRE(state.add(j));
    d = policy.place(state, r);
    REQUIRE(d.placed);
    for (int g : d.chosen.where[0].gpus) CHECK(g != 0);
    CHECK(d.chosen.job_slowdown < 1.5);
    // A multi-node job finds its nodes even when that is more than the bound.
    ColocOptions few;
    few.max_nodes_scored = 2;
    ColocPolicy narrow(m, few);
    r.nodes = 8;
    d = narrow.place(state, r);
    REQUIRE(d.placed);
    CHECK(d.chosen.where.size() == 8);
}

TEST_CASE("coloc: the admission limit declines a placement that would lose too much") {
    Cluster c(1, 1, 2);
    c.run(1, {{0, {0}}});
    model::BaselineModel m;  // sharing a GPU: slowdown 1.9 each
    ColocOptions strict;
    strict.max_loss_per_gpu = 0.5;
    ColocPolicy policy(m, strict);
    Decision d = policy.place(c.state, c.request(9, 1));
    CHECK_FALSE(d.placed);
    CHECK(d.reason.find("admission limit") != std::string::npos);
    CHECK(d.chosen.where[0].node == 0);  // what it would have done, for explain
    ColocPolicy lenient(m);
    CHECK(lenient.place(c.state, c.request(9, 1)).placed);
}
