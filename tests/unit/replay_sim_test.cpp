// The replay's time under interference, conservation of jobs and slots, and what changes rates.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "model/baseline.hpp"
#include "model/learner.hpp"
#include "place/policy_factory.hpp"
#include "replay/measured_truth.hpp"
#include "replay/metrics.hpp"
#include "replay/replay.hpp"
#include "replay/simulator.hpp"
#include "replay/synthetic.hpp"
#include "replay/workload.hpp"

using namespace coloc;
using namespace coloc::replay;

namespace {

// Each job beside another on its GPU runs at 1 / (1 + cost) of its solo speed; nothing else costs.
struct GpuCost final : model::InterferenceModel {
    double cost;
    explicit GpuCost(double c) : cost(c) {}
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> n) const override {
        double s = 1;
        for (const auto& x : n) s += x.where == model::Sharing::Gpu ? cost : 0;
        return s;
    }
    std::string name() const override { return "gpu-cost"; }
};

// Counts the calls, to see which jobs are re-rated.
struct Counting final : model::InterferenceModel {
    const model::InterferenceModel& inner;
    mutable std::map<std::string, int> calls;
    explicit Counting(const model::InterferenceModel& m) : inner(m) {}
    double slowdown(const model::JobProfile& j, std::span<const model::Neighbour> n) const override {
        ++calls[j.name];
        return inner.slowdown(j, n);
    }
    std::string name() const override { return "counting"; }
};

ReplayJob job(double submit, int gpus, double work, const model::JobProfile* p, int nodes = 1) {
    ReplayJob j;
    j.submit = submit;
    j.work = work;
    j.limit = work;
    j.gpus_per_node = gpus;
    j.nodes = nodes;
    j.profile = p;
    return j;
}

}  // namespace

TEST_CASE("two jobs sharing a GPU: completion times worked out by hand") {
    // One GPU with 2 slots; sharing slows each job to half speed (slowdown 2).
    // J0 (10 s of work) runs alone 0..2: 8 s left. J1 (4 s of work) joins at 2; both at speed
    // 1/2: J1 needs 8 s, ends at 10; J0 has done 4 more, 4 left, alone again: ends at 14.
    // JCT: J0 14, J1 8; mean 11. Slowdowns: J0 14/10, J1 8/4.
    auto topo = place::uniform_topology(1, 1, 2);
    model::JobProfile p;
    std::vector<ReplayJob> jobs = {job(0, 1, 10, &p), job(2, 1, 4, &p)};
    GpuCost truth(1.0);
    auto pack = place::make_policy("pack", nullptr);
    PolicyRun r = simulate(topo, *pack, place::Capacity::Open, truth, jobs);
    CHECK(r.jobs[0].start == 0);
    CHECK(r.jobs[0].end == doctest::Approx(14));
    CHECK(r.jobs[1].start == 2);
    CHECK(r.jobs[1].end == doctest::Approx(10));
    Summary s = summarize(jobs, r, topo.total_gpus());
    CHECK(s.mean_jct == doctest::Approx(11));
    CHECK(s.mean_slowdown == doctest::Approx((1.4 + 2.0) / 2));
    CHECK(s.slowed_share == doctest::Approx(1.0));
    CHECK(s.makespan == doctest::Approx(14));
    CHECK(s.gpu_util == doctest::Approx(1.0));  // the GPU is busy from 0 to 14
    // Exclusive runs them one after the other: J1 waits for J0 (10..14), JCT 10 and 12.
    auto exclusive = place::make_policy("exclusive", nullptr);
    PolicyRun e = simulate(topo, *exclusive, place::Capacity::Idle, truth, jobs);
    CHECK(e.jobs[1].start == doctest::Approx(10));
    CHECK(e.jobs[1].end == doctest::Approx(14));
    CHECK(summarize(jobs, e, 1).mean_jct == doctest::Approx(11));
}

