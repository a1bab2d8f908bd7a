// Pair delays from elapsed times over co-location intervals (model/interval_regression.hpp).
#include <doctest/doctest.h>

#include <map>

#include "model/interval_regression.hpp"
#include "model/run_history.hpp"

using namespace coloc::model;

namespace {
// A run of `job` whose solo work is split among neighbours: work[n] solo seconds beside n,
// each taking work * (1 + delay) seconds of wall time.
EndedRun run(const std::string& job, const std::vector<std::pair<std::string, double>>& work,
             const std::map<std::string, double>& delay, double alone_s = 0) {
    EndedRun r;
    r.job = job;
    r.solo_s = alone_s;
    r.elapsed_s = alone_s;
    if (alone_s > 0) r.intervals.push_back({alone_s, {}});
    for (const auto& [n, w] : work) {
        const double t = w * (1 + delay.at(n));
        r.intervals.push_back({t, {{n, Sharing::Gpu}}});
        r.solo_s += w;
        r.elapsed_s += t;
    }
    return r;
}

DelayPrior weak(const PairKey&) { return {0.1, 1.0}; }
}  // namespace

TEST_CASE("the interval regression recovers known delays from a hand-made schedule") {
    const std::map<std::string, double> delay = {{"b", 0.5}, {"c", 0.2}, {"d", 0.9}};
    std::vector<EndedRun> runs = {
        run("a", {{"b", 400}, {"c", 600}}, delay),
        run("a", {{"b", 900}, {"d", 300}}, delay, 200),
        run("a", {{"c", 1000}, {"d", 500}}, delay),
        run("a", {{"b", 300}, {"c", 300}, {"d", 300}}, delay, 500),
    };
    const IntervalFit fit = fit_interval_delays(runs, weak, {.noise = 0.01});
    CHECK(fit.used == 4);
    CHECK(fit.left_out.total() == 0);
    for (const auto& [n, d] : delay) {
        CAPTURE(n);
        const PairDelay got = fit.pairs.at({"a", n, Sharing::Gpu});
        CHECK(got.delay == doctest::Approx(d).epsilon(0.02));
        CHECK(got.evidence > 1);
    }
}

TEST_CASE("two neighbours at once: the interval's delays add up") {
    const std::map<std::string, double> delay = {{"b", 0.3}, {"c", 0.6}};
    std::vector<EndedRun> runs = {run("a", {{"b", 1000}}, delay), run("a", {{"c", 800}}, delay)};
    EndedRun both;  // 1000 s of work beside b and c together: 1000 * (1 + 0.3 + 0.6)
    both.job = "a";
    both.solo_s = 1000;
    both.elapsed_s = 1900;
    both.intervals.push_back({1900, {{"b", Sharing::Gpu}, {"c", Sharing::Gpu}}});
    runs.push_back(both);
    const IntervalFit fit = fit_interval_delays(runs, weak, {.noise = 0.01});
    CHECK(fit.pairs.at({"a", "b", Sharing::Gpu}).delay == doctest::Approx(0.3).epsilon(0.02));
    CHECK(fit.pairs.at({"a", "c", Sharing::Gpu}).delay == doctest::Approx(0.6).epsilon(0.02));
}

TEST_CASE("noisy runs are left out and counted by reason") {
    const std::map<std::string, double> delay = {{"b", 0.5}};
    EndedRun failed = run("a", {{"b", 1000}}, delay);
    failed.state = "FAILED";
    EndedRun cancelled = run("a", {{"b", 1000}}, delay);
    cancelled.state = "CANCELLED";
    EndedRun brief = run("a", {{"b", 60}}, delay);
    EndedRun unknown_solo = run("a", {{"b", 1000}}, delay);
    unknown_solo.solo_s = 0;
    EndedRun alone = run("a", {}, delay, 1000);
    const IntervalFit fit =
        fit_interval_delays({failed, cancelled, brief, unknown_solo, alone, run("a", {{"b", 1000}}, delay)}, weak);
    CHECK(fit.used == 1);
    CHECK(fit.left_out.failed == 2);
    CHECK(fit.left_out.too_short == 1);
    CHECK(fit.left_out.no_solo == 1);
    CHECK(fit.left_out.alone == 1);
}

