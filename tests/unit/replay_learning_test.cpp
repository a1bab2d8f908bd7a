// Learning inside the replay: coloc's model learns from the jobs it places (iteration reports,
// ended jobs' elapsed times) on a private copy, reproducibly; learning off is the replay as before.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "config/config.hpp"
#include "model/coloc_model.hpp"
#include "place/coloc_policy.hpp"
#include "replay/gavel_throughputs.hpp"
#include "replay/measured_truth.hpp"
#include "replay/metrics.hpp"
#include "replay/replay.hpp"
#include "replay/synthetic.hpp"
#include "replay/workload.hpp"

using namespace coloc;
using namespace coloc::replay;

namespace {

// A model that never saw a V100 pair, judged by Gavel's measured V100 pairs: the truth differs.
struct Case {
    model::ColocModel model;
    MeasuredTruth truth;
    place::Topology topo = place::uniform_topology(4, 4, 2, 2, 16);
    Workload workload;

    Case() : model(catalogue(), params()), truth(builtin_gavel_pair_table("v100")) {
        SyntheticOptions so;
        so.jobs = 500;
        so.seed = 3;
        so.cluster_gpus = 16;
        so.offered_load = 1.3;
        so.max_gpus = 1;
        so.median_run_s = 1800;
        so.sigma = 0.8;
        Trace trace = synthetic_trace(so);
        ProfileCounts counts;
        auto profiles = assign_profiles(trace, model.catalogue(), nullptr, 1, counts);
        workload = build_workload(trace, profiles, counts, topo, {1.0});
    }
    static model::ProfileCatalogue catalogue() {
        model::Measurements m = gavel_measurements();
        std::erase_if(m.pairs, [](const model::PairMeasurement& p) { return p.gpu_type == "v100"; });
        return model::catalogue_from(m);
    }
    static model::ColocParams params() {
        model::ColocParams p;
        p.gpu_type = "v100";
        return p;
    }
    ReplaySetup setup(std::vector<std::string> policies) const {
        ReplaySetup s;
        s.topology = &topo;
        s.model = &model;
        s.truth = &truth;
        s.policies = std::move(policies);
        s.sim.record_busy = false;
        return s;
    }
};

void same_outcomes(const PolicyRun& a, const PolicyRun& b) {
    REQUIRE(a.jobs.size() == b.jobs.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.jobs.size(); ++i)
        differ += a.jobs[i].start != b.jobs[i].start || a.jobs[i].end != b.jobs[i].end;
    CHECK(differ == 0);
    CHECK(a.decisions == b.decisions);
}

}  // namespace

TEST_CASE("replay learning: coloc's model gets closer to the truth on the pairs it forms") {
    Case c;
    const std::uint64_t version = c.model.version();
    ReplayResult r = run_replay(c.workload, c.setup({"coloc", "coloc-nolearn"}));
    REQUIRE(r.runs.size() == 2);
    const PolicyRun& learning = r.runs[0];
    const PolicyRun& fixed = r.runs[1];
    CHECK(learning.policy == "coloc");
    CHECK(fixed.policy == "coloc-nolearn");
    CHECK(learning.learned);
    CHECK_FALSE(fixed.learned);
    CHECK(learning.reports > 0);
    CHECK(learning.refits > 0);
    CHECK(fixed.reports == 0);
    const ModelErrorTenths early_late = model_error_tenths(learning), still = model_error_tenths(fixed);
    REQUIRE(early_late.first_pairs > 0);
    REQUIRE(early_late.last_pairs > 0);
    REQUIRE(still.last_pairs > 0);
    MESSAGE("learning: first tenth ", early_late.first_mae, " last ", early_late.last_mae, "; off: first ",
            still.first_mae, " last ", still.last_mae);
    CHECK(early_late.last_mae < early_late.first_mae);
    CHECK(early_late.last_mae < still.last_mae);
    // The setup's model is not the one that learned: the other policies and runs see it as it was.
    CHECK(c.model.version() == version);
    CHECK(r.summaries[0].learned);
    CHECK(r.summaries[0].model_error.last_pairs == early_late.last_pairs);
    CHECK(format_table(r.summaries).find("coloc: model error on the") != std::string::npos);
}

TEST_CASE("replay learning: off, coloc places as a model that does not change; coloc-nolearn too") {
    Case c;
    ReplaySetup off = c.setup({"coloc", "coloc-nolearn"});
    off.learning = false;
    ReplayResult r = run_replay(c.workload, off);
    // What the replay did before it learned: the policy with its model as it is.
    place::ColocOptions o;
    o.reuse_predictions = true;
    place::ColocPolicy policy(c.model, o);
    SimOptions sim;
    sim.record_busy = false;
    sim.planner = &c.model;
    const PolicyRun before = simulate(c.topo, policy, place::Capacity::Open, c.truth, c.workload.jobs, sim);
    same_outcomes(r.runs[0], before);
    same_outcomes(r.runs[1], before);
    CHECK_FALSE(r.runs[0].learned);
    CHECK(r.runs[0].reports == 0);
    CHECK(r.runs[0].refits == 0);
    CHECK(r.runs[0].model_error.size() == r.runs[1].model_error.size());
}

TEST_CASE("replay learning: the same seed gives the same run, another seed other reports") {
    Case c;
    ReplaySetup s = c.setup({"coloc"});
    ReplayResult a = run_replay(c.workload, s), b = run_replay(c.workload, s);
    same_outcomes(a.runs[0], b.runs[0]);
    CHECK(a.runs[0].reports == b.runs[0].reports);
    REQUIRE(a.runs[0].model_error.size() == b.runs[0].model_error.size());
    for (std::size_t i = 0; i < a.runs[0].model_error.size(); ++i)
        CHECK(a.runs[0].model_error[i].error == b.runs[0].model_error[i].error);
    s.sim.learning.seed = 2;
    ReplayResult other = run_replay(c.workload, s);
    bool differ = other.runs[0].model_error.size() != a.runs[0].model_error.size();
    for (std::size_t i = 0; !differ && i < a.runs[0].model_error.size(); ++i)
        differ = other.runs[0].model_error[i].error != a.runs[0].model_error[i].error;
    CHECK(differ);
}

TEST_CASE("replay learning: reports per stretch are capped, none without neighbours") {
    Case c;
    ReplaySetup s = c.setup({"coloc"});
    s.sim.learning.max_reports = 1;
    const std::size_t one = run_replay(c.workload, s).runs[0].reports;
    s.sim.learning.max_reports = 3;
    const std::size_t three = run_replay(c.workload, s).runs[0].reports;
    CHECK(one > 0);
    CHECK(three > one);
    CHECK(three <= 3 * one + one);  // the runs differ as the model does, not by much
    // One job alone on the cluster: no neighbour, no report; it teaches nothing about pairs.
    Workload solo;
    solo.jobs.push_back(c.workload.jobs.front());
    CHECK(run_replay(solo, s).runs[0].reports == 0);
}

TEST_CASE("replay learning: the elapsed window's defaults are colocd.yaml's") {
    const daemon::Config cfg;
    const SimLearning l;
    CHECK(l.elapsed.capacity == static_cast<std::size_t>(cfg.elapsed_window));
    CHECK(l.elapsed.refit_every == cfg.elapsed_refit_every);
    CHECK(l.elapsed.fit.min_elapsed_s == doctest::Approx(cfg.elapsed_min_s));
    CHECK(l.report_interval_s == doctest::Approx(30.0));
    CHECK(std::find(replay_policy_names().begin(), replay_policy_names().end(), "coloc-nolearn") !=
          replay_policy_names().end());
}