TEST_CASE("admission delay: a job joins the queue that long after its submission; its JCT counts from submission") {
    // As the first case, but under admission: J0 finds the GPU idle and takes the standing offer
    // (starts at 0); J1 finds it busy and joins 1.5 s after its submission, at 3.5 (J0 has 6.5 s
    // left), both at half speed: J1 ends at 11.5, J0 at 14. JCT: 14 and 9.5.
    auto topo = place::uniform_topology(1, 1, 2);
    model::JobProfile p;
    std::vector<ReplayJob> jobs = {job(0, 1, 10, &p), job(2, 1, 4, &p)};
    GpuCost truth(1.0);
    auto pack = place::make_policy("pack", nullptr);
    SimOptions o;
    o.admission_delay_s = 1.5;
    PolicyRun r = simulate(topo, *pack, place::Capacity::Open, truth, jobs, o);
    CHECK(r.jobs[0].start == doctest::Approx(0));
    CHECK(r.jobs[1].start == doctest::Approx(3.5));
    CHECK(r.jobs[0].end == doctest::Approx(14));
    CHECK(r.jobs[1].end == doctest::Approx(11.5));
    CHECK(summarize(jobs, r, topo.total_gpus()).mean_jct == doctest::Approx(11.75));
}

TEST_CASE("standing offers: a job that finds idle GPUs starts at submission, on the node with the fewest that fit") {
    // Two nodes of 2 GPUs. A (1 GPU) takes node 0; B (1 GPU) takes node 0's other GPU, the node
    // with the fewest idle that fit, so that C (2 GPUs) finds node 1 whole (were B on node 1, C
    // would wait for a GPU); D finds no idle GPU, is gated and starts when A ends (10); E finds
    // B's GPU idle at 12 and starts at once.
    auto topo = place::uniform_topology(2, 2, 2);
    model::JobProfile p;
    std::vector<ReplayJob> jobs = {job(0, 1, 10, &p), job(0.1, 1, 10, &p), job(0.2, 2, 10, &p), job(0.3, 1, 10, &p),
                                   job(12, 1, 1, &p)};
    GpuCost truth(1.0);
    auto exclusive = place::make_policy("exclusive", nullptr);
    SimOptions o;
    o.admission_delay_s = 1.5;
    PolicyRun r = simulate(topo, *exclusive, place::Capacity::Idle, truth, jobs, o);
    CHECK(r.jobs[0].start == doctest::Approx(0));
    CHECK(r.jobs[1].start == doctest::Approx(0.1));
    CHECK(r.jobs[2].start == doctest::Approx(0.2));
    CHECK(r.jobs[3].start == doctest::Approx(10));
    CHECK(r.jobs[4].start == doctest::Approx(12));
}

TEST_CASE("scheduling passes: a pass follows each arrival and end by half the interval and sees all before it") {
    // One GPU, exclusive, passes every 2 s: a pass 1 s after each event. J0 (submitted 0.5, 3 s
    // of work) starts at the pass at 1.5 and ends at 4.5. J1 (submitted 1) is seen by that pass
    // too, but the GPU is taken; the pass its own arrival asked for (2) has nothing new. J0's
    // end asks for a pass at 5.5: J1 runs 5.5 to 9.5. J2 (submitted 6, 1 s) waits for the GPU,
    // then for the pass after J1's end: 10.5 to 11.5.
    auto topo = place::uniform_topology(1, 1, 1);
    model::JobProfile p;
    std::vector<ReplayJob> jobs = {job(0.5, 1, 3, &p), job(1, 1, 4, &p), job(6, 1, 1, &p)};
    GpuCost truth(0);
    auto exclusive = place::make_policy("exclusive", nullptr);
    SimOptions o;
    o.pass_interval_s = 2;
    PolicyRun r = simulate(topo, *exclusive, place::Capacity::Idle, truth, jobs, o);
    CHECK(r.jobs[0].start == doctest::Approx(1.5));
    CHECK(r.jobs[0].end == doctest::Approx(4.5));
    CHECK(r.jobs[1].start == doctest::Approx(5.5));
    CHECK(r.jobs[1].end == doctest::Approx(9.5));
    CHECK(r.jobs[2].start == doctest::Approx(10.5));
    CHECK(r.jobs[2].end == doctest::Approx(11.5));
    CHECK(r.never_started == 0);
    // Without passes each starts the moment it can: 0.5, 3.5 and 7.5.
    PolicyRun at_once = simulate(topo, *exclusive, place::Capacity::Idle, truth, jobs);
    CHECK(at_once.jobs[0].start == doctest::Approx(0.5));
    CHECK(at_once.jobs[1].start == doctest::Approx(3.5));
    CHECK(at_once.jobs[2].start == doctest::Approx(7.5));
}