TEST_CASE("a pair the evidence hardly touches stays near its prior") {
    const std::map<std::string, double> delay = {{"b", 0.5}};
    // 5 % noise on one short stretch beside b: the prior (0.1 +- 0.05) should dominate.
    const IntervalFit fit = fit_interval_delays({run("a", {{"b", 50}}, delay, 5000)}, [](const PairKey&) {
        return DelayPrior{0.1, 0.05};
    });
    const PairDelay d = fit.pairs.at({"a", "b", Sharing::Gpu});
    CHECK(d.delay < 0.2);
    CHECK(d.evidence < 1);
}

TEST_CASE("recorded co-locations become intervals, and solo work comes from runs alone") {
    std::vector<JobHistory> jobs;
    auto job = [&](std::int64_t id, const std::string& profile, double start, double end) -> JobHistory& {
        JobHistory j;
        j.job_id = id;
        j.profile = profile;
        j.user = "ann";
        j.job_name = "train";
        j.state = "ended";
        j.start = start;
        j.end = end;
        jobs.push_back(j);
        return jobs.back();
    };
    job(1, "a", 0, 1000);    // a alone: solo work 1000
    job(2, "a", 0, 1200);    // and again: median 1100
    job(3, "", 0, 500);      // no profile: keyed by user and job name
    job(4, "a", 100, 1600);  // a beside 5 from 300 to 900
    job(5, "b", 300, 900).shared.push_back({4, Sharing::Gpu, 300, 900});
    jobs[3].shared.push_back({5, Sharing::Gpu, 300, 900});
    job(6, "b", 0, 100).state = "FAILED";
    const std::vector<EndedRun> runs = runs_from_history(jobs);
    REQUIRE(runs.size() == 6);
    CHECK(runs[2].job == "user:ann/train");
    CHECK(runs[2].solo_s == 500);
    const EndedRun& a = runs[3];
    CHECK(a.solo_s == 1100);
    CHECK(a.elapsed_s == 1500);
    REQUIRE(a.intervals.size() == 3);
    CHECK(a.intervals[0].neighbours.empty());
    CHECK(a.intervals[1].duration_s == 600);
    REQUIRE(a.intervals[1].neighbours.size() == 1);
    CHECK(a.intervals[1].neighbours[0].first == "b");
    CHECK(runs[4].solo_s == 0);  // b never ran alone
    CHECK(runs[5].state == "FAILED");
    LeftOut left;
    CHECK(usable_run(a, {}, left));
    CHECK_FALSE(usable_run(runs[4], {}, left));
    CHECK_FALSE(usable_run(runs[5], {}, left));
    CHECK(left.no_solo == 1);
    CHECK(left.failed == 1);
}

TEST_CASE("a run on several GPUs beside several jobs on GPUs at once is left out: it ran at its slowest GPU's pace") {
    EndedRun r;
    r.job = "a";
    r.solo_s = 1000;
    r.elapsed_s = 1500;
    r.intervals = {{500, {{"b", Sharing::Gpu}, {"c", Sharing::Gpu}}}, {1000, {{"b", Sharing::Gpu}}}};
    LeftOut left;
    CHECK(usable_run(r, {}, left));  // one GPU: both neighbours on it, their delays add up
    r.gpus = 4;
    CHECK_FALSE(usable_run(r, {}, left));  // b and c may have sat on different GPUs of it
    CHECK(left.several_gpus == 1);
    CHECK(left.total() == 1);
    // One neighbour on a GPU at a time, and others on the node, add up on any number of GPUs.
    r.intervals = {{500, {{"b", Sharing::Gpu}, {"c", Sharing::Node}}}, {1000, {{"c", Sharing::Gpu}}}};
    CHECK(usable_run(r, {}, left));
    CHECK(left.several_gpus == 1);
}