TEST_CASE("measured truth: asymmetric pair speeds, by hand") {
    // a beside b runs at 0.5, b beside a at 0.8. a: 10 s of work from 0; b: 4 s from 0.
    // Together until b ends: b needs 4 / 0.8 = 5 s; a has done 2.5 by then, 7.5 left alone:
    // a ends at 12.5.
    PairTable table("v100");
    table.set("a", "b", 0.5);
    table.set("b", "a", 0.8);
    MeasuredTruth truth(table);
    model::JobProfile a, b;
    a.name = "a";
    b.name = "b";
    auto topo = place::uniform_topology(1, 1, 2);
    std::vector<ReplayJob> jobs = {job(0, 1, 10, &a), job(0, 1, 4, &b)};
    auto pack = place::make_policy("pack", nullptr);
    PolicyRun r = simulate(topo, *pack, place::Capacity::Open, truth, jobs);
    CHECK(r.jobs[1].end == doctest::Approx(5));
    CHECK(r.jobs[0].end == doctest::Approx(12.5));
    CHECK(truth.lookups_measured() > 0);
    CHECK(truth.lookups_unmeasured() == 0);
}

TEST_CASE("measured truth: delays add on one GPU, the slowest GPU sets a multi-GPU job's pace") {
    PairTable table("v100");
    table.set("a", "b", 0.5);  // 1 s extra per second
    table.set("a", "c", 0.8);  // 0.25 s extra
    table.set("a", "d", 0.0);  // could not co-run
    TruthOptions o;
    o.cannot_corun_slowdown = 7;
    o.node_cost = 0.1;
    MeasuredTruth truth(table, o);
    model::JobProfile a, b, c, d, e;
    a.name = "a", b.name = "b", c.name = "c", d.name = "d", e.name = "e";
    using model::Sharing;
    std::vector<model::Neighbour> two = {{&b, Sharing::Gpu, {}}, {&c, Sharing::Gpu, {}}};
    CHECK(truth.slowdown(a, two) == doctest::Approx(1 + 1 + 0.25));
    model::JobProfile wide = a;
    wide.gpus = 2;
    CHECK(truth.slowdown(wide, two) == doctest::Approx(2.0));
    std::vector<model::Neighbour> oom = {{&d, Sharing::Gpu, {}}};
    CHECK(truth.slowdown(a, oom) == doctest::Approx(7));
    std::vector<model::Neighbour> node = {{&b, Sharing::Node, {}}, {&c, Sharing::Node, {}}};
    CHECK(truth.slowdown(a, node) == doctest::Approx(1.2));
    // Not measured: the table's median speed (0.5 and 0.8 -> the upper of the two middle ones).
    std::vector<model::Neighbour> unknown = {{&e, Sharing::Gpu, {}}};
    CHECK(truth.slowdown(a, unknown) == doctest::Approx(1 / 0.8));
    CHECK(truth.lookups_unmeasured() == 1);
}

TEST_CASE("measured truth: a profile at a reused address is looked up by its own name") {
    PairTable table("v100");
    table.set("a", "b", 0.5);
    table.set("b", "a", 0.8);
    MeasuredTruth truth(table);
    model::JobProfile other;
    other.name = "b";
    for (const char* name : {"a", "b"}) {
        // The same object (one address), renamed: what the replay sees when a workload's sized
        // profiles are freed and the next workload's take their place.
        static model::JobProfile reused;
        reused.name = name;
        reused.id = -1;
        model::Neighbour n{&other, model::Sharing::Gpu, {}};
        double want = std::string(name) == "a" ? 2.0 : 1 / table.median_speed();
        CHECK(truth.slowdown(reused, std::span(&n, 1)) == doctest::Approx(want));
    }
}

TEST_CASE("a start or an end re-rates only the jobs that share something with it") {
    // Two nodes of 2 GPUs. Spread puts A (2 GPUs) on node 1 and B (2 GPUs) on node 2 at 0; C
    // (1 GPU) arrives at 1 and shares a GPU of node 1 with A: A and C are re-rated, B is not.
    auto topo = place::uniform_topology(2, 2, 2);
    model::JobProfile a, b, c;
    a.name = "A", b.name = "B", c.name = "C";
    std::vector<ReplayJob> jobs = {job(0, 2, 100, &a), job(0, 2, 100, &b), job(1, 1, 10, &c)};
    GpuCost inner(1.0);
    Counting truth(inner);
    auto spread = place::make_policy("spread", nullptr);
    PolicyRun r = simulate(topo, *spread, place::Capacity::Open, truth, jobs);
    CHECK(r.jobs[2].start == 1);
    CHECK(r.jobs[2].end == doctest::Approx(21));  // 10 s of work at half speed beside A
    // B: rated once when it started. A: at its start, at C's start and at C's end. C: at its start.
    CHECK(truth.calls["B"] == 1);
    CHECK(truth.calls["A"] == 3);
    CHECK(truth.calls["C"] == 1);
}

TEST_CASE("conservation: every job starts once and ends once, no GPU over its slots") {
    SyntheticOptions so;
    so.jobs = 400;
    so.cluster_gpus = 32;
    so.offered_load = 1.3;
    so.median_run_s = 600;
    so.max_gpus = 16;
    so.seed = 7;
    Trace trace = synthetic_trace(so);
    model::ProfileCatalogue catalogue;
    for (const char* n : {"small", "big"}) {
        model::JobProfile p;
        p.name = n;
        catalogue.intern(p);
    }
    ProfileCounts counts;
    auto profiles = assign_profiles(trace, catalogue, nullptr, 3, counts);
    auto topo = place::uniform_topology(4, 8, 2, 2, 2);  // 4 nodes x 8 GPUs, 2 links
    Workload w = build_workload(trace, profiles, counts, topo, {});
    REQUIRE(w.jobs.size() == 400);
    model::BaselineModel model;
    for (const std::string& name : place::policy_names()) {
        CAPTURE(name);
        auto policy = place::make_policy(name, &model);
        std::map<place::JobId, int> phase;  // 1 running, 2 ended
        std::size_t violations = 0, restarts = 0;
        double last = -1;
        SimOptions o;
        o.observer = [&](const place::ClusterState& state, double now) {
            if (now < last) ++violations;
            last = now;
            std::set<place::JobId> running;
            for (const auto& [id, j] : state.jobs()) {
                running.insert(id);
                if (phase[id] == 2) ++restarts;
                phase[id] = 1;
            }
            for (auto& [id, p] : phase)
                if (p == 1 && !running.count(id)) p = 2;
            for (int n = 0; n < 4; ++n)
                for (int g = 0; g < 8; ++g) {
                    int used = state.used_slots(n, g);
                    if (used > 2 || (name == "exclusive" && used > 1)) ++violations;
                }
        };
        PolicyRun r = simulate(topo, *policy, capacity_of(name), model, w.jobs, o);
        CHECK(violations == 0);
        CHECK(restarts == 0);
        CHECK(r.never_started == 0);
        std::size_t ended = 0;
        for (auto& [id, p] : phase) ended += p == 2;
        CHECK(ended == w.jobs.size());
        for (std::size_t i = 0; i < w.jobs.size(); ++i) {
            CHECK(r.jobs[i].start >= w.jobs[i].submit);
            CHECK(r.jobs[i].end >= r.jobs[i].start + w.jobs[i].work * (1 - 1e-9));
        }
        CHECK(r.events == 3 * w.jobs.size());
        if (name == "exclusive") {
            // Nothing shares a GPU: only node-level neighbours slow jobs down.
            for (std::size_t i = 0; i < w.jobs.size(); ++i)
                CHECK(r.jobs[i].end - r.jobs[i].start < w.jobs[i].work * 1.9);
        }
    }
}

TEST_CASE("a replay is reproducible, and --load compresses the arrivals") {
    SyntheticOptions so;
    so.jobs = 200;
    so.cluster_gpus = 16;
    so.median_run_s = 300;
    so.max_gpus = 8;
    Trace trace = synthetic_trace(so);
    model::ProfileCatalogue catalogue;
    ProfileCounts counts;
    auto profiles = assign_profiles(trace, catalogue, nullptr, 1, counts);
    auto topo = place::uniform_topology(2, 8, 2);
    Workload once = build_workload(trace, profiles, counts, topo, {1.0});
    Workload twice = build_workload(trace, profiles, counts, topo, {2.0});
    REQUIRE(once.jobs.size() == twice.jobs.size());
    CHECK(twice.jobs.back().submit == doctest::Approx(once.jobs.back().submit / 2));
    model::BaselineModel model;
    ReplaySetup s;
    s.topology = &topo;
    s.model = &model;
    s.truth = &model;
    s.policies = {"pack", "coloc"};
    ReplayResult a = run_replay(once, s), b = run_replay(once, s), c = run_replay(twice, s);
    for (std::size_t p = 0; p < 2; ++p) {
        CHECK(a.summaries[p].mean_jct == b.summaries[p].mean_jct);
        for (std::size_t i = 0; i < once.jobs.size(); ++i) CHECK(a.runs[p].jobs[i].end == b.runs[p].jobs[i].end);
        CHECK(c.summaries[p].mean_wait >= a.summaries[p].mean_wait);
    }
}

TEST_CASE("workload: GPUs split over nodes, CPU-only and oversized jobs counted, limits") {
    Trace t;
    auto add = [&](int gpus, int nodes, double run, double limit) {
        TraceJob j;
        j.id = t.jobs.size();
        j.submit = 100 + static_cast<double>(t.jobs.size());
        j.gpus = gpus;
        j.nodes = nodes;
        j.run_time = run;
        j.time_limit = limit;
        t.jobs.push_back(j);
    };
    add(4, 1, 10, 20);   // 1 node x 4
    add(16, 0, 10, 0);   // 2 nodes x 8, limit from the run time
    add(9, 0, 10, 5);    // 2 nodes x 5 (rounded up), ran over its limit
    add(0, 1, 10, 20);   // CPU only
    add(64, 8, 10, 20);  // 8 nodes: more than the cluster has
    add(6, 2, 10, 20);   // 2 nodes x 3
    model::ProfileCatalogue catalogue;
    ProfileCounts counts;
    auto profiles = assign_profiles(t, catalogue, nullptr, 1, counts);
    auto topo = place::uniform_topology(4, 8, 1);
    Workload w = build_workload(t, profiles, counts, topo, {});
    REQUIRE(w.jobs.size() == 4);
    CHECK(w.jobs[0].submit == 0);
    CHECK(w.jobs[0].gpus_per_node == 4);
    CHECK(w.jobs[0].limit == 20);
    CHECK(w.jobs[1].nodes == 2);
    CHECK(w.jobs[1].gpus_per_node == 8);
    CHECK(w.jobs[1].limit == 10);
    CHECK(w.jobs[2].gpus_per_node == 5);
    CHECK(w.jobs[2].limit == 10);
    CHECK(w.jobs[3].gpus_per_node == 3);
    CHECK(w.jobs[3].nodes == 2);
    CHECK(w.jobs[1].profile->nodes == 2);  // sized for the model's communication terms
    CHECK(w.jobs[1].profile->gpus == 8);
    CHECK(w.jobs[0].profile->name == w.jobs[1].profile->name);
    CHECK(w.report.cpu_only == 1);
    CHECK(w.report.too_large == 1);
    CHECK(w.report.rounded_up == 1);
    CHECK(w.report.limit_from_run_time == 1);
    CHECK(w.report.limit_raised == 1);
}

TEST_CASE("metrics: percentiles by nearest rank, durations, the table's changes") {
    std::vector<double> v = {5, 1, 4, 2, 3};
    CHECK(percentile(v, 50) == 3);
    CHECK(percentile(v, 100) == 5);
    CHECK(percentile(v, 1) == 1);
    std::vector<double> none;
    CHECK(percentile(none, 50) == 0);
    CHECK(format_duration(30) == "30s");
    CHECK(format_duration(600) == "10.0m");
    CHECK(format_duration(7200) == "2.00h");
    CHECK(format_duration(5 * 86400) == "5.0d");
    Summary pack, coloc, excl;
    pack.policy = "pack", pack.mean_jct = 100;
    excl.policy = "exclusive", excl.mean_jct = 200;
    coloc.policy = "coloc", coloc.mean_jct = 80;
    std::string table = format_table({excl, pack, coloc});
    CHECK(table.find("vs pack") != std::string::npos);
    CHECK(table.find("-20.0%") != std::string::npos);   // coloc vs pack
    CHECK(table.find("-60.0%") != std::string::npos);   // coloc vs exclusive
    CHECK(table.find("+100.0%") != std::string::npos);  // exclusive vs pack
}

namespace {

// Counts the iteration reports the replay hands a learning model.
struct CountingLearner final : model::Learner {
    int reports = 0;
    void observe(const model::JobProfile&, std::span<const model::Neighbour>, double) override { ++reports; }
    model::IntervalFit learn_elapsed(const std::vector<model::EndedRun>&, const model::IntervalOptions&,
                                     const std::string&) override {
        return {};
    }
    nlohmann::json params_json() const override { return nlohmann::json::object(); }
    void load_params_json(const nlohmann::json&) override {}
    std::unique_ptr<Saved> save() const override { return std::make_unique<Saved>(); }
    void restore(std::unique_ptr<Saved>) override {}
};

}  // namespace

TEST_CASE("replay learning: a report reaches the model when it is due, not when its pairing ends") {
    // Two nodes of one GPU (2 slots). A and B share n0's GPU from 0 to 200 (half speed); C
    // starts alone on n1 at 70. Reports every 30 s: A's and B's of 30 and 60 s are in by then.
    auto topo = place::uniform_topology(2, 1, 2);
    model::JobProfile p;
    std::vector<ReplayJob> jobs = {job(0, 1, 100, &p), job(0, 1, 100, &p), job(70, 1, 10, &p)};
    GpuCost truth(1.0);
    auto pack = place::make_policy("pack", nullptr);
    CountingLearner learner;
    SimOptions o;
    o.learning.learner = &learner;
    o.learning.report_interval_s = 30;
    std::map<double, int> seen;  // reports in by each event's time
    o.observer = [&](const place::ClusterState&, double now) { seen[now] = learner.reports; };
    PolicyRun r = simulate(topo, *pack, place::Capacity::Open, truth, jobs, o);
    REQUIRE(r.jobs[2].start == 70);
    REQUIRE(r.jobs[0].end == doctest::Approx(200));
    CHECK(seen.at(70) == 4);
    // Three per stretch at most (max_reports): 30, 60 and 90 s, for each of A and B.
    CHECK(r.reports == 6);
    CHECK(learner.reports == 6);
}
